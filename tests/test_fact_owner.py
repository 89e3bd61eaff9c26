"""Whose fact it is and which status it keeps: a relative's condition stays the relative's, a denial is no verdict,
a switch stops only the drug switched from."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.extract import extract
from anonpsy.graph import Assertion, Certainty, TreatmentStatus

_HPI = "HISTORY OF PRESENT ILLNESS: The patient is a 40-year-old man seen for depression. "


def test_a_denial_in_the_passive_is_no_ruled_out_diagnosis() -> None:
    """'Abuse of drugs or alcohol were denied' is the informant's denial: the use is absent, and no diagnosis of
    the patient is set aside (only the uncle had alcoholism)."""
    g = extract(_HPI + "SOCIAL HISTORY: He likes skateboarding. Abuse of drugs or alcohol were denied. "
                "FAMILY HISTORY: There is a family history of alcoholism in one of the maternal uncles.")
    assert not [d for d in g.diagnoses if "alcohol" in d.label.lower()]
    assert [f for f in g.family_history if "alcohol" in f.condition.lower()]


def test_a_verdict_in_the_passive_still_rules_out() -> None:
    g = extract(_HPI + "ASSESSMENT: Alcohol use disorder was ruled out.")
    assert [d.certainty for d in g.diagnoses if d.rule_id == "alcohol_use_disorder"] == [Certainty.ruled_out]


_RELATIVES = ["His daughter", "Her brother", "His older brother", "His mother", "Her sister", "His son"]
_USES = [("uses cannabis", "cannabis use"), ("drinks heavily", "alcohol use"), ("smokes marijuana", "cannabis use")]
_SECTIONS = ["SOCIAL HISTORY: ", "HISTORY OF PRESENT ILLNESS: ", ""]


@given(st.sampled_from(_RELATIVES), st.sampled_from(_USES), st.sampled_from(_SECTIONS))
@example("His daughter", ("uses cannabis", "cannabis use"), "SOCIAL HISTORY: ")
@example("Her brother", ("drinks heavily", "alcohol use"), "SOCIAL HISTORY: ")
def test_property_a_relative_as_subject_owns_the_use(relative: str, use: tuple[str, str], section: str) -> None:
    """A relative as the grammatical subject of a clause owns what it says: the use is never the patient's."""
    verb, headword = use
    g = extract(_HPI + f"{section}He works nights. {relative} {verb}.")
    assert headword not in {s.headword for s in g.symptoms if s.assertion != Assertion.absent}


@pytest.mark.parametrize(("text", "headword"), [
    ("SOCIAL HISTORY: His brother drinks heavily and he smokes marijuana.", "cannabis use"),
    ("SOCIAL HISTORY: Mother reports that he uses cannabis daily.", "cannabis use"),
])
def test_the_patient_as_a_new_subject_owns_the_use(text: str, headword: str) -> None:
    g = extract(_HPI + text)
    assert headword in {s.headword for s in g.symptoms if s.assertion == Assertion.present}


def test_a_relative_subject_holds_across_coordinated_predicates() -> None:
    g = extract(_HPI + "SOCIAL HISTORY: His brother drinks heavily and smokes marijuana.")
    assert not {"alcohol use", "cannabis use"} & {s.headword for s in g.symptoms}


@pytest.mark.parametrize(("text", "drug", "status"), [
    ("She switched from day shift to night shift and takes Ambien 10 mg at bedtime.", "zolpidem",
     TreatmentStatus.current),
    ("She was changed from oral Haldol to Zyprexa.", "haloperidol", TreatmentStatus.past),
    ("She was changed from oral Haldol to Zyprexa.", "olanzapine", TreatmentStatus.current),
])
def test_a_switch_stops_only_the_drug_switched_from(text: str, drug: str, status: TreatmentStatus) -> None:
    g = extract(_HPI + text)
    assert [t.status for t in g.treatments if t.name == drug] == [status]


@pytest.mark.parametrize(("text", "given"), [
    ("The patient underwent an extensive behavioral evaluation on 05/22/06 by TIR Rehab Center.", False),
    ("He was evaluated by the Northside Treatment Center last spring.", False),
    ("He completed 28 days at Hazelden Rehab Center.", True),
    ("He went to rehab last year.", True),
])
def test_an_institution_named_as_an_agent_gives_no_treatment(text: str, given: bool) -> None:
    """'an evaluation by TIR Rehab Center' names who evaluated; residential treatment was not received."""
    g = extract(_HPI + text)
    assert any(t.name == "residential treatment" for t in g.treatments) is given


def test_chronic_is_a_course_not_a_dated_time() -> None:
    """'Chronic constipation' in a problem list tells no length: no duration ('for the past three years')."""
    g = extract(_HPI + "PROBLEM LIST: 1. Chronic constipation. 2. Hypertension.")
    assert [s.duration_ids for s in g.symptoms if s.headword == "constipation"] == [[]]


