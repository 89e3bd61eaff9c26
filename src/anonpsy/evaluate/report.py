"""Evaluation report: from a results table to Markdown, JSON and PNG figures.

The results table has one row per case × method: ``case_id``, ``method`` and any numeric metric columns
(``cosine``, ``soft_f1``, ``rouge_l``, ``leak_count``, ``reid_score``, ``reid_hit``, ...; empty = missing).
:func:`build_report` is pure: per method and metric it gives n, mean, SD, median and a seeded bootstrap CI of
the mean; per metric a Friedman test across methods (3 or more, complete cases) and paired tests of every
method against the reference method (Wilcoxon signed-rank, or McNemar for 0/1 metrics), Holm-corrected across
the methods of that metric. Corpus-level numbers (e.g. nearest-document re-identification accuracy) can be
passed in per method. :func:`write_report` writes ``report.md``, ``report.json`` and ``figures/*.png``, each
atomically. Reports hold aggregate numbers and case ids only, never narrative text.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from anonpsy.errors import AnonpsyError
from anonpsy.evaluate import plots
from anonpsy.evaluate.errors import V104_BAD_RESULTS
from anonpsy.evaluate.stats import (
    Comparison,
    ConfidenceInterval,
    TestResult,
    bootstrap_ci,
    compare_to_reference,
    friedman,
)
from anonpsy.yamlio import write_atomic

REPORT_VERSION = 1

METRIC_LABELS: dict[str, str] = {
    "cosine": "Cosine similarity to original",
    "soft_f1": "Diagnosis soft-F1",
    "roundtrip_dx_f1": "Round-trip diagnosis soft-F1 (project extractor on output)",
    "affirmed_dx_recall": "Affirmed-diagnosis recall (facts, independent)",
    "current_med_recall": "Current-medication recall (facts, independent)",
    "contradictions": "Contradicted facts (facts, independent)",
    "excess_contradictions": "Contradictions beyond the original's",
    "longest_copied_run": "Longest run copied from the source (words)",
    "max_sentence_copied_run": "Longest copied run within a sentence (words)",
    "rouge_l": "ROUGE-L F",
    "leak_count": "Leaked identifiers",
    "reid_score": "Insider re-identification (1–5)",
    "reid_hit": "Nearest-document re-identified (0/1)",
    "acceptability": "Acceptability (1–5)",
}
# Which direction is better for a de-identification method (shown in the report, not used by the tests).
METRIC_DIRECTION: dict[str, str] = {
    "cosine": "lower = less recallable",
    "soft_f1": "higher = more structure kept",
    "roundtrip_dx_f1": "higher = output re-reads like its graph",
    "affirmed_dx_recall": "higher = diagnoses kept",
    "current_med_recall": "higher = medications kept",
    "contradictions": "lower = fewer changed facts",
    "excess_contradictions": "lower = fewer changed facts",
    "longest_copied_run": "lower = less verbatim",
    "max_sentence_copied_run": "lower = less verbatim",
    "rouge_l": "lower = less verbatim",
    "leak_count": "lower = fewer leaks",
    "reid_score": "lower = harder to re-identify",
    "reid_hit": "lower = harder to re-identify",
    "acceptability": "higher = more acceptable",
}
RISK_METRICS: tuple[str, ...] = ("reid_score", "cosine", "rouge_l", "leak_count")
_ID_KEYS = ("case_id", "method")


@dataclass(frozen=True)
class MetricSummary:
    """One metric for one method."""

    metric: str
    method: str
    n: int
    mean: float
    sd: float
    median: float
    ci: ConfidenceInterval


@dataclass(frozen=True)
class EvalReport:
    """Everything a report shows, as plain data."""

    methods: tuple[str, ...]
    metrics: tuple[str, ...]
    reference: str
    n_cases: int
    model: str | None
    seed: int
    summaries: tuple[MetricSummary, ...]
    friedman: Mapping[str, TestResult]
    comparisons: tuple[Comparison, ...]
    values: Mapping[str, Mapping[str, tuple[float, ...]]]
    case_ids: tuple[str, ...]
    corpus: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def summary(self, metric: str, method: str) -> MetricSummary:
        """The summary of one metric for one method."""
        for s in self.summaries:
            if s.metric == metric and s.method == method:
                return s
        raise KeyError((metric, method))


# ----------------------------------------------------------------------------------------------------
# Input


def _num(value: Any, where: str) -> float:
    if value is None or value == "":
        return math.nan
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise AnonpsyError(V104_BAD_RESULTS, f"{where}: metric values must be numbers or empty")


def normalize_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Validate result rows: ``case_id`` and ``method`` strings, every other column numeric (or empty).

    Raises AnonpsyError (V104) naming the row number and column, never a value.
    """
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for i, row in enumerate(rows, start=1):
        for k in _ID_KEYS:
            if not isinstance(row.get(k), str) or not str(row.get(k)).strip():
                raise AnonpsyError(V104_BAD_RESULTS, f"row {i}: needs a non-empty {k}")
        key = (str(row["case_id"]), str(row["method"]))
        if key in seen:
            raise AnonpsyError(V104_BAD_RESULTS, f"row {i}: case and method repeat an earlier row")
        seen.add(key)
        clean: dict[str, Any] = {"case_id": key[0], "method": key[1]}
        for col, val in row.items():
            if col in _ID_KEYS:
                continue
            clean[str(col)] = _num(val, f"row {i}, column {col}")
        out.append(clean)
    return out


