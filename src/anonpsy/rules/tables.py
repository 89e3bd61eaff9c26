"""Typed loaders and pure helpers for the small rule tables.

The tables live under ``rules/`` (file: kind, what it answers):

* ``demographics/age.yaml``: ``age_offsets``, how far a present age may be shifted;
* ``demographics/sex.yaml``: ``sex_reassignment``, how often recorded sex is kept or switched;
* ``demographics/ethnicity.yaml``: ``ethnicity``, which ethnicity descriptors may be drawn;
* ``demographics/occupations.yaml``: ``occupations``, which occupations fit an age and support level;
* ``visit/scaffold.yaml``: ``visit_scaffold``, which visit fields are immutable, and the derived urgency;
* ``treatments/routes.yaml``: ``routes``, route spellings to :class:`~anonpsy.graph.Route`;
* ``treatments/medication_classes.yaml``: ``medication_classes``, what each medication class treats;
* ``graph/edge_pairs.yaml``: ``edge_pairs``, permitted node-type pairs per relation, and etiologic cues;
* ``sex_specific/terms.yaml``: ``sex_specific``, terms that fix sex and the words swapped with sex.

Every loader is cached (``load_*``); every helper takes an optional ``table`` so that rule checks can run a
helper against the file being checked rather than the installed one. Helpers are pure: no I/O beyond the
cached loaders, no randomness except through a caller's :class:`random.Random`. Violation codes are upper-case
strings (``AGE_OFFSET_TOO_LARGE``); they never carry narrative text.

PASS/FAIL examples (the ``.cases.yaml`` beside each file has the full set)::

    age_offset_allowed(17, 2)              -> ["AGE_OFFSET_CROSSES_ADULT"]
    occupation_allowed(12, "nurse")        -> ["OCCUPATION_AGE_BAND"]
    edge_pair_allowed("MANIFESTS_AS", "symptom", "diagnosis") -> False
    sex_term_violations("postpartum", "male")                   -> ["SEX_TERM_CONFLICT"]
    parse_route("po")                      -> Route.oral
    swap_sex_terms("She told her mother.", "male") -> "He told his mother."
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from anonpsy import errors
from anonpsy.caseless import Caseless
from anonpsy.errors import AnonpsyError
from anonpsy.graph import NodeType, RelationType, Route, Sex
from anonpsy.paths import rules_dir
from anonpsy.yamlio import load_yaml

SexValue = Literal["female", "male"]

# Violation codes --------------------------------------------------------------------------------------------
AGE_INVALID = "AGE_INVALID"
AGE_OFFSET_TOO_LARGE = "AGE_OFFSET_TOO_LARGE"
AGE_BELOW_FLOOR = "AGE_BELOW_FLOOR"
AGE_ABOVE_MAX = "AGE_ABOVE_MAX"
SEX_INVALID = "SEX_INVALID"
SEX_UNKNOWN_ASSIGNED = "SEX_UNKNOWN_ASSIGNED"
SEX_TO_UNKNOWN = "SEX_TO_UNKNOWN"
SEX_FIXED_BY_TERMS = "SEX_FIXED_BY_TERMS"
SEX_TERM_CONFLICT = "SEX_TERM_CONFLICT"
ETHNICITY_NOT_IN_POOL = "ETHNICITY_NOT_IN_POOL"
ETHNICITY_SEX_MISMATCH = "ETHNICITY_SEX_MISMATCH"
OCCUPATION_UNKNOWN = "OCCUPATION_UNKNOWN"
OCCUPATION_AGE_BAND = "OCCUPATION_AGE_BAND"
OCCUPATION_SUPPORT_LEVEL = "OCCUPATION_SUPPORT_LEVEL"
OCCUPATION_STATUS_KIND = "OCCUPATION_STATUS_KIND"
SUPPORT_LEVEL_UNKNOWN = "SUPPORT_LEVEL_UNKNOWN"
VISIT_FIELD_CHANGED = "VISIT_FIELD_CHANGED"
VISIT_VALUE_UNKNOWN = "VISIT_VALUE_UNKNOWN"
URGENCY_MISMATCH = "URGENCY_MISMATCH"
URGENCY_UNKNOWN = "URGENCY_UNKNOWN"
CLASS_UNKNOWN = "CLASS_UNKNOWN"
CLASS_NOT_INDICATED = "CLASS_NOT_INDICATED"
TARGET_MISSING = "TARGET_MISSING"
EDGE_TYPE_UNKNOWN = "EDGE_TYPE_UNKNOWN"
EDGE_NODE_TYPE_UNKNOWN = "EDGE_NODE_TYPE_UNKNOWN"
EDGE_PAIR_FORBIDDEN = "EDGE_PAIR_FORBIDDEN"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RuleDoc(_Model):
    """Fields shared by every rule file."""

    kind: str
    version: int
    source: str | None = None
    description: str | None = None


def _norm(text: str) -> str:
    """Lowercase, NFC, single spaces, stripped."""
    return " ".join(unicodedata.normalize("NFC", text).lower().split())


def _dupes(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for v in values:
        if v in seen and v not in out:
            out.append(v)
        seen.add(v)
    return out


# ====================================================================================================
# Age offsets


class AgeBand(_Model):
    id: str
    min_age: int
    max_age: int
    max_offset: int
    note: str | None = None
    source: str | None = None


class AgeBoundary(_Model):
    id: str
    age: int
    crossing_allowed: bool
    code: str
    note: str | None = None
    source: str | None = None


class AgeOffsets(RuleDoc):
    """``rules/demographics/age.yaml``: bands must tile [floor_age, max_age] in order without gaps."""

    kind: Literal["age_offsets"]
    floor_age: int
    max_age: int
    rules: tuple[AgeBand, ...]
    boundaries: tuple[AgeBoundary, ...] = ()

    @model_validator(mode="after")
    def _tiles(self) -> AgeOffsets:
        expected = self.floor_age
        for band in self.rules:
            if band.min_age != expected or band.max_age < band.min_age:
                raise ValueError(
                    f"age band {band.id!r} must start at {expected} and end at or after its start"
                )
            expected = band.max_age + 1
        if expected != self.max_age + 1:
            raise ValueError(f"age bands must end at max_age {self.max_age}")
        for b in self.boundaries:
            if not self.floor_age < b.age <= self.max_age:
                raise ValueError(f"boundary {b.id!r} lies outside the age range")
        return self


def _age_table(table: AgeOffsets | None) -> AgeOffsets:
    return table if table is not None else load_age_offsets()


def _band_of(age: int, t: AgeOffsets) -> AgeBand:
    for band in t.rules:
        if band.min_age <= age <= band.max_age:
            return band
    raise ValueError(f"age {age} is outside [{t.floor_age}, {t.max_age}]")


def age_band(age: int, table: AgeOffsets | None = None) -> str:
    """Id of the age band containing ``age`` (``child``, ``adolescent``, ``young_adult``, ``adult``,
    ``older_adult``). Raises ValueError for an age outside the table's range."""
    return _band_of(age, _age_table(table)).id


