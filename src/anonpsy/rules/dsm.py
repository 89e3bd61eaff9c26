"""DSM-5-TR diagnosis rules: typed loader, label matching and the diagnosis checker.

Rule files are ``rules/dsm/<chapter>.yaml`` (kind ``dsm``, one file per DSM-5-TR chapter). Each entry names a
diagnosis, its ICD-10-CM code family, its DSM-5-TR source, aliases, characteristic symptom headwords, the
medication classes that treat it, and optional constraints. Semantics of the constraints, as
:func:`check_diagnosis` applies them:

* ``present_age: {min, max}`` -- inclusive bounds on completed years at the visit. ``exceptions`` lower the
  floor: an exception applies when the present age is at least its ``min`` (if given) and the duration of the
  disturbance is at least its ``min_duration_days`` (if given). Personality disorders use this for the
  DSM-5-TR rule that a personality disorder may be diagnosed before 18 when features have lasted a year.
* ``onset_age: {min, max_exclusive}`` -- age at onset (years, may be fractional):
  ``min <= onset < max_exclusive``.
* ``duration: {min_days, max_days_exclusive}`` -- days of the disturbance:
  ``min_days <= days < max_days_exclusive``. Months and years are converted with week = 7, month = 30,
  6 months = 182 and year = 365 days.
* ``duration_by_age`` -- age bands ``[{age_max_exclusive: 18, min_days: 365}, {min_days: 730}]``; the first
  band whose ``age_max_exclusive`` exceeds the present age applies; the last band has no age bound. With the
  present age unknown, the most lenient band bounds apply.
* ``stressor_onset: {min_days_after, max_days_after}`` -- days from the stressor to symptom onset, inclusive.
* ``sex`` -- the diagnosis is defined for one sex. ``specifier_sex`` -- a specifier (e.g. "with peripartum
  onset") fixes the sex.
* ``age_gap: {min_years}`` -- present age minus the other party's age must be at least ``min_years``.
* ``requires_history: [{rule, onset_age_max_exclusive}]`` -- another diagnosis that must be on record (e.g.
  conduct disorder with onset before 15 for antisocial personality disorder).

Unknown facts (``None``; sex ``"unknown"``; a required history that is simply not recorded) never cause a
violation. Violation messages name the rule, the bound and its DSM-5-TR source and say how to fix the case;
they never repeat case values or narrative text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from rapidfuzz import fuzz, process

from anonpsy.errors import (
    R100_RULE_SCHEMA,
    R101_RULE_YAML,
    R104_DUPLICATE_ID,
    R109_UNKNOWN_RULE,
    AnonpsyError,
)
from anonpsy.paths import rules_dir
from anonpsy.yamlio import load_yaml

Chapter = Literal[
    "neurodevelopmental",
    "schizophrenia_spectrum",
    "bipolar",
    "depressive",
    "anxiety",
    "obsessive_compulsive",
    "trauma_stressor",
    "dissociative",
    "somatic_symptom",
    "feeding_eating",
    "elimination",
    "sleep_wake",
    "sexual_dysfunction",
    "gender_dysphoria",
    "disruptive_impulse_conduct",
    "substance_related",
    "neurocognitive",
    "personality",
    "paraphilic",
    "other",
]
#: DSM chapter ids in DSM-5-TR order (the one list; ``Chapter`` is its type).
CHAPTERS: tuple[str, ...] = get_args(Chapter)
SexValue = Literal["female", "male"]

# Violation codes.
DSM_AGE_BELOW_MIN = "DSM_AGE_BELOW_MIN"
DSM_AGE_ABOVE_MAX = "DSM_AGE_ABOVE_MAX"
DSM_ONSET_TOO_LATE = "DSM_ONSET_TOO_LATE"
DSM_ONSET_TOO_EARLY = "DSM_ONSET_TOO_EARLY"
DSM_ONSET_AFTER_PRESENT_AGE = "DSM_ONSET_AFTER_PRESENT_AGE"
DSM_DURATION_TOO_SHORT = "DSM_DURATION_TOO_SHORT"
DSM_DURATION_TOO_LONG = "DSM_DURATION_TOO_LONG"
DSM_SEX_MISMATCH = "DSM_SEX_MISMATCH"
DSM_SPECIFIER_SEX_MISMATCH = "DSM_SPECIFIER_SEX_MISMATCH"
DSM_STRESSOR_ONSET_LATE = "DSM_STRESSOR_ONSET_LATE"
DSM_STRESSOR_ONSET_EARLY = "DSM_STRESSOR_ONSET_EARLY"
DSM_AGE_GAP_TOO_SMALL = "DSM_AGE_GAP_TOO_SMALL"
DSM_REQUIRED_HISTORY_MISSING = "DSM_REQUIRED_HISTORY_MISSING"

VIOLATION_CODES: frozenset[str] = frozenset(
    {
        DSM_AGE_BELOW_MIN,
        DSM_AGE_ABOVE_MAX,
        DSM_ONSET_TOO_LATE,
        DSM_ONSET_TOO_EARLY,
        DSM_ONSET_AFTER_PRESENT_AGE,
        DSM_DURATION_TOO_SHORT,
        DSM_DURATION_TOO_LONG,
        DSM_SEX_MISMATCH,
        DSM_SPECIFIER_SEX_MISMATCH,
        DSM_STRESSOR_ONSET_LATE,
        DSM_STRESSOR_ONSET_EARLY,
        DSM_AGE_GAP_TOO_SMALL,
        DSM_REQUIRED_HISTORY_MISSING,
    }
)

FUZZY_CUTOFF = 90.0

# ------------------------------------------------------------------------------------------------------------
# Typed rules


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AgeException(_Model):
    """A documented exception that lowers the present-age floor."""

    min: int | None = Field(default=None, ge=0, le=120)
    min_duration_days: int | None = Field(default=None, ge=1)
    text: str = Field(min_length=1)

    @model_validator(mode="after")
    def _has_condition(self) -> AgeException:
        if self.min is None and self.min_duration_days is None:
            raise ValueError("an age exception needs min or min_duration_days")
        return self


class PresentAge(_Model):
    """Inclusive bounds on completed years of age at the visit."""

    min: int | None = Field(default=None, ge=0, le=120)
    max: int | None = Field(default=None, ge=0, le=120)
    source: str | None = None
    note: str | None = None
    exceptions: tuple[AgeException, ...] = ()

    @model_validator(mode="after")
    def _bounds(self) -> PresentAge:
        if self.min is None and self.max is None:
            raise ValueError("present_age needs min or max")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError("present_age min is above max")
        if self.exceptions and self.min is None:
            raise ValueError("present_age exceptions need a min to lower")
        for exc in self.exceptions:
            if exc.min is not None and self.min is not None and exc.min >= self.min:
                raise ValueError("an age exception min must be below present_age min")
        return self


class OnsetAge(_Model):
    """Bounds on age at onset: ``min <= onset < max_exclusive``."""

    min: float | None = Field(default=None, ge=0, le=120)
    max_exclusive: float | None = Field(default=None, ge=0, le=120)
    source: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _bounds(self) -> OnsetAge:
        if self.min is None and self.max_exclusive is None:
            raise ValueError("onset_age needs min or max_exclusive")
        if self.min is not None and self.max_exclusive is not None and self.min >= self.max_exclusive:
            raise ValueError("onset_age min must be below max_exclusive")
        return self


class DurationBound(_Model):
    """Bounds on days of the disturbance: ``min_days <= days < max_days_exclusive``."""

    min_days: int | None = Field(default=None, ge=1)
    max_days_exclusive: int | None = Field(default=None, ge=1)
    source: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _bounds(self) -> DurationBound:
        if self.min_days is None and self.max_days_exclusive is None:
            raise ValueError("a duration needs min_days or max_days_exclusive")
        if (
            self.min_days is not None
            and self.max_days_exclusive is not None
            and self.min_days >= self.max_days_exclusive
        ):
            raise ValueError("duration min_days must be below max_days_exclusive")
        return self


class DurationBand(DurationBound):
    """Duration bounds for present ages below ``age_max_exclusive`` (None: every remaining age)."""

    age_max_exclusive: int | None = Field(default=None, ge=1, le=120)


class StressorOnset(_Model):
    """Days from the stressor to symptom onset, inclusive bounds."""

    min_days_after: int | None = Field(default=None, ge=0)
    max_days_after: int = Field(ge=0)
    source: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _bounds(self) -> StressorOnset:
        if self.min_days_after is not None and self.min_days_after > self.max_days_after:
            raise ValueError("stressor_onset min_days_after is above max_days_after")
        return self


class AgeGap(_Model):
    """Minimum years by which the person is older than the other party."""

    min_years: int = Field(ge=1)
    source: str | None = None
    note: str | None = None


class RequiredHistory(_Model):
    """Another diagnosis that must be on record, optionally with an onset bound."""

    rule: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    onset_age_max_exclusive: float | None = Field(default=None, ge=0, le=120)
    source: str | None = None
    note: str | None = None


class AbbreviationSense(_Model):
    """Another meaning of an abbreviation among a rule's aliases and what shows it in a sentence."""

    abbreviation: str = Field(pattern=r"^[A-Za-z0-9/-]+$")
    sense: str = Field(min_length=1)
    cues: tuple[str, ...] = ()
    in_capitals: bool = False


