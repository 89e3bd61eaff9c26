"""Assertion status in extraction E: every fact's status and the evidence that decided it, the assertion interface,
and the graph rules that keep statuses consistent."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.extract import extract, extract_facts
from anonpsy.extract.assembly.build import read_facts
from anonpsy.extract.assertion.status import (
    ASSERTION_PRECEDENCE,
    Mention,
    diagnosis_status,
    symptom_status,
    treatment_status,
)
from anonpsy.extract.sections import sentences
from anonpsy.graph import (
    Assertion,
    CaseGraph,
    Certainty,
    Diagnosis,
    Edge,
    Evidence,
    FamilyHistory,
    HistoryStatus,
    MentalStatus,
    RelationType,
    Symptom,
    Temporality,
    Treatment,
    TreatmentStatus,
    VisitEvent,
)
from anonpsy.temporal import normalize
from anonpsy.validate import assertion_violations, validate

#: What an extracted status may name as the rule that decided it.
RULE_PREFIXES = ("context.", "section.", "time.", "cue.", "default")

CASE = (
    "Date: 03/14/2025\n"
    "HISTORY OF PRESENT ILLNESS: A 29-year-old woman reports low mood for the past 2 months. She denies suicidal "
    "ideation. She had panic attacks in 2019. Possible auditory hallucinations.\n"
    "PAST PSYCHIATRIC HISTORY: Previously on fluoxetine, stopped because of nausea.\n"
    "MEDICATIONS: Sertraline 50 mg daily. Lorazepam 0.5 mg PRN anxiety.\n"
    "FAMILY HISTORY: Her father may have had bipolar disorder. Mother had depression.\n"
    "ASSESSMENT: Major depressive disorder. Rule out bipolar II disorder. Does not meet criteria for "
    "generalized anxiety disorder.\n"
    "PLAN: Will start cognitive behavioral therapy."
)


def _mention(text: str, target: str) -> Mention:
    s = next(s for s in sentences(text) if target in s.text)
    start = s.text.index(target)
    return Mention(s, start, start + len(target))


@pytest.fixture(scope="module")
def graph() -> CaseGraph:
    return normalize(extract(CASE, case_id="status"))


def test_every_status_has_evidence_of_its_sentence(graph: CaseGraph) -> None:
    decided: list[Evidence | None] = [
        *(e for d in graph.diagnoses for e in (d.certainty_evidence, d.temporality_evidence)),
        *(s.assertion_evidence for s in graph.symptoms),
        *(t.status_evidence for t in graph.treatments),
        *(f.certainty_evidence for f in graph.family_history),
        *(p.status_evidence for p in graph.past_history),
    ]
    assert decided and all(e is not None for e in decided)
    for ev in decided:
        assert ev is not None and ev.start is not None and ev.end is not None
        assert ev.rule_id.startswith(RULE_PREFIXES), ev.rule_id
        sentence = CASE[ev.start:ev.end]
        assert sentence.strip() == sentence and "\n" not in sentence, "the span is one sentence of the source"
        assert ev.section in {"hpi", "past_psych", "medications", "family_history", "assessment", "plan"}, ev


def test_diagnosis_certainty_and_temporality(graph: CaseGraph) -> None:
    got = {d.rule_id: (d.certainty.value, d.temporality.value) for d in graph.diagnoses}
    assert got["major_depressive_disorder"] == ("confirmed", "current")
    assert got["bipolar_ii_disorder"] == ("rule_out", "current")
    assert got["generalized_anxiety_disorder"] == ("ruled_out", "current")
    excluded = next(d for d in graph.diagnoses if d.rule_id == "generalized_anxiety_disorder")
    assert excluded.certainty_evidence is not None
    assert excluded.certainty_evidence.rule_id == "context.neg.criteria"


def test_symptom_assertions(graph: CaseGraph) -> None:
    got = {s.headword: s.assertion.value for s in graph.symptoms}
    assert got["depressed mood"] == "present"
    assert got["suicidal ideation"] == "absent"
    assert got["panic attack"] == "historical"
    assert got["auditory hallucination"] == "possible"
    by_head = {s.headword: s for s in graph.symptoms}
    assert by_head["suicidal ideation"].assertion_evidence.rule_id == "context.neg.denies"  # type: ignore[union-attr]
    assert by_head["panic attack"].assertion_evidence.rule_id == "time.past"  # type: ignore[union-attr]
    assert not by_head["suicidal ideation"].current_symptom


def test_treatment_statuses(graph: CaseGraph) -> None:
    got = {t.name: (t.status.value, t.status_evidence.rule_id if t.status_evidence else None)
           for t in graph.treatments}
    assert got["fluoxetine"] == ("past", "context.hist.stop_either")
    reasons = {t.name: t.discontinued_reason for t in graph.treatments}
    assert reasons == {"fluoxetine": "side effects (nausea)", "sertraline": None, "lorazepam": None,
                       "cognitive behavioral therapy": None}
    assert got["sertraline"] == ("current", "section.medications")
    assert got["lorazepam"] == ("prn", "cue.prn")
    assert got["cognitive behavioral therapy"] == ("planned", "context.hyp.future_start")


def test_relative_conditions_stay_in_family_history(graph: CaseGraph) -> None:
    fam = {(f.member, f.condition): f.certainty.value for f in graph.family_history}
    assert fam[("father", "bipolar disorder")] == "possible"
    assert fam[("mother", "depression")] == "confirmed"
    assert not any(d.rule_id == "bipolar_i_disorder" for d in graph.diagnoses)
    assert not [v for v in assertion_violations(graph) if v.code == "FAMILY_AS_PATIENT"]


def test_extracted_graph_breaks_no_status_rule(graph: CaseGraph) -> None:
    status_codes = {"SX_NOT_CURRENT", "SX_UNASSERTED_LINKED", "DX_EXCLUDED_LINKED", "TX_REASON_NOT_PAST",
                    "FAMILY_AS_PATIENT"}
    assert [v.code for v in validate(graph) if v.code in status_codes] == []


# -- the interface the assertion engine fills ------------------------------------------------------------------


def test_symptom_status_interface() -> None:
    st = symptom_status(_mention("She denies hallucinations.", "hallucinations"))
    assert st.owner.experiencer == "patient"
    assert st.assertion is not None and st.assertion.value == Assertion.absent
    assert st.assertion.evidence.rule_id == "context.neg.denies"
    rel = symptom_status(_mention("Her mother has panic attacks.", "panic attacks"))
    assert rel.assertion is None and rel.family is not None and rel.owner.member == "mother"


def test_diagnosis_status_interface() -> None:
    st = diagnosis_status(_mention("Does not meet criteria for PTSD.", "PTSD"))
    assert st.certainty is not None and st.certainty.value == Certainty.ruled_out
    # A denial outside the assessment is a symptom's business, not a diagnostic exclusion.
    assert diagnosis_status(_mention("She denies depression.", "depression")).certainty is None
    past = diagnosis_status(_mention("PAST PSYCHIATRIC HISTORY: Major depressive disorder.", "Major depressive"))
    assert past.temporality.value == Temporality.past and past.history
    assert past.temporality.evidence.rule_id == "section.past_psych"


def test_treatment_status_interface() -> None:
    planned = treatment_status(_mention("Plan to start sertraline.", "sertraline"))
    assert planned is not None and planned.value == TreatmentStatus.planned
    assert treatment_status(_mention("She is not on sertraline.", "sertraline")) is None
    # a conclusion after a stop cue plans the next drug; it does not stop it
    s = "She is not taking a statin, therefore, we will prescribe atorvastatin."
    then = treatment_status(_mention(s, "atorvastatin"))
    assert then is not None and then.value == TreatmentStatus.planned
    stopped = treatment_status(_mention(s, "statin"))
    assert stopped is not None and stopped.value == TreatmentStatus.past
    assert ASSERTION_PRECEDENCE[0] == Assertion.present


@pytest.mark.parametrize(
    ("text", "drug", "status", "rule"),
    [
        # MTSamples (CC0): "We will start her on Lovenox subcutaneously 40 mg every day"
        ("We will start her on Lovenox subcutaneously 40 mg every day.", "Lovenox", "current",
         "context.cur.ordered_now"),
        ("Will start sertraline.", "sertraline", "current", "context.cur.ordered_now"),
        ("We will add Flovent 44 mcg two puffs b.i.d.", "Flovent", "current", "context.cur.ordered_now"),
        # boundary: a start put off to a later day is planned
        ("Will start sertraline next week.", "sertraline", "planned", "cue.deferred_start"),
        ("We will start lithium after discharge.", "lithium", "planned", "cue.deferred_start"),
        ("We will start lithium 300 mg daily, and recheck a level next week.", "lithium", "current",
         "context.cur.ordered_now"),
        # boundary: a start on a condition or a consent, a planned start, stay planned
        ("If she consents, we will start sertraline 25 mg daily.", "sertraline", "planned", "context.hyp.consent"),
        ("With the patient's permission, I will start quetiapine at a dose of 100 mg at bedtime.", "quetiapine",
         "planned", "context.hyp.consent"),
        ("Should he agree, we will start lithium.", "lithium", "planned", "context.hyp.consent"),
        ("If the rash persists, we will start prednisone.", "prednisone", "planned", "context.hyp.conditional"),
        ("We plan on starting her on Cymbalta instead.", "Cymbalta", "planned", "context.hyp.plan_on"),
    ],
)
def test_a_start_ordered_at_this_visit_is_current(text: str, drug: str, status: str, rule: str) -> None:
    """"We will start X" is an order given at this visit: the drug is started now (current), unless the start is
    put off to a later day, made conditional on an event or a consent, or only planned."""
    got = treatment_status(_mention(text, drug))
    assert got is not None
    assert (got.value.value, got.evidence.rule_id) == (status, rule)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # MTSamples (CC0): "Hypertension treated with Cozaar 100 mg daily and Norvasc 10 mg daily."
        ("PAST HISTORY: Hypertension treated with Cozaar 100 mg daily and Norvasc 10 mg daily.  Glaucoma treated "
         "with Xalatan drops.", {"losartan": "current", "amlodipine": "current", "latanoprost": "current"}),
        ("PAST HISTORY: Sleep disturbances, depression and anxiety treated with Paxil 25 mg daily.",
         {"paroxetine": "current"}),
        # boundary: a course told with a verb, a past marker or a past time stays past
        ("HISTORY OF PRESENT ILLNESS: She was treated with lithium.", {"lithium": "past"}),
        ("HISTORY OF PRESENT ILLNESS: Depression previously treated with Paxil.", {"paroxetine": "past"}),
        ("HISTORY OF PRESENT ILLNESS: Depression treated with Paxil in 2005.", {"paroxetine": "past"}),
    ],
)
def test_a_problem_treated_with_a_drug_names_the_regimen_taken_now(text: str, expected: dict[str, str]) -> None:
    """A problem list's entry "condition treated with drug" names the drug taken now; "was treated with" or a
    past marker tells a course that is over."""
    assert {t.name: t.status.value for t in extract(text, case_id="tx").treatments} == expected


def test_a_prescription_field_label_names_the_prescribed_drug() -> None:
    """"Augmentin  Dosage:  400 mg ... Sig: ..." prescribes the drug the label names; a label that only asks
    ("Suicidal ideation:") still asserts nothing by itself."""
    text = ("PLAN: Return in 2 weeks.\nPRESCRIPTIONS:,  Augmentin  Dosage:  400 mg-57 mg/5 ml powder  Sig:  One PO "
            "Q8h  Dispense:  1 Refills:  0")
    assert {t.name: t.status.value for t in extract(text, case_id="rx").treatments} == {
        "amoxicillin/clavulanate": "current"}
    assert treatment_status(_mention("Lithium level: pending.", "Lithium")) is None



@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PLAN: Trial of gabapentin 300 mg at bedtime.", {"gabapentin": "current"}),
        ("COMMENTS: Headaches are worse. Medications prescribed: Therapeutic trial of Inderal 40 mg b.i.d.",
         {"propranolol": "current"}),
        ("PLAN: 1. A trial of Zoloft 25 mg daily.", {"sertraline": "current"}),
        # boundary: a trial told with a subject, a verb, an outcome or in the history stays past
        ("PLAN: She had a trial of Zoloft last year.", {"sertraline": "past"}),
        ("PLAN: A trial of Zoloft did not help.", {"sertraline": "past"}),
        ("PLAN: Trial of Zoloft without benefit.", {"sertraline": "past"}),
        ("HISTORY OF PRESENT ILLNESS: Trial of Prozac.", {"fluoxetine": "past"}),
    ],
)
def test_a_trial_ordered_in_telegraphic_style_starts_now(text: str, expected: dict[str, str]) -> None:
    """"Trial of X" opening a plan item or what a label introduces orders the trial at this visit; a trial told
    with a subject, a verb or an outcome, or in the history, is a course that is over."""
    assert {t.name: t.status.value for t in extract(text, case_id="tx").treatments} == expected


def test_a_drug_administered_during_a_study_is_read_in_a_results_section() -> None:
    """A results section (labs, imaging) names drugs as tests; one injected during the procedure it reports is a
    treatment given. A drug level or screen there stays no treatment."""
    text = ("RADIOLOGY: Fluoroscopy confirmed the needle position. The needle was injected with Depo-Medrol 80 mg "
            "and bupivacaine 0.25% 4 mL.\nLABS: Lithium level 0.8. Urine screen positive for oxycodone.")
    assert {t.name for t in extract(text, case_id="rx").treatments} == {"methylprednisolone", "bupivacaine"}


# -- graph rules -----------------------------------------------------------------------------------------------


def _ev(start: int, end: int, section: str = "hpi") -> Evidence:
    return Evidence(start=start, end=end, section=section, rule_id="default")


@pytest.mark.parametrize(
    ("patient_evidence", "flagged"),
    [
        (_ev(100, 140, "family_history"), True),  # the patient's item was read from the family history
        (_ev(10, 60), True),  # the same sentence as the relative's condition
        (_ev(300, 340, "assessment"), False),  # independently evidenced in the assessment
        (None, False),  # written by hand: taken as its author asserted it
    ],
)
def test_family_condition_is_not_the_patients_without_its_own_evidence(
    patient_evidence: Evidence | None, flagged: bool
) -> None:
    g = CaseGraph(
        case_id="fam",
        family_history=[FamilyHistory(member="father", condition="bipolar I disorder",
                                      certainty_evidence=_ev(10, 60, "family_history"))],
        diagnoses=[Diagnosis(id="dx_bp", label="Bipolar I disorder", rule_id="bipolar_i_disorder",
                             certainty_evidence=patient_evidence)],
    )
    codes = [v.code for v in assertion_violations(g)]
    assert ("FAMILY_AS_PATIENT" in codes) is flagged


def test_status_rules_catch_contradictions() -> None:
    g = CaseGraph(
        case_id="bad",
        diagnoses=[Diagnosis(id="dx_a", label="Schizophrenia", rule_id="schizophrenia", certainty=Certainty.ruled_out)],
        symptoms=[Symptom(id="sx_a", headword="auditory hallucination", assertion=Assertion.absent,
                          current_symptom=True)],
        treatments=[Treatment(id="tx_a", name="sertraline", discontinued_reason="side effects")],
        edges=[Edge(type=RelationType.MANIFESTS_AS, source="dx_a", target="sx_a")],
    )
    codes = sorted(v.code for v in assertion_violations(g))
    assert codes == ["DX_EXCLUDED_LINKED", "SX_NOT_CURRENT", "SX_UNASSERTED_LINKED", "TX_REASON_NOT_PAST"]


def test_ruled_out_diagnoses_claim_nothing_for_dsm_rules() -> None:
    # PMDD asserted in a 9-year-old boy breaks its rule; ruled out, it claims nothing the rule could check.
    dx = Diagnosis(id="dx_p", label="PMDD", rule_id="premenstrual_dysphoric_disorder")
    g = CaseGraph(case_id="dsm", demographics={"age": 9, "sex": "male"}, diagnoses=[dx])
    assert [v.code for v in validate(g)] == ["DSM_SEX_MISMATCH"]
    excluded = g.model_copy(update={"diagnoses": [dx.model_copy(update={"certainty": Certainty.ruled_out})]})
    assert validate(excluded) == []


@pytest.mark.parametrize(
    ("text", "absent"),
    [
        ("Psychomotor:  Behavior is within normal limits without agitation or retardation.",
         {"psychomotor agitation", "psychomotor retardation"}),
        ("There was no psychomotor agitation or retardation.", {"psychomotor agitation", "psychomotor retardation"}),
        ("No auditory or visual hallucinations.", {"auditory hallucination", "visual hallucination"}),
        ("No agitation or anxiety.", {"psychomotor agitation", "anxiety"}),
    ],
)
def test_a_symptom_named_by_ellipsis_keeps_the_denial(text: str, absent: set[str]) -> None:
    g = extract(text, case_id="ellipsis")
    assert {s.headword for s in g.symptoms if s.assertion.value == Assertion.absent} == absent
    assert not [s for s in g.symptoms if s.assertion.value != Assertion.absent]


@pytest.mark.parametrize(
    "text",
    [
        "Social history: his partner reports that he consumed alcohol occasionally, but denies any excessive or "
        "binge use recently.",
        "Social history: he occasionally has a beer, but denies any continuous use of alcohol.",
    ],
)
def test_use_within_a_denied_limit_is_no_symptom(text: str) -> None:
    """Drinking now and then with the excess denied: the excess is denied, and the drinking is not presented as a
    symptom the patient has."""
    sx = {s.headword: s.assertion.value for s in extract(text, case_id="limit").symptoms}
    assert sx == {"excessive alcohol use": Assertion.absent}


@pytest.mark.parametrize(
    ("text", "headword"),
    [
        ("She was admitted following an overdose of citalopram and warfarin.", "overdose of citalopram and warfarin"),
        ("He was seen after an overdose of his Zoloft, Tylenol and lithium.",
         "overdose of sertraline, acetaminophen and lithium"),
        ("He had an overdose last year.", "overdose"),
    ],
)
def test_an_overdose_keeps_the_drugs_taken(text: str, headword: str) -> None:
    """The drugs of an overdose are part of the fact (generic names), not a bare "overdose"."""
    assert headword in {s.headword for s in extract(text, case_id="od").symptoms}


def test_a_symptom_told_then_denied_is_historical() -> None:
    """Told without a cue, then explicitly denied: had before, not now; a symptom a cue asserts is kept present,
    and a denial before the telling changes nothing."""
    def status(text: str, headword: str) -> tuple[str, str | None]:
        sx = next(s for s in extract(text).symptoms if s.headword == headword)
        return sx.assertion.value, sx.assertion_evidence.rule_id if sx.assertion_evidence else None

    told_then_denied = ("He says he experienced visual hallucinations while intoxicated. "
                        "The patient denies visual hallucinations.")
    assert status(told_then_denied, "visual hallucination") == ("historical", "assembly.denied_since")
    cued = "He reports visual hallucinations at night. The patient denies visual hallucinations."
    assert status(cued, "visual hallucination")[0] == "present"
    denied_first = "The patient denies visual hallucinations. He experienced visual hallucinations while intoxicated."
    assert status(denied_first, "visual hallucination")[0] == "present"


# -- reading a text back for its facts only ----------------------------------------------------------------------

_FACT_PARTS = ("diagnoses", "symptoms", "treatments", "past_history", "family_history", "durations", "edges")
_DEV_NOTES = Path(__file__).resolve().parents[2] / "shared" / "data" / "mtsamples-psych-dev" / "notes.jsonl"


def _texts() -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in sorted((Path(__file__).resolve().parents[1] / "fixtures"
                                                              / "cases").glob("*.txt"))]
    if _DEV_NOTES.is_file():  # public MTSamples transcriptions (see ../shared/data/LICENSES.md)
        texts += [json.loads(x)["text"] for x in _DEV_NOTES.read_text(encoding="utf-8").splitlines() if x.strip()]
    return texts


def test_extract_facts_reads_the_facts_extract_reads() -> None:
    """extract_facts (the round trip's reader) gives the very fact nodes, durations and edges of extract, on every
    fixture and every dev note, and leaves the rest of the graph at its defaults."""
    texts = _texts()
    assert len(texts) >= 22
    for text in [*texts, CASE]:
        whole, facts = extract(text, case_id="x"), extract_facts(text, case_id="x")
        for part in _FACT_PARTS:
            assert getattr(facts, part) == getattr(whole, part), part
        assert (facts.demographics.age, facts.demographics.sex) == (whole.demographics.age, whole.demographics.sex)
        assert facts.visit_event == VisitEvent() and facts.mental_status == MentalStatus()
        assert not facts.test_results.values and not facts.omitted


def _same_reading(text: str) -> None:
    """read_facts and extract_facts agree on every fact part, the age and the normalised facts."""
    from anonpsy.generate.facts import graph_facts

    light, facts = read_facts(text, case_id="x"), extract_facts(text, case_id="x")
    for part in _FACT_PARTS:
        assert getattr(light, part) == getattr(facts, part), part
    assert light.demographics.age == facts.demographics.age
    assert graph_facts(light) == graph_facts(facts)


def test_read_facts_reads_what_extract_facts_reads_on_every_round_trip_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """read_facts (the round trip's reader) is extract_facts without the sex and the graph's second validation:
    on every fixture, every dev note, and every text the round trip reads while de-identifying the fixtures
    (each single-fact probe after its lead, each whole generated text), it reads the very same facts."""
    from anonpsy.generate import faithful
    from anonpsy.pipeline import deid_text

    texts = _texts()
    read: list[str] = []
    real = faithful._read

    def recording(text: str) -> CaseGraph:
        read.append(text)
        return real(text)

    monkeypatch.setattr(faithful, "_read", recording)
    faithful._probe.cache_clear()
    try:
        for i, text in enumerate(texts[:22]):
            deid_text(text, seed=i, case_id=f"case_{i}")
    finally:
        faithful._probe.cache_clear()
    probes = [t for t in read if t.startswith("The patient is a 40-year-old ")]
    assert len(probes) >= 100 and len(read) - len(probes) >= 22
    for text in dict.fromkeys([*texts, CASE, *read]):
        _same_reading(text)


_SENTENCES = [s.text for text in _texts()[:22] for s in sentences(text)]


@given(st.sampled_from(["woman", "man", "person"]),
       st.lists(st.sampled_from(_SENTENCES), min_size=1, max_size=3),
       st.sampled_from(["", "HISTORY OF PRESENT ILLNESS: ", "FAMILY HISTORY: ", "MEDICATIONS: "]))
def test_property_read_facts_agrees_with_extract_facts(noun: str, picked: list[str], header: str) -> None:
    """Any lead and fixture sentences, under any header: read_facts reads what extract_facts reads."""
    _same_reading(f"{header}The patient is a 40-year-old {noun}. {' '.join(picked)}")


@pytest.mark.parametrize(
    ("text", "condition"),
    [
        ("PAST PSYCHIATRIC HISTORY:,  None.,SOCIAL HISTORY: He lives alone.", "psychiatric illness"),
        ("HISTORY OF PRESENT ILLNESS: He feels low. No past psychiatric history.", "psychiatric illness"),
        ("PAST MEDICAL HISTORY: He denies any history of stroke.", "stroke"),
    ],
)
def test_a_denied_history_is_recorded_as_denied(text: str, condition: str) -> None:
    """A history the patient denies is an explicit denial in the graph, said as such, not dropped."""
    from anonpsy.generate.plain import plain_history
    from anonpsy.generate.words import Voice

    g = extract(text, case_id="denied-history")
    ph = next(p for p in g.past_history if p.condition == condition)
    assert ph.status == HistoryStatus.denied
    assert ph.status_evidence is not None and ph.status_evidence.rule_id != "default"
    assert f"no history of {condition}" in plain_history(ph, Voice(g.demographics.sex, g.demographics.age))


def test_a_relatives_psychiatric_history_is_no_denial_of_the_patients() -> None:
    g = extract("FAMILY HISTORY: He denies any history of psychiatric problems in family.", case_id="fh")
    assert not [p for p in g.past_history if p.status == HistoryStatus.denied]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ASSESSMENT: ADHD (ruled out by testing).", {"Attention-Deficit/Hyperactivity Disorder": "ruled_out"}),
        ("DIAGNOSES: Major depressive disorder, ADHD (ruled out).",
         {"Major Depressive Disorder": "confirmed", "Attention-Deficit/Hyperactivity Disorder": "ruled_out"}),
        ("DIAGNOSES: PTSD (provisional).", {"Posttraumatic Stress Disorder": "provisional"}),
    ],
)
def test_a_bracketed_verdict_decides_its_own_diagnosis(text: str, expected: dict[str, str]) -> None:
    """"ADHD (ruled out by testing)" is a diagnosis set aside, not confirmed; the verdict reaches no other item."""
    assert {d.label: d.certainty.value for d in extract(text, case_id="verdict").diagnoses} == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Patient denied any thoughts of harming self or others.",
         {"suicidal ideation": "absent", "homicidal ideation": "absent"}),
        ("REVIEW OF SYSTEMS: Psychiatric: Depression: No. Anxiety: No.",
         {"depressed mood": "absent", "anxiety": "absent"}),
        ("SOCIAL HISTORY: Substances: Alcohol: denies.", {"alcohol use": "absent"}),
    ],
)
def test_charted_denial_forms(text: str, expected: dict[str, str]) -> None:
    """A denial of 'thoughts of harming self or others' denies both ideations."""
    assert {s.headword: s.assertion.value for s in extract(text, case_id="forms").symptoms} == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DIAGNOSES: Possible bipolar disorder, alcohol dependence, ADHD.",
         {"Unspecified Bipolar and Related Disorder": "provisional", "Alcohol Use Disorder": "confirmed",
          "Attention-Deficit/Hyperactivity Disorder": "confirmed"}),
        ("DIAGNOSES: Possible bipolar disorder, schizophrenia or schizoaffective disorder.",
         {"Unspecified Bipolar and Related Disorder": "provisional", "Schizophrenia": "provisional",
          "Schizoaffective Disorder": "provisional"}),
    ],
)
def test_a_hedge_reaches_its_own_list_item(text: str, expected: dict[str, str]) -> None:
    """"Possible X, Y, Z" hedges X only; alternatives joined by "or" are each uncertain."""
    assert {d.label: d.certainty.value for d in extract(text, case_id="hedge").diagnoses} == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("HISTORY OF PRESENT ILLNESS: He is seen for low mood.\n\nPLAN:\n1. Substance abuse.\n2. Follow up.", set()),
        ("HISTORY OF PRESENT ILLNESS: He has a long history of alcohol dependence.\n\nPLAN:\n1. Alcohol dependence.",
         {"Alcohol Use Disorder"}),
        ("PLAN:\n1. Continue naltrexone for alcohol dependence.", {"Alcohol Use Disorder"}),
    ],
)
def test_a_plan_topic_alone_asserts_no_diagnosis(text: str, expected: set[str]) -> None:
    """A bare topic heading of the plan names what the plan addresses; the diagnosis needs a statement elsewhere
    (or more than the heading)."""
    g = extract(text, case_id="topic")
    assert {d.label for d in g.diagnoses} | {p.condition for p in g.past_history} >= expected
    assert {d.label for d in g.diagnoses} <= expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("MEDICATIONS: Current meds, which she is not taking at the moment, are lithium 300 mg p.o. AM and 600 mg "
         "p.o. q.p.m., aripiprazole 15 mg p.o. per day, pregabalin 100 mg p.o. per day.",
         {"lithium": "past", "aripiprazole": "past", "pregabalin": "past"}),
        ("PLAN: Discontinue lithium 300 mg p.o. b.i.d. and sertraline 100 mg daily. Start quetiapine 50 mg.",
         {"lithium": "past", "sertraline": "past", "quetiapine": "current"}),
        ("MEDICATIONS: Sertraline 50 mg p.o. daily. Trazodone 50 mg at bedtime.",
         {"sertraline": "current", "trazodone": "current"}),
    ],
)
def test_a_status_clause_reaches_a_list_of_dosed_drugs(text: str, expected: dict[str, str]) -> None:
    """A status before a list of drugs reaches every item: the dose, route and frequency after each drug (and
    the periods of "p.o.", "q.p.m.") neither end the scope nor the sentence."""
    assert {t.name: t.status.value for t in extract(text, case_id="list").treatments} == expected


@pytest.mark.parametrize(
    "text",
    [
        "HISTORY OF PRESENT ILLNESS: In the emergency department she was given 2 mg of lorazepam.",
        "HISTORY OF PRESENT ILLNESS: She received one dose of haloperidol at the outside hospital.",
    ],
)
def test_a_single_dose_is_told_as_given_not_taken(text: str) -> None:
    """A dose given once is a one-time dose (as needed, frequency "once"), and the text tells it as given at this
    visit (treatment of this encounter), neither as a drug of the past nor as a drug the patient takes."""
    from anonpsy.generate.templates import render

    g = extract(text, case_id="once")
    (t,) = g.treatments
    assert (t.status, t.frequency) == (TreatmentStatus.prn, "once")
    out = render(g, seed=0)
    assert "given" in out and "at this visit" in out and "previously" not in out
    assert not re.search(r"\b(?:takes|is taking|as needed)\b", out)


@pytest.mark.parametrize(
    "text",
    [
        "PROCEDURE: Lumbar epidurogram. Omnipaque 300, 1.5 mL, was placed to the right of the midline.",
        "CONTRAST: Visipaque-270, 80 mL.",
        "MEDICATIONS: Gadavist 7 mL for the brain MRI.",
    ],
)
def test_a_named_contrast_product_is_a_dose_given_at_the_study(text: str) -> None:
    """A contrast product named by its own name is a single dose given at the study (rule
    ``class.contrast_agent``), told as given at this visit, never as a drug the patient takes."""
    from anonpsy.extract.assembly.nodes import CONTRAST_RULE
    from anonpsy.generate.templates import render

    g = extract(text, case_id="contrast")
    (t,) = [t for t in g.treatments if t.status_evidence and t.status_evidence.rule_id == CONTRAST_RULE]
    assert (t.status, t.frequency) == (TreatmentStatus.prn, "once")
    out = render(g, seed=0)
    assert "given" in out and "at this visit" in out
    assert not re.search(rf"\b(?:takes|is taking)\b[^.]*\b{t.name}\b", out)


def test_a_contrast_product_of_an_earlier_study_stays_past() -> None:
    """Boundary: a product told in a past study's history is past, not a dose of this visit."""
    g = extract("PAST MEDICAL HISTORY: She had an allergic reaction to a CT with Omnipaque in 2015. "
                "She previously received Omnipaque 100 mL for a CT of the abdomen in 2015.", case_id="contrast")
    statuses = {t.name: t.status for t in g.treatments}
    assert statuses.get("iohexol") in (None, TreatmentStatus.past)


def test_a_suggestion_of_a_finding_is_not_asserted() -> None:
    """"There is a suggestion of hippocampal atrophy": an impression's hedge leaves the finding possible, and "no
    suggestion of" denies (boundary)."""
    g = extract("IMPRESSION: There is a suggestion of hippocampal atrophy.", case_id="hedge")
    assert [d.certainty.value for d in g.diagnoses if "atrophy" in d.label] == ["provisional"]
    assert not [p for p in g.past_history if "atrophy" in p.condition]
    g = extract("MENTAL STATUS: There was no suggestion of psychosis.", case_id="hedge")
    assert {s.assertion.value for s in g.symptoms} <= {"absent"}


def test_a_cause_named_in_a_rule_out_is_not_asserted() -> None:
    """"Rule out dementia secondary to substance abuse": the cause is part of the hypothesis, not a diagnosis."""
    g = extract("AXIS I: Rule out dementia secondary to substance abuse.", case_id="cause")
    assert {d.label: d.certainty.value for d in g.diagnoses}.get("Other (or Unknown) Substance Use Disorder") in (
        None, "rule_out")


# -- a pronoun of the other sex -----------------------------------------------------------------------------------

_GIRL = "HISTORY OF PRESENT ILLNESS: She is a 17-year-old girl who lives with her mother. She feels sad. "
_MAN = "HISTORY OF PRESENT ILLNESS: He is a 40-year-old man who lives with his wife. He feels sad. "


@pytest.mark.parametrize(
    ("text", "absent", "present"),
    [
        # MTSamples (CC0): "Mother reported that he had a problem with methamphetamine."
        (_GIRL + "Mother reported that he had a problem with methamphetamine.", "methamphetamine", None),
        (_GIRL + "Her father visits; he takes sertraline 50 mg daily.", "sertraline", None),
        (_MAN + "His wife says she takes lithium and has depression.", "lithium", None),
        # boundary: the patient named after the other person's pronoun is still the one the clause is about
        (_GIRL + "Her psychiatrist saw her last week and he started her on sertraline.", None, "sertraline"),
        # boundary: the patient's own pronoun
        (_GIRL + "She takes sertraline 50 mg daily.", None, "sertraline"),
    ],
)
def test_a_pronoun_of_the_other_sex_is_someone_else(text: str, absent: str | None, present: str | None) -> None:
    """The nearest subject pronoun of the other sex than the patient's points to someone else: what it does or has
    is no fact of the patient's."""
    g = extract(text, case_id="pronoun")
    facts = " ".join([*(t.name for t in g.treatments), *(s.headword for s in g.symptoms
                                                       if s.assertion != Assertion.absent),
                      *(d.label for d in g.diagnoses)]).lower()
    if absent:
        assert absent not in facts
    if present:
        assert present in facts


_DRUGS = ("sertraline", "lithium", "quetiapine", "bupropion", "lorazepam", "fluoxetine")


@given(drug=st.sampled_from(_DRUGS), verb=st.sampled_from(("takes", "is taking", "was started on", "is on")))
@example(drug="sertraline", verb="takes")
def test_property_other_sex_pronoun_never_gives_the_patient_a_drug(drug: str, verb: str) -> None:
    """A drug that "he" takes in a note on a woman is never one of her treatments; with "she" it is."""
    other = extract(_GIRL + f"Her brother lives nearby. He {verb} {drug}.", case_id="p")
    own = extract(_GIRL + f"Her brother lives nearby. She {verb} {drug}.", case_id="p")
    assert drug not in {t.name for t in other.treatments}
    assert drug in {t.name for t in own.treatments}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("HISTORY OF PRESENT ILLNESS: She stopped sertraline last month and we plan to start fluoxetine.",
         {"sertraline": "past", "fluoxetine": "planned"}),
        # a start ordered at this visit: the drug is started now
        ("HISTORY OF PRESENT ILLNESS: She stopped sertraline last month and we will start fluoxetine.",
         {"sertraline": "past", "fluoxetine": "current"}),
        ("PLAN: Will discontinue sertraline and consider fluoxetine.", {"sertraline": "past", "fluoxetine": "planned"}),
        # boundary: the stop nearer the drug decides ("recommend she stay off X")
        ("PLAN: Recommend she stay off antidepressants and lithium.", {"lithium": "past"}),
        ("PLAN: Recommend that she discontinue lorazepam.", {"lorazepam": "past"}),
        # MTSamples (CC0): "she is going to be weaned off the Depakote by her neurologist"
        ("HISTORY OF PRESENT ILLNESS: She is currently taking Depakote, although she is going to be weaned off the "
         "Depakote by her neurologist.", {"valproate": "current"}),
        ("HISTORY OF PRESENT ILLNESS: He is being tapered off clonazepam.", {"clonazepam": "current"}),
        # boundary: a stop that happened
        ("HISTORY OF PRESENT ILLNESS: She was weaned off clonazepam last year.", {"clonazepam": "past"}),
    ],
)
def test_a_plan_or_a_stop_to_come_outranks_an_earlier_stop(text: str, expected: dict[str, str]) -> None:
    """A stop cue decides a drug only when no plan cue stands between it and the drug ("stopped X and will start
    Y": Y is planned); a stop still to come ("is going to be weaned off X") leaves the drug taken now."""
    assert {t.name: t.status.value for t in extract(text, case_id="stop").treatments} == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # MTSamples (CC0): "Denies use of illicit drugs"
        ("REASON FOR REFERRAL: Evaluation of possible drug use.\nSOCIAL HISTORY: She denies use of illicit drugs.",
         "absent"),
        ("HISTORY OF PRESENT ILLNESS: Possible auditory hallucinations. He denies auditory hallucinations.", "absent"),
        # boundary: within one tier the later statement decides
        ("HISTORY OF PRESENT ILLNESS: He denies auditory hallucinations. Possible auditory hallucinations.",
         "possible"),
        # boundary: the assessment decides over the history
        ("SOCIAL HISTORY: She denies use of illicit drugs.\nASSESSMENT: Possible drug use.", "possible"),
    ],
)
def test_a_denial_and_a_possible_symptom_are_decided_by_section_authority(text: str, expected: str) -> None:
    """A symptom told only as possible and denied elsewhere takes the status of the higher section tier, and
    within one tier of the later statement; a possible mention no longer outranks a denial everywhere."""
    (sx,) = extract(text, case_id="possible").symptoms
    assert sx.assertion.value == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PLAN: We would suggest prescribing fluoxetine. Fluoxetine should be pushed to 40 mg.",
         {"fluoxetine": "planned"}),
        # boundary: a later cue decides
        ("PLAN: Will consider lithium. Start lithium 300 mg twice daily.", {"lithium": "current"}),
        # boundary: with no cue in the plan the last plain mention stands
        ("PLAN: Sertraline 50 mg daily. Sertraline at bedtime.", {"sertraline": "current"}),
        # a course finished before the visit, in a current list
        ("CURRENT MEDICATIONS: Recently finished doxycycline.", {"doxycycline": "past"}),
    ],
)
def test_a_plain_plan_mention_repeats_the_decision_a_cue_made(text: str, expected: dict[str, str]) -> None:
    """In the plan, a mention no cue decides ("Fluoxetine should be pushed to 40 mg") repeats the decision an
    earlier cue made ("suggest prescribing fluoxetine"); it does not turn a planned drug into one taken."""
    assert {t.name: t.status.value for t in extract(text, case_id="plan").treatments} == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # MTSamples (CC0) discharge list: "MEDICATIONS: On discharge included: ... He was on nicotine patch 21 mg"
        ("MEDICATIONS: On discharge included:\n1. Ferrous sulfate 325 mg t.i.d.\n2. He was on nicotine patch 21 mg "
         "per 24 hours.\n3. He was on Vicodin p.r.n. for pain.",
         {"ferrous sulfate": "current", "nicotine replacement therapy": "current", "hydrocodone/acetaminophen": "prn"}),
        # boundary: a past marker in the list still makes the drug past
        ("MEDICATIONS: He was previously on sertraline. He had been on lithium.",
         {"sertraline": "past", "lithium": "past"}),
        # boundary: outside a current list the plain past tense tells the history
        ("HISTORY OF PRESENT ILLNESS: He was on sertraline for two years.", {"sertraline": "past"}),
    ],
)
def test_a_current_list_in_the_narrative_past_keeps_its_drugs_current(text: str, expected: dict[str, str]) -> None:
    """In a current medication list, "he was on X" is the tense of the narrative (a discharge list told in the
    past): the list decides. A past marker ("previously", "had been on") keeps the drug past, and outside a
    list the plain past tense still tells the history."""
    assert {t.name: t.status.value for t in extract(text, case_id="list").treatments} == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "Maternal grandmother deceased in 2001 due to cancer.",  # MTSamples (CC0)
        "Her father passed away from a heart attack.",
        "She lost her mother to breast cancer.",
        "Her grandfather died in 1995 secondary to a stroke.",
    ],
)
def test_a_relatives_cause_of_death_is_never_the_patients(sentence: str) -> None:
    """A relative's death and its cause, written outside a family-history section and after 'due to': the cause
    goes to the relative, never to the patient's own history."""
    text = ("HISTORY OF PRESENT ILLNESS: The patient is a 17-year-old girl seen for low mood.\n\n"
            f"BACKGROUND: She lives with her mother. {sentence}\n")
    graph = extract(text, case_id="death-cause")
    cause = re.search(r"(?:cancer|heart attack|stroke)", sentence)
    assert cause is not None
    own = [p.condition for p in graph.past_history] + [d.name for d in graph.diagnoses] + \
        [s.headword for s in graph.symptoms]
    assert not any(cause.group(0) in c.lower() for c in own), own
    assert any(cause.group(0) in f.condition for f in graph.family_history), graph.family_history


