"""Diagnosis, symptom and treatment nodes from one sentence's mentions, their context and their time.

A symptom that is present at the visit but whose only durations lie in the past gets a one-day duration on day 0
(:func:`present_today`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from anonpsy import lexicon
from anonpsy.extract.assembly.accumulator import Accumulator, slug
from anonpsy.extract.assembly.steb import NARRATIVE_SECTIONS, extract_steb
from anonpsy.extract.assertion.status import (
    ASSERTION_PRECEDENCE,
    TREATMENT_PRECEDENCE,
    Mention,
    diagnosis_status,
    stronger,
    symptom_status,
    treatment_status,
)
from anonpsy.extract.mentions.diagnoses import find_diagnoses, is_instrument_name
from anonpsy.extract.mentions.family import condition_words
from anonpsy.extract.mentions.symptoms import symptom_mentions
from anonpsy.extract.mentions.time import TimeMention, governing_time, is_past
from anonpsy.extract.mentions.treatments import medication_mentions, therapy_mentions, therapy_types
from anonpsy.extract.sections import Sentence
from anonpsy.graph import (
    Assertion,
    Diagnosis,
    HistoryStatus,
    PastHistory,
    Route,
    Symptom,
    Temporality,
    Treatment,
    TreatmentType,
    Unit,
)
from anonpsy.rules import dsm as dsm_rules
from anonpsy.temporal import TimeSpec

_NON_CLINICAL_SECTIONS = {"medications", "allergies", "labs"}
_LAB_SURFACE = re.compile(r"\b(?:BAL|BAC|blood alcohol|breathaly[sz]er|UDS|tox(?:icology)? screen|drug screen|"
                          r"positive for)\b", re.I)
_SPECIFIERS = re.compile(r"\bwith (?:peripartum onset|psychotic features|anxious distress|mixed features|"
                         r"seasonal pattern|melancholic features|catatonia)\b", re.I)


def _mention(s: Sentence, start: int, end: int, times: Sequence[TimeMention], acc: Accumulator) -> Mention:
    return Mention(s, start, end, governing_time(s.text, (start, end), times), times, acc.index_is_admission)


def add_symptoms(s: Sentence, times: Sequence[TimeMention], acc: Accumulator) -> None:
    """Symptom nodes of one sentence. A symptom only ever denied or hypothetical is kept aside
    (``acc.unasserted_sx``) with no time, frame or relation; an asserted mention always wins over it."""
    if s.section in _NON_CLINICAL_SECTIONS:
        return
    matches = symptom_mentions(s.text)
    spans = [(m.start, m.end) for m in matches]
    for m in matches:
        if is_instrument_name(s.text, m.start, m.end):
            continue
        mention = _mention(s, m.start, m.end, times, acc)
        status = symptom_status(mention)
        if status.family is not None:
            acc.add_family(status.owner.member, condition_words(m), s.text.strip(), status.family.value,
                           status.family.evidence)
            continue
        decision = status.assertion
        if decision is None:
            continue
        sid = f"sx_{slug(m.headword)}"
        if decision.value in (Assertion.absent, Assertion.hypothetical):
            old = acc.unasserted_sx.get(sid)
            if old is None or stronger(decision.value, old.assertion, ASSERTION_PRECEDENCE):
                acc.unasserted_sx[sid] = Symptom(id=sid, headword=m.headword, assertion=decision.value,
                                              assertion_evidence=decision.evidence, evidence_text=s.text.strip())
            continue
        historical = decision.value == Assertion.historical
        tm = mention.time
        spec = tm.spec if tm is not None else None
        if spec is not None and status.ongoing_onset:
            spec = TimeSpec(spec.offset, None, spec.unit, ongoing=True, coarse=spec.coarse)
        sx = acc.symptoms.get(sid)
        if sx is None:
            sx = Symptom(id=sid, headword=m.headword, current_symptom=not historical, assertion=decision.value,
                         assertion_evidence=decision.evidence, evidence_text=s.text.strip())
            acc.symptoms[sid] = sx
            acc.mentions[sid] = s.index
        else:
            if not historical:
                sx.current_symptom = True
            if stronger(decision.value, sx.assertion, ASSERTION_PRECEDENCE):
                sx.assertion, sx.assertion_evidence = decision.value, decision.evidence
        if not historical:
            acc.present.add(sid)
            if not _LAB_SURFACE.search(m.surface):
                acc.flaggable.add(m.headword)
        if spec is not None and not (historical and spec.ongoing):
            did = acc.duration_for(spec)
            if did not in sx.duration_ids:
                sx.duration_ids = [*sx.duration_ids, did]
        if s.section in NARRATIVE_SECTIONS:
            frame = extract_steb(s.text, (m.start, m.end), spans)
            if frame is not None and len(sx.contexts) < 3 and frame not in sx.contexts:
                sx.contexts = [*sx.contexts, frame]


def add_diagnoses(s: Sentence, times: Sequence[TimeMention], acc: Accumulator) -> None:
    """Diagnosis nodes of one sentence; a past diagnosis outside the assessment is past history; a relative's
    goes to the family history; one only ever ruled out is kept aside (``acc.unasserted_dx``)."""
    rules = dsm_rules.load_dsm()
    for start, end, rule_id in find_diagnoses(s.text):
        rule = rules[rule_id]
        mention = _mention(s, start, end, times, acc)
        status = diagnosis_status(mention)
        if status.family is not None:
            acc.add_family(status.owner.member, s.text[start:end], s.text.strip(), status.family.value,
                           status.family.evidence)
            continue
        certainty = status.certainty
        if certainty is None:
            continue
        did = f"dx_{slug(rule.id)}"
        if not certainty.value.is_asserted():
            if did not in acc.unasserted_dx:
                acc.unasserted_dx[did] = Diagnosis(id=did, label=rule.name, rule_id=rule.id, certainty=certainty.value,
                                               certainty_evidence=certainty.evidence,
                                               temporality=status.temporality.value,
                                               temporality_evidence=status.temporality.evidence,
                                               evidence_text=s.text.strip())
            continue
        spec = mention.time.spec if mention.time is not None else None
        if status.history:
            pid = f"ph_{slug(rule.id)}"
            if pid not in acc.past and did not in acc.diagnoses:
                ph_status = HistoryStatus.remitted if status.remitted else HistoryStatus.pre_existing
                ids = [acc.duration_for(spec)] if spec is not None and not spec.ongoing else []
                acc.past[pid] = PastHistory(id=pid, condition=rule.name, status=ph_status,
                                            status_evidence=status.temporality.evidence, duration_ids=ids,
                                            evidence_text=s.text.strip())
            continue
        past = status.temporality.value == Temporality.past
        if did not in acc.diagnoses:
            spec_text = _SPECIFIERS.findall(s.text)
            acc.diagnoses[did] = Diagnosis(id=did, label=rule.name, rule_id=rule.id, certainty=certainty.value,
                                           certainty_evidence=certainty.evidence,
                                           temporality=status.temporality.value,
                                           temporality_evidence=status.temporality.evidence,
                                           specifiers=[x.lower() for x in spec_text], evidence_text=s.text.strip())
            acc.mentions[did] = s.index
            acc.past.pop(f"ph_{slug(rule.id)}", None)
        elif not past and acc.diagnoses[did].temporality == Temporality.past:
            dx = acc.diagnoses[did]
            dx.temporality, dx.temporality_evidence = Temporality.current, status.temporality.evidence


def add_treatments(s: Sentence, times: Sequence[TimeMention], acc: Accumulator) -> None:
    """Treatment nodes of one sentence with their status; when mentions disagree the stronger status
    (:data:`~anonpsy.extract.assertion.status.TREATMENT_PRECEDENCE`) is kept."""
    if s.section in ("labs", "allergies", "family_history"):
        return
    for m in medication_mentions(s.text):
        med = lexicon.parse_medication(s.text, m)
        decision = treatment_status(_mention(s, m.start, m.end, times, acc), med.frequency)
        if decision is None:
            continue
        tid = f"tx_{slug(med.name)}"
        route = med.route
        acc.med_class.setdefault(tid, med.class_id)
        if tid not in acc.treatments:
            acc.treatments[tid] = Treatment(id=tid, type=TreatmentType.medication, name=med.name, dose=med.dose,
                                            route=route, frequency=med.frequency, status=decision.value,
                                            status_evidence=decision.evidence, evidence_text=s.text.strip())
            acc.mentions[tid] = s.index
        t = acc.treatments[tid]
        if stronger(decision.value, t.status, TREATMENT_PRECEDENCE):
            t.status, t.status_evidence = decision.value, decision.evidence
        if t.dose is None and med.dose is not None:
            t.dose, t.route, t.frequency = med.dose, route or t.route, med.frequency or t.frequency
        spec = governing_time(s.text, (m.start, m.end), times)
        if spec is not None:
            did = acc.duration_for(spec.spec)
            if did not in t.duration_ids:
                t.duration_ids = [*t.duration_ids, did]
    for m in therapy_mentions(s.text):
        decision = treatment_status(_mention(s, m.start, m.end, times, acc))
        if decision is None:
            continue
        tid = f"tx_{slug(m.id)}"
        if tid not in acc.treatments:
            ttype = therapy_types().get(m.id, "psychotherapy")
            acc.treatments[tid] = Treatment(id=tid, type=TreatmentType(ttype), name=m.headword,
                                            route=Route.not_applicable, status=decision.value,
                                            status_evidence=decision.evidence, evidence_text=s.text.strip())
            acc.mentions[tid] = s.index
        elif stronger(decision.value, acc.treatments[tid].status, TREATMENT_PRECEDENCE):
            t = acc.treatments[tid]
            t.status, t.status_evidence = decision.value, decision.evidence


def present_today(acc: Accumulator) -> None:
    """A symptom present at the visit whose durations all lie in the past gets a one-day duration on day 0, so
    the temporal engine keeps it current."""
    for sid in acc.present:
        sx = acc.symptoms[sid]
        if not sx.duration_ids:
            continue
        dmap = {d.id: d for d in acc.durations}
        specs = [dmap[i] for i in sx.duration_ids if i in dmap]
        if any(d.ongoing or not is_past(TimeSpec(d.offset, d.span, d.unit)) for d in specs):
            continue
        did = acc.duration_for(TimeSpec(0, 1, Unit.day))
        sx.duration_ids = [*sx.duration_ids, did]
