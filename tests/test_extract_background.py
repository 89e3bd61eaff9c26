"""Rules backend of extraction E on family and social background: whose act or condition a sentence states, the
family situation of the patient, and negations that a symptom phrase must not swallow. Texts are synthetic."""

from __future__ import annotations

import pytest

from anonpsy.extract import extract
from anonpsy.extract.mentions.demographics import extract_family_structure
from anonpsy.extract.mentions.family import family_conditions
from anonpsy.extract.sections import sentences
from anonpsy.graph import SafetyFlag

# ---------------------------------------------------------------------------------------------------------------
# Family history read from a narrative family background


def test_acts_towards_someone_are_no_family_conditions() -> None:
    text = ("The sister has always wanted to follow her around and do the things that she does. The father said the "
            "mother had abandoned them. Her father had depression and alcoholism.")
    assert family_conditions(text) == [("father", "depression"), ("father", "alcoholism")]


@pytest.mark.parametrize(("text", "expected"), [
    ("Brother had CABG 8/95.", [("brother", "CABG")]),
    ("Brother had CABG in 1995 and diabetes.", [("brother", "CABG"), ("brother", "diabetes")]),
    ("Mother had stroke in March 2001.", [("mother", "stroke")]),
    ("Father had type 2 diabetes.", [("father", "type 2 diabetes")]),
])
def test_a_date_after_a_relatives_condition_is_no_part_of_it(text: str, expected: list[tuple[str, str]]) -> None:
    """The date says when, not what: kept in the label it would be written out as an identifier."""
    assert family_conditions(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Mother died of stroke, age 81.", [("mother", "stroke")]),
    ("Father died of lung cancer, aged 60.", [("father", "lung cancer")]),
    ("Mother had diabetes, ages unknown.", [("mother", "diabetes")]),
    ("Father died from pancreatitis at the age of 40.", [("father", "pancreatitis")]),
    ("Mother had bone cancer around age 80 and depression.", [("mother", "bone cancer"), ("mother", "depression")]),
    ("Brother had leukemia age 50.", [("brother", "leukemia")]),
])
def test_an_age_after_a_relatives_condition_is_no_condition(text: str, expected: list[tuple[str, str]]) -> None:
    """'age 81' after the condition says when the relative died: read as a condition of its own it would be
    written out as an identifier."""
    assert family_conditions(text) == expected


def test_a_relatives_condition_with_a_date_leaks_nothing() -> None:
    from anonpsy.pipeline import deid_text

    res = deid_text("HPI: A 70-year-old man with chest pain. FHX: Father died of heart disease. Brother had "
                    "CABG 8/95.", seed=0, case_id="fh-date")
    assert "8/95" not in res.text
    assert not [lk for lk in res.leaks.leaks if lk.kind == "DATE"]


@pytest.mark.parametrize(("text", "expected"), [
    ("Her mother has passed away secondary to cancer.", [("mother", "cancer")]),
    ("One brother passed away from brain cancer.", [("brother", "brain cancer")]),
    ("Father died due to a stroke.", []),  # "a stroke" is read from the lexicon, not by this reader
    ("Mother suffers from high blood pressure, cancer, and diabetes.",
     [("mother", "high blood pressure"), ("mother", "cancer"), ("mother", "diabetes")]),
])
def test_a_relatives_cause_of_death_is_the_condition(text: str, expected: list[tuple[str, str]]) -> None:
    """'passed away secondary to' is how the relative died, not part of what she had; a serial comma before
    'and' does not glue the conjunction to the last condition."""
    assert family_conditions(text) == expected


def test_a_relatives_age_at_death_is_not_written_out() -> None:
    """A relative's age told after the condition is a date of the family's story: it must not reach the output
    inside the condition's name."""
    from anonpsy.pipeline import deid_text

    res = deid_text("HPI: A middle-aged man with low mood. FAMILY HISTORY: Father died from pancreatitis at the age "
                    "of 79. Brother died from leukemia at the age of 40.", seed=0, case_id="fh-age")
    assert "79" not in res.text and "40" not in res.text
    assert "pancreatitis" in res.text.lower()


def test_relative_reporting_another_persons_problem_is_the_informant() -> None:
    g = extract("HISTORY:,  Seizures.,FAMILY BACKGROUND:,  Mother reported that he had a problem with "
                "methamphetamine.  Her mother has bipolar disorder.")
    assert ("mother", "methamphetamine") not in {(f.member, f.condition) for f in g.family_history}
    assert ("mother", "bipolar disorder") in {(f.member, f.condition) for f in g.family_history}


# ---------------------------------------------------------------------------------------------------------------
# Violence in the household


def test_violence_between_the_parents_is_not_the_patients() -> None:
    g = extract("FAMILY HISTORY:,  There was a lot of arguing.  There was physical violence both from father to mother "
                "and mother to father.  She saw this.")
    assert "violent behavior" not in {s.headword for s in g.symptoms if s.assertion.value == "present"}
    assert SafetyFlag.violence not in g.visit_event.safety_flags


