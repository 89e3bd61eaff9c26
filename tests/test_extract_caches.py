"""Caches of extraction keyed by sentence text give what the uncached computation gives."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.extract.assembly.accumulator import slug
from anonpsy.extract.assembly.relations import _CAUSAL, _causal_cue
from anonpsy.extract.assertion.context import classify
from anonpsy.extract.assertion.scope import _ASIDE, classify_in_sentence
from anonpsy.extract.mentions.symptoms import _quote_blanked
from anonpsy.extract.sections import _HARD_BREAK, clause_bounds

_WORDS = st.sampled_from(["He", "she", "denies", "low", "mood", "but", "however", "though", "yet", "whereas",
                          "although", ";", ".", ":", ",", "p.o.", "e.g.", "Dr.", "sleep", "3", "weeks", "\n", "  ",
                          "due to", "secondary", "to", "after starting", "withdrawal from"])
sentences_ = st.lists(_WORDS, max_size=20).map(" ".join)


def _clause_bounds_uncached(sentence: str, pos: int) -> tuple[int, int]:
    start, end = 0, len(sentence)
    for m in _HARD_BREAK.finditer(sentence):
        if m.end() <= pos:
            start = m.end()
        elif m.start() >= pos:
            end = m.start()
            break
    return start, end


@given(sentences_, st.integers(0, 200))
@example("He sleeps; but she does not.", 12)
def test_clause_bounds_cached_equals_uncached(sentence: str, pos: int) -> None:
    """Property (cache is transparent): the clause around a position, from the cached breaks of the sentence, is
    the clause a fresh search of the breaks finds, asked once or again."""
    pos = min(pos, len(sentence))
    expected = _clause_bounds_uncached(sentence, pos)
    assert clause_bounds(sentence, pos) == expected
    assert clause_bounds(sentence, pos) == expected


@given(st.text(st.sampled_from("aAzZ09 -_/.éÉ"), max_size=60))
@example("Major Depressive Disorder")
def test_slug_cached_equals_uncached(s: str) -> None:
    """Property (cache is transparent): a node id slug is the same computed afresh or remembered."""
    expected = re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")[:40] or "x"
    assert slug(s) == expected
    assert slug(s) == expected


@given(sentences_)
@example("Stress due to job loss.")
def test_causal_cue_cached_equals_search(sentence: str) -> None:
    """Property (cache is transparent): the remembered causal cue of a sentence is where a fresh search finds it."""
    m = _CAUSAL.search(sentence)
    assert _causal_cue(sentence) == (None if m is None else m.span())
    assert _causal_cue(sentence) == (None if m is None else m.span())


_ASIDE_WORDS = st.sampled_from(["He", "denies", "SI", "(denied)", "(", ")", '"', "\u201c", "\u201d", "'", "low",
                                "mood", "no", "not", "history", "of", "depression", ",", "."])


@given(st.lists(_ASIDE_WORDS, min_size=1, max_size=16).map(" ".join), st.data())
@example('He denies SI (denied) low mood.', None)
def test_classify_in_sentence_skips_only_sentences_without_asides(sentence: str, data: st.DataObject | None) -> None:
    """Property (shortcut is transparent): a sentence with no bracket and no quotation mark is classified as the
    aside-blanked sentence is, and the quotation marks a symptom search blanks are only ever those marks."""
    start = 0 if data is None else data.draw(st.integers(0, len(sentence) - 1))
    end = len(sentence) if data is None else data.draw(st.integers(start + 1, len(sentence)))
    blanked = _ASIDE.sub(lambda m: " " * len(m.group(0)) if not (m.start() <= start and end <= m.end()) else m.group(0),
                         sentence)
    if "(" not in sentence and '"' not in sentence and "\u201c" not in sentence:
        assert _ASIDE.search(sentence) is None  # the lemma the shortcut rests on
    if blanked == sentence:
        assert classify_in_sentence(sentence, start, end, "symptom") == classify(sentence, start, end, "symptom")
    assert _quote_blanked(sentence) == re.sub(r"[\"“”]", " ", sentence)


_MED_WORDS = st.sampled_from(["He", "takes", "sertraline", "Zoloft", "lithium", "haloperidol", "decanoate", "50",
                              "mg", "IM", "every", "4", "weeks", "p.o.", "b.i.d.", "daily", "at", "bedtime", "of",
                              "100", "and", "quetiapine", ",", ".", ";", "was", "stopped", "prn"])


@given(st.lists(_MED_WORDS, min_size=1, max_size=18).map(" ".join))
@example("haloperidol decanoate 50 mg IM every 4 weeks")
@example("100 mg of sertraline daily and lithium 300 mg p.o. b.i.d.")
def test_parse_medication_memoised_equals_unmemoised(sentence: str) -> None:
    """Property (memo is transparent): the dose, route and frequency remembered for a medication mention are what
    reading the sentence afresh gives, asked once or again."""
    from anonpsy.lexicon import _parse_medication, find_terms, parse_medication

    for match in find_terms(sentence, "medication"):
        expected = _parse_medication.__wrapped__(sentence, match)
        assert parse_medication(sentence, match) == expected
        assert parse_medication(sentence, match) == expected


@given(sentences_, st.integers(0, 200))
@example("He has felt low for the past 3 weeks; she sleeps.", 30)
def test_governing_time_without_times_is_none(sentence: str, pos: int) -> None:
    """Property (shortcut is transparent): with no time mentions no mention has a governing time (what the full
    search over an empty list gives), and with the sentence's own mentions the time chosen is one of them."""
    from anonpsy.extract.mentions.time import governing_time, time_mentions

    pos = min(pos, max(0, len(sentence) - 1))
    span = (pos, min(len(sentence), pos + 1))
    assert governing_time(sentence, span, []) is None
    times = time_mentions(sentence, age=40, visit=None)
    got = governing_time(sentence, span, times)
    assert got is None or got in times