def age_offset_bounds(age: int, table: AgeOffsets | None = None) -> tuple[int, int]:
    """Inclusive range ``(lo, hi)`` of offsets allowed for ``age``; always contains 0.

    ``age + offset`` stays in [floor_age, max_age], ``|offset|`` stays within the band's max_offset, and no
    boundary whose crossing is forbidden is crossed. Example: ``age_offset_bounds(17) == (-2, 0)``.
    """
    t = _age_table(table)
    band = _band_of(age, t)
    lo = max(-band.max_offset, t.floor_age - age)
    hi = min(band.max_offset, t.max_age - age)
    for b in t.boundaries:
        if b.crossing_allowed:
            continue
        if age < b.age:
            hi = min(hi, b.age - 1 - age)
        else:
            lo = max(lo, b.age - age)
    return lo, hi


def age_offset_allowed(age: int, offset: int, table: AgeOffsets | None = None) -> list[str]:
    """Violation codes for shifting ``age`` by ``offset`` years (empty list = allowed).

    Codes: AGE_INVALID, AGE_OFFSET_TOO_LARGE, AGE_BELOW_FLOOR, AGE_ABOVE_MAX and the ``code`` of every
    forbidden boundary crossed (e.g. AGE_OFFSET_CROSSES_ADULT). FAIL: ``age_offset_allowed(17, 2)``;
    PASS: ``age_offset_allowed(16, 1)``.
    """
    t = _age_table(table)
    if not t.floor_age <= age <= t.max_age:
        return [AGE_INVALID]
    band = _band_of(age, t)
    out: list[str] = []
    if abs(offset) > band.max_offset:
        out.append(AGE_OFFSET_TOO_LARGE)
    new = age + offset
    if new < t.floor_age:
        out.append(AGE_BELOW_FLOOR)
    if new > t.max_age:
        out.append(AGE_ABOVE_MAX)
    for b in t.boundaries:
        if not b.crossing_allowed and (age < b.age) != (new < b.age):
            out.append(b.code)
    return out


# ====================================================================================================
# Sex reassignment


class SexOption(_Model):
    id: str
    action: Literal["keep", "switch"]
    weight: float
    note: str | None = None
    source: str | None = None


class SexReassignment(RuleDoc):
    """``rules/demographics/sex.yaml``."""

    kind: Literal["sex_reassignment"]
    hard_constraints: str | None = None
    unknown_policy: Literal["keep"] = "keep"
    rules: tuple[SexOption, ...]

    @model_validator(mode="after")
    def _actions(self) -> SexReassignment:
        if sorted(o.action for o in self.rules) != ["keep", "switch"]:
            raise ValueError("sex table needs exactly one 'keep' and one 'switch' option")
        if sum(o.weight for o in self.rules) <= 0:
            raise ValueError("sex weights must not all be zero")
        return self


def sex_weights(table: SexReassignment | None = None) -> dict[str, float]:
    """Normalised probabilities ``{"keep": p, "switch": 1 - p}`` for a patient whose sex is not fixed."""
    t = table if table is not None else load_sex_reassignment()
    total = sum(o.weight for o in t.rules)
    return {o.action: o.weight / total for o in t.rules}


_SEXES = ("female", "male", "unknown")


def _other(sex: str) -> str:
    return "male" if sex == "female" else "female"


def sex_change_allowed(from_sex: str, to_sex: str, fixed: str | None = None) -> list[str]:
    """Violation codes for recording ``to_sex`` for a patient recorded as ``from_sex``.

    ``fixed`` is the sex fixed by sex-specific terms (see :func:`sex_fixed_by_terms`) or None. Codes:
    SEX_INVALID, SEX_UNKNOWN_ASSIGNED (unknown stays unknown), SEX_TO_UNKNOWN (a known sex never becomes
    unknown), SEX_FIXED_BY_TERMS (the new sex contradicts a fixing term).
    """
    if from_sex not in _SEXES or to_sex not in _SEXES or fixed not in ("female", "male", None):
        return [SEX_INVALID]
    out: list[str] = []
    if from_sex == "unknown" and to_sex != "unknown":
        out.append(SEX_UNKNOWN_ASSIGNED)
    if from_sex != "unknown" and to_sex == "unknown":
        out.append(SEX_TO_UNKNOWN)
    if fixed is not None and to_sex != "unknown" and to_sex != fixed:
        out.append(SEX_FIXED_BY_TERMS)
    return out


def choose_sex(
    current: str, fixed: str | None, rng: random.Random, table: SexReassignment | None = None
) -> Sex:
    """Draw the perturbed sex: unknown stays unknown, a fixed sex is kept, otherwise keep or switch by weight.

    Always consumes exactly one draw from ``rng`` so that later draws do not depend on the branch taken.
    """
    u = rng.random()
    if current not in _SEXES:
        raise ValueError("sex must be female, male or unknown")
    if current == "unknown":
        return Sex.unknown
    if fixed in ("female", "male"):
        return Sex(fixed)
    keep = sex_weights(table)["keep"]
    return Sex(current if u < keep else _other(current))


# ====================================================================================================
# Ethnicity


class EthnicityEntry(_Model):
    id: str
    label: str
    omb_category: str
    weight: float
    sex: SexValue | None = None
    note: str | None = None
    source: str | None = None


class EthnicityTable(RuleDoc):
    """``rules/demographics/ethnicity.yaml``."""

    kind: Literal["ethnicity"]
    categories: tuple[str, ...]
    rules: tuple[EthnicityEntry, ...]

    @model_validator(mode="after")
    def _check(self) -> EthnicityTable:
        bad = [e.id for e in self.rules if e.omb_category not in self.categories]
        if bad:
            raise ValueError(f"ethnicity entries with an undeclared category: {bad}")
        dup = _dupes(_norm(e.label) for e in self.rules)
        if dup:
            raise ValueError(f"duplicate ethnicity labels: {dup}")
        return self

    @cached_property
    def by_label(self) -> dict[str, EthnicityEntry]:
        return {_norm(e.label): e for e in self.rules}


def _eth_table(table: EthnicityTable | None) -> EthnicityTable:
    return table if table is not None else load_ethnicity()


def ethnicity_pool(sex: str | None = None, table: EthnicityTable | None = None) -> list[tuple[str, float]]:
    """``(label, probability)`` pairs to draw from, probabilities summing to 1.

    Gendered descriptors ("Latina", "Latino") are included only when ``sex`` is that sex; with ``sex`` None or
    ``unknown`` only neutral descriptors are drawn.
    """
    t = _eth_table(table)
    entries = [e for e in t.rules if e.sex is None or e.sex == sex]
    total = sum(e.weight for e in entries)
    return [(e.label, e.weight / total) for e in entries]


def choose_ethnicity(rng: random.Random, sex: str | None = None, table: EthnicityTable | None = None) -> str:
    """Draw one descriptor from :func:`ethnicity_pool` with ``rng``."""
    pool = ethnicity_pool(sex, table)
    return rng.choices([label for label, _ in pool], weights=[w for _, w in pool], k=1)[0]


