"""Assertion status of a mention: the value each status field of the graph takes, and the evidence for it.

This is the interface between the mentions and the graph: the assembly step hands a :class:`Mention` (the
sentence, its section, the concept's span, the governing temporal expression) to one function per kind of fact,
and gets back whose fact it is and a :class:`Decision` per status field — the value and an
:class:`~anonpsy.graph.Evidence` (the sentence's source span, its section and the rule id that decided).

* :func:`diagnosis_status` → certainty (confirmed, provisional, rule_out, ruled_out) and temporality;
* :func:`symptom_status` → assertion (present, absent, possible, hypothetical, historical);
* :func:`treatment_status` → status (current, past, planned, refused, prn);
* :func:`family_certainty` → a relative's condition confirmed or possible.

Rule ids: ``context.<trigger id>`` when a ConText trigger of ``rules/lexicon/context.yaml`` decided,
``section.<name>`` when the section did (``rules/sections/sections.yaml``), ``time.past`` when the governing
temporal expression ends before day 0, ``cue.<name>`` for the named cue patterns below (``cue.answer_negative``:
a field or question answered "None"/"No"), ``default`` when nothing contradicted the default value.

What decides a mention is the in-house ConText engine over the sentence (triggers limited to the concept's kind),
the sentence's field label or question and its answer, the section and the temporal expression. When the
mentions of one fact disagree, the resolution functions decide (each documents its precedence):

* :func:`resolve_diagnosis` -- the highest section tier that mentions the diagnosis decides (the diagnosis list
  and the assessment over the plan, over the history, over the referral question); within it a mention whose
  status a cue decided beats a plain one, and the later beats the earlier;
* :func:`resolve_treatment` -- a decision of the plan (continue, start, stop, recommend, refused) wins, the
  last one when several; then a current medication list; then a home list (a drug only on the home list is
  past when the note has a current list too); then the last mention a cue decided; else current;
* symptoms keep the first status of :data:`ASSERTION_PRECEDENCE` that any mention gives them (a symptom the
  patient has, per any source, is present).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from anonpsy.caseless import Caseless
from anonpsy.extract.assertion.context import Category, ConceptKind, ContextResult, Experiencer, default_engine
from anonpsy.extract.assertion.scope import (
    classify_in_sentence,
    course_of_index_stay,
    family_member,
    is_family,
    only_time_words,
    other_sex_subject,
    unnamed_in_family_section,
)
from anonpsy.extract.mentions.time import ONSET_CUE, PAST_EVENT_CUE, TimeMention, is_past, onset_anchor
from anonpsy.extract.mentions.treatments import medication_mentions
from anonpsy.extract.sections import (
    Sentence,
    clause_bounds,
    decides_treatment,
    deciding_sections,
    is_history_section,
    medication_list,
    section_tier,
)
from anonpsy.graph import Assertion, Certainty, Evidence, FamilyCertainty, Sex, Temporality, TreatmentStatus

V = TypeVar("V")

#: Negation triggers that set a diagnosis aside (rather than a symptom denied): "does not meet criteria for",
#: "was ruled out", "unlikely", "no evidence of", "no history of" (a lifetime denial). Any negated diagnosis in the
#: diagnosis list or the assessment also counts.
_EXCLUDING = frozenset({"neg.criteria", "neg.backward", "neg.excluded_backward", "neg.anaphoric", "neg.without",
                        "neg.bracket_verdict",
                        "neg.no_history_of", "neg.no_evidence"})
#: Historical triggers that say the patient has a history of a diagnosis without saying it is over.
_HISTORY_OF = frozenset({"context.hist.forward", "context.hist.bidirectional"})
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
_PRN = re.compile(r"\b(?:prn|p\.r\.n\.?|as needed|as-needed|as required|when needed|once(?![\s-]+(?:(?:a|per|every|"
                  r"each|at|in\s+the)\s+)?(?:day|daily|week|weekly|month|monthly|night|nightly|morning|evening|bedtime|q\.?h\.?s))|"
                  r"one[- ]time(?![\s-]+(?:a\s+)?(?:day|daily|week|weekly))|single dose|stat)\b", re.I)
#: A past time that only dates the start of a treatment still taken ("placed on Zoloft 10 years ago").
_TX_ONSET = re.compile(r"\b(?:started|began|begun|placed on|put on|initiated|since|went on|has been on|has been "
                       r"taking|prescribed)\b", re.I)
_PRESENT = re.compile(r"\b(?:has|have|is|are|now|still|continues?|currently|persists?|remains?)\b", re.I)
_REMISSION = Caseless(re.compile(r"\bremission|remitted|resolved\b", re.I))
#: A history the note calls distant or remote ("distant history of migraine headaches some 30 years ago", "remote
#: history of alcohol abuse"): long over, even in a diagnosis list.
_REMOTE_HISTORY = re.compile(r"\b(?:distant|remote)\s+(?:past\s+)?(?:medical\s+|psychiatric\s+)?(?:history|hx)\s+of\s+"
                             r"(?:[\w-]+\s+){0,3}$", re.I)


@dataclass(frozen=True)
class Mention:
    """A concept found in a sentence: ``sentence.text[start:end]``, with its governing temporal expression and the
    patient's sex (a pronoun of the other sex points to someone else)."""

    sentence: Sentence
    start: int
    end: int
    time: TimeMention | None = None
    times: Sequence[TimeMention] = ()
    index_is_admission: bool = False
    patient_sex: Sex | None = None

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
    if is_family(m.sentence, m.start, ctx, m.patient_sex):
        return Owner("family", family_member(m.sentence, m.start, ctx, m.end))
    if ctx.experiencer == "patient" and other_sex_subject(m.sentence, m.start, m.patient_sex):
        return Owner("other")
    if ctx.experiencer == "patient" and unnamed_in_family_section(m.sentence):
        return Owner("family")
    return Owner(ctx.experiencer)


def _historical(m: Mention, ctx: ContextResult, *, time_words: bool) -> str | None:
    """The rule that makes a mention historical from its context or section (not its time), or None."""
    hist = ctx.historical and not course_of_index_stay(m.sentence, ctx, m.index_is_admission)
    if hist and time_words and m.time is not None and only_time_words(m.sentence.text, ctx, m.times):
        hist = False  # "years ago", "last year": the parsed expression itself decides
    if hist:
        return _context_rule(ctx, "historical")
    if is_history_section(m.sentence.section):
        return f"section.{m.sentence.section}"
    return None


def in_prompt(m: Mention) -> bool:
    """Is the mention inside a field label or a question ("Suicidal/Homicidal:", "Do you smoke?")? Such a
    mention is asserted only through the answer."""
    return m.start < m.sentence.prompt_end


def _only_features_of_a_symptom(m: Mention, ctx: ContextResult) -> bool:
    """"Symptoms of depression": the hedge "symptoms of" makes a disorder's name uncertain ("symptoms of
    dysthymia"), not a word that is itself a symptom."""
    from anonpsy import lexicon

    by_id = default_engine().by_id
    hedges = {t for t in ctx.trigger_ids if by_id[t].category == "possible" or by_id[t].hedged}
    if hedges != {"poss.dx_features"}:
        return False
    surface = m.sentence.text[m.start:m.end]
    return any(t.start == 0 and t.end == len(surface) for t in lexicon.find_terms(surface, "symptom"))


