"""The shared tokenisation pass and the case-insensitive recognizers built on it.

Texts here are synthetic look-alikes of ICU nursing lines written for these tests.
"""

from __future__ import annotations

import itertools
import re

from hypothesis import example, given
from tests.strategies import note_texts

from anonpsy.phi.analyzer import Analyzer, analyze
from anonpsy.phi.tokens import TextView, core_span, fold, spaced_key


@given(note_texts())
@example("İstanbul DR ŞAHIN")  # a character whose lower case is longer
def test_tokens_keep_offsets(text: str) -> None:
    view = TextView(text)
    assert len(view.folded) == len(text)
    assert len(view.spaced) == len(text) + 2
    for s, e, w in zip(view.starts, view.ends, view.words, strict=True):
        assert view.folded[s:e] == w and 0 <= s < e <= len(text)


@given(note_texts())
@example("O'Brien's mood\t—\n(low), 20_mg; x-ray é")
@example("plain ASCII: a-b_c 'd' [e] {f} ~g")
def test_spaced_blanks_what_the_nonword_pattern_matches(text: str) -> None:
    """Property: the spaced copy blanks exactly the characters ``[^\\w']`` matches, ASCII text or not."""
    assert TextView(text).spaced == " " + re.sub(r"[^\w']", " ", fold(text)) + " "


@given(note_texts())
@example("Kelvin \u212a, long \u017f, İstanbul")  # letters outside ASCII whose case maps to ASCII ones
def test_letter_case_counts_the_ascii_letters_of_each_case(text: str) -> None:
    assert TextView(text).letter_case == (len(re.findall("[A-Z]", text)), len(re.findall("[a-z]", text)))


@given(note_texts())
@example("DR ORLOWSKI AND BRANNIGAN 7/22")
def test_spans_stay_inside_the_text_and_disjoint(text: str) -> None:
    spans = analyze(text)
    for a, b in itertools.pairwise(spans):
        assert a.end <= b.start
    assert all(0 <= s.start < s.end <= len(text) for s in spans)


def test_spaced_keys_find_whole_words_only() -> None:
    view = TextView("Sent to ST. MARY'S; stmary no.")
    key = spaced_key("st. mary's")
    at = view.spaced.find(key)
    assert at >= 0
    assert core_span(at + len(key) - 1, key) == (8, 18)
    assert view.spaced.find(spaced_key("mary")) == -1 or "stmary" not in key


def test_fold_keeps_length_and_apostrophes() -> None:
    assert fold("O’ROURKE") == "o'rourke"
    assert len(fold("İ")) == 1


def _found(text: str) -> set[tuple[str, str]]:
    return {(text[s.start : s.end], s.type) for s in analyze(text)}


def test_the_same_note_in_capitals_and_lower_case() -> None:
    """Cue-based names, dates, institutions and pagers do not depend on case."""
    base = "Seen by Dr Orlowski 7/22, transferred from Westbrook Hospital, pager 40417."
    for text in (base, base.upper(), base.lower()):
        got = {(v.lower(), t) for v, t in _found(text)}
        assert ("orlowski", "PERSON") in got, text
        assert ("7/22", "DATE") in got, text
        assert ("westbrook hospital", "ORGANIZATION") in got, text
        assert ("40417", "TELEPHONE_NUMBER") in got, text


def test_clinical_shorthand_is_left_alone() -> None:
    text = "PMH: CAD, S/P CABG, PTCA. DDD PACER. NIDDM. BUN 54, CR 2.8. ON PSV 10/5, D5 1/2 NS. NEO WEANED."
    assert analyze(text) == []


def test_relatives_and_clinicians_by_cue() -> None:
    text = "SOCIAL: HUSBAND JOHN AND DAUGHTER ROSALIND IN TO VISIT. DR. L. KOWALCZYK AWARE. HELENA MARCHETTI, RN"
    got = {v for v, t in _found(text) if t == "PERSON"}
    assert {"JOHN", "ROSALIND", "L. KOWALCZYK", "HELENA MARCHETTI"} <= got


def test_years_and_ages_over_89() -> None:
    got = _found("PMH: MI '91, CABG 1994, CVA 86'. 93 YO FEMALE.")
    assert {("91", "DATE"), ("1994", "DATE"), ("86", "DATE"), ("93", "AGE")} <= got


def test_analyzer_is_built_once_per_rules_directory() -> None:
    assert Analyzer.default() is Analyzer.default()


def test_a_capital_is_a_signal_only_where_the_text_uses_case_or_is_almost_all_lower_case() -> None:
    lower = "pt resting, psych doctor Brennan phoned, family aware of plan, will continue to monitor overnight closely"
    caps = lower.upper()
    mixed = "Pt resting. Psych doctor Brennan phoned. Family aware of plan."
    for text, expected in ((lower, True), (caps, False), (mixed, True)):
        view = TextView(text)
        i = view.words.index("brennan")
        assert view.capitalised_at(view.starts[i]) is expected, text
    assert TextView(lower).uncased and TextView(lower).lower_case
    assert TextView(caps).uncased and not TextView(caps).lower_case
    view = TextView(lower)
    assert not view.capitalised_at(view.starts[view.words.index("family")])


def test_an_initial_glued_to_the_word_before_joins_the_name() -> None:
    text = "DR ORLOWSKI IN AM. GIVEN SUCRALFATE-T. ORLOWSKI AWARE. PULSES: R. FOOT COOL."
    got = {v for v, t in _found(text) if t == "PERSON"}
    assert "T. ORLOWSKI" in got
    assert not any("FOOT" in v for v in got)


def test_an_initial_before_a_capitalised_surname_that_is_also_a_word() -> None:
    text = "Sats 88% on 4L. J. Brown PA in to evaluate. R. Foot cool, L. Hand warm."
    got = {v for v, t in _found(text) if t == "PERSON"}
    assert got == {"J. Brown"}