def ethnicity_allowed(label: str, sex: str | None = None, table: EthnicityTable | None = None) -> list[str]:
    """Violation codes for a descriptor: ETHNICITY_NOT_IN_POOL, ETHNICITY_SEX_MISMATCH (a gendered descriptor
    for a patient of the other recorded sex; unknown sex accepts either)."""
    entry = _eth_table(table).by_label.get(_norm(label))
    if entry is None:
        return [ETHNICITY_NOT_IN_POOL]
    if entry.sex is not None and sex in ("female", "male") and sex != entry.sex:
        return [ETHNICITY_SEX_MISMATCH]
    return []


# ====================================================================================================
# Occupations


#: Status kind of every occupation of skill level 1 or more that names no other kind: paid work.
WORK = "work"


class Occupation(_Model):
    label: str
    skill_level: int
    min_age: int | None = None
    max_age: int | None = None
    aliases: tuple[str, ...] = ()
    status: str | None = None

    @property
    def kind(self) -> str:
        """The status kind the item belongs to (``work`` for paid work); a draw keeps the kind of its source."""
        return self.status or WORK

    @property
    def name(self) -> str:
        """The label to write into a narrative (same as ``label``)."""
        return self.label

    def names(self) -> tuple[str, ...]:
        """Normalised label and aliases."""
        return (_norm(self.label), *(_norm(a) for a in self.aliases))

    def fits(self, age: int) -> bool:
        """Whether the item's own age range (if any) admits ``age``."""
        return (self.min_age is None or age >= self.min_age) and (self.max_age is None or age <= self.max_age)


class OccupationPool(_Model):
    id: str
    min_age: int
    max_age: int
    occupations: tuple[Occupation, ...]
    note: str | None = None
    source: str | None = None


class SkillLevel(_Model):
    level: int
    label: str


class OccupationStatus(_Model):
    """A kind of role outside paid work (retirement, schooling, unemployment ...) and the occupation-lexicon
    terms that name it."""

    id: str
    label: str
    lexicon: tuple[str, ...] = ()


class SupportMatch(_Model):
    dsm_rule: str
    specifiers: tuple[str, ...]


class SupportLevel(_Model):
    id: str
    matches: tuple[SupportMatch, ...]
    max_skill_level: int | None
    allowed: tuple[str, ...]
    note: str | None = None
    source: str | None = None

    @cached_property
    def allowed_keys(self) -> frozenset[str]:
        return frozenset(_norm(a) for a in self.allowed)


class OccupationTable(RuleDoc):
    """``rules/demographics/occupations.yaml``. Pools must tile the age range in order; support levels are
    listed from most to least restrictive."""

    kind: Literal["occupations"]
    skill_levels: tuple[SkillLevel, ...] = ()
    statuses: tuple[OccupationStatus, ...] = ()
    rules: tuple[OccupationPool, ...]
    support_levels: tuple[SupportLevel, ...] = ()

    @model_validator(mode="after")
    def _check(self) -> OccupationTable:
        expected = self.rules[0].min_age if self.rules else 0
        for pool in self.rules:
            if pool.min_age != expected or pool.max_age < pool.min_age:
                raise ValueError(f"occupation pool {pool.id!r} must start at {expected}")
            expected = pool.max_age + 1
            dup = _dupes(n for o in pool.occupations for n in o.names())
            if dup:
                raise ValueError(f"pool {pool.id!r} names an occupation twice: {dup}")
            if self.statuses:
                declared = {st.id for st in self.statuses}
                for o in pool.occupations:
                    if o.status is not None and o.status not in declared:
                        raise ValueError(f"pool {pool.id!r}: {o.label!r} has undeclared status {o.status!r}")
                    if o.skill_level == 0 and o.status is None:
                        raise ValueError(f"pool {pool.id!r}: {o.label!r} is outside paid work; give it a status")
        if WORK in {st.id for st in self.statuses}:
            raise ValueError(f"status {WORK!r} is implicit (paid work); do not declare it")
        terms = _dupes(term for st in self.statuses for term in st.lexicon)
        if terms:
            raise ValueError(f"lexicon terms name two statuses: {terms}")
        known = {_norm(o.label) for p in self.rules for o in p.occupations}
        for sl in self.support_levels:
            missing = [a for a in sl.allowed if _norm(a) not in known]
            if missing:
                raise ValueError(f"support level {sl.id!r} allows occupations in no pool: {missing}")
        return self

    @cached_property
    def status_by_term(self) -> dict[str, str]:
        """Occupation-lexicon term id -> status kind."""
        return {term: st.id for st in self.statuses for term in st.lexicon}

    @cached_property
    def support_by_id(self) -> dict[str, SupportLevel]:
        return {s.id: s for s in self.support_levels}

    @cached_property
    def pool_index(self) -> dict[str, dict[str, Occupation]]:
        """Pool id -> normalised label or alias -> occupation."""
        return {p.id: {n: o for o in p.occupations for n in o.names()} for p in self.rules}

    @cached_property
    def any_pool_index(self) -> dict[str, Occupation]:
        """First occupation (in pool order) for every normalised label or alias."""
        out: dict[str, Occupation] = {}
        for pool in self.rules:
            for occ in pool.occupations:
                for name in occ.names():
                    out.setdefault(name, occ)
        return out


def _occ_table(table: OccupationTable | None) -> OccupationTable:
    return table if table is not None else load_occupations()


_ARTICLE = re.compile(r"^(?:a|an|the)\s+")


def occupation_key(text: str) -> str:
    """Matching key of an occupation as written: lowercase, single spaces, no leading article."""
    return _ARTICLE.sub("", _norm(text))


def _occupation_pool_of(age: int, t: OccupationTable) -> OccupationPool | None:
    for pool in t.rules:
        if pool.min_age <= age <= pool.max_age:
            return pool
    return None


def _support_ok(occ: Occupation, level: SupportLevel) -> bool:
    if _norm(occ.label) in level.allowed_keys:
        return True
    return level.max_skill_level is not None and 1 <= occ.skill_level <= level.max_skill_level


def occupation_status(occupation: str, table: OccupationTable | None = None) -> str:
    """The status kind of an occupation as written: ``work`` for paid work, else the kind of role outside it.

    An item of the pools gives its own kind; any other text gives the kind of the first occupation-lexicon term
    in it that a status names ("a retired teacher" is retirement, "out of work" unemployment), else ``work``.

    >>> occupation_status("retired"), occupation_status("a retired school teacher"), occupation_status("welder")
    ('retirement', 'retirement', 'work')
    """
    t = _occ_table(table)
    found = t.any_pool_index.get(occupation_key(occupation))
    if found is not None:
        return found.kind
    from anonpsy.lexicon import find_terms  # the lexicon module imports this one

    for m in find_terms(occupation, "occupation"):
        kind = t.status_by_term.get(m.id)
        if kind is not None:
            return kind
    return WORK


