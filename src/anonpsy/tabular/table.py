"""Reading questionnaire tables (CSV with a header row) and recoding their values.

A cell is kept as text; an empty cell (or ``NA``, ``NaN``, ``.``) is missing. A column whose present values all
parse as integers is an integer column, one whose values all parse as numbers is numeric, anything else is text.
Nothing is dropped: a ragged row, a duplicate or empty column name, or a table without rows is an error naming the
line, never a skipped row. Messages name columns and line numbers, never cell values of text columns.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from anonpsy import errors
from anonpsy.errors import AnonpsyError

MISSING_TOKENS = frozenset({"", "na", "nan", "n/a", ".", "null", "none"})
MAX_BYTES = 200_000_000
Kind = Literal["integer", "numeric", "text", "empty"]


def _number(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _as_int(text: str) -> int | None:
    v = _number(text)
    if v is None or v != int(v):
        return None
    return int(v)


@dataclass
class Table:
    """A table's cells by column (``None`` = missing) and where it came from."""

    name: str
    columns: list[str]
    cells: dict[str, list[str | None]]
    recodes: list[str] = field(default_factory=list)

    @property
    def n_rows(self) -> int:
        return len(self.cells[self.columns[0]]) if self.columns else 0

    def kind(self, column: str) -> Kind:
        present = [v for v in self.cells[column] if v is not None]
        if not present:
            return "empty"
        if all(_as_int(v) is not None for v in present):
            return "integer"
        if all(_number(v) is not None for v in present):
            return "numeric"
        return "text"

    def values(self, column: str) -> list[str | None]:
        return self.cells[column]

    def distinct(self, column: str) -> list[str]:
        """Distinct present values, numbers in numeric order (as canonical text: ``1.0`` -> ``1``)."""
        vals = {v for v in self.cells[column] if v is not None}
        if self.kind(column) in ("integer", "numeric"):
            return [canonical(v) for v in sorted(vals, key=lambda v: float(v))]
        return sorted(vals)

    def missing(self, column: str) -> int:
        return sum(1 for v in self.cells[column] if v is None)

    def numbers(self, column: str) -> list[float | None]:
        return [None if v is None else _number(v) for v in self.cells[column]]

    def select(self, columns: Sequence[str]) -> Table:
        return Table(self.name, list(columns), {c: self.cells[c] for c in columns}, list(self.recodes))


def canonical(value: str) -> str:
    """Numbers written one way (``"2.0"`` and ``"2"`` are the same code); other text unchanged."""
    i = _as_int(value)
    if i is not None:
        return str(i)
    v = _number(value)
    return repr(v) if v is not None else value


def parse_table(text: str, name: str) -> Table:
    """Parse CSV text (header row first). Raises T101 on structural problems."""
    if not text.strip():
        raise AnonpsyError(errors.E101_EMPTY_INPUT, "table is empty", name)
    rows = list(csv.reader(io.StringIO(text)))
    header = [h.strip() for h in rows[0]]
    if any(not h for h in header):
        raise AnonpsyError(errors.T101_BAD_TABLE, "the header has an empty column name", f"{name}:1")
    dupes = sorted({h for h in header if header.count(h) > 1})
    if dupes:
        raise AnonpsyError(errors.T101_BAD_TABLE, f"duplicate column names {dupes}", f"{name}:1")
    body = [r for r in rows[1:] if any(c.strip() for c in r)]
    if not body:
        raise AnonpsyError(errors.T101_BAD_TABLE, "the table has a header but no rows", name)
    cells: dict[str, list[str | None]] = {h: [] for h in header}
    line = 1
    for r in rows[1:]:
        line += 1
        if not any(c.strip() for c in r):
            continue
        if len(r) != len(header):
            raise AnonpsyError(errors.T101_BAD_TABLE, f"row has {len(r)} cells, the header has {len(header)}",
                               f"{name}:{line}")
        for h, c in zip(header, r, strict=True):
            c = c.strip()
            cells[h].append(None if c.lower() in MISSING_TOKENS else canonical(c))
    return Table(name, header, cells)