class DsmRule(_Model):
    """One DSM-5-TR diagnosis with its constraints."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    name: str = Field(min_length=1)
    chapter: Chapter
    icd10cm: str = Field(min_length=1)
    source: str = Field(min_length=1)
    aliases: tuple[str, ...] = ()
    list_aliases: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    abbreviation_senses: tuple[AbbreviationSense, ...] = ()
    due_to_medical_condition: bool = False
    symptoms: tuple[str, ...] = ()
    medication_classes: tuple[str, ...] = ()
    present_age: PresentAge | None = None
    onset_age: OnsetAge | None = None
    duration: DurationBound | None = None
    duration_by_age: tuple[DurationBand, ...] = ()
    stressor_onset: StressorOnset | None = None
    sex: SexValue | None = None
    sex_source: str | None = None
    specifier_sex: dict[str, SexValue] = Field(default_factory=dict)
    age_gap: AgeGap | None = None
    requires_history: tuple[RequiredHistory, ...] = ()
    note: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> DsmRule:
        if self.duration is not None and self.duration_by_age:
            raise ValueError("use either duration or duration_by_age, not both")
        if self.duration_by_age:
            bands = self.duration_by_age
            if bands[-1].age_max_exclusive is not None:
                raise ValueError("the last duration_by_age band must have no age_max_exclusive")
            bounds = [b.age_max_exclusive for b in bands[:-1]]
            if any(b is None for b in bounds):
                raise ValueError("only the last duration_by_age band may omit age_max_exclusive")
            ints = [b for b in bounds if b is not None]
            if ints != sorted(set(ints)):
                raise ValueError("duration_by_age bands must have increasing age_max_exclusive")
        if self.sex_source is not None and self.sex is None:
            raise ValueError("sex_source given without sex")
        return self

    def duration_bands(self) -> tuple[DurationBand, ...]:
        """Duration bounds as age bands (a plain ``duration`` is one band covering every age)."""
        if self.duration is not None:
            d = self.duration
            return (
                DurationBand(
                    min_days=d.min_days,
                    max_days_exclusive=d.max_days_exclusive,
                    source=d.source,
                    note=d.note,
                ),
            )
        return self.duration_by_age


# ------------------------------------------------------------------------------------------------------------
# Loading


@dataclass(frozen=True)
class _Bundle:
    rules: dict[str, DsmRule]
    index: dict[str, str]  # normalized label -> rule id
    keys: tuple[str, ...]  # index keys in deterministic order (rule order, then key)
    #: ``keys`` with their words sorted (:func:`_sorted_words`), in the same order: what the fuzzy match compares
    sorted_keys: tuple[str, ...]


def _sorted_words(s: str) -> str:
    """The words of ``s`` sorted, joined by single spaces: rapidfuzz's ``token_sort_ratio`` of two strings is the
    ``ratio`` of these forms of them."""
    return " ".join(sorted(s.split()))


def _flatten_validation(err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        loc = " -> ".join(str(p) for p in e["loc"])
        parts.append(f"[{loc}] {e['msg']}")
    return "; ".join(parts)


def rule_files(rules_root: Path | None = None) -> list[Path]:
    """The dsm rule files (not the cases files) under ``rules_root/dsm``, in DSM chapter order."""
    root = Path(rules_root) if rules_root is not None else rules_dir()
    files = [p for p in (root / "dsm").glob("*.yaml") if not p.name.endswith(".cases.yaml")]
    order = {c: i for i, c in enumerate(CHAPTERS)}
    return sorted(files, key=lambda p: (order.get(p.stem, len(order)), p.stem))


def parse_rules(doc: Mapping[str, Any], location: str = "<dsm>") -> list[DsmRule]:
    """Typed rules of one parsed dsm rule file. Raises AnonpsyError (R100) on a malformed file."""
    if not isinstance(doc, Mapping) or doc.get("kind") != "dsm":
        raise AnonpsyError(
            R100_RULE_SCHEMA, "not a dsm rule file: expected 'kind: dsm' at top level", location
        )
    chapter = doc.get("chapter")
    entries = doc.get("rules")
    if not isinstance(entries, list):
        raise AnonpsyError(R100_RULE_SCHEMA, "expected a 'rules' list of diagnoses", location)
    out: list[DsmRule] = []
    for i, entry in enumerate(entries):
        try:
            rule = DsmRule.model_validate(entry)
        except ValidationError as err:
            raise AnonpsyError(
                R100_RULE_SCHEMA, f"rules[{i}] is invalid: {_flatten_validation(err)}", location
            ) from None
        if rule.chapter != chapter:
            raise AnonpsyError(
                R100_RULE_SCHEMA,
                f"rule {rule.id} has chapter {rule.chapter} but the file is chapter {chapter}; "
                "move the rule or fix its chapter",
                location,
            )
        out.append(rule)
    return out


def _build_index(rules: Mapping[str, DsmRule]) -> tuple[dict[str, str], tuple[str, ...]]:
    index: dict[str, str] = {}
    ordered: list[str] = []
    for rule in rules.values():
        labels = [rule.id.replace("_", " "), rule.name, *rule.aliases]
        own: list[str] = []
        for label in labels:
            key = normalize_label(label)
            if not key:
                continue
            other = index.get(key)
            if other is not None and other != rule.id:
                raise AnonpsyError(
                    R104_DUPLICATE_ID,
                    f"label {key!r} names both {other} and {rule.id}; keep it on one rule only",
                    "rules/dsm",
                )
            if other is None:
                index[key] = rule.id
                own.append(key)
        ordered.extend(sorted(own))
    return index, tuple(ordered)


@lru_cache(maxsize=8)
def _load_bundle(root: Path) -> _Bundle:
    rules: dict[str, DsmRule] = {}
    for path in rule_files(root):
        location = f"rules/dsm/{path.name}"
        try:
            doc = load_yaml(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            loc = f"{location}:{mark.line + 1}" if mark is not None else location
            raise AnonpsyError(R101_RULE_YAML, "malformed YAML; fix the syntax", loc) from None
        for rule in parse_rules(doc, location):
            if rule.id in rules:
                raise AnonpsyError(
                    R104_DUPLICATE_ID, f"rule id {rule.id} is defined twice; rename one", location
                )
            rules[rule.id] = rule
    for rule in rules.values():
        for req in rule.requires_history:
            if req.rule not in rules:
                raise AnonpsyError(
                    R109_UNKNOWN_RULE,
                    f"rule {rule.id} requires history of unknown rule {req.rule}; add it or fix the id",
                    "rules/dsm",
                )
    index, keys = _build_index(rules)
    return _Bundle(rules=rules, index=index, keys=keys, sorted_keys=tuple(map(_sorted_words, keys)))


@lru_cache(maxsize=8)
def _resolved(path: Path) -> Path:
    return path.resolve()


def _root(rules_root: Path | None) -> Path:
    return _resolved(Path(rules_root) if rules_root is not None else rules_dir())


def load_dsm(rules_root: Path | None = None) -> dict[str, DsmRule]:
    """All DSM rules under ``rules_root/dsm`` (default: the project rules directory), keyed by id.

    Rules come in DSM chapter order. Loading is cached per directory; the returned dict is a fresh copy, the
    rules themselves are immutable. Raises AnonpsyError (R100, R101, R104, R109) on a malformed rule set.
    """
    return dict(_load_bundle(_root(rules_root)).rules)


def rules_by_id(rules_root: Path | None = None) -> Mapping[str, DsmRule]:
    """The rules of :func:`load_dsm`, read-only and not copied: for callers that only look rules up (extraction
    asks for every diagnosis mention of every sentence)."""
    return MappingProxyType(_load_bundle(_root(rules_root)).rules)


def clear_dsm_cache() -> None:
    """Forget loaded rules (after editing rule files, or to time a cold load)."""
    _load_bundle.cache_clear()
    _match_label.cache_clear()


# ------------------------------------------------------------------------------------------------------------
# Label normalization and matching

_SEVERITY = r"(?:mild|moderate|severe|profound|extreme)"
_TRAILING_SPECIFIERS: tuple[str, ...] = (
    r"due to .+",
    r"with(?:out)? (?:mood (?:in)?congruent )?psychotic features",
    r"with(?:out)? [a-z ]+? features",
    rf"with anxious distress(?: {_SEVERITY}(?: to {_SEVERITY})?)?",
    r"with catatonia",
    r"with(?:out)? (?:peripartum|postpartum) onset",
    r"with seasonal pattern",
    r"with rapid cycling",
    r"with (?:good or fair|good|fair|poor|absent) insight(?: delusional beliefs)?",
    r"with insight",
    r"tic related",
    r"with [a-z]+(?: and [a-z]+)* dimensions?",
    r"(?:in )?(?:early |sustained )?(?:partial|full) remission",
    r"in (?:early|sustained) remission",
    r"in remission",
    r"in a controlled environment",
    r"on maintenance therapy",
    r"(?:current or most recent|current|most recent) episode"
    r"(?: (?:manic|hypomanic|depressed|depressive|mixed|unspecified))?",
    r"currently in (?:an )?(?:acute episode|partial remission|full remission)",
    r"recurrent(?: episodes?)?",
    r"single episode",
    r"first episode",
    r"multiple episodes",
    r"continuous",
    rf"{_SEVERITY}(?: to {_SEVERITY})?(?: severity)?",
    r"unspecified",
    r"provisional",
    r"historical",
    r"resolved",
    r"by history",
    r"chronic",
    r"acute",
    r"subacute",
    r"persistent",
    r"with delayed expression",
    r"with dissociative symptoms",
    r"with panic attacks",
    r"with(?:out)? marked stressors?(?: s)?",
    r"with onset during (?:intoxication|withdrawal)",
    r"with onset after medication use",
    r"with(?:out)? perceptual disturbances?",
    r"with(?:out)? (?:mild|moderate or severe|moderate|severe)? ?use disorder",
    r"uncomplicated",
    r"(?:restricting|binge eating purging) type",
    r"(?:childhood|adolescent) onset(?: type)?",
    r"unspecified onset",
    r"with limited prosocial emotions",
    r"(?:combined|predominantly inattentive|predominantly hyperactive impulsive|inattentive"
    r"|hyperactive impulsive) (?:presentation|type)",
    r"with(?:out)? accompanying (?:intellectual|language) impairment",
    r"with or without accompanying (?:intellectual|language) impairment",
    r"requiring (?:very substantial |substantial )?support",
    r"level [123]",
    r"lifelong",
    r"acquired",
    r"generalized",
    r"situational",
    r"nocturnal only",
    r"diurnal only",
    r"nocturnal and diurnal",
    r"with(?:out)? constipation and overflow incontinence",
    r"with depressed mood",
    r"with anxiety",
    r"with mixed anxiety and depressed mood",
    r"with disturbance of conduct",
    r"with mixed disturbance of emotions and conduct",
    r"with(?:out)? behaviou?ral disturbance",
    r"with impairment in [a-z ]+",
    r"bipolar type",
    r"depressive type",
    r"(?:early|late) onset",
    r"in childhood",
    r"in adolescents and adults",
    r"posttransition",
)
_TRAILING_RE = re.compile("|".join(f"(?:{p})" for p in _TRAILING_SPECIFIERS))
_LEADING_RE = re.compile(
    r"^(?:history of|hx of|h o|rule out|r o|provisional|probable|possible|suspected|presumed|presumptive"
    r"|working diagnosis of|mild|moderate|severe|chronic|acute|recurrent|current|primary)\s+"
)
_PARENS_RE = re.compile(r"\([^()]*\)")
_PERIPARTUM_RE = re.compile(r"\b(?:peri ?partum|post ?partum|peri ?natal|post ?natal|puerperal)\b")
PERIPARTUM_SPECIFIER = "with peripartum onset"


@lru_cache(maxsize=8192)
def normalize_label(s: str) -> str:
    """Canonical form of a diagnosis label or specifier for matching.

    Case-folded, unicode-normalized, possessive ``'s`` folded (``Tourette's`` -> ``tourettes``), ``&`` read as
    ``and``, and every run of other non-alphanumeric characters collapsed to one space.

    >>> normalize_label("Attention-Deficit/Hyperactivity Disorder")
    'attention deficit hyperactivity disorder'
    """
    t = unicodedata.normalize("NFKC", s).casefold()
    t = t.replace("\u2019", "'").replace("`", "'")
    t = re.sub(r"'s\b", "s", t)
    t = t.replace("&", " and ")
    t = re.sub(r"[^a-z0-9]+", " ", t)
    return t.strip()


def _strip_steps(n: str) -> tuple[list[str], list[str]]:
    """Successive forms of a normalized label with trailing, then leading, specifiers removed.

    Returns (forms, removed specifier phrases).
    """
    forms = [n]
    removed: list[str] = []
    words = n.split()
    changed = True
    while changed and len(words) > 1:
        changed = False
        # The shortest trailing run of words that is a specifier goes first, grown word by word while it stays
        # a specifier ("partial remission" -> "in partial remission"); the first word always stays.
        for k in range(len(words) - 1, 0, -1):
            if _TRAILING_RE.fullmatch(" ".join(words[k:])):
                while k > 1 and _TRAILING_RE.fullmatch(" ".join(words[k - 1 :])):
                    k -= 1
                suffix = " ".join(words[k:])
                removed.append(suffix)
                words = words[:k]
                forms.append(" ".join(words))
                changed = True
                break
    cur = " ".join(words)
    while True:
        m = _LEADING_RE.match(cur)
        if not m or m.end() >= len(cur):
            break
        cur = cur[m.end() :].strip()
        forms.append(cur)
    return forms, removed


def _variants(label: str) -> list[str]:
    variants = [label]
    no_parens = _PARENS_RE.sub(" ", label)
    if no_parens != label:
        variants.append(no_parens)
    return variants


def extract_specifiers(label: str) -> tuple[str, ...]:
    """Specifier phrases found at the end of a diagnosis label, normalized, in label order.

    Labels naming a peripartum presentation ("postpartum depression") also yield ``"with peripartum onset"``.

    >>> extract_specifiers("MDD, recurrent, severe with psychotic features")
    ('recurrent', 'severe', 'with psychotic features')
    """
    found: list[str] = []
    for variant in _variants(label):
        _, removed = _strip_steps(normalize_label(variant))
        for phrase in reversed(removed):
            if phrase not in found:
                found.append(phrase)
        if removed:
            break
    n = normalize_label(label)
    if _PERIPARTUM_RE.search(n) and not any(
        "peripartum onset" in f or "postpartum onset" in f for f in found
    ):
        found.append(PERIPARTUM_SPECIFIER)
    return tuple(found)


def match_label(label: str, rules_root: Path | None = None) -> DsmRule | None:
    """The DSM rule a diagnosis label names, or None (cached; see :func:`_match_label`)."""
    return _match_label(label, _root(rules_root))


@lru_cache(maxsize=4096)
def _match_label(label: str, root: Path) -> DsmRule | None:
    """The DSM rule a diagnosis label names, or None.

    Exact match on the normalized name, id or an alias first -- of the label as written, then after removing
    parenthetical remarks and trailing specifiers ("recurrent", "severe", "with psychotic features", "in
    partial remission", "current episode manic", ...), then leading qualifiers ("probable", "severe", ...).
    Failing that, rapidfuzz ``token_sort_ratio`` of at least 90 against every known label; ties go to the rule
    that comes first in DSM chapter order, then to the alphabetically first label.
    """
    bundle = _load_bundle(root)
    fuzzy_queries: list[str] = []
    for variant in _variants(label):
        forms, _ = _strip_steps(normalize_label(variant))
        for form in forms:
            rid = bundle.index.get(form)
            if rid is not None:
                return bundle.rules[rid]
        for form in forms:
            if form and not form.endswith("disorder"):
                rid = bundle.index.get(f"{form} disorder")
                if rid is not None:
                    return bundle.rules[rid]
        fuzzy_queries.extend(f for f in (forms[0], forms[-1]) if f and f not in fuzzy_queries)
    best: tuple[float, int] | None = None
    # token_sort_ratio against every key, as the ratio of the words sorted: the keys' words are sorted once, when the
    # rules are loaded, not again for every label (the same scores, a fifth of the work)
    for query in fuzzy_queries:
        for _choice, score, idx in process.extract(
            _sorted_words(query), bundle.sorted_keys, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF, limit=None
        ):
            cand = (float(score), -int(idx))
            if best is None or cand > best:
                best = cand
    if best is None:
        return None
    return bundle.rules[bundle.index[bundle.keys[-best[1]]]]


# ------------------------------------------------------------------------------------------------------------
# Facts and checks


@dataclass(frozen=True)
class DiagnosisFacts:
    """What a case says about one diagnosis. ``None`` means unknown and never causes a violation.

    ``history`` maps the rule id of another diagnosis in the case to its onset age (or None when unknown).
    ``history_complete`` says that ``history`` lists every diagnosis on record, so a required history that is
    absent from it is missing rather than unknown.
    """

    present_age: int | None
    sex: str = "unknown"
    onset_age: float | None = None
    duration_days: int | None = None
    specifiers: tuple[str, ...] = ()
    stressor_to_onset_days: int | None = None
    other_party_age: int | None = None
    history: Mapping[str, float | None] = field(default_factory=dict)
    history_complete: bool = False


@dataclass(frozen=True)
class RuleViolation:
    """One broken DSM constraint: a code, the rule id and a message saying what, why and how to fix."""

    code: str
    rule_id: str
    message: str


FACT_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(DiagnosisFacts))


def _opt_int(data: Mapping[str, Any], key: str) -> int | None:
    v = data.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"fact {key} must be an integer or null")
    return v


def _opt_num(value: Any, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{what} must be a number or null")
    return float(value)


def facts_from_mapping(data: Mapping[str, Any]) -> DiagnosisFacts:
    """DiagnosisFacts from a plain mapping with the dataclass field names (missing keys: unknown).

    Raises ValueError naming the offending field (never its value) on unknown keys or wrong types.
    """
    unknown = sorted(set(data) - set(FACT_FIELDS))
    if unknown:
        raise ValueError(f"unknown fact(s) {', '.join(unknown)}; expected some of {', '.join(FACT_FIELDS)}")
    sex = data.get("sex", "unknown")
    if sex is None:
        sex = "unknown"
    if sex not in ("female", "male", "unknown"):
        raise ValueError("fact sex must be female, male or unknown")
    specs = data.get("specifiers", ()) or ()
    if isinstance(specs, str) or not all(isinstance(s, str) for s in specs):
        raise ValueError("fact specifiers must be a list of strings")
    hist_raw = data.get("history", {}) or {}
    if not isinstance(hist_raw, Mapping):
        raise ValueError("fact history must map rule ids to onset ages")
    history = {str(k): _opt_num(v, "history onset age") for k, v in hist_raw.items()}
    complete = data.get("history_complete", False)
    if not isinstance(complete, bool):
        raise ValueError("fact history_complete must be true or false")
    return DiagnosisFacts(
        present_age=_opt_int(data, "present_age"),
        sex=str(sex),
        onset_age=_opt_num(data.get("onset_age"), "fact onset_age"),
        duration_days=_opt_int(data, "duration_days"),
        specifiers=tuple(specs),
        stressor_to_onset_days=_opt_int(data, "stressor_to_onset_days"),
        other_party_age=_opt_int(data, "other_party_age"),
        history=history,
        history_complete=complete,
    )


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _cite(rule: DsmRule, part_source: str | None) -> str:
    return f"{rule.source}; {part_source}" if part_source else rule.source


def _specifier_hits(rule: DsmRule, specifiers: Iterable[str]) -> list[tuple[str, str]]:
    """(specifier key, required sex) for each sex-fixing specifier of the rule named in ``specifiers``."""
    padded = [f" {normalize_label(s)} " for s in specifiers]
    hits: list[tuple[str, str]] = []
    for key in sorted(rule.specifier_sex):
        nk = f" {normalize_label(key)} "
        if any(nk in p for p in padded):
            hits.append((key, rule.specifier_sex[key]))
    return hits


def required_sex(rule: DsmRule, specifiers: Iterable[str] = ()) -> str | None:
    """The sex a diagnosis (with these specifiers) requires, or None when any sex fits."""
    if rule.sex is not None:
        return rule.sex
    hits = _specifier_hits(rule, specifiers)
    return hits[0][1] if hits else None


def _duration_bounds(rule: DsmRule, present_age: int | None) -> tuple[int | None, int | None, str | None]:
    bands = rule.duration_bands()
    if not bands:
        return None, None, None
    if present_age is None:
        mins = [b.min_days for b in bands]
        maxs = [b.max_days_exclusive for b in bands]
        lo = None if any(m is None for m in mins) else min(m for m in mins if m is not None)
        hi = None if any(m is None for m in maxs) else max(m for m in maxs if m is not None)
        srcs = "; ".join(b.source for b in bands if b.source)
        return lo, hi, srcs or None
    for band in bands:
        if band.age_max_exclusive is None or present_age < band.age_max_exclusive:
            return band.min_days, band.max_days_exclusive, band.source
    return None, None, None  # unreachable for validated rules: the last band has no age bound


def _age_exception_applies(pa: PresentAge, facts: DiagnosisFacts) -> bool:
    age = facts.present_age
    assert age is not None
    for exc in pa.exceptions:
        if exc.min is not None and age < exc.min:
            continue
        days = facts.duration_days
        if exc.min_duration_days is not None and days is not None and days < exc.min_duration_days:
            continue
        return True
    return False


def check_diagnosis(rule: DsmRule, facts: DiagnosisFacts) -> list[RuleViolation]:
    """Every DSM constraint of ``rule`` that ``facts`` break, in a fixed order.

    Unknown facts never violate.
    """
    out: list[RuleViolation] = []
    name = rule.name

    def add(code: str, message: str) -> None:
        out.append(RuleViolation(code=code, rule_id=rule.id, message=message))

    age = facts.present_age
    pa = rule.present_age
    if pa is not None and age is not None:
        if pa.min is not None and age < pa.min and not _age_exception_applies(pa, facts):
            extra = ""
            for exc in pa.exceptions:
                conds = []
                if exc.min is not None:
                    conds.append(f"age at least {exc.min}")
                if exc.min_duration_days is not None:
                    conds.append(f"features present for at least {exc.min_duration_days} days")
                extra += f"; below {pa.min} it needs {' and '.join(conds)}"
            add(
                DSM_AGE_BELOW_MIN,
                f"present age is below the minimum of {pa.min} years for {name} ({_cite(rule, pa.source)})"
                f"{extra}; use an age of at least {pa.min} or review the diagnosis",
            )
        if pa.max is not None and age > pa.max:
            add(
                DSM_AGE_ABOVE_MAX,
                f"present age is above the maximum of {pa.max} years for {name} ({_cite(rule, pa.source)}); "
                f"use an age of at most {pa.max} or review the diagnosis",
            )

    onset = facts.onset_age
    oa = rule.onset_age
    if oa is not None and onset is not None:
        if oa.max_exclusive is not None and onset >= oa.max_exclusive:
            add(
                DSM_ONSET_TOO_LATE,
                f"onset age is not below {_fmt(oa.max_exclusive)} years as {name} requires "
                f"({_cite(rule, oa.source)}); move the onset before age {_fmt(oa.max_exclusive)}",
            )
        if oa.min is not None and onset < oa.min:
            add(
                DSM_ONSET_TOO_EARLY,
                f"onset age is below the minimum of {_fmt(oa.min)} years for {name} "
                f"({_cite(rule, oa.source)}); move the onset to age {_fmt(oa.min)} or later",
            )
    if onset is not None and age is not None and onset >= age + 1:
        add(
            DSM_ONSET_AFTER_PRESENT_AGE,
            f"onset age of {name} lies after the present age, so the onset would be in the future; "
            "make the onset age at most the present age",
        )

    days = facts.duration_days
    if days is not None:
        lo, hi, src = _duration_bounds(rule, age)
        if lo is not None and days < lo:
            add(
                DSM_DURATION_TOO_SHORT,
                f"duration is below the minimum of {lo} days for {name} ({_cite(rule, src)}); "
                f"lengthen it to at least {lo} days or choose a diagnosis that fits the shorter course",
            )
        if hi is not None and days >= hi:
            add(
                DSM_DURATION_TOO_LONG,
                f"duration is not below {hi} days as {name} requires ({_cite(rule, src)}); "
                f"shorten it to at most {hi - 1} days or choose a diagnosis that fits the longer course",
            )

    sex = facts.sex
    if sex in ("female", "male"):
        if rule.sex is not None and sex != rule.sex:
            add(
                DSM_SEX_MISMATCH,
                f"{name} is defined for {rule.sex} patients ({_cite(rule, rule.sex_source)}); "
                f"keep the sex {rule.sex} or drop the diagnosis",
            )
        for key, need in _specifier_hits(rule, facts.specifiers):
            if sex != need:
                add(
                    DSM_SPECIFIER_SEX_MISMATCH,
                    f"the specifier '{key}' of {name} applies only to {need} patients ({rule.source}); "
                    f"keep the sex {need} or drop the specifier",
                )

    so = rule.stressor_onset
    gap_days = facts.stressor_to_onset_days
    if so is not None and gap_days is not None:
        if gap_days > so.max_days_after:
            add(
                DSM_STRESSOR_ONSET_LATE,
                f"symptoms begin more than {so.max_days_after} days after the stressor, later than {name} "
                f"allows ({_cite(rule, so.source)}); move the onset within {so.max_days_after} days of the "
                "stressor",
            )
        if so.min_days_after is not None and gap_days < so.min_days_after:
            add(
                DSM_STRESSOR_ONSET_EARLY,
                f"symptoms begin before the stressor, but {name} develops in response to it "
                f"({_cite(rule, so.source)}); place the onset on or after the stressor",
            )

    ag = rule.age_gap
    other = facts.other_party_age
    if ag is not None and age is not None and other is not None and age - other < ag.min_years:
        add(
            DSM_AGE_GAP_TOO_SMALL,
            f"{name} requires the person to be at least {ag.min_years} years older than the other party "
            f"({_cite(rule, ag.source)}); widen the age difference or review the diagnosis",
        )

    for req in rule.requires_history:
        bound = req.onset_age_max_exclusive
        what = req.rule + (f" with onset before age {_fmt(bound)}" if bound is not None else "")
        if req.rule in facts.history:
            h_onset = facts.history[req.rule]
            if bound is not None and h_onset is not None and h_onset >= bound:
                add(
                    DSM_REQUIRED_HISTORY_MISSING,
                    f"{name} requires a history of {what} ({_cite(rule, req.source)}), but the recorded "
                    f"onset is not before {_fmt(bound)}; move that onset before age {_fmt(bound)} or "
                    "review the diagnosis",
                )
        elif facts.history_complete:
            add(
                DSM_REQUIRED_HISTORY_MISSING,
                f"{name} requires a history of {what} ({_cite(rule, req.source)}), which is not on record; "
                "record that history or review the diagnosis",
            )
    return out
