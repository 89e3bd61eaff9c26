"""The visit event: setting, arrival, legal status, safety flags, sources of information and reason for visit."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TypeVar

from anonpsy import kinship
from anonpsy.caseless import Caseless
from anonpsy.extract.assertion.scope import classify_in_sentence
from anonpsy.extract.sections import Sentence, title_line
from anonpsy.graph import (
    LEGAL_IMPLIED_RULE,
    ArrivalMode,
    Evidence,
    LegalStatus,
    SafetyFlag,
    Setting,
    VisitEvent,
    implied_legal_status,
    legal_status_stated,
)

# The legal status a setting and a way of arriving imply, and whether a graph's status was stated, are the
# graph's own reading (the generator uses them too): they live in anonpsy.graph and are re-exported here.
__all__ = ["extract_visit", "implied_legal_status", "legal_status_stated"]

_SETTING_CUES: list[tuple[re.Pattern[str], Setting]] = [
    (re.compile(r"\b(?:emergency (?:department|room)|ED\b|ER\b|psychiatric emergency|CPEP|crisis center)", re.I),
     Setting.emergency_department),
    (re.compile(r"\b(?:consult(?:ation)?[- ]liaison|C-L psychiatry|psychiatry (?:was )?consulted|"
                r"psychiatry consult(?: note)?|reason for consult|consulted (?:by|for)|medical (?:floor|ward)|"
                r"medicine service|surgical (?:floor|ward)|(?:orthopedic|surgery|medicine) ward|ICU)\b", re.I),
     Setting.consultation_liaison),
    (re.compile(r"\b(?:admitted to (?:the )?(?:inpatient|psychiatric|locked|acute)|inpatient (?:psychiatric )?unit|"
                r"inpatient (?:admission|psychiatry)|psychiatric (?:unit|ward|hospitali[sz]ation)|on the unit|"
                r"discharge summary|hospital course|admission note)\b", re.I), Setting.inpatient),
    (re.compile(r"\b(?:forensic|detention center|jail|correctional|prior to sentencing|competency evaluation)\b",
                re.I), Setting.forensic),
    (re.compile(r"\b(?:telehealth|telepsychiatry|video visit)\b", re.I), Setting.telehealth),
    (re.compile(r"\bresidential (?:treatment|program)\b", re.I), Setting.residential),
    (re.compile(r"\b(?:outpatient|clinic|follow[- ]up|office visit|returns? for|medication management|"
                r"med management|initial evaluation|psychiatric evaluation|consultation|diagnostic evaluation|"
                r"SOAP note|seen (?:today|in (?:the )?office)|intake|new patient evaluation)\b", re.I),
     Setting.outpatient),
]
#: Who may bring a patient in: the family, partners, companions and carers.
_KIN = kinship.alternation(("parent", "sibling", "child", "grandparent", "extended", "collective", "partner",
                            "companion", "carer"))
_ARRIVAL_CUES: list[tuple[re.Pattern[str], ArrivalMode]] = [
    (re.compile(r"\b(?:brought (?:in |to [\w' ]{2,40}?)?by (?:the )?(?:[A-Z][a-z]+ )?(?:police|officers|sheriff|"
                r"law enforcement)|police (?:brought|escorted)|by law enforcement|escorted by (?:police|officers)|"
                r"(?:brought|transported) by (?:police )?officers|police (?:were called|responded)|"
                r"initiated by police)\b", re.I), ArrivalMode.police),
    (re.compile(r"\b(?:by ambulance|via ambulance|EMS|paramedics)\b", re.I), ArrivalMode.ambulance),
    (re.compile(r"\btransferred from\b", re.I), ArrivalMode.transfer),
    (re.compile(r"\b(?:referred (?:by|from)|referring (?:clinician|provider|physician)|referral\s*:|"
                r"reason for referral|at the request of|admitted from (?:her|his|their|the) (?:\w+'s )?"
                r"(?:office|clinic)|sent (?:in )?by (?:her|his|their) (?:pediatrician|physician|doctor|PCP|GP|"
                r"therapist|psychiatrist))", re.I), ArrivalMode.referral),
    (re.compile(rf"\b(?:brought (?:in |to [\w' ]{{2,40}}?)?by (?:his |her |their )?{_KIN}|accompanied by "
                rf"(?:his |her |their )?{_KIN})", re.I), ArrivalMode.family),
    (re.compile(r"\b(?:scheduled|follow[- ]up|returns for|here for)\b", re.I), ArrivalMode.scheduled),
    (re.compile(r"\b(?:self[- ]referred|presented on (?:his|her|their) own|walked in|self-presented|"
                r"came (?:in )?(?:by [\w ]{2,20}? )?on (?:his|her|their) own|walk-in|presented alone)\b", re.I),
     ArrivalMode.self),
]
#: Cues a heading block may carry: the ways of arriving that outrank a scheduled visit or the family's company.
_HEADING_ARRIVAL = _ARRIVAL_CUES[:4]
_LEGAL_CUES: list[tuple[re.Pattern[str], LegalStatus]] = [
    # a court order on custody, visitation or protection settles a family matter; it does not bring the patient
    # to care ("there was a court order giving the mother custody back")
    (re.compile(r"\b(?:(?:court[- ]ordered|court order)(?![^.;]{0,40}?\b(?:custody|visitation|divorce|"
                r"child support|restraining|protective|protection))|committed by the court|prior to sentencing|"
                r"Superior Court|District Court|(?:ordered|referred) by the (?:court|judge)|Honorable Judge)\b", re.I),
     LegalStatus.court_ordered),
    # "involuntary" before a movement or body word is a sign ("mild involuntary movements around her lips"), not
    # a legal status.
    (re.compile(r"\binvoluntarily\b|\binvoluntary\b(?!(?:\s+[\w-]+){0,2}?\s+(?:movements?|motions?|motor|"
                r"muscles?|muscular|jerks?|jerking|twitch\w*|tics?|contractions?|urination|incontinence|"
                r"weight|smil\w*|laugh\w*|crying|grimac\w*|spasms?|tremors?|vocali[sz]ations?|reflex\w*|"
                r"blinking|swallowing|posturing|mouth|lip|tongue|facial))|"
                r"\badmitted (?:on|under) (?:an? )?(?:emergency detention|hold|"
                r"emergency hold|civil commitment)\b", re.I), LegalStatus.involuntary),
    (re.compile(r"\b(?:5150|section 12|legal hold|emergency hold|72[- ]hour hold|pink slip|emergency detention|"
                r"mental health (?:act|hold)|placed on a hold|on a hold)\b", re.I), LegalStatus.legal_hold),
    (re.compile(r"\bvoluntar(?:y|ily)\b", re.I), LegalStatus.voluntary),
]
SAFETY_FROM_HEADWORD: dict[str, SafetyFlag] = {
    "suicidal ideation": SafetyFlag.suicidal_ideation, "suicide plan": SafetyFlag.suicidal_ideation,
    "suicide attempt": SafetyFlag.suicide_attempt, "passive death wish": SafetyFlag.suicidal_ideation,
    "self-harm": SafetyFlag.self_harm, "homicidal ideation": SafetyFlag.homicidal_ideation,
    "violent behavior": SafetyFlag.violence, "threats of violence": SafetyFlag.violence,
    "aggression": SafetyFlag.violence, "intoxication": SafetyFlag.intoxication,
}
#: Flags read from phrases (affirmed, in the history or assessment) rather than from symptoms.
_SAFETY_CUES: list[tuple[re.Pattern[str], SafetyFlag]] = [
    (re.compile(r"\b(?:medically unstable|medical(?:ly)? instability|hemodynamic(?:ally)? unstable|"
                r"(?:requiring|for|needs?) (?:inpatient )?medical stabili[sz]ation|orthostatic instability|"
                r"autonomic instability|risk of (?:seizures and )?death is high)\b", re.I),
     SafetyFlag.medical_instability),
    (re.compile(r"\b(?:gravely disabled|unable to care for (?:him|her|them)sel(?:f|ves)|self-neglect|"
                r"vulnerable adult|financial (?:exploitation|protection)|at risk of exploitation|"
                r"exploited financially)\b", re.I), SafetyFlag.vulnerability),
    (re.compile(r"\b(?:danger to others|threat to others)\b", re.I), SafetyFlag.violence),
]
_SOURCES = re.compile(r"\b(?:history (?:was )?(?:obtained|provided|taken) from|per|according to|collateral (?:from|"
                      r"information from))\s+(?:the\s+)?((?:patient|chart|records?|(?:his|her|their)\s+\w+|"
                      r"family|parents?|mother|father|wife|husband|police|EMS|staff|teachers?|school)"
                      r"(?:\s*(?:,|and)\s*(?:the\s+)?(?:patient|chart|records?|(?:his|her|their)\s+\w+|family|"
                      r"parents?|mother|father|wife|husband|police|EMS|staff|teachers?|school))*)", re.I)
#: The safety cues as they search each sentence.
_SAFETY_SEARCH = [(Caseless(pat), flag) for pat, flag in _SAFETY_CUES]
#: The legal cues and the sources of information as they search the whole note.
_LEGAL_SEARCH = [(Caseless(pat), value) for pat, value in _LEGAL_CUES]
_SOURCES_SEARCH = Caseless(_SOURCES)


_V = TypeVar("_V")
_D = TypeVar("_D")


def _first_cue(text: str, cues: Sequence[tuple[re.Pattern[str], _V]], default: _D) -> _V | _D:
    """The value of the cue that matches first in ``text`` (the earlier cue on a tie), else ``default``."""
    union = _any_cue(tuple(pat for pat, _ in cues))
    if union is not None:
        # one scan: the alternation matches at the first position where any cue does, with the earliest cue there
        m = union.search(text)
        return default if m is None else cues[int(str(m.lastgroup)[1:])][1]
    best: tuple[int, _V] | None = None
    for pat, value in cues:
        m = pat.search(text)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), value)
    return best[1] if best else default


@lru_cache(maxsize=8)
def _any_cue(patterns: tuple[re.Pattern[str], ...]) -> re.Pattern[str] | Caseless | None:
    """The cues as one alternation, each in its own named group (None when their flags differ or a cue refers to
    its own groups, which the alternation would renumber); case-insensitive cues as a :class:`Caseless`."""
    if len({p.flags for p in patterns}) != 1 or any(re.search(r"\\\d|\(\?P[<=]|\(\?[aiLmsux]+\)", p.pattern)
                                                     for p in patterns):
        return None
    union = re.compile("|".join(f"(?P<c{i}>{p.pattern})" for i, p in enumerate(patterns)), patterns[0].flags)
    return Caseless(union) if union.flags & re.I else union


def _priority_cue(text: str, cues: Sequence[tuple[re.Pattern[str], _V]]) -> _V | None:
    for pat, value in cues:
        if pat.search(text):
            return value
    return None


def _legal_status(text: str, sents: list[Sentence], setting: Setting,
                  arrival: ArrivalMode) -> tuple[LegalStatus, Evidence | None]:
    """The legal status the note states, with the sentence that states it (``cue.legal_status.<value>``; the cues
    by priority, the first match of the first cue that matches), else the implied one (``implied.legal_status``)."""
    for pat, value in _LEGAL_SEARCH:
        m = pat.search(text)
        if m is None:
            continue
        s = next((x for x in sents if x.start <= m.start() < x.end), None)
        rule_id = f"cue.legal_status.{value.value}"
        if s is None:
            return value, Evidence(start=m.start(), end=m.end(), rule_id=rule_id)
        return value, Evidence(start=s.start, end=max(s.end, s.start + 1), section=s.section, rule_id=rule_id)
    implied = implied_legal_status(setting, arrival)
    return implied, (None if implied == LegalStatus.unknown else Evidence(rule_id=LEGAL_IMPLIED_RULE))


def extract_visit(text: str, sents: list[Sentence], current_headwords: set[str]) -> VisitEvent:
    """Visit scaffold from cues.

    Setting: the earliest cue in the title line, else the heading (first 500 characters) by priority, then the
    earliest cue in the chief complaint / history, then anywhere. Arrival: a police, ambulance, transfer or
    referral cue in the heading, else the earliest cue in the chief complaint / history, then anywhere. Legal
    status: an explicit cue anywhere, with the sentence that states it as evidence; otherwise voluntary for
    outpatient-like settings and for patients who came on their own, for a booked visit or on a clinician's
    referral (evidence ``implied.legal_status``: never told as a fact of the note); else unknown. Safety flags:
    current, affirmed symptoms (a denied symptom is never current) and affirmed phrases ("medically unstable",
    "gravely disabled").
    """
    heading = text[:500]
    head = " ".join(s.text for s in sents if s.section in ("chief_complaint", "hpi"))[:3000] or text[:3000]
    setting: Setting = (_first_cue(title_line(text), _SETTING_CUES, None) or _priority_cue(heading, _SETTING_CUES)
                        or _first_cue(head, _SETTING_CUES, None) or _first_cue(text, _SETTING_CUES, Setting.unknown))
    arrival: ArrivalMode = (_priority_cue(heading, _HEADING_ARRIVAL) or _first_cue(head, _ARRIVAL_CUES, None)
                            or _first_cue(text, _ARRIVAL_CUES, ArrivalMode.unknown))
    legal, legal_evidence = _legal_status(text, sents, setting, arrival)
    flags = {SAFETY_FROM_HEADWORD[h] for h in current_headwords if h in SAFETY_FROM_HEADWORD}
    for s in sents:
        if s.section in ("family_history", "labs", "medications"):
            continue
        for search, flag in _SAFETY_SEARCH:
            for cue in search.finditer(s.text):
                ctx = classify_in_sentence(s.text, cue.start(), cue.end())
                if not (ctx.negated or ctx.hypothetical or ctx.uncertain or ctx.experiencer != "patient"):
                    flags.add(flag)
    sources: list[str] = []
    m = _SOURCES_SEARCH.search(text)
    if m:
        sources = [x.strip() for x in re.split(r",|\band\b", m.group(1)) if x.strip()]
    reason = None
    for section in ("chief_complaint", "referral"):  # the complaint, else the reason for the referral
        first = next((s for s in sents if s.section == section), None)
        if first is not None:
            reason = first.text.strip().strip('"').rstrip(".")
            break
    return VisitEvent(
        setting=setting,
        arrival_mode=arrival,
        legal_status=legal,
        legal_status_evidence=legal_evidence,
        reason_for_visit=reason,
        safety_flags=sorted(flags, key=lambda f: f.value),
        source_of_information=sources,
    )
