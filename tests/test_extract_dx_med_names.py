"""Diagnosis and medication names that must survive extraction under their own DSM-5-TR name or generic: the
substance a substance-induced disorder names, and drugs named only by a brand."""

from __future__ import annotations

import pytest

from anonpsy.extract import extract
from anonpsy.extract.mentions.diagnoses import find_diagnoses


@pytest.mark.parametrize(
    "text",
    [
        # MTSamples (CC0) discharge diagnosis list: "3.  Alcohol induced persisting dementia."
        "Alcohol induced persisting dementia.",
        "Alcohol-induced persisting dementia.",
        "alcoholic dementia",
        "Korsakoff syndrome",
    ],
)
def test_an_alcohol_induced_dementia_keeps_its_cause(text: str) -> None:
    """A dementia that the diagnosis says alcohol induced is the alcohol-induced major neurocognitive disorder,
    not a bare major neurocognitive disorder: the cause is part of the diagnosis."""
    assert {r for _s, _e, r in find_diagnoses(text)} == {"alcohol_induced_major_neurocognitive_disorder"}


def test_a_plain_dementia_stays_major_neurocognitive_disorder() -> None:
    assert {r for _s, _e, r in find_diagnoses("Dementia, Alzheimer type.")} == {"major_neurocognitive_disorder"}


def test_an_alcohol_induced_dementia_in_a_diagnosis_list_is_the_patients() -> None:
    g = extract("DISCHARGE DIAGNOSES:\n1. Alcohol induced persisting dementia.\n2. Alcohol abuse.", case_id="dx")
    assert {d.rule_id for d in g.diagnoses} >= {"alcohol_induced_major_neurocognitive_disorder",
                                                "alcohol_use_disorder"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # MTSamples (CC0) medication lists
        ("MEDICATIONS: Fluoxetine, pantoprazole, Naprosyn, and vitamin C.",
         {"fluoxetine", "pantoprazole", "naproxen", "ascorbic acid"}),
        ("MEDICATIONS: 1. Multivitamin 1 daily. 2. He was on Xenaderm for his sacral pressure ulcer.",
         {"multivitamin", "trypsin/balsam peru/castor oil"}),
        # fixed-dose combination brands (synthetic list in the MTSamples style): both drugs, not one of them
        ("MEDICATIONS: Lotrel 10/20 mg every morning, Vytorin 10/40 mg, lisinopril 10 mg.",
         {"amlodipine-benazepril", "ezetimibe-simvastatin", "lisinopril"}),
    ],
)
def test_a_drug_named_by_a_common_or_brand_name_is_kept(text: str, expected: set[str]) -> None:
    """A supplement named by its common name ("vitamin C") or a topical named by its brand ("Xenaderm") is a
    medication of the list like any other, current as listed."""
    g = extract(text, case_id="meds")
    assert {t.name for t in g.treatments} == expected
    assert {t.status.value for t in g.treatments} == {"current"}


def test_neurological_comorbidities_are_kept_as_past_history() -> None:
    """Tension-type headache and carpal tunnel syndrome named among the comorbidities (MTSamples, CC0) are past
    history items like migraine or neuropathy, not dropped."""
    g = extract("PAST MEDICAL HISTORY: She also has diabetes, tension headaches, GERD, and carpal tunnel disease.",
                case_id="pmh")
    assert {"tension headaches", "carpal tunnel disease"} <= {p.condition for p in g.past_history}


def test_a_coded_disc_displacement_is_kept_with_its_complication() -> None:
    """A discharge diagnosis in the coding wording ("Cervical disk displacement with myelopathy") is a past
    history item, named as written (the myelopathy is part of it)."""
    g = extract("DISCHARGE DIAGNOSES:\n1. Anemia.\n2. Cervical disk displacement with myelopathy.", case_id="pmh")
    assert "Cervical disk displacement with myelopathy".lower() in {p.condition.lower() for p in g.past_history}


@pytest.mark.parametrize(
    ("text", "rule_id"),
    [
        # DSM-IV multiaxial items in the MTSamples style (synthetic)
        ("AXIS I:  Adjustment disorder with disturbance of conduct (309.3).", "adjustment_disorder"),
        ("Axis I: Adjustment disorder, unspecified.", "adjustment_disorder"),
        ("Adjustment disorder.", "adjustment_disorder"),
        ("He meets criteria for a disruptive behavior disorder, not otherwise specified.",
         "unspecified_disruptive_impulse_control_and_conduct_disorder"),
        ("Disruptive behavior disorder NOS.", "unspecified_disruptive_impulse_control_and_conduct_disorder"),
    ],
)
def test_a_dsm_iv_name_of_a_diagnosis_is_its_dsm_5_tr_category(text: str, rule_id: str) -> None:
    """The singular 'adjustment disorder' and its DSM-IV subtypes are adjustment disorder; 'disruptive behavior
    disorder, NOS' is the unspecified disruptive, impulse-control, and conduct disorder. Neither is dropped."""
    assert {r for _s, _e, r in find_diagnoses(text)} == {rule_id}