def test_a_relative_telling_of_the_patients_condition_does_not_have_it() -> None:
    """The informant who cannot say which seizures the patient has is not a relative with seizures."""
    text = ("HISTORY OF PRESENT ILLNESS: The patient is a 17-year-old girl with seizures since age 5. "
            "Mother was not able to tell me the exact kind of seizures.\n")  # MTSamples (CC0), second sentence
    graph = extract(text, case_id="informant")
    assert not graph.family_history, graph.family_history


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("HISTORY OF PRESENT ILLNESS: She is allergic to codeine. She takes sertraline 50 mg daily.",
         {"sertraline": "current"}),
        ("HISTORY OF PRESENT ILLNESS: He had an allergic reaction to lamotrigine.", {}),
        # boundary: a second predicate of taking ends the allergy's scope
        ("HISTORY OF PRESENT ILLNESS: He is allergic to penicillin and takes sertraline daily.",
         {"sertraline": "current"}),
        # boundary: what a drug treats is no allergy to it
        ("MEDICATIONS: Claritin for allergies.", {"loratadine": "current"}),
    ],
)
def test_a_drug_the_patient_is_allergic_to_is_not_taken(text: str, expected: dict[str, str]) -> None:
    """A drug named as the object of an allergy or intolerance outside the allergies section is, as inside it,
    no treatment: never told as a drug the patient takes."""
    assert {t.name: t.status.value for t in extract(text, case_id="allergy").treatments} == expected


