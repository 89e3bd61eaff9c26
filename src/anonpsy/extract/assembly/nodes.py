"""Diagnosis, symptom and treatment nodes from one sentence's mentions, their context and their time.

A symptom that is present at the visit but whose only durations lie in the past gets a one-day duration on day 0
(:func:`present_today`)."""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Sequence
from functools import lru_cache

from anonpsy import lexicon
from anonpsy.caseless import Caseless
from anonpsy.extract.assembly.accumulator import Accumulator, DiagnosisVote, slug
from anonpsy.extract.assembly.steb import NARRATIVE_SECTIONS, extract_steb
from anonpsy.extract.assertion.status import (
    ASSERTION_PRECEDENCE,
    CONFIRM_ANAPHOR,
    Decision,
    DiagnosisStatus,
    Mention,
    SymptomStatus,
    condition_denial,
    diagnosis_status,
    resolve_diagnosis,
    resolve_treatment,
    stronger,
    symptom_status,
    treatment_status,
)
from anonpsy.extract.mentions.diagnoses import find_diagnoses, is_instrument_name, substance_specifiers
from anonpsy.extract.mentions.family import condition_words
from anonpsy.extract.mentions.general_conditions import ID_PREFIX as GENERAL_ID_PREFIX
from anonpsy.extract.mentions.general_conditions import condition_by_id as general_condition
from anonpsy.extract.mentions.general_conditions import find_general_conditions, names_a_test
from anonpsy.extract.mentions.results import in_screen_result, screen_result_spans
from anonpsy.extract.mentions.symptoms import symptom_mentions, symptom_object
from anonpsy.extract.mentions.time import TimeMention, governing_time, is_past
from anonpsy.extract.mentions.treatments import (
    ANAPHOR,
    group_mentions,
    medication_mentions,
    names_a_condition,
    reason_table,
    therapy_mentions,
    therapy_types,
)
from anonpsy.extract.sections import (
    Sentence,
    decides_treatment,
    deciding_sections,
    medication_list,
    section_tier,
)
from anonpsy.graph import (
    Assertion,
    Certainty,
    Diagnosis,
    Evidence,
    HistoryStatus,
    PastHistory,
    Route,
    Symptom,
    Temporality,
    Treatment,
    TreatmentStatus,
    TreatmentType,
    Unit,
)
from anonpsy.rules import dsm as dsm_rules
from anonpsy.temporal import TimeSpec
from anonpsy.twin.vocabulary import lookalikes

_NON_CLINICAL_SECTIONS = {"medications", "home_medications", "discharge_medications", "past_medications",
                          "allergies", "labs"}
_LAB_SURFACE = re.compile(r"\b(?:BAL|BAC|blood alcohol|breathaly[sz]er|UDS|tox(?:icology)? screen|drug screen|"
                          r"positive for)\b", re.I)
_SPECIFIERS = re.compile(r"\bwith (?:peripartum onset|psychotic features|anxious distress|mixed features(?! of)|"
                         r"seasonal pattern|melancholic features|catatonia)\b", re.I)
_SPECIFIER_STOP = re.compile(r"[;.]")
#: The patient telling a symptom as present (a symptom so told and denied elsewhere is a contradiction of the
#: note, kept as read, not a symptom of the past).
_REPORTED_NOW = Caseless(re.compile(r"\b(?:reports?|reporting|endorses?|endorsing|complains? of|complaining of|"
                                    r"admits? to|presents? with|is experiencing|has been experiencing|currently|now|"
                                    r"today)\b[^.;]*$", re.I))


#: Rules that decide a single dose given ("was given", "in the emergency room, treated with").
_ONE_DOSE = ("context.hist.once", "cue.given_at_presentation", "cue.vaccine_dose")


def _one_dose(d: Decision[TreatmentStatus]) -> bool:
    """Was the drug one dose given: a single-dose rule, or a section whose drugs are given once (the section
    table's ``medication_list: once``, e.g. an operative note's anaesthesia)?"""
    section = d.evidence.section or ""
    return d.evidence.rule_id in _ONE_DOSE or (
        d.evidence.rule_id == f"section.{section}" and medication_list(section) == "once")
#: The medication class of contrast products, and the rule that makes one a single dose given at its study.
CONTRAST_AGENT = "contrast_agent"
CONTRAST_RULE = "class.contrast_agent"

def _own_specifiers(text: str, end: int, next_start: int) -> tuple[str, ...]:
    """The course specifiers written after one diagnosis mention, before the next diagnosis or the end of its
    list item: a specifier of another diagnosis in the same sentence is not this one's."""
    stop = _SPECIFIER_STOP.search(text, end, next_start)
    window = text[end:stop.start() if stop else next_start]
    return tuple(x.lower() for x in _SPECIFIERS.findall(window))


def _mention(s: Sentence, start: int, end: int, times: Sequence[TimeMention], acc: Accumulator) -> Mention:
    return Mention(s, start, end, governing_time(s.text, (start, end), times), times, acc.index_is_admission,
                   acc.patient_sex)


@lru_cache(maxsize=1)
def _excess_of() -> dict[str, str]:
    return {e.id: e.excess_of for e in lexicon.symptom_lexicon().rules if e.excess_of}


def _use_within_limit(matches: Sequence[lexicon.TermMatch], statuses: Sequence[SymptomStatus]) -> set[str]:
    """Ids of the plain uses a sentence keeps within a limit it states: "has a beer now and then but denies any
    continuous use of alcohol" denies excessive alcohol use, and the beer is that same drinking within the limit,
    not a symptom (``excess_of`` in ``rules/lexicon/symptoms.yaml``)."""
    excess = _excess_of()
    return {excess[m.id] for m, st in zip(matches, statuses, strict=True)
            if m.id in excess and st.assertion is not None and st.assertion.value == Assertion.absent}


