"""Clinical test definitions and their value pools (rule kind ``test_values``).

A test is a score instrument, laboratory analyte or vital sign that a test-results text can report as a
number. Each :class:`TestDef` names the test, lists the aliases under which it is written, the units it can be
written in (the canonical unit first; alternatives convert to canonical as ``(written + offset) * factor``),
the physically possible ``range``, the number of ``decimals`` it is usually written with, its clinical
``cutoffs`` and ``pools``.

Pools are half-open intervals ``[low, high)`` in canonical units. They tile the range without gaps or
overlaps: the first pool starts at ``range[0]``, each pool ends where the next starts, and the last ends one
step (``10 ** -decimals``) above ``range[1]`` so that the maximum itself is covered (an integer scale with
range ``[0, 30]`` whose top band is 24–30 has the pool ``[24, 31)``). Interior pool boundaries are exactly the
cut-offs, so no pool straddles a cut-off and a value resampled within its pool keeps its clinical
interpretation.

Example entry (``rules/test_values/cognition.yaml``)::

    - id: mmse
      name: Mini-Mental State Examination
      category: cognition
      aliases: [MMSE, Mini-Mental State Examination, Folstein]
      source: "Folstein MF et al. J Psychiatr Res 1975;12:189-198"
      units:
        - {unit: points, aliases: [pts]}
      range: [0, 30]
      decimals: 0
      cutoffs: [10, 18, 24]
      pools:
        - {low: 0, high: 10, interpretation: severe impairment}
        - {low: 10, high: 18, interpretation: moderate impairment}
        - {low: 18, high: 24, interpretation: mild impairment}
        - {low: 24, high: 31, interpretation: normal cognition}
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from anonpsy.errors import R100_RULE_SCHEMA, R101_RULE_YAML, R104_DUPLICATE_ID, AnonpsyError
from anonpsy.paths import rules_dir
from anonpsy.yamlio import load_yaml

KIND = "test_values"
CONCERN = "test_values"
CATEGORIES: tuple[str, ...] = ("cognition", "rating_scale", "lab", "vital")
EPS = 1e-9
_CANON_DIGITS = 9



class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def alias_key(alias: str) -> str:
    """Normalised alias: lower case without spaces, hyphens or dashes (``PHQ 9`` -> ``phq9``)."""
    return re.sub(r"[\s\-‐-―_]+", "", alias).lower()


_SPACES = re.compile(r"\s+")
_MICRO = re.compile(r"(?<![a-z])(?:u|mc)(?=[glmi])")


def unit_key(unit: str) -> str:
    """Normalised form of a unit: lower case, no spaces, one spelling for micro, times and superscripts."""
    s = _SPACES.sub("", unit).lower()
    s = s.replace("μ", "µ").replace("×", "x").replace("*", "x").replace("º", "°")
    s = s.replace("⁹", "^9").replace("³", "^3").replace("²", "2")
    s = _MICRO.sub("µ", s)
    return s


class UnitDef(_Model):
    """One unit a test can be written in; ``canonical = round((written + offset) * factor, 9)``."""

    unit: str = Field(min_length=1)
    aliases: list[str] = Field(default_factory=list)
    factor: float = Field(default=1.0, gt=0)
    offset: float = 0.0

    @property
    def names(self) -> list[str]:
        """The unit's spelling followed by its aliases."""
        return [self.unit, *self.aliases]

    def to_canonical(self, value: float) -> float:
        """Convert a value written in this unit to the test's canonical unit."""
        return round((value + self.offset) * self.factor, _CANON_DIGITS)

    def from_canonical(self, value: float) -> float:
        """Convert a canonical value to this unit (approximate inverse of :meth:`to_canonical`)."""
        return value / self.factor - self.offset


class Pool(_Model):
    """A half-open band ``[low, high)`` in canonical units with its clinical interpretation."""

    low: float
    high: float
    interpretation: str = Field(min_length=1)

    def contains(self, value: float) -> bool:
        """True when ``low <= value < high``."""
        return self.low <= value < self.high


