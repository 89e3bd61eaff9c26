"""Extraction lexicons and a fast whole-word term matcher.

The lexicons live in ``rules/lexicon/`` (symptoms, medications, therapies, emotions, demographic cues) and
``rules/contexts/stressors.yaml`` (life-event triggers). :func:`find_terms` finds their surface forms in a
text:

* case-insensitive and whole-word; hyphens, underscores and runs of white space all count as one space, so
  ``self-harm`` matches ``self harm`` and a phrase may wrap across lines;
* items listed under ``abbreviations`` (``SI``, ``AH``, ``Li``) match case-sensitively, as written or in
  capitals;
* leftmost-longest and non-overlapping: at each position the longest phrase wins, and the scan resumes after
  it;
* an entry's ``excludes`` are look-alike phrases (``checking account``): when one covers the text, nothing is
  reported there, unless another entry lists the same phrase as a term of its own.

Phrases may use ``(a|b|)`` alternatives (an empty alternative makes the group optional) and the placeholders
``<subj>``, ``<obj>``, ``<poss>`` and ``<refl>`` (pronoun sets). The matcher works on tokens: building it is
done once per kind (cached); matching is one pass over the text with a dictionary probe per candidate length,
i.e. linear in the text.

Example::

    >>> [m.id for m in find_terms("Denies SI; hearing voices since May.", "symptom")]
    ['suicidal_ideation', 'auditory_hallucination']
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from anonpsy.caseless import Caseless
from anonpsy.drug_vocabulary import FallbackVocabulary, fallback_specs
from anonpsy.graph import Route
from anonpsy.paths import rules_dir
from anonpsy.rules.tables import parse_route
from anonpsy.yamlio import load_yaml

TermKind = Literal[
    "symptom", "medication", "therapy", "emotion", "occupation", "ethnicity", "family", "sex", "stressor",
    "mse", "mse_domain", "condition",
]
TERM_KINDS: tuple[TermKind, ...] = (
    "symptom", "medication", "therapy", "emotion", "occupation", "ethnicity", "family", "sex", "stressor",
    "mse", "mse_domain", "condition",
)

# ----------------------------------------------------------------------------------------------------
# Rule-file models


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class _FileHeader(_Strict):
    kind: str
    version: int = Field(ge=1)
    source: str | None = None
    description: str | None = None


class LexiconEntry(_Strict):
    """A headword with its surface forms."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    headword: str
    synonyms: tuple[str, ...] = ()
    abbreviations: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    source: str | None = None
    note: str | None = None

    def surfaces(self) -> tuple[str, ...]:
        return (self.headword, *self.synonyms)


SymptomDomain = Literal[
    "mood", "anxiety", "obsessive_compulsive", "trauma", "dissociative", "psychotic", "cognitive",
    "neurodevelopmental", "behavioural", "personality", "sleep", "appetite_eating", "substance", "somatic",
    "adverse_effect", "sexual", "elimination", "gender", "suicidality", "violence",
]


class SymptomEntry(LexiconEntry):
    domain: SymptomDomain
    excess_of: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    object: Literal["medication"] | None = None
    #: Surfaces that are a clinical name of their own ("altered mental status", "speech and language delay"):
    #: matched like the synonyms; a symptom named so keeps that name (:func:`symptom_name`).
    names: tuple[str, ...] = ()

    def surfaces(self) -> tuple[str, ...]:
        return (self.headword, *self.synonyms, *self.names)


class SymptomLexicon(_FileHeader):
    rules: tuple[SymptomEntry, ...]


ConditionCourse = Literal["chronic", "episodic", "event"]


class ConditionEntry(LexiconEntry):
    """A medical condition a psychiatric note names as comorbidity: ``course`` says whether having had it means
    still having it (chronic: diabetes, migraine), having bouts of it (episodic: asthma attacks) or having had
    one event (event: a stroke, a pulmonary embolism)."""

    system: str = Field(pattern=r"^[a-z][a-z_]*$")
    course: ConditionCourse
    #: Phrasings that name the condition by a finding of it ("lacunar infarct" for a stroke): matched like the
    #: synonyms, named with the headword after them ("lacunar infarct (stroke)").
    findings: tuple[str, ...] = ()
    #: Finding words that name the condition only when a brain site is written near them, in the same clause
    #: ("left frontal infarct", "ischemia in the right MCA territory", "consistent with contusion" of "the right
    #: frontal lobe"): see :func:`find_sited_conditions`. A bare "infarct" or "contusion" may be any organ's.
    sited: tuple[str, ...] = ()
    #: Synonyms no more specific than the headword ("seizure disorder" for epilepsy): a named type elsewhere in
    #: the note renames the condition over them, as over the headword.
    generic: tuple[str, ...] = ()

    def surfaces(self) -> tuple[str, ...]:
        return (self.headword, *self.synonyms, *self.findings)


class ConditionLexicon(_FileHeader):
    rules: tuple[ConditionEntry, ...]
    #: Words that place a finding in the brain (a lobe, a deep nucleus, an arterial territory) for the entries'
    #: ``sited`` words; abbreviations ("MCA") in capitals are read case-sensitively.
    brain_sites: tuple[str, ...] = ()


MedicationClass = Literal[
    "ssri", "snri", "tca", "maoi", "atypical_antidepressant", "first_generation_antipsychotic",
    "second_generation_antipsychotic", "lithium", "anticonvulsant_mood_stabilizer", "anticonvulsant",
    "benzodiazepine", "z_drug_hypnotic", "other_hypnotic", "stimulant", "non_stimulant_adhd",
    "alpha2_agonist",
    "cholinesterase_inhibitor", "nmda_antagonist", "opioid_agonist_therapy", "opioid_antagonist",
    "alcohol_use_disorder_medication", "anticholinergic", "beta_blocker", "antihistamine", "pde5_inhibitor",
    "smoking_cessation", "hormonal", "thyroid", "antidiabetic", "antihypertensive", "statin", "analgesic",
    "opioid_analgesic", "antibiotic", "corticosteroid", "vitamin_supplement", "antiemetic",
    "proton_pump_inhibitor", "anticoagulant", "other_medical", "ketamine_esketamine", "contrast_agent",
]