_ON_TWO = "MEDICATIONS: Trazodone 50 mg nightly. Seroquel 25 mg nightly.\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # MTSamples-style sleep-clinic plan (synthetic): a hedged stop, then "doing the same" with a second drug
        (_ON_TWO + "ASSESSMENT AND PLAN: It would be desirable to reduce or discontinue trazodone and then perhaps "
         "consider doing the same with Seroquel.", {"trazodone": "current", "quetiapine": "current"}),
        (_ON_TWO + "PLAN: Consider tapering Seroquel.", {"trazodone": "current", "quetiapine": "current"}),
        (_ON_TWO + "PLAN: Recommend increasing trazodone to 100 mg nightly.",
         {"trazodone": "current", "quetiapine": "current"}),
        # boundary: a new drug that the same proposal adds is planned
        (_ON_TWO + "PLAN: Consider tapering Seroquel and starting sertraline.",
         {"trazodone": "current", "quetiapine": "current", "sertraline": "planned"}),
        # boundary: an order to stop is a stop decided at this visit
        (_ON_TWO + "PLAN: Discontinue Seroquel.", {"trazodone": "current", "quetiapine": "past"}),
        # boundary: a drug only considered is not taken
        ("PLAN: Consider starting sertraline.", {"sertraline": "planned"}),
    ],
)
def test_a_proposed_change_of_a_drug_taken_keeps_it_current(text: str, expected: dict[str, str]) -> None:
    """A change that the plan only proposes or considers ("consider tapering X", "it would be desirable to
    reduce or discontinue X") is about a drug the patient takes: it stays current, not planned and not stopped."""
    assert {t.name: t.status.value for t in extract(text, case_id="change").treatments} == expected


