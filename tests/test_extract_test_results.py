"""A test's result, a prevention and a consideration are not the facts they name: a drug screen's substances are
no use, a test for a disease is not the disease, a plan that only considers a drug the patient
takes does not make it a drug to start, and a plan topic stands as a diagnosis only with the note behind it."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.extract import extract
from anonpsy.generate.plain import denial_kind, denied_history
from anonpsy.generate.words import Voice
from anonpsy.graph import Evidence, HistoryStatus, PastHistory, Sex, TreatmentStatus

_SUBSTANCES = ("cocaine", "marijuana", "opiates", "amphetamines", "benzodiazepines", "methadone", "morphine")
_SCREENS = ("Urine drug screen", "Tox screen", "UDS", "Urine toxicology screen")


@given(screen=st.sampled_from(_SCREENS), verdict=st.sampled_from(("positive", "negative")),
       found=st.lists(st.sampled_from(_SUBSTANCES), min_size=1, max_size=3, unique=True))
@example(screen="Urine drug screen", verdict="positive", found=["methadone", "morphine"])
def test_screened_substances_are_no_use_and_no_drug_taken(screen: str, verdict: str, found: list[str]) -> None:
    """Property: the substances a drug screen lists make no symptom (use or denied use); a drug of the list is
    still read as a drug (a positive screen for a prescribed opioid shows the drug is taken)."""
    items = found[0] if len(found) == 1 else f"{', '.join(found[:-1])} and {found[-1]}"
    g = extract(f"HISTORY OF PRESENT ILLNESS: He came in confused. {screen} was {verdict} for {items}.", case_id="s")
    assert not [s for s in g.symptoms if s.headword.endswith(" use")]
    heads = {s.headword for s in g.symptoms}
    assert ("positive drug screen" in heads) == (verdict == "positive")


def test_use_told_beside_a_screen_stays_a_use() -> None:
    g = extract("HISTORY OF PRESENT ILLNESS: Urine drug screen was negative for cocaine. He smokes marijuana daily.",
                case_id="s")
    assert {s.headword for s in g.symptoms if s.asserted} == {"cannabis use"}


@pytest.mark.parametrize("text", [
    "HISTORY OF PRESENT ILLNESS: HIV testing was negative.",
    "HISTORY OF PRESENT ILLNESS: She had HIV testing last year.",
    "PLAN: We will send HIV testing and a hepatitis panel.",
    "HISTORY OF PRESENT ILLNESS: HIV, ANA, TSH and B12 studies were unremarkable.",
    "PLAN: DVT prophylaxis with compression stockings.",
])
def test_a_test_for_a_disease_is_not_the_disease(text: str) -> None:
    g = extract(text, case_id="t")
    assert not g.past_history and not g.diagnoses


@pytest.mark.parametrize("text", [
    "PAST MEDICAL HISTORY: HIV, diabetes, hypertension.",
    "HISTORY OF PRESENT ILLNESS: He has HIV, which was diagnosed in 2001, and diabetes.",
])
def test_the_disease_itself_stays(text: str) -> None:
    assert "hiv infection" in {p.condition for p in extract(text, case_id="t").past_history}


@pytest.mark.parametrize(("text", "status"), [
    ("HISTORY OF PRESENT ILLNESS: He is on sertraline 50 mg daily.\nPLAN:\n1. Consider sertraline increase.",
     TreatmentStatus.current),
    ("HISTORY OF PRESENT ILLNESS: He is on sertraline 50 mg daily.\nPLAN:\n1. Consider sertraline.",
     TreatmentStatus.current),
    ("HISTORY OF PRESENT ILLNESS: He is anxious.\nPLAN:\n1. Consider sertraline.", TreatmentStatus.planned),
])
def test_a_drug_considered_again_keeps_its_status(text: str, status: TreatmentStatus) -> None:
    """'Consider X' after 'is on X' speaks of a drug taken now; alone it is a drug only planned."""
    (t,) = extract(text, case_id="c").treatments
    assert t.status == status


@pytest.mark.parametrize(("text", "expected"), [
    ("SOCIAL HISTORY: Smokes one pack per day.\nPLAN:\n1. Hypertension.\n2. Tobacco abuse.", {"Tobacco Use Disorder"}),
    ("SOCIAL HISTORY: Denies smoking.\nPLAN:\n1. Hypertension.\n2. Tobacco abuse.", set()),
    ("PLAN:\n1. Tobacco abuse.\n2. Follow up.", set()),
])
def test_a_plan_topic_stands_when_the_note_documents_it(text: str, expected: set[str]) -> None:
    assert {d.label for d in extract(text, case_id="p").diagnoses} == expected


def _denied(section: str, rule: str, text: str | None = None) -> PastHistory:
    return PastHistory(id="ph_x", condition="pneumonia", status=HistoryStatus.denied,
                       status_evidence=Evidence(start=0, end=1, section=section, rule_id=rule), evidence_text=text)


@pytest.mark.parametrize(("section", "rule", "kind", "words"), [
    ("exam", "context.neg.no_evidence", "found", "There was no evidence of pneumonia."),
    ("labs", "context.neg.no", "found", "There was no evidence of pneumonia."),
    ("ros", "context.neg.denies", "denied", "He denied pneumonia."),
    ("past_medical", "context.neg.no", "history", "He had no history of pneumonia."),
    ("hpi", "context.neg.no_history_of", "history", "He had no history of pneumonia."),
    ("assessment", "context.neg.no", "found", "There was no evidence of pneumonia."),
])
def test_a_denial_is_told_as_the_note_made_it(section: str, rule: str, kind: str, words: str) -> None:
    """A negative of the examination or of this visit's review is no absent history."""
    text = "I do not see evidence of pneumonia." if section == "assessment" else None
    p = _denied(section, rule, text)
    assert denial_kind(p) == kind
    assert denied_history([p], ["pneumonia"], Voice(Sex.male, 40)) == words