def add_symptoms(s: Sentence, times: Sequence[TimeMention], acc: Accumulator) -> None:
    """Symptom nodes of one sentence. A symptom only ever denied or hypothetical is kept aside
    (``acc.unasserted_sx``) with no time, frame or relation; an asserted mention always wins over it."""
    if s.section in _NON_CLINICAL_SECTIONS:
        return
    if s.section in _EXAM_SECTIONS:
        acc.exam_text.append(s.text)
    matches = symptom_mentions(s.text)
    spans = [(m.start, m.end) for m in matches]
    mentions = [_mention(s, m.start, m.end, times, acc) for m in matches]
    statuses = [symptom_status(mention) for mention in mentions]
    within = _use_within_limit(matches, statuses)
    screened = screen_result_spans(s.text)
    for m, status, mention in zip(matches, statuses, mentions, strict=True):
        if is_instrument_name(s.text, m.start, m.end) or m.id in within:
            continue
        if in_screen_result(screened, m.start, m.end):
            continue  # "drug screen positive for cocaine": a test's result, not a use the patient tells
        if lookalikes().other_sense(s.text, m.start, m.end, f"sx:{m.id}"):
            continue  # "the scope was withdrawn", "wandering atrial pacemaker": the word's other, medical sense
        if status.family is not None:
            acc.add_family(status.owner.member, condition_words(m), s.text.strip(), status.family.value,
                           status.family.evidence)
            continue
        decision = status.assertion
        if decision is None:
            continue
        drugs = symptom_object(s.text, m)
        if drugs:
            tail = drugs[0] if len(drugs) == 1 else f"{', '.join(drugs[:-1])} and {drugs[-1]}"
            m = lexicon.TermMatch(m.start, m.end, m.id, f"{m.headword} of {tail}", m.surface)
        sid = f"sx_{slug(m.headword)}"
        # a clinical name of its own ("altered mental status") is told as the note names it
        named = symptom_name(m, s.text) if not drugs else None
        head = named or m.headword
        if decision.value in (Assertion.absent, Assertion.hypothetical):
            old = acc.unasserted_sx.get(sid)
            if old is None or stronger(decision.value, old.assertion, ASSERTION_PRECEDENCE):
                acc.unasserted_sx[sid] = Symptom(id=sid, headword=head, assertion=decision.value,
                                              assertion_evidence=decision.evidence, evidence_text=s.text.strip())
            continue
        historical = decision.value == Assertion.historical
        acc.asserted_in.setdefault(sid, set()).add(s.section or "")
        tm = mention.time
        spec = tm.spec if tm is not None else None
        if spec is not None and status.ongoing_onset:
            spec = TimeSpec(spec.offset, None, spec.unit, ongoing=True, coarse=spec.coarse)
        sx = acc.symptoms.get(sid)
        if sx is None:
            sx = Symptom(id=sid, headword=head, current_symptom=not historical, assertion=decision.value,
                         assertion_evidence=decision.evidence, evidence_text=s.text.strip())
            acc.symptoms[sid] = sx
            acc.mentions[sid] = s.index
        else:
            if named and sx.headword == m.headword:  # the clinical name wins over the lexicon's headword
                if sx.headword in acc.flaggable:
                    acc.flaggable.discard(sx.headword)
                    acc.flaggable.add(named)
                sx.headword = named
            if not historical:
                sx.current_symptom = True
            if stronger(decision.value, sx.assertion, ASSERTION_PRECEDENCE):
                sx.assertion, sx.assertion_evidence = decision.value, decision.evidence
        if not historical:
            acc.present.add(sid)
            acc.last_present[sid] = s.start
            if _ADMITTED_FOR.search(s.text, max(0, m.start - 80), m.start):
                acc.admission_reason.add(sid)
            else:
                acc.told_present.add(sid)
            if decision.evidence.rule_id != "default" or _REPORTED_NOW.search(s.text[:m.start]):
                acc.cued_present.add(sid)
            if not _LAB_SURFACE.search(m.surface):
                acc.flaggable.add(sx.headword)
        if spec is not None and not (historical and spec.ongoing):
            did = acc.duration_for(spec)
            if did not in sx.duration_ids:
                sx.duration_ids = [*sx.duration_ids, did]
        if s.section in NARRATIVE_SECTIONS:
            frame = extract_steb(s.text, (m.start, m.end), spans)
            if frame is not None and len(sx.contexts) < 3 and frame not in sx.contexts:
                sx.contexts = [*sx.contexts, frame]


def add_diagnoses(s: Sentence, times: Sequence[TimeMention], acc: Accumulator) -> None:
    """Diagnosis mentions of one sentence: a relative's goes to the family history; a patient's is recorded with
    its status (``acc.dx_votes``) and resolved into one node by :func:`finalize_diagnoses`."""
    found = sorted(find_diagnoses(s.text, s.section))
    if not found:
        _confirm_by_anaphor(s, acc)
        return
    rules = dsm_rules.rules_by_id()
    for i, (start, end, rule_id) in enumerate(found):
        rule = rules[rule_id]
        next_start = next((b for b, _, _ in found[i + 1:] if b >= end), len(s.text))
        mention = _mention(s, start, end, times, acc)
        status = diagnosis_status(mention)
        if status.family is not None:
            acc.add_family(status.owner.member, s.text[start:end], s.text.strip(), status.family.value,
                           status.family.evidence)
            continue
        if status.certainty is None or status.owner.experiencer != "patient":
            continue
        did = f"dx_{slug(rule.id)}"
        spec = mention.time.spec if mention.time is not None else None
        acc.dx_names.setdefault(did, (rule.name, rule.id))
        specifiers = (*substance_specifiers(rule.id, s.text, start, end), *_own_specifiers(s.text, end, next_start))
        acc.dx_votes.setdefault(did, []).append(DiagnosisVote(status, s.index, s.text.strip(), spec, specifiers))


#: Searched in every sentence that names no diagnosis: lower-cased, only where one of its words is.
_CONFIRM_SEARCH = Caseless(CONFIRM_ANAPHOR)


def _confirm_by_anaphor(s: Sentence, acc: Accumulator) -> None:
    """A sentence that confirms "this diagnosis" without naming it ("She was subsequently given this diagnosis")
    confirms the diagnosis or medical condition held as a possibility in the sentence before (or the one before
    that): a confirmed vote with this sentence as its evidence, decided by a cue, so the later statement wins."""
    if _CONFIRM_SEARCH.search(s.text) is None:
        return
    best: tuple[int, dict[str, list[DiagnosisVote]], str, DiagnosisVote] | None = None
    # A DSM diagnosis or a medical condition (moyamoya disease "suspected", then "given this diagnosis").
    for table in (acc.dx_votes, acc.condition_votes):
        for did, votes in table.items():
            for v in votes:
                c = v.status.certainty
                if (c is not None and c.value in (Certainty.provisional, Certainty.rule_out)
                        and s.index - 2 <= v.sentence_index < s.index
                        and (best is None or v.sentence_index > best[0])):
                    best = (v.sentence_index, table, did, v)
    if best is None:
        return
    _, table, did, v = best
    ev = Evidence(start=s.start, end=max(s.end, s.start + 1), section=s.section, rule_id="cue.confirmed_anaphor")
    status = dataclasses.replace(v.status, certainty=Decision(Certainty.confirmed, ev))
    table[did].append(DiagnosisVote(status, s.index, s.text.strip(), v.spec, v.specifiers))


def add_conditions(s: Sentence, times: Sequence[TimeMention], acc: Accumulator) -> None:
    """Medical comorbidities of one sentence (``rules/lexicon/conditions.yaml``, then the ICD-10-CM fallback of
    ``rules/lexicon/general_conditions.yaml`` for what the lexicon does not name): a relative's go to the family
    history, the patient's are recorded with their status like diagnoses and become past-history items in
    :func:`finalize_conditions`."""
    results = s.section == "labs"
    if s.section in _NON_CLINICAL_SECTIONS and not results:
        return
    whole_only = _denied_only_conditions()
    general = [lexicon.TermMatch(h.start, h.end, h.condition.id, h.condition.name, h.surface)
               for h in find_general_conditions(s.text, s.section)]
    # a curated condition inside a longer fallback name ("limbic encephalitis") is told by that name
    curated = [m for m in lexicon.find_terms(s.text, "condition")
               if not any(g.start <= m.start and m.end <= g.end for g in general)]
    for m in sorted([*curated, *general], key=lambda x: x.start):
        m = _refers_back(m, acc)
        fallback = m.id.startswith(GENERAL_ID_PREFIX)
        if results and not _result_conclusion(s.text, m):
            continue
        if not fallback and names_a_test(s.text, m.end):
            continue  # "HIV testing was negative", "DVT prophylaxis": a test or a prevention, not the condition
        mention = _mention(s, m.start, m.end, times, acc)
        status = diagnosis_status(mention, event=condition_entry(m.id).course == "event")
        denial = condition_denial(mention)
        if denial is not None and (results or lexicon.is_sited(m)
                                   or (fallback and s.section not in _HISTORY_SECTIONS)):
            # "no evidence of acute infarction" on one scan is no denial of a history of stroke, nor is "no
            # infarct of the left frontal lobe"; a fallback condition is denied only by the past history itself
            # ("No history of myelitis")
            continue
        if denial is not None:
            acc.condition_denials.setdefault(m.id, (denial, s.text.strip()))
            acc.condition_names.setdefault(m.id, condition_name(m, s.text))
            continue
        if m.id in whole_only:
            continue
        if status.family is not None:
            acc.add_family(status.owner.member, condition_name(m), s.text.strip(), status.family.value,
                           status.family.evidence)
            continue
        if status.certainty is None or status.owner.experiencer != "patient":
            continue
        spec = mention.time.spec if mention.time is not None else None
        name = condition_name(m, s.text)
        key = _condition_key(acc, m.id, name)
        acc.condition_votes.setdefault(key, []).append(DiagnosisVote(status, s.index, s.text.strip(), spec))
        _name_condition(acc, key, name, status, s.section)
        if spec is None and found_now(s.text, m, s.section):
            acc.condition_findings_now.add((key, s.index))