class TestDef(_Model):
    """One clinical test with its aliases, units, cut-offs and value pools."""

    __test__: ClassVar[bool] = False  # not a pytest test class

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    name: str = Field(min_length=1)
    category: Literal["cognition", "rating_scale", "lab", "vital"]
    aliases: list[str] = Field(min_length=1)
    source: str = Field(min_length=1)
    units: list[UnitDef] = Field(min_length=1)
    range: tuple[float, float]
    decimals: int = Field(ge=0, le=4)
    cutoffs: list[float]
    pools: list[Pool] = Field(min_length=1)
    slash_position: Literal[1, 2] | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _check_invariants(self) -> TestDef:
        problems = self.invariant_problems()
        if problems:
            raise ValueError(f"test {self.id!r}: " + "; ".join(problems))
        return self

    # -- derived -------------------------------------------------------------------------------------------

    @property
    def step(self) -> float:
        """Smallest written increment, ``10 ** -decimals``."""
        return float(10.0**-self.decimals)

    @property
    def canonical_unit(self) -> UnitDef:
        """The canonical unit (the first listed)."""
        return self.units[0]

    @property
    def upper(self) -> float:
        """Exclusive upper bound of all pools (``range[1] + step``)."""
        return self.pools[-1].high

    def unit_for(self, written: str) -> UnitDef | None:
        """The unit whose spelling or alias matches ``written`` after normalisation, or None."""
        key = unit_key(written)
        for u in self.units:
            if any(unit_key(n) == key for n in u.names):
                return u
        return None

    def in_range(self, canonical: float) -> bool:
        """True when a canonical value lies inside the pools' union ``[range[0], range[1] + step)``."""
        return self.pools[0].low - EPS <= canonical < self.upper

    def draw_window(self, pool: Pool, value: float) -> tuple[float, float]:
        """The canonical band a value of ``pool`` is redrawn in: the pool itself, except for a pool at either
        end of the scale (bounded only by the physically possible range), where the draw stays within the
        neighbouring pool's width of the value: the clinical resolution of that end of the scale. A marked
        tachycardia of 130 beats/min is redrawn between 130 and 160, never as 207."""
        low, high = pool.low, pool.high
        if len(self.pools) < 2:
            return low, high
        if pool is self.pools[0]:
            low = max(low, value - (self.pools[1].high - self.pools[1].low))
        if pool is self.pools[-1]:
            high = min(high, value + (self.pools[-2].high - self.pools[-2].low) + self.step)
        return low, high

    def pool_for(self, value: float) -> Pool | None:
        """The pool containing a canonical value, or None when it is outside every pool."""
        for p in self.pools:
            if p.contains(value):
                return p
        return None

    def pool_for_unit(self, value: float, unit: str | None = None) -> Pool | None:
        """The pool of a value written in ``unit`` (canonical when None); None for unknown unit or range."""
        u = self.canonical_unit if unit is None else self.unit_for(unit)
        if u is None:
            return None
        return self.pool_for(u.to_canonical(value))

    # -- validation ----------------------------------------------------------------------------------------

    def invariant_problems(self) -> list[str]:
        """Every violated invariant of units, range, cut-offs and pools, as short messages."""
        out: list[str] = []
        lo, hi = self.range
        step = self.step
        if not lo < hi:
            out.append(f"range [{lo}, {hi}] must have min < max")
        first = self.units[0]
        if first.factor != 1.0 or first.offset != 0.0:
            out.append(f"canonical unit {first.unit!r} must have factor 1 and offset 0; list it first")
        seen_units: dict[str, str] = {}
        for u in self.units:
            for n in u.names:
                k = unit_key(n)
                if k in seen_units and seen_units[k] != u.unit:
                    out.append(f"unit spelling {n!r} names both {seen_units[k]!r} and {u.unit!r}")
                seen_units.setdefault(k, u.unit)
        keys = [alias_key(a) for a in self.aliases]
        dups = sorted({a for a, k in zip(self.aliases, keys, strict=True) if keys.count(k) > 1})
        if dups:
            out.append(f"aliases {dups} normalise to the same spelling; keep one of each")
        if any(not k for k in keys):
            out.append("an alias is empty after normalisation")
        if list(self.cutoffs) != sorted(set(self.cutoffs)):
            out.append("cutoffs must be strictly increasing")
        for c in self.cutoffs:
            if not lo < c <= hi:
                out.append(f"cut-off {c} lies outside the range ({lo}, {hi}]")
        pools = self.pools
        if abs(pools[0].low - lo) > EPS:
            out.append(f"first pool starts at {pools[0].low}, not at the range minimum {lo}")
        if abs(pools[-1].high - (hi + step)) > EPS:
            out.append(
                f"last pool ends at {pools[-1].high}; it must end one step above the range maximum "
                f"({_fmt(hi + step)}) so that {hi} is covered"
            )
        for i, p in enumerate(pools):
            if not p.low < p.high:
                out.append(f"pool {i} [{p.low}, {p.high}) is empty; low must be below high")
            for b in (p.low, p.high):
                if abs(round(b, self.decimals) - b) > EPS:
                    out.append(f"pool {i} bound {b} is not written with {self.decimals} decimals")
            if i + 1 < len(pools):
                nxt = pools[i + 1]
                if nxt.low > p.high + EPS:
                    out.append(f"gap between pool {i} (ends {p.high}) and pool {i + 1} (starts {nxt.low})")
                elif nxt.low < p.high - EPS:
                    out.append(f"pool {i} (ends {p.high}) overlaps pool {i + 1} (starts {nxt.low})")
            for c in self.cutoffs:
                if p.low + EPS < c < p.high - EPS:
                    out.append(
                        f"pool {i} [{p.low}, {p.high}) straddles cut-off {c}; split it at {c} so every pool "
                        "lies on one side of every cut-off"
                    )
        inner = [p.low for p in pools[1:]]
        extra = [b for b in inner if not any(abs(b - c) <= EPS for c in self.cutoffs)]
        if extra:
            out.append(f"pool boundaries {extra} are not cut-offs; add them to cutoffs or merge the pools")
        interps = [p.interpretation for p in pools]
        if len(set(interps)) != len(interps):
            out.append("pool interpretations must be distinct within a test")
        return out


