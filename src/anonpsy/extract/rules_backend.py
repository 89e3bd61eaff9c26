"""The deterministic (rules) backend of extraction E: narrative text → case graph.

Each step is a small pure function over the segmented text; the lexicons, ConText triggers, DSM aliases and
treatment classes come from ``rules/``. The result is normalised by the core temporal engine by the caller.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar

from anonpsy import lexicon
from anonpsy.context_rules import classify
from anonpsy.extract.segment import Sentence, sentences
from anonpsy.graph import (
    STEB,
    ArrivalMode,
    CaseGraph,
    Demographics,
    Diagnosis,
    Duration,
    Edge,
    FamilyHistory,
    HistoryStatus,
    LegalStatus,
    PastHistory,
    RelationType,
    Route,
    SafetyFlag,
    Setting,
    Sex,
    Symptom,
    TestResults,
    Treatment,
    TreatmentType,
    VisitEvent,
)
from anonpsy.rules import dsm as dsm_rules
from anonpsy.rules import tables
from anonpsy.temporal import TimeSpec, parse_expression

# ---------------------------------------------------------------------------------------------------------------
# Demographics

_AGE_PATTERNS = [
    re.compile(r"\b(\d{1,3})[- ](?:year|yr)s?[- ]old\b", re.I),
    re.compile(r"\b(\d{1,3})\s?(?:yo|y/o|y\.o\.)(?!\w)", re.I),
    re.compile(r"\b(?:aged|age:?)\s(\d{1,3})\b", re.I),
    re.compile(r"\bage\s+of\s+(\d{1,3})\b(?![^.]*\b(?:when|at the time)\b)", re.I),
]
_DECADE = re.compile(r"\bin (?:his|her|their) (early |mid-?|late )?(twenties|thirties|forties|fifties|sixties|"
                     r"seventies|eighties|nineties|teens|20s|30s|40s|50s|60s|70s|80s|90s)\b", re.I)
_DECADES = {"teens": 15, "twenties": 25, "thirties": 35, "forties": 45, "fifties": 55, "sixties": 65,
            "seventies": 75, "eighties": 85, "nineties": 95}
_FEMALE = re.compile(r"\b(she|her|hers|herself|woman|female|girl|lady|mrs|ms|miss|mother of|wife|daughter|"
                     r"sister|pregnant|postpartum)\b", re.I)
_MALE = re.compile(r"\b(he|him|his|himself|man|male|boy|gentleman|mr|father of|husband|son|brother)\b", re.I)


def extract_age(sents: list[Sentence]) -> int | None:
    for s in sents[:12]:
        for pat in _AGE_PATTERNS:
            m = pat.search(s.text)
            if m and 0 <= int(m.group(1)) <= 120:
                return int(m.group(1))
    for s in sents[:12]:
        m = _DECADE.search(s.text)
        if m:
            word = m.group(2).lower()
            base = _DECADES.get(word) or int(word[:2]) + 5
            mod = (m.group(1) or "").strip().lower()
            return base - 3 if mod == "early" else base + 3 if mod == "late" else base
    return None


def extract_sex(text: str) -> Sex:
    """Sex from pronouns, nouns and titles, weighting the patient-describing opening lines."""
    head = text[:600]
    f = len(_FEMALE.findall(text)) + 3 * len(_FEMALE.findall(head))
    m = len(_MALE.findall(text)) + 3 * len(_MALE.findall(head))
    if f == m == 0:
        return Sex.unknown
    if f > 1.5 * m:
        return Sex.female
    if m > 1.5 * f:
        return Sex.male
    return Sex.unknown


_OCC_CUE = re.compile(r"\b(?:works?|worked|working|employed)\s+(?:as|at)\b|\bretired\b|\bunemployed\b|"
                      r"\bstudent\b|\boccupation\b|\bby profession\b|\bis an?\b", re.I)


def extract_occupation(sents: list[Sentence]) -> str | None:
    for s in sents:
        if s.section not in ("hpi", "social_history", "chief_complaint"):
            continue
        matches = lexicon.find_terms(s.text, "occupation")
        if matches and (_OCC_CUE.search(s.text) or s.section == "social_history"):
            return matches[0].surface.lower()
    return None


def extract_ethnicity(sents: list[Sentence]) -> str | None:
    for s in sents[:8]:
        matches = lexicon.find_terms(s.text, "ethnicity")
        if matches:
            return matches[0].surface
    return None


def extract_family_structure(sents: list[Sentence]) -> str | None:
    for s in sents:
        matches = lexicon.find_terms(s.text, "family")
        if matches:
            return matches[0].surface.lower()
    return None


# ---------------------------------------------------------------------------------------------------------------
# Visit


_SETTING_CUES: list[tuple[re.Pattern[str], Setting]] = [
    (re.compile(r"\b(?:emergency (?:department|room)|ED\b|ER\b|psychiatric emergency|CPEP|crisis center)", re.I),
     Setting.emergency_department),
    (re.compile(r"\b(?:consult(?:ation)?[- ]liaison|psychiatry (?:was )?consulted|psychiatry consult(?: note)?|"
                r"reason for consult|consulted (?:by|for)|medical (?:floor|ward)|medicine service|"
                r"surgical (?:floor|ward)|(?:orthopedic|surgery|medicine) ward|ICU)\b", re.I),
     Setting.consultation_liaison),
    (re.compile(r"\b(?:admitted to (?:the )?(?:inpatient|psychiatric|locked|acute)|inpatient (?:psychiatric )?unit|"
                r"psychiatric (?:unit|ward|hospitali[sz]ation)|on the unit|discharge summary|hospital course|"
                r"inpatient admission)\b", re.I), Setting.inpatient),
    (re.compile(r"\b(?:forensic|detention center|jail|correctional|prior to sentencing|competency evaluation)\b",
                re.I), Setting.forensic),
    (re.compile(r"\b(?:telehealth|telepsychiatry|video visit)\b", re.I), Setting.telehealth),
    (re.compile(r"\bresidential (?:treatment|program)\b", re.I), Setting.residential),
    (re.compile(r"\b(?:outpatient|clinic|follow[- ]up|office visit|returns? for|medication management|"
                r"med management|initial evaluation|psychiatric evaluation|consultation|diagnostic evaluation|"
                r"SOAP note|seen (?:today|in (?:the )?office))\b", re.I), Setting.outpatient),
]
_ARRIVAL_CUES: list[tuple[re.Pattern[str], ArrivalMode]] = [
    (re.compile(r"\b(?:brought (?:in )?by (?:the )?police|police (?:brought|escorted)|by law enforcement|"
                r"escorted by (?:police|officers)|(?:brought|transported) by (?:police )?officers|"
                r"police (?:were called|responded))\b", re.I), ArrivalMode.police),
    (re.compile(r"\b(?:by ambulance|via ambulance|EMS|paramedics)\b", re.I), ArrivalMode.ambulance),
    (re.compile(r"\b(?:brought (?:in )?by (?:his |her |their )?(?:mother|father|parents?|wife|husband|partner|"
                r"family|sister|brother|daughter|son|girlfriend|boyfriend|roommate|friend)|accompanied by (?:his |her "
                r"|their )?(?:mother|father|parents?|wife|husband|partner|family|sister|brother|daughter|son))", re.I),
     ArrivalMode.family),
    (re.compile(r"\btransferred from\b", re.I), ArrivalMode.transfer),
    (re.compile(r"\b(?:referred (?:by|from)|referral|at the request of|referring clinician|reason for referral)\b",
                re.I), ArrivalMode.referral),
    (re.compile(r"\b(?:scheduled|follow[- ]up|returns for|here for)\b", re.I), ArrivalMode.scheduled),
    (re.compile(r"\b(?:self[- ]referred|presented on (?:his|her|their) own|walked in|self-presented|"
                r"came (?:in )?on (?:his|her|their) own)\b", re.I), ArrivalMode.self),
]
_LEGAL_CUES: list[tuple[re.Pattern[str], LegalStatus]] = [
    (re.compile(r"\b(?:court[- ]ordered|court order|committed by the court|prior to sentencing|Superior Court|"
                r"District Court|Judge)\b", re.I), LegalStatus.court_ordered),
    (re.compile(r"\binvoluntar(?:y|ily)\b", re.I), LegalStatus.involuntary),
    (re.compile(r"\b(?:5150|section 12|legal hold|emergency hold|72[- ]hour hold|pink slip|emergency detention|"
                r"mental health (?:act|hold)|placed on a hold|on a hold)\b", re.I), LegalStatus.legal_hold),
    (re.compile(r"\bvoluntar(?:y|ily)\b", re.I), LegalStatus.voluntary),
]
#: Settings where, absent any legal cue, care is voluntary by default.
_VOLUNTARY_BY_DEFAULT = {Setting.outpatient, Setting.telehealth, Setting.community, Setting.residential,
                         Setting.consultation_liaison}
_SAFETY_FROM_HEADWORD: dict[str, SafetyFlag] = {
    "suicidal ideation": SafetyFlag.suicidal_ideation, "suicide plan": SafetyFlag.suicidal_ideation,
    "suicide attempt": SafetyFlag.suicide_attempt, "passive death wish": SafetyFlag.suicidal_ideation,
    "self-harm": SafetyFlag.self_harm, "homicidal ideation": SafetyFlag.homicidal_ideation,
    "violent behavior": SafetyFlag.violence, "threats of violence": SafetyFlag.violence,
    "aggression": SafetyFlag.violence, "intoxication": SafetyFlag.intoxication,
}
_SOURCES = re.compile(r"\b(?:history (?:was )?(?:obtained|provided|taken) from|per|according to|collateral (?:from|"
                      r"information from))\s+(?:the\s+)?((?:patient|chart|records?|(?:his|her|their)\s+\w+|"
                      r"family|parents?|mother|father|wife|husband|police|EMS|staff|teachers?|school)"
                      r"(?:\s*(?:,|and)\s*(?:the\s+)?(?:patient|chart|records?|(?:his|her|their)\s+\w+|family|"
                      r"parents?|mother|father|wife|husband|police|EMS|staff|teachers?|school))*)", re.I)


_V = TypeVar("_V")
_D = TypeVar("_D")


def _first_cue(text: str, cues: Sequence[tuple[re.Pattern[str], _V]], default: _D) -> _V | _D:
    best: tuple[int, _V] | None = None
    for pat, value in cues:
        m = pat.search(text)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), value)
    return best[1] if best else default


def _priority_cue(text: str, cues: Sequence[tuple[re.Pattern[str], _V]]) -> _V | None:
    for pat, value in cues:
        if pat.search(text):
            return value
    return None


def extract_visit(text: str, sents: list[Sentence], current_headwords: set[str]) -> VisitEvent:
    """Visit scaffold from cues: the note's heading decides first (by priority), then the earliest cue in the
    chief complaint / history, then anywhere."""
    heading = text[:500]
    head = " ".join(s.text for s in sents if s.section in ("chief_complaint", "hpi"))[:3000] or text[:3000]
    setting: Setting = (_priority_cue(heading, _SETTING_CUES) or _first_cue(head, _SETTING_CUES, None)
                        or _first_cue(text, _SETTING_CUES, Setting.unknown))
    arrival: ArrivalMode = (_priority_cue(heading, _ARRIVAL_CUES[:5]) or _first_cue(head, _ARRIVAL_CUES, None)
                            or _first_cue(text, _ARRIVAL_CUES, ArrivalMode.unknown))
    legal = _priority_cue(text, _LEGAL_CUES) or (
        LegalStatus.voluntary if setting in _VOLUNTARY_BY_DEFAULT or arrival in (ArrivalMode.scheduled,
                                                                                  ArrivalMode.referral)
        else LegalStatus.unknown)
    flags = sorted({_SAFETY_FROM_HEADWORD[h] for h in current_headwords if h in _SAFETY_FROM_HEADWORD},
                   key=lambda f: f.value)
    sources: list[str] = []
    m = _SOURCES.search(text)
    if m:
        sources = [x.strip() for x in re.split(r",|\band\b", m.group(1)) if x.strip()]
    reason = None
    for s in sents:
        if s.section == "chief_complaint":
            reason = s.text.strip().strip('"').rstrip(".")
            break
    return VisitEvent(
        setting=setting,
        arrival_mode=arrival,
        legal_status=legal,
        reason_for_visit=reason,
        safety_flags=flags,
        source_of_information=sources,
    )


# ---------------------------------------------------------------------------------------------------------------
# STEB


_SITUATION = re.compile(r"\b((?:when|while|after|following|whenever|during|since|before|in the context of|"
                        r"at the time of)\b[^,;.]{3,120})", re.I)
_THOUGHT = re.compile(r"\b((?:believes?|believed|thinks?|thought(?!\s+(?:broadcasting|insertion|withdrawal|"
                      r"blocking|content|process|disorder))|worrie[sd]|worry|fear(?:s|ed)?|is convinced|"
                      r"was convinced|is certain|was certain|feels? that|felt that|insists?|insisted)\s+(?:that\s+)?"
                      r"[^;.]{3,160})", re.I)
_BEHAVIOR_VERBS = re.compile(r"\b((?:stopped|started|began|refused|left|quit|locked|barricaded|called|ran|hid|"
                             r"stayed|avoided|avoids|checks|checked|washes|washed|threw|broke|hit|punched|cut|"
                             r"burned|drank|took|ingested|overdosed|isolated|isolates|paced|screamed|yelled|"
                             r"wandered|missed|skipped|spent|shouted|attacked|fled|pushed|smashed|stole|lied)"
                             r"\b[^,;.]{0,100})", re.I)


def extract_steb(sentence: str, span: tuple[int, int]) -> STEB | None:
    """STEB frame from clause patterns around a symptom mention; None when no field is found."""
    situation = thought = emotion = behavior = None
    m = _SITUATION.search(sentence)
    if m:
        situation = m.group(1).strip()
    m = _THOUGHT.search(sentence)
    if m and not (m.start() <= span[0] < m.end() and m.group(1).lower().startswith(("feel", "felt"))):
        thought = m.group(1).strip()
    emotions = lexicon.find_terms(sentence, "emotion")
    if emotions:
        emotion = emotions[0].surface.lower()
    m = _BEHAVIOR_VERBS.search(sentence)
    if m:
        behavior = m.group(1).strip()
    if not any((situation, thought, emotion, behavior)):
        return None
    return STEB(situation=situation, thought=thought, emotion=emotion, behavior=behavior)


# ---------------------------------------------------------------------------------------------------------------
# Diagnoses


@lru_cache(maxsize=1)
def _dx_matcher() -> tuple[re.Pattern[str], dict[str, str]]:
    names: dict[str, str] = {}
    for rule in dsm_rules.load_dsm().values():
        for alias in [rule.name, *rule.aliases]:
            key = alias.strip().lower()
            if len(key) < 3 and not alias.isupper():
                continue
            names.setdefault(key, rule.id)
    alts = sorted(names, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w-])(" + "|".join(re.escape(a) for a in alts) + r")(?![\w-])", re.I)
    return pattern, names


def find_diagnoses(text: str) -> list[tuple[int, int, str]]:
    pattern, names = _dx_matcher()
    out = []
    for m in pattern.finditer(text):
        surface = m.group(1)
        key = surface.lower()
        # Short all-caps abbreviations (MDD, GAD, OCD) must be written in capitals.
        if len(key) <= 5 and not surface.isupper() and " " not in key:
            continue
        out.append((m.start(1), m.end(1), names[key]))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Extraction


@dataclass
class _Acc:
    symptoms: dict[str, Symptom] = field(default_factory=dict)
    durations: list[Duration] = field(default_factory=list)
    diagnoses: dict[str, Diagnosis] = field(default_factory=dict)
    treatments: dict[str, Treatment] = field(default_factory=dict)
    past: dict[str, PastHistory] = field(default_factory=dict)
    family: list[FamilyHistory] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    mentions: dict[str, int] = field(default_factory=dict)  # node id -> first sentence index
    med_class: dict[str, str] = field(default_factory=dict)  # treatment id -> medication class id

    def duration_for(self, spec: TimeSpec) -> str:
        for d in self.durations:
            if (d.offset, d.span, d.unit, d.ongoing) == (spec.offset, spec.span, spec.unit, spec.ongoing):
                return d.id
        did = f"d{len(self.durations) + 1}"
        self.durations.append(Duration(id=did, offset=spec.offset, span=spec.span, unit=spec.unit,
                                       ongoing=spec.ongoing))
        return did


@lru_cache(maxsize=1)
def _therapy_types() -> dict[str, str]:
    return {e.id: e.type for e in lexicon.therapy_lexicon().rules}


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")[:40] or "x"


_HISTORICAL_SECTIONS = {"past_psych", "past_medical"}
_NON_CLINICAL_SECTIONS = {"family_history", "medications", "allergies", "labs"}
_PAST_TENSE_CUE = re.compile(r"\b(?:in the past|previously|prior|history of|h/o|at age|as a child|in childhood|"
                             r"years ago|used to|remote|former(?:ly)?|last year)\b", re.I)


def extract(text: str, *, case_id: str = "case") -> CaseGraph:
    """Rules-backend extraction of a case graph from narrative text (not yet temporally normalised)."""
    sents = sentences(text)
    age = extract_age(sents)
    sex = extract_sex(text)
    acc = _Acc()
    tests = TestResults()
    labs: list[str] = []
    mse: list[str] = []
    other_tests: list[str] = []

    for s in sents:
        spec = parse_expression(s.text, age=age)
        if s.section == "mse":
            mse.append(s.text.strip())
        elif s.section == "labs":
            labs.append(s.text.strip())
        elif re.search(r"\b(?:PHQ-9|GAD-7|MMSE|MoCA|HAM-?D|MADRS|YMRS|Y-BOCS|PCL-5|AUDIT|CIWA|COWS|BDI|PANSS|"
                       r"EPDS|lithium level|level (?:of|was))\b[^.]{0,30}\d", s.text, re.I):
            other_tests.append(s.text.strip())
        _symptoms(s, spec, age, acc)
        _diagnoses(s, spec, acc)
        _treatments(s, spec, acc)
    _relations(text, sents, acc)

    current = {sx.headword for sx in acc.symptoms.values() if sx.current_symptom}
    visit = extract_visit(text, sents, current)
    tests = TestResults(labs=" ".join(labs) or None, mental_status=" ".join(mse) or None,
                        other=" ".join(other_tests) or None)
    return CaseGraph(
        case_id=case_id,
        demographics=Demographics(age=age, sex=sex, ethnicity=extract_ethnicity(sents),
                                  occupation=extract_occupation(sents),
                                  family_structure=extract_family_structure(sents)),
        test_results=tests,
        family_history=acc.family,
        diagnoses=list(acc.diagnoses.values()),
        symptoms=list(acc.symptoms.values()),
        treatments=list(acc.treatments.values()),
        past_history=list(acc.past.values()),
        visit_event=visit,
        durations=acc.durations,
        edges=_dedupe_edges(acc.edges),
    )


def _dedupe_edges(edges: list[Edge]) -> list[Edge]:
    return list({e.key(): e for e in edges}.values())


def _symptoms(s: Sentence, spec: TimeSpec | None, age: int | None, acc: _Acc) -> None:
    if s.section in _NON_CLINICAL_SECTIONS:
        return
    for m in lexicon.find_terms(s.text, "symptom"):
        ctx = classify(s.text, m.start, m.end)
        if ctx.negated or ctx.hypothetical:
            continue
        if ctx.experiencer != "patient":
            if ctx.experiencer == "family":
                acc.family.append(FamilyHistory(member=ctx.family_member or "relative", condition=m.headword,
                                                evidence_text=s.text.strip()))
            continue
        historical = ctx.historical or s.section in _HISTORICAL_SECTIONS or bool(_PAST_TENSE_CUE.search(s.text))
        sid = f"sx_{_slug(m.headword)}"
        frame = extract_steb(s.text, (m.start, m.end))
        sx = acc.symptoms.get(sid)
        if sx is None:
            sx = Symptom(id=sid, headword=m.headword, current_symptom=not historical, evidence_text=s.text.strip())
            acc.symptoms[sid] = sx
            acc.mentions[sid] = s.index
        elif not historical:
            sx.current_symptom = True
        if spec is not None and not (historical and spec.ongoing):
            did = acc.duration_for(spec)
            if did not in sx.duration_ids:
                sx.duration_ids = [*sx.duration_ids, did]
        if frame is not None and len(sx.contexts) < 3 and frame not in sx.contexts:
            sx.contexts = [*sx.contexts, frame]


def _diagnoses(s: Sentence, spec: TimeSpec | None, acc: _Acc) -> None:
    rules = dsm_rules.load_dsm()
    for start, end, rule_id in find_diagnoses(s.text):
        ctx = classify(s.text, start, end)
        if ctx.negated or ctx.hypothetical:
            continue
        rule = rules[rule_id]
        if ctx.experiencer == "family":
            acc.family.append(FamilyHistory(member=ctx.family_member or "relative", condition=rule.name,
                                            evidence_text=s.text.strip()))
            continue
        if ctx.experiencer != "patient":
            continue
        historical = ctx.historical or s.section in _HISTORICAL_SECTIONS
        if historical and s.section != "assessment":
            pid = f"ph_{_slug(rule.id)}"
            if pid not in acc.past and f"dx_{_slug(rule.id)}" not in acc.diagnoses:
                status = HistoryStatus.remitted if re.search(r"\bremission|remitted|resolved\b", s.text, re.I) \
                    else HistoryStatus.pre_existing
                ids = [acc.duration_for(spec)] if spec is not None and not spec.ongoing else []
                acc.past[pid] = PastHistory(id=pid, condition=rule.name, status=status, duration_ids=ids,
                                            evidence_text=s.text.strip())
            continue
        did = f"dx_{_slug(rule.id)}"
        if did not in acc.diagnoses:
            spec_text = re.findall(r"\bwith (?:peripartum onset|psychotic features|anxious distress|mixed features|"
                                   r"seasonal pattern|melancholic features|catatonia)\b", s.text, re.I)
            acc.diagnoses[did] = Diagnosis(id=did, label=rule.name, rule_id=rule.id,
                                           specifiers=[x.lower() for x in spec_text], evidence_text=s.text.strip())
            acc.mentions[did] = s.index
            acc.past.pop(f"ph_{_slug(rule.id)}", None)


def _treatments(s: Sentence, spec: TimeSpec | None, acc: _Acc) -> None:
    for m in lexicon.find_terms(s.text, "medication"):
        ctx = classify(s.text, m.start, m.end)
        if ctx.negated or ctx.hypothetical or ctx.experiencer != "patient":
            continue
        med = lexicon.parse_medication(s.text, m)
        tid = f"tx_{_slug(med.name)}"
        route = med.route
        acc.med_class.setdefault(tid, med.class_id)
        if tid not in acc.treatments:
            acc.treatments[tid] = Treatment(id=tid, type=TreatmentType.medication, name=med.name, dose=med.dose,
                                            route=route, frequency=med.frequency, evidence_text=s.text.strip())
            acc.mentions[tid] = s.index
        t = acc.treatments[tid]
        if spec is not None:
            did = acc.duration_for(spec)
            if did not in t.duration_ids:
                t.duration_ids = [*t.duration_ids, did]
    for m in lexicon.find_terms(s.text, "therapy"):
        ctx = classify(s.text, m.start, m.end)
        if ctx.negated or ctx.hypothetical or ctx.experiencer != "patient":
            continue
        tid = f"tx_{_slug(m.id)}"
        if tid not in acc.treatments:
            ttype = _therapy_types().get(m.id, "psychotherapy")
            acc.treatments[tid] = Treatment(id=tid, type=TreatmentType(ttype), name=m.headword,
                                            route=Route.not_applicable, evidence_text=s.text.strip())
            acc.mentions[tid] = s.index


_CAUSAL = re.compile(r"\b(?:due to|secondary to|induced by|caused by|triggered by|precipitated by|in the context of|"
                     r"after (?:starting|using|smoking|taking|drinking)|following (?:use of|heavy)|withdrawal from)\b",
                     re.I)
_SUBSTANCE_DX = re.compile(r"(?:substance|medication|alcohol|cannabis|stimulant|methamphetamine|cocaine|opioid)"
                           r"[- ]induced|withdrawal|intoxication", re.I)


def _relations(text: str, sents: list[Sentence], acc: _Acc) -> None:
    rules = dsm_rules.load_dsm()
    # MANIFESTS_AS from the per-diagnosis symptom sets.
    for dx in acc.diagnoses.values():
        rule = rules.get(dx.rule_id or "")
        if rule is None:
            continue
        wanted = {h.lower() for h in rule.symptoms}
        for sx in acc.symptoms.values():
            if sx.headword.lower() in wanted:
                acc.edges.append(Edge(type=RelationType.MANIFESTS_AS, source=dx.id, target=sx.id))
    # TREATMENT_OF from medication class indications, nearest diagnosis by narrative position on ties.
    for t in acc.treatments.values():
        if t.type != TreatmentType.medication:
            targets = sorted(acc.diagnoses.values(), key=lambda d: abs(acc.mentions.get(d.id, 0)
                                                                       - acc.mentions.get(t.id, 0)))
            if targets:
                acc.edges.append(Edge(type=RelationType.TREATMENT_OF, source=t.id, target=targets[0].id))
            continue
        cls = acc.med_class.get(t.id)
        if cls is None:
            continue
        chapters, rule_ids = tables.class_indications(cls)
        cands = [d for d in acc.diagnoses.values()
                 if (d.rule_id in rule_ids) or (rules.get(d.rule_id or "") is not None
                                                 and rules[d.rule_id or ""].chapter in chapters)]
        cands.sort(key=lambda d: abs(acc.mentions.get(d.id, 0) - acc.mentions.get(t.id, 0)))
        for d in cands[:1]:
            acc.edges.append(Edge(type=RelationType.TREATMENT_OF, source=t.id, target=d.id))
    # INDUCES: etiologic morphology of substance-induced diagnoses and causal cue phrases with verbatim evidence.
    for s in sents:
        cue = _CAUSAL.search(s.text)
        if not cue:
            continue
        before, after = s.text[:cue.start()], s.text[cue.end():]
        effects = _nodes_in(before, acc) or _nodes_in(s.text, acc, kinds=("dx",))
        causes = _nodes_in(after, acc, kinds=("ph", "tx", "sx", "dx"))
        for cause in causes[:1]:
            for effect in effects[:2]:
                if cause == effect:
                    continue
                acc.edges.append(Edge(type=RelationType.INDUCES, source=cause, target=effect,
                                      evidence_text=s.text.strip()))
    for dx in acc.diagnoses.values():
        if not _SUBSTANCE_DX.search(dx.label) or any(e.type == RelationType.INDUCES and e.target == dx.id
                                                    for e in acc.edges):
            continue
        subst = [sx for sx in acc.symptoms.values() if sx.headword.endswith(" use") or sx.headword == "intoxication"]
        for sx in subst[:1]:
            acc.edges.append(Edge(type=RelationType.INDUCES, source=sx.id, target=dx.id,
                                  evidence_text=dx.evidence_text))


def _nodes_in(fragment: str, acc: _Acc, kinds: tuple[str, ...] = ("dx", "sx")) -> list[str]:
    out: list[str] = []
    low = fragment.lower()
    if "dx" in kinds:
        for start, _e, rule_id in find_diagnoses(fragment):
            did = f"dx_{_slug(rule_id)}"
            if did in acc.diagnoses and did not in out:
                out.append(did)
            _ = start
    if "sx" in kinds:
        for m in lexicon.find_terms(fragment, "symptom"):
            sid = f"sx_{_slug(m.headword)}"
            if sid in acc.symptoms and sid not in out:
                out.append(sid)
    if "tx" in kinds:
        for m in lexicon.find_terms(fragment, "medication"):
            tid = f"tx_{_slug(m.headword)}"
            if tid in acc.treatments and tid not in out:
                out.append(tid)
    if "ph" in kinds:
        for pid, ph in acc.past.items():
            if ph.condition.lower() in low and pid not in out:
                out.append(pid)
    return out


def mention_counts(graph: CaseGraph) -> Counter[str]:
    return Counter(s.headword for s in graph.symptoms)