@pytest.mark.parametrize("text", ["He shows disruptive behavior in class.", "Medication adjustment was discussed."])
def test_the_behaviour_or_an_adjustment_alone_is_no_diagnosis(text: str) -> None:
    assert find_diagnoses(text) == []


@pytest.mark.parametrize(
    ("text", "rule_id"),
    [
        # MTSamples-style history sentences (synthetic)
        ("This is a 52-year-old man with a long history of heroin abuse, who keeps relapsing.", "opioid_use_disorder"),
        ("History of methamphetamine abuse.", "stimulant_use_disorder"),
        ("She reports Xanax dependence.", "sedative_hypnotic_anxiolytic_use_disorder"),
        ("Crack addiction since his twenties.", "stimulant_use_disorder"),
        ("oxycodone abuse after his back surgery", "opioid_use_disorder"),
    ],
)
def test_a_substance_before_the_noun_of_problem_use_is_its_use_disorder(text: str, rule_id: str) -> None:
    """DSM-IV abuse, dependence and addiction written after the substance ("heroin abuse") are the substance's
    use disorder in DSM-5-TR, as they are written before it ("abusing opiates")."""
    assert {r for _s, _e, r in find_diagnoses(text)} == {rule_id}


@pytest.mark.parametrize("text", ["History of nicotine dependence.", "tobacco addiction for years",
                                  "She does have a history of tobacco abuse.", "Nicotine abuse, 1 ppd.",
                                  "a history of abusing tobacco", "4. Tobacco abuse."])
def test_tobacco_abuse_or_dependence_is_the_use_disorder(text: str) -> None:
    """A clinician's "tobacco abuse" is a diagnosis term, not a description of smoking: ICD-9-CM indexes it to
    305.1 tobacco use disorder and ICD-10-CM to F17.2 nicotine dependence, DSM-5-TR's tobacco use disorder."""
    assert {r for _s, _e, r in find_diagnoses(text)} == {"tobacco_use_disorder"}


@pytest.mark.parametrize("text", ["He smokes two packs a day.", "Tobacco use: one pack per day.",
                                  "She is a current smoker.", "Quit smoking in 1999."])
def test_smoking_described_names_no_tobacco_disorder(text: str) -> None:
    assert "tobacco_use_disorder" not in {r for _s, _e, r in find_diagnoses(text)}


@pytest.mark.parametrize("text", ["History of sexual abuse.", "Laxative abuse in her teens.", "He uses heroin daily."])
def test_abuse_of_no_substance_or_a_plain_use_is_no_use_disorder(text: str) -> None:
    assert find_diagnoses(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "AXIS I:  BAD, manic with psychosis.",
        "Major depressive disorder, recurrent, severe with psychosis.",
        "Schizophrenia, paranoid type, with acute psychosis.",
        "Bipolar I disorder, current episode manic, with catatonia.",
    ],
)
def test_psychosis_or_catatonia_after_with_is_a_specifier_not_a_second_diagnosis(text: str) -> None:
    """In a diagnosis list "psychosis" names a psychotic disorder, but after "with" following an episode, a
    severity or a diagnosis it only specifies that diagnosis: no unspecified psychotic or catatonic disorder."""
    found = {r for _s, _e, r in find_diagnoses(text, "assessment")}
    assert not found & {"unspecified_schizophrenia_spectrum_disorder", "unspecified_catatonia"}


@pytest.mark.parametrize("text", ["Diagnoses: 1. Psychosis, unspecified.", "He presented with psychosis."])
def test_psychosis_alone_in_the_assessment_stays_a_diagnosis(text: str) -> None:
    found = {r for _s, _e, r in find_diagnoses(text, "assessment")}
    assert found == {"unspecified_schizophrenia_spectrum_disorder"}


@pytest.mark.parametrize(
    ("text", "rule_id"),
    [
        # synthetic assessment lines: an eponym written without its possessive, or without the apostrophe
        ("ASSESSMENT: 299.80 Asperger disorder.", "autism_spectrum_disorder"),
        ("Impression: Aspergers disorder, stable.", "autism_spectrum_disorder"),
        ("Diagnosis: Alzheimer dementia.", "major_neurocognitive_disorder"),
    ],
)
def test_an_eponym_without_its_possessive_names_the_same_diagnosis(text: str, rule_id: str) -> None:
    """Current usage drops the eponym's possessive ("Asperger disorder", "Tourette syndrome"): the name still
    names the diagnosis its possessive form names."""
    assert rule_id in {r for _s, _e, r in find_diagnoses(text, section="assessment")}


def test_a_drug_level_in_micrograms_per_millilitre_is_a_test_not_a_drug() -> None:
    """Antiepileptic levels are written in mcg/mL ("DPH 12.5 mcg/mL"): a laboratory value, not a medication."""
    assert extract("LAB: Valproate 65 mcg/mL. Carbamazepine 8 ug/mL.", case_id="lab").treatments == []


