"""The lead sentence names no specialty the graph does not hold (synthetic notes)."""

from __future__ import annotations

from anonpsy.pipeline import deid_text


def _lead(text: str) -> str:
    return deid_text(text, seed=0, case_id="lead").text.split("\n", 1)[0]


def test_an_admission_read_from_a_hospital_course_is_no_psychiatric_unit() -> None:
    lead = _lead("DISCHARGE SUMMARY\nHOSPITAL COURSE: A 60-year-old man was admitted with chest pain. "
                 "He takes sertraline 50 mg daily for depression.\n")
    assert "admitted to an inpatient unit" in lead
    assert "psychiatric" not in lead


def test_a_visit_of_unknown_setting_is_no_psychiatric_evaluation() -> None:
    lead = _lead("A 60-year-old man with episodic confusion. MRI showed a lesion. "
                 "He takes sertraline 50 mg daily for depression.")
    assert "presented for evaluation" in lead
    assert "psychiatric" not in lead


def test_a_stated_emergency_department_is_still_named() -> None:
    lead = _lead("A 30-year-old woman was brought to the emergency department by police with hallucinations.")
    assert "the emergency department" in lead


def test_a_patient_of_unknown_age_is_not_called_a_man_or_a_woman() -> None:
    """With no age, 'man' would assert an adult (a boy seen for school difficulties): the sex alone is told."""
    lead = _lead("The patient is seen for follow-up of obsessions and repetitive questions at school. "
                 "He takes sertraline 50 mg daily and his mother reports he is calmer.")
    assert " man " not in lead and " woman " not in lead
    assert " male " in lead or " female " in lead
    lead = _lead("A 40-year-old man was seen for follow-up of obsessions. He takes sertraline 50 mg daily.")
    assert "-year-old man" in lead or "-year-old woman" in lead