#: A statement that decides a diagnosis is held: the patient is diagnosed with it, given it, found to have it, meets
#: its criteria, a result is consistent with it ("genetic testing revealed a 45 CAG repeat consistent with Huntington
#: disease"), or it is confirmed ("was subsequently diagnosed with X", "X was confirmed by biopsy"). Like a
#: hedge or a rule-out, it is a decisive statement, so the latest of them wins (:func:`resolve_diagnosis`).
_CONFIRM_BEFORE = re.compile(r"\b(?:diagnosed\s+(?:with|as\s+having|as)|given\s+(?:a|the)\s+diagnosis\s+of|"
                             r"(?:diagnosis|dx)\s+of\s+(?:\w+\s+){0,2}?(?:was|is|has\s+been)\s+(?:confirmed|made)|"
                             r"confirmed\s+(?:diagnosis\s+of|to\s+have|as)|found\s+to\s+have|"
                             r"(?:revealed|showed|shows|demonstrated|was|were|is|are)\s+(?:(?!not\b)\w+\s+){0,6}?"
                             r"(?:consistent\s+with|diagnostic\s+of|confirmatory\s+of|confirming)|"
                             r"(?:meets|met|meeting)\s+(?:full\s+|the\s+)?(?:(?:DSM[-\w]*)\s+)?criteria\s+for)"
                             r"\s+(?:(?:a|an|the)\s+)?$", re.I)
_CONFIRM_AFTER = re.compile(r"^\s*(?:diagnosis\s+)?(?:was|were|is|has\s+been|had\s+been)\s+(?:subsequently\s+|later\s+|"
                            r"then\s+|eventually\s+|finally\s+)?(?:confirmed|diagnosed|established)\b", re.I)
#: A confirmation that names no diagnosis but refers back to one ("She was subsequently given this diagnosis",
#: "The diagnosis was later confirmed"): it confirms the hedged diagnosis of the sentence before.
CONFIRM_ANAPHOR = re.compile(r"\b(?:(?:given|received|made|confirmed)\s+(?:this|that|the)\s+diagnosis|"
                             r"(?:this|that|the|which|the\s+suspected)\s+diagnosis\s+(?:was|has\s+been|is)\s+"
                             r"(?:subsequently\s+|later\s+|then\s+|eventually\s+|finally\s+)?"
                             r"(?:confirmed|made|established))\b", re.I)


#: A specimen or a test positive for the diagnosis ("the brain tissue was strongly positive for PrP (CJD)", "CSF
#: PCR was positive for HSV encephalitis"): the result confirms it. Only a specimen or a laboratory test: a drug
#: screen positive for a substance names no use disorder.
_CONFIRM_TEST = re.compile(r"\b(?:tissue|biopsy|specimen|sample|CSF|fluid|serology|culture|PCR|assay|staining|stain)"
                           r"\s+(?:[\w-]+\s+){0,3}?(?:was|were|is|are|came\s+back|returned)\s+(?:strongly\s+|also\s+|"
                           r"weakly\s+)?positive\s+for\s+(?:[\w-]+\s+\(\s*|(?:a|an|the)\s+)?$", re.I)


def confirms(text: str, start: int, end: int) -> bool:
    """Does the clause of the diagnosis at ``text[start:end]`` confirm it (:data:`_CONFIRM_BEFORE`,
    :data:`_CONFIRM_TEST`)?"""
    lo, _ = clause_bounds(text, start)
    return bool(_CONFIRM_BEFORE.search(text, lo, start) or _CONFIRM_AFTER.match(text[end:end + 60])
                or _CONFIRM_TEST.search(text, lo, start))


def diagnosis_status(m: Mention, *, event: bool = False) -> DiagnosisStatus:
    """Certainty and temporality of a diagnosis mention.

    Negated: ruled out when the trigger sets a diagnosis aside ("does not meet criteria for", "unlikely", "was
    ruled out") or the mention is in the assessment, else (and always in the family history) nothing is
    asserted. Uncertain: rule-out after "rule out" / "r/o", else provisional. Past: a historical trigger, a
    past-history section or a time that ends before day 0; a past diagnosis outside the assessment (or an
    episode) is past history. "History of" in the assessment names a disorder still held, but never an
    ``event`` that is over (a stroke, a fracture: "History of stroke" in an impression list is a past stroke).
    """
    s = m.sentence
    default_time = Decision(Temporality.current, m.evidence("default"))
    if in_prompt(m):
        if s.answer == "positive":
            return DiagnosisStatus(Owner("patient"), Decision(Certainty.confirmed, m.evidence("cue.answer_positive")),
                                   default_time)
        return DiagnosisStatus(Owner("patient"), None, default_time)
    ctx = classify_in_sentence(s.text, m.start, m.end, "diagnosis")
    if ctx.negated:
        owner = Owner("family") if is_family(s, m.start, ctx, m.patient_sex) else _owner(m, ctx)
        neg = trigger_of(ctx, "negated")
        # A denial under family history speaks of the relatives ("denies history of depression, bipolar"), never a
        # verdict on the patient.
        if (owner.experiencer == "patient" and s.section != "family_history"
                and (neg in _EXCLUDING or s.section in deciding_sections())):
            return DiagnosisStatus(owner, Decision(Certainty.ruled_out, m.evidence(f"context.{neg}")), default_time)
        return DiagnosisStatus(owner, None, default_time)
    if ctx.hypothetical:
        return DiagnosisStatus(_owner(m, ctx), None, default_time)
    owner = _owner(m, ctx)
    if owner.experiencer != "patient":
        family = _family_decision(m, ctx) if owner.experiencer == "family" else None
        return DiagnosisStatus(owner, None, default_time, family=family)
    if ctx.uncertain and _only_features_of_a_symptom(m, ctx):
        ctx = dataclasses.replace(ctx, uncertain=False)
    if ctx.uncertain:
        lo, _ = clause_bounds(s.text, m.start)
        before = s.text[lo:m.start]
        if _RULE_OUT.search(before) and not _NOT_RULED_OUT.search(before):
            certainty = Decision(Certainty.rule_out, m.evidence("cue.rule_out"))
        else:
            certainty = Decision(Certainty.provisional, m.evidence(_context_rule(ctx, "possible")))
    elif confirms(s.text, m.start, m.end):
        certainty = Decision(Certainty.confirmed, m.evidence("cue.confirmed"))
    else:
        certainty = Decision(Certainty.confirmed, m.evidence("default"))
    rule = _historical(m, ctx, time_words=False)
    episode = bool(re.search(r"\bepisode\b|\bMDE\b", s.text[m.start:m.end], re.I))
    over = bool({"hist.backward", "hist.not_recently"} & set(ctx.trigger_ids)) or bool(_REMISSION.search(s.text)) \
        or bool(_REMOTE_HISTORY.search(s.text, max(0, m.start - 60), m.start))
    if rule in _HISTORY_OF and s.section in deciding_sections() and not episode and not over and not event:
        rule = None  # "a history of schizophrenia" in the assessment: a diagnosis still held
    if rule is None and m.time is not None and is_past(m.time.spec):
        rule = "time.past"
    temporality = Decision(Temporality.past, m.evidence(rule)) if rule else default_time
    history = rule is not None and (s.section not in deciding_sections() or episode)
    return DiagnosisStatus(owner, certainty, temporality, history=history, remitted=bool(_REMISSION.search(s.text)))


#: A symptom that is itself a change ("decreased appetite", "weight loss", "increased thirst"), and a list of
#: changes the note says did not happen, open up to the symptom ("no changes in hair texture, ... or ").
_CHANGE_SYMPTOM = re.compile(r"(?:decreased?|increased?|excessive|reduced|poor|loss\s+of|weight\s+(?:loss|gain)|"
                             r"changes?\s+in)\b", re.I)