def occupation_pool(
    age: int, support_level: str | None = None, table: OccupationTable | None = None, status: str | None = None
) -> list[Occupation]:
    """Occupations that may be drawn for a patient of ``age`` (and support level id, if any), in file order;
    with ``status`` only those of that kind (see :func:`occupation_status`): a retiree stays retired, a
    student a student, paid work paid work.

    An unknown support level gives an empty pool; an age outside every band raises ValueError.
    """
    t = _occ_table(table)
    pool = _occupation_pool_of(age, t)
    if pool is None:
        raise ValueError(f"age {age} is outside every occupation pool")
    level = t.support_by_id.get(support_level) if support_level is not None else None
    if support_level is not None and level is None:
        return []
    return [o for o in pool.occupations if o.fits(age) and (level is None or _support_ok(o, level))
            and (status is None or o.kind == status)]


def occupation_allowed(
    age: int, occupation: str, support_level: str | None = None, table: OccupationTable | None = None,
    like: str | None = None,
) -> list[str]:
    """Violation codes for an occupation at an age (and support level id, if any), drawn to replace ``like``.

    Codes: AGE_INVALID, OCCUPATION_UNKNOWN (in no pool), OCCUPATION_AGE_BAND (not in the pool for this age, or
    outside the item's own age range), SUPPORT_LEVEL_UNKNOWN, OCCUPATION_SUPPORT_LEVEL (neither listed in the
    support level's ``allowed`` nor a paid job of skill level 1..max_skill_level), OCCUPATION_STATUS_KIND (of
    another status kind than ``like``: a job for a retiree, a day program for a student).
    FAIL: ``occupation_allowed(12, "nurse")`` -> ``["OCCUPATION_AGE_BAND"]``.
    """
    t = _occ_table(table)
    pool = _occupation_pool_of(age, t)
    if pool is None:
        return [AGE_INVALID]
    out: list[str] = []
    level: SupportLevel | None = None
    if support_level is not None:
        level = t.support_by_id.get(support_level)
        if level is None:
            out.append(SUPPORT_LEVEL_UNKNOWN)
    key = occupation_key(occupation)
    in_pool = t.pool_index[pool.id].get(key)
    occ = in_pool if in_pool is not None else t.any_pool_index.get(key)
    if occ is None:
        return [*out, OCCUPATION_UNKNOWN]
    if in_pool is None or not in_pool.fits(age):
        out.append(OCCUPATION_AGE_BAND)
    if level is not None and not _support_ok(occ, level):
        out.append(OCCUPATION_SUPPORT_LEVEL)
    if like is not None and occ.kind != occupation_status(like, t):
        out.append(OCCUPATION_STATUS_KIND)
    return out


def _has_phrase(text: str, phrase: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(_norm(phrase))}(?!\w)", _norm(text)) is not None


def support_level_for(
    diagnoses: Iterable[tuple[str | None, Sequence[str]]], table: OccupationTable | None = None
) -> str | None:
    """The most restrictive support level matched by any ``(dsm rule id, specifiers)`` pair, or None.

    A pair matches a support level when the rule id equals the level's ``dsm_rule`` and one of its specifiers
    contains one of the level's specifier phrases as whole words ("severe", "level 3", ...).
    """
    t = _occ_table(table)
    diags = [(rid, tuple(specs)) for rid, specs in diagnoses]
    for level in t.support_levels:
        for m in level.matches:
            for rid, specs in diags:
                if rid == m.dsm_rule and any(_has_phrase(s, p) for s in specs for p in m.specifiers):
                    return level.id
    return None


# ====================================================================================================
# Visit scaffold


class ImmutableField(_Model):
    id: str
    field: Literal["setting", "arrival_mode", "legal_status", "safety_flags"]
    reason: str
    source: str | None = None


class VisitVocabularies(_Model):
    setting: tuple[str, ...]
    arrival_mode: tuple[str, ...]
    legal_status: tuple[str, ...]
    safety_flags: tuple[str, ...]

    def of(self, field: str) -> tuple[str, ...]:
        """Vocabulary of one field."""
        value: tuple[str, ...] = getattr(self, field)
        return value


class UrgencyRule(_Model):
    id: str
    flag: str
    urgency: str
    note: str | None = None
    source: str | None = None


class VisitScaffold(RuleDoc):
    """``rules/visit/scaffold.yaml``."""

    kind: Literal["visit_scaffold"]
    immutable: tuple[ImmutableField, ...]
    vocabularies: VisitVocabularies
    urgency_levels: tuple[str, ...]
    rules: tuple[UrgencyRule, ...]

    @model_validator(mode="after")
    def _check(self) -> VisitScaffold:
        for r in self.rules:
            if r.urgency not in self.urgency_levels:
                raise ValueError(f"urgency rule {r.id!r} uses an undeclared level")
            if r.flag not in self.vocabularies.safety_flags:
                raise ValueError(f"urgency rule {r.id!r} maps an unknown safety flag")
        if _dupes(r.flag for r in self.rules):
            raise ValueError("a safety flag is mapped twice")
        return self


_SCALAR_VISIT_FIELDS = ("setting", "arrival_mode", "legal_status")


def _visit_table(table: VisitScaffold | None) -> VisitScaffold:
    return table if table is not None else load_visit_scaffold()


def immutable_visit_fields(table: VisitScaffold | None = None) -> tuple[str, ...]:
    """VisitEvent fields that perturbation must leave unchanged, in file order."""
    return tuple(f.field for f in _visit_table(table).immutable)


def visit_vocabularies(table: VisitScaffold | None = None) -> dict[str, tuple[str, ...]]:
    """Controlled values of setting, arrival_mode, legal_status and safety_flags."""
    v = _visit_table(table).vocabularies
    return {f: v.of(f) for f in (*_SCALAR_VISIT_FIELDS, "safety_flags")}


def urgency_levels(table: VisitScaffold | None = None) -> tuple[str, ...]:
    """Urgency levels from lowest to highest."""
    return _visit_table(table).urgency_levels


def urgency_for(flags: Iterable[str], table: VisitScaffold | None = None) -> str:
    """Derived urgency: the highest level any flag maps to; the lowest level when no flag maps."""
    t = _visit_table(table)
    by_flag = {r.flag: r.urgency for r in t.rules}
    rank = {lvl: i for i, lvl in enumerate(t.urgency_levels)}
    best = 0
    for f in flags:
        lvl = by_flag.get(str(f))
        if lvl is not None:
            best = max(best, rank[lvl])
    return t.urgency_levels[best]


def urgency_violations(flags: Sequence[str], urgency: str, table: VisitScaffold | None = None) -> list[str]:
    """Violation codes for a stated urgency: VISIT_VALUE_UNKNOWN (unknown flag), URGENCY_UNKNOWN (unknown
    level), URGENCY_MISMATCH (differs from :func:`urgency_for`)."""
    t = _visit_table(table)
    out: list[str] = []
    if any(str(f) not in t.vocabularies.safety_flags for f in flags):
        out.append(VISIT_VALUE_UNKNOWN)
    if urgency not in t.urgency_levels:
        out.append(URGENCY_UNKNOWN)
    elif urgency != urgency_for(flags, t):
        out.append(URGENCY_MISMATCH)
    return out


