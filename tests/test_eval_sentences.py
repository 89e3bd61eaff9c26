"""The fidelity scorer's sentence splitter on clinical text: glued capital headers, abbreviations, decimals,
initials, list markers, questions and their answers."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from anonpsy.evaluate.cues import section_kind
from anonpsy.evaluate.sentences import split_sentences


def _texts(text: str) -> list[str]:
    return [s.text for s in split_sentences(text)]


def test_glued_headers_become_segments_and_sections() -> None:
    text = "REFERRAL QUESTIONS:,  Rule out ADHD.  The plan is testing.,FAMILY HISTORY:,  Mother had depression."
    sents = split_sentences(text)
    assert [s.text for s in sents] == ["REFERRAL QUESTIONS:", "Rule out ADHD.", "The plan is testing.",
                                       "FAMILY HISTORY:", "Mother had depression."]
    assert [s.header for s in sents] == [True, False, False, True, False]
    assert sents[-1].section == "FAMILY HISTORY" and section_kind(sents[-1].section) == "family"
    assert section_kind("PAST PSYCHIATRIC HISTORY") == "past" and section_kind("PAST AND PRESENT DRUG USE") is None


def test_a_header_with_a_comma_glued_before_its_colon_is_a_header() -> None:
    text = "ALLERGIES: , Penicillin.,She lives alone.,MEDICATIONS,:  Aspirin 81 mg daily, multivitamin daily."
    sents = split_sentences(text)
    assert [s.header for s in sents] == [True, False, False, True, False]
    assert sents[-1].section == "MEDICATIONS" and section_kind(sents[-1].section) is None


def test_abbreviations_decimals_initials_do_not_split() -> None:
    text = ("Dr. B put her on Seroquel 25 mg b.i.d. for sleep. INR was 8.8 today. Mr. Smith left at 3 p.m. "
            "Then he slept.")
    assert _texts(text) == ["Dr. B put her on Seroquel 25 mg b.i.d. for sleep.", "INR was 8.8 today.",
                            "Mr. Smith left at 3 p.m.", "Then he slept."]


def test_list_markers_stay_with_their_item_and_lines_split() -> None:
    text = "DIAGNOSES:\n1. Seasonal depressive disorder. 2. Restless legs syndrome.\nPlan follows"
    assert _texts(text) == ["DIAGNOSES:", "1. Seasonal depressive disorder.", "2. Restless legs syndrome.",
                            "Plan follows"]


def test_questions_are_marked_and_answers_split_off() -> None:
    text = 'Have you used any recently?  None.  Are you on any medication - "Yes, I am on folic acid."'
    sents = split_sentences(text)
    assert [(s.text, s.question) for s in sents] == [
        ("Have you used any recently?", True), ("None.", False), ("Are you on any medication", True),
        ('Yes, I am on folic acid."', False)]


@given(st.text(alphabet=st.sampled_from("ab .?!,:\nAB1"), max_size=80))
def test_sentences_are_ordered_disjoint_spans_of_the_text(text: str) -> None:
    sents = split_sentences(text)
    last = 0
    for i, s in enumerate(sents):
        assert s.index == i and last <= s.start < s.end <= len(text) and text[s.start:s.end] == s.text
        last = s.end