class MedicationEntry(_Strict):
    """One drug: generic id, class, brand names, other written forms and usual dose units."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    name: str | None = None
    class_id: MedicationClass = Field(alias="class")
    brands: tuple[str, ...] = ()
    #: Brand names that are ordinary words too ("luminal irregularities", "centrum semiovale"): matched only as
    #: written, capitalised, or in capitals.
    cased_brands: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    abbreviations: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    dose_units: tuple[str, ...]
    long_acting: tuple[str, ...] = Field(
        default=(), description="Surface forms that denote a long-acting injectable formulation."
    )
    list_aliases: tuple[str, ...] = Field(
        default=(), description="Bare forms that name the drug only as an item of a list of drugs ('potassium')."
    )
    source: str | None = None
    note: str | None = None

    @property
    def headword(self) -> str:
        return self.name or self.id.replace("_", " ")

    def surfaces(self) -> tuple[str, ...]:
        return (self.headword, *self.brands, *self.aliases, *self.long_acting)


class MedicationLexicon(_FileHeader):
    rules: tuple[MedicationEntry, ...]
    fallback_vocabulary: FallbackVocabulary | None = None


class TherapyEntry(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    headword: str
    type: Literal["psychotherapy", "procedure", "psychosocial"]
    aliases: tuple[str, ...] = ()
    abbreviations: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    source: str | None = None
    note: str | None = None

    def surfaces(self) -> tuple[str, ...]:
        return (self.headword, *self.aliases)


class TherapyLexicon(_FileHeader):
    rules: tuple[TherapyEntry, ...]


class EmotionEntry(LexiconEntry):
    family: Literal[
        "fear", "anxiety", "sadness", "anger", "shame", "guilt", "disgust", "joy", "surprise", "loneliness",
        "hopelessness", "numbness", "confusion", "relief", "hope", "love", "jealousy", "frustration",
    ]
    valence: Literal["negative", "positive", "neutral"]


class EmotionLexicon(_FileHeader):
    rules: tuple[EmotionEntry, ...]


MseField = Literal[
    "appearance", "behavior", "speech", "mood", "affect", "thought_process", "thought_content",
    "suicidal_ideation", "homicidal_ideation", "perception", "cognition", "orientation", "insight", "judgment",
]
_MSE_VALUE = r"^[a-z0-9][a-z0-9 ,;/()+'%<>=-]*$"
_IDEATION_VALUES = ("absent", "passive", "present", "plan", "intent")


class MseDomain(_Strict):
    """Words that name one part of the mental status examination ("mood", "insight", "eye contact")."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    field: MseField
    phrases: tuple[str, ...] = Field(min_length=1)
    abbreviations: tuple[str, ...] = ()
    qualify: bool = False
    note: str | None = None


class MseEntry(LexiconEntry):
    """A finding: its normalised value (the headword), the parts it may belong to, and its negated value."""

    headword: str = Field(pattern=_MSE_VALUE, max_length=60)
    fields: tuple[MseField, ...] = Field(min_length=1)
    negated: str | None = Field(default=None, pattern=_MSE_VALUE, max_length=60)
    evaluative: bool = Field(default=False, description="A rating ('fair', 'intact') a qualifying domain prefixes.")

    @model_validator(mode="after")
    def _ideation_values(self) -> MseEntry:
        ideation = {"suicidal_ideation", "homicidal_ideation"}
        if ideation & set(self.fields):
            if not set(self.fields) <= ideation:
                raise ValueError(f"{self.id}: an ideation finding belongs to ideation fields only")
            for value in (self.headword, self.negated):
                if value is not None and value not in _IDEATION_VALUES:
                    raise ValueError(f"{self.id}: ideation values are {', '.join(_IDEATION_VALUES)}")
        return self

    def surfaces(self) -> tuple[str, ...]:
        """The synonyms, and the headword too unless it is an ideation value ("plan" is not a finding)."""
        if {"suicidal_ideation", "homicidal_ideation"} & set(self.fields):
            return self.synonyms
        return (self.headword, *self.synonyms)


class MseLexicon(_FileHeader):
    domains: tuple[MseDomain, ...]
    rules: tuple[MseEntry, ...]


class OccupationEntry(LexiconEntry):
    sector: str = Field(pattern=r"^[a-z][a-z_]*$")


class EthnicityEntry(LexiconEntry):
    type: Literal["race", "ethnicity", "nationality", "indigenous", "religion"]


class FamilyEntry(LexiconEntry):
    facet: Literal["marital", "living", "parental", "household", "relationship"]


class SexCueEntry(LexiconEntry):
    sex: Literal["female", "male"]
    cue: Literal["noun", "title", "pronoun"]


class DemographicLexicon(_FileHeader):
    occupations: tuple[OccupationEntry, ...]
    ethnicities: tuple[EthnicityEntry, ...]
    family_structure: tuple[FamilyEntry, ...]
    sex_cues: tuple[SexCueEntry, ...]


AgeBandName = Literal["child", "adolescent", "adult", "older_adult"]


class AgeBand(_Strict):
    min: int = Field(ge=0, le=120)
    max: int = Field(ge=0, le=120)


class StressorAlternative(_Strict):
    """An analogous situation clause; a bare string in the file means "fits every age"."""

    text: str
    age_bands: tuple[AgeBandName, ...] | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        return {"text": value} if isinstance(value, str) else value