#: Joins a condition id and the number of a further distinct condition of the same entry ("stroke#2").
VARIANT_SEP = "#"
#: Words of a condition's name that tell no one condition of an entry from another: a grade, a size, an age,
#: and the words that join a site to the finding.
_UNQUALIFYING = frozenset({
    "mild", "moderate", "moderately", "severe", "small", "large", "tiny", "minimal", "marked", "extensive",
    "massive", "medium", "sized", "to", "old", "remote", "chronic", "acute", "subacute", "recent", "new", "healed",
    "of", "the", "in", "a", "an", "and", "at", "with", "within", "involving",
    "brain", "cerebral", "cerebrum", "intracranial", "intracerebral", "region", "area", "territory",
    "distribution"})
#: A site's adjective and its noun are one site ("pontine", "pons").
_SITE_NOUN = {"pontine": "pons", "cerebellar": "cerebellum", "thalamic": "thalamus", "hippocampal": "hippocampus",
              "insular": "insula", "putaminal": "putamen", "uncal": "uncus", "hemispheric": "hemisphere",
              "medullary": "medulla", "callosal": "callosum"}


def _qualifiers(cid: str, name: str) -> frozenset[str]:
    """The words that make one finding of entry ``cid`` this one: the type, side and site of its name
    ("lacunar", "right", "brachium", "pontis"), not the entry's headword, its finding words, a grade or an age.
    Only a finding named with its condition ("lacunar infarct (stroke)") has any: another name of the condition
    ("sciatica", "meningioma", "CVA") tells the condition, not which of its findings."""
    entry = condition_entry(cid)
    if not name.endswith(f"({entry.headword})"):
        return frozenset()
    common = {w.lower() for p in (entry.headword, *entry.sited) for w in re.findall(r"[\w'-]+", p)}
    words = {_SITE_NOUN.get(w, w) for p in re.findall(r"[\w']+", re.sub(r"\s*\(.*\)$", "", name.lower()))
             for w in (p[:-1] if len(p) > 4 and p.endswith("s") and not p.endswith(("ss", "ns", "us", "is")) else p,)}
    common |= {w[:-1] if len(w) > 4 and w.endswith("s") else w for w in common}
    return frozenset(w for w in words if w not in common and w not in _UNQUALIFYING)


def _condition_key(acc: Accumulator, cid: str, name: str) -> str:
    """The key a mention of condition ``cid`` is gathered under: the entry's id, or ``<id>#<n>`` for a further
    condition of the same entry whose type, side or site ("an old lacunar infarct of the right brachium pontis"
    beside "an old infarct of the right cerebellar hemisphere") is not that of one already named. A name
    without any (the bare headword, an abbreviation) or with a part of another's ("a lacunar infarct" before "a
    lacunar infarct of the right pons") is that other condition again."""
    quals = _qualifiers(cid, name)
    variants = acc.condition_variants.setdefault(cid, [])
    hits = [i for i, (_k, held) in enumerate(variants) if not quals or not held or quals <= held or held <= quals]
    if hits:
        key, held = variants[hits[0]]
        # a name that holds two findings' sites ("spasm of the left ICA and left A1") makes them one finding
        for i in reversed(hits[1:] if quals else []):
            if variants[i][1] <= quals:
                other, more = variants.pop(i)
                held |= more
                _merge_condition(acc, other, key)
        variants[hits[0]] = (key, held | quals)
        return key
    n = len(variants) + 1
    while any(k == f"{cid}{VARIANT_SEP}{n}" for k, _q in variants):
        n += 1
    key = cid if not variants else f"{cid}{VARIANT_SEP}{n}"
    variants.append((key, quals))
    return key


def _merge_condition(acc: Accumulator, src: str, dst: str) -> None:
    """Gather the mentions and the name of condition key ``src`` under ``dst``."""
    acc.condition_votes.setdefault(dst, []).extend(acc.condition_votes.pop(src, []))
    rank = acc.condition_name_ranks.pop(src, None)
    name = acc.condition_names.pop(src, None)
    if name is not None and rank is not None and rank > acc.condition_name_ranks.get(dst, (-2, -2)):
        acc.condition_names[dst] = name
        acc.condition_name_ranks[dst] = rank
    moved = {(k, i) for k, i in acc.condition_findings_now if k == src}
    acc.condition_findings_now -= moved
    acc.condition_findings_now |= {(dst, i) for _k, i in moved}


def _refers_back(m: lexicon.TermMatch, acc: Accumulator) -> lexicon.TermMatch:
    """A generic word without its site ("the dome of the aneurysm") after the note named the sited condition it
    is a word of ("a left ICA bifurcation aneurysm") is that condition again, not a second, generic one."""
    for cid in lexicon.sited_entries(m):
        if cid in acc.condition_votes or cid in acc.condition_names:
            return lexicon.TermMatch(m.start, m.end, cid, condition_entry(cid).headword, m.surface)
    return m


def _name_condition(acc: Accumulator, key: str, name: str, status: DiagnosisStatus, section: str | None) -> None:
    """Keep the condition's best name: a later confirmed mention renames it when its name is more specific (a
    named type, "glioblastoma multiforme", over the entry's generic headword, "brain tumor"), or as specific and
    written in the diagnosis list or the assessment (the diagnosis made, "lumbar radiculopathy", over a name of
    the history, "sciatica"). A name of a possible or ruled-out mention never replaces one."""
    rank = _name_rank(key, name, status, section)
    held = acc.condition_name_ranks.get(key)
    if held is None or rank > held:
        acc.condition_names[key] = name
        acc.condition_name_ranks[key] = rank


def _name_rank(cid: str, name: str, status: DiagnosisStatus, section: str | None) -> tuple[int, int]:
    """(specific, stated in a deciding section) of one confirmed name; (-1, -1) for a name of an uncertain
    mention, which only names a condition no confirmed mention names."""
    if status.certainty is None or status.certainty.value != Certainty.confirmed:
        return (-1, -1)
    entry = condition_entry(cid)
    head = entry.headword.lower()
    bare = re.sub(r"\s*\(.*\)$", "", name.lower()).strip()
    generic = bare in {head, f"{head}s"} or bare in {g.lower() for g in entry.generic}
    return (0 if generic else 1, 1 if section in deciding_sections() else 0)


#: Sections that tell the presentation: an event a study of it found is the patient's now.
_PRESENTATION_SECTIONS = frozenset({"chief_complaint", "hpi", "labs", "exam"})
#: A word that dates a finding before the presentation ("an old lacunar infarct", "remote infarct").
_OLD_FINDING = re.compile(r"\b(?:old|prior|previous|remote|chronic|healed|known|history of)\b[\w\s-]{0,30}$", re.I)