_ON_BENZOS = "MEDICATIONS: Lorazepam 1 mg IV p.r.n. q.6-8h. Clonazepam 0.5 mg bid.\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # MTSamples-style consult recommendation (synthetic): the sentence splits after "p.r.n."; the class named
        # after the deadline is not stopped now either
        (_ON_BENZOS + "RECOMMENDATIONS: Continue to taper off p.r.n. Ativan and discontinue all Ativan prior to "
         "discharge, benzodiazepine use can cause relapse.", {"lorazepam": "current", "clonazepam": "current"}),
        (_ON_BENZOS + "PLAN: Continue the taper of clonazepam.", {"lorazepam": "prn", "clonazepam": "current"}),
        (_ON_BENZOS + "PLAN: Stop clonazepam by the next visit.", {"lorazepam": "prn", "clonazepam": "current"}),
        # boundary: an order to stop now, and a stop told in the past tense
        (_ON_BENZOS + "PLAN: Discontinue clonazepam.", {"lorazepam": "prn", "clonazepam": "past"}),
        ("HOSPITAL COURSE: Clonazepam was discontinued prior to discharge.", {"clonazepam": "past"}),
    ],
)
def test_a_stop_still_to_come_or_a_taper_under_way_keeps_the_drug_taken(text: str, expected: dict[str, str]) -> None:
    """An ordered stop with a deadline still to come ("discontinue all Ativan prior to discharge") or a taper that
    goes on ("continue to taper off X") leaves the drug taken now, like "is being tapered off X"."""
    assert {t.name: t.status.value for t in extract(text, case_id="taper").treatments} == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # MTSamples-style sleep-clinic history (synthetic)
        ("HISTORY OF PRESENT ILLNESS: She had an overnight sleep study performed to evaluate her for sleep apnea.",
         "provisional"),
        # boundary: the diagnosis the assessment makes
        ("ASSESSMENT: Obstructive sleep apnea.", "confirmed"),
    ],
)
def test_the_condition_a_test_looks_for_in_the_patient_is_not_diagnosed(text: str, expected: str) -> None:
    """"Evaluate her for X" with the patient named between the verb and "for" asks whether X is there, like
    "evaluate for X": it does not diagnose X."""
    (dx,) = extract(text, case_id="evaluate").diagnoses
    assert dx.certainty.value == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PAST MEDICAL HISTORY: History of dementia.", "a history of major neurocognitive disorder"),
        ("HISTORY OF PRESENT ILLNESS: She is an 82-year-old woman with a history of dementia who fell.",
         "a history of major neurocognitive disorder"),
        ("PAST PSYCHIATRIC HISTORY: Major depressive disorder, in full remission since 2015.",
         "had major depressive disorder in the past, now in remission"),
    ],
)
def test_a_history_of_a_diagnosis_is_over_only_when_the_note_says_so(text: str, expected: str) -> None:
    """"A history of dementia" is told as a history, not as "had dementia in the past" (which reads as
    resolved); a remitted or resolved diagnosis is told as past, with its course."""
    from anonpsy.pipeline import deid_text

    g = extract(text, case_id="history")
    out = deid_text(text, seed=0, case_id="history").text
    assert g.past_history and expected in out.lower()


