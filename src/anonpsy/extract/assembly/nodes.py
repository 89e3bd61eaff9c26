"""Diagnosis, symptom and treatment nodes from one sentence's mentions, their context and their time.

A symptom that is present at the visit but whose only durations lie in the past gets a one-day duration on day 0
(:func:`present_today`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from anonpsy import lexicon
from anonpsy.extract.assembly.accumulator import Accumulator, slug
from anonpsy.extract.assembly.steb import NARRATIVE_SECTIONS, extract_steb
from anonpsy.extract.assertion.scope import (
    classify_in_sentence,
    course_of_index_stay,
    family_member,
    is_family,
    only_time_words,
    treatment_applies,
)
from anonpsy.extract.mentions.diagnoses import find_diagnoses, is_instrument_name
from anonpsy.extract.mentions.family import condition_words
from anonpsy.extract.mentions.symptoms import symptom_mentions
from anonpsy.extract.mentions.time import (
    ONSET_CUE,
    PAST_EVENT_CUE,
    TimeMention,
    governing_time,
    is_past,
    mention_time,
    onset_anchor,
)
from anonpsy.extract.mentions.treatments import medication_mentions, therapy_mentions, therapy_types
from anonpsy.extract.sections import Sentence, clause_bounds
from anonpsy.graph import (
    Diagnosis,
    HistoryStatus,
    PastHistory,
    Route,
    Symptom,
    Treatment,
    TreatmentType,
    Unit,
)
from anonpsy.rules import dsm as dsm_rules
from anonpsy.temporal import TimeSpec

_HISTORICAL_SECTIONS = {"past_psych", "past_medical"}
_NON_CLINICAL_SECTIONS = {"medications", "allergies", "labs"}


def _present_cue(sentence: str) -> bool:
    return bool(re.search(r"\b(?:has|have|is|are|now|still|continues?|currently|persists?|remains?)\b", sentence,
                          re.I))


_LAB_SURFACE = re.compile(r"\b(?:BAL|BAC|blood alcohol|breathaly[sz]er|UDS|tox(?:icology)? screen|drug screen|"
                          r"positive for)\b", re.I)


def add_symptoms(s: Sentence, times: Sequence[TimeMention], acc: Accumulator) -> None:
    if s.section in _NON_CLINICAL_SECTIONS:
        return
    matches = symptom_mentions(s.text)
    spans = [(m.start, m.end) for m in matches]
    for m in matches:
        if is_instrument_name(s.text, m.start, m.end):
            continue
        ctx = classify_in_sentence(s.text, m.start, m.end)
        if ctx.negated or ctx.hypothetical:
            continue
        if is_family(s, m.start, ctx):
            acc.add_family(family_member(s, m.start, ctx), condition_words(m), s.text.strip())
            continue
        if ctx.experiencer != "patient":
            continue
        tm = governing_time(s.text, (m.start, m.end), times)
        spec = tm.spec if tm is not None else None
        ctx_historical = ctx.historical and not course_of_index_stay(s, ctx, acc.index_is_admission)
        if ctx_historical and tm is not None and only_time_words(s.text, ctx, times):
            ctx_historical = False  # "years ago", "last year": the parsed expression itself decides below
        historical = ctx_historical or s.section in _HISTORICAL_SECTIONS
        if tm is not None and spec is not None and is_past(spec):
            lo, hi = clause_bounds(s.text, m.start)
            clause = s.text[lo:hi]
            onset = onset_anchor(s.text, tm) or (ONSET_CUE.search(clause) and _present_cue(clause))
            if not historical and onset and not PAST_EVENT_CUE.search(clause):
                # "Memory problems began three years ago": ongoing since then.
                spec = TimeSpec(spec.offset, None, spec.unit, ongoing=True, coarse=spec.coarse)
            else:
                historical = True
        sid = f"sx_{slug(m.headword)}"
        sx = acc.symptoms.get(sid)
        if sx is None:
            sx = Symptom(id=sid, headword=m.headword, current_symptom=not historical, evidence_text=s.text.strip())
            acc.symptoms[sid] = sx
            acc.mentions[sid] = s.index
        elif not historical:
            sx.current_symptom = True
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


_EPISODE = re.compile(r"\bepisode\b|\bMDE\b", re.I)


def add_diagnoses(s: Sentence, times: Sequence[TimeMention], acc: Accumulator) -> None:
    rules = dsm_rules.load_dsm()
    for start, end, rule_id in find_diagnoses(s.text):
        ctx = classify_in_sentence(s.text, start, end)
        if ctx.negated or ctx.hypothetical:
            continue
        rule = rules[rule_id]
        if is_family(s, start, ctx):
            acc.add_family(family_member(s, start, ctx), s.text[start:end], s.text.strip())
            continue
        if ctx.experiencer != "patient":
            continue
        spec = mention_time(s.text, (start, end), times)
        past = spec is not None and is_past(spec)
        ctx_historical = ctx.historical and not course_of_index_stay(s, ctx, acc.index_is_admission)
        historical = ctx_historical or s.section in _HISTORICAL_SECTIONS or past
        episode = bool(_EPISODE.search(s.text[start:end]))
        if historical and (s.section != "assessment" or episode):
            pid = f"ph_{slug(rule.id)}"
            if pid not in acc.past and f"dx_{slug(rule.id)}" not in acc.diagnoses:
                status = HistoryStatus.remitted if re.search(r"\bremission|remitted|resolved\b", s.text, re.I) \
                    else HistoryStatus.pre_existing
                ids = [acc.duration_for(spec)] if spec is not None and not spec.ongoing else []
                acc.past[pid] = PastHistory(id=pid, condition=rule.name, status=status, duration_ids=ids,
                                            evidence_text=s.text.strip())
            continue
        did = f"dx_{slug(rule.id)}"
        if did not in acc.diagnoses:
            spec_text = re.findall(r"\bwith (?:peripartum onset|psychotic features|anxious distress|mixed features|"
                                   r"seasonal pattern|melancholic features|catatonia)\b", s.text, re.I)
            dx_status: Literal["current", "provisional", "historical"] = (
                "historical" if historical else "provisional" if ctx.uncertain else "current")
            acc.diagnoses[did] = Diagnosis(id=did, label=rule.name, rule_id=rule.id, status=dx_status,
                                           specifiers=[x.lower() for x in spec_text], evidence_text=s.text.strip())
            acc.mentions[did] = s.index
            acc.past.pop(f"ph_{slug(rule.id)}", None)
        elif not historical and acc.diagnoses[did].status == "historical":
            acc.diagnoses[did].status = "current"


def add_treatments(s: Sentence, times: Sequence[TimeMention], acc: Accumulator) -> None:
    if s.section in ("labs", "allergies", "family_history"):
        return
    for m in medication_mentions(s.text):
        ctx = classify_in_sentence(s.text, m.start, m.end)
        if not treatment_applies(ctx):
            continue
        med = lexicon.parse_medication(s.text, m)
        tid = f"tx_{slug(med.name)}"
        route = med.route
        acc.med_class.setdefault(tid, med.class_id)
        if tid not in acc.treatments:
            acc.treatments[tid] = Treatment(id=tid, type=TreatmentType.medication, name=med.name, dose=med.dose,
                                            route=route, frequency=med.frequency, evidence_text=s.text.strip())
            acc.mentions[tid] = s.index
        t = acc.treatments[tid]
        if t.dose is None and med.dose is not None:
            t.dose, t.route, t.frequency = med.dose, route or t.route, med.frequency or t.frequency
        spec = mention_time(s.text, (m.start, m.end), times)
        if spec is not None:
            did = acc.duration_for(spec)
            if did not in t.duration_ids:
                t.duration_ids = [*t.duration_ids, did]
    for m in therapy_mentions(s.text):
        ctx = classify_in_sentence(s.text, m.start, m.end)
        if not treatment_applies(ctx):
            continue
        tid = f"tx_{slug(m.id)}"
        if tid not in acc.treatments:
            ttype = therapy_types().get(m.id, "psychotherapy")
            acc.treatments[tid] = Treatment(id=tid, type=TreatmentType(ttype), name=m.headword,
                                            route=Route.not_applicable, evidence_text=s.text.strip())
            acc.mentions[tid] = s.index


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