def found_now(text: str, m: lexicon.TermMatch, section: str | None) -> bool:
    """Is condition ``m`` an event of the presentation: named in the chief complaint, or a conclusion of a study
    in the telling of the presentation ("2/28/95 brain MRI revealed a small right-sided SDH", "consistent with
    contusion"), not dated before it ("an old lacunar infarct")?"""
    if section not in _PRESENTATION_SECTIONS:
        return False
    if _OLD_FINDING.search(text[max(0, m.start - 40):m.start]):
        return False
    return section == "chief_complaint" or _CONCLUSION.search(text[:m.start]) is not None


#: Sections whose "none" or "no" denies a history: a fallback condition is denied only there.
_HISTORY_SECTIONS = frozenset({"past_medical", "past_psych"})


def condition_entry(cid: str) -> lexicon.ConditionEntry:
    """The curated lexicon entry of a condition, or the entry of a fallback condition (its ICD-10-CM name, the
    system and course of its block). A key of a further condition of the entry (``stroke#2``) is the entry's."""
    cid = cid.partition(VARIANT_SEP)[0]
    found = _condition_entries().get(cid)
    if found is not None:
        return found
    g = general_condition(cid)
    if g is None:
        raise KeyError(cid)
    course: lexicon.ConditionCourse = "event" if g.course == "event" else (
        "episodic" if g.course == "episodic" else "chronic")
    return lexicon.ConditionEntry.model_construct(id=g.id, headword=g.name, system=g.system, course=course,
                                                  synonyms=(), abbreviations=(), excludes=(), findings=())


#: What a test or an imaging study concluded ("MRI of the brain showed ...", "consistent with ...", "suggestive of
#: ..."): a condition written after it in a results section is the patient's finding, not the name of a test.
_CONCLUSION = re.compile(r"\b(?:shows?|showed|shown|reveal(?:s|ed)?|demonstrat(?:es|ed)|disclos(?:es|ed)|"
                         r"consistent with|compatible with|representing|suggestive of|suspicious for|concerning for|"
                         r"worrisome for|evidence of|findings? of|impression)\b", re.I)
#: A condition's name used as the name of a test ("HIV antibody", "hepatitis C panel").
_TEST_AFTER = re.compile(r"^[ -]*(?:antibod(?:y|ies)|antigen|panel|tests?|testing|screen(?:ing)?|titers?|levels?|"
                         r"serolog(?:y|ies)|PCR|viral load|protocol)\b", re.I)


def _result_conclusion(text: str, m: lexicon.TermMatch) -> bool:
    """Is a condition of a results section (labs, imaging, testing) a conclusion of the study, not a test's name or
    a value's label? Only then is it the patient's finding."""
    return _CONCLUSION.search(text[:m.start]) is not None and _TEST_AFTER.match(text[m.end:]) is None


_LATERALITY = re.compile(r"\b(right|left|bilateral)((?:[ -]sided)?)[ -]$", re.I)

#: A grade or size written just before a condition ("mild white matter disease", "moderate to severe aortic
#: stenosis", "a small aneurysm"): part of what the note says about it, kept with its name (before the side).
_GRADE = re.compile(r"\b((?:mild|moderate|severe)(?: to |-to-| ?- ?)(?:moderate|severe)|moderately[ -]severe|"
                    r"mild|moderate|severe|"
                    r"(?:small|medium|moderate|large)[ -]sized|small|large|tiny|minimal|marked|extensive|massive)[ -]$",
                    re.I)
#: The age of a finding written before it and its grade ("an old lacunar infarct", "a remote small infarct"):
#: what the note says about that finding, kept with its name.
_FINDING_AGE = re.compile(r"\b(old|remote|chronic|acute|subacute|recent|new|healed)[ -]$", re.I)


#: A condition named by its adjective ("She is obese", "asthmatic", "dehydrated"): the graph names it by its noun.
_ADJECTIVE = re.compile(r"(?i)(?:obese|overweight|\w+(?:atic|etic|ed))$")


#: Where on an artery a lesion sits, written between the artery and the lesion ("ICA bifurcation aneurysm").
_ARTERY_PART = r"(?:bifurcation|trifurcation|origin|terminus|tip|junction|segment|branch)"


@lru_cache(maxsize=1)
def _site_before() -> re.Pattern[str]:
    """A brain site (``brain_sites`` of the condition lexicon, with its side) written just before a condition,
    with the part of an artery written after it ("left ICA bifurcation"). A site in capitals ("ICA", "MCA") is
    an abbreviation, read only in capitals."""
    sites = lexicon.condition_lexicon().brain_sites
    words = sorted((s for s in sites if not s.isupper()), key=len, reverse=True)
    caps = sorted((s for s in sites if s.isupper()), key=len, reverse=True)
    alts = "|".join([*(f"(?i:{re.escape(s)})" for s in words), *(re.escape(s) for s in caps)]) or "(?!)"
    return re.compile(rf"\b(?:(?i:(right|left|bilateral)((?:[ -]sided)?))[ -])?({alts})((?i:[ -]{_ARTERY_PART})?)"
                      r"[ -]$")


@lru_cache(maxsize=1)
def _site_after() -> re.Pattern[str]:
    """A brain site written just after a finding, in the same clause ("infarct of the superior portion of the right
    cerebellar hemisphere", "infarct in the left pons"): its side and the run of site words."""
    sites = lexicon.condition_lexicon().brain_sites
    words = sorted((s for s in sites if not s.isupper()), key=len, reverse=True)
    caps = sorted((s for s in sites if s.isupper()), key=len, reverse=True)
    alts = "|".join([*(f"(?i:{re.escape(s)})" for s in words), *(re.escape(s) for s in caps)]) or "(?!)"
    one = (rf"(?:(?i:right|left|bilateral)\s+)?(?:{alts})(?:\s+(?:{alts}))*"
           r"(?:\s+(?i:region|area|territory|distribution))?")
    return re.compile(rf"^\s+(?i:of|in|involving|within)\s+(?i:the\s+)?(?:[a-z-]+\s+){{0,6}}?"
                      rf"({one}(?:(?:\s*,\s*|\s+(?i:and|or)\s+)(?i:the\s+)?{one})*)(?![\w-])")


def _site_after_words(text: str, end: int) -> str:
    """" of the <side> <site>" for the brain sites written just after a finding ending at ``end`` ("of the
    internal carotid artery and left A1"), else ""."""
    site = _site_after().match(text[end:end + 120])
    if site is None:
        return ""
    return " of the " + " ".join(w if w.isupper() else w.lower() for w in site.group(1).split())