_KIN_WORDS = st.sampled_from(["His", "her", "mother", "Mother", "daughter", "brother", "uses", "drinks", "reports",
                              "that", "he", "she", "they", "and", "but", ";", ",", ".", "patient", "cannabis",
                              "was", "not", "able", "to", "tell", "me", "heavily", "also", "smokes", "depression"])


def _relative_subject_uncached(text: str, start: int, sex: object) -> str | None:
    """:func:`relative_subject` as it reads a sentence with fresh scans of its relatives and its triggers."""
    from anonpsy.extract.assertion.context import default_engine
    from anonpsy.extract.assertion.scope import _KIN_SUBJECT, _NEW_SUBJECT, _SUBJECT_PRONOUN
    from anonpsy.graph import Sex

    last = None
    for m in _KIN_SUBJECT.finditer(text):
        if m.end() > start:
            break
        last = m
    if last is None:
        return None
    kin = last.start(1)
    if any(t.rule.category == "pseudo" and t.start <= kin < t.end for t in default_engine()._scan(text, None)):
        return None
    between = text[last.end():start]
    if _NEW_SUBJECT.search(between):
        return None
    for p in _SUBJECT_PRONOUN.finditer(between):
        word = p.group(1).lower()
        if sex not in (Sex.female, Sex.male) or word == "they" or word == ("she" if sex == Sex.female else "he"):
            return None
    return re.sub(r"\s+", " ", last.group(1).lower())


@given(st.lists(_KIN_WORDS, min_size=1, max_size=18).map(" ".join), st.integers(0, 200),
       st.sampled_from(["female", "male", None]))
@example("His daughter uses cannabis and smokes.", 30, "male")
@example("Mother reports that she drinks heavily.", 30, "female")
@example("Her  brother\ndrinks heavily; mother was not able to tell me.", 22, None)
def test_relative_subject_scan_per_sentence_equals_fresh_scan(text: str, start: int, sex: str | None) -> None:
    """Property (cache is transparent): the relative who is the subject of a concept, read from the one remembered
    scan of the sentence's relatives and triggers, is the one fresh scans find, asked once or again."""
    from anonpsy.extract.assertion.scope import relative_subject
    from anonpsy.extract.sections import Sentence
    from anonpsy.graph import Sex

    start = min(start, len(text))
    sx = None if sex is None else Sex(sex)
    s = Sentence(start=0, end=len(text), text=text, section="hpi", index=0)
    expected = _relative_subject_uncached(text, start, sx)
    assert relative_subject(s, start, sx) == expected
    assert relative_subject(s, start, sx) == expected


_TRIGGER_WORDS = st.sampled_from(["He", "denies", "no", "not", "history", "of", "mother", "reports", "possible",
                                  "rule", "out", "but", "was", "stopped", "depression", "sertraline", "if", "ago",
                                  "3", "years", "family", "negative", "for", ",", ".", "(", ")", "SI", "-"])


@given(st.lists(_TRIGGER_WORDS, min_size=1, max_size=18).map(" ".join),
       st.sampled_from([None, "symptom", "diagnosis", "medication"]))
@example("No history of depression, but mother reports possible SI.", "symptom")
@example("Sertraline was stopped 3 years ago.", "medication")
def test_context_triggers_remembered_equal_fresh_scan(sentence: str, kind: str | None) -> None:
    """Property (cache is transparent): the triggers remembered for a sentence and a kind of concept are those a
    fresh scan of the sentence finds, asked once or again, and a caller changing the list it got changes nothing
    remembered."""
    from anonpsy.extract.assertion.context import default_engine

    engine = default_engine()
    expected = engine._scan(sentence, kind)  # type: ignore[arg-type]
    got = engine.triggers(sentence, kind)  # type: ignore[arg-type]
    assert got == expected
    got.clear()
    assert engine.triggers(sentence, kind) == expected  # type: ignore[arg-type]


_CONDITION_WORDS = st.sampled_from(["acute", "transverse", "myelitis", "HIV", "antibody", "was", "negative",
                                    "history", "of", "hypertension", "asthma", "migraine", "headache", "depression",
                                    "post-traumatic", "type 2 diabetes", "seizure", "disorder", ".", ",", "and"])
_SECTIONS = st.sampled_from([None, "hpi", "assessment", "past_medical", "family_history", "labs"])


@given(st.lists(_CONDITION_WORDS, max_size=14).map(" ".join), _SECTIONS)
@example("IMPRESSION: Acute transverse myelitis.", "assessment")
@example("History of hypertension and asthma.", "past_medical")
def test_general_conditions_cached_equals_uncached(sentence: str, section: str | None) -> None:
    """Property (cache is transparent): the fallback conditions of a sentence, remembered, are those a fresh read
    with the same vocabulary finds, asked once or again."""
    from anonpsy.extract.mentions.general_conditions import find_general_conditions, general_vocabulary

    expected = find_general_conditions(sentence, section, vocab=general_vocabulary())
    assert find_general_conditions(sentence, section) == expected
    assert find_general_conditions(sentence, section) == expected
