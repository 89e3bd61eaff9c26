"""Medication lists of discharge summaries: the instructions' regimen decides over the hospital course, and a
list that says it is the list at admission is a home list (synthetic notes in the style of MTSamples discharge
summaries)."""

from __future__ import annotations

import pytest

from anonpsy.extract import extract
from anonpsy.extract.sections import sentences

NOTE = (
    "HOSPITAL COURSE: She was switched from hydrocodone to oxycodone 10 mg b.i.d. for pain. She was treated with "
    "hydrocortisone cream to the rash.\n"
    "INSTRUCTIONS GIVEN TO THE PATIENT AT THE TIME OF DISCHARGE: The patient is advised to continue taking the "
    "following medications: oxycodone 10 mg b.i.d. for five days, hydrocortisone cream b.i.d. to the arm, and "
    "sertraline 50 mg daily."
)


def _status(text: str) -> dict[str, str]:
    return {t.name: t.status.value for t in extract(text, case_id="dc").treatments}


def test_the_discharge_instructions_regimen_is_current_over_the_hospital_course() -> None:
    """A drug the course told as switched from or treated with, then named in the discharge instructions'
    regimen, is taken at discharge."""
    st = _status(NOTE)
    assert st["oxycodone"] == "current"
    assert st["hydrocortisone"] == "current"
    assert st["sertraline"] == "current"


@pytest.mark.parametrize("header", ["DISCHARGE INSTRUCTIONS", "Instructions at Discharge",
                                    "INSTRUCTIONS GIVEN TO THE PATIENT AT THE TIME OF DISCHARGE"])
def test_discharge_instruction_headers_name_their_section(header: str) -> None:
    s = sentences(f"HPI: Low mood.\n{header}: Continue sertraline.")
    assert s[-1].section == "discharge_instructions"


@pytest.mark.parametrize("opening", ["On transfer,", "On admission,", "Upon arrival she took", "Prior to admission,"])
def test_a_list_said_to_be_the_admission_list_is_a_home_list(opening: str) -> None:
    """'MEDICATIONS: On transfer, ...' is the list the patient came in with: a drug of it that the discharge list
    does not continue is no longer taken."""
    text = (f"MEDICATIONS: {opening} sertraline 50 mg, niacin and lisinopril.\n"
            "DISCHARGE MEDICATIONS: Sertraline 50 mg daily, lisinopril 10 mg daily.")
    st = _status(text)
    assert st == {"sertraline": "current", "lisinopril": "current", "niacin": "past"}


def test_a_plain_medication_list_stays_current() -> None:
    text = "MEDICATIONS: Sertraline 50 mg, niacin.\nDISCHARGE MEDICATIONS: Sertraline 50 mg daily."
    assert _status(text)["niacin"] == "current"


@pytest.mark.parametrize("header", ["SHX/FHX", "SOCIAL/FAMILY HISTORY", "FAMILY AND SOCIAL HISTORY"])
def test_a_combined_social_and_family_header_keeps_the_patients_habits(header: str) -> None:
    """Under a header that joins the social and the family history, the patient's drinking and smoking are his
    own (no relative is named) and a relative's illness is still the relative's (synthetic)."""
    g = extract(f"HPI: Low mood.\n{header}: 3 beers/day. 1 pack of cigarettes per day. Mother had depression.",
                case_id="shx")
    assert [(f.member, f.condition) for f in g.family_history] == [("mother", "depression")]
    assert {"sx_alcohol_use", "sx_tobacco_use"} <= {s.id for s in g.symptoms}


@pytest.mark.parametrize(
    ("text", "past"),
    [
        ("MEDICATIONS: Pravachol, aspirin, Percocet, Ultram (has held the latter two medications for two weeks).",
         {"oxycodone/acetaminophen", "tramadol"}),
        ("MEDICATIONS: sertraline and clonazepam; she stopped the latter in May.", {"clonazepam"}),
        ("MEDICATIONS: sertraline, clonazepam.", set()),
    ],
)
def test_drugs_an_anaphor_stops_are_past(text: str, past: set[str]) -> None:
    """'the latter two' after a list names its last drugs: held or stopped, they are no longer taken; the drugs
    before them stay current (synthetic lists)."""
    st = _status(text)
    assert {k for k, v in st.items() if v == "past"} == past
    assert all(v == "current" for k, v in st.items() if k not in past)


def test_a_drug_then_switched_to_another_is_past() -> None:
    """'placed on heparin, then converted to warfarin': the first drug was replaced (synthetic course)."""
    st = _status("COURSE: She was placed on heparin then converted to warfarin. She was seen weekly.")
    assert st["heparin"] == "past"
    assert st["warfarin"] == "current"