def read_table(path: Path) -> Table:
    """Read a CSV table from ``path`` (UTF-8, optional BOM)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise AnonpsyError(errors.E100_MISSING_FILE, "table not found", str(path)) from None
    except IsADirectoryError:
        raise AnonpsyError(errors.E100_MISSING_FILE, "expected a CSV file, got a directory", str(path)) from None
    if len(data) > MAX_BYTES:
        raise AnonpsyError(errors.E107_TOO_LARGE, f"table is over {MAX_BYTES} bytes", str(path))
    if b"\x00" in data:
        raise AnonpsyError(errors.E106_BINARY, "table is binary, not CSV text", str(path))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise AnonpsyError(errors.E105_NOT_UTF8, "table is not UTF-8", str(path)) from None
    return parse_table(text, Path(path).name)


# ------------------------------------------------------------------------------------------------------- recode


@dataclass(frozen=True)
class Recode:
    """``target`` (``real``, ``syn`` = every synthetic table, or ``synN`` = the N-th, 1-based) ``column``
    ``mapping`` old -> new."""

    target: str
    column: str
    mapping: Mapping[str, str]

    def text(self) -> str:
        pairs = ",".join(f"{a}:{b}" for a, b in self.mapping.items())
        return f"{self.target}:{self.column}={pairs}"

    def applies_to(self, role: str, index: int) -> bool:
        return self.target == role or (role == "syn" and self.target == f"syn{index}")


def parse_recode(spec: str) -> Recode:
    """Parse ``[real:|syn:|synN:]COLUMN=OLD:NEW[,OLD:NEW...]`` (default target: every synthetic table)."""
    where = "--recode"
    head, sep, pairs = spec.partition("=")
    if not sep or not head.strip() or not pairs.strip():
        raise AnonpsyError(errors.T102_BAD_RECODE, "expected [real:|syn:|synN:]COLUMN=OLD:NEW[,OLD:NEW...]", where)
    target, colon, column = head.partition(":")
    if not colon:
        target, column = "syn", head
    target = target.strip().lower()
    if not (target in ("real", "syn") or (target.startswith("syn") and target[3:].isdigit() and int(target[3:]) > 0)):
        raise AnonpsyError(errors.T102_BAD_RECODE, "the target must be real, syn or synN (N from 1)", where)
    mapping: dict[str, str] = {}
    for pair in pairs.split(","):
        old, colon, new = pair.partition(":")
        if not colon or not old.strip() or not new.strip():
            raise AnonpsyError(errors.T102_BAD_RECODE, f"pair {pair.strip()!r} is not OLD:NEW", where)
        key = canonical(old.strip())
        if key in mapping:
            raise AnonpsyError(errors.T102_BAD_RECODE, f"value {key!r} is mapped twice for {column.strip()!r}", where)
        mapping[key] = canonical(new.strip())
    return Recode(target, column.strip(), mapping)


def apply_recodes(table: Table, recodes: Sequence[Recode], role: str, index: int = 0) -> Table:
    """A copy of ``table`` with the recodes for it applied (every mapped value must occur in the column)."""
    out = Table(table.name, list(table.columns), {c: list(v) for c, v in table.cells.items()}, list(table.recodes))
    for rc in recodes:
        if not rc.applies_to(role, index):
            continue
        if rc.column not in out.cells:
            raise AnonpsyError(errors.T102_BAD_RECODE, f"column {rc.column!r} is not in the table", table.name)
        present = {v for v in out.cells[rc.column] if v is not None}
        unused = sorted(set(rc.mapping) - present)
        if unused:
            raise AnonpsyError(errors.T102_BAD_RECODE, f"column {rc.column!r} has no value {unused[0]!r} to recode",
                               table.name)
        out.cells[rc.column] = [None if v is None else rc.mapping.get(v, v) for v in out.cells[rc.column]]
        out.recodes.append(rc.text())
    return out