@given(st.sampled_from(["following initial treatment with", "after a course of", "prior to", "before starting"]))
@example("following initial treatment with")
def test_property_a_date_of_another_event_does_not_date_the_drug(relation: str) -> None:
    """A date that a relation word puts on another event ('underwent a lobectomy on 9/16/92 following initial
    treatment with Decadron') does not date the drug the relation governs."""
    g = extract("Date of visit: 08/31/1992. HISTORY OF PRESENT ILLNESS: The patient is a 65-year-old man seen for "
                f"confusion. COURSE: He underwent right temporal lobectomy on 09/16/1992 {relation} Decadron.")
    assert [t.duration_ids for t in g.treatments if t.name == "dexamethasone"] == [[]]


_HEDGES = ["She was thought to have {dx}.", "Suspected {dx}.", "There was a question of {dx}.", "Possible {dx}."]
_CONFIRMS = ["She was subsequently diagnosed with {dx}.", "She was subsequently given this diagnosis.",
             "The diagnosis was later confirmed.", "{dx} was confirmed by testing.",
             "Later testing revealed a profile consistent with {dx}."]
_RULE_OUTS = ["{dx} was later ruled out.", "{dx} was ruled out.", "Testing ruled out {dx}."]


@given(st.sampled_from(_HEDGES), st.sampled_from(_CONFIRMS + _RULE_OUTS), st.sampled_from(["PTSD", "ADHD"]))
@example("She was thought to have {dx}.", "She was subsequently given this diagnosis.", "ADHD")
@example("Suspected {dx}.", "{dx} was later ruled out.", "PTSD")
def test_property_the_latest_decisive_statement_wins(hedge: str, verdict: str, dx: str) -> None:
    """A hedge followed by a confirmation ends confirmed, followed by a rule-out ends ruled out: the latest
    decisive statement about a diagnosis wins, whether it names the diagnosis or says 'this diagnosis'."""
    text = "HISTORY OF PRESENT ILLNESS: The patient is a 30-year-old woman. " + " ".join(
        p.format(dx=dx) for p in (hedge, verdict))
    want = Certainty.ruled_out if verdict in _RULE_OUTS else Certainty.confirmed
    assert [d.certainty for d in extract(text).diagnoses] == [want]


@pytest.mark.parametrize("condition", ["moyamoya disease", "normal pressure hydrocephalus"])
def test_a_suspected_condition_given_this_diagnosis_later_is_had(condition: str) -> None:
    """'This diagnosis' confirms a suspected medical condition as it confirms a DSM diagnosis: the condition is
    had (a past-history item), not a possible diagnosis."""
    g = extract("HISTORY OF PRESENT ILLNESS: A 31-year-old woman had confusion. The angiogram suggested "
                f"{condition}. She was subsequently given this diagnosis.")
    assert not g.diagnoses
    assert [p.condition for p in g.past_history] == [condition]


def test_the_relative_named_after_a_family_condition_owns_it() -> None:
    g = extract(_HPI + "FAMILY HISTORY: There is a family history of alcoholism in one of the maternal uncles.")
    assert [(f.member, f.condition) for f in g.family_history] == [("maternal uncles", "alcoholism")]


_FH_CLAUSES = ["Her mother is in a nursing home", "His father lives alone", "Her sister is married",
               "Her grandmother is 90"]
_FH_PRONOUNS = ["she had", "he had", "but she had", "and he had"]
_FH_CONDITIONS = ["a stroke", "diabetes", "hypertension"]


@given(st.sampled_from(_FH_CLAUSES), st.sampled_from(_FH_PRONOUNS), st.sampled_from(_FH_CONDITIONS))
@example("Her mother is in a nursing home", "she had", "a stroke")
def test_property_a_pronoun_after_a_relative_in_the_family_history_is_the_relative(
        relative: str, pronoun: str, condition: str) -> None:
    """In the family-history section a clause opened by a bare pronoun goes on about the relative before it:
    what it names is never the patient's."""
    sep = "; " if not pronoun.startswith(("but", "and")) else ", "
    g = extract("HISTORY OF PRESENT ILLNESS: A 40-year-old woman has headaches. "
                f"FAMILY HISTORY: {relative}{sep}{pronoun} {condition}.")
    cond = condition.removeprefix("a ")
    assert cond not in {p.condition for p in g.past_history}
    assert cond in {f.condition for f in g.family_history}


def test_the_patient_named_after_a_relative_in_the_family_history_owns_it() -> None:
    g = extract("HISTORY OF PRESENT ILLNESS: A 40-year-old woman has headaches. "
                "FAMILY HISTORY: Her mother is well; the patient had a stroke in 2010.")
    assert "stroke" in {p.condition for p in g.past_history}
