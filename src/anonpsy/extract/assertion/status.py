"""Assertion status of a mention: the value each status field of the graph takes, and the evidence for it.

This is the interface between the mentions and the graph: the assembly step hands a :class:`Mention` (the
sentence, its section, the concept's span, the governing temporal expression) to one function per kind of fact,
and gets back whose fact it is and a :class:`Decision` per status field — the value and an
:class:`~anonpsy.graph.Evidence` (the sentence's source span, its section and the rule id that decided).

* :func:`diagnosis_status` → certainty (confirmed, provisional, rule_out, ruled_out) and temporality;
* :func:`symptom_status` → assertion (present, absent, possible, hypothetical, historical);
* :func:`treatment_status` → status (current, past, planned, prn);
* :func:`family_certainty` → a relative's condition confirmed or possible.

Rule ids: ``context.<trigger id>`` when a ConText trigger of ``rules/lexicon/context.yaml`` decided,
``section.<name>`` when the section did, ``time.past`` when the governing temporal expression ends before day 0,
``cue.<name>`` for the named cue patterns below, ``default`` when nothing contradicted the default value.

What decides today is the in-house ConText engine over the sentence, the section name and the temporal expression.
An engine that scopes triggers by section and sentence structure replaces the bodies of these functions and keeps
their signatures; :data:`ASSERTION_PRECEDENCE` and :data:`TREATMENT_PRECEDENCE` say which status a node keeps when
several mentions of it disagree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from anonpsy.extract.assertion.context import Category, ContextResult, Experiencer, default_engine
from anonpsy.extract.assertion.scope import (
    PLANNED,
    classify_in_sentence,
    course_of_index_stay,
    family_member,
    is_family,
    only_time_words,
    treatment_applies,
)
from anonpsy.extract.mentions.time import ONSET_CUE, PAST_EVENT_CUE, TimeMention, is_past, onset_anchor
from anonpsy.extract.sections import Sentence, clause_bounds
from anonpsy.graph import Assertion, Certainty, Evidence, FamilyCertainty, Temporality, TreatmentStatus

V = TypeVar("V")

#: Sections whose content is the patient's past.
HISTORICAL_SECTIONS = frozenset({"past_psych", "past_medical"})
#: Negation triggers that set a diagnosis aside (rather than a symptom denied): "does not meet criteria for",
#: "was ruled out", "unlikely". Any negated diagnosis in the assessment also counts.
_EXCLUDING = frozenset({"neg.criteria", "neg.backward"})
#: Which value a node keeps when its mentions disagree: the first listed wins.
ASSERTION_PRECEDENCE: tuple[Assertion, ...] = (
    Assertion.present, Assertion.possible, Assertion.historical, Assertion.hypothetical, Assertion.absent,
)
TREATMENT_PRECEDENCE: tuple[TreatmentStatus, ...] = (
    TreatmentStatus.current, TreatmentStatus.prn, TreatmentStatus.planned, TreatmentStatus.past,
    TreatmentStatus.refused,
)
_RULE_OUT = re.compile(r"\b(?:rule out|r/o|to be ruled out|ruling out)\b", re.I)
_NOT_RULED_OUT = re.compile(r"\b(?:cannot|can not|can't|could not|couldn't|unable to|not) (?:be )?rul(?:e|ed) out\b",
                            re.I)
_PRN = re.compile(r"\b(?:prn|p\.r\.n\.?|as needed|as required|when needed|if needed|once|one[- ]time|single dose|"
                  r"stat)\b", re.I)
_PRESENT = re.compile(r"\b(?:has|have|is|are|now|still|continues?|currently|persists?|remains?)\b", re.I)
_REMISSION = re.compile(r"\bremission|remitted|resolved\b", re.I)


@dataclass(frozen=True)
class Mention:
    """A concept found in a sentence: ``sentence.text[start:end]``, with its governing temporal expression."""

    sentence: Sentence
    start: int
    end: int
    time: TimeMention | None = None
    times: Sequence[TimeMention] = ()
    index_is_admission: bool = False

    def evidence(self, rule_id: str) -> Evidence:
        """The sentence as evidence for a status decided by ``rule_id``."""
        s = self.sentence
        return Evidence(start=s.start, end=max(s.end, s.start + 1), section=s.section, rule_id=rule_id)


@dataclass(frozen=True)
class Decision(Generic[V]):
    """A status value and why."""

    value: V
    evidence: Evidence


@dataclass(frozen=True)
class Owner:
    """Whose fact a mention states: the patient's, a relative's (with the relative), or someone else's."""

    experiencer: Experiencer
    member: str | None = None


