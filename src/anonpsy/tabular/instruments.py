"""Questionnaire instruments (``rules/instruments/*.yaml``, kind ``instrument``): items, response scale, scoring,
severity bands and the cut-off.

An instrument file describes the *structure* of a published scale -- how many items, the response coding, how
the score is formed, the severity bands and the cut-off, all factual and cited -- with item stems written in
anonpsy's own words (never the published item text). Example (abridged)::

    kind: instrument
    version: 1
    id: gad7
    short_name: GAD-7
    timeframe: "over the last two weeks"
    scale: [{value: 0, label: "not at all"}, ..., {value: 3, label: "almost every day"}]
    items: [{id: gad7_1, stem: "Felt nervous, tense or keyed up", domain: tension}, ...]
    scoring: {score: total, missing: {max_missing: 0, method: none}}
    bands: [{id: minimal, label: minimal anxiety, min: 0, max: 4}, ...]
    cutoff: {min: 10, label: "probable generalized anxiety disorder", source: "..."}

Scoring (:meth:`Instrument.score`): the raw total is the sum of the answered items; with ``method: prorate``
and at most ``max_missing`` unanswered items it is prorated to ``round_half_up(sum * n_items / answered)``;
more unanswered items make the answers unscorable. ``score: total`` bands the raw total; ``score: average``
bands ``round_half_up(total / n_items)`` (the 0..max severity of the DSM-5 measures). Bands are inclusive
integer ranges that tile the score range; ``cutoff.min`` is the first score counted as above the cut-off.

This module needs only pydantic and PyYAML so that ``anonpsy rules check`` works on the core install.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from anonpsy import errors
from anonpsy.errors import AnonpsyError
from anonpsy.paths import rules_dir
from anonpsy.yamlio import load_yaml

KIND = "instrument"
#: Reason codes of answers that cannot be scored (the ``violations`` of failing cases).
REASONS = ("ITEM_COUNT", "OUT_OF_SCALE", "TOO_MANY_MISSING")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ScalePoint(_Model):
    value: int
    label: str = Field(min_length=1)


class Item(_Model):
    """One item: ``stem`` is anonpsy's own wording; ``domain`` groups items (fear, avoidance, ...).

    ``rarity`` shifts the item's thresholds in the rules backend's response model (0 = typical; > 0 = endorsed
    less often at the same severity, e.g. thoughts of self-harm). ``critical`` marks items a clinician must
    read whatever the total (e.g. self-harm).
    """

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    stem: str = Field(min_length=5)
    domain: str = Field(min_length=1)
    rarity: float = Field(default=0.0, ge=-3.0, le=3.0)
    critical: bool = False
    source: str | None = None


class Missing(_Model):
    max_missing: int = Field(default=0, ge=0)
    method: Literal["none", "prorate"] = "none"


class Scoring(_Model):
    score: Literal["total", "average"] = "total"
    missing: Missing = Missing()


class Band(_Model):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_]*$")
    label: str = Field(min_length=1)
    min: int
    max: int


class Cutoff(_Model):
    min: int
    label: str = Field(min_length=1)
    source: str = Field(min_length=1)


class Instrument(_Model):
    """One questionnaire. Invariants (checked on load): scale values are consecutive integers; bands tile the
    score range without gaps or overlaps; the cut-off lies inside the score range; ``max_missing`` is 0 unless
    the method prorates, and smaller than the number of items."""

    kind: Literal["instrument"]
    version: int = Field(ge=1)
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_]*$")
    name: str
    short_name: str
    description: str = ""
    source: str
    wording: str
    construct_name: str = Field(alias="construct")
    timeframe: str
    age_range: tuple[int, int]
    scale: tuple[ScalePoint, ...] = Field(min_length=2)
    items: tuple[Item, ...] = Field(min_length=2)
    scoring: Scoring
    bands: tuple[Band, ...] = Field(min_length=1)
    cutoff: Cutoff

    @model_validator(mode="after")
    def _invariants(self) -> Instrument:
        problems = instrument_problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    # -- structure ------------------------------------------------------------------------------------------

    @property
    def values(self) -> tuple[int, ...]:
        """The response codes, ascending."""
        return tuple(p.value for p in self.scale)

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def columns(self) -> tuple[str, ...]:
        """Item column names of a table: ``item_1`` ... ``item_n``."""
        return item_columns(self.n_items)

    def label(self, value: int) -> str:
        for p in self.scale:
            if p.value == value:
                return p.label
        raise KeyError(value)

    def score_range(self) -> tuple[int, int]:
        lo, hi = self.values[0], self.values[-1]
        if self.scoring.score == "average":
            return lo, hi
        return lo * self.n_items, hi * self.n_items

    def total_range(self) -> tuple[int, int]:
        return self.values[0] * self.n_items, self.values[-1] * self.n_items

    # -- scoring --------------------------------------------------------------------------------------------

    def score_of_total(self, total: int) -> int:
        """The banded score of a raw total (the total itself, or the rounded average)."""
        if self.scoring.score == "average":
            return round_half_up(total / self.n_items)
        return total

    def band_of(self, score: int) -> Band:
        for band in self.bands:
            if band.min <= score <= band.max:
                return band
        raise ValueError(f"score {score} outside the bands of {self.id}")

    def score(self, answers: Sequence[int | None]) -> ScoreResult:
        """Score one respondent's answers (None = unanswered). Unscorable answers give ``reasons``."""
        reasons: list[str] = []
        if len(answers) != self.n_items:
            return ScoreResult(None, None, None, None, 0, ("ITEM_COUNT",))
        allowed = set(self.values)
        answered = [a for a in answers if a is not None]
        if any(isinstance(a, bool) or not isinstance(a, int) or a not in allowed for a in answered):
            reasons.append("OUT_OF_SCALE")
        missing = self.n_items - len(answered)
        if missing > self.scoring.missing.max_missing:
            reasons.append("TOO_MANY_MISSING")
        if reasons:
            return ScoreResult(None, None, None, None, len(answered), tuple(reasons))
        raw = sum(answered)
        total = raw if missing == 0 else round_half_up(raw * self.n_items / len(answered))
        score = self.score_of_total(total)
        band = self.band_of(score)
        return ScoreResult(total, score, band.id, score >= self.cutoff.min, len(answered), ())

    def first_total_with_score(self, score: int) -> int:
        """The smallest raw total whose banded score is at least ``score``."""
        lo, hi = self.total_range()
        for t in range(lo, hi + 1):
            if self.score_of_total(t) >= score:
                return t
        raise ValueError(f"no total reaches score {score}")