_NO_CHANGE_BEFORE = re.compile(r"\bno\s+(?:significant\s+|recent\s+|new\s+)?changes?\s+(?:in|of)\b[^.;:!?]{0,120}?"
                               r"(?:,|\bor|\band)\s*(?:(?:excessive|increased|decreased)\s+or\s+)?$", re.I)


def symptom_status(m: Mention) -> SymptomStatus:
    """Assertion of a symptom mention.

    Negated → absent; hypothetical → hypothetical (both only for the patient); a relative's or someone else's
    mention asserts nothing about the patient. Otherwise historical after a historical trigger, in a past-history
    section, or when the governing time ends before day 0 and is not the onset of something still present;
    possible when uncertain; else present.
    """
    s = m.sentence
    if in_prompt(m):
        if s.answer == "negative":
            return SymptomStatus(Owner("patient"), Decision(Assertion.absent, m.evidence("cue.answer_negative")))
        if s.answer == "positive":
            return SymptomStatus(Owner("patient"), Decision(Assertion.present, m.evidence("cue.answer_positive")))
        return SymptomStatus(Owner("patient"), None)
    ctx = classify_in_sentence(s.text, m.start, m.end, "symptom")
    if ctx.negated or ctx.hypothetical:
        owner = Owner("family") if is_family(s, m.start, ctx, m.patient_sex) else _owner(m, ctx)
        if owner.experiencer != "patient":
            return SymptomStatus(owner, None)
        if ctx.negated:
            return SymptomStatus(owner, Decision(Assertion.absent, m.evidence(_context_rule(ctx, "negated"))))
        return SymptomStatus(owner, Decision(Assertion.hypothetical, m.evidence(_context_rule(ctx, "hypothetical"))))
    owner = _owner(m, ctx)
    if owner.experiencer != "patient":
        family = _family_decision(m, ctx) if owner.experiencer == "family" else None
        return SymptomStatus(owner, None, family=family)
    if _CHANGE_SYMPTOM.match(s.text, m.start) and _NO_CHANGE_BEFORE.search(s.text, 0, m.start):
        # "No changes in hair texture, change in skin color, excessive or decreased appetite": "no change" is no
        # negation of a condition that goes on ("no change in his depression"), but a change is what it denies
        return SymptomStatus(owner, Decision(Assertion.absent, m.evidence("cue.no_change_of_change")))
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



def _taken_now(m: Mention, frequency: str | None, rule: str, *,
               prn_rule: str | None = None) -> Decision[TreatmentStatus]:
    """Current, decided by ``rule``; as needed (``prn_rule``, else ``rule``) when the frequency says so."""
    if frequency and _PRN.search(frequency):
        return Decision(TreatmentStatus.prn, m.evidence(prn_rule or rule))
    return Decision(TreatmentStatus.current, m.evidence(rule))

