"""Finding words that a brain site names as a cerebral condition (``sited`` in ``rules/lexicon/conditions.yaml``).

A bare "infarct", "ischemia", "contusion" or "hemorrhage" may be any organ's; written with a brain site in the same
clause ("left frontal infarct", "ischemia in the right MCA territory") it is the brain's condition, kept like a
named one. A study's negative finding of one is no denial of a history, and an event the presentation's work-up
found is the patient's now, not past medical history.
"""

from __future__ import annotations

import pytest

from anonpsy import lexicon
from anonpsy.extract import extract
from anonpsy.graph import HistoryStatus


def _ids(text: str) -> list[str]:
    return [m.id for m in lexicon.find_terms(text, "condition")]


@pytest.mark.parametrize(("text", "want"), [
    ("MRI showed a left frontal infarct.", ["stroke"]),
    ("A cerebellar infarct was seen.", ["stroke"]),
    ("There was an acute ischemic event in the right MCA territory.", ["cerebral_ischemia"]),
    ("Abnormal signal within the right basal ganglia consistent with ischemia.", ["cerebral_ischemia"]),
    ("Abnormal signal in the right frontal lobe consistent with contusion.", ["cerebral_contusion"]),
    ("A hemorrhage in the left temporal lobe.", ["intraparenchymal_hemorrhage"]),
    ("An old lacunar infarct in the right basal ganglia.", ["stroke"]),
])
def test_a_brain_site_names_the_cerebral_condition(text: str, want: list[str]) -> None:
    assert _ids(text) == want


@pytest.mark.parametrize("text", [
    "CT showed a renal infarct.",
    "Stress test showed anterior wall ischemia.",
    "He had a contusion of the left knee.",
    "The right frontal lobe was normal, with an infarct of the spleen.",
    "There was no evidence of infarct.",
])
def test_without_a_brain_site_in_the_clause_nothing_is_named(text: str) -> None:
    assert _ids(text) == []


def test_a_sited_word_is_named_by_its_condition() -> None:
    from anonpsy.extract.assembly.nodes import condition_name

    text = "MRI showed a left frontal infarct and ischemia of the right caudate."
    names = [condition_name(m, text) for m in lexicon.find_terms(text, "condition")]
    assert names == ["left frontal infarct (stroke)", "ischemia of the right caudate (cerebral ischemia)"]


def test_a_site_written_before_a_condition_is_kept_in_its_name() -> None:
    from anonpsy.extract.assembly.nodes import condition_name

    text = "MRI revealed a right cerebellar hemangioma and a small right frontal SDH."
    names = [condition_name(m, text) for m in lexicon.find_terms(text, "condition")]
    assert names == ["right cerebellar hemangioma", "small right frontal subdural hematoma"]


NOTE = """CHIEF COMPLAINT: Confusion.
HISTORY OF PRESENT ILLNESS: The patient is a 58-year-old man who became confused two days ago. MRI of the brain
revealed a left frontal infarct. There was no hemorrhage in the right temporal lobe.
PAST MEDICAL HISTORY: Hypertension.
"""


def test_a_found_infarct_is_current_and_a_negative_finding_is_no_denial() -> None:
    g = extract(NOTE, case_id="t")
    by_name = {p.condition: p.status for p in g.past_history}
    assert by_name.get("left frontal infarct (stroke)") == HistoryStatus.active
    assert not any("hemorrhage" in p.condition for p in g.past_history)


def test_a_current_event_is_no_past_medical_history() -> None:
    from anonpsy.pipeline import deid_text

    out = deid_text(NOTE, seed=0, case_id="t").text
    assert "Current medical problems include left frontal infarct (stroke)" in out
    assert "past medical history includes infarct" not in out.lower()


def test_a_negated_qualifier_stays_in_the_name() -> None:
    from anonpsy.extract.assembly.nodes import condition_name

    # "shunted hydrocephalus" alone would tell a shunt the patient does not have
    text = "29 y/o male with cerebral palsy, non-shunted hydrocephalus."
    names = [condition_name(m, text) for m in lexicon.find_terms(text, "condition")]
    assert names == ["cerebral palsy", "non-shunted hydrocephalus"]


def _past_names(text: str) -> dict[str, str]:
    return {p.id: p.condition for p in extract(text).past_history}


def test_two_findings_of_one_entry_at_different_sites_keep_their_own_names() -> None:
    text = ("IMPRESSION:\n1. An old tiny lacunar infarct of the left pons.\n"
            "2. An old moderate-sized infarct of the superior portion of the right cerebellar hemisphere.")
    assert _past_names(text) == {
        "ph_stroke": "old tiny lacunar infarct of the left pons (stroke)",
        "ph_stroke_2": "old moderate-sized infarct of the right cerebellar hemisphere (stroke)"}


def test_a_finding_named_again_with_more_of_its_site_is_the_same_finding() -> None:
    text = ("IMPRESSION:\n1. Lacunar infarct.\n2. Lacunar infarct of the right thalamus.\n"
            "3. Old infarct in the right thalamic region.")
    assert list(_past_names(text)) == ["ph_stroke"]


def test_another_name_of_the_condition_names_no_further_finding() -> None:
    text = "HISTORY: CVA in 2010.\nIMPRESSION: Old left frontal infarct. Old left frontal lobe infarct."
    assert list(_past_names(text)) == ["ph_stroke"]


def test_a_site_written_after_a_finding_is_kept_in_its_name() -> None:
    from anonpsy.extract.assembly.nodes import condition_name

    text = "There is an old infarct involving the left cerebellar hemisphere, and a renal infarct."
    names = [condition_name(m, text) for m in lexicon.find_terms(text, "condition")]
    assert names == ["old infarct of the left cerebellar hemisphere (stroke)"]


def test_sites_joined_after_a_finding_are_one_finding() -> None:
    text = ("FINDINGS: There is moderate spasm of the left internal carotid artery and moderately severe spasm of "
            "the left A1.\nIMPRESSION: Moderately severe spasm of the internal carotid artery and left A1.")
    assert _past_names(text) == {"ph_cerebral_vasospasm": (
        "moderately severe spasm of the internal carotid artery and left A1 (cerebral vasospasm)")}