@pytest.mark.parametrize(
    ("text", "condition"),
    [
        ("MEDICAL PROBLEM LIST:,1.  Status post multiple cerebrovascular accidents in 2006.,2.  Hypertension.",
         "cerebrovascular accidents"),
        ("DIAGNOSES:,1. S/P CVA.,2. Major depressive disorder.", "stroke"),
        ("IMPRESSION:,1. History of stroke.,2. Schizophrenia.", "stroke"),
        ("ASSESSMENT: She is status post hip fracture and walks with a cane.", "hip fracture"),
    ],
)
def test_an_event_that_is_over_is_not_active_in_a_problem_list(text: str, condition: str) -> None:
    """'Status post' an event, or a history of one, in a problem list or an assessment is an event of the past,
    never an active one: a problem list that names a stroke of 2006 does not say the patient has a stroke now."""
    g = extract(text, case_id="event-over")
    ph = next(p for p in g.past_history if p.condition == condition)
    assert ph.status == HistoryStatus.pre_existing


@pytest.mark.parametrize("header", ["MEDICAL PROBLEM LIST", "PROBLEM LIST", "ACTIVE PROBLEMS"])
def test_a_problem_list_holds_current_problems(header: str) -> None:
    """A problem list names what the patient has now: its dementia is a current diagnosis, not past history."""
    g = extract(f"{header}:,1.  Dementia and depression.,2.  Hypertension.", case_id="problem-list")
    assert {d.label for d in g.diagnoses if d.temporality == Temporality.current} >= {
        "Major Neurocognitive Disorder", "Unspecified Depressive Disorder"}