def treatment_status(m: Mention, frequency: str | None = None,
                     kind: ConceptKind = "medication") -> Decision[TreatmentStatus] | None:
    """Status of a treatment mention, or None when it is not a treatment of the patient's (named only in a
    question or label, negated without a refusal, a warning about it, someone else's).

    Refused after a refusal trigger ("declined"); planned after a future, recommending, conditional or
    uncertain trigger ("plan to start", "recommend", "if needed", "consider"); current after a current trigger
    ("continue", "is taking", "was started on", a start ordered at this visit: "we will start"), unless that order
    is put off to a later day ("will start X next week": planned); one dose (prn) after "was given" /
    "administration of"; past after a stopping or historical trigger ("discontinued", "tried", "previously on",
    "in the past") or a governing time before day 0 that does not only date the start; listed in a medication
    list section: current (home list: ``section.home_medications``, resolved by :func:`resolve_treatment`), past
    list: past; as needed when the frequency says so; current otherwise.
    """
    s = m.sentence
    if in_prompt(m) and not _PRESCRIPTION_FIELD.match(s.text, m.end):
        return None
    ctx = classify_in_sentence(s.text, m.start, m.end, kind)
    if (ctx.experiencer != "patient" or is_family(s, m.start, ctx, m.patient_sex)
            or other_sex_subject(s, m.start, m.patient_sex)):
        return None
    if ctx.negated:
        if "neg.refused" in ctx.trigger_ids:
            return Decision(TreatmentStatus.refused, m.evidence("context.neg.refused"))
        return None
    listed = medication_list(s.section)
    if _latter_stopped(s.text, m.start, m.end):
        return Decision(TreatmentStatus.past, m.evidence("cue.latter_stopped"))
    if _then_switched(s.text, m.end):
        return Decision(TreatmentStatus.past, m.evidence("cue.then_switched"))
    if _switched_later(s.text, m.start, m.end):
        return Decision(TreatmentStatus.past, m.evidence("cue.switched_later"))
    if _PRIOR_COURSE.search(s.text, max(0, m.start - 80), m.start):
        return Decision(TreatmentStatus.past, m.evidence("cue.prior_course"))
    if _it_stopped(s.text, m.end):
        return Decision(TreatmentStatus.past, m.evidence("cue.it_stopped"))
    if _bounded_past_course(s.text, m.start, m.end):
        return Decision(TreatmentStatus.past, m.evidence("cue.bounded_past_course"))
    into = _SWITCH_TO.search(s.text[max(0, m.start - 160):m.start])
    if into is not None and not _STOPPED_AFTER.match(s.text, m.end):
        # "he was switched from Zoloft to Lexapro": the drug a done switch goes to is the one taken now; "suggest
        # switching from OxyContin to methadone": the drug a proposed switch goes to is planned
        if not into.group("done"):
            return Decision(TreatmentStatus.planned, m.evidence("cue.switch_to"))
        return _taken_now(m, frequency, "cue.switched_to")
    if _SWITCHED_INTO.search(s.text[max(0, m.start - 80):m.start]) and not _STOPPED_AFTER.match(s.text, m.end) \
            and (m.time is None or not is_past(m.time.spec)):
        # "took Zoloft for a month and was changed to Lexapro": the drug a done switch went to is taken now, whatever
        # tells of the course before it
        return _taken_now(m, frequency, "cue.switched_to")
    if _SWITCH_INTO_PROPOSED.search(s.text[max(0, m.start - 80):m.start]) and not _STOPPED_AFTER.match(s.text, m.end):
        # "we will switch her to Lexapro (from Zoloft)": the drug a proposed switch goes to is planned
        return Decision(TreatmentStatus.planned, m.evidence("cue.switch_to"))
    switch = _SWITCH_FROM.search(s.text[max(0, m.start - 80):m.start]) or _switch_to_from(s.text, m.start)
    if switch is not None:
        # "probably suggest switching over from OxyContin to methadone": the drug a proposed switch leaves is the
        # one taken now; "he was switched from Zoloft to Lexapro": the switch is done and the drug is past
        if switch.group("done"):
            return Decision(TreatmentStatus.past, m.evidence("cue.switched_from"))
        return _taken_now(m, frequency, "cue.switch_from")
    if _PROPOSED_CHANGE in ctx.trigger_ids:
        # "I would recommend that we consider tapering Seroquel": a change of a drug taken now, whatever frames it
        if "cur.taking" in ctx.trigger_ids[ctx.trigger_ids.index(_PROPOSED_CHANGE) + 1:]:
            # "consider tapering Zoloft and starting Lexapro": a step of its own that the proposal also frames
            return Decision(TreatmentStatus.planned, m.evidence(f"context.{_PROPOSED_CHANGE}"))
        return _taken_now(m, frequency, f"context.{_PROPOSED_CHANGE}", prn_rule="cue.prn")
    stop = next((t for t in ctx.trigger_ids if t.startswith("hist.stop")), None)
    if stop is not None and _plan_after(ctx, stop):
        stop = None  # "stopped sertraline and we will start fluoxetine": the plan, nearer the drug, decides
    if stop is not None and _stop_by_deadline(s.text, m.start, m.end):
        # "discontinue all Ativan prior to discharge": a stop still to come; the patient takes the drug until then
        return _taken_now(m, frequency, "cue.stop_to_come")
    if stop is not None and _held_on_condition(s.text, m.start):
        # "hold metoprolol if systolic pressure is below 100": a hold parameter; the drug goes on otherwise
        return _taken_now(m, frequency, "cue.held_on_condition")
    if stop is not None and not ctx.current:
        # "recommend she stay off antidepressants", "Discontinue Provigil": stopped, whatever else frames it
        return Decision(TreatmentStatus.past, m.evidence(f"context.{stop}"))
    if ctx.hypothetical and listed is None:
        hyp = [t for t in ctx.trigger_ids if t.startswith("hyp.")]
        if hyp and all(t == "hyp.prevention" for t in hyp):
            return None  # "risk of", "monitor for": a warning about the drug, not a plan to give it
        return Decision(TreatmentStatus.planned, m.evidence(f"context.{next(t for t in hyp if t != 'hyp.prevention')}"))
    if ctx.uncertain and listed is None:
        return Decision(TreatmentStatus.planned, m.evidence(_context_rule(ctx, "possible")))
    if ctx.current:
        if "cur.ordered_now" in ctx.trigger_ids and _deferred_start(s.text, m.end):
            # "will start sertraline next week": an order for a later day, not a start at this visit
            return Decision(TreatmentStatus.planned, m.evidence("cue.deferred_start"))
        return _taken_now(m, frequency, _context_rule(ctx, "current"), prn_rule="cue.prn")
    onset_only = False
    if ctx.historical and m.time is not None and only_time_words(s.text, ctx, m.times):
        lo, hi = clause_bounds(s.text, m.start)
        onset_only = bool(_TX_ONSET.search(s.text[lo:hi]))  # "placed on Zoloft 10 years ago": started then
    if ctx.historical and _problem_treated_with(s.text, m.start, ctx) \
            and (m.time is None or not is_past(m.time.spec)):
        # "Hypertension treated with Cozaar 100 mg daily": a problem list's entry names the regimen taken now
        return _taken_now(m, frequency, "cue.problem_treated_with", prn_rule="cue.prn")
    if ctx.historical and not onset_only and not course_of_index_stay(s, ctx, m.index_is_admission) \
            and not _list_tense_only(ctx, listed):
        rule = _context_rule(ctx, "historical")
        if rule == "context.hist.tried" and (m.time is None or not is_past(m.time.spec)) \
                and _AT_PRESENTATION.search(s.text, 0, m.start):
            # "In the emergency room, she was treated with morphine": a dose given at the presentation
            return Decision(TreatmentStatus.prn, m.evidence("cue.given_at_presentation"))
        if rule == "context.hist.once":
            return Decision(TreatmentStatus.prn, m.evidence(rule))
        if rule == "context.hist.tried" and _treated_in_this_course(m, ctx, listed):
            # "HOSPITAL COURSE: The patient was treated with haldol and risperidone for his agitation": the
            # treatment this stay gave, started at this visit
            return _taken_now(m, frequency, "cue.treated_this_course")
        if rule == "context.hist.tried" and ctx.trigger_ids == ("hist.tried",) \
                and s.section not in ("hpi", "chief_complaint") and not is_history_section(s.section) \
                and (m.time is None or not is_past(m.time.spec)) and _ORDERED_TRIAL.search(s.text, 0, m.start) \
                and not _TOLD_AFTER.search(s.text, m.end) and not _PAST_WHEN.search(s.text):
            # "PLAN: Trial of gabapentin 300 mg", "Medications prescribed: Therapeutic trial of Inderal 40 mg": a
            # trial ordered in telegraphic style (no subject, no verb) starts at this visit
            return _taken_now(m, frequency, "cue.ordered_trial")
        return Decision(TreatmentStatus.past, m.evidence(rule))
    if listed == "past":
        return Decision(TreatmentStatus.past, m.evidence(f"section.{s.section}"))
    if listed == "once":
        return Decision(TreatmentStatus.prn, m.evidence(f"section.{s.section}"))
    if listed is not None:
        return _taken_now(m, frequency, f"section.{s.section}", prn_rule="cue.prn")
    if m.time is not None and is_past(m.time.spec):
        lo, hi = clause_bounds(s.text, m.start)
        if not _TX_ONSET.search(s.text[lo:hi]):
            return Decision(TreatmentStatus.past, m.evidence("time.past"))
    if _FRONTED_PAST.match(s.text) and not _PRESENT_ON.search(s.text) and not _FUTURE.search(s.text) \
            and not decides_treatment(s.section):
        # "At that point, ... Dr. X started Vigabatrin": the sentence tells an earlier stage of the story; a drug it
        # starts is current only while no current medication list leaves it out (resolve_treatment)
        lo, hi = clause_bounds(s.text, m.start)
        if _TX_ONSET.search(s.text[lo:hi]):
            return _taken_now(m, frequency, STARTED_THEN)
        return Decision(TreatmentStatus.past, m.evidence("cue.fronted_past"))
    return _taken_now(m, frequency, "default", prn_rule="cue.prn")


#: A time adverbial that opens the sentence and dates everything it tells in an earlier stage of the story: "At that
#: point, ...", "At the time, ...", "Initially, ...", "In 2009, ...", "At 20 months of age, ...".
_FRONTED_PAST = re.compile(r"^\W*(?:at\s+that\s+(?:point|time|stage)|at\s+the\s+time|back\s+then|initially|at\s+first|"
                           r"originally|in\s+(?:19|20)\d\d|at\s+(?:the\s+)?age\s+(?:of\s+)?\d+|at\s+\d+\s+(?:months?|"
                           r"years?)\s+(?:of\s+age|old)|as\s+an?\s+(?:infant|toddler|child))\s*,", re.I)
#: A plan in the sentence ("Initially, we will give ...") is no story told.
_FUTURE = re.compile(r"\b(?:will|would|shall|plan|plans|planned|going\s+to)\b", re.I)
#: The rule of a drug started in an earlier stage of the story (:data:`_FRONTED_PAST`).
STARTED_THEN = "cue.started_then"


#: "was treated with" (any words of the list between) right before the drug, in its clause.
_WAS_TREATED_WITH = re.compile(r"\b(?:was|were)\s+(?:then\s+|subsequently\s+|initially\s+|also\s+|promptly\s+)?"
                               r"treated\s+(?:with|on)\s", re.I)


def _treated_in_this_course(m: Mention, ctx: ContextResult, listed: str | None) -> bool:
    """Is the drug one the course of this visit gave: "was treated with" its only historical trigger, told in a
    section that tells what this visit did (a hospital course, a plan: it decides treatment, below the diagnosis
    list and the assessment, and is no medication list nor a history), with no past time? The history of present
    illness and the past history tell of a course before the visit ("was treated with X" there stays past)."""
    s = m.sentence
    if ctx.trigger_ids != ("hist.tried",) or listed is not None or not decides_treatment(s.section) \
            or s.section in deciding_sections() or is_history_section(s.section):
        return False
    if (m.time is not None and is_past(m.time.spec)) or _PAST_WHEN.search(s.text):
        return False
    lo, _hi = clause_bounds(s.text, m.start)
    return _WAS_TREATED_WITH.search(s.text, lo, m.start) is not None and not _FAILED_COURSE.search(s.text, m.end)


