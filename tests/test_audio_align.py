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

from anonpsy.audio.align import _read_as, cardinal, guess_phones, number_words, spoken_alternatives, spoken_words
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


def test_numbers_in_digits_may_be_said_in_their_usual_ways() -> None:
    said = spoken_alternatives("918-920-2857.")
    assert said[0] == spoken_words("918-920-2857.")
    assert ["nine", "one", "eight", "nine", "two", "zero", "twenty", "eight", "fifty", "seven"] in said
    assert ["nine", "one", "eight", "nine", "two", "oh", "two", "eight", "five", "seven"] in said
    assert ["one", "twenty", "eight"] in spoken_alternatives("128")
    assert ["six", "oh", "four"] in spoken_alternatives("604")
    assert spoken_alternatives("Zoramathan,") == [["zoramathan"]]
    assert spoken_alternatives("...") == []


_ALTERNATIVES = st.lists(st.lists(st.lists(st.sampled_from(["one", "two", "oh", "twenty", "she"]), min_size=1,
                                           max_size=3), max_size=3, unique_by=tuple), min_size=1, max_size=6)


@given(_ALTERNATIVES, st.data())
@example([[["one"], ["one", "two"]], [["two", "oh"], ["oh"]]], None)
def test_reading_of_heard_words_takes_one_alternative_per_token(said: list[list[list[str]]], data: Any) -> None:
    """Words heard as one alternative of each token in turn (or such words cut short) read back as alternatives of
    those tokens, in order, covering every heard word once."""
    picks = [alts[0] if data is None else data.draw(st.sampled_from(alts)) for alts in said if alts]
    heard = [w for p in picks for w in p]
    cut = len(heard) if data is None else data.draw(st.integers(0, len(heard)))
    spans = _read_as(heard[:cut], said)
    assert spans is not None
    assert [w for _, a, b in spans for w in heard[a : b + 1]] == heard[:cut]
    assert [i for i, _, _ in spans] == sorted({i for i, _, _ in spans})
    for i, a, b in spans:
        if b < cut - 1 or cut == len(heard):
            assert heard[a : b + 1] in said[i]
        else:
            assert any(alt[: b + 1 - a] == heard[a : b + 1] for alt in said[i])


def test_words_heard_out_of_order_have_no_reading() -> None:
    assert _read_as(["two", "one"], [[["one"]], [["two"]]]) is None
    assert _read_as(["one", "three"], [[["one"]], [["two"]]]) is None


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


@given(st.lists(st.sampled_from(["she", "555-0127", "Zoramathan,", "9th"]), min_size=1, max_size=12),
       st.floats(0, 100), st.floats(0.1, 20), st.data())
def test_loosely_aligned_words_cover_their_alignment_and_their_share(
    tokens: list[str], start: float, length: float, data: Any
) -> None:
    """A word aligned only on the grammar of spoken alternatives is never muted over less than its share."""
    from anonpsy.audio.asr import Word, _spread, _widened

    shares = _spread(tokens, start, start + length)
    aligned = []
    for w in shares:
        a = data.draw(st.floats(start, start + length))
        aligned.append(Word(w.text, a, data.draw(st.floats(a, start + length))))
    for a, s, w in zip(aligned, shares, _widened(aligned, shares), strict=True):
        assert w.text == a.text
        assert w.start <= min(a.start, s.start) and w.end >= max(a.end, s.end)


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


def test_numbers_said_otherwise_than_written_are_still_aligned() -> None:
    """The written words do not fit ("918-920-2857" said with pairs, "128" as "one twenty eight"): the exact text
    finds no path, the grammar of spoken alternatives does, and the number lies where it was said."""
    pytest.importorskip("pocketsphinx", reason="needs the audio extra: pip install 'anonpsy[audio]'")
    from anonpsy.audio.align import Aligner

    segments = ["She can be reached at", "nine one eight, nine two zero, twenty eight fifty seven.",
                "Blood pressure was one twenty eight over eighty four."]
    signal, spans = _spoken(segments)
    tokens = ["She", "can", "be", "reached", "at", "918-920-2857.", "Blood", "pressure", "was", "128", "over", "84."]
    aligned = Aligner().align(signal, tokens)
    assert aligned is not None
    assert len(aligned) == len(tokens)
    number = next(al for al in aligned if tokens[al.index] == "918-920-2857.")
    _, a, b = spans[1]
    assert a - 0.15 <= number.start < number.end <= b + 0.15


def test_moonshine_recogniser_words_and_times() -> None:
    pytest.importorskip("moonshine_cpp", reason="needs moonshine-cpp (audio extra, Linux x86-64)")
    from anonpsy.audio.asr import MoonshineRecognizer, moonshine_runtime

    if moonshine_runtime() is None:
        pytest.skip("Moonshine cannot run here (no onnxruntime, and the moonshine-cpp build needs AVX-512)")
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
