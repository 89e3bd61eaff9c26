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