#: What the sentence tells of a treatment's result that makes it a course that is over ("was treated with X without
#: benefit", "..., which did not help").
_FAILED_COURSE = re.compile(r"\b(?:without\s+(?:any\s+)?(?:benefit|effect|relief|improvement|success|response)|"
                            r"did\s+not\s+(?:help|work|respond|benefit)|failed|no\s+(?:benefit|response|improvement))\b",
                            re.I)


#: A trial told as an order, in telegraphic style: the start of a sentence, of a numbered item or of what a label
#: introduces, then "(a) (therapeutic) trial of" right before the drug ("PLAN: Trial of gabapentin", "2. A therapeutic
#: trial of Inderal"). A trial with a subject or a verb ("she had a trial of", "failed a trial of") is a course told.
_ORDERED_TRIAL = re.compile(r"(?:^|[:]\s*|^\s*\d+[.)]\s*)(?:(?:a|an)\s+)?(?:(?:therapeutic|short|brief)\s+)?"
                            r"trial\s+of\s+$", re.I)

#: A verb after the drug that tells the trial as a course ("A trial of Prozac did not help", "... was stopped").
_TOLD_AFTER = re.compile(r"\b(?:did|was|were|had|has|have|helped|failed|worked|caused|led|resulted|ended|lasted|"
                         r"made|gave|produced)\b|\bwithout\s+(?:any\s+)?(?:benefit|effect|relief|improvement|success|"
                         r"response)", re.I)

#: A prescription's field label after the drug ("Augmentin  Dosage:  400 mg ...  Sig:  One PO Q8h"): the drug
#: the label names is the one prescribed, not a question asked about it.
_PRESCRIPTION_FIELD = re.compile(r"\s*(?:dosage|dose|strength)\s*,?\s*:", re.I)

#: A problem list's entry told as "condition treated with drug" ("Hypertension treated with Cozaar 100 mg daily",
#: "Sleep disturbances, depression and anxiety treated with Paxil"): a noun phrase, no verb or past marker before
#: "treated with". "He was treated with", "previously treated with", "and treated with" tell a course.
_PROBLEM_TREATED = re.compile(r"^(?P<head>[A-Za-z][\w'/ ,-]{0,80}?)\s+(?:treated|managed|controlled)\s+(?:with|on)\s",
                              re.I)
_NOT_A_PROBLEM = re.compile(r"\b(?:was|were|is|are|had|has|have|been|being|he|she|they|we|patient|previously|"
                            r"prior|then|later|subsequently|initially|once|formerly|and\s+then|after|when|while|in|"
                            r"at|during|since|until|who|which|that)\b", re.I)

#: A past time in the clause ("... treated with Paxil in 2005", "two years ago"): a course that is over.
_PAST_WHEN = re.compile(r"\b(?:(?:in|since|during|until)\s+(?:\w+\s+)?(?:19|20)\d\d|ago|last\s+(?:year|month|week)|"
                        r"as\s+a\s+(?:child|teenager)|in\s+the\s+past)\b", re.I)


def _problem_treated_with(sentence: str, start: int, ctx: ContextResult) -> bool:
    """Is the drug at ``start`` the regimen of a problem list's entry ("Glaucoma treated with Xalatan drops"),
    with "treated with" (hist.tried) its only historical trigger?"""
    hist = {t for t in ctx.trigger_ids if default_engine().by_id[t].category == "historical"}
    if hist != {"hist.tried"}:
        return False
    lo, hi = clause_bounds(sentence, start)
    m = _PROBLEM_TREATED.match(sentence, lo)
    if m is None or m.end() > start or _PAST_WHEN.search(sentence, lo, hi):
        return False
    return not _NOT_A_PROBLEM.search(m.group("head")) and not medication_mentions(m.group("head"))


#: A start put off to a later day, told after the drug of an announced start ("will start sertraline next week", "we
#: will start her on Seasonale at the end of this cycle", "will begin lithium after discharge").
_DEFERRED = re.compile(r"\b(?:next\s+(?:week|month|visit|appointment|cycle)|tomorrow|in\s+(?:a|one|two|three|"
                       r"four|a\s+few|several|\d+)\s+(?:days?|weeks?|months?)|at\s+the\s+end\s+of\s+(?:this|the|her|his|their)\s+"
                       r"(?:cycle|week|month)|(?:after|following)\s+(?:(?:his|her|their|the)\s+)?(?:discharge|surgery|"
                       r"procedure|delivery|next\s+visit))\b", re.I)
#: Where the clause of the drug ends for :data:`_DEFERRED`: a break or another step of the plan.
_DEFERRED_END = re.compile(r"[.;:]|,\s|\s(?:and|then|but)\s", re.I)


def _deferred_start(sentence: str, end: int) -> bool:
    """Is the start announced for the drug ending at ``end`` put off to a later day (a cue before the clause ends)?"""
    stop = _DEFERRED_END.search(sentence, end)
    tail = sentence[end:stop.start() if stop else len(sentence)]
    return bool(_DEFERRED.search(tail[:100]))


#: A stop told of the last drugs of a list by an anaphor after them: "..., Percocet, Ultram (has held the latter two
#: medications for the past two weeks)", "... and clonazepam; she stopped the last two in May", "the latter".
_LATTER_STOPPED = Caseless(re.compile(
    r"\b(?:held|stopped|discontinued|quit|been off|is off|was off|stopped taking|no longer takes|no longer taking)\s+"
    r"(?:taking\s+)?(?:both\s+of\s+)?the\s+(?:latter|last)(?:\s+(?P<n>two|three|four|2|3|4))?"
    r"(?:\s+(?:medications?|meds|drugs|agents))?\b", re.I))
_COUNT = {"two": 2, "three": 3, "four": 4, "2": 2, "3": 3, "4": 4}


def _latter_stopped(sentence: str, start: int, end: int) -> bool:
    """Is the drug at ``sentence[start:end]`` one of the last drugs before an anaphor that stops them?"""
    a = _LATTER_STOPPED.search(sentence, end)
    if a is None:
        return False
    n = _COUNT.get((a.group("n") or "").lower(), 1)
    return any(d.start == start for d in medication_mentions(sentence[:a.start()])[-n:])


#: A hold made conditional by a parameter ("hold metoprolol if blood pressure is low", "if SBP < 100, we will hold
#: lisinopril", "hold for heart rate under 60"): a dose may be skipped, but the drug goes on.
_HOLD_BEFORE = re.compile(r"\bhold(?:ing)?\s+(?:(?:the|his|her|their|all|any|both)\s+)?(?:[\w/-]+\s+){0,4}$", re.I)
_HOLD_CONDITION = re.compile(r"\b(?:if|unless|when(?:ever)?)\b|\bhold(?:ing)?\b[^.;]*\bfor\s+(?:an?\s+)?(?:sbp|dbp|"
                             r"hr|bp|systolic|diastolic|blood\s+pressure|heart\s+rate|pulse|glucose|blood\s+sugar|"
                             r"inr|k|potassium|creatinine|sedation|rr)\b", re.I)


def _held_on_condition(sentence: str, start: int) -> bool:
    """Is the drug at ``start`` the object of "hold" under a condition ("if", "unless", "for SBP < 100")?"""
    if not _HOLD_BEFORE.search(sentence[max(0, start - 80):start]):
        return False
    return bool(_HOLD_CONDITION.search(sentence))


