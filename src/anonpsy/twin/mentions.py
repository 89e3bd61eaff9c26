"""The mention and assertion layers of the RecordTwin table, built on the project's extraction.

Mentions come from the extraction's own matchers: DSM names and aliases (:func:`find_diagnoses`) plus the
synonyms of ``rules/canonical/synonyms.yaml``; the symptom lexicon (:func:`symptom_mentions`, rating-scale names
excluded); the medication and therapy lexicons (:func:`anonpsy.lexicon.find_terms`); and the aliases of the
clinical tests in ``rules/test_values/`` (an alias of three characters or fewer counts only with a value after
it, "K 4.1"; an alias that is also a drug name is left to the medication lexicon). Overlaps between types are
resolved by length, then by :data:`~anonpsy.twin.concepts.TYPE_PRIORITY`.

Assertion comes from the extraction's status functions -- :func:`diagnosis_status`, :func:`symptom_status` and
:func:`treatment_status` of :mod:`anonpsy.extract.assertion.status`, which also name the rule that decided -- and,
for tests, from its ConText scope (:func:`classify_in_sentence`, :func:`is_family`). **An entity is a concept
asserted for the patient**, present or past:

==============  ======================================================  ===================================
assertion       when                                                    entity?
==============  ======================================================  ===================================
affirmed        confirmed / present / current or as-needed treatment     yes
historical      past: a historical trigger or a past-history section     yes
uncertain       provisional, rule-out or possible                       diagnoses, symptoms, tests; not
                                                                        treatments (a treatment option is
                                                                        not a treatment)
planned         a treatment to start ("will start", "referral for")     treatments only
negated         absent, ruled out, refused ("denies X", "no X")          no
hypothetical    "if X occurs", "return for X"                           no
family          a relative's (family-history section or a kin trigger)  no
other_section   a symptom in a medication, allergy or lab list; a drug  no
                in an allergy or lab list (the extraction's own rule)
==============  ======================================================  ===================================

Mentions that are not entities are still recorded: the REPLACE baseline rewrites them and the leak check of
generated text looks at every mention whatever its assertion.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from anonpsy import lexicon
from anonpsy.evaluate.canonical import load_table as load_canonical
from anonpsy.graph import Assertion as SymptomAssertion
from anonpsy.graph import Certainty, Temporality, TreatmentStatus
from anonpsy.twin.concepts import (
    ENTITY_TYPES,
    PREFIX,
    TYPE_PRIORITY,
    EntityType,
    Hierarchy,
    build_hierarchy,
    concept_type,
    residual_rules,
    test_groups,
)
from anonpsy.twin.extraction import (
    Sentence,
    StatusMention,
    classify_in_sentence,
    diagnosis_status,
    find_diagnoses,
    is_family,
    is_instrument_name,
    medication_mentions,
    sentences,
    symptom_mentions,
    symptom_status,
    therapy_mentions,
    treatment_status,
)

Assertion = Literal["affirmed", "historical", "uncertain", "planned", "negated", "hypothetical", "family",
                    "other_section"]
ASSERTIONS: tuple[str, ...] = ("affirmed", "historical", "uncertain", "planned", "negated", "hypothetical", "family",
                               "other_section")
_TREATMENT = ("medication", "therapy", "procedure")
_ENTITY_ASSERTIONS: dict[str, frozenset[str]] = {
    t: frozenset({"affirmed", "historical", "planned"} if t in _TREATMENT else {"affirmed", "historical", "uncertain"})
    for t in ENTITY_TYPES
}
#: Sections where a type is not read as the patient's (the extraction's rules).
_SKIP_SECTIONS: dict[str, frozenset[str]] = {
    "symptom": frozenset({"medications", "allergies", "labs"}),
    "medication": frozenset({"allergies", "labs"}),
    "therapy": frozenset({"allergies", "labs"}),
    "procedure": frozenset({"allergies", "labs"}),
}
_HISTORICAL_SECTIONS = frozenset({"past_psych", "past_medical"})
_VALUE_AFTER = re.compile(r"^\s*(?:[:=]|was|is|of)?\s*[<>≤≥~]?\s*\d")
_SHORT_ALIAS = 3


def is_entity_assertion(etype: str, assertion: str) -> bool:
    """Does a mention of this type with this assertion make an entity of the document?"""
    return assertion in _ENTITY_ASSERTIONS.get(etype, frozenset())


@dataclass(frozen=True, slots=True)
class Span:
    """A concept found in a piece of text (no assertion)."""

    start: int
    end: int
    concept: str


@dataclass(frozen=True, slots=True)
class Mention:
    """A concept mention in a document: sentence index, document offsets, assertion and section."""

    sentence: int
    start: int
    end: int
    concept: str
    assertion: str
    section: str
    rule: str = ""

    @property
    def type(self) -> str:
        return concept_type(self.concept)

    @property
    def entity(self) -> bool:
        return is_entity_assertion(self.type, self.assertion)


@dataclass(frozen=True)
class DocumentMentions:
    """Every mention of one document and its sentence count."""

    mentions: tuple[Mention, ...]
    n_sentences: int

    def entities(self) -> dict[str, int]:
        """Entity concept → number of entity mentions."""
        out: dict[str, int] = {}
        for m in self.mentions:
            if m.entity:
                out[m.concept] = out.get(m.concept, 0) + 1
        return out


def _resolve(spans: Iterable[Span]) -> list[Span]:
    """Non-overlapping spans: longer first, then by type priority, then leftmost."""
    ranked = sorted(spans, key=lambda s: (-(s.end - s.start), TYPE_PRIORITY.get(concept_type(s.concept), 99),
                                          s.start))
    kept: list[Span] = []
    for s in ranked:
        if all(s.end <= k.start or k.end <= s.start for k in kept):
            kept.append(s)
    return sorted(kept, key=lambda s: s.start)


class Matcher:
    """The mention finders of the chosen entity types, compiled once."""

    def __init__(self, types: Sequence[str] = ENTITY_TYPES, hierarchy: Hierarchy | None = None) -> None:
        self.types: tuple[str, ...] = tuple(t for t in ENTITY_TYPES if t in set(types))
        canon = load_canonical().synonyms
        by_rule: dict[str, list[str]] = {}
        for syn, rid in canon.items():
            by_rule.setdefault(rid, []).append(syn)
        self._canon_dx = lexicon.build_index(
            lexicon.IndexSpec(rid, rid, tuple(syns)) for rid, syns in sorted(by_rule.items()))
        self._tests, self._short = self._test_index()
        self._general = None if hierarchy is None else self._general_index(hierarchy)
        self.hierarchy = hierarchy
        from anonpsy.twin.vocabulary import lookalikes, phrase_matcher

        self._vocab = phrase_matcher()
        self._look = lookalikes()

    @staticmethod
    def _test_index() -> tuple[lexicon.TermIndex, frozenset[tuple[str, str]]]:
        specs: list[lexicon.IndexSpec] = []
        short: set[tuple[str, str]] = set()
        med = lexicon.term_index("medication")
        for g in test_groups():
            ci: list[str] = []
            cs: list[str] = []
            for alias in g.aliases:
                hits = med.find(alias)
                if hits and hits[0].start == 0 and hits[0].end == len(alias):
                    continue  # a drug name: the medication lexicon reads it
                alnum = re.sub(r"[^0-9A-Za-z]", "", alias)
                if len(alnum) <= _SHORT_ALIAS:
                    short.add((g.id, alias.casefold()))
                (cs if alias != alias.lower() and len(alnum) <= 6 else ci).append(alias)
            specs.append(lexicon.IndexSpec(g.id, g.name, tuple(ci), tuple(cs)))
        return lexicon.build_index(specs), frozenset(short)

    @staticmethod
    def _general_index(h: Hierarchy) -> lexicon.TermIndex:
        return lexicon.build_index(lexicon.IndexSpec(c.id, c.name, (c.name,)) for c in h.generalisations())

    # -- spans ---------------------------------------------------------------------------------------------------

    def _raw(self, text: str) -> list[Span]:
        out: list[Span] = []
        if "diagnosis" in self.types:
            residual = residual_rules()
            found = [Span(a, b, residual.get(rid, f"dx:{rid}")) for a, b, rid in find_diagnoses(text)]
            for m in self._canon_dx.find(text):
                if not any(s.start < m.end and m.start < s.end for s in found) and \
                        not is_instrument_name(text, m.start, m.end):
                    found.append(Span(m.start, m.end, residual.get(m.id, f"dx:{m.id}")))
            out += found
        if "symptom" in self.types:
            out += [Span(m.start, m.end, f"sx:{m.id}") for m in symptom_mentions(text)
                    if not is_instrument_name(text, m.start, m.end)]
        if "medication" in self.types:
            out += [Span(m.start, m.end, f"rx:{m.id}") for m in medication_mentions(text)]
        if "therapy" in self.types:
            out += [Span(m.start, m.end, f"tx:{m.id}") for m in therapy_mentions(text)]
        if "test" in self.types:
            for m in self._tests.find(text):
                if (m.id, m.surface.casefold()) in self._short and not _VALUE_AFTER.match(text[m.end:m.end + 20]):
                    continue
                out.append(Span(m.start, m.end, f"test:{m.id}"))
        # the general clinical vocabulary (rules/twin), after the project's lexicons: words they already read
        # (whatever the type) stay theirs; a longer phrase of the vocabulary wins
        own = [(s.start, s.end) for s in out]
        out += [Span(h.start, h.end, h.concept) for h in self._vocab.find(text)
                if concept_type(h.concept) in self.types and not any(a <= h.start and h.end <= b for a, b in own)]
        return [s for s in out if self._look.other_sense(text, s.start, s.end, s.concept) is None]

    def spans(self, text: str) -> list[Span]:
        """Every concept named in ``text`` (no assertion), generalisation names included when the matcher was
        built with a hierarchy; non-overlapping."""
        raw = self._raw(text)
        if self._general is not None:
            raw += [Span(m.start, m.end, m.id) for m in self._general.find(text)
                    if concept_type(m.id) in self.types]
        return _resolve(raw)

    def collides(self, name: str) -> bool:
        """Is the whole of ``name`` read as one specific concept?"""
        return any(s.start == 0 and s.end == len(name) for s in _resolve(self._raw(name)))

    def reads_as(self, name: str) -> str | None:
        """The one concept that the whole of ``name`` is read as, or None."""
        spans = _resolve(self._raw(name))
        return spans[0].concept if len(spans) == 1 and spans[0].start == 0 and spans[0].end == len(name) else None

    # -- documents -------------------------------------------------------------------------------------------------

    def document(self, text: str) -> DocumentMentions:
        """Mentions of a document with their assertion, sentence by sentence."""
        sents = sentences(text)
        out: list[Mention] = []
        for s in sents:
            for sp in _resolve(self._raw(s.text)):
                label, rule = assertion_of(s, sp.start, sp.end, concept_type(sp.concept))
                out.append(Mention(s.index, s.start + sp.start, s.start + sp.end, sp.concept, label, s.section, rule))
        return DocumentMentions(tuple(out), len(sents))


def _context_label(s: Sentence, start: int, end: int) -> tuple[Assertion, str]:
    """Why a mention asserts nothing of the patient, from ConText: a relative's, negated, uncertain or
    hypothetical."""
    ctx = classify_in_sentence(s.text, start, end)
    rule = f"context.{ctx.trigger_ids[0]}" if ctx.trigger_ids else "default"
    if ctx.experiencer != "patient" or is_family(s, start, ctx):
        return "family", rule
    if ctx.negated:
        return "negated", rule
    if ctx.uncertain:
        return "uncertain", rule
    if ctx.hypothetical:
        return "hypothetical", rule
    return "affirmed", rule


def assertion_of(s: Sentence, start: int, end: int, etype: str) -> tuple[Assertion, str]:
    """The assertion of the mention ``s.text[start:end]`` of type ``etype`` and the rule id that decided it, from
    the extraction's status functions (diagnoses, symptoms, treatments) or its ConText scope (tests)."""
    if s.section in _SKIP_SECTIONS.get(etype, frozenset()):
        return "other_section", f"section.{s.section}"
    if s.section == "family_history":
        return "family", "section.family_history"
    m = StatusMention(s, start, end)
    if etype == "diagnosis":
        dx = diagnosis_status(m)
        if dx.owner.experiencer != "patient":
            return "family", dx.family.evidence.rule_id if dx.family else "default"
        if dx.certainty is None:
            return _context_label(s, start, end)
        rule = dx.certainty.evidence.rule_id
        if dx.certainty.value == Certainty.ruled_out:
            return "negated", rule
        if dx.certainty.value in (Certainty.rule_out, Certainty.provisional):
            return "uncertain", rule
        if dx.temporality.value == Temporality.past:
            return "historical", dx.temporality.evidence.rule_id
        return "affirmed", rule
    if etype == "symptom":
        sx = symptom_status(m)
        if sx.assertion is None:
            return "family", sx.family.evidence.rule_id if sx.family else "default"
        label = {SymptomAssertion.present: "affirmed", SymptomAssertion.absent: "negated",
                 SymptomAssertion.possible: "uncertain", SymptomAssertion.hypothetical: "hypothetical",
                 SymptomAssertion.historical: "historical"}[sx.assertion.value]
        return label, sx.assertion.evidence.rule_id  # type: ignore[return-value]
    if etype in _TREATMENT:
        tx = treatment_status(m)
        if tx is None:
            return _context_label(s, start, end)
        rule = tx.evidence.rule_id
        if tx.value == TreatmentStatus.planned and rule.startswith("context.poss."):
            return "uncertain", rule  # "consider lithium": an option the extraction plans, not a treatment yet
        label = {TreatmentStatus.planned: "planned", TreatmentStatus.past: "historical",
                 TreatmentStatus.refused: "negated"}.get(tx.value, "affirmed")
        if label == "affirmed" and etype == "procedure" and s.section in _HISTORICAL_SECTIONS:
            return "historical", f"section.{s.section}"  # a past surgical history
        return label, rule  # type: ignore[return-value]
    label, rule = _context_label(s, start, end)
    if label == "affirmed" and s.section in _HISTORICAL_SECTIONS:
        return "historical", f"section.{s.section}"
    if label == "affirmed" and classify_in_sentence(s.text, start, end).historical:
        return "historical", rule
    return label, rule


@lru_cache(maxsize=8)
def matcher(types: tuple[str, ...] = ENTITY_TYPES) -> Matcher:
    """The matcher of ``types`` with the default hierarchy (cached per process)."""
    return Matcher(types, default_hierarchy())


@lru_cache(maxsize=1)
def default_hierarchy() -> Hierarchy:
    """The project's hierarchy, generalisations whose names read as a specific concept left out (cached)."""
    m = Matcher(ENTITY_TYPES)
    return build_hierarchy(collides=m.collides, reads_as=m.reads_as)


def entity_type_of(concept: str) -> EntityType | None:
    """The entity type of a concept id, or None for an unknown prefix."""
    t = concept_type(concept)
    return t if t in PREFIX else None  # type: ignore[return-value]
