"""An occupation named after a relative, partner or friend is that person's, never the patient's (synthetic
sentences; the first shape is from an MTSamples neurology letter, CC0)."""

from __future__ import annotations

import pytest

from anonpsy.extract import extract


@pytest.mark.parametrize("text", [
    "SOCIAL HISTORY: He lives with his parents. Father manages a farm. Mother is an 8th grade teacher.",
    "SOCIAL HISTORY: His mother is a teacher.",
    "SOCIAL HISTORY: She lives with her husband, who is a teacher.",
    "SOCIAL HISTORY: Her best friend works as a nurse.",
])
def test_another_persons_occupation_is_not_the_patients(text: str) -> None:
    assert extract(text, case_id="occ").demographics.occupation is None


@pytest.mark.parametrize(("text", "occupation"), [
    ("SOCIAL HISTORY: He is a teacher.", "teacher"),
    ("SOCIAL HISTORY: Her father is a pastor; she is a nurse.", "nurse"),
    ("SOCIAL HISTORY: He lives with his mother and works as a teacher.", "teacher"),
    ("SOCIAL HISTORY: Married, works as a teacher.", "teacher"),
])
def test_the_patients_own_occupation_is_still_read(text: str, occupation: str) -> None:
    assert extract(text, case_id="occ").demographics.occupation == occupation
