"""The rules backend of extraction E: narrative text → case graph.

Each step is a small pure function over the segmented text; the lexicons, ConText triggers, DSM aliases and
treatment classes come from ``rules/``. The steps, in order: :mod:`~anonpsy.extract.sections` (sections,
sentences, clauses), :mod:`~anonpsy.extract.mentions` (what is named where), :mod:`~anonpsy.extract.assertion`
(whether and whose it is), and :mod:`~anonpsy.extract.assembly` (nodes, durations, edges, STEB frames, the
visit). The result is normalised by the core temporal engine by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from anonpsy.caseless import Caseless
from anonpsy.extract.assembly.accumulator import Accumulator
from anonpsy.extract.assembly.nodes import (
    add_conditions,
    add_diagnoses,
    add_symptoms,
    add_treatments,
    admission_reason_before_exam,
    denied_over_possible,
    denied_since,
    finalize_conditions,
    finalize_diagnoses,
    finalize_treatments,
    medical_cause_over_symptom,
    present_today,
)
from anonpsy.extract.assembly.relations import dedupe_edges, derive_relations
from anonpsy.extract.assembly.visit import extract_visit
from anonpsy.extract.assertion.status import Mention, family_certainty
from anonpsy.extract.mentions.demographics import (
    extract_age,
    extract_ethnicity,
    extract_family_structure,
    extract_occupation,
    extract_sex,
)
from anonpsy.extract.mentions.family import family_condition_spans
from anonpsy.extract.mentions.mse import parse_mental_status_parts
from anonpsy.extract.mentions.results import number_values, parse_results
from anonpsy.extract.mentions.time import time_mentions, visit_date
from anonpsy.extract.sections import medication_list, sentences, title_line
from anonpsy.graph import CaseGraph, Demographics, Omission, TestResults, TestValue

#: A sentence outside the labs section that reports a score or a level.
_SCORE_SENTENCE = re.compile(r"\b(?:PHQ-9|GAD-7|MMSE|MoCA|HAM-?D|MADRS|YMRS|Y-BOCS|PCL-5|AUDIT|CIWA|COWS|BDI|PANSS|"
                             r"EPDS|lithium level|level (?:of|was))\b[^.]{0,30}\d", re.I)
_SCORE_SEARCH = Caseless(_SCORE_SENTENCE)


def extract(text: str, *, case_id: str = "case") -> CaseGraph:
    """Rules-backend extraction of a case graph from narrative text (not yet temporally normalised).

    >>> g = extract("A 34-year-old woman reports low mood for the past 3 weeks. She denies suicidal ideation.")
    >>> [(s.headword, s.current_symptom, s.assertion.value) for s in g.symptoms]
    [('depressed mood', True, 'present'), ('suicidal ideation', False, 'absent')]

    The mental status examination and the test results are read into structured values; their sentences are
    never copied. Symptoms only denied or hypothetical and diagnoses only ruled out (or to be ruled out) come
    last, with no duration, frame or relation.
    """
    return _extract(text, case_id, whole=True)


def extract_facts(text: str, *, case_id: str = "case") -> CaseGraph:
    """The diagnoses, symptoms, treatments, past history and family history :func:`extract` reads in ``text``,
    identical to its own, without the rest of the graph (the visit scaffold, the mental status examination, test
    values, and demographics beyond age and sex keep their defaults): what reading a text back to compare its
    facts needs, for a fraction of the work.

    >>> g = extract_facts("A 34-year-old woman reports low mood. She denies suicidal ideation.")
    >>> [(s.headword, s.assertion.value) for s in g.symptoms]
    [('depressed mood', 'present'), ('suicidal ideation', 'absent')]
    """
    return _extract(text, case_id, whole=False)


def read_facts(text: str, *, case_id: str = "case") -> CaseGraph:
    """The graph of :func:`extract_facts` for reading its facts only, as the round trip does: the very diagnoses,
    symptoms, treatments, past history, family history, durations, edges and age, without validating the graph
    again (each node is validated as it is made; node ids are still checked unique). Its other parts (the sex
    included, though the facts were read with it) are shared defaults: read them, never change them.

    >>> g = read_facts("A 34-year-old woman reports low mood. She denies suicidal ideation.")
    >>> [(s.headword, s.assertion.value) for s in g.symptoms], g.demographics.age
    ([('depressed mood', 'present'), ('suicidal ideation', 'absent')], 34)
    """
    return _extract(text, case_id, whole=False, validate=False)


#: The defaults a graph of :func:`read_facts` is copied from.
_UNREAD = CaseGraph(case_id="unread")


_DISCHARGE_SUMMARY = Caseless(re.compile(r"\bdischarge summary\b", re.I))


def index_is_admission(text: str) -> bool:
    """Is the note a discharge summary (its index event the whole admission, not one visit)?"""
    return bool(_DISCHARGE_SUMMARY.search(title_line(text)))


def _extract(text: str, case_id: str, *, whole: bool, validate: bool = True) -> CaseGraph:
    sents = sentences(text)
    age = extract_age(sents)
    visit = visit_date(text)
    sex = extract_sex(text)  # a pronoun of the other sex points to someone else: facts depend on it
    acc = Accumulator(index_is_admission=index_is_admission(text), patient_sex=sex)
    mse: list[tuple[str, int | None]] = []
    values: list[TestValue] = []
    omitted: list[Omission] = []

    for s in sents:
        times = time_mentions(s.text, age=age, visit=visit)
        if whole and s.section == "mse":
            mse.append((s.text, s.start))
        elif whole and (s.section == "labs" or _SCORE_SEARCH.search(s.text)):
            in_labs = s.section == "labs"
            found, skipped = parse_results(s.text, "labs" if in_labs else "other", offset=s.start, section=s.section,
                                           rule_id="section.labs" if in_labs else "cue.test_score")
            values += found
            omitted += skipped
        if s.section == "family_history":
            for member, cond, start, end in family_condition_spans(s.text):
                certainty = family_certainty(Mention(s, start, end))
                acc.add_family(member, cond, s.text.strip(), certainty.value, certainty.evidence)
        add_symptoms(s, times, acc)
        add_diagnoses(s, times, acc)
        add_conditions(s, times, acc)
        add_treatments(s, times, acc)
    denied_since(acc)
    admission_reason_before_exam(acc)
    denied_over_possible(acc)
    finalize_diagnoses(acc)
    finalize_conditions(acc)
    medical_cause_over_symptom(acc)
    finalize_treatments(acc, current_list=any(medication_list(s.section) == "current" for s in sents), sents=sents)
    present_today(acc)
    derive_relations(text, sents, acc)

    denied = [sx for sid, sx in acc.unasserted_sx.items() if sid not in acc.symptoms]
    excluded = [dx for did, dx in acc.unasserted_dx.items()
                if did not in acc.diagnoses and f"ph_{did.removeprefix('dx_')}" not in acc.past]
    if not whole and not validate:
        read = _UNREAD.model_copy(update={
            "case_id": case_id, "demographics": Demographics(age=age), "family_history": acc.family,
            "diagnoses": [*acc.diagnoses.values(), *excluded], "symptoms": [*acc.symptoms.values(), *denied],
            "treatments": list(acc.treatments.values()), "past_history": list(acc.past.values()),
            "durations": acc.durations, "edges": dedupe_edges(acc.edges)})
        ids = [node_id for node_id, _ in read.iter_nodes()]
        if len(set(ids)) < len(ids) or len({d.id for d in read.durations}) < len(read.durations):
            raise ValueError("duplicate node or duration id")
        return read
    if not whole:
        return CaseGraph(case_id=case_id, demographics=Demographics(age=age, sex=sex), family_history=acc.family,
                         diagnoses=[*acc.diagnoses.values(), *excluded], symptoms=[*acc.symptoms.values(), *denied],
                         treatments=list(acc.treatments.values()), past_history=list(acc.past.values()),
                         durations=acc.durations, edges=dedupe_edges(acc.edges))
    current = {sx.headword for sx in acc.symptoms.values() if sx.current_symptom and sx.headword in acc.flaggable}
    visit_event = extract_visit(text, sents, current)
    exam, skipped = parse_mental_status_parts(mse)
    return CaseGraph(
        case_id=case_id,
        demographics=Demographics(age=age, sex=sex, ethnicity=extract_ethnicity(sents),
                                  occupation=extract_occupation(sents),
                                  family_structure=extract_family_structure(sents)),
        mental_status=exam,
        test_results=TestResults(values=number_values(values)),
        family_history=acc.family,
        diagnoses=[*acc.diagnoses.values(), *excluded],
        symptoms=[*acc.symptoms.values(), *denied],
        treatments=list(acc.treatments.values()),
        past_history=list(acc.past.values()),
        visit_event=visit_event,
        durations=acc.durations,
        edges=dedupe_edges(acc.edges),
        omitted=[*omitted, *skipped],
    )


def withhold_identified(graph: CaseGraph, find: Callable[[str], Sequence[object]]) -> CaseGraph:
    """The graph without the test values whose name or result holds an identifier of the source.

    ``find(text)`` returns the identifiers found in ``text`` (e.g.
    :meth:`anonpsy.perturb.contexts.SourceIdentifiers.find`, which locates the identifiers of the whole source).
    Structured values are never scrubbed, so such a value is withheld instead: removed and counted in ``omitted``
    (reason ``IDENTIFIER``), never silently dropped.
    """
    kept: list[TestValue] = []
    withheld: list[Omission] = []
    for v in graph.test_results.values:
        written = " ".join(x for x in (v.name, v.result) if x)
        if v.rule_id is None and find(written):
            ev = v.evidence
            span = {"start": ev.start, "end": ev.end} if ev is not None and ev.start is not None else {}
            field = "imaging" if v.kind.value == "imaging" else "labs"
            withheld.append(Omission(field=field, words=len(written.split()), reason="IDENTIFIER", **span))
        else:
            kept.append(v)
    if not withheld:
        return graph
    return graph.model_copy(update={"test_results": TestResults(values=kept),
                                    "omitted": [*graph.omitted, *withheld]})
