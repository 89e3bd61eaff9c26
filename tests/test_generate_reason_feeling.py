"""A chief complaint written as how the patient feels reads as a feeling after "because of" (synthetic notes;
the first shape is an MTSamples chief complaint, CC0)."""

from __future__ import annotations

import pytest

from anonpsy.pipeline import deid_text

_NOTE = ("CHIEF COMPLAINT: {cc}\nHISTORY OF PRESENT ILLNESS: The patient is a 75-year-old woman with two weeks of "
         "low energy.")


@pytest.mark.parametrize(("cc", "phrase"), [
    ("Weak and shaky.", "because of feeling weak and shaky."),
    ("Depressed.", "because of feeling depressed."),
    ("Depressed mood.", "because of depressed mood."),
    ("Auditory hallucinations.", "because of auditory hallucinations."),
])
def test_a_feeling_complaint_reads_as_a_feeling(cc: str, phrase: str) -> None:
    lead = deid_text(_NOTE.format(cc=cc), seed=0, case_id="cc").text.split("\n")[0]
    assert lead.endswith(phrase)