@dataclass(frozen=True)
class ScoreResult:
    """``total``: raw (possibly prorated) total; ``score``: the banded score; ``reasons`` when unscorable."""

    total: int | None
    score: int | None
    band: str | None
    above_cutoff: bool | None
    answered: int
    reasons: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.reasons


def round_half_up(x: float) -> int:
    """Round to the nearest integer, halves upwards (1.5 -> 2, 2.5 -> 3), unlike Python's banker's rounding."""
    return math.floor(x + 0.5 + 1e-12)


def item_columns(n: int) -> tuple[str, ...]:
    return tuple(f"item_{i}" for i in range(1, n + 1))


def instrument_problems(inst: Instrument) -> list[str]:
    """Structural invariants of an instrument, as messages (empty when sound)."""
    out: list[str] = []
    values = [p.value for p in inst.scale]
    if values != list(range(values[0], values[0] + len(values))):
        out.append(f"scale values must be consecutive ascending integers, got {values}")
    if len({p.label for p in inst.scale}) != len(values):
        out.append("scale labels must be distinct")
    ids = [i.id for i in inst.items]
    if len(set(ids)) != len(ids):
        out.append("item ids must be unique")
    if len({i.stem.strip().lower() for i in inst.items}) != len(ids):
        out.append("item stems must be distinct")
    m = inst.scoring.missing
    if m.method == "none" and m.max_missing:
        out.append("missing.max_missing must be 0 unless missing.method is prorate")
    if m.max_missing >= len(ids):
        out.append("missing.max_missing must be smaller than the number of items")
    lo_age, hi_age = inst.age_range
    if not 0 <= lo_age <= hi_age <= 120:
        out.append(f"age_range must satisfy 0 <= low <= high <= 120, got {list(inst.age_range)}")
    if out:
        return out
    lo, hi = inst.score_range()
    expect = lo
    for band in inst.bands:
        if band.min > band.max:
            out.append(f"band {band.id!r}: min {band.min} > max {band.max}")
        if band.min != expect:
            out.append(f"band {band.id!r} starts at {band.min}, expected {expect} (bands must tile {lo}..{hi})")
        expect = band.max + 1
    if expect != hi + 1:
        out.append(f"the last band ends at {expect - 1}, expected {hi} (bands must tile {lo}..{hi})")
    if len({b.id for b in inst.bands}) != len(inst.bands):
        out.append("band ids must be unique")
    if not lo < inst.cutoff.min <= hi:
        out.append(f"cutoff.min {inst.cutoff.min} must lie in ({lo}, {hi}]")
    return out


# ---------------------------------------------------------------------------------------------------- loading


def instruments_dir() -> Path:
    return rules_dir() / "instruments"


def instrument_from_doc(doc: dict[str, Any], location: str = "instrument") -> Instrument:
    """Validate a parsed instrument file; a bad file is one ``E103`` line naming the first problem."""
    try:
        return Instrument.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = " -> ".join(str(p) for p in first["loc"]) or "(top level)"
        raise AnonpsyError(errors.E103_SCHEMA, f"instrument file is invalid at [{where}]: {first['msg']}",
                           location) from None


def _read_doc(path: Path) -> dict[str, Any]:
    try:
        doc = load_yaml(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AnonpsyError(errors.E100_MISSING_FILE, "instrument file not found", str(path)) from None
    except yaml.YAMLError:
        raise AnonpsyError(errors.E102_MALFORMED_YAML, "instrument file is not valid YAML", str(path)) from None
    if not isinstance(doc, dict) or doc.get("kind") != KIND:
        raise AnonpsyError(errors.E103_SCHEMA, "not an instrument file (expected 'kind: instrument')", str(path))
    return doc


@lru_cache(maxsize=64)
def _load(path: str) -> Instrument:
    return instrument_from_doc(_read_doc(Path(path)), path)


def available_instruments() -> dict[str, Path]:
    """Bundled instrument ids and their files."""
    out: dict[str, Path] = {}
    for path in sorted(instruments_dir().glob("*.yaml")):
        if path.name.endswith(".cases.yaml"):
            continue
        try:
            doc = load_yaml(path.read_text(encoding="utf-8"))
        except yaml.YAMLError:
            continue
        if isinstance(doc, dict) and doc.get("kind") == KIND and isinstance(doc.get("id"), str):
            out[doc["id"]] = path
    return out


def load_instrument(ref: str | Path) -> Instrument:
    """Load a bundled instrument by id (``gad7``, ``dsm5_social_anxiety``) or any instrument file by path."""
    p = Path(ref)
    if p.suffix in (".yaml", ".yml") or p.is_file():
        return _load(str(p))
    known = available_instruments()
    if str(ref) not in known:
        raise AnonpsyError(errors.E109_BAD_OPTION,
                           f"unknown instrument {str(ref)!r}; available: {', '.join(sorted(known))}", "INSTRUMENT")
    return _load(str(known[str(ref)]))
