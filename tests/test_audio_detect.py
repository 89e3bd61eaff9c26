"""Identifiers in a cased transcript: capitalised words no English dictionary lists are names."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import example, given
from tests.strategies import cased_transcripts

from anonpsy.audio.asr import Word
from anonpsy.audio.detect import proper_noun_hits

KNOWN = frozenset({"she", "reports", "low", "mood", "her", "sister", "called", "the", "clinic", "maria", "in",
                   "takes", "mr", "i", "de", "la", "croix", "and", "lives", "with", "started", "is", "a", "esther",
                   "name", "my"})


def _words(text: str) -> list[Word]:
    return [Word(w, i * 0.5, i * 0.5 + 0.4) for i, w in enumerate(text.split())]


def _marked(text: str, known: frozenset[str] = KNOWN) -> list[tuple[str, str]]:
    words = _words(text)
    return [(" ".join(w.text for w in words[h.first : h.last + 1]), h.type) for h in proper_noun_hits(words, known)]


@pytest.mark.parametrize(
    ("text", "marked"),
    [
        ("Her sister, Esther, and Zoramathan called the clinic.", [("Zoramathan", "PERSON")]),
        ("My name is Maria Okonkwo and", [("Maria Okonkwo", "PERSON")]),
        ("Her sister, Shimon de La Croix, called", [("Shimon de La Croix,", "PERSON")]),
        ("She lives with her sister in Beringham.", [("Beringham.", "LOCATION")]),
        ("Started Vraylar. Mr. Mvk called", [("Mvk", "PERSON")]),  # a brand-name drug of the safelist is not a name
        ("She takes Lexapro and Wellbutrin.", []),
        ("She reports low mood.", []),
    ],
)
def test_unknown_capitalised_words_are_names(text: str, marked: list[tuple[str, str]]) -> None:
    assert _marked(text) == marked


def test_needs_a_dictionary() -> None:
    assert _marked("Her sister Zoramathan called", frozenset()) == []


@given(cased_transcripts())
@example(["she", "zoramathan", "called"])
def test_proper_nouns_need_capitals(words: list[str]) -> None:
    lower = [w.lower() for w in words]
    assert proper_noun_hits(_words(" ".join(lower)) if lower else [], KNOWN) == []


@given(cased_transcripts())
@example(["Her", "sister,", "Zoramathan", "called", "the", "clinic."])
def test_proper_noun_hits_are_ordered_disjoint_and_hold_an_unknown_word(words: list[str]) -> None:
    ws = _words(" ".join(words)) if words else []
    hits = proper_noun_hits(ws, KNOWN)
    for a, b in itertools.pairwise(hits):
        assert a.last < b.first
    for h in hits:
        assert 0 <= h.first <= h.last < len(ws)
        span = [w.text.strip(".,;:!?\"()[]{}").lower() for w in ws[h.first : h.last + 1]]
        assert any(x.replace("'s", "") not in KNOWN for x in span)