@pytest.mark.parametrize(
    ("text", "drug", "status"),
    [
        ("TREATMENT PLAN: I will see him in two weeks and probably suggest switching over from OxyContin to "
         "methadone.", "oxycodone", TreatmentStatus.current),
        ("PLAN: Consider changing him from sertraline to escitalopram.", "sertraline", TreatmentStatus.current),
        ("He was switched from Zoloft to Lexapro last month.", "sertraline", TreatmentStatus.past),
    ],
)
def test_the_drug_a_switch_leaves(text: str, drug: str, status: TreatmentStatus) -> None:
    """The drug after 'switch(ing) from' is taken now when the switch is only proposed, past when it is done:
    a proposed switch never makes the drug the patient takes a planned one."""
    g = extract(text, case_id="switch")
    assert next(t for t in g.treatments if t.name == drug).status == status


@pytest.mark.parametrize(
    ("text", "drug", "status"),
    [
        ("He was switched from Zoloft to Lexapro last month.", "escitalopram", TreatmentStatus.current),
        ("He was changed from Prozac 20 mg daily to Paxil 10 mg daily.", "paroxetine", TreatmentStatus.current),
        ("PLAN: We will switch her from Haldol to Risperdal.", "risperidone", TreatmentStatus.planned),
        ("TREATMENT PLAN: probably suggest switching over from OxyContin to methadone.", "methadone",
         TreatmentStatus.planned),
        ("She was switched from Zoloft to Lexapro, which she stopped in May.", "escitalopram", TreatmentStatus.past),
    ],
)
def test_the_drug_a_switch_goes_to(text: str, drug: str, status: TreatmentStatus) -> None:
    """The drug after 'switched from X to' is taken now (the stop cue before it ends X, not it); after a proposed
    switch it is planned; a stop told after it still ends it."""
    g = extract(text, case_id="switch-to")
    assert next(t for t in g.treatments if t.name == drug).status == status


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("HPI: He was switched to Lexapro from Zoloft last month.", {"escitalopram": "current", "sertraline": "past"}),
        ("HPI: She was changed to sertraline from fluoxetine.", {"sertraline": "current", "fluoxetine": "past"}),
        ("HPI: He was switched to Lexapro from his Zoloft.", {"escitalopram": "current", "sertraline": "past"}),
        # a proposed switch leaves the drug the patient takes now
        ("PLAN: Consider switching her to Lexapro from Zoloft.", {"escitalopram": "planned", "sertraline": "current"}),
        # boundary: a switch between things that are no drugs stops no drug
        ("HPI: He was changed to night shifts from day shifts and takes Zoloft.", {"sertraline": "current"}),
        # a switch the plan proposes, told without "from" before the drug it goes to: that drug is planned
        ("PLAN: We will switch her to Lexapro from Zoloft.", {"escitalopram": "planned", "sertraline": "current"}),
        ("HPI: She takes Zoloft 50 mg. We will switch her to Lexapro.", {"sertraline": "current",
                                                                         "escitalopram": "planned"}),
        ("PLAN: I would like to change him over to Abilify.", {"aripiprazole": "planned"}),
        # boundary: a switch the patient made is done, whatever its subject
        ("HPI: He switched to Lexapro on his own.", {"escitalopram": "current"}),
    ],
)
def test_the_drug_a_switch_told_the_other_way_round_leaves(text: str, expected: dict[str, str]) -> None:
    """'Switched to Y from X' is 'switched from X to Y' told the other way round: X is past when the switch is done,
    taken now when it is only proposed; Y is the drug the switch goes to."""
    assert {t.name: t.status.value for t in extract(text, case_id="switch-back").treatments} == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a drug started in an earlier stage of the story and left out of the current list was replaced since
        ("HISTORY OF PRESENT ILLNESS: Seizures began in infancy. At that point, his first neurologist started "
         "vigabatrin for the spasms.\nMEDICATIONS: Lamictal 100 mg twice a day.",
         {"vigabatrin": "past", "lamotrigine": "current"}),
        # boundary: on the current list, or with no current list at all, the drug started then is taken now
        ("HISTORY OF PRESENT ILLNESS: At that point, his neurologist started Lamictal.\nMEDICATIONS: Lamictal "
         "100 mg twice a day.", {"lamotrigine": "current"}),
        ("HISTORY OF PRESENT ILLNESS: At that point, his neurologist started vigabatrin.", {"vigabatrin": "current"}),
        # boundary: the present tense in the sentence says the drug goes on
        ("HISTORY OF PRESENT ILLNESS: At that point, his neurologist started vigabatrin, which he still takes.\n"
         "MEDICATIONS: Lamictal 100 mg twice a day.", {"vigabatrin": "current", "lamotrigine": "current"}),
        # boundary: a plan is no story told
        ("PLAN: Initially, sertraline 25 mg daily, then 50 mg.", {"sertraline": "current"}),
        ("HISTORY OF PRESENT ILLNESS: Initially, we will give vigabatrin.", {"vigabatrin": "current"}),
        # a sentence dated in an earlier stage that tells no start: past
        ("HISTORY OF PRESENT ILLNESS: Initially, the spasms responded well to vigabatrin.",
         {"vigabatrin": "past"}),
        # a continuation told as a whole course in the simple past is over
        ("HISTORY OF PRESENT ILLNESS: He initially was on phenobarbital. He continued on phenobarbital; however, "
         "for a long period of time thereafter.", {"phenobarbital": "past"}),
        ("HISTORY OF PRESENT ILLNESS: She continued on lithium for a long time.", {"lithium": "past"}),
        # boundary: a present perfect or a present clause goes on
        ("HISTORY OF PRESENT ILLNESS: She has continued on lithium for a long time.", {"lithium": "current"}),
        ("HISTORY OF PRESENT ILLNESS: She continued on lithium for a long time and is doing well.",
         {"lithium": "current"}),
    ],
)
def test_a_treatment_told_in_an_earlier_stage_of_the_story_is_past(text: str, expected: dict[str, str]) -> None:
    """A narrative of earlier treatment (a sentence opened by "At that point," / "Initially,", a continuation told
    as a whole course in the simple past) tells drugs the current regimen has replaced, unless the current list or
    a present tense says they go on."""
    assert {t.name: t.status.value for t in extract(text, case_id="earlier").treatments} == expected


@pytest.mark.parametrize(
    ("text", "name", "certainty"),
    [
        ("ASSESSMENT: Bipolar disorder must be investigated.", "Unspecified Bipolar and Related Disorder",
         Certainty.provisional),
        ("ASSESSMENT: Bipolar disorder needs to be investigated.", "Unspecified Bipolar and Related Disorder",
         Certainty.provisional),
        # boundary: a plain future says what the team will do
        ("ASSESSMENT: Bipolar disorder will be evaluated.", "Unspecified Bipolar and Related Disorder",
         Certainty.confirmed),
    ],
)
def test_a_condition_still_to_be_investigated_is_unconfirmed(text: str, name: str, certainty: Certainty) -> None:
    g = extract(text, case_id="investigate")
    assert next(d for d in g.diagnoses if d.label == name).certainty == certainty


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # advice on how to use a treatment the patient has neither denies nor refuses it
        ("PLAN: I did suggest that she would not use her oxygen when she is sitting.",
         {"supplemental oxygen": "current"}),
        # boundary: without the advice it is a refusal
        ("PLAN: He would not take lorazepam at night.", {"lorazepam": "refused"}),
        # a present-tense clause inside a history list is current; a past one stays past
        ("PAST MEDICAL HISTORY: Other medical history includes severe COPD and she is oxygen dependent, diabetes.",
         {"supplemental oxygen": "current"}),
        ("PAST MEDICAL HISTORY: Other medical history includes severe COPD and she was oxygen dependent, diabetes.",
         {"supplemental oxygen": "past"}),
    ],
)
def test_advice_and_present_clauses_keep_a_treatment_taken(text: str, expected: dict[str, str]) -> None:
    assert {t.name: t.status.value for t in extract(text, case_id="advice").treatments} == expected


def test_a_denial_carried_on_by_as_were_denies_what_follows() -> None:
    """'Serious injuries were denied as were a history of seizures': the seizures are denied, not a past event."""
    g = extract("DEVELOPMENTAL HISTORY: Serious injuries or toileting problems were denied as were a history of "
                "seizures.", case_id="denied-as-were")
    assert not [x for x in g.symptoms if x.headword == "seizures" and x.assertion != Assertion.absent]


def test_a_504_plan_is_not_special_education() -> None:
    """A Section 504 plan gives accommodations in the general classroom: checking into one is no plan for the
    special education services the mother denied."""
    g = extract("The mother stated that she would check into possibly a 504-Plan. She denied any Special Education "
                "Services.", case_id="504")
    assert "special education services" not in {t.name for t in g.treatments}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # MTSamples-style neurology write-ups (synthetic)
        ("COURSE: He underwent a temporal lobectomy following initial treatment with Decadron.",
         {"dexamethasone": "past"}),
        ("HPI: She remained on Coumadin for 3 months and then was switched to ASA for 1 year.",
         {"warfarin": "past", "aspirin": "past"}),
        ("HPI: He took Zoloft in the spring but he stopped it because of nausea.", {"sertraline": "past"}),
        ("HPI: DVT prophylaxis was maintained with Lovenox 40 mg daily until the INR was 1.7 and it was "
         "discontinued on 08/30 when the INR was 1.92.", {"enoxaparin": "past"}),
        ("HPI: She was maintained on Lovenox daily. It was discontinued on 08/30 when the INR was 1.92.",
         {"enoxaparin": "past"}),
        ("IMPRESSION: Mild benign positional vertigo. I agree with symptomatic treatment with Antivert.",
         {"meclizine": "planned"}),
        ("MEDICATIONS: It includes potassium, Pravachol and aspirin.",
         {"potassium chloride": "current", "pravastatin": "current", "aspirin": "current"}),
        # boundaries: a course that goes on, a stop of another drug, a serum value
        ("HPI: She has been on Zoloft for 2 years.", {"sertraline": "current"}),
        ("HPI: He is taking lithium for 2 years now.", {"lithium": "current"}),
        ("HPI: She takes Zoloft. Her Ativan was discontinued.", {"sertraline": "current", "lorazepam": "past"}),
        ("HPI: She takes Zoloft and Ativan; it was discontinued last week.",
         {"sertraline": "current", "lorazepam": "past"}),
        ("HPI: Sodium 138, potassium 3.9, chloride 101. She takes Zoloft.", {"sertraline": "current"}),
    ],
)
def test_a_course_the_narrative_closes_is_past(text: str, expected: dict[str, str]) -> None:
    """A drug the narrative tells as over is past: a course that came before another event ("following
    initial treatment with X"), a bounded course in the simple past ("switched to ASA for 1 year"), a stop told
    of "it" after the drug (in its sentence or at the start of the next). A consultant who agrees with a
    treatment recommends it (planned); a bare "potassium" among drugs of a list is the supplement."""
    assert {t.name: t.status.value for t in extract(text, case_id="course").treatments} == expected


