"""Rules backend of extraction E on family and social background: whose act or condition a sentence states, the
family situation of the patient, and negations that a symptom phrase must not swallow. Texts are synthetic."""

from __future__ import annotations

from anonpsy.extract import extract
from anonpsy.extract.mentions.family import family_conditions
from anonpsy.graph import SafetyFlag

# ---------------------------------------------------------------------------------------------------------------
# Family history read from a narrative family background


def test_acts_towards_someone_are_no_family_conditions() -> None:
    text = ("The sister has always wanted to follow her around and do the things that she does. The father said the "
            "mother had abandoned them. Her father had depression and alcoholism.")
    assert family_conditions(text) == [("father", "depression"), ("father", "alcoholism")]


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
