"""Schema audit: the real and the synthetic tables must code every column the same way before any metric.

A wrong coding silently inflates every divergence (sex coded 0/1 in one table and 1/2 in the other looks like two
disjoint distributions), so :func:`audit_tables` compares the tables column by column and the evaluation stops on
any *mismatch* unless ``--recode`` maps it explicitly. Findings:

=================  =======  ==========================================================================================
code               level    when
=================  =======  ==========================================================================================
``COLUMNS``        error    a column is in one table and not in the other
``TYPE``           error    a column holds numbers in one table and text in the other
``CODING_SHIFT``   error    integer codes span ranges of the same width at different places (0..1 vs 1..2, 1..5 vs 0..4)
``DOMAIN``         error    a value lies outside the instrument's response codes (item columns, with ``--instrument``)
``LABELS``         error    text categories overlap on less than half of their union (``F/M`` vs ``female/male``)
``RANGE``          error    a many-valued numeric column's ranges do not overlap, or one looks rescaled to [0, 1]
``UNSEEN``         warning  a category occurs in one table only (legitimate for small or sparse tables)
``MISSING``        note     a column has missing cells (they count as a category of their own in every metric)
=================  =======  ==========================================================================================

Findings name columns, codes and counts, which are not identifying: codes of a coded table are its schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from anonpsy.tabular.instruments import Instrument
from anonpsy.tabular.table import Table

Level = Literal["error", "warning", "note"]
MAX_CATEGORIES = 20


@dataclass(frozen=True)
class Finding:
    code: str
    level: Level
    table: str
    column: str
    message: str
    hint: str = ""

    def one_line(self) -> str:
        hint = f"; {self.hint}" if self.hint else ""
        return f"{self.level.upper()} {self.code} {self.table}:{self.column}: {self.message}{hint}"


@dataclass
class AuditReport:
    real: str
    synthetic: list[str]
    findings: list[Finding] = field(default_factory=list)
    recodes: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors


def _span(values: Sequence[str]) -> str:
    return f"{values[0]}..{values[-1]}" if values else "(none)"


def _compare(real: Table, syn: Table, column: str, role: str, instrument: Instrument | None,
             item_columns: set[str]) -> list[Finding]:
    out: list[Finding] = []
    kr, ks = real.kind(column), syn.kind(column)
    for t in (real, syn):
        if t.missing(column):
            out.append(Finding("MISSING", "note", t.name, column,
                               f"{t.missing(column)} of {t.n_rows} cells are missing"))
    if "empty" in (kr, ks):
        return out
    numeric = {"integer", "numeric"}
    if (kr in numeric) != (ks in numeric):
        out.append(Finding("TYPE", "error", syn.name, column, f"numbers in {real.name} but text in {syn.name}"
                           if kr in numeric else f"text in {real.name} but numbers in {syn.name}",
                           f"recode the text categories to the numeric codes, e.g. --recode {role}:{column}=A:1,B:2"))
        return out
    vr, vs = real.distinct(column), syn.distinct(column)
    if column in item_columns and instrument is not None:
        allowed = {str(v) for v in instrument.values}
        for t, vals in ((real, vr), (syn, vs)):
            bad = [v for v in vals if v not in allowed]
            if bad:
                out.append(Finding("DOMAIN", "error", t.name, column,
                                   f"values {bad[:5]} are not codes of {instrument.short_name} "
                                   f"({instrument.values[0]}..{instrument.values[-1]})",
                                   "recode them to the instrument's codes with --recode"))
        if any(f.code == "DOMAIN" for f in out):
            return out
    if kr in numeric and ks in numeric:
        many = len(set(vr) | set(vs)) > MAX_CATEGORIES or "numeric" in (kr, ks)
        fr, fs = [float(v) for v in vr], [float(v) for v in vs]
        if many:
            lo_r, hi_r, lo_s, hi_s = fr[0], fr[-1], fs[0], fs[-1]
            rescaled = (lo_s >= 0 and hi_s <= 1 < hi_r) or (lo_r >= 0 and hi_r <= 1 < hi_s)
            if hi_s < lo_r or hi_r < lo_s or rescaled:
                out.append(Finding("RANGE", "error", syn.name, column,
                                   f"ranges {lo_r:g}..{hi_r:g} in {real.name} and {lo_s:g}..{hi_s:g} in {syn.name} "
                                   f"{'look rescaled' if rescaled else 'do not overlap'}",
                                   "bring both tables to the same units before evaluating"))
            elif lo_s < lo_r or hi_s > hi_r:
                out.append(Finding("UNSEEN", "warning", syn.name, column,
                                   f"range {lo_s:g}..{hi_s:g} reaches outside {real.name}'s {lo_r:g}..{hi_r:g}"))
            return out
        if kr == "integer" and ks == "integer" and set(vr) != set(vs):
            ir, is_ = [int(v) for v in vr], [int(v) for v in vs]
            width_r, width_s = ir[-1] - ir[0], is_[-1] - is_[0]
            if width_r == width_s and ir[0] != is_[0] and len(ir) > 1:
                shift = is_[0] - ir[0]
                pairs = ",".join(f"{v}:{v - shift}" for v in is_)
                out.append(Finding("CODING_SHIFT", "error", syn.name, column,
                                   f"coded {_span(vr)} in {real.name} but {_span(vs)} in {syn.name} "
                                   f"(shifted by {shift:+d})",
                                   "if the codes mean the same, map them explicitly: "
                                   f"--recode {role}:{column}={pairs}"))
                return out
    if kr == "text" or ks == "text":
        union, inter = set(vr) | set(vs), set(vr) & set(vs)
        if len(inter) * 2 < len(union):
            out.append(Finding("LABELS", "error", syn.name, column,
                               f"{len(vr)} categories in {real.name} and {len(vs)} in {syn.name} share only "
                               f"{len(inter)}",
                               f"map the labels explicitly, e.g. --recode {role}:{column}=OLD:NEW,..."))
            return out
    only_s = [v for v in vs if v not in set(vr)]
    only_r = [v for v in vr if v not in set(vs)]
    if only_s:
        out.append(Finding("UNSEEN", "warning", syn.name, column,
                           f"{len(only_s)} categor{'y' if len(only_s) == 1 else 'ies'} never seen in {real.name}"
                           + (f": {only_s[:5]}" if kr != "text" else "")))
    if only_r:
        out.append(Finding("UNSEEN", "warning", syn.name, column,
                           f"{len(only_r)} categor{'y' if len(only_r) == 1 else 'ies'} of {real.name} never "
                           f"generated" + (f": {only_r[:5]}" if kr != "text" else "")))
    return out


def audit_tables(real: Table, synthetic: Sequence[Table], *, instrument: Instrument | None = None) -> AuditReport:
    """Compare ``real`` with every synthetic table column by column (see the module docstring)."""
    report = AuditReport(real.name, [s.name for s in synthetic])
    report.recodes = list(real.recodes) + [r for s in synthetic for r in s.recodes]
    item_columns = set(instrument.columns) if instrument is not None else set()
    if instrument is not None:
        for col in instrument.columns:
            if col not in real.columns:
                report.findings.append(Finding("COLUMNS", "error", real.name, col,
                                               f"{instrument.short_name} item column is missing"))
    for i, syn in enumerate(synthetic, 1):
        role = "syn" if len(synthetic) == 1 else f"syn{i}"
        for col in real.columns:
            if col not in syn.columns:
                report.findings.append(Finding("COLUMNS", "error", syn.name, col, f"column of {real.name} is missing"))
        for col in syn.columns:
            if col not in real.columns:
                report.findings.append(Finding("COLUMNS", "error", syn.name, col, f"column is not in {real.name}"))
        for col in real.columns:
            if col in syn.columns:
                report.findings += _compare(real, syn, col, role, instrument, item_columns)
    seen: set[tuple[str, str, str, str]] = set()
    unique = []
    for f in report.findings:
        key = (f.code, f.table, f.column, f.message)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    report.findings = unique
    return report