class StressorCategory(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    label: str
    triggers: tuple[str, ...]
    excludes: tuple[str, ...] = ()
    alternatives: tuple[StressorAlternative, ...]
    generalized: str
    source: str | None = None
    note: str | None = None

    @property
    def headword(self) -> str:
        return self.label


class StressorTaxonomy(_FileHeader):
    age_bands: dict[AgeBandName, AgeBand]
    fallback: str
    rules: tuple[StressorCategory, ...]


# ----------------------------------------------------------------------------------------------------
# Loaders (the only I/O in this module)

_LEXICON_FILES: dict[str, str] = {
    "symptoms": "lexicon/symptoms.yaml",
    "medications": "lexicon/medications.yaml",
    "therapies": "lexicon/therapies.yaml",
    "emotions": "lexicon/emotions.yaml",
    "demographic": "lexicon/demographic.yaml",
    "context": "lexicon/context.yaml",
    "stressors": "contexts/stressors.yaml",
    "mse": "lexicon/mse.yaml",
    "sections": "sections/sections.yaml",
    "conditions": "lexicon/conditions.yaml",
    "discontinuation": "treatments/discontinuation.yaml",
}


def _read_yaml(path: Path) -> dict[str, Any]:
    data = load_yaml(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"rule file {path.name} is not a mapping")
    return data


@cache
def load_doc(stem: str) -> dict[str, Any]:
    """Raw mapping of one of this module's rule files (``symptoms``, ``medications``, ..., ``stressors``)."""
    return _read_yaml(rules_dir() / _LEXICON_FILES[stem])


@lru_cache(maxsize=1)
def symptom_lexicon() -> SymptomLexicon:
    """Typed symptom lexicon (cached)."""
    return SymptomLexicon.model_validate(load_doc("symptoms"))


@lru_cache(maxsize=1)
def medication_lexicon() -> MedicationLexicon:
    """Typed medication lexicon (cached)."""
    return MedicationLexicon.model_validate(load_doc("medications"))


@lru_cache(maxsize=1)
def condition_lexicon() -> ConditionLexicon:
    """Typed medical-condition lexicon (cached)."""
    return ConditionLexicon.model_validate(load_doc("conditions"))


@lru_cache(maxsize=1)
def therapy_lexicon() -> TherapyLexicon:
    """Typed psychotherapy / procedure lexicon (cached)."""
    return TherapyLexicon.model_validate(load_doc("therapies"))


@lru_cache(maxsize=1)
def emotion_lexicon() -> EmotionLexicon:
    """Typed emotion lexicon (cached)."""
    return EmotionLexicon.model_validate(load_doc("emotions"))


@lru_cache(maxsize=1)
def demographic_lexicon() -> DemographicLexicon:
    """Typed demographic cue lexicon (cached)."""
    return DemographicLexicon.model_validate(load_doc("demographic"))


@lru_cache(maxsize=1)
def stressor_taxonomy() -> StressorTaxonomy:
    """Typed life-event / stressor taxonomy (cached)."""
    return StressorTaxonomy.model_validate(load_doc("stressors"))


@lru_cache(maxsize=1)
def mse_lexicon() -> MseLexicon:
    """Typed mental-status-examination lexicon (cached)."""
    return MseLexicon.model_validate(load_doc("mse"))


# ----------------------------------------------------------------------------------------------------
# Phrase expansion and tokenisation

_PLACEHOLDERS: dict[str, str] = {
    "subj": "(he|she|they|i)",
    "obj": "(him|her|them|me)",
    "poss": "(his|her|their|my)",
    "refl": "(himself|herself|themselves|themself|myself)",
}
_PLACEHOLDER_RE = re.compile(r"<(\w+)>")
MAX_EXPANSIONS = 2000


def expand_phrase(phrase: str) -> tuple[str, ...]:
    """All concrete phrases a pattern denotes: placeholders, then ``(a|b|)`` groups, innermost first. A
    backslash makes the next ``(``, ``)``, ``|`` or backslash literal text (``\\(-\\)``).

    >>> expand_phrase("lost <poss> (job|home)")[:2]
    ('lost his job', 'lost his home')
    >>> expand_phrase(r"\\(-\\) (SI|HI)")
    ('(-) SI', '(-) HI')
    """

    def _placeholder(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in _PLACEHOLDERS:
            raise ValueError(f"unknown placeholder <{name}>; known: {', '.join(sorted(_PLACEHOLDERS))}")
        return _PLACEHOLDERS[name]

    pattern = _PLACEHOLDER_RE.sub(_placeholder, phrase)
    forms, pos = _expand_seq(pattern, 0)
    if pos != len(pattern):
        raise ValueError("unbalanced '(' ')' or stray '|' in a lexicon phrase")
    return tuple(dict.fromkeys(" ".join(f.split()) for f in forms))


def _expand_seq(p: str, pos: int) -> tuple[list[str], int]:
    """Expand a sequence up to an unmatched ``|`` or ``)``; returns the forms and the stop position."""
    forms = [""]
    buf: list[str] = []
    while pos < len(p) and p[pos] not in "|)":
        ch = p[pos]
        if ch == "\\" and pos + 1 < len(p) and p[pos + 1] in "()|\\":
            buf.append(p[pos + 1])  # an escaped bracket or bar is literal text
            pos += 2
        elif ch == "(":
            alts: list[str] = []
            pos += 1
            while True:
                sub, pos = _expand_seq(p, pos)
                alts.extend(sub)
                if pos >= len(p):
                    raise ValueError("unbalanced '(' in a lexicon phrase")
                if p[pos] == ")":
                    pos += 1
                    break
                pos += 1  # '|'
            lit = "".join(buf)
            buf = []
            forms = [f + lit + a for f in forms for a in alts]
            if len(forms) > MAX_EXPANSIONS:
                raise ValueError(f"a lexicon phrase expands to more than {MAX_EXPANSIONS} forms; split it")
        else:
            buf.append(ch)
            pos += 1
    lit = "".join(buf)
    return [f + lit for f in forms], pos


_TOKEN_RE = re.compile(r"[^\W_]+|[^\w\s-]")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})


@dataclass(frozen=True, slots=True)
class Token:
    start: int
    end: int
    text: str
    key: str


def tokenize(text: str) -> list[Token]:
    """Word and punctuation tokens with character offsets; hyphens, underscores and white space separate."""
    return list(_tokens(text))


@lru_cache(maxsize=4096)
def _tokens(text: str) -> tuple[Token, ...]:
    return tuple(
        Token(m.start(), m.end(), m.group(), m.group().translate(_APOSTROPHES).casefold())
        for m in _TOKEN_RE.finditer(text)
    )


def token_spans_keys(text: str) -> tuple[Sequence[tuple[int, int]], Sequence[str]]:
    """The spans and keys of the tokens of :func:`tokenize`, without a :class:`Token` per word: the scan every
    term index shares (usually already made for the sentence). The scan reads the text with its apostrophes
    made plain; they give the same tokens except the modifier letter apostrophe, a word character the scan
    turns into punctuation, so a text holding one is tokenised as :func:`tokenize` does."""
    return token_spans(text), token_keys(text)


def token_keys(text: str) -> Sequence[str]:
    """The keys of :func:`token_spans_keys` alone (a scan that makes no span: most texts need none)."""
    if "\u02bc" in text:
        return [t.key for t in _tokens(text)]
    return _scan(text)[1]


def token_spans(text: str) -> Sequence[tuple[int, int]]:
    """The spans of :func:`token_spans_keys` alone."""
    if "\u02bc" in text:
        return [(t.start, t.end) for t in _tokens(text)]
    return _spans(text)


_FIRST_WORD = re.compile(r"[^\W_]+")


def first_words(phrases: Iterable[str]) -> frozenset[str] | None:
    """The first word of every phrase of a pattern ``(?<![\\w-])(phrase|...)(?![\\w-])`` (lower case, written with
    its letters and digits): what a gate of :func:`may_open_with` reads. None when a phrase does not open with
    an ASCII letter or digit (no such word to test)."""
    out: set[str] = set()
    for phrase in phrases:
        m = _FIRST_WORD.match(phrase)
        if m is None or not m.group().isascii() or m.group() != m.group().lower():
            return None
        out.add(m.group())
    return frozenset(out)


def may_open_with(text: str, words: frozenset[str] | None) -> bool:
    """False only when ``text`` cannot match a pattern of phrases whose first words (:func:`first_words`) are
    ``words``, searched case-insensitively.

    A match starts where no word character or hyphen is before it, with the phrase's first word followed by a
    separator, another character that is no letter or digit, or the end of the match; so in ASCII text the run
    of letters and digits there is one of the tokens of :func:`token_keys`, equal to that first word (the tokens
    are remembered per sentence: every term index reads them). Text outside ASCII is always searched (a
    case-insensitive pattern matches some letters outside ASCII)."""
    return words is None or not text.isascii() or not words.isdisjoint(token_keys(text))


def _keys(phrase: str) -> tuple[str, ...]:
    return tuple(t.casefold() for t in _TOKEN_RE.findall(phrase.translate(_APOSTROPHES)))