#: Where a treatment was given at the presentation itself ("In the emergency room, ...", "on arrival"): a drug
#: "treated with" there is a dose of this visit, not a treatment of the past.
_AT_PRESENTATION = re.compile(r"\b(?:in|at)\s+(?:the\s+)?(?:emergency\s+(?:room|department)|ER|ED|triage)\b|"
                              r"\b(?:on|upon)\s+(?:(?:his|her|their)\s+)?(?:arrival|presentation)\b", re.I)


#: The verbs of a switch: done (past participle) and proposed (any other form), and the words that may stand
#: between the verb and "from" / "to" ("switch her gradually from").
_SWITCH_DONE = r"switched|changed|converted|transitioned|rotated|crossed\s+over|cross-tapered"
_SWITCH_PROPOSED = (r"switch(?:ing)?|chang(?:e|ing)|convert(?:ing)?|transition(?:ing)?|rotat(?:e|ing)|"
                    r"cross-taper(?:ing)?")
_SWITCH_OBJECT = r"him|her|them|the\s+patient|patient|over|gradually|slowly"

#: The drug right after "switch(ing) from": "suggest switching over from OxyContin to methadone", "was changed from
#: Zoloft to Lexapro". A proposed switch (any form but the past) leaves a drug taken now; a done one, a past drug.
_SWITCH_FROM = re.compile(
    rf"\b(?:(?P<done>{_SWITCH_DONE}|weaned)|{_SWITCH_PROPOSED}|wean(?:ing)?)"
    rf"\s+(?:(?:{_SWITCH_OBJECT})\s+){{0,3}}from\s+(?:(?:his|her|their|the)\s+)?$", re.I)

#: The drug right after "to" in "switch(ed) from X to": the drug a switch goes to. ``done`` as in :data:`_SWITCH_FROM`.
_SWITCH_TO = re.compile(
    rf"\b(?:(?P<done>{_SWITCH_DONE})|{_SWITCH_PROPOSED})"
    rf"\s+(?:(?:{_SWITCH_OBJECT})\s+){{0,3}}from\s+[^.;:()]{{1,100}}?\s(?:over\s+)?to\s+(?:(?:his|her|their|the)\s+)?$",
    re.I)

#: The drug after "from" in a switch told the other way round, "switched to Y from X": "he was switched to Lexapro
#: from Zoloft", "consider switching her to Lexapro from Zoloft". ``done`` as in :data:`_SWITCH_FROM`; ``into``: what
#: the switch goes to, which must name a drug ("changed to night shifts from day shifts" leaves no drug).
_SWITCH_TO_FROM = Caseless(re.compile(
    rf"\b(?:(?P<done>{_SWITCH_DONE})|{_SWITCH_PROPOSED})"
    rf"\s+(?:(?:{_SWITCH_OBJECT}|back)\s+){{0,3}}to\s+(?P<into>[^.;:()]{{1,80}}?)\s+from\s+(?:(?:his|her|their|the)\s+)?$",
    re.I))


def _switch_to_from(sentence: str, start: int) -> re.Match[str] | None:
    """The switch "to Y from" right before the drug at ``start`` (the drug the switch leaves), or None."""
    a = _SWITCH_TO_FROM.search(sentence[max(0, start - 160):start])
    return a if a is not None and medication_mentions(a.group("into")) else None


#: The drug right after a done switch told without "from": "he was switched to Trileptal", "and was changed to
#: Lexapro".
_SWITCHED_INTO = re.compile(r"\b(?:was|were|been|got)\s+(?:then\s+|later\s+|subsequently\s+|eventually\s+|finally\s+|"
                            r"therefore\s+)?(?:switched|changed|converted|transitioned|crossed\s+over)\s+(?:over\s+)?"
                            r"to\s+(?:(?:his|her|their|the)\s+)?$", re.I)

#: The drug right after a proposed switch told without "from" before it: "we will switch her to Lexapro", "plan to
#: change him over to sertraline", "I would like to switch to Lexapro from Zoloft".
_SWITCH_INTO_PROPOSED = re.compile(
    r"\b(?:will|would(?:\s+like)?|plan(?:s|ned|ning)?\s+to|going\s+to|want(?:s)?\s+to|intend(?:s)?\s+to|"
    r"(?:I|we)\s+(?:will\s+)?(?:recommend|suggest)(?:ed)?|recommend(?:ed)?|suggest(?:ed)?)\s+"
    r"(?:(?:to|that\s+(?:we|she|he|they)|therefore|then|now|try\s+to|be)\s+){0,2}"
    rf"(?:{_SWITCH_PROPOSED})\s+(?:(?:{_SWITCH_OBJECT})\s+){{0,3}}to\s+(?:(?:his|her|their|the)\s+)?$", re.I)

#: A stop told right after a drug: "switched to Lexapro, which she stopped in May".
_STOPPED_AFTER = re.compile(r"[^.;]{0,40}?\b(?:stopped|discontinued|no\s+longer|ran\s+out|came\s+off|quit)\b", re.I)

#: The drug before "then switched to" another: "placed on heparin, then converted to Coumadin", "remained on
#: Coumadin for 3 months and then was switched to aspirin". The first drug was replaced.
_THEN_SWITCHED = re.compile(r"[^.;:()]{0,60}?\bthen\s+(?:was\s+|were\s+|had\s+been\s+|been\s+)?(?:converted|"
                            r"switched|changed|transitioned|bridged|cross-tapered|crossed\s+over)\s+(?:over\s+)?to\b",
                            re.I)


def _then_switched(sentence: str, end: int) -> bool:
    """Is the drug ending at ``end`` the one a later "then switched to" another drug replaced?"""
    a = _THEN_SWITCHED.match(sentence, end)
    if a is None or medication_mentions(sentence[end:a.end()]):
        return False  # another drug in between is the one replaced
    return bool(medication_mentions(sentence[a.end():a.end() + 60]))


#: A later switch told after the drug in the same sentence, with the patient as its subject (or none): "was placed on
#: Tegretol, but developed symptoms of toxicity (hallucinations) on this medication, he was switched to Trileptal",
#: "took Zoloft for a month and was changed to Lexapro". The drug before the switch was replaced.
_SWITCHED_LATER = re.compile(r"[^.;:]{0,160}?(?:,|\band\b|\bbut\b|\bso\b)\s+(?:then\s+)?"
                             r"(?:(?:he|she|they|the\s+patient|patient)\s+)?(?:was|were|had\s+been|has\s+been|got)\s+(?:then\s+|later\s+|"
                             r"subsequently\s+|eventually\s+|finally\s+|therefore\s+)?(?:switched|changed|converted|"
                             r"transitioned|crossed\s+over)\s+(?:over\s+)?to\b", re.I)
#: The drug's own clause in the present ("he is on lithium, and was switched to ..."): the switch is of another drug.
_PRESENT_ON = re.compile(r"\b(?:is|are|takes|continues|remains|currently|now|still)\b", re.I)


def _switched_later(sentence: str, start: int, end: int) -> bool:
    """Is the drug at ``sentence[start:end]`` the one a switch told later in the sentence replaced: another drug
    after "switched to", none between, and the drug's own clause not in the present?"""
    a = _SWITCHED_LATER.match(sentence, end)
    if a is None or medication_mentions(sentence[end:a.end()]):
        return False  # another drug in between is the one replaced
    lo, _hi = clause_bounds(sentence, start)
    if _PRESENT_ON.search(sentence, lo, start):
        return False
    return bool(medication_mentions(sentence[a.end():a.end() + 60]))