class TestValuesFile(_Model):
    """One ``rules/test_values/<stem>.yaml`` file."""

    kind: Literal["test_values"]
    version: int = Field(ge=1)
    source: str | None = None
    description: str | None = None
    rules: list[TestDef]


def _fmt(x: float) -> str:
    return f"{x:.6f}".rstrip("0").rstrip(".")


def _entry_name(doc: Any, loc: tuple[int | str, ...]) -> str:
    """``test 'id'`` for a pydantic error location inside ``rules``, else the location path."""
    if len(loc) >= 2 and loc[0] == "rules" and isinstance(loc[1], int) and isinstance(doc, dict):
        entries = doc.get("rules")
        if isinstance(entries, list) and 0 <= loc[1] < len(entries) and isinstance(entries[loc[1]], dict):
            return f"test {entries[loc[1]].get('id', loc[1])!r}"
    return "/".join(str(p) for p in loc) or "file"


def validation_messages(doc: Any) -> list[str]:
    """Every problem of one parsed test-values document, each naming its test id; [] when valid."""
    try:
        TestValuesFile.model_validate(doc)
    except ValidationError as exc:
        out = []
        for err in exc.errors():
            loc = tuple(err["loc"])
            where = _entry_name(doc, loc)
            field = "/".join(str(p) for p in loc[2:]) if where.startswith("test ") else ""
            msg = str(err["msg"]).removeprefix("Value error, ")
            if msg.startswith("test '"):
                out.append(msg)
            else:
                out.append(f"{where}{(' [' + field + ']') if field else ''}: {msg}")
        return out
    return []


