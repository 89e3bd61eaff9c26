"""Forced alignment of a written transcript (PocketSphinx), the words a token is said as, and the Moonshine
recogniser built on both.

The alignment and recogniser tests speak segments with espeak-ng, so each word's true time span is known.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

pytest.importorskip("numpy", reason="needs the audio extra: pip install 'anonpsy[audio]'")
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tests.strategies import written_tokens

from anonpsy.audio.align import cardinal, guess_phones, number_words, spoken_words
from anonpsy.audio.spoken import normalize


@pytest.mark.parametrize(
    ("token", "said"),
    [
        ("9th,", ["ninth"]),
        ("21st", ["twenty", "first"]),
        ("1974.", ["nineteen", "seventy", "four"]),
        ("1905", ["nineteen", "oh", "five"]),
        ("2005", ["two", "thousand", "five"]),
        ("555-0127", ["five", "five", "five", "zero", "one", "two", "seven"]),
        ("(253)", ["two", "hundred", "fifty", "three"]),
        ("42-year-old", ["forty", "two", "year", "old"]),
        ("Dr.", ["doctor"]),
        ("Mr.", ["mister"]),
        ("ninety-three", ["ninety", "three"]),
        ("O'Brien's", ["o'brien's"]),
        ("...", []),
    ],
)
def test_tokens_are_said_as_dictionary_words(token: str, said: list[str]) -> None:
    assert spoken_words(token) == said


@given(written_tokens())
@example("--")
@example("0000000")
def test_spoken_words_are_plain_lower_case_words(token: str) -> None:
    for w in spoken_words(token):
        assert w and w == w.lower()
        assert all(ch.isalpha() or ch == "'" for ch in w), w


@given(st.integers(min_value=0, max_value=999_999))
@example(100)
@example(1000)
@example(2005)
def test_cardinal_words_read_back_as_their_number(n: int) -> None:
    assert normalize(cardinal(n)).text == str(n)


def test_digit_strings_are_said_digit_by_digit_unless_short_or_a_year() -> None:
    assert number_words("0127") == ["zero", "one", "two", "seven"]
    assert number_words("1982") == ["nineteen", "eighty", "two"]
    assert number_words("15") == ["fifteen"]


def test_guessed_pronunciation_uses_dictionary_pieces_then_letters() -> None:
    lexicon = {"ram": "R AE M", "nathan": "N EY TH AH N"}
    assert guess_phones("Ramnathan", lexicon.get) == "R AE M N EY TH AH N"
    assert guess_phones("Xq", lexicon.get) == "K S K"
    assert guess_phones("--", lexicon.get) == "AH"


@given(st.lists(st.sampled_from(["she", "555-0127", "Zoramathan,", ".", "9th"]), min_size=1, max_size=12),
       st.floats(0, 100), st.floats(0.1, 20))
def test_unaligned_words_cover_their_own_share(tokens: list[str], start: float, length: float) -> None:
    from anonpsy.audio.asr import _spread

    end = start + length
    words = _spread(tokens, start, end)
    sayable = [t for t in tokens if spoken_words(t)]
    assert [w.text for w in words] == sayable
    assert all(start - 1e-3 <= w.start <= w.end <= end + 1e-3 for w in words)
    if words:
        assert words[0].start == pytest.approx(start, abs=1e-3)
        assert words[-1].end == pytest.approx(end, abs=1e-3)
    for a, b in itertools.pairwise(words):
        assert b.start <= a.end  # neighbours overlap: the true position is unknown


# ------------------------------------------------------------------------------------------- with real speech


def _spoken(segments: list[str], voice: str = "en-us", speed: int = 160) -> tuple[Any, list[tuple[str, float, float]]]:
    """Segments spoken one by one and joined with digital silence (exact zeros) and their true spans."""
    np = pytest.importorskip("numpy")
    from anonpsy.audio.signal import resample
    from anonpsy.testing.dictation import RATE, Segment, espeak_available, synthesize

    if not espeak_available():
        pytest.skip("needs espeak-ng (apt-get install espeak-ng)")
    d = synthesize([[Segment(s) for s in segments]], voice, speed, 50, seed=3)
    signal = resample(d.samples.astype(np.float32) / 32768.0, RATE)
    spans = [(seg.text, a / RATE, b / RATE) for seg, a, b in d.segments]
    return signal, spans


def test_alignment_places_each_token_inside_its_spoken_segment() -> None:
    pytest.importorskip("pocketsphinx", reason="needs the audio extra: pip install 'anonpsy[audio]'")
    from anonpsy.audio.align import Aligner

    segments = ["Her phone number is", "555-0127.", "She was born on", "March 14th, 1982.", "Doctor", "Okonkwo"]
    signal, spans = _spoken(segments)
    tokens = " ".join(segments).split()
    aligned = Aligner().align(signal, tokens)
    assert aligned is not None
    assert len(aligned) == len(tokens)
    owner = [k for k, s in enumerate(segments) for _ in s.split()]
    for al in aligned:
        _, a, b = spans[owner[al.index]]
        assert a - 0.15 <= al.start < al.end <= b + 0.15, (tokens[al.index], al, (a, b))


def test_moonshine_recogniser_words_and_times() -> None:
    pytest.importorskip("moonshine_cpp", reason="needs moonshine-cpp (audio extra, Linux x86-64)")
    from anonpsy.audio.asr import MoonshineRecognizer, moonshine_runs

    if not moonshine_runs():
        pytest.skip("moonshine-cpp is installed but cannot run on this CPU (its build needs AVX-512)")
    from anonpsy.audio.vad import voiced_regions

    segments = ["She reports low mood and poor sleep.", "Her phone number is", "five five five, zero one two seven."]
    signal, spans = _spoken(segments)
    rec = MoonshineRecognizer()
    words = rec.transcribe(signal, voiced_regions(signal))
    said = normalize([w.text for w in words]).text.lower()
    assert "low mood" in said and "555-0127" in said
    assert rec.unaligned == 0
    number = [w for w in words if any(ch.isdigit() for ch in w.text) or w.text.strip(".,") in
              ("five", "zero", "one", "two", "seven")]
    _, a, b = spans[2]
    assert number and all(a - 0.2 <= w.start and w.end <= b + 0.2 for w in number)  # within the default margin
    assert all(x.start <= y.start for x, y in itertools.pairwise(words))


@settings(deadline=None)
@given(st.sampled_from(["en-us", "en-gb-x-rp", "en+f5"]))
def test_alignment_survives_digital_silence(voice: str) -> None:
    pytest.importorskip("pocketsphinx", reason="needs the audio extra: pip install 'anonpsy[audio]'")
    from anonpsy.audio.align import Aligner

    segments = ["Her husband", "brought her to the emergency department."]
    signal, _ = _spoken(segments, voice=voice)
    assert Aligner().align(signal, " ".join(segments).split()) is not None