#: A course of a drug that came before another event, told as the object of "following"/"after": "underwent
#: lobectomy following initial treatment with Decadron", "after a course of prednisone". The course is over.
_PRIOR_COURSE = re.compile(r"\b(?:following|after|subsequent\s+to)\s+(?:an?\s+|the\s+|his\s+|her\s+|their\s+)?"
                           r"(?:(?:initial|prior|previous|preoperative|pre-operative|brief|short|\d+[- ](?:day|week|"
                           r"month)s?)\s+)?(?:treatment|therapy|course|courses|pretreatment|premedication|"
                           r"pre-treatment|dose|doses|infusion|infusions)\s+(?:with|of|on)\s+$", re.I)

#: A stop told of the drug by a pronoun in the clause after it: "was maintained with Lovenox until the INR was
#: 1.7 and it was discontinued on 08/30", "She took Zoloft briefly but she stopped it".
_IT_STOPPED = Caseless(re.compile(r"\b(?:it|this|that)\s+(?:was|had\s+been|has\s+been|got)\s+(?:then\s+|later\s+|"
                                  r"subsequently\s+|eventually\s+)?(?:discontinued|stopped|held|d/c'?d|tapered\s+off|"
                                  r"weaned\s+off|withdrawn)\b|\b(?:he|she|they|we)\s+(?:then\s+|later\s+|"
                                  r"subsequently\s+)?(?:stopped|discontinued|quit|self-discontinued)\s+(?:taking\s+)?"
                                  r"it\b", re.I))


def _it_stopped(sentence: str, end: int) -> bool:
    """Is the drug ending at ``end`` the one a pronoun after it says was stopped, with no other drug between?"""
    a = _IT_STOPPED.search(sentence, end)
    return a is not None and not medication_mentions(sentence[end:a.start()])


#: A bounded course told in the simple past right after the drug: "then was switched to ASA for 1 year",
#: "was treated with lithium for two years", "remained on Coumadin for 3 months", "he continued on phenobarbital;
#: however, for a long period of time thereafter". A present perfect ("has been
#: on X for 2 years") or a duration up to now ("for the past year") goes on.
_BOUNDED_FOR = re.compile(r"(?:\s+(?:\d+(?:\.\d+)?\s*(?:mg|mcg|g|units?)\b|daily|nightly|a\s+day|"
                          r"b\.?i\.?d\.?|t\.?i\.?d\.?|q\.?d\.?|p\.?o\.?)){0,3}(?:\s*[;,]\s*however,?)?\s+for\s+"
                          r"(?:(?:about|approximately|roughly|nearly|almost|another|an\s+additional)\s+)?(?:(?:\d+|one|two|"
                          r"three|four|five|six|seven|eight|nine|ten|eleven|twelve|a|an|several|a\s+few)\s+(?:more\s+)?"
                          r"(?:weeks?|months?|years?)\b|(?:a\s+)?long\s+(?:period\s+(?:of\s+)?)?time\b|"
                          r"a\s+long\s+period\b|(?:many\s+)?years\s+(?:thereafter|afterwards?)\b)", re.I)
_SIMPLE_PAST = re.compile(r"\b(?:was|were)\s+(?:then\s+|later\s+|subsequently\s+)?(?:switched|changed|converted|"
                          r"transitioned|treated|maintained|kept|continued|placed|put)\b|\b(?:remained|stayed|took|"
                          r"received|used)\b|\b(?:he|she|they|patient)\s+(?:then\s+)?continued\b", re.I)
_GOES_ON = re.compile(r"\b(?:has|have|had)\s+been\b|\b(?:is|are|now|still|currently)\b|\bfor\s+the\s+"
                      r"(?:past|last)\b|\b(?:will|to\s+continue|prescribed|started|begun|began)\b", re.I)


def _bounded_past_course(sentence: str, start: int, end: int) -> bool:
    """Is the drug at ``sentence[start:end]`` taken for a bounded time told in the simple past ("was switched to
    ASA for 1 year")? The narrator tells the whole course, so it is over."""
    lo, hi = clause_bounds(sentence, start)
    if not _BOUNDED_FOR.match(sentence, end):
        return False
    before = sentence[lo:start]
    return bool(_SIMPLE_PAST.search(before)) and not _GOES_ON.search(sentence[lo:hi])


#: A stop in the base form (an order) before the drug, and a deadline still to come: "discontinue all Ativan prior
#: to discharge", "taper off clonazepam before her discharge", and the drugs of a class named after the deadline
#: ("... prior to discharge, benzodiazepine use"). A stop told in the past tense ("Haldol was discontinued prior
#: to discharge") is a stop that happened.
_BASE_STOP = re.compile(r"\b(?:discontinue|stop|taper|wean|d/c)\b(?:\s+off)?(?:\s+of)?(?!\w)", re.I)
_DEADLINE = re.compile(r"\b(?:prior to|before|by)\s+(?:the\s+time\s+of\s+)?(?:(?:his|her|their|the)\s+)?"
                       r"(?:discharge|next\s+(?:visit|appointment))\b", re.I)


def _stop_by_deadline(sentence: str, start: int, end: int) -> bool:
    """Is the drug at ``sentence[start:end]`` the object of an ordered stop with a deadline still to come?"""
    lo, hi = clause_bounds(sentence, start)
    stops = list(_BASE_STOP.finditer(sentence, lo, start))
    if not stops or len(sentence[stops[-1].end():start].split()) > 8:
        return False
    between = _DEADLINE.search(sentence, stops[-1].end(), start)
    tail = sentence[end:min(hi, end + 60)]
    d = _DEADLINE.search(tail)
    after = d is not None and len(tail[:d.start()].split()) <= 5
    return bool(between or after)


#: The ConText rule of a proposed or considered change of a drug the patient takes ("consider tapering X").
_PROPOSED_CHANGE = "cur.proposed_change"
#: Historical triggers that are only the plain past tense of being on a drug ("he was on", "she was taking").
_NARRATIVE_PAST = frozenset({"hist.was_on"})


def _list_tense_only(ctx: ContextResult, listed: str | None) -> bool:
    """In a current medication list the plain past tense of being on a drug is the narrative's, not the drug's
    ("MEDICATIONS: On discharge included: ... He was on nicotine patch 21 mg"): the list decides. A past marker
    ("previously", "used to", "had been on", "tried", "stopped") still makes the drug past."""
    if listed != "current":
        return False
    by_id = default_engine().by_id
    hist = {t for t in ctx.trigger_ids if by_id[t].category == "historical"}
    return bool(hist) and hist <= _NARRATIVE_PAST


def _plan_after(ctx: ContextResult, stop: str) -> bool:
    """Does a plan trigger (future, recommending, conditional or uncertain: "will start", "consider") come after
    the stopping trigger ``stop``, nearer a drug that follows both? A warning ("risk of") is no plan."""
    by_id = default_engine().by_id
    plans = [i for i, t in enumerate(ctx.trigger_ids) if t != "hyp.prevention"
             and by_id[t].category in ("hypothetical", "possible")]
    return bool(plans) and plans[-1] > ctx.trigger_ids.index(stop)


