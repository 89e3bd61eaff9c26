"""Rare proper-noun anchors (``anonpsy.perturb.anchors``), shared by the scrubber and the leak audit."""

from __future__ import annotations

import pytest

from anonpsy.perturb.anchors import find_anchors


def _anchored(text: str) -> list[str]:
    return [text[a.start:a.end] for a in find_anchors(text)]


@pytest.mark.parametrize(
    "text",
    [
        "Continue current medications.,PLAN:,  Discussed the plan with her mother.",
        "She was seen in clinic.,  Reviewed labs with the team.",
        # MTSamples glue with a space before the comma: "LABORATORY DATA: , Most recent labs"
        "Noncontributory.,LABORATORY DATA: , Serial hematocrits 42.4, and 40.4.",
        "LABORATORY STUDIES: , Patient's H&H is 13 and 38.7.",
    ],
)
def test_a_word_after_a_comma_glued_header_opens_a_sentence(text: str) -> None:
    assert _anchored(text) == []


def test_a_rare_capitalised_word_after_a_plain_comma_is_still_an_anchor() -> None:
    assert _anchored("She moved back home, Riverton being too far from work.") == ["Riverton"]


def test_a_condition_eponym_is_no_anchor() -> None:
    """A medical condition named by an eponym ("Graves disease") is clinical vocabulary, not a rare proper noun
    of the case; a place after it still is."""
    from anonpsy.perturb.anchors import find_anchors

    text = "She has a history of Graves disease and lives near Pacific Lutheran."
    found = [text[a.start:a.end] for a in find_anchors(text)]
    assert "Graves" not in found and "Pacific Lutheran" in found, found


@pytest.mark.parametrize("text", ["Clogged AV shunt.", "Worsening PTSD symptoms were reported.",
                                  "He was seen.  Persistent SI over the weekend."])
def test_a_sentence_opening_word_before_a_clinical_abbreviation_is_no_anchor(text: str) -> None:
    """The opening word of a sentence is capitalised for the sentence: with a clinical abbreviation after it, the
    run holds one ordinary word, not a two-word proper noun (MTSamples, CC0: "Clogged AV shunt" had been told as
    "a specific place shunt")."""
    assert _anchored(text) == []


def test_a_sentence_opening_place_name_before_an_abbreviation_is_still_judged_by_its_rest() -> None:
    """Boundary: a second word that is no clinical word keeps the whole run a candidate."""
    assert _anchored("Lake Tahoe ED visit in the spring.") == ["Lake Tahoe ED"]