def condition_name(m: lexicon.TermMatch, text: str | None = None) -> str:
    """How a condition is named in the graph: the lexicon phrasing the note used ("cerebellar infarct",
    "glioblastoma") with the grade, side and brain site written just before it ("small right cerebellar infarct",
    "right-sided hemiparesis", "right cerebellar hemangioma"), or the headword for an abbreviation ("CVA" ->
    "stroke"). Only lexicon phrases, a grade, a side and a site of the lexicon, never other words of the note."""
    surface = " ".join(m.surface.split())
    before = text[max(0, m.start - 40):m.start] if text is not None else ""
    site = _site_before().search(before)
    side = site if site is not None else _LATERALITY.search(before)
    grade = _GRADE.search(before[:side.start()] if side else before)
    prefix = " ".join(x for x in ((re.sub(r"\s*-\s*", "-", grade.group(1).lower()) if grade else ""),
                                  ((side.group(1) or "").lower() + (side.group(2) or "").lower().replace(" ", "-")
                                   if side else ""),
                                  (_site_words(site) if site else ""))
                      if x)
    finding = lexicon.is_sited(m) or _finding_key(surface) in _condition_findings().get(m.id, ())
    after = _site_after_words(text, m.end) if finding and text is not None and site is None else ""
    if finding:
        # a finding of the condition ("lacunar infarct") or a finding word a brain site placed ("infarct"): its
        # age ("old", "acute") joins its grade, and a site written after it its name ("old lacunar infarct of
        # the right pons (stroke)")
        first = grade or side or site
        age = _FINDING_AGE.search(before[:first.start()] if first is not None else before)
        if age is not None:
            prefix = f"{age.group(1).lower()} {prefix}".strip()
    if lexicon.is_sited(m):
        # a finding word a brain site placed ("ischemia", "infarct"): the condition's name, with the word and the
        # site written just before it when the name lacks them ("left frontal infarct (stroke)")
        words = set(m.headword.lower().split())
        if site is None and not after and set(surface.lower().split()) <= words:
            # the site is written after the word ("a small aneurysm at the origin of the LPCA"): the headword,
            # with the grade written before the word
            return f"{_grade_words(grade)} {m.headword}" if grade else m.headword
        named = f"{prefix} {surface.lower()}" if prefix else surface.lower()
        return f"{named}{after} ({m.headword})"
    if _abbreviation(surface) or len(surface) <= 4 or _ADJECTIVE.match(surface):
        # an abbreviation keeps its side and grade ("right SDH" -> "right subdural hematoma")
        return f"{prefix} {m.headword}" if prefix and surface.isupper() else m.headword
    eponym = _BARE_EPONYM.match(surface)
    if eponym is not None:
        # an eponym alone ("possible Parkinson's") names its disease: "Parkinson's disease"
        return _eponym_disease(eponym.group(1), m.headword)
    # a name typed in capitals ("IMPRESSION: GLIOBLASTOMA MULTIFORME") is that name, not an abbreviation; an
    # eponym keeps its possessive as written ("Parkinson's disease") and its capital; an abbreviation inside a
    # name keeps its capitals ("MCA infarct")
    name = _cased(surface.replace("’", "'"))
    name = f"{prefix} {name}" if prefix else name
    return f"{name}{after} ({m.headword})" if finding else name


#: An eponym alone in the possessive ("Parkinson's", "Huntington's").
_BARE_EPONYM = re.compile(r"^([A-Za-z][\w-]*)['’]s$")


def _eponym_disease(stem: str, headword: str) -> str:
    """The disease an eponym alone names, with the eponym's possessive and capital ("Parkinson's" with the
    headword "Parkinson disease" -> "Parkinson's disease"); the headword when it does not start with the
    eponym."""
    first, _, rest = headword.partition(" ")
    if first.lower() != stem.lower() or not rest:
        return headword
    cap = _lexicon_capitals().get(first.lower(), stem[:1].upper() + stem[1:].lower())
    return f"{cap}'s {rest}"


@lru_cache(maxsize=1)
def _lexicon_capitals() -> dict[str, str]:
    """Words the condition lexicon writes with a capital (eponyms: "Parkinson's", "Chiari", "Guillain-Barre"),
    by their lower case; their capital is kept in a condition's name."""
    out: dict[str, str] = {}
    for e in lexicon.condition_lexicon().rules:
        for phrase in (e.headword, *e.synonyms):
            for w in phrase.split():
                if w[:1].isupper() and not w.isupper() and re.fullmatch(r"[\w'’-]+", w):
                    out.setdefault(w.lower().replace("’", "'"), w.replace("’", "'"))
    return out


def _cased(surface: str) -> str:
    """A condition's words in lower case, but for an eponym the lexicon writes with a capital ("Parkinson's
    disease") and, in a name not typed all in capitals, an abbreviation ("MCA infarct")."""
    caps = _lexicon_capitals()
    shouted = surface.isupper()
    out = []
    for w in surface.split():
        low = w.lower()
        if low in caps:
            out.append(caps[low])
        elif not shouted and _abbreviation(w):
            out.append(w)
        else:
            out.append(low)
    return " ".join(out)


def _grade_words(grade: re.Match[str]) -> str:
    """A grade as the name keeps it: "moderate-severe", "small"."""
    return re.sub(r"\s*-\s*", "-", grade.group(1).lower())


def _site_words(site: re.Match[str]) -> str:
    """A brain site as the name keeps it: in lower case, an abbreviation in capitals ("ICA"), with the part of
    the artery written after it ("ICA bifurcation")."""
    name = site.group(3) if site.group(3).isupper() else site.group(3).lower()
    part = " ".join(site.group(4).lower().replace("-", " ").split())
    return f"{name} {part}" if part else name


def _abbreviation(surface: str) -> bool:
    """Is a surface in capitals an abbreviation ("CVA", "SDH", "TIAs"), not a whole name typed in capitals?"""
    return surface.isupper() and " " not in surface and len(surface.rstrip("s")) <= 6


def symptom_name(m: lexicon.TermMatch, text: str) -> str | None:
    """The clinical name a symptom is written by (``names`` in the symptom lexicon), with the grade written just
    before it ("mild cognitive slowing"), or None when the note names it by a synonym."""
    name = lexicon.symptom_name(m)
    if name is None:
        return None
    grade = _GRADE.search(text[max(0, m.start - 40):m.start])
    if grade is None:
        return name
    return re.sub(r"\s*-\s*", "-", grade.group(1).lower()) + " " + name


def _finding_key(surface: str) -> str:
    return " ".join(re.sub(r"[^\w']+", " ", surface.lower()).split())


@lru_cache(maxsize=1)
def _condition_findings() -> dict[str, frozenset[str]]:
    """Condition id -> the phrasings that name it by a finding of it (``findings`` in the lexicon), normalized."""
    return {e.id: frozenset(_finding_key(f) for p in e.findings for f in lexicon.expand_phrase(p))
            for e in lexicon.condition_lexicon().rules if e.findings}


@lru_cache(maxsize=1)
def _denied_only_conditions() -> frozenset[str]:
    """Conditions kept only when denied: the psychiatric history as a whole ("No past psychiatric history"); one
    the patient has is told by its diagnoses."""
    return frozenset(e.id for e in lexicon.condition_lexicon().rules if e.system == "psychiatric")


@lru_cache(maxsize=1)
def _condition_entries() -> dict[str, lexicon.ConditionEntry]:
    return {e.id: e for e in lexicon.condition_lexicon().rules}


def finalize_conditions(acc: Accumulator) -> None:
    """One past-history item per medical condition the patient has or had, its status from its mentions
    (:func:`~anonpsy.extract.assertion.status.resolve_diagnosis`) and the condition's course: resolved or
    remitted when the note says so; chronic for a chronic condition; active when the diagnosis list, the
    assessment or a current mention states it and it is not chronic; pre-existing otherwise (an event or a bout
    that the note dates before the visit); denied when the patient's only statements about it deny it ("denies
    a history of stroke", "PAST PSYCHIATRIC HISTORY: None."). A condition only suspected is not kept."""
    kept: set[str] = set()
    for cid, votes in acc.condition_votes.items():
        entry = condition_entry(cid)
        st = resolve_diagnosis([v.status for v in votes])
        if st.certainty is not None and st.certainty.value == Certainty.provisional and entry.system in _SUSPECTED_KEPT:
            _suspected_condition(acc, cid, votes, st)
            continue
        if st.certainty is None or st.certainty.value != Certainty.confirmed:
            continue
        kept.add(cid)
        win = next(v for v in votes if v.status.certainty is not None
                   and v.status.certainty.evidence == st.certainty.evidence)
        past = st.temporality.value == Temporality.past
        if past and st.remitted:
            status = HistoryStatus.resolved if entry.course == "event" else HistoryStatus.remitted
        elif entry.course == "chronic":
            status = HistoryStatus.chronic
        elif not past and (st.certainty.evidence.section in deciding_sections() or entry.course == "episodic"
                           or (entry.course == "event" and (cid, win.sentence_index) in acc.condition_findings_now)):
            # an event the work-up of this presentation found (a subdural hematoma on the admission MRI) is
            # the patient's now, not an event before the visit
            status = HistoryStatus.active
        else:
            status = HistoryStatus.pre_existing
        pid = f"ph_{slug(cid)}"
        if pid in acc.past:
            continue
        specs = [v.spec for v in votes if v.spec is not None and not v.spec.ongoing]
        acc.past[pid] = PastHistory(id=pid, condition=acc.condition_names.get(cid, entry.headword), status=status,
                                    status_evidence=st.temporality.evidence if past else st.certainty.evidence,
                                    duration_ids=[acc.duration_for(specs[0])] if specs and past else [],
                                    evidence_text=win.evidence_text)
    for cid, (evidence, text) in acc.condition_denials.items():
        pid = f"ph_{slug(cid)}"
        if cid in kept or pid in acc.past:
            continue
        name = condition_entry(cid).headword if cid in _denied_only_conditions() else acc.condition_names.get(
            cid, condition_entry(cid).headword)
        acc.past[pid] = PastHistory(id=pid, condition=name, status=HistoryStatus.denied, status_evidence=evidence,
                                    evidence_text=text)