@dataclass(frozen=True)
class DiagnosisStatus:
    """``certainty`` None: the mention asserts nothing about the patient (a relative's, hypothetical, or a denial
    that is not a diagnostic exclusion); ``history`` True: a past diagnosis that belongs to the past history
    (outside the assessment); ``remitted``: the sentence says it remitted; ``family``: set when the mention states
    a relative's condition (``owner.member`` names the relative)."""

    owner: Owner
    certainty: Decision[Certainty] | None
    temporality: Decision[Temporality]
    history: bool = False
    remitted: bool = False
    family: Decision[FamilyCertainty] | None = None


@dataclass(frozen=True)
class SymptomStatus:
    """``assertion`` None: not the patient's. ``ongoing_onset``: the governing time is the onset of something
    still present ("began three years ago"), so its duration runs through the visit. ``family``: set when the
    mention states a relative's condition."""

    owner: Owner
    assertion: Decision[Assertion] | None
    ongoing_onset: bool = False
    family: Decision[FamilyCertainty] | None = None


def trigger_of(ctx: ContextResult, category: Category) -> str | None:
    """The first trigger of ``category`` that applied to the mention, as its ConText rule id."""
    by_id = default_engine().by_id
    for tid in ctx.trigger_ids:
        rule = by_id.get(tid)
        if rule is not None and rule.category == category:
            return tid
    return None


def _context_rule(ctx: ContextResult, category: Category) -> str:
    tid = trigger_of(ctx, category)
    return f"context.{tid}" if tid else "default"


def _owner(m: Mention, ctx: ContextResult) -> Owner:
    if is_family(m.sentence, m.start, ctx):
        return Owner("family", family_member(m.sentence, m.start, ctx))
    return Owner(ctx.experiencer)


def _historical(m: Mention, ctx: ContextResult, *, time_words: bool) -> str | None:
    """The rule that makes a mention historical from its context or section (not its time), or None."""
    hist = ctx.historical and not course_of_index_stay(m.sentence, ctx, m.index_is_admission)
    if hist and time_words and m.time is not None and only_time_words(m.sentence.text, ctx, m.times):
        hist = False  # "years ago", "last year": the parsed expression itself decides
    if hist:
        return _context_rule(ctx, "historical")
    if m.sentence.section in HISTORICAL_SECTIONS:
        return f"section.{m.sentence.section}"
    return None


def diagnosis_status(m: Mention) -> DiagnosisStatus:
    """Certainty and temporality of a diagnosis mention.

    Negated: ruled out when the trigger sets a diagnosis aside ("does not meet criteria for", "unlikely", "was
    ruled out") or the mention is in the assessment, else nothing is asserted. Uncertain: rule-out after "rule
    out" / "r/o", else provisional. Past: a historical trigger, a past-history section or a time that ends before
    day 0; a past diagnosis outside the assessment (or an episode) is past history.
    """
    s = m.sentence
    ctx = classify_in_sentence(s.text, m.start, m.end)
    default_time = Decision(Temporality.current, m.evidence("default"))
    if ctx.negated:
        owner = Owner("family") if is_family(s, m.start, ctx) else Owner(ctx.experiencer)
        neg = trigger_of(ctx, "negated")
        if owner.experiencer == "patient" and (neg in _EXCLUDING or s.section == "assessment"):
            return DiagnosisStatus(owner, Decision(Certainty.ruled_out, m.evidence(f"context.{neg}")), default_time)
        return DiagnosisStatus(owner, None, default_time)
    if ctx.hypothetical:
        return DiagnosisStatus(_owner(m, ctx), None, default_time)
    owner = _owner(m, ctx)
    if owner.experiencer != "patient":
        family = _family_decision(m, ctx) if owner.experiencer == "family" else None
        return DiagnosisStatus(owner, None, default_time, family=family)
    if ctx.uncertain:
        lo, _ = clause_bounds(s.text, m.start)
        before = s.text[lo:m.start]
        if _RULE_OUT.search(before) and not _NOT_RULED_OUT.search(before):
            certainty = Decision(Certainty.rule_out, m.evidence("cue.rule_out"))
        else:
            certainty = Decision(Certainty.provisional, m.evidence(_context_rule(ctx, "possible")))
    else:
        certainty = Decision(Certainty.confirmed, m.evidence("default"))
    rule = _historical(m, ctx, time_words=False)
    if rule is None and m.time is not None and is_past(m.time.spec):
        rule = "time.past"
    temporality = Decision(Temporality.past, m.evidence(rule)) if rule else default_time
    episode = bool(re.search(r"\bepisode\b|\bMDE\b", s.text[m.start:m.end], re.I))
    history = rule is not None and (s.section != "assessment" or episode)
    return DiagnosisStatus(owner, certainty, temporality, history=history, remitted=bool(_REMISSION.search(s.text)))


