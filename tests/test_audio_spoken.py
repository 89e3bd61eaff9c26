"""Spoken forms to written forms, and cue rules on transcripts (pure: no audio libraries)."""

from __future__ import annotations

import pytest

pytest.importorskip("numpy", reason="needs the audio extra: pip install 'anonpsy[audio]'")
from hypothesis import example, given
from tests.strategies import spoken_digit_strings, transcripts

from anonpsy.audio.asr import Word
from anonpsy.audio.cues import default_cues
from anonpsy.audio.detect import detect_words
from anonpsy.audio.spoken import normalize


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("her phone number is two five three five five five zero one two seven",
         "her phone number is 253-555-0127"),
        ("she was born on march fourteenth nineteen eighty two", "she was born on March 14, 1982"),
        ("seen on the fourteenth of march", "seen on March 14"),
        ("lives at four twelve oak street", "lives at 412 Oak Street"),
        ("one hundred and five", "105"),
        ("two thousand nineteen", "2019"),
        ("nineteen oh five", "1905"),
        ("double five", "55"),
        ("call two five three five five to zero one two seven", "call 253-552-0127"),
        ("june twenty first two thousand twenty", "June 21, 2020"),
        ("one hundred fifty milligrams", "150 milligrams"),
        ("she is ninety three years old", "she is 93 years old"),
        ("My name is Maria Lopez.", "My name is Maria Lopez."),
        ("oh i see", "oh I see"),
        ("five five five zero one two seven", "555-0127"),
        # "oh" heard as "or" inside a digit-by-digit run; "one or two", "ten or twelve" stay words
        ("call four three or one two", "call 43012"),
        ("take one or two tablets, ten or twelve beers", "take 1 or 2 tablets, 10 or 12 beers"),
    ],
)
def test_spoken_forms_are_written_out(said: str, written: str) -> None:
    assert normalize(said.split()).text == written


@given(transcripts())
@example(["oh"])
@example(["twenty", "one", "of", "march"])
@example(["twenty", "hundred", "hundred"])
def test_normalize_keeps_every_word_mapped(words: list[str]) -> None:
    """Tokens cover every input word exactly once, in order, and their offsets index the text."""
    norm = normalize(words)
    covered = [i for t in norm.tokens for i in range(t.first, t.last + 1)]
    assert covered == list(range(len(words)))
    for t in norm.tokens:
        assert norm.text[t.start : t.end] == t.text


@given(spoken_digit_strings())
@example(("2535550127", ["two", "five", "three", "five", "five", "five", "zero", "one", "two", "seven"]))
def test_spoken_digits_keep_their_digits(case: tuple[str, list[str]]) -> None:
    digits, words = case
    text = normalize(words).text
    assert text.replace("-", "") == digits


def _words(text: str) -> list[Word]:
    return [Word(w, i * 0.3, i * 0.3 + 0.25) for i, w in enumerate(text.split())]


@pytest.mark.parametrize(
    ("text", "marked", "kind"),
    [
        ("Her sister Ravi Haddad called the clinic yesterday.", "Ravi Haddad", "PERSON"),
        ("Esperanza Abernathy is a forty two year old woman with depression.", "Esperanza Abernathy", "PERSON"),
        ("Collateral was obtained from Santiago Delacroix , her case manager.", "Santiago Delacroix", "PERSON"),
        ("my name is ah i go back and she", "ah i go back", "PERSON"),
        ("her phone number is two five three five five five zero one two seven", None, "TELEPHONE_NUMBER"),
        ("she was born on march fourteenth nineteen eighty two", "march fourteenth nineteen eighty two", "DATE"),
    ],
)
def test_transcript_identifiers_are_found(text: str, marked: str | None, kind: str) -> None:
    words = _words(text)
    _, hits = detect_words(words, default_cues())
    assert any(h.type == kind or (kind == "DATE" and h.type == "BIRTH_DATE_TIME") for h in hits), hits
    if marked is not None:
        covered = {k for h in hits for k in range(h.first, h.last + 1)}
        wanted = [i for i, w in enumerate(words) if w.text in marked.split()]
        assert set(wanted) <= covered


def test_plain_clinical_speech_is_not_marked() -> None:
    words = _words("she reports low mood and poor sleep for three weeks and takes one hundred milligrams daily")
    _, hits = detect_words(words, default_cues())
    assert hits == []