def parse_doc(doc: Any, location: str | None = None) -> list[TestDef]:
    """Validate one parsed test-values document and return its tests; raises :class:`AnonpsyError` (R100)."""
    problems = validation_messages(doc)
    if problems:
        raise AnonpsyError(R100_RULE_SCHEMA, "; ".join(problems), location)
    return list(TestValuesFile.model_validate(doc).rules)


def cross_test_problems(tests: Iterable[TestDef]) -> list[str]:
    """Problems across tests: duplicate ids, and aliases shared by tests that are not a slash pair."""
    out: list[str] = []
    by_id: dict[str, TestDef] = {}
    owners: dict[str, list[TestDef]] = {}
    for t in tests:
        if t.id in by_id:
            out.append(f"test id {t.id!r} is defined twice")
        by_id[t.id] = t
        for a in t.aliases:
            owners.setdefault(alias_key(a), []).append(t)
    for key, ts in sorted(owners.items()):
        if len(ts) < 2:
            continue
        positions = [t.slash_position for t in ts]
        if None in positions or len(set(positions)) != len(positions):
            names = ", ".join(repr(t.id) for t in ts)
            out.append(
                f"alias {key!r} is shared by tests {names}; an alias may be shared only by the two "
                "halves of a slash pair (slash_position 1 and 2)"
            )
    return out


def defs_from_tests(tests: Iterable[TestDef]) -> dict[str, TestDef]:
    """Index tests by id, raising :class:`AnonpsyError` (R104) on cross-test problems."""
    tests = list(tests)
    problems = cross_test_problems(tests)
    if problems:
        raise AnonpsyError(R104_DUPLICATE_ID, "; ".join(problems), CONCERN)
    return {t.id: t for t in tests}


def _test_values_dir(root: Path | None) -> Path:
    base = rules_dir() if root is None else Path(root)
    sub = base / CONCERN
    return sub if sub.is_dir() else base


def rule_paths(root: Path | None = None) -> list[Path]:
    """The test-values rule files (cases files excluded), sorted by name."""
    d = _test_values_dir(root)
    return sorted(p for p in d.glob("*.yaml") if not p.name.endswith(".cases.yaml"))


@lru_cache(maxsize=8)
def load_test_values(root: Path | None = None) -> dict[str, TestDef]:
    """Load and validate every test definition; ``root`` is the rules directory or its ``test_values`` folder.

    The result is cached; treat it as read-only. Raises :class:`AnonpsyError` naming the file and test id when
    a file is malformed or breaks a pool invariant.
    """
    tests: list[TestDef] = []
    for path in rule_paths(root):
        try:
            doc = load_yaml(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise AnonpsyError(R101_RULE_YAML, f"malformed YAML ({type(exc).__name__})", str(path)) from None
        if not isinstance(doc, dict) or doc.get("kind") != KIND:
            continue
        tests.extend(parse_doc(doc, str(path)))
    return defs_from_tests(tests)


@lru_cache(maxsize=64)
def _defs_from_json(payload: str) -> tuple[TestDef, ...]:
    return tuple(parse_doc(json.loads(payload)))


@lru_cache(maxsize=64)
def _map_from_json(payload: str) -> dict[str, TestDef]:
    return {t.id: t for t in _defs_from_json(payload)}


def _payload(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, sort_keys=True, default=str)


def defs_from_doc(doc: Mapping[str, Any]) -> list[TestDef]:
    """The tests of one parsed document, in file order (cached by content); raises :class:`AnonpsyError`."""
    return list(_defs_from_json(_payload(doc)))


def defs_map_from_doc(doc: Mapping[str, Any]) -> dict[str, TestDef]:
    """The tests of one parsed document by id; the same (read-only) mapping object for equal content."""
    return _map_from_json(_payload(doc))