@pytest.mark.parametrize(
    ("text", "overdose"),
    [
        # MTSamples-style neurology exams (synthetic): the field label stands on a line of its own
        ("PHYSICAL EXAMINATION:\nPupils:\nOD 4 mm, OS 2 mm.", False),
        ("EXAM: Visual acuity:\nOD 20/40, OS 20/30.", False),
        ("EXAM: Intraocular pressure:\nOD 18 mmHg.", False),
        # boundary: an overdose told with a time
        ("HISTORY OF PRESENT ILLNESS: He had an OD 3 years ago.", True),
    ],
)
def test_an_eye_measured_is_no_overdose(text: str, overdose: bool) -> None:
    """OD (oculus dexter) followed by a pupil size, an acuity or a pressure is the right eye, even when the
    sentence holding it has lost its "Pupils:" label: never an overdose."""
    assert ("overdose" in {s.headword for s in extract(text, case_id="eye").symptoms}) == overdose


def test_sleep_hygiene_advice_is_no_cbt_for_insomnia() -> None:
    """Tips for sleep hygiene and single behavioral techniques (stimulus control, sleep restriction) are advice,
    not the structured cognitive behavioral therapy for insomnia; poor sleep hygiene is no treatment at all."""
    g = extract("PLAN: I have provided her with tips for sleep hygiene. These include bedtime rituals, stimulus "
                "control therapy, and sleep restriction.", case_id="hygiene")
    names = {t.name for t in g.treatments}
    assert "cognitive behavioral therapy for insomnia" not in names
    assert {"sleep hygiene education", "behavioral techniques for insomnia"} <= names
    assert not extract("HPI: She has poor sleep hygiene.", case_id="poor").treatments


def test_a_childs_positive_test_is_not_the_parents_use() -> None:
    """"His infant child tested positive for THC" tells the child's exposure: a relative's, named by its
    headword, never the patient's cannabis use; the patient's own positive test stays his."""
    g = extract("HPI: A recent stressor involved OCS involvement, apparently because his infant child tested "
                "positive for THC.", case_id="child")
    assert not g.symptoms
    assert [(f.member, f.condition) for f in g.family_history] == [("child", "cannabis use")]
    own = extract("HPI: He tested positive for THC.", case_id="own")
    assert [s.headword for s in own.symptoms] == ["cannabis use"]


def _tx(text: str) -> dict[str, str]:
    return {t.name: t.status.value for t in extract(text, case_id="cond").treatments}


@pytest.mark.parametrize(("text", "drug", "status"), [
    ("MEDICATIONS: Digoxin 0.25 mg daily, metformin 500 mg.\nASSESSMENT AND PLAN: Digoxin toxicity secondary to "
     "likely digoxin overuse.", "digoxin", "current"),
    ("MEDICATIONS: Lithium 300 mg b.i.d.\nASSESSMENT: Lithium toxicity, possibly from lithium overdose.",
     "lithium", "current"),
])
def test_a_drug_named_as_the_cause_of_a_condition_does_not_decide_its_status(text: str, drug: str,
                                                                             status: str) -> None:
    """'Digoxin toxicity secondary to likely digoxin overuse': the uncertainty frames the condition, not a plan to
    give the drug; the drug's own mentions (a medication list) decide."""
    assert _tx(text)[drug] == status


def test_a_drug_named_only_in_a_condition_keeps_that_mention() -> None:
    """With no other mention, the condition's mention is still the drug's only evidence and is kept."""
    assert "digoxin" in _tx("HISTORY: He was admitted with digoxin toxicity last year.")


@given(st.sampled_from(["digoxin", "lithium", "warfarin", "phenytoin", "theophylline"]),
       st.sampled_from(["toxicity", "overdose", "overuse", "poisoning", "intoxication"]),
       st.sampled_from(["likely", "possible", "probable", "suspected"]))
@example("digoxin", "overuse", "likely")
def test_property_condition_named_by_a_listed_drug_keeps_the_list_status(drug: str, condition: str,
                                                                         hedge: str) -> None:
    """A drug on the current medication list stays current whatever hedge frames a condition it causes."""
    text = (f"MEDICATIONS: {drug.capitalize()} 10 mg daily.\n"
            f"ASSESSMENT AND PLAN: {drug.capitalize()} {condition}, {hedge} from {drug} {condition}.")
    assert _tx(text).get(drug) == "current"


# -- treatment status cues -------------------------------------------------------------------------------------


def _tx_status(text: str, name: str) -> TreatmentStatus:
    g = extract(text)
    return next(t.status for t in g.treatments if t.name == name)


@pytest.mark.parametrize(
    ("text", "name", "status"),
    [
        # a hold under a parameter skips doses; the drug goes on
        ("MEDICATIONS: Metoprolol 25 mg twice daily.\nPLAN: If blood pressure is above 160/90, we will hold "
         "metoprolol.", "metoprolol", TreatmentStatus.current),
        ("MEDICATIONS: Metoprolol 25 mg twice daily.\nPLAN: Hold metoprolol for heart rate under 55.", "metoprolol",
         TreatmentStatus.current),
        # boundary: a hold with no condition stops the drug at this visit
        ("MEDICATIONS: Metoprolol 25 mg twice daily.\nPLAN: Hold metoprolol.", "metoprolol", TreatmentStatus.past),
        # a drug given in the emergency room is a dose of this presentation, not a past treatment
        ("HISTORY OF PRESENT ILLNESS: In the emergency room, he was treated with morphine for chest pain.",
         "morphine", TreatmentStatus.prn),
        # boundary: without the setting of the presentation, "was treated with" tells of the past
        ("HISTORY OF PRESENT ILLNESS: He was treated with morphine for chest pain.", "morphine",
         TreatmentStatus.past),
        # a daily frequency written with "once" is a schedule, not a single dose
        ("MEDICATIONS: Furosemide 40 mg once daily.", "furosemide", TreatmentStatus.current),
        ("MEDICATIONS: Lorazepam 1 mg once as needed.", "lorazepam", TreatmentStatus.prn),
        # a plan to start a drug the history says is taken now speaks of further doses
        ("HISTORY OF PRESENT ILLNESS: She has been trying ibuprofen for the pain.\nPLAN: If pain continues, she "
         "should start ibuprofen.", "ibuprofen", TreatmentStatus.current),
        # boundary: a drug the history names without saying it is taken stays planned
        ("HISTORY OF PRESENT ILLNESS: We discussed ibuprofen for the pain.\nPLAN: If pain continues, she should "
         "start ibuprofen.", "ibuprofen", TreatmentStatus.planned),
        # a drug the team means to avoid is no treatment of the patient's
        ("PLAN: Aspirin 81 mg daily. We will refrain from using heparin.", "aspirin", TreatmentStatus.current),
    ],
)
def test_treatment_status_cues(text: str, name: str, status: TreatmentStatus) -> None:
    assert _tx_status(text, name) == status


def test_a_drug_to_avoid_is_no_treatment() -> None:
    g = extract("PLAN: Aspirin 81 mg daily. We will refrain from using heparin.")
    assert "heparin" not in {t.name for t in g.treatments}


@given(st.sampled_from(["once daily", "once a day", "once per day", "once weekly", "once nightly", "once at bedtime",
                        "one time daily", "once every morning"]))
@example("once at bedtime")
def test_property_a_once_schedule_is_not_as_needed(freq: str) -> None:
    """A regular schedule written with "once" never reads as a single or as-needed dose."""
    from anonpsy.extract.assertion.status import _PRN
    assert _PRN.search(freq) is None
    assert _PRN.search(f"{freq} as needed") is not None  # boundary: "as needed" still says so


def test_a_dash_set_field_answer_denies_like_a_colon() -> None:
    # "Alcohol - denies." is a field and its answer, as "Alcohol: denies." is: it was read as alcohol use present
    from anonpsy.extract import extract as _extract

    for line in ("Alcohol - denies.", "Alcohol: denies.", "Alcohol \u2013 none."):
        g = _extract("HISTORY OF PRESENT ILLNESS: A 44-year-old man with low mood.\nSOCIAL HISTORY: " + line + "\n",
                     case_id="t")
        alcohol = [s for s in g.symptoms if "alcohol" in s.headword]
        assert alcohol and all(s.assertion.value == "absent" for s in alcohol), line


def test_a_dash_without_an_answer_is_no_field_label() -> None:
    from anonpsy.extract.sections import sentences as _sentences

    s = _sentences("ASSESSMENT: Major depressive disorder - stable on sertraline.")[-1]
    assert s.label_end == 0 and s.answer is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # MTSamples (CC0): "ABC initially was placed on Tegretol, but developed symptoms of toxicity
        # (hallucinations) on this medication, he was switched to Trileptal."
        ("HPI: He initially was placed on Tegretol, but developed symptoms of toxicity (hallucinations) on this "
         "medication, he was switched to Trileptal.", {"carbamazepine": "past", "oxcarbazepine": "current"}),
        ("HPI: She took Zoloft for a month and was changed to Lexapro.", {"sertraline": "past",
                                                                         "escitalopram": "current"}),
        # boundary: a drug in the present, or another drug between it and the switch, is not the one replaced
        ("HPI: He is on lithium, and was switched to Lexapro.", {"lithium": "current", "escitalopram": "current"}),
        ("HPI: He took lithium, Zoloft was changed to Lexapro.", {"lithium": "past", "sertraline": "past",
                                                                 "escitalopram": "current"}),
    ],
)
def test_a_drug_before_a_later_switch_in_its_sentence_is_past(text: str, expected: dict[str, str]) -> None:
    """A switch told later in the sentence, with the patient as its subject, replaced the drug before it; the drug
    after "switched to" is taken now."""
    assert {t.name: t.status.value for t in extract(text, case_id="tx").treatments} == expected