def symptom_status(m: Mention) -> SymptomStatus:
    """Assertion of a symptom mention.

    Negated → absent; hypothetical → hypothetical (both only for the patient); a relative's or someone else's
    mention asserts nothing about the patient. Otherwise historical after a historical trigger, in a past-history
    section, or when the governing time ends before day 0 and is not the onset of something still present;
    possible when uncertain; else present.
    """
    s = m.sentence
    ctx = classify_in_sentence(s.text, m.start, m.end)
    if ctx.negated or ctx.hypothetical:
        owner = Owner("family") if is_family(s, m.start, ctx) else Owner(ctx.experiencer)
        if owner.experiencer != "patient":
            return SymptomStatus(owner, None)
        if ctx.negated:
            return SymptomStatus(owner, Decision(Assertion.absent, m.evidence(_context_rule(ctx, "negated"))))
        return SymptomStatus(owner, Decision(Assertion.hypothetical, m.evidence(_context_rule(ctx, "hypothetical"))))
    owner = _owner(m, ctx)
    if owner.experiencer != "patient":
        family = _family_decision(m, ctx) if owner.experiencer == "family" else None
        return SymptomStatus(owner, None, family=family)
    rule = _historical(m, ctx, time_words=True)
    ongoing = False
    if m.time is not None and is_past(m.time.spec):
        lo, hi = clause_bounds(s.text, m.start)
        clause = s.text[lo:hi]
        onset = onset_anchor(s.text, m.time) or (ONSET_CUE.search(clause) and _PRESENT.search(clause))
        if rule is None and onset and not PAST_EVENT_CUE.search(clause):
            ongoing = True  # "Memory problems began three years ago": ongoing since then
        elif rule is None:
            rule = "time.past"
    if rule is not None:
        return SymptomStatus(owner, Decision(Assertion.historical, m.evidence(rule)), ongoing)
    if ctx.uncertain:
        return SymptomStatus(owner, Decision(Assertion.possible, m.evidence(_context_rule(ctx, "possible"))), ongoing)
    return SymptomStatus(owner, Decision(Assertion.present, m.evidence("default")), ongoing)


def treatment_status(m: Mention, frequency: str | None = None) -> Decision[TreatmentStatus] | None:
    """Status of a treatment mention, or None when it is not a treatment of the patient's (negated, uncertain, a
    mere option, someone else's).

    Planned after a future trigger ("will start", "referral for"); past after a historical trigger ("previously
    on", "was taking"); as needed when the frequency says so; current otherwise (``section.medications`` in a
    medication list).
    """
    ctx = classify_in_sentence(m.sentence.text, m.start, m.end)
    if not treatment_applies(ctx):
        return None
    if ctx.hypothetical:
        tid = next(t for t in ctx.trigger_ids if t in PLANNED)
        return Decision(TreatmentStatus.planned, m.evidence(f"context.{tid}"))
    if ctx.historical:
        return Decision(TreatmentStatus.past, m.evidence(_context_rule(ctx, "historical")))
    if frequency and _PRN.search(frequency):
        return Decision(TreatmentStatus.prn, m.evidence("cue.prn"))
    rule = "section.medications" if m.sentence.section == "medications" else "default"
    return Decision(TreatmentStatus.current, m.evidence(rule))


def family_certainty(m: Mention) -> Decision[FamilyCertainty]:
    """A relative's condition is possible when ConText finds it uncertain ("may have had", "possibly"), else
    confirmed."""
    return _family_decision(m, classify_in_sentence(m.sentence.text, m.start, m.end))


def _family_decision(m: Mention, ctx: ContextResult) -> Decision[FamilyCertainty]:
    if ctx.uncertain:
        return Decision(FamilyCertainty.possible, m.evidence(_context_rule(ctx, "possible")))
    return Decision(FamilyCertainty.confirmed, m.evidence("default"))


def stronger(new: V, old: V, order: Sequence[V]) -> bool:
    """Does ``new`` win over ``old`` under a precedence ``order`` (first listed wins)?"""
    return order.index(new) < order.index(old)