def _visit_fields(visit: Mapping[str, Any] | BaseModel) -> dict[str, Any]:
    data = visit.model_dump(mode="json") if isinstance(visit, BaseModel) else dict(visit)
    out: dict[str, Any] = {f: str(data.get(f) or "unknown") for f in _SCALAR_VISIT_FIELDS}
    out["safety_flags"] = frozenset(str(f) for f in (data.get("safety_flags") or ()))
    return out


def visit_changes_allowed(
    before: Mapping[str, Any] | BaseModel,
    after: Mapping[str, Any] | BaseModel,
    table: VisitScaffold | None = None,
) -> list[str]:
    """Violation codes for perturbing a visit event from ``before`` to ``after`` (mappings or VisitEvent).

    Codes: VISIT_FIELD_CHANGED (an immutable field differs; safety flags compare as sets), VISIT_VALUE_UNKNOWN
    (a value outside the vocabularies). Absent fields take the graph defaults (``unknown``, no flags).
    """
    t = _visit_table(table)
    b, a = _visit_fields(before), _visit_fields(after)
    out: list[str] = []
    if any(b[f] != a[f] for f in immutable_visit_fields(t)):
        out.append(VISIT_FIELD_CHANGED)
    vocab = t.vocabularies
    unknown = any(side[f] not in vocab.of(f) for side in (b, a) for f in _SCALAR_VISIT_FIELDS) or any(
        flag not in vocab.safety_flags for side in (b, a) for flag in side["safety_flags"]
    )
    if unknown:
        out.append(VISIT_VALUE_UNKNOWN)
    return out


# ====================================================================================================
# Routes


class RouteEntry(_Model):
    id: Route
    synonyms: tuple[str, ...]
    implies: tuple[Route, ...] = ()
    not_after: tuple[str, ...] = ()
    not_before: tuple[str, ...] = ()
    informative: bool = True
    note: str | None = None
    source: str | None = None


def _route_norm(text: str) -> str:
    t = unicodedata.normalize("NFC", text).lower().replace(".", "").replace("-", " ")
    return " ".join(t.split())


@dataclass(frozen=True)
class _RouteMatcher:
    route: Route
    pattern: re.Pattern[str]
    not_after: frozenset[str]
    not_before: frozenset[str]


_PREV_WORD = re.compile(r"([a-z0-9/']+)\W*$")
_NEXT_WORD = re.compile(r"^\W*([a-z0-9/']+)")


class RouteTable(RuleDoc):
    """``rules/treatments/routes.yaml``."""

    kind: Literal["routes"]
    rules: tuple[RouteEntry, ...]

    @model_validator(mode="after")
    def _check(self) -> RouteTable:
        if _dupes(r.id.value for r in self.rules):
            raise ValueError("a route is listed twice")
        dup = _dupes(_route_norm(s) for r in self.rules for s in r.synonyms)
        if dup:
            raise ValueError(f"route synonyms listed for more than one route: {dup}")
        return self

    @cached_property
    def by_synonym(self) -> dict[str, Route]:
        return {_route_norm(s): r.id for r in self.rules for s in r.synonyms}

    @cached_property
    def entries(self) -> dict[Route, RouteEntry]:
        return {r.id: r for r in self.rules}

    @cached_property
    def matchers(self) -> tuple[_RouteMatcher, ...]:
        out = []
        for r in self.rules:
            alts = sorted({_route_norm(s) for s in r.synonyms}, key=len, reverse=True)
            body = "|".join(re.escape(a) for a in alts)
            out.append(
                _RouteMatcher(
                    r.id,
                    re.compile(rf"(?<![a-z0-9])(?:{body})(?![a-z0-9])"),
                    frozenset(_route_norm(w) for w in r.not_after),
                    frozenset(_route_norm(w) for w in r.not_before),
                )
            )
        return tuple(out)


def parse_route(text: str, table: RouteTable | None = None) -> Route | None:
    """The route named by ``text`` ("PO", "by mouth", "depot", "SC/SQ", "1 tab PO qHS"), or None.

    A whole text equal to a synonym wins; otherwise synonyms are searched as whole words (see the rule file's
    description for the guards, non-informative routes and ``implies``). Ambiguous text gives None.
    """
    t = table if table is not None else load_routes()
    norm = _route_norm(text)
    if not norm:
        return None
    exact = t.by_synonym.get(norm)
    if exact is not None:
        return exact
    found: set[Route] = set()
    for m in t.matchers:
        for hit in m.pattern.finditer(norm):
            prev = _PREV_WORD.search(norm[: hit.start()])
            nxt = _NEXT_WORD.search(norm[hit.end() :])
            if prev is not None and prev.group(1) in m.not_after:
                continue
            if nxt is not None and nxt.group(1) in m.not_before:
                continue
            found.add(m.route)
            break
    informative = {r for r in found if t.entries[r].informative}
    candidates = informative or found
    if len(candidates) == 1:
        return next(iter(candidates))
    for r in candidates:
        if candidates - {r} <= set(t.entries[r].implies):
            return r
    return None


# ====================================================================================================
# Medication classes


class Indications(_Model):
    chapters: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    symptoms: tuple[str, ...] = ()


class MedicationClass(_Model):
    id: str
    name: str
    psychotropic: bool
    indications: Indications
    examples: tuple[str, ...] = ()
    group_names: tuple[str, ...] = ()
    note: str | None = None
    source: str | None = None


class MedicationClassTable(RuleDoc):
    """``rules/treatments/medication_classes.yaml``."""

    kind: Literal["medication_classes"]
    rules: tuple[MedicationClass, ...]

    @model_validator(mode="after")
    def _check(self) -> MedicationClassTable:
        if _dupes(c.id for c in self.rules):
            raise ValueError("a medication class is listed twice")
        dup = _dupes(_norm(e) for c in self.rules for e in c.examples)
        if dup:
            raise ValueError(f"example medications listed under more than one class: {dup}")
        return self

    @cached_property
    def by_id(self) -> dict[str, MedicationClass]:
        return {c.id: c for c in self.rules}

    @cached_property
    def by_example(self) -> dict[str, str]:
        return {_norm(e): c.id for c in self.rules for e in c.examples}


def _med_table(table: MedicationClassTable | None) -> MedicationClassTable:
    return table if table is not None else load_medication_classes()


def medication_class_ids(table: MedicationClassTable | None = None) -> tuple[str, ...]:
    """All class ids in file order."""
    return tuple(c.id for c in _med_table(table).rules)


def medication_class(class_id: str, table: MedicationClassTable | None = None) -> MedicationClass | None:
    """The class with this id, or None."""
    return _med_table(table).by_id.get(class_id)