#: Systems whose suspected conditions are kept as possible diagnoses: the neurological and cerebrovascular
#: conditions a neuropsychiatric work-up weighs ("Possible normal pressure hydrocephalus", "possible VBI").
_SUSPECTED_KEPT = frozenset({"neurological", "cerebrovascular"})


def _suspected_condition(acc: Accumulator, cid: str, votes: Sequence[DiagnosisVote], st: DiagnosisStatus) -> None:
    """A neurological condition the note only suspects: a possible diagnosis (no DSM rule) named as the note
    named it, never a past-history item the patient has."""
    assert st.certainty is not None
    did = f"dx_{slug(cid)}"
    if did in acc.diagnoses or f"ph_{slug(cid)}" in acc.past:
        return
    win = next(v for v in votes if v.status.certainty is not None
               and v.status.certainty.evidence == st.certainty.evidence)
    acc.diagnoses[did] = Diagnosis(id=did, label=acc.condition_names.get(cid, condition_entry(cid).headword),
                                   rule_id=None, certainty=Certainty.provisional,
                                   certainty_evidence=st.certainty.evidence, temporality=st.temporality.value,
                                   temporality_evidence=st.temporality.evidence, evidence_text=win.evidence_text)
    acc.mentions[did] = min(v.sentence_index for v in votes)


#: An item number or bullet before a list entry ("3.", "(b)", "-").
_ENUMERATOR = re.compile(r"^\s*(?:\(?\d{1,2}[.)]|\(?[a-z][.)]|[-*\u2022])\s*", re.I)


def _plan_topic(v: DiagnosisVote) -> bool:
    """Is the vote a bare topic heading of the plan ("3. Substance abuse.")? A plan groups its steps under topics
    that name what is addressed, which the note need not diagnose; only a section that decides treatment below
    the diagnosis list and the assessment counts."""
    if v.status.certainty is None or v.status.certainty.evidence.rule_id != "default":
        return False
    section = v.status.certainty.evidence.section or ""
    if not decides_treatment(section) or section in deciding_sections():
        return False
    text = _ENUMERATOR.sub("", v.evidence_text).strip().rstrip(".:;,")
    found = find_diagnoses(text, section)
    rest = text
    for start, end, _ in sorted(found, reverse=True):
        rest = rest[:start] + " " + rest[end:]
    return bool(found) and len(re.findall(r"[A-Za-z]{2,}", rest)) == 0


def _attested(acc: Accumulator, rule_id: str) -> bool:
    """Does the note tell, outside the sections that decide treatment, that the patient has a feature the DSM rule
    lists ("smokes one pack per day" under the social history for a plan topic "Tobacco abuse")? A plan topic
    then names a problem the note documents, as a problem-oriented plan does."""
    rule = dsm_rules.rules_by_id().get(rule_id)
    if rule is None:
        return False
    return any(not decides_treatment(sec) for h in rule.symptoms for sec in acc.asserted_in.get(f"sx_{slug(h)}", ()))


def finalize_diagnoses(acc: Accumulator) -> None:
    """One node per diagnosis from its mentions (:func:`~anonpsy.extract.assertion.status.resolve_diagnosis`):
    asserted and current or past in the assessment -> a diagnosis; confirmed and past outside it -> past
    history; only ruled out or to be ruled out -> kept aside (``acc.unasserted_dx``)."""
    for did, votes in acc.dx_votes.items():
        label, rule_id = acc.dx_names[did]
        if all(_plan_topic(v) for v in votes) and not _attested(acc, rule_id):
            continue  # "PLAN: 3. Substance abuse.": a topic of the plan, not a diagnosis the note makes
        st = resolve_diagnosis([v.status for v in votes])
        assert st.certainty is not None
        win = next(v for v in votes if v.status.certainty is not None
                   and v.status.certainty.evidence == st.certainty.evidence)
        if not st.certainty.value.is_asserted():
            acc.unasserted_dx[did] = Diagnosis(id=did, label=label, rule_id=rule_id, certainty=st.certainty.value,
                                               certainty_evidence=st.certainty.evidence,
                                               temporality=st.temporality.value,
                                               temporality_evidence=st.temporality.evidence,
                                               evidence_text=win.evidence_text)
            continue
        if st.history:
            pid = f"ph_{did.removeprefix('dx_')}"
            ph_status = HistoryStatus.remitted if st.remitted else HistoryStatus.pre_existing
            specs = [v.spec for v in votes if v.spec is not None and not v.spec.ongoing]
            acc.past[pid] = PastHistory(id=pid, condition=label, status=ph_status,
                                        status_evidence=st.temporality.evidence,
                                        duration_ids=[acc.duration_for(specs[0])] if specs else [],
                                        evidence_text=win.evidence_text)
            continue
        specifiers = list(dict.fromkeys(x for v in votes for x in v.specifiers))
        acc.diagnoses[did] = Diagnosis(id=did, label=label, rule_id=rule_id, certainty=st.certainty.value,
                                       certainty_evidence=st.certainty.evidence,
                                       temporality=st.temporality.value,
                                       temporality_evidence=st.temporality.evidence,
                                       specifiers=specifiers, evidence_text=win.evidence_text)
        acc.mentions[did] = min(v.sentence_index for v in votes)


#: A results section's sentence that tells a drug given during the study or procedure ("The needle was injected
#: with Depo-Medrol 80 mg", "after administration of 0.4 mg of glucagon") or one the patient takes or is told to
#: take ("She has been on three Tums orally b.i.d. and I am increasing ..."): the drug is a treatment, not a test.
#: Other drug names there (a level, a screen, a result) are no treatment and are not read.
_GIVEN_IN_STUDY = re.compile(r"\b(?:inject(?:ed|ion|ions)?|infus(?:ed|ion)|administ(?:ered|ration)|instill(?:ed|ation)|"
                             r"premedicated|sedated|anesthetized|anaesthetized|taking|takes|"
                             r"(?:has|have|had)\s+been\s+on|(?:is|are)\s+on|"
                             r"(?:I|we)\s+(?:am|are|will\s+be|will)\s+(?:increasing|decreasing|starting|continuing|"
                             r"increase|decrease|start|continue))\b", re.I)