def parse_results_csv(text: str) -> list[dict[str, Any]]:
    """Result rows from CSV text with a header line (``case_id,method,<metric>,...``)."""
    return normalize_rows(list(csv.DictReader(io.StringIO(text))))


def parse_results_json(text: str) -> list[dict[str, Any]]:
    """Result rows from JSON text: a list of row objects, or ``{"rows": [...]}``."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise AnonpsyError(V104_BAD_RESULTS, "results file is not valid JSON") from None
    if isinstance(data, dict):
        data = data.get("rows")
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise AnonpsyError(V104_BAD_RESULTS, 'results JSON must be a list of row objects or {"rows": [...]}')
    return normalize_rows(data)


# ----------------------------------------------------------------------------------------------------
# Build


def _is_binary(values: Sequence[float]) -> bool:
    finite = [v for v in values if not math.isnan(v)]
    return bool(finite) and all(v in (0.0, 1.0) for v in finite)


def _sd(xs: Sequence[float]) -> float:
    if len(xs) < 2:
        return math.nan
    m = math.fsum(xs) / len(xs)
    return math.sqrt(math.fsum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return math.nan
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def build_report(
    rows: Sequence[Mapping[str, Any]],
    *,
    reference: str,
    metrics: Sequence[str] | None = None,
    model: str | None = None,
    seed: int = 0,
    n_resamples: int = 9999,
    level: float = 0.95,
    corpus: Mapping[str, Mapping[str, float]] | None = None,
) -> EvalReport:
    """Summaries, Friedman tests and Holm-corrected comparisons against ``reference`` (see module docstring).

    Methods keep their first-appearance order with the reference first; cases are aligned by ``case_id``
    (a case missing for a method counts as missing values). ``metrics`` defaults to every numeric column.
    """
    clean = normalize_rows(rows)
    if not clean:
        raise AnonpsyError(V104_BAD_RESULTS, "the results table is empty")
    methods: list[str] = []
    case_ids: list[str] = []
    for r in clean:
        if r["method"] not in methods:
            methods.append(r["method"])
        if r["case_id"] not in case_ids:
            case_ids.append(r["case_id"])
    if reference not in methods:
        raise AnonpsyError(V104_BAD_RESULTS, "the reference method does not appear in the results")
    methods.remove(reference)
    methods.insert(0, reference)
    columns: list[str] = []
    for r in clean:
        for k in r:
            if k not in _ID_KEYS and k not in columns:
                columns.append(k)
    chosen = list(metrics) if metrics is not None else columns
    unknown = [m for m in chosen if m not in columns]
    if unknown:
        raise AnonpsyError(V104_BAD_RESULTS, f"metric(s) {', '.join(unknown)} not in the results table")
    index = {(r["case_id"], r["method"]): r for r in clean}
    values: dict[str, dict[str, tuple[float, ...]]] = {}
    for metric in chosen:
        values[metric] = {
            m: tuple(float(index.get((c, m), {}).get(metric, math.nan)) for c in case_ids) for m in methods
        }
    summaries: list[MetricSummary] = []
    fried: dict[str, TestResult] = {}
    comparisons: list[Comparison] = []
    for mi, metric in enumerate(chosen):
        by_method = values[metric]
        for mj, method in enumerate(methods):
            xs = [v for v in by_method[method] if not math.isnan(v)]
            ci = bootstrap_ci(xs, level=level, n_resamples=n_resamples, seed=seed + 1000 * mi + mj)
            mean = math.fsum(xs) / len(xs) if xs else math.nan
            summaries.append(MetricSummary(metric, method, len(xs), mean, _sd(xs), _median(xs), ci))
        if len(methods) >= 3:
            fried[metric] = friedman([list(by_method[m]) for m in methods])
        if len(methods) >= 2:
            binary = all(_is_binary(v) for v in by_method.values() if any(not math.isnan(x) for x in v))
            comparisons += compare_to_reference(metric, by_method, reference, binary=binary)
    return EvalReport(
        methods=tuple(methods),
        metrics=tuple(chosen),
        reference=reference,
        n_cases=len(case_ids),
        model=model,
        seed=seed,
        summaries=tuple(summaries),
        friedman=fried,
        comparisons=tuple(comparisons),
        values=values,
        case_ids=tuple(case_ids),
        corpus={k: dict(v) for k, v in (corpus or {}).items()},
    )


# ----------------------------------------------------------------------------------------------------
# Render


def _f(x: float, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}"


def _p(p: float) -> str:
    if math.isnan(p):
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric)


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    return obj


def report_dict(report: EvalReport, figures: Sequence[str] = ()) -> dict[str, Any]:
    """The report as JSON-ready data (NaN as null)."""
    data: dict[str, Any] = _jsonable(
        {
            "report_version": REPORT_VERSION,
            "model": report.model,
            "reference": report.reference,
            "methods": list(report.methods),
            "metrics": list(report.metrics),
            "n_cases": report.n_cases,
            "seed": report.seed,
            "summaries": [asdict(s) for s in report.summaries],
            "friedman": {k: asdict(v) for k, v in report.friedman.items()},
            "comparisons": [asdict(c) for c in report.comparisons],
            "corpus": report.corpus,
            "figures": list(figures),
            "values": {"case_ids": list(report.case_ids), **{m: report.values[m] for m in report.metrics}},
        }
    )
    return data


def render_json(report: EvalReport, figures: Sequence[str] = ()) -> str:
    """``report.json`` text (stable key order, NaN as null)."""
    return json.dumps(report_dict(report, figures), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render_markdown(report: EvalReport, figures: Sequence[str] = ()) -> str:
    """``report.md`` text: setup, per-metric summary table, corpus-level table, tests table, figures."""
    lines: list[str] = ["# De-identification evaluation", ""]
    lines.append(
        f"- cases: {report.n_cases}; methods: {', '.join(report.methods)}; reference: {report.reference}"
    )
    lines.append(f"- embedding model: {report.model or 'not recorded'}")
    ci_level = report.summaries[0].ci.level if report.summaries else 0.95
    lines.append(
        f"- intervals: {round(ci_level * 100)}% bootstrap CI of the mean (percentile, seed {report.seed})"
    )
    lines.append("")
    lines.append("## Metrics per method")
    lines.append("")
    lines.append(f"| metric | better | method | n | mean | {round(ci_level * 100)}% CI | SD | median |")
    lines.append("|---|---|---|---:|---:|---|---:|---:|")
    for metric in report.metrics:
        for method in report.methods:
            s = report.summary(metric, method)
            ci = f"[{_f(s.ci.low)}, {_f(s.ci.high)}]"
            lines.append(
                f"| {_label(metric)} | {METRIC_DIRECTION.get(metric, '')} | {method} | {s.n} | "
                f"{_f(s.mean)} | {ci} | {_f(s.sd)} | {_f(s.median)} |"
            )
    if report.corpus:
        lines += ["", "## Corpus-level measures", ""]
        keys: list[str] = []
        for vals in report.corpus.values():
            keys += [k for k in vals if k not in keys]
        lines.append("| method | " + " | ".join(keys) + " |")
        lines.append("|---|" + "---:|" * len(keys))
        for method, vals in report.corpus.items():
            lines.append(f"| {method} | " + " | ".join(_f(vals.get(k, math.nan)) for k in keys) + " |")
    lines += ["", "## Statistical tests", ""]
    if report.comparisons:
        lines.append(
            f"Paired two-sided tests of each method against **{report.reference}** (Wilcoxon signed-rank; "
            "McNemar for 0/1 metrics), Holm-corrected across the methods of each metric."
        )
        lines.append("")
        lines.append("| metric | method | n | median diff. | test | statistic | p | p (Holm) | note |")
        lines.append("|---|---|---:|---:|---|---:|---:|---:|---|")
        for c in report.comparisons:
            lines.append(
                f"| {_label(c.metric)} | {c.method} | {c.n} | {_f(c.median_difference)} | {c.result.test} | "
                f"{_f(c.result.statistic, 2)} | {_p(c.result.p)} | {_p(c.p_holm)} | {c.result.reason or ''} |"
            )
    else:
        lines.append("Only one method: no comparisons.")
    if report.friedman:
        lines += ["", "Friedman test across all methods (complete cases):", ""]
        lines.append("| metric | n | χ² | p | note |")
        lines.append("|---|---:|---:|---:|---|")
        for metric, r in report.friedman.items():
            reason = r.reason or ""
            lines.append(f"| {_label(metric)} | {r.n} | {_f(r.statistic, 2)} | {_p(r.p)} | {reason} |")
    if figures:
        lines += ["", "## Figures", ""]
        for fig in figures:
            lines.append(f"![{Path(fig).stem}]({fig})")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def figure_pngs(report: EvalReport, risk_metrics: Sequence[str] = RISK_METRICS) -> dict[str, bytes]:
    """The report's figures as ``relative path -> PNG bytes``."""
    out: dict[str, bytes] = {}
    # y axis: the independent affirmed-diagnosis recall when facts were given, else a diagnosis soft-F1.
    y_metric = next((m for m in ("affirmed_dx_recall", "roundtrip_dx_f1", "soft_f1") if m in report.metrics), None)
    if "cosine" in report.metrics and y_metric is not None:
        pts = {
            m: list(zip(report.values["cosine"][m], report.values[y_metric][m], strict=True))
            for m in report.methods
        }
        out["figures/plane.png"] = plots.plane_png(pts, model=report.model, ylabel=_label(y_metric))
    for metric in risk_metrics:
        if metric in report.metrics:
            out[f"figures/violin_{metric}.png"] = plots.violin_png(
                report.values[metric], title=f"{_label(metric)} per method", ylabel=_label(metric)
            )
    summary: dict[str, dict[str, tuple[float, float, float]]] = {}
    for metric in report.metrics:
        summary[metric] = {}
        for m in report.methods:
            s = report.summary(metric, m)
            summary[metric][m] = (s.mean, s.ci.low, s.ci.high)
    if summary:
        level = report.summaries[0].ci.level if report.summaries else 0.95
        out["figures/metrics_ci.png"] = plots.bars_png(summary, labels=METRIC_LABELS, level=level)
    return out


def write_report(
    report: EvalReport, out_dir: Path, *, figures: bool = True, risk_metrics: Sequence[str] = RISK_METRICS
) -> list[Path]:
    """Write ``report.md``, ``report.json`` and (unless ``figures=False``) ``figures/*.png`` under
    ``out_dir``, each file atomically. Returns the written paths."""
    out_dir = Path(out_dir)
    pngs = figure_pngs(report, risk_metrics) if figures else {}
    written: list[Path] = []
    for rel, data in pngs.items():
        path = out_dir / rel
        write_atomic(path, data)
        written.append(path)
    names = list(pngs)
    md = out_dir / "report.md"
    js = out_dir / "report.json"
    write_atomic(js, render_json(report, names))
    write_atomic(md, render_markdown(report, names))
    return [md, js, *written]
