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