def class_indications(
    class_id: str, table: MedicationClassTable | None = None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(dsm chapter ids, dsm rule ids)`` the class treats. Raises KeyError for an unknown class id."""
    c = _med_table(table).by_id.get(class_id)
    if c is None:
        raise KeyError(f"unknown medication class id {class_id!r}")
    return c.indications.chapters, c.indications.rules


def class_symptom_targets(class_id: str, table: MedicationClassTable | None = None) -> tuple[str, ...]:
    """Symptom headwords the class treats. Raises KeyError for an unknown class id."""
    c = _med_table(table).by_id.get(class_id)
    if c is None:
        raise KeyError(f"unknown medication class id {class_id!r}")
    return c.indications.symptoms


def class_for_drug(name: str, table: MedicationClassTable | None = None) -> str | None:
    """Class id of a generic drug name listed among the examples (case-insensitive), or None."""
    return _med_table(table).by_example.get(_norm(name))


def treatment_indicated(
    class_id: str,
    *,
    rule_id: str | None = None,
    chapter: str | None = None,
    symptom: str | None = None,
    table: MedicationClassTable | None = None,
) -> list[str]:
    """Violation codes for a TREATMENT_OF edge from a medication of ``class_id`` to a diagnosis (its DSM rule
    id and/or chapter) or a symptom headword. Codes: CLASS_UNKNOWN, TARGET_MISSING, CLASS_NOT_INDICATED."""
    c = _med_table(table).by_id.get(class_id)
    if c is None:
        return [CLASS_UNKNOWN]
    if rule_id is None and chapter is None and symptom is None:
        return [TARGET_MISSING]
    ind = c.indications
    ok = (
        (rule_id is not None and rule_id in ind.rules)
        or (chapter is not None and chapter in ind.chapters)
        or (symptom is not None and _norm(symptom) in {_norm(s) for s in ind.symptoms})
    )
    return [] if ok else [CLASS_NOT_INDICATED]


# ====================================================================================================
# Edge pairs and etiologic cues


class NodePair(_Model):
    source: NodeType
    target: NodeType


class EdgeRule(_Model):
    id: str
    relation: RelationType
    pairs: tuple[NodePair, ...]
    note: str | None = None
    source: str | None = None


class Cue(_Model):
    id: str
    cue: str
    type: Literal["morphology", "causal_phrase"]
    direction: Literal["cause_precedes", "cause_follows"]
    note: str | None = None
    source: str | None = None

    def pattern(self) -> str:
        """Regex for the cue: a leading hyphen attaches to the preceding word; otherwise whole words."""
        if self.cue.startswith("-"):
            return rf"(?<=\w){re.escape(self.cue)}(?![\w-])"
        words = r"\s+".join(re.escape(w) for w in self.cue.split())
        return rf"(?<![\w-]){words}(?![\w-])"


@dataclass(frozen=True)
class CueMatch:
    """One etiologic cue found in a text (offsets into the text)."""

    cue_id: str
    start: int
    end: int
    type: str
    direction: str


class EdgePairTable(RuleDoc):
    """``rules/graph/edge_pairs.yaml``."""

    kind: Literal["edge_pairs"]
    rules: tuple[EdgeRule, ...]
    etiologic_cues: tuple[Cue, ...] = ()

    @model_validator(mode="after")
    def _check(self) -> EdgePairTable:
        if _dupes(r.relation.value for r in self.rules):
            raise ValueError("a relation type is listed twice")
        if _dupes(_norm(c.cue) for c in self.etiologic_cues):
            raise ValueError("an etiologic cue is listed twice")
        return self

    @cached_property
    def allowed(self) -> frozenset[tuple[str, str, str]]:
        return frozenset(
            (r.relation.value, p.source.value, p.target.value) for r in self.rules for p in r.pairs
        )

    @cached_property
    def cue_patterns(self) -> tuple[tuple[Cue, re.Pattern[str]], ...]:
        return tuple((c, re.compile(c.pattern(), re.IGNORECASE)) for c in self.etiologic_cues)


def _edge_table(table: EdgePairTable | None) -> EdgePairTable:
    return table if table is not None else load_edge_pairs()


def _enum_value(value: object) -> str:
    return value.value if isinstance(value, RelationType | NodeType) else str(value)


def edge_pair_violations(
    type: RelationType | str,
    source_type: NodeType | str,
    target_type: NodeType | str,
    table: EdgePairTable | None = None,
) -> list[str]:
    """Violation codes for an edge: EDGE_TYPE_UNKNOWN, EDGE_NODE_TYPE_UNKNOWN, EDGE_PAIR_FORBIDDEN."""
    rel, src, tgt = _enum_value(type), _enum_value(source_type), _enum_value(target_type)
    out: list[str] = []
    if rel not in {r.value for r in RelationType}:
        out.append(EDGE_TYPE_UNKNOWN)
    node_types = {n.value for n in NodeType}
    if src not in node_types or tgt not in node_types:
        out.append(EDGE_NODE_TYPE_UNKNOWN)
    if not out and (rel, src, tgt) not in _edge_table(table).allowed:
        out.append(EDGE_PAIR_FORBIDDEN)
    return out


def edge_pair_allowed(
    type: RelationType | str,
    source_type: NodeType | str,
    target_type: NodeType | str,
    table: EdgePairTable | None = None,
) -> bool:
    """Whether an edge of relation ``type`` may go from a ``source_type`` node to a ``target_type`` node."""
    return not edge_pair_violations(type, source_type, target_type, table)


def etiologic_cues(table: EdgePairTable | None = None) -> list[Cue]:
    """All etiologic cues in file order."""
    return list(_edge_table(table).etiologic_cues)


def find_etiologic_cues(text: str, table: EdgePairTable | None = None) -> list[CueMatch]:
    """Etiologic cues in ``text``, left to right, case-insensitive, whole words.

    Where cues overlap the longer one wins ("induced by" over "induced", "-induced" over "induced"), so each
    stretch of text yields at most one cue.
    """
    hits: list[tuple[int, int, Cue]] = []
    for cue, pat in _edge_table(table).cue_patterns:
        hits += [(m.start(), m.end(), cue) for m in pat.finditer(text)]
    out: list[CueMatch] = []
    for start, stop, cue in sorted(hits, key=lambda h: (h[0] - h[1], h[0])):
        if any(start < m.end and m.start < stop for m in out):
            continue
        out.append(CueMatch(cue.id, start, stop, cue.type, cue.direction))
    return sorted(out, key=lambda m: m.start)


# ====================================================================================================
# Sex-specific terms and sex swapping


class SexTerm(_Model):
    id: str
    sex: SexValue
    category: Literal["dsm_diagnosis", "dsm_specifier", "obstetric", "gynecologic", "andrologic"]
    terms: tuple[str, ...]
    dsm_rules: tuple[str, ...] = ()
    min_age: int | None = None
    note: str | None = None
    source: str | None = None

    def pattern(self) -> str:
        """Regex matching any of the terms as whole words; hyphen and space are interchangeable."""
        alts = []
        for term in sorted(self.terms, key=len, reverse=True):
            parts = re.split(r"[\s-]+", term.strip())
            alts.append(r"[\s-]+".join(re.escape(p) for p in parts))
        return rf"(?<![\w]){'(?:' + '|'.join(alts) + ')'}(?![\w])"


class ContextualRule(_Model):
    id: str
    word: str
    to: SexValue
    before_word: str
    otherwise: str
    note: str | None = None
    source: str | None = None


class SwapPair(_Model):
    id: str
    male: str
    female: str
    category: Literal["pronoun", "noun", "title", "partner", "kinship"]
    scope: Literal["always", "patient_reference"]
    directions: tuple[Literal["to_female", "to_male"], ...] = ("to_female", "to_male")
    note: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class _Swapper:
    pattern: re.Pattern[str]
    plain: dict[str, str]
    patient_ref: dict[str, str]
    contextual: dict[str, tuple[str, str]]


class SexSpecificTable(RuleDoc):
    """``rules/sex_specific/terms.yaml``."""

    kind: Literal["sex_specific"]
    terms: tuple[SexTerm, ...]
    relative_markers: tuple[str, ...]
    object_followers: tuple[str, ...]
    contextual: tuple[ContextualRule, ...] = ()
    pairs: tuple[SwapPair, ...]

    @model_validator(mode="after")
    def _check(self) -> SexSpecificTable:
        for direction, src_side in (("to_female", "male"), ("to_male", "female")):
            words = [_norm(getattr(p, src_side)) for p in self.pairs if direction in p.directions]
            words += [_norm(c.word) for c in self.contextual if c.to == direction[3:]]
            dup = _dupes(words)
            if dup:
                raise ValueError(f"words with more than one {direction} replacement: {dup}")
        return self

    @cached_property
    def term_patterns(self) -> tuple[tuple[SexTerm, Caseless], ...]:
        # searched in every text the sex is checked on, where most hold none of a term's words
        return tuple((t, Caseless(re.compile(t.pattern(), re.IGNORECASE))) for t in self.terms)

    @cached_property
    def followers(self) -> frozenset[str]:
        return frozenset(_norm(w) for w in self.object_followers)

    @cached_property
    def blockers(self) -> frozenset[str]:
        return self.followers | frozenset(_norm(w) for w in self.relative_markers)

    def swapper(self, to_sex: SexValue) -> _Swapper:
        """Compiled replacement tables for one direction (cached per direction)."""
        return self.swappers_by_sex[to_sex]

    @cached_property
    def swappers_by_sex(self) -> dict[str, _Swapper]:
        out: dict[str, _Swapper] = {}
        for to_sex in ("female", "male"):
            direction = f"to_{to_sex}"
            src_side = _other(to_sex)
            plain: dict[str, str] = {}
            patient_ref: dict[str, str] = {}
            for p in self.pairs:
                if direction not in p.directions:
                    continue
                src, dst = _norm(getattr(p, src_side)), getattr(p, to_sex)
                (plain if p.scope == "always" else patient_ref)[src] = dst
            ctx = {_norm(c.word): (c.before_word, c.otherwise) for c in self.contextual if c.to == to_sex}
            words = sorted({*plain, *patient_ref, *ctx}, key=len, reverse=True)
            body = "|".join(re.escape(w) for w in words)
            pattern = re.compile(rf"(?<![\w-])(?:{body})(?![\w-])", re.IGNORECASE)
            out[to_sex] = _Swapper(pattern, plain, patient_ref, ctx)
        return out


def _sex_table(table: SexSpecificTable | None) -> SexSpecificTable:
    return table if table is not None else load_sex_specific()


def sex_terms_in(
    text: str, age: int | None = None, table: SexSpecificTable | None = None
) -> list[tuple[str, SexValue]]:
    """``(term entry id, sex)`` for every sex-fixing entry whose terms occur in ``text``, in file order.

    Entries with ``min_age`` (pregnancy, postpartum) are skipped for a patient known to be younger: in a
    child's history they describe the mother. An unknown ``age`` (None) applies every entry.
    """
    out: list[tuple[str, SexValue]] = []
    for term, pat in _sex_table(table).term_patterns:
        if term.min_age is not None and age is not None and age < term.min_age:
            continue
        if pat.search(text):
            out.append((term.id, term.sex))
    return out


def sex_fixed_by_terms(
    text: str, age: int | None = None, table: SexSpecificTable | None = None
) -> str | None:
    """``"female"`` or ``"male"`` when the sex-fixing terms in ``text`` all point to that sex; None when there
    are none, or when they contradict each other (see :func:`sex_term_violations`)."""
    sexes = {sex for _, sex in sex_terms_in(text, age, table)}
    return next(iter(sexes)) if len(sexes) == 1 else None


def sex_term_violations(
    text: str, sex: str, age: int | None = None, table: SexSpecificTable | None = None
) -> list[str]:
    """Violation codes for recording ``sex`` for a patient whose diagnoses, specifiers or history read
    ``text``.

    Codes: SEX_INVALID, SEX_TERM_CONFLICT (a term fixes the other sex). An unknown sex conflicts with nothing.
    FAIL: ``sex_term_violations("postpartum", "male")``.
    """
    if sex not in _SEXES:
        return [SEX_INVALID]
    if sex == "unknown":
        return []
    return [SEX_TERM_CONFLICT] if any(s != sex for _, s in sex_terms_in(text, age, table)) else []


def _match_case(original: str, replacement: str) -> str:
    if len(original) > 1 and original.isupper():
        return replacement.upper()
    if original.islower():
        return replacement
    if original[0].isupper() and (len(original) == 1 or original[1:].islower()):
        return replacement[:1].upper() + replacement[1:]
    return replacement


_WORD_AFTER = re.compile(r"\s*(\w[\w'-]*)")
_ARTICLE_BEFORE = re.compile(r"(?:^|(?<=[^\w'-]))(a|an)((?:\s+[\w'-]+){0,3})\s+$", re.IGNORECASE)


def _patient_reference(before: str, blockers: frozenset[str]) -> bool:
    m = _ARTICLE_BEFORE.search(before)
    if m is None:
        return False
    between = m.group(2).split()
    return not any(w.lower() in blockers or w.lower().endswith(("'s", "’s")) for w in between)


def swap_sex_terms(text: str, to_sex: str, table: SexSpecificTable | None = None) -> str:
    """Rewrite gendered words in ``text`` for a patient of ``to_sex`` (``"female"`` or ``"male"``).

    Pure and whole-word; the case pattern of each word is kept (lower, Title, UPPER). Words already of
    ``to_sex`` are left alone, so the call is idempotent. Rules (data in ``rules/sex_specific/terms.yaml``):

    * pronouns, nouns ("woman", "girl") and titles swap everywhere ("She" -> "He", "Mrs." -> "Mr.");
    * kinship and partner words swap only when they describe the patient: after "a"/"an" with at most three
      plain words between ("a single mother" -> "a single father", "a widow" -> "a widower"); "her mother" and
      "her husband" name relatives and keep their word;
    * female "her" becomes "his" when the next word is not in ``object_followers`` (a determiner:
      "her mother" -> "his mother") and "him" otherwise ("told her that" -> "told him that",
      "saw her." -> "saw him.");
      male "his" becomes "her" before such a word and "hers" otherwise ("it was his." -> "it was hers.").

    Pronoun reference is not resolved: every third-person pronoun is taken to mean the patient.
    """
    if to_sex not in ("female", "male"):
        raise ValueError("to_sex must be 'female' or 'male'")
    t = _sex_table(table)
    sw = t.swapper("female" if to_sex == "female" else "male")

    def repl(m: re.Match[str]) -> str:
        word = m.group(0)
        key = _norm(word)
        if key in sw.contextual:
            before_word, otherwise = sw.contextual[key]
            nxt = _WORD_AFTER.match(text, m.end())
            determiner = nxt is not None and _norm(nxt.group(1)) not in t.followers
            return _match_case(word, before_word if determiner else otherwise)
        if key in sw.plain:
            return _match_case(word, sw.plain[key])
        if key in sw.patient_ref and _patient_reference(text[: m.start()], t.blockers):
            return _match_case(word, sw.patient_ref[key])
        return word

    return sw.pattern.sub(repl, text)


# ====================================================================================================
# Rule ids for audit trails ("<kind>.<entry id>")


def age_rule_id(age: int, table: AgeOffsets | None = None) -> str:
    """Audit rule id of the age band that bounds the offset for ``age``, e.g. ``age_offsets.adult``."""
    return f"age_offsets.{age_band(age, table)}"


def sex_switch_probability(table: SexReassignment | None = None) -> tuple[float, str]:
    """``(probability of switching sex, audit rule id)`` for a patient whose sex is not fixed."""
    return sex_weights(table)["switch"], "sex_reassignment.switch"


def sex_terms_rule_id() -> str:
    """Audit rule id of the word pairs rewritten by :func:`swap_sex_terms`."""
    return "sex_specific.terms"


def ethnicity_rule_id() -> str:
    """Audit rule id of the ethnicity pool."""
    return "ethnicity.pool"


def occupation_rule_id(
    age: int, support_level: str | None = None, table: OccupationTable | None = None
) -> str:
    """Audit rule id of the constraint that shaped an occupation draw: the support level when one applies,
    otherwise the age band's pool, e.g. ``occupations.adolescent``."""
    if support_level is not None:
        return f"occupations.{support_level}"
    pool = _occupation_pool_of(age, _occ_table(table))
    return f"occupations.{pool.id if pool is not None else 'unknown'}"


def support_level_from_specifiers(
    rule_id: str | None, specifiers: Sequence[str], table: OccupationTable | None = None
) -> str | None:
    """Support level id implied by one diagnosis (DSM rule id and specifiers), or None; see
    :func:`support_level_for`."""
    return support_level_for([(rule_id, specifiers)], table)


# ====================================================================================================
# Loaders

_T = TypeVar("_T", bound=RuleDoc)

def _load(model: type[_T], rel: str, root: Path | None = None) -> _T:
    path = (root if root is not None else rules_dir()) / rel
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AnonpsyError(
            errors.E100_MISSING_FILE, "rule file not found; reinstall or restore it", rel
        ) from None
    try:
        data = load_yaml(text)
    except yaml.YAMLError:
        raise AnonpsyError(errors.R101_RULE_YAML, "malformed YAML; run `anonpsy rules check`", rel) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = " -> ".join(str(p) for p in first["loc"])
        raise AnonpsyError(
            errors.R100_RULE_SCHEMA, f"[{where}] {first['msg']}; run `anonpsy rules check`", rel
        ) from None


@lru_cache(maxsize=1)
def load_age_offsets() -> AgeOffsets:
    """``rules/demographics/age.yaml`` (cached)."""
    return _load(AgeOffsets, FILES["age_offsets"])


@lru_cache(maxsize=1)
def load_sex_reassignment() -> SexReassignment:
    """``rules/demographics/sex.yaml`` (cached)."""
    return _load(SexReassignment, FILES["sex_reassignment"])


@lru_cache(maxsize=1)
def load_ethnicity() -> EthnicityTable:
    """``rules/demographics/ethnicity.yaml`` (cached)."""
    return _load(EthnicityTable, FILES["ethnicity"])


@lru_cache(maxsize=1)
def load_occupations() -> OccupationTable:
    """``rules/demographics/occupations.yaml`` (cached)."""
    return _load(OccupationTable, FILES["occupations"])


@lru_cache(maxsize=1)
def load_visit_scaffold() -> VisitScaffold:
    """``rules/visit/scaffold.yaml`` (cached)."""
    return _load(VisitScaffold, FILES["visit_scaffold"])


@lru_cache(maxsize=1)
def load_routes() -> RouteTable:
    """``rules/treatments/routes.yaml`` (cached)."""
    return _load(RouteTable, FILES["routes"])


@lru_cache(maxsize=1)
def load_medication_classes() -> MedicationClassTable:
    """``rules/treatments/medication_classes.yaml`` (cached)."""
    return _load(MedicationClassTable, FILES["medication_classes"])


@lru_cache(maxsize=1)
def load_edge_pairs() -> EdgePairTable:
    """``rules/graph/edge_pairs.yaml`` (cached)."""
    return _load(EdgePairTable, FILES["edge_pairs"])


@lru_cache(maxsize=1)
def load_sex_specific() -> SexSpecificTable:
    """``rules/sex_specific/terms.yaml`` (cached)."""
    return _load(SexSpecificTable, FILES["sex_specific"])


LOADERS = {
    "age_offsets": load_age_offsets,
    "sex_reassignment": load_sex_reassignment,
    "ethnicity": load_ethnicity,
    "occupations": load_occupations,
    "visit_scaffold": load_visit_scaffold,
    "routes": load_routes,
    "medication_classes": load_medication_classes,
    "edge_pairs": load_edge_pairs,
    "sex_specific": load_sex_specific,
}
"""Kind name -> cached loader of its (single) rule file."""

MODELS: dict[str, type[RuleDoc]] = {
    "age_offsets": AgeOffsets,
    "sex_reassignment": SexReassignment,
    "ethnicity": EthnicityTable,
    "occupations": OccupationTable,
    "visit_scaffold": VisitScaffold,
    "routes": RouteTable,
    "medication_classes": MedicationClassTable,
    "edge_pairs": EdgePairTable,
    "sex_specific": SexSpecificTable,
}
"""Kind name -> typed model of a whole rule file."""


FILES = {
    "age_offsets": "demographics/age.yaml",
    "sex_reassignment": "demographics/sex.yaml",
    "ethnicity": "demographics/ethnicity.yaml",
    "occupations": "demographics/occupations.yaml",
    "visit_scaffold": "visit/scaffold.yaml",
    "routes": "treatments/routes.yaml",
    "medication_classes": "treatments/medication_classes.yaml",
    "edge_pairs": "graph/edge_pairs.yaml",
    "sex_specific": "sex_specific/terms.yaml",
}
"""Kind name -> its rule file, relative to the rules directory."""


def load_table_from(kind: str, root: Path) -> RuleDoc:
    """Load one table from another rules directory, uncached (for checks of a working copy).

    Raises KeyError for an unknown kind and AnonpsyError (E100, R101, R100) for a missing or broken file.
    """
    return _load(MODELS[kind], FILES[kind], root)


def load_all_tables() -> dict[str, RuleDoc]:
    """Load (and cache) every table; raises AnonpsyError on the first broken file."""
    return {name: loader() for name, loader in LOADERS.items()}