def test_an_abbreviated_anticonvulsant_in_a_medication_list_is_kept() -> None:
    """DPH (diphenylhydantoin) in a neurology medication list is phenytoin (synthetic list)."""
    g = extract("MEDS: DPH 300 mg daily and ASA.", case_id="meds")
    assert {t.name for t in g.treatments} == {"phenytoin", "aspirin"}


@pytest.mark.parametrize(
    ("text", "surface"),
    [
        # synthetic neurology write-ups: a stroke named by its site, a dissection, a spinal stenosis
        ("COURSE: MRI showed a right lateral medullary stroke.", "lateral medullary stroke"),
        ("COURSE: The angiogram was felt consistent with a right vertebral artery dissection.",
         "vertebral artery dissection"),
        ("HPI: Examination showed findings consistent with cervical stenosis and he had a laminectomy.",
         "cervical stenosis"),
        ("IMPRESSION:,1.  Post-laminectomy low back syndrome.,2.  Left L5-S1 radiculopathy.", "radiculopathy"),
        ("PAST MEDICAL HISTORY: Myasthenia gravis on Mestinon.", "myasthenia gravis"),
    ],
)
def test_a_neurological_condition_keeps_its_written_name(text: str, surface: str) -> None:
    """A neurological diagnosis of a neurology note is kept as the patient's condition under the name written
    (the site of a stroke, the artery dissected), not dropped or reduced to a bare 'stroke'."""
    g = extract(text, case_id="neuro")
    assert any(surface in p.condition for p in g.past_history), [p.condition for p in g.past_history]


def test_a_condition_told_by_its_adjective_is_named_by_its_noun() -> None:
    """'She is obese.' or 'He is asthmatic.' names the condition; the graph calls it obesity and
    asthma, not 'obese' (synthetic exam and history)."""
    g = extract("PMH: He is asthmatic.\nEXAM: She is obese.", case_id="adj")
    assert {p.condition for p in g.past_history} == {"obesity", "asthma"}


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("IMPRESSION:,1.  Severe cognitive impairment with minimal potential for rehabilitation.",
         "Major Neurocognitive Disorder"),
        ("The findings are consistent with a progressive dementia syndrome such as Alzheimer's disease.",
         "Major Neurocognitive Disorder"),
        ("ASSESSMENT: Moderate to severe dementia.", "Major Neurocognitive Disorder"),
        ("ASSESSMENT: Amnestic mild cognitive impairment.", "Mild Neurocognitive Disorder"),
    ],
)
def test_a_neurocognitive_disorder_is_read_from_its_clinical_names(text: str, label: str) -> None:
    """Dementia and cognitive impairment are named by severity ('severe cognitive impairment' is a major
    neurocognitive disorder, 'mild cognitive impairment' a mild one) and by syndrome in medical notes."""
    g = extract(text, case_id="ncd")
    assert label in {d.label for d in g.diagnoses}, [d.label for d in g.diagnoses]


@pytest.mark.parametrize(("text", "specifiers"), [
    ("ASSESSMENT: Chronic cocaine abuse.", ["cocaine"]),
    ("ASSESSMENT: Crack cocaine use disorder, severe.", ["cocaine"]),
    ("ASSESSMENT: Methamphetamine dependence.", ["amphetamine-type substance"]),
    ("ASSESSMENT: Stimulant use disorder (amphetamine-type substance).", ["amphetamine-type substance"]),
    ("ASSESSMENT: Stimulant use disorder.", []),
    ("ASSESSMENT: Stimulant use disorder. Urine screen positive for cocaine.", []),
])
def test_a_stimulant_use_disorder_keeps_its_stimulant(text: str, specifiers: list[str]) -> None:
    """DSM-5-TR records a stimulant use disorder with the particular stimulant: the one its name says is kept as
    the specifier, no other word of the sentence."""
    dx = {d.rule_id: d for d in extract(text).diagnoses}
    assert dx["stimulant_use_disorder"].specifiers == specifiers


def test_a_stimulant_use_disorder_is_told_with_its_stimulant() -> None:
    from anonpsy.generate.plain import dx_full_name

    d = next(d for d in extract("ASSESSMENT: Chronic cocaine abuse.").diagnoses)
    assert dx_full_name(d) == "stimulant use disorder (cocaine)"


@pytest.mark.parametrize(("text", "want"), [
    ("Hypertension worsened by cocaine drug abuse.", {"stimulant_use_disorder"}),
    ("He has a history of heroin drug addiction.", {"opioid_use_disorder"}),
    ("History of IV drug abuse.", {"other_substance_use_disorder"}),
    ("History of illicit drug abuse.", {"other_substance_use_disorder"}),
])
def test_a_substance_before_a_generic_drug_abuse_names_its_use_disorder(text: str, want: set[str]) -> None:
    assert {r for _s, _e, r in find_diagnoses(text)} == want
