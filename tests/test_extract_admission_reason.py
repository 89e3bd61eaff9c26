"""A symptom that was the reason for an admission and that this visit's examination denies was there at the
admission and is not now (synthetic consult notes)."""

from __future__ import annotations

from anonpsy.extract import extract
from anonpsy.graph import Assertion


def _sx(text: str) -> dict[str, tuple[Assertion, bool]]:
    return {s.id: (s.assertion, s.current_symptom) for s in extract(text, case_id="adm").symptoms}


def test_an_admission_reason_denied_by_the_exam_is_historical() -> None:
    text = ("MENTAL STATUS EXAM: Calm and cooperative. There is no psychomotor agitation.\n"
            "ASSESSMENT: A 30-year-old man who was admitted for acute agitation after a fight.")
    assert _sx(text)["sx_psychomotor_agitation"] == (Assertion.historical, False)


def test_an_admission_reason_the_exam_does_not_deny_stays_present() -> None:
    text = ("MENTAL STATUS EXAM: Calm and cooperative.\n"
            "ASSESSMENT: A 30-year-old man who was admitted for acute agitation after a fight.")
    assert _sx(text)["sx_psychomotor_agitation"] == (Assertion.present, True)


def test_a_symptom_also_told_present_otherwise_is_left_as_read() -> None:
    text = ("HPI: He has been agitated all week.\n"
            "MENTAL STATUS EXAM: There is no psychomotor agitation.\n"
            "ASSESSMENT: He was admitted for agitation.")
    assert _sx(text)["sx_psychomotor_agitation"][0] != Assertion.historical


def test_a_distant_history_in_a_diagnosis_list_is_over() -> None:
    """'Distant history of migraine headaches' or 'Remote history of alcohol abuse' in a diagnosis list is a
    history long over, not an active problem; a plain 'history of' there is still held (synthetic lists)."""
    g = extract("DISCHARGE DIAGNOSES:\n1. Anxiety disorder.\n2. Distant history of migraine headaches.\n"
                "3. Remote history of alcohol abuse.", case_id="hx")
    assert {p.condition: p.status.value for p in g.past_history}["migraine headaches"] != "active"
    assert {d.label: d.temporality.value for d in g.diagnoses}["Alcohol Use Disorder"] == "past"
    g = extract("ASSESSMENT: 1. Major depressive disorder. 2. History of alcohol abuse.", case_id="hx")
    assert {d.label: d.temporality.value for d in g.diagnoses}["Alcohol Use Disorder"] == "current"