def _exact(phrase: str) -> tuple[str, ...]:
    return tuple(_TOKEN_RE.findall(phrase.translate(_APOSTROPHES)))


# ----------------------------------------------------------------------------------------------------
# Matcher


@dataclass(frozen=True, slots=True)
class TermMatch:
    """One lexicon hit: ``text[start:end] == surface``."""

    start: int
    end: int
    id: str
    headword: str
    surface: str


@dataclass(frozen=True, slots=True)
class _Target:
    id: str | None  # None = blocker (an ``excludes`` phrase)
    headword: str


_MEMO_SIZE = 4096
#: The lengths tried where a token begins a phrase of one token only.
_ONE = (1,)


@lru_cache(maxsize=_MEMO_SIZE)
def _scan(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The tokens of ``text`` in their exact and case-folded forms (shared by every index that reads it; their
    spans, which only a match needs, are :func:`_spans`)."""
    exact = tuple(_TOKEN_RE.findall(text.translate(_APOSTROPHES)))  # no match object per token
    return exact, tuple(map(str.casefold, exact))


@lru_cache(maxsize=_MEMO_SIZE)
def _spans(text: str) -> tuple[tuple[int, int], ...]:
    """The spans of the tokens of :func:`_scan`."""
    norm = text.translate(_APOSTROPHES)  # one-to-one, so offsets are unchanged
    return tuple(map(re.Match.span, _TOKEN_RE.finditer(norm)))


@dataclass
class TermIndex:
    """Compiled phrase dictionary of one kind. Build with :func:`build_index`."""

    ci: dict[tuple[str, ...], _Target] = field(default_factory=dict)
    cs: dict[tuple[str, ...], _Target] = field(default_factory=dict)
    lengths: dict[str, tuple[int, ...]] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)
    #: The second tokens (case-folded) of the phrases of two tokens or more, by their first; empty: not known (no
    #: phrase is then passed over).
    second: dict[str, frozenset[str]] = field(default_factory=dict)
    #: The lengths (longest first) of the phrases that begin with these two tokens (case-folded), 1 among them
    #: when the first token is a phrase of its own; empty: not known (:attr:`lengths` and :attr:`second` are read).
    by_pair: dict[tuple[str, str], tuple[int, ...]] = field(default_factory=dict)
    #: The first tokens (case-folded) that are a phrase of their own (read with :attr:`by_pair`).
    single: frozenset[str] = frozenset()
    #: Matches of the texts read last (a sentence is looked up again by every step that reads it).
    _memo: dict[str, tuple[TermMatch, ...]] = field(default_factory=dict, repr=False, compare=False)

    def find(self, text: str) -> list[TermMatch]:
        """Leftmost-longest, non-overlapping matches in ``text``."""
        hit = self._memo.get(text)
        if hit is None:
            if len(self._memo) >= _MEMO_SIZE:
                self._memo.clear()
            hit = self._memo[text] = tuple(self._find(text))
        return list(hit)

    def _find(self, text: str) -> list[TermMatch]:
        exact, keys = _scan(text)
        n = len(keys)
        spans: Sequence[tuple[int, int]] = ()  # read when the first match is found
        lengths, cs, ci, by_pair, single = self.lengths, self.cs, self.ci, self.by_pair, self.single
        second = {} if by_pair else self.second  # by_pair has already passed over what it would
        out: list[TermMatch] = []
        i = 0  # the first token a match may start at (after the previous match)
        # only a token that begins some phrase can start a match (found by builtins, no Python step per token)
        for at in itertools.compress(range(n), map(lengths.__contains__, keys)):
            if at < i:
                continue
            if by_pair:
                # only the lengths of the phrases that begin with this token and the next can match here
                tried = by_pair.get((keys[at], keys[at + 1])) if at + 1 < n else None
                if tried is None:
                    if keys[at] not in single:
                        continue
                    tried = _ONE
            else:
                tried = lengths[keys[at]]
            for length in tried:
                end_tok = at + length
                if end_tok > n:
                    continue
                if length > 1 and second and keys[at + 1] not in second.get(keys[at], ()):
                    continue  # no phrase begins with these two tokens
                tgt = cs.get(exact[at:end_tok]) if cs else None
                if tgt is None:
                    tgt = ci.get(keys[at:end_tok])
                if tgt is not None:
                    if tgt.id is not None:
                        spans = spans or _spans(text)
                        start, end = spans[at][0], spans[end_tok - 1][1]
                        out.append(TermMatch(start, end, tgt.id, tgt.headword, text[start:end]))
                    i = end_tok
                    break
        return out


@dataclass(frozen=True)
class IndexSpec:
    """What one entry contributes to an index."""

    id: str
    headword: str
    surfaces: tuple[str, ...]
    abbreviations: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()


@lru_cache(maxsize=1 << 16)
def _surface_keys(surface: str) -> tuple[tuple[str, ...], ...]:
    """The case-folded token keys of every non-empty form ``surface`` expands to, in order. The trigger index of
    each kind of concept repeats most phrases of the others, so one expansion serves them all."""
    return tuple(key for key in map(_keys, expand_phrase(surface)) if key)


def build_index(specs: Iterable[IndexSpec]) -> TermIndex:
    """Compile entries into a :class:`TermIndex`.

    Surface clashes between entries are recorded in ``conflicts`` (the first definition wins); an ``excludes``
    phrase never overrides a real term.
    """
    idx = TermIndex()
    owner_ci: dict[tuple[str, ...], str] = {}
    blockers: dict[tuple[str, ...], _Target] = {}
    for spec in specs:
        target = _Target(spec.id, spec.headword)
        for surface in spec.surfaces:
            for key in _surface_keys(surface):
                prev = owner_ci.get(key)
                if prev is not None and prev != spec.id:
                    idx.conflicts.append(
                        f"surface {' '.join(key)!r} of {spec.id!r} already belongs to {prev!r}"
                    )
                    continue
                owner_ci[key] = spec.id
                idx.ci[key] = target
        for abbr in spec.abbreviations:
            for form in expand_phrase(abbr):
                exact = _exact(form)
                if not exact:
                    continue
                for variant in {exact, tuple(t.upper() for t in exact)}:
                    prev_t = idx.cs.get(variant)
                    if prev_t is not None and prev_t.id != spec.id:
                        idx.conflicts.append(
                            f"abbreviation {' '.join(variant)!r} of {spec.id!r} already belongs to "
                            f"{prev_t.id!r}"
                        )
                        continue
                    idx.cs[variant] = target
        for excl in spec.excludes:
            for form in expand_phrase(excl):
                key = _keys(form)
                if key:
                    blockers.setdefault(key, _Target(None, ""))
    for key, blocker in blockers.items():
        idx.ci.setdefault(key, blocker)
    lengths: dict[str, set[int]] = {}
    for key in itertools.chain(idx.ci, idx.cs):
        lengths.setdefault(key[0].casefold(), set()).add(len(key))
    idx.lengths = {k: tuple(sorted(v, reverse=True)) for k, v in lengths.items()}
    second: dict[str, set[str]] = {}
    for key in itertools.chain(idx.ci, idx.cs):
        if len(key) > 1:
            second.setdefault(key[0].casefold(), set()).add(key[1].casefold())
    idx.second = {k: frozenset(v) for k, v in second.items()}
    by_pair: dict[tuple[str, str], set[int]] = {}
    for key in itertools.chain(idx.ci, idx.cs):
        if len(key) > 1:
            first = key[0].casefold()
            by_pair.setdefault((first, key[1].casefold()), {1} if 1 in idx.lengths[first] else set()).add(len(key))
    idx.by_pair = {k: tuple(sorted(v, reverse=True)) for k, v in by_pair.items()}
    idx.single = frozenset(k for k, v in idx.lengths.items() if 1 in v)
    return idx


# ----------------------------------------------------------------------------------------------------
# Kind -> index


def specs_for(kind: TermKind, doc: dict[str, Any], with_fallback: bool = True) -> list[IndexSpec]:
    """Index entries of ``kind`` from a raw rule-file mapping (validated with the kind's model). Medications take
    the names of the lexicon's ``fallback_vocabulary`` after its own (see :mod:`anonpsy.drug_vocabulary`) unless
    ``with_fallback`` is false."""
    if kind == "symptom":
        return [_lex_spec(e) for e in SymptomLexicon.model_validate(doc).rules]
    if kind == "emotion":
        return [_lex_spec(e) for e in EmotionLexicon.model_validate(doc).rules]
    if kind == "medication":
        lex = MedicationLexicon.model_validate(doc)
        curated = [IndexSpec(e.id, e.headword, e.surfaces(), (*e.abbreviations, *e.cased_brands), e.excludes)
                   for e in lex.rules]
        return curated if not with_fallback else [*curated, *medication_fallback_specs(lex, curated)]
    if kind == "therapy":
        return [
            IndexSpec(e.id, e.headword, e.surfaces(), e.abbreviations, e.excludes)
            for e in TherapyLexicon.model_validate(doc).rules
        ]
    if kind == "mse":
        return [_lex_spec(e) for e in MseLexicon.model_validate(doc).rules]
    if kind == "condition":
        return [_lex_spec(e) for e in ConditionLexicon.model_validate(doc).rules]
    if kind == "mse_domain":
        return [IndexSpec(d.id, d.field, d.phrases, d.abbreviations) for d in MseLexicon.model_validate(doc).domains]
    if kind == "stressor":
        return [
            IndexSpec(e.id, e.label, e.triggers, (), e.excludes)
            for e in StressorTaxonomy.model_validate(doc).rules
        ]
    demo = DemographicLexicon.model_validate(doc)
    section: Sequence[LexiconEntry] = {
        "occupation": demo.occupations,
        "ethnicity": demo.ethnicities,
        "family": demo.family_structure,
        "sex": demo.sex_cues,
    }[kind]
    return [_lex_spec(e) for e in section]


def _lex_spec(e: LexiconEntry) -> IndexSpec:
    return IndexSpec(e.id, e.headword, e.surfaces(), e.abbreviations, e.excludes)


KIND_FILE: dict[TermKind, str] = {
    "symptom": "symptoms",
    "medication": "medications",
    "therapy": "therapies",
    "emotion": "emotions",
    "occupation": "demographic",
    "ethnicity": "demographic",
    "family": "demographic",
    "sex": "demographic",
    "stressor": "stressors",
    "mse": "mse",
    "mse_domain": "mse",
    "condition": "conditions",
}


@cache
def term_index(kind: TermKind) -> TermIndex:
    """The compiled index of one kind from the project's rules (cached). Medications also take the
    general-medicine drugs of ``rules/twin/medications.yaml`` (see :func:`general_medicine_specs`)."""
    if kind not in KIND_FILE:
        raise ValueError(f"unknown term kind {kind!r}; known: {', '.join(TERM_KINDS)}")
    doc = load_doc(KIND_FILE[kind])
    if kind != "medication":
        return build_index(specs_for(kind, doc))
    lex = MedicationLexicon.model_validate(doc)
    exclude = frozenset(e.lower() for e in lex.fallback_vocabulary.exclude) if lex.fallback_vocabulary else frozenset()
    specs = [*specs_for(kind, doc, with_fallback=False), *general_medicine_specs(exclude)]
    return build_index([*specs, *medication_fallback_specs(lex, specs)])


def medication_fallback_specs(lex: MedicationLexicon, before: Sequence[IndexSpec]) -> list[IndexSpec]:
    """Index entries for the names of the lexicon's fallback vocabulary that none of ``before`` owns (a curated
    name keeps its entry, and no surface clash is recorded): one entry per written form, under the substance's
    id, which is a curated entry's id where the curated lexicon lists the substance."""
    if lex.fallback_vocabulary is None:
        return []
    taken = [_keys(f) for s in before for surface in (*s.surfaces, *s.excludes) for f in expand_phrase(surface)]
    owners: dict[tuple[str, ...], tuple[str, str]] = {}
    for s in before:
        for surface in s.surfaces:
            for f in expand_phrase(surface):
                owners.setdefault(_keys(f), (s.id, s.headword))
    out: list[IndexSpec] = []
    for i, head, form in fallback_specs(lex.fallback_vocabulary, taken, _keys):
        owner = _contained_owner(_keys(form), _keys(head), owners)
        out.append(IndexSpec(*(owner or (i, head)), (form,)))
    return out


#: Words that join the parts of a combination product ("ampicillin and sulbactam").
_COMBINATION_JOINS = frozenset({"and", "with", "plus"})


def _contained_owner(key: tuple[str, ...], substance: tuple[str, ...],
                     owners: dict[tuple[str, ...], tuple[str, str]]) -> tuple[str, str] | None:
    """The (id, headword) of the listed (curated or general-medicine) drug of which the dictionary form ``key``
    is a formulation ("lidocaine patch", "clindamycin vaginal", "dexamethasone eye drops"), or None: the form
    holds the listed drug's name as a run of its words, the dictionary's substance name begins with the listed
    headword, and the form joins no second drug. The listed entry and its name then win over the longer form.
    A different substance that only contains the name ("esketamine", "iron sucrose") or a combination product
    ("amiloride and hydrochlorothiazide") keeps its own substance."""
    if _COMBINATION_JOINS.intersection(key):
        return None
    runs = [(a, b) for a in range(len(key)) for b in range(a + 1, len(key) + 1)
            if (a, b) != (0, len(key)) and key[a:b] in owners]
    # a listed name inside a longer listed name ("insulin" in "insulin lispro") is that longer drug's
    found = {owners[key[a:b]] for a, b in runs
             if not any(c <= a and b <= d and (c, d) != (a, b) for c, d in runs)}
    if len(found) != 1:
        return None
    owner = next(iter(found))
    listed = _keys(owner[1])
    return owner if substance[:len(listed)] == listed else None


#: Shortest written form of a general-medicine drug read in narrative text; shorter brands ("Azo") are left to
#: the structured tables they were written for.
_GENERAL_MIN_CHARS = 4
#: Shortest abbreviation of a general-medicine drug read in narrative text, case-sensitively ("TPA", "D5W",
#: "FFP"); two-letter ones ("LR", "Td") are too often something else.
_GENERAL_MIN_ABBREVIATION = 3


def general_medicine_specs(exclude: frozenset[str] = frozenset()) -> list[IndexSpec]:
    """Index entries for the drugs of the RecordTwin vocabulary (``rules/twin/medications.yaml``), which lists
    general-medicine drugs beyond the medication lexicon and never repeats its names: a home or discharge
    medication list names them ("Feldene", "Timoptic", "lidocaine patch", "TPA to the shunt", "D5W at 150 mL an
    hour") and they must not be dropped. Abbreviations of three characters or more match case-sensitively. They
    have no entry of the medication lexicon, so :func:`parse_medication` gives them the class
    ``other_medical`` and their generic name. A drug whose name is in ``exclude`` (the fallback vocabulary's
    exclusions: a contrast agent given for a scan is no treatment) is left out with all its forms."""
    path = rules_dir() / "twin" / "medications.yaml"
    if not path.is_file():
        return []
    out: list[IndexSpec] = []
    for rule in _read_yaml(path).get("rules") or []:
        head = str(rule.get("name") or rule["id"]).replace("_", " ")
        if head.lower() in exclude or str(rule["id"]).replace("_", " ").lower() in exclude:
            continue
        forms = [f for f in (head, *(rule.get("brands") or ()), *(rule.get("aliases") or ()))
                 if len(str(f)) >= _GENERAL_MIN_CHARS]
        abbreviations = tuple(str(a) for a in rule.get("abbreviations") or ()
                              if len(str(a)) >= _GENERAL_MIN_ABBREVIATION)
        if forms:
            out.append(IndexSpec(str(rule["id"]), head, tuple(str(f) for f in forms), abbreviations, ()))
    return out


#: What joins two items of a list: a comma, a semicolon, "and", "or" (", and").
_LIST_JOIN = re.compile(r"\s*(?:[,;]\s*(?:(?:and|or)\s+)?|\s(?:and|or)\s+)\s*", re.I)


#: The list-alias tables of the entry lists read last, by identity (the medication lexicon's list, built once).
_ALIAS_TABLES: dict[int, tuple[object, dict[str, Any], Caseless | None]] = {}


def _list_alias_table(entries: Iterable[MedicationEntry]) -> tuple[dict[str, Any], Caseless | None]:
    """The bare forms of ``entries`` (lower case) with their entries, and one pattern matching any of them (None
    when there is none); a list or tuple of entries is compiled once, other iterables every time."""
    keep = isinstance(entries, (list, tuple))
    if keep:
        hit = _ALIAS_TABLES.get(id(entries))
        if hit is not None and hit[0] is entries:
            return hit[1], hit[2]
    forms = {a.lower(): e for e in entries for a in e.list_aliases}
    rx = None
    if forms:
        alts = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
        rx = Caseless(re.compile(rf"(?<![\w-])(?:{alts})(?![\w-])", re.I))
    if keep:
        if len(_ALIAS_TABLES) >= 8:
            _ALIAS_TABLES.clear()
        _ALIAS_TABLES[id(entries)] = (entries, forms, rx)
    return forms, rx


def _dosed(text: str, end: int, units: Sequence[str]) -> bool:
    """Does a dose in one of the drug's own ``units`` follow the bare name ending at ``end`` ("potassium 10 mEq
    daily")? A laboratory value has no unit or a concentration ("potassium 4.1", "potassium 3.5 mEq/L")."""
    if not units:
        return False
    alts = "|".join(re.escape(u) for u in units)
    return re.match(rf"\s*\d+(?:[.,]\d+)?\s*(?:{alts})(?![\w/])(?!\s*/\s*[dm]?L\b)", text[end:end + 30],
                    re.I) is not None


def list_alias_matches(text: str, matches: Sequence[TermMatch],
                       entries: Iterable[MedicationEntry]) -> list[TermMatch]:
    """``matches`` (drugs found in ``text``) with the entries' ``list_aliases`` that stand as an item of a list of
    drugs: right after or right before another drug of ``matches``, joined by a comma, a semicolon, "and" or
    "or" ("It includes potassium, Pravachol, Prevacid"). Outside such a list the bare word is mostly a laboratory
    value ("potassium 3.2", "sodium, potassium and chloride were normal") and is not read as a drug."""
    forms, rx = _list_alias_table(entries)
    if rx is None:
        return list(matches)
    found = list(matches)
    for hit in rx.finditer(text):
        a, b = hit.span()
        if any(m.start < b and a < m.end for m in found):
            continue
        e = forms[hit.group(0).lower()]
        if any(_LIST_JOIN.fullmatch(text, b, m.start) for m in matches if m.start >= b) \
                or any(_LIST_JOIN.fullmatch(text, m.end, a) for m in matches if m.end <= a) \
                or _dosed(text, b, e.dose_units):
            found.append(TermMatch(a, b, e.id, e.headword, hit.group(0)))
    return sorted(found, key=lambda m: m.start)


@lru_cache(maxsize=1)
def _symptom_names() -> dict[tuple[str, tuple[str, ...]], str]:
    return {(e.id, _keys(n)): n for e in symptom_lexicon().rules for n in e.names}


def symptom_name(m: TermMatch) -> str | None:
    """The clinical name a symptom mention is written by, when its surface is one of its entry's ``names``.

    >>> symptom_name(find_terms("Altered mental status.", "symptom")[0])
    'altered mental status'
    >>> symptom_name(find_terms("He was confused.", "symptom")[0]) is None
    True
    """
    return _symptom_names().get((m.id, _keys(m.surface))) if m.surface else None


def find_terms(text: str, kind: TermKind) -> list[TermMatch]:
    """Lexicon terms of ``kind`` in ``text``: case-insensitive, whole-word, leftmost-longest, non-overlapping.
    Conditions also take the sited finding words a brain site places (:func:`find_sited_conditions`).

    >>> [(m.id, m.surface) for m in find_terms("a retired school teacher", "occupation")]
    [('occ.retired', 'retired'), ('occ.teacher', 'school teacher')]
    """
    found = term_index(kind).find(text)
    if kind == "condition":
        return find_sited_conditions(text, found, sited_index())
    return found


# ----------------------------------------------------------------------------------------------------
# Sited condition words


#: How many words a brain site may stand from a sited finding word, before or after it.
SITE_REACH = 8
#: What ends a clause for a site: punctuation and the number of a list item ("2) abnormal signal ...").
_SITE_BREAK = re.compile(r"[.;:,!?]|\b\d{1,2}\)")


@dataclass(frozen=True)
class SitedIndex:
    """The sited finding words of the condition lexicon and the brain sites that place them."""

    words: TermIndex
    sites: TermIndex

    @classmethod
    def from_lexicon(cls, lex: ConditionLexicon) -> SitedIndex:
        words = build_index([IndexSpec(e.id, e.headword, e.sited) for e in lex.rules if e.sited])
        ci = tuple(x for x in lex.brain_sites if not x.isupper())
        cs = tuple(x for x in lex.brain_sites if x.isupper())
        return cls(words, build_index([IndexSpec("brain_site", "brain", ci, cs)]))


@lru_cache(maxsize=1)
def sited_index() -> SitedIndex:
    """The project's sited condition words (cached)."""
    return SitedIndex.from_lexicon(condition_lexicon())


@lru_cache(maxsize=1)
def _sited_keys() -> dict[str, frozenset[tuple[str, ...]]]:
    return {e.id: frozenset(k for p in e.sited for k in _surface_keys(p)) for e in condition_lexicon().rules
            if e.sited}


def is_sited(m: TermMatch) -> bool:
    """Is the condition hit ``m`` one of its entry's sited finding words (a site placed it), not a name of it?"""
    keys = _sited_keys().get(m.id)
    return keys is not None and _keys(m.surface) in keys


def sited_entries(m: TermMatch) -> tuple[str, ...]:
    """The other entries whose sited finding word the hit ``m`` is ("aneurysm" of the generic entry is also the
    sited word of the intracranial aneurysm): where the note has named that entry, the word refers back to it."""
    key = _keys(m.surface)
    return tuple(cid for cid, keys in _sited_keys().items() if cid != m.id and key in keys)


def _words_between(text: str, a: int, b: int) -> int:
    return len(_TOKEN_RE.findall(text[a:b]))


def find_sited_conditions(text: str, found: list[TermMatch], index: SitedIndex) -> list[TermMatch]:
    """``found`` (the lexicon's own condition hits) with the sited finding words of ``text`` that a brain site
    places: a site within :data:`SITE_REACH` words before or after the word, in the same clause ("edema of the left
    caudate nucleus suggesting an acute ischemic event", "ischemia in the right MCA territory"). A word inside a
    longer condition name ("lacunar infarct", "subarachnoid hemorrhage") is that name's.

    >>> [(m.id, m.surface) for m in find_sited_conditions("A left frontal infarct.", [], sited_index())]
    [('stroke', 'infarct')]
    >>> find_sited_conditions("A renal infarct.", [], sited_index())
    []

    A sited word a generic entry also names is the sited entry's where a site places it:

    >>> [m.id for m in find_terms("A left ICA bifurcation aneurysm.", "condition")]
    ['cerebral_aneurysm']
    >>> [m.id for m in find_terms("A popliteal aneurysm.", "condition")]
    ['aneurysm']
    """
    words = index.words.find(text)
    if not words:
        return found
    sites = index.sites.find(text)
    if not sites:
        return found
    out = list(found)
    changed = False
    for w in words:
        same = next((m for m in out if m.start == w.start and m.end == w.end and m.id != w.id), None)
        if same is None and any(m.start < w.end and w.start < m.end for m in out):
            continue
        for site in sites:
            if site.start < w.end and w.start < site.end:
                continue
            a, b = (site.end, w.start) if site.end <= w.start else (w.end, site.start)
            if _SITE_BREAK.search(text, a, b) is None and _words_between(text, a, b) <= SITE_REACH:
                # the same word of a generic entry ("aneurysm") is the sited entry's where a site places it ("a
                # left ICA bifurcation aneurysm" is an intracranial aneurysm)
                if same is not None:
                    out.remove(same)
                out.append(w)
                changed = True
                break
    return sorted(out, key=lambda m: m.start) if changed else found


# ----------------------------------------------------------------------------------------------------
# Medication mentions


@dataclass(frozen=True, slots=True)
class MedicationMention:
    """A medication with the dose, route and frequency written next to it."""

    name: str
    class_id: str
    dose: str | None
    route: Route | None
    frequency: str | None


_UNITS = (
    r"mg/kg/day|mg/kg|mg/day|mg/d|mg/24\s?h(?:rs?|ours?)?|mg/h(?:r|our)?|mcg/h(?:r|our)?|mcg/day|"
    r"mg|mcg|µg|ug|micrograms?|milligrams?|grams?|g|ml|mL|cc|units?|IU|iu|mEq|meq|mmol|%|puffs?|tabs?|tablets?|"
    r"capsules?|caps?|patch(?:es)?|drops?|sprays?"
)
_NUM = r"\d+(?:[.,]\d+)?"
_DOSE_RE = re.compile(
    rf"(?<![\w.])(?P<num>{_NUM}(?:\s*(?:-|–|to|/)\s*{_NUM})?)\s*(?P<unit>{_UNITS})(?![\w])", re.IGNORECASE
)
_DOSE_BEFORE_RE = re.compile(
    rf"(?<![\w.])(?P<num>{_NUM}(?:\s*(?:-|–|to)\s*{_NUM})?)\s*(?P<unit>{_UNITS})\s+(?:of\s+)?$", re.IGNORECASE
)

#: "of" after a dose: the dose of the drug named next ("7 mg of Versed").
_OF_AFTER = re.compile(r"\s+of\b(?!\s+(?:which|whom|it|them|this|that|these|those)\b)", re.IGNORECASE)

_LAI_FORM = re.compile(
    r"\b(?:decanoate|enanthate|palmitate|pamoate|lauroxil|consta|sustenna|trinza|hafyera|maintena|aristada|"
    r"relprevv|perseris|uzedy|depot|LAI|long[- ]acting injectable)\b",
    re.IGNORECASE,
)
_LAI_INTERVAL = re.compile(
    r"\b(?:every|q)\s*(?:2|3|4|6|two|three|four|six|other)?\s*(?:-|\s)?(?:weeks?|wks?|months?|mo)\b|\bmonthly\b",
    re.IGNORECASE,
)
_FREQ_RE = re.compile(
    r"(?<![\w])(?P<f>"
    r"(?:once|twice|three times|four times|1x|2x|3x|4x|one time|two times)\s*(?:a|per|each|every)?\s*"
    r"(?:day|daily|week|weekly|month|night|morning|evening)"
    r"|(?:every|each|q)\s*(?:other\s+)?(?:\d+\s*(?:-\s*\d+\s*)?|one|two|three|four|six|eight|twelve)?\s*"
    r"(?:hours?|hrs?|h|days?|d|weeks?|wks?|months?|mos?|nights?|mornings?|evenings?|day|night|morning|evening)"
    r"|(?:once\s+)?daily|nightly|weekly|monthly|fortnightly|every\s+(?:night|morning|evening|day)"
    r"|at\s+(?:bed\s*time|night|noon)|before\s+bed(?:time)?|in\s+the\s+(?:morning|evening|afternoon)"
    r"|with\s+(?:meals|breakfast|dinner)|before\s+meals"
    r"|q\.?\s?[dh]\.?s?\.?|b\.?i\.?d\.?|t\.?i\.?d\.?|q\.?i\.?d\.?|q\.?a\.?m\.?|q\.?p\.?m\.?|q\.?h\.?s\.?|h\.?s\.?"
    r"|qam|qpm|qhs|qod|qd|qday|qweek|qmonth|stat|once"
    r")(?P<prn>\s*(?:,\s*)?(?:prn|p\.r\.n\.|as needed|as required)(?:\s+for\s+\w+)?)?(?![\w])"
    r"|(?<![\w])(?P<prnonly>prn|p\.r\.n\.|as needed|as required)(?![\w])",
    re.IGNORECASE,
)
_WINDOW = 90
_CLAUSE_END = re.compile(
    r";|\.(?=\s+[A-Z])|\.\s*$|\n\s*\n|\band\s+(?:then\s+)?(?:started|switched|changed)\b"
)


#: What makes a count the quantity dispensed, not a dose ("#30 tablets", "dispense 30 tablets", "Qty: 60"): the
#: dose is the next amount written, if any.
_DISPENSED = re.compile(r"(?:#|\b(?:dispensed?|disp|qty|quantity|supply\s+of|total\s+of)\b\.?\s*:?)\s*$", re.I)


def _normalize_dose(m: re.Match[str]) -> str:
    num = re.sub(
        r"\s*(-|–|to|/)\s*", lambda x: "-" if x.group(1) in "-–" else f" {x.group(1)} ", m.group("num")
    )
    unit = m.group("unit")
    if unit.lower() in {"ml", "meq", "iu"}:
        unit = {"ml": "mL", "meq": "mEq", "iu": "IU"}[unit.lower()]
    return f"{num}{unit}" if unit == "%" else f"{num} {unit}"


def parse_medication(sentence: str, match: TermMatch) -> MedicationMention:
    """Dose, route and frequency written around a medication match in ``sentence``.

    Looks at the rest of the clause after the name (up to the next medication, a full stop or semicolon, or
    about 90 characters) and at a dose written just before it ("100 mg of sertraline"). The route comes from
    :func:`anonpsy.rules.tables.parse_route`; an intramuscular depot formulation (decanoate, palmitate, a
    long-acting brand, or IM every few weeks) is read as ``long_acting_injectable``.

    >>> s = "haloperidol decanoate 50 mg IM every 4 weeks"
    >>> parse_medication(s, find_terms(s, "medication")[0])
    MedicationMention(name='haloperidol', class_id='first_generation_antipsychotic', dose='50 mg', \
route=<Route.long_acting_injectable: 'long_acting_injectable'>, frequency='every 4 weeks')
    """
    return _parse_medication(sentence, match)


@lru_cache(maxsize=_MEMO_SIZE)
def _parse_medication(sentence: str, match: TermMatch) -> MedicationMention:
    # pure in its arguments, and asked again for every text that holds the sentence (the round trip reads
    # the generated sentences again after each repair, and a probe's sentence again in the text)
    entry = medication_by_id().get(match.id)
    class_id = entry.class_id if entry is not None else "other_medical"
    name = entry.headword if entry is not None else match.headword
    tail = sentence[match.end: match.end + _WINDOW]
    for other in find_terms(tail, "medication"):
        tail = tail[: other.start]
        break
    end = _CLAUSE_END.search(tail)
    if end is not None:
        tail = tail[: end.start()]
    head = sentence[max(0, match.start - 40): match.start]

    # "7 mg of Versed and 50 micrograms of fentanyl": a dose written "X of" before the name is this drug's, and
    # a dose after the name that is followed by "of" is the next drug's
    before = _DOSE_BEFORE_RE.search(head)
    dose_m = next((d for d in _DOSE_RE.finditer(tail)
                   if not _DISPENSED.search(tail, 0, d.start()) and not _OF_AFTER.match(tail, d.end())), None)
    if before is not None and _OF_AFTER.search(before.group(0)):
        dose: str | None = _normalize_dose(before)
    else:
        dose = _normalize_dose(dose_m) if dose_m else None
        if dose is None and before is not None:
            dose = _normalize_dose(before)

    route = parse_route(tail)
    if route is None:
        lead = re.search(r"(\S+)\s+$", head)
        route = parse_route(lead.group(1)) if lead else None
    if route in (Route.unknown, Route.not_applicable):
        route = None
    written = match.surface + " " + tail
    depot_brand = entry is not None and any(_keys(s) == _keys(match.surface) for s in entry.long_acting)
    depot_form = _LAI_FORM.search(written) is not None
    depot_im = route is Route.intramuscular and _LAI_INTERVAL.search(tail) is not None
    if depot_brand or (route in (None, Route.intramuscular) and depot_form) or depot_im:
        route = Route.long_acting_injectable

    freq_m = _FREQ_RE.search(tail)
    frequency = " ".join(freq_m.group(0).split()) if freq_m else None
    return MedicationMention(name=name, class_id=class_id, dose=dose, route=route, frequency=frequency)


@lru_cache(maxsize=1)
def medication_by_id() -> dict[str, MedicationEntry]:
    """Medication entries keyed by id (cached)."""
    return {e.id: e for e in medication_lexicon().rules}


# ----------------------------------------------------------------------------------------------------
# Stressor alternatives


def age_band_of(age: int, bands: dict[AgeBandName, AgeBand] | None = None) -> AgeBandName | None:
    """Name of the age band containing ``age`` (inclusive bounds), or None."""
    table = bands if bands is not None else stressor_taxonomy().age_bands
    for name, band in table.items():
        if band.min <= age <= band.max:
            return name
    return None


def stressor_alternatives(
    category: str, age: int | None, taxonomy: StressorTaxonomy | None = None
) -> tuple[str, ...]:
    """Analogous, non-identifying situation clauses for a stressor category, filtered to the age band.

    An alternative without ``age_bands`` fits every age; with an unknown age only those fit.
    """
    tax = taxonomy if taxonomy is not None else stressor_taxonomy()
    cat = next((c for c in tax.rules if c.id == category), None)
    if cat is None:
        return ()
    band = age_band_of(age, tax.age_bands) if age is not None else None
    return tuple(
        a.text for a in cat.alternatives if a.age_bands is None or (band is not None and band in a.age_bands)
    )


def stressor_generalized(category: str | None, taxonomy: StressorTaxonomy | None = None) -> str:
    """The category's generalised phrase, or the global fallback for an unknown or missing category."""
    tax = taxonomy if taxonomy is not None else stressor_taxonomy()
    for c in tax.rules:
        if c.id == category:
            return c.generalized
    return tax.fallback