#: A number right after a mineral or vitamin, with no dose unit: its measured level ("magnesium was 2", "iron 30",
#: "vitamin D level of 12").
_LEVEL_AFTER = re.compile(r"\s*(?:levels?\s*)?(?:(?:was|is|were|of|at|=|:)\s*)?(?:only\s+|low\s+at\s+|high\s+at\s+)?"
                          r"\d+(?:\.\d+)?(?!\s*(?:mg|mcg|µg|g|gm|grams?|meq|mEq|units?|iu|IU|tabs?|tablets?|caps?|"
                          r"capsules?|ml|mL|cc|%)\b)(?!\.?\d)")


def _is_vaccine(class_id: str | None, name: str) -> bool:
    return class_id == "vaccine" or name.lower().endswith(("vaccine", "toxoid", "toxoids"))


#: A vaccine given or ordered at this visit.
_GIVEN_NOW = re.compile(r"\b(?:give|giving|given|administered|today|this\s+visit|now|was\s+done|updated|update|"
                        r"ordered)\b", re.I)
#: A vaccine given before this visit ("Pneumovax has been given in the last five years", "up to date").
_GIVEN_BEFORE = re.compile(r"\b(?:(?:has|have|had)\s+(?:already\s+)?been\s+given|(?:has|have|had)\s+(?:already\s+)?"
                           r"(?:received|had)|in\s+the\s+(?:last|past)|ago|previously|up\s+to\s+date|last\s+(?:year|"
                           r"month|fall|spring|summer|winter|dose|booster|shot)|in\s+(?:19|20)\d\d|(?:was|were)\s+in\b)",
                           re.I)
#: A vaccine the patient is due for, told without giving it ("He does need a flu vaccine"): planned.
_DUE = re.compile(r"\b(?:needs?|needed|is\s+due|are\s+due|due\s+for|should\s+(?:get|receive|have)|"
                  r"(?:we\s+)?recommend(?:ed)?|will\s+need)\b", re.I)


def _vaccination(d: Decision[TreatmentStatus], sentence: str) -> Decision[TreatmentStatus]:
    """A vaccine is a dose given, never a drug taken: one told with nothing that gives it now ("His last tetanus
    booster was in 07/03", "immunizations: flu shot") was given before (past); one given or ordered at this visit
    ("We will give a tetanus booster", "Tdap given today") is one dose (prn); one the patient is due for ("He
    does need a flu vaccine") is planned."""
    if _DUE.search(sentence) and not _GIVEN_NOW.search(sentence):
        return Decision(TreatmentStatus.planned, d.evidence.model_copy(update={"rule_id": "cue.vaccine_due"}))
    if _GIVEN_BEFORE.search(sentence):
        return Decision(TreatmentStatus.past, d.evidence.model_copy(update={"rule_id": "cue.vaccination_told"}))
    if d.evidence.rule_id == "default" and not _GIVEN_NOW.search(sentence):
        return Decision(TreatmentStatus.past, d.evidence.model_copy(update={"rule_id": "cue.vaccination_told"}))
    return Decision(TreatmentStatus.prn, d.evidence.model_copy(update={"rule_id": "cue.vaccine_dose"}))


def add_treatments(s: Sentence, times: Sequence[TimeMention], acc: Accumulator) -> None:
    """Treatment nodes of one sentence; each mention's status is recorded (``acc.tx_votes``) and resolved by
    :func:`finalize_treatments`."""
    if s.section in ("allergies", "family_history") or (s.section == "labs" and not _GIVEN_IN_STUDY.search(s.text)):
        return
    for m in medication_mentions(s.text):
        med = lexicon.parse_medication(s.text, m)
        if med.class_id == "vitamin_supplement" and med.dose is None and med.frequency is None \
                and _LEVEL_AFTER.match(s.text, m.end):
            continue  # "her magnesium was 2", "iron 30": a level measured, not a supplement taken
        decision = treatment_status(_mention(s, m.start, m.end, times, acc), med.frequency, "medication")
        if decision is None:
            continue
        if decision.value == TreatmentStatus.current and _is_vaccine(med.class_id, med.name):
            decision = _vaccination(decision, s.text)
        tid = f"tx_{slug(med.name)}"
        route = med.route
        acc.med_class.setdefault(tid, med.class_id)
        if tid not in acc.treatments:
            acc.treatments[tid] = Treatment(id=tid, type=TreatmentType.medication, name=med.name, dose=med.dose,
                                            route=route, frequency=med.frequency, status=decision.value,
                                            status_evidence=decision.evidence, evidence_text=s.text.strip())
            acc.mentions[tid] = s.index
        if names_a_condition(s.text, m.end):
            acc.tx_condition_votes.setdefault(tid, []).append(decision)
        else:
            acc.tx_votes.setdefault(tid, []).append(decision)
        t = acc.treatments[tid]
        if t.dose is None and med.dose is not None:
            t.dose, t.route, t.frequency = med.dose, route or t.route, med.frequency or t.frequency
        spec = governing_time(s.text, (m.start, m.end), times)
        if spec is not None:
            did = acc.duration_for(spec.spec)
            if did not in t.duration_ids:
                t.duration_ids = [*t.duration_ids, did]
    for g in group_mentions(s.text):
        decision = treatment_status(_mention(s, g.start, g.end, times, acc), kind="medication")
        # only a stop reaches every drug of a group ("since discontinuing antidepressants"); "took sleep
        # medication" or "benzodiazepine withdrawal" says nothing about the drugs the note names
        if decision is not None and decision.evidence.rule_id.startswith("context.hist.stop"):
            acc.group_votes.append((g.classes, decision))
    for m in therapy_mentions(s.text):
        decision = treatment_status(_mention(s, m.start, m.end, times, acc), kind="therapy")
        if decision is None:
            continue
        tid = f"tx_{slug(m.id)}"
        if tid not in acc.treatments:
            ttype = therapy_types().get(m.id, "psychotherapy")
            acc.treatments[tid] = Treatment(id=tid, type=TreatmentType(ttype), name=m.headword,
                                            route=Route.not_applicable, status=decision.value,
                                            status_evidence=decision.evidence, evidence_text=s.text.strip())
            acc.mentions[tid] = s.index
        acc.tx_votes.setdefault(tid, []).append(decision)


def finalize_treatments(acc: Accumulator, *, current_list: bool, sents: Sequence[Sentence] = ()) -> None:
    """Each treatment's status from its mentions and the decided mentions of a group it belongs to ("stay off
    antidepressants" for every antidepressant the note names), by
    :func:`~anonpsy.extract.assertion.status.resolve_treatment`; ``current_list``: the note has a current
    medication list (so a drug only on the home list was not continued)."""
    for tid, named in acc.tx_condition_votes.items():
        # "digoxin toxicity secondary to likely digoxin overuse": the cues there frame the condition; the drug's
        # own mentions decide its status, and these only when there is none
        if not acc.tx_votes.get(tid):
            acc.tx_votes[tid] = list(named)
    for classes, decision in acc.group_votes:
        for tid, cls in acc.med_class.items():
            if cls in classes and tid in acc.tx_votes:
                acc.tx_votes[tid].append(decision)
    stopped_after(acc, sents)
    by_start = {s.start: i for i, s in enumerate(sents)}
    for tid, votes in acc.tx_votes.items():
        t = acc.treatments[tid]
        d = resolve_treatment(votes, current_list=current_list and t.type == TreatmentType.medication)
        t.status, t.status_evidence = d.value, d.evidence
        if d.value == TreatmentStatus.prn and _one_dose(d) and not t.frequency:
            t.frequency = "once"  # "was given 2 mg of lorazepam": a single dose, not a drug taken as needed
        if acc.med_class.get(tid) == CONTRAST_AGENT and d.value in (TreatmentStatus.current, TreatmentStatus.prn):
            # "Omnipaque 300 1.5 mL was placed": a contrast product is a dose given at the study, never a drug taken
            t.status = TreatmentStatus.prn
            t.status_evidence = d.evidence.model_copy(update={"rule_id": CONTRAST_RULE})
            t.frequency = "once"
        if d.value == TreatmentStatus.past and sents:
            t.discontinued_reason = _stop_reason(votes, sents, by_start, t.type == TreatmentType.medication)