def condition_denial(m: Mention) -> Evidence | None:
    """Evidence that the patient denies ever having a condition, or None: a negated patient mention ("denies a
    history of stroke", "No past psychiatric history") or a field answered "None" ("PAST PSYCHIATRIC HISTORY:
    None."); a relative's condition, a hypothetical one, or any denial in the family history (it speaks of the
    relatives: "denies any psychiatric problems in family") is no denial of the patient's."""
    if m.sentence.section == "family_history":
        return None
    if in_prompt(m):
        return m.evidence("cue.answer_negative") if m.sentence.answer == "negative" else None
    ctx = classify_in_sentence(m.sentence.text, m.start, m.end, "diagnosis")
    if (not ctx.negated or ctx.hypothetical or ctx.experiencer != "patient"
            or is_family(m.sentence, m.start, ctx, m.patient_sex)):
        return None
    return m.evidence(_context_rule(ctx, "negated"))


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


# ---------------------------------------------------------------------------------------------------------------
# Resolution: one status per fact from the statuses of its mentions


def _position(d: Decision[V]) -> int:
    return d.evidence.start if d.evidence.start is not None else -1


def _decided(rule_id: str) -> bool:
    """Did a cue, a section or a time decide (not the default)?"""
    return rule_id != "default"


def resolve_diagnosis(votes: Sequence[DiagnosisStatus]) -> DiagnosisStatus:
    """The status of a diagnosis from the statuses of its patient mentions (each with a certainty).

    Precedence: (1) only the mentions in the highest section tier count (``tier`` in
    ``rules/sections/sections.yaml``: diagnosis list and assessment 3, plan 2, history 1, referral question 0):
    the assessment decides over the history and the history over the question that was asked; (2) within that
    tier a mention whose certainty a cue decided ("unlikely", "cannot be ruled out", "rule out", "suspected", and a
    confirmation: "was diagnosed with", "was confirmed") beats a plain mention, and a later mention beats an earlier
    one: the latest decisive statement about the same diagnosis overrides ("suspected X ... later diagnosed with X"
    ends confirmed, "thought to have X ... X was ruled out" ends ruled out).
    The temporality is past only when every confirmed mention of that tier is past; a confirmed past diagnosis
    outside the diagnosis list and the assessment is past history.
    """
    if not votes:
        raise ValueError("a diagnosis needs at least one mention with a certainty")

    def tier(v: DiagnosisStatus) -> int:
        assert v.certainty is not None
        return section_tier(v.certainty.evidence.section or "")

    top = max(tier(v) for v in votes)
    pool = [v for v in votes if tier(v) == top]
    decided = [v for v in pool if v.certainty is not None and _decided(v.certainty.evidence.rule_id)]
    ordered = sorted(decided or pool, key=lambda v: _position(v.certainty) if v.certainty else -1)
    win = ordered[-1]
    assert win.certainty is not None
    if win.certainty.value != Certainty.confirmed:
        return dataclasses.replace(win, history=False)
    confirmed = [v for v in pool if v.certainty is not None and v.certainty.value == Certainty.confirmed]
    current = [v for v in confirmed if v.temporality.value == Temporality.current]
    if current:
        last = max(current, key=lambda v: _position(v.temporality))
        return DiagnosisStatus(win.owner, win.certainty, last.temporality, history=False, remitted=False)
    return DiagnosisStatus(win.owner, win.certainty, win.temporality,
                           history=any(v.history for v in confirmed) and top < max(
                               section_tier(x) for x in deciding_sections()),
                           remitted=any(v.remitted for v in confirmed))


#: Rule ids that stop a treatment: in the plan, such a mention is a decision of this visit ("Discontinue X").
_STOPPING = ("context.hist.stop", "cue.it_stopped", "cue.latter_stopped")


def _plan_decision(d: Decision[TreatmentStatus]) -> bool:
    if d.value == TreatmentStatus.past:
        return d.evidence.rule_id.startswith(_STOPPING)
    return True


def _considered(d: Decision[TreatmentStatus]) -> bool:
    """Was the planned status only a consideration ("consider X", "may benefit from X"), not an order?"""
    rule = d.evidence.rule_id or ""
    return rule.startswith(("context.poss.", "context.hyp.consider"))


def resolve_treatment(votes: Sequence[Decision[TreatmentStatus]], *,
                      current_list: bool = False) -> Decision[TreatmentStatus]:
    """The status of a treatment from the statuses of its mentions.

    Precedence: (1) a decision of the plan, the assessment or the discharge list (``treatment_decisions`` in
    ``rules/sections/sections.yaml``): continue,
    start, stop, recommend, refused -- the last one a cue decided when several, else the last (a past mention
    there that only recalls the history is no decision), except a planned one for a drug of the current
    medication list, which the patient takes already; (2) being listed in a current medication list (as
    needed when so ordered); (3)
    being listed in a home list: past when the note also has a current list and the drug is not on it
    (``section.home_medications.not_continued``), else current; a drug only started in an earlier stage of the
    story ("At that point, Dr. X started Vigabatrin") is likewise past when the note has a current list
    (``cue.started_then.not_listed``); (4) the last mention a cue, a section or a time
    decided (tried, stopped, previously on, planned, refused, one dose); (5) current.
    """
    if not votes:
        raise ValueError("a treatment needs at least one status")
    ordered = sorted(votes, key=_position)
    taken = (TreatmentStatus.current, TreatmentStatus.prn)
    listed = [d for d in ordered if d.value in taken and medication_list(d.evidence.section or "") == "current"]
    plan = [d for d in ordered if decides_treatment(d.evidence.section or "") and _plan_decision(d)]
    if plan:
        # a plain mention after a cue ("suggest Prozac ... supplement the Prozac with ...") repeats the decision
        cued = [d for d in plan if _decided(d.evidence.rule_id)]
        decision = (cued or plan)[-1]
        # a drug of the current medication list is taken already: a plan that would have it taken only if
        # needed or later ("take an extra Percocet if needed") speaks of further doses, not of a drug to start
        if not (decision.value == TreatmentStatus.planned and listed):
            # likewise a drug the history says the patient takes now ("has been trying Tylenol"): a plan to
            # start it "if needed" speaks of further doses
            taking = [d for d in ordered if d.value in taken and d.evidence.rule_id == "context.cur.taking"
                      and not decides_treatment(d.evidence.section or "")]
            if decision.value == TreatmentStatus.planned and taking:
                return taking[-1]
            # "He is on sertraline ... Consider sertraline increase": a drug only considered again is the drug
            # the note says the patient takes, not one planned anew
            told = [d for d in ordered if d.value in taken and (d.evidence.rule_id or "").startswith("context.cur.")
                    and not decides_treatment(d.evidence.section or "")]
            if decision.value == TreatmentStatus.planned and told and _considered(decision):
                return told[-1]
            return decision
    if listed:
        return next((d for d in listed if d.value == TreatmentStatus.prn), listed[0])
    home = [d for d in ordered if d.value in taken and medication_list(d.evidence.section or "") == "home"]
    if home:
        if current_list:
            ev = home[0].evidence.model_copy(update={"rule_id": "section.home_medications.not_continued"})
            return Decision(TreatmentStatus.past, ev)
        return home[0]
    decided = [d for d in ordered if _decided(d.evidence.rule_id)]
    if current_list and all(d.evidence.rule_id == STARTED_THEN for d in ordered if d.value in taken) \
            and decided and decided[-1].evidence.rule_id == STARTED_THEN:
        # started in an earlier stage of the story and left out of the current medication list: replaced since
        ev = decided[-1].evidence.model_copy(update={"rule_id": f"{STARTED_THEN}.not_listed"})
        return Decision(TreatmentStatus.past, ev)
    if decided:
        return decided[-1]
    return ordered[0]