def test_domestic_violence_names_no_perpetrator() -> None:
    assert "violent behavior" not in {s.headword for s in extract("History of domestic violence at home.").symptoms}
    arrested = extract("He was arrested for domestic violence last year.")
    assert "violent behavior" in {s.headword for s in arrested.symptoms}


# ---------------------------------------------------------------------------------------------------------------
# Denials and questions: a symptom the note denies or could not ask about is never present


def _sx(text: str) -> dict[str, str]:
    """Headword -> assertion of the patient's symptoms."""
    return {s.headword: s.assertion.value for s in extract(text).symptoms}


def test_a_negated_symptom_phrase_does_not_swallow_its_negation() -> None:
    assert _sx("No sleep disturbance was noted. No changes in weight.") == {"sleep disturbance": "absent"}
    assert _sx("She has no sleep problems and no appetite changes.") == {"sleep disturbance": "absent"}
    assert _sx("He gets no sleep at all.") == {"insomnia": "present"}


def test_lack_of_denies_the_one_item_it_governs() -> None:
    assert _sx("Notable for lack of primary psychotic symptoms, some agitation.") == {
        "psychotic symptoms": "absent", "psychomotor agitation": "present"}


def test_symptoms_the_patient_could_not_report_on_are_not_present() -> None:
    got = _sx("She is unable to communicate about auditory or visual hallucinations.")
    assert "present" not in got.values() and got


# ---------------------------------------------------------------------------------------------------------------
# The patient's family situation


def test_birth_history_pregnancy_is_no_family_situation() -> None:
    text = ("DEVELOPMENTAL HISTORY:,  She was the product of an unplanned pregnancy and normal delivery.  Mother did "
            "not drink while she was pregnant.,FAMILY BACKGROUND:,  The patient lives with her mother.")
    assert extract_family_structure(sentences(text)) == "lives with her mother"
    assert extract_family_structure(sentences("PAST MEDICAL HISTORY:,  Ectopic pregnancy in 1980.")) is None


def test_relatives_marriages_are_not_the_patients() -> None:
    text = ("FAMILY BACKGROUND:,  Mother had been married to the patient's father, but they separated in 2002 and "
            "divorced in 2003.  The grandparents are separated.  The patient lives with her mother.")
    assert extract_family_structure(sentences(text)) == "lives with her mother"


def test_a_divorce_outranks_a_past_marriage_and_marital_status_is_the_headword() -> None:
    assert extract_family_structure(sentences("She was married for two years. Her ex-husband died in 1980.")) == \
        "divorced"
    assert extract_family_structure(sentences("He is married for 30 years.")) == "married"


# ---------------------------------------------------------------------------------------------------------------
# Age: the present age, not the age at an event


def test_an_age_at_an_event_is_not_the_present_age() -> None:
    text = "Seizures were diagnosed when she was 5 years old. Although she is 17 years old, she reads slowly."
    assert extract(text).demographics.age == 17


# ---------------------------------------------------------------------------------------------------------------
# Whose: the family-history section and the patient's childhood


def test_unnamed_sentences_of_the_family_history_are_the_familys() -> None:
    g = extract("HPI:,  Low mood.,FAMILY HISTORY:,  Positive for depression and alcoholism.  Mother reported that she "
                "finished high school.  She was an average student, had learning difficulties in reading.")
    assert {d.rule_id for d in g.diagnoses if d.certainty is not None} == set()
    assert {s.headword for s in g.symptoms if s.assertion.value == "present"} == {"depressed mood"}
    assert {f.condition for f in g.family_history} >= {"depression", "alcoholism"}


def test_childhood_is_history() -> None:
    assert _sx("She notes her childhood was primarily lonely.") == {"loneliness": "historical"}
    assert _sx("Growing up, he was anxious.") == {"anxiety": "historical"}


# ---------------------------------------------------------------------------------------------------------------
# The visit: what the note does not state is not said


def test_a_legal_status_only_implied_by_the_setting_is_not_stated() -> None:
    from anonpsy.pipeline import deid_text

    implied = deid_text("OUTPATIENT PSYCHIATRY INTAKE\nHPI: A 30-year-old woman referred by her doctor for low mood. "
                        "She denies suicidal ideation.", seed=0)
    assert implied.original.visit_event.legal_status.value == "voluntary"
    assert "voluntary" not in implied.text
    stated = deid_text("PSYCHIATRIC ADMISSION NOTE\nHPI: A 30-year-old woman was admitted on a voluntary basis for "
                       "low mood. She denies suicidal ideation.", seed=0)
    assert "on a voluntary basis" in stated.text


def test_a_copied_living_situation_agrees_with_an_unknown_sex() -> None:
    """The living situation copied from the note ("lives with his mother") is told with the pronoun the text
    uses for a patient of unknown sex, not "they lives with his mother"; a known sex keeps the phrase."""
    from anonpsy.generate.templates import _agree
    from anonpsy.generate.words import Voice
    from anonpsy.graph import Sex

    they = Voice(Sex.unknown, 7)
    assert _agree("lives with his mother", they) == "live with their mother"
    assert _agree("has her own apartment", they) == "have their own apartment"
    assert _agree("lives with her", they) == "live with her"
    assert _agree("lives with his mother", Voice(Sex.male, 7)) == "lives with his mother"