#: A sentence that opens by telling a stop of "it": "It was discontinued on 08/30 when the INR was 1.92."
_IT_STOPPED_LEAD = re.compile(r"^\W*(?:it|this)\s+(?:was|had\s+been)\s+(?:then\s+|later\s+|subsequently\s+|"
                              r"eventually\s+|finally\s+)?(?:discontinued|stopped|held|d/c'?d|tapered\s+off|"
                              r"weaned\s+off|withdrawn)\b", re.I)


def stopped_after(acc: Accumulator, sents: Sequence[Sentence]) -> None:
    """A sentence that opens with "It was discontinued" and names no drug of its own speaks of the last drug of
    the sentence before: that drug gets a stop (rule ``cue.it_stopped``), which the resolution weighs like any
    stop the note tells."""
    for prev, nxt in itertools.pairwise(sents):
        if not _IT_STOPPED_LEAD.match(nxt.text) or medication_mentions(nxt.text):
            continue
        meds = medication_mentions(prev.text)
        if not meds:
            continue
        tid = f"tx_{slug(lexicon.parse_medication(prev.text, meds[-1]).name)}"
        if tid in acc.tx_votes:
            ev = Evidence(start=nxt.start, end=max(nxt.end, nxt.start + 1), section=nxt.section,
                          rule_id="cue.it_stopped")
            acc.tx_votes[tid].append(Decision(TreatmentStatus.past, ev))


def _stop_reason(votes: Sequence[Decision[TreatmentStatus]], sents: Sequence[Sentence],
                 by_start: dict[int, int], drug: bool) -> str | None:
    """Why a stopped treatment was stopped (``rules/treatments/discontinuation.yaml``): read from the sentences
    that name it and the sentence after one of them that speaks of the drugs again ("these medications")."""
    texts: list[str] = []
    for i in sorted({by_start[v.evidence.start] for v in votes if v.evidence.start in by_start}):
        texts.append(sents[i].text)
        if (drug and i + 1 < len(sents) and ANAPHOR.search(sents[i + 1].text)
                and not medication_mentions(sents[i + 1].text)):
            texts.append(sents[i + 1].text)
    return reason_table().reason(texts)


def denied_since(acc: Accumulator) -> None:
    """A symptom the note tells without a cue ("she lost interest in activities", "he experienced visual
    hallucinations while intoxicated") and explicitly denies after its last such mention ("She has no
    anhedonia") had it before and has it no more: historical, decided by the denial (rule
    ``assembly.denied_since``). A symptom a cue asserts ("reports", "endorses", "currently") is left as read."""
    for sid, sx in acc.symptoms.items():
        den = acc.unasserted_sx.get(sid)
        if (den is None or den.assertion != Assertion.absent or sid in acc.cued_present
                or sx.assertion != Assertion.present or sid not in acc.last_present):
            continue
        ev = den.assertion_evidence
        if ev is None or ev.start is None or ev.start <= acc.last_present[sid]:
            continue
        sx.assertion, sx.current_symptom = Assertion.historical, False
        sx.assertion_evidence = ev.model_copy(update={"rule_id": "assembly.denied_since"})
        acc.present.discard(sid)
        acc.flaggable.discard(sx.headword)


#: The reason an admission or a hold was made, right before the symptom: "was admitted for an acute agitation",
#: "brought in for aggressive behavior", "hospitalized because of severe anxiety".
_ADMITTED_FOR = Caseless(re.compile(r"\b(?:admitted|admission|hospitali[sz]ed|hospitali[sz]ation|brought in|"
                                    r"brought to the (?:emergency (?:department|room)|ED|ER|hospital)|placed on "
                                    r"(?:a|an) [\w -]{0,20}hold)(?: to [\w ]{1,30}?)? (?:for|because of|due to|"
                                    r"secondary to) (?:an? |the |)(?:[a-z]+ ){0,2}$", re.I))
_EXAM_SECTIONS = frozenset({"mse", "exam"})


def admission_reason_before_exam(acc: Accumulator) -> None:
    """A symptom told present only as the reason for the admission ("was admitted for an acute agitation") that
    the examination of this visit denies ("no psychomotor agitation") was there at admission and is not now:
    historical (rule ``assembly.admission_reason_before_exam``), wherever the two statements stand in the note.
    A symptom the note also tells present otherwise is left as read."""
    for sid in acc.admission_reason - acc.told_present:
        sx = acc.symptoms.get(sid)
        if sx is None or sx.assertion != Assertion.present or sid in acc.cued_present:
            continue
        word = re.escape(sx.headword).replace(r"\ ", r"\s+")
        if not any(re.search(rf"\b(?:no|not|without|denies|denied|absent)\b[^.;:]{{0,30}}\b{word}\b", t, re.I)
                   for t in acc.exam_text):
            continue
        sx.assertion, sx.current_symptom = Assertion.historical, False
        if sx.assertion_evidence is not None:
            sx.assertion_evidence = sx.assertion_evidence.model_copy(
                update={"rule_id": "assembly.admission_reason_before_exam"})
        acc.present.discard(sid)
        acc.flaggable.discard(sx.headword)


def denied_over_possible(acc: Accumulator) -> None:
    """A symptom only ever told as possible and explicitly denied elsewhere: the statement of the higher section
    tier decides (``tier`` in ``rules/sections/sections.yaml``: the assessment over the history, the history over
    the referral question), and within one tier the later statement ("referred for possible drug use" and
    "denies use of illicit drugs": denied). The denial that wins leaves the symptom absent (rule
    ``assembly.denied_over_possible``)."""
    for sid, sx in list(acc.symptoms.items()):
        den = acc.unasserted_sx.get(sid)
        if den is None or den.assertion != Assertion.absent or sx.assertion != Assertion.possible:
            continue
        ev, poss = den.assertion_evidence, sx.assertion_evidence
        if ev is None or ev.start is None or poss is None:
            continue
        den_tier, poss_tier = section_tier(ev.section or ""), section_tier(poss.section or "")
        if den_tier < poss_tier or (den_tier == poss_tier and ev.start <= acc.last_present.get(sid, -1)):
            continue
        den.assertion_evidence = ev.model_copy(update={"rule_id": "assembly.denied_over_possible"})
        del acc.symptoms[sid]
        acc.present.discard(sid)
        acc.flaggable.discard(sx.headword)


#: Elimination symptoms whose DSM-5-TR disorder excludes a medical cause (Enuresis, Criterion D), by the medical
#: condition of ``rules/lexicon/conditions.yaml`` that is that cause. (Soiling stays: the encopresis lexicon
#: itself names "fecal incontinence".)
_MEDICAL_CAUSE_OF = {"sx_enuresis": "ph_urinary_incontinence"}


def medical_cause_over_symptom(acc: Accumulator) -> None:
    """Wetting told by a patient whose urinary incontinence the note names ("I wet the bed" beside "urinary
    urgency and incontinence"): the incontinence, a medical condition, not the elimination symptom that would
    read as enuresis."""
    for sid, pid in _MEDICAL_CAUSE_OF.items():
        sx = acc.symptoms.get(sid)
        if sx is None or pid not in acc.past or acc.past[pid].status == HistoryStatus.denied:
            continue
        del acc.symptoms[sid]
        acc.present.discard(sid)
        acc.flaggable.discard(sx.headword)


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