def test_the_symptom_of_a_stopped_drugs_toxicity_is_no_complaint() -> None:
    """An adverse effect told in the past tense of a drug replaced is historical, not a present complaint."""
    g = extract("HPI: He initially was placed on Tegretol, but developed symptoms of toxicity (hallucinations) on "
                "this medication, he was switched to Trileptal.", case_id="tx")
    assert {s.headword: s.assertion for s in g.symptoms}.get("hallucinations") == Assertion.historical


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # MTSamples (CC0): "The patient was treated with haldol and risperidone for his agitation, and further
        # diagnostic testing was performed."
        ("HOSPITAL COURSE: The patient was treated with haldol and risperidone for his agitation, and further "
         "diagnostic testing was performed.", {"haloperidol": "current", "risperidone": "current"}),
        ("PLAN: He was treated with lorazepam for his agitation.", {"lorazepam": "current"}),
        # boundary: in the history, with a past time, or told as a course that failed, it stays past
        ("HISTORY OF PRESENT ILLNESS: The patient was treated with haldol for his agitation.", {"haloperidol": "past"}),
        ("PAST MEDICAL HISTORY: He was treated with lithium.", {"lithium": "past"}),
        ("HOSPITAL COURSE: He was treated with Zoloft in 2015.", {"sertraline": "past"}),
        ("HOSPITAL COURSE: He was treated with Zoloft without benefit.", {"sertraline": "past"}),
        ("HOSPITAL COURSE: She was treated with Zoloft and she did not benefit from it.", {"sertraline": "past"}),
        ("BRIEF HOSPITAL COURSE: He was treated with lorazepam for his agitation.", {"lorazepam": "current"}),
    ],
)
def test_a_drug_the_course_of_this_visit_gave_is_current(text: str, expected: dict[str, str]) -> None:
    """"was treated with X" in a hospital course or a plan tells the treatment this visit gave: started now."""
    assert {t.name: t.status.value for t in extract(text, case_id="tx").treatments} == expected


@pytest.mark.parametrize(("text", "certainty"), [
    ("The working diagnosis became Creutzfeldt-Jakob disease. The brain tissue was strongly positive for PrP (CJD).",
     Certainty.confirmed),
    ("Possible CJD. CSF was positive for 14-3-3 protein.", Certainty.provisional),
    ("Possible CJD. Urine drug screen was positive for cocaine.", Certainty.provisional),
])
def test_a_specimen_positive_for_the_diagnosis_confirms_it(text: str, certainty: Certainty) -> None:
    """A tissue or a laboratory test positive for the disease confirms an earlier working diagnosis; a result
    positive for something else confirms nothing."""
    [dx] = extract(text).diagnoses
    assert dx.certainty == certainty


# -- vaccines, procedures, asides and long denial lists ------------------------------------------------------------


@pytest.mark.parametrize(("text", "status", "rule"), [
    ("His immunizations are up to date. His last tetanus booster was in 07/03.", TreatmentStatus.past,
     "cue.vaccination_told"),
    ("Flu shot given today.", TreatmentStatus.prn, "cue.vaccine_dose"),
    ("She thinks she got a tetanus vaccine in childhood.\nPLAN: We will give a tetanus diphtheria booster.",
     TreatmentStatus.prn, "cue.vaccine_dose"),
])
def test_a_vaccine_is_a_dose_given_never_a_drug_taken(text: str, status: TreatmentStatus, rule: str) -> None:
    t = next(t for t in extract(text).treatments if t.name.endswith("vaccine"))
    assert (t.status, t.status_evidence.rule_id if t.status_evidence else None) == (status, rule)


def test_anesthesia_drugs_are_single_doses_of_the_procedure() -> None:
    g = extract("PROCEDURE: Stellate ganglion block.\nANESTHESIA: IV Sedation with Versed and Fentanyl.\n"
                "SUMMARY OF PROCEDURE: The neck was prepped and draped in sterile fashion with Betadine. 5 cc of "
                "0.5% Marcaine was then injected.")
    assert {t.name: (t.status, t.frequency) for t in g.treatments} == {
        n: (TreatmentStatus.prn, "once") for n in ("midazolam", "fentanyl", "povidone iodine", "bupivacaine")}
    assert not g.past_history and not [s for s in g.symptoms if s.assertion == Assertion.present]


def test_a_bracketed_note_that_refers_back_stops_the_drug() -> None:
    """"(this agent was stopped on ...)" is a note on the drug of its clause, not an aside to blank out."""
    text = "He also began taking Accutane for persistent acne in December (this agent was stopped on 02/19/2007)."
    assert _tx_status(text, "isotretinoin") == TreatmentStatus.past
    # boundary: a bracket that refers back but tells no stop leaves the drug as it was
    assert _tx_status("She takes Zoloft 50 mg daily (which she says has helped her mood a lot).",
                      "sertraline") == TreatmentStatus.current


def test_a_long_item_does_not_end_a_denied_list() -> None:
    g = extract("She denies a history of stroke, cancer, vomiting up blood, bright red blood per rectum, bleeding "
                "stomach ulcers, cholelithiasis, asthma, emphysema or pneumonia.")
    assert {p.condition for p in g.past_history if p.status != HistoryStatus.denied} == set()


def test_a_symptom_that_begins_is_not_a_behaviour() -> None:
    g = extract("Night sweats and cough began in December, for which he was treated with a course of Augmentin.")
    assert all(c.behavior is None for s in g.symptoms for c in s.contexts)


def test_ideation_denied_at_present_after_the_attempt_is_historical() -> None:
    g = extract("The patient states she had been thinking about suicide for a couple of weeks. She says she is "
                "currently not suicidal. She does not clearly explain how this has made her suicidality subside.\n"
                "PLAN: She will be placed on every 15-minute checks with suicidal precautions.")
    si = next(s for s in g.symptoms if s.headword == "suicidal ideation")
    assert si.assertion == Assertion.historical


def test_the_indication_of_an_as_needed_order_is_no_symptom_of_the_patient() -> None:
    g = extract("PLAN: Continue lorazepam 0.5 mg p.o. q.6h. p.r.n. anxiety and agitation.")
    assert not [s for s in g.symptoms if s.assertion == Assertion.present]
    # boundary: a symptom the note tells as present stays present
    g = extract("He has had headaches for a week. He takes Tylenol as needed for headache.")
    assert [s.assertion for s in g.symptoms if s.headword == "headache"] == [Assertion.present]


@pytest.mark.parametrize(("text", "headword", "assertion"), [
    ("No changes in hair texture, change in skin color, excessive or decreased appetite.", "decreased appetite",
     Assertion.absent),
    ("No change in sleep or decreased appetite.", "decreased appetite", Assertion.absent),
    # boundary: "no change" in a condition that goes on leaves it present
    ("There has been no change in his depression.", "depressed mood", Assertion.present),
])
def test_no_change_denies_a_symptom_that_is_a_change(text: str, headword: str, assertion: Assertion) -> None:
    assert [s.assertion for s in extract(text).symptoms if s.headword == headword] == [assertion]


def test_a_vaccine_due_is_planned_and_one_given_later_in_the_note_is_a_dose() -> None:
    t = next(t for t in extract("He does need a flu vaccine.").treatments)
    assert t.status == TreatmentStatus.planned
    g = extract("He does need a flu vaccine.\nPLAN: 1. Give flu vaccine 0.5 mg IM now, this was done.")
    assert [t.status for t in g.treatments] == [TreatmentStatus.prn]


def test_a_vaccine_given_in_past_years_is_past() -> None:
    t = next(t for t in extract("PLAN: 5. Pneumovax has been given in the last five years.").treatments)
    assert t.status == TreatmentStatus.past


def test_a_word_in_its_medical_sense_is_no_symptom() -> None:
    """The look-alike rules of rules/twin/lookalikes.yaml hold for the de-identification's symptoms too."""
    g = extract("The scope was then withdrawn. EKG showed a wandering atrial pacemaker. Abdomen is soft without "
                "rebound, rigidity, or guarding. Aggressive medical management including dialysis was started.")
    assert g.symptoms == []
    g = extract("He has become withdrawn and aggressive, wandering at night.")
    assert {s.headword for s in g.symptoms} == {"social withdrawal", "aggression", "wandering"}


def test_what_the_patient_says_is_told_as_said_not_as_a_belief() -> None:
    from anonpsy.extract.assembly.steb import extract_steb

    text = "She states that she has mesothelioma and she feels anxious."
    frame = extract_steb(text, (text.index("anxious"), text.index("anxious") + 7))
    assert frame is not None and frame.thought is not None and frame.thought.startswith("said that ")
    text = "He believes his neighbors implanted a microchip in his tooth."
    frame = extract_steb(text, (0, 11))
    assert frame is not None and frame.thought == "his neighbors implanted a microchip in his tooth"


def test_a_measured_level_of_a_mineral_is_no_supplement_taken() -> None:
    assert [t.name for t in extract("Her magnesium was 2 and potassium 3.9. Ferritin 20, iron 30.").treatments] == []
    # boundary: a dose makes it a supplement
    assert [t.name for t in extract("She takes iron 325 mg daily.").treatments] == ["ferrous sulfate"]
