"""The term matcher, phrase expansion, medication parsing and stressor alternatives."""

from __future__ import annotations

import time
from typing import get_args

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from tests.vocabulary import CORE_SYMPTOM_HEADWORDS, MEDICATION_CLASS_IDS

from anonpsy import lexicon as lx
from anonpsy.graph import Route
from anonpsy.lexicon import TERM_KINDS, TermKind, TermMatch, expand_phrase, find_terms, parse_medication


def test_every_core_headword_is_in_the_symptom_lexicon() -> None:
    headwords = {e.headword for e in lx.symptom_lexicon().rules}
    assert CORE_SYMPTOM_HEADWORDS - headwords == set()
    assert len(CORE_SYMPTOM_HEADWORDS) == 163


def test_medication_classes_use_the_shared_vocabulary() -> None:
    assert set(get_args(lx.MedicationClass)) == MEDICATION_CLASS_IDS


def test_no_surface_is_claimed_by_two_entries() -> None:
    for kind in TERM_KINDS:
        assert lx.term_index(kind).conflicts == [], kind


def test_term_kinds_literal_matches_tuple() -> None:
    assert set(get_args(TermKind)) == set(TERM_KINDS)


def test_unknown_kind_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown term kind"):
        lx.term_index("planet")  # type: ignore[arg-type]


def test_find_terms_longest_match_wins() -> None:
    text = "command auditory hallucinations and auditory hallucinations"
    assert [m.id for m in find_terms(text, "symptom")] == ["command_hallucination", "auditory_hallucination"]


def test_find_terms_is_whole_word() -> None:
    assert find_terms("sadness", "emotion")[0].id == "sad"
    assert find_terms("crystalline", "symptom") == []
    assert find_terms("pottery class", "symptom") == []


def test_find_terms_reports_exact_surface() -> None:
    text = "Pt is PARANOID and Hearing  Voices."
    got = [(m.id, m.surface, text[m.start: m.end]) for m in find_terms(text, "symptom")]
    assert got == [
        ("paranoia", "PARANOID", "PARANOID"),
        ("auditory_hallucination", "Hearing  Voices", "Hearing  Voices"),
    ]


def test_abbreviations_are_case_sensitive_but_allow_capitals() -> None:
    assert [m.id for m in find_terms("Li 600 mg; LI 600 MG", "medication")] == ["lithium", "lithium"]
    assert find_terms("li", "medication") == []


def test_excludes_block_look_alikes_only_where_they_cover_the_text() -> None:
    text = "checking account; compulsive checking"
    assert [m.surface for m in find_terms(text, "symptom")] == ["compulsive checking"]


def test_expand_phrase_alternatives_and_placeholders() -> None:
    assert expand_phrase("a (b|) c") == ("a b c", "a c")
    forms = expand_phrase("thoughts of killing <refl>")
    assert "thoughts of killing herself" in forms and "thoughts of killing himself" in forms
    assert len(expand_phrase("(a|b) (c|(d|e))")) == 6


@pytest.mark.parametrize("bad", ["a (b", "a b)", "a|b", "<nobody> x"])
def test_expand_phrase_rejects_malformed_patterns(bad: str) -> None:
    with pytest.raises(ValueError):
        expand_phrase(bad)


def test_expand_phrase_caps_explosions() -> None:
    with pytest.raises(ValueError, match="expands to more than"):
        expand_phrase(" ".join(["(a|b|c|d)"] * 8))


@pytest.mark.parametrize(
    ("sentence", "name", "class_id", "dose", "route", "frequency"),
    [
        ("sertraline 100 mg PO daily", "sertraline", "ssri", "100 mg", Route.oral, "daily"),
        ("lithium carbonate 300mg twice a day", "lithium", "lithium", "300 mg", None, "twice a day"),
        ("haloperidol decanoate 50 mg IM every 4 weeks", "haloperidol", "first_generation_antipsychotic",
         "50 mg", Route.long_acting_injectable, "every 4 weeks"),
        ("started on quetiapine 25 mg at bedtime", "quetiapine", "second_generation_antipsychotic", "25 mg",
         None, "at bedtime"),
        ("haloperidol 5 mg IM q6h prn agitation", "haloperidol", "first_generation_antipsychotic", "5 mg",
         Route.intramuscular, "q6h prn"),
        ("Risperdal Consta 37.5 mg every 2 weeks", "risperidone", "second_generation_antipsychotic",
         "37.5 mg", Route.long_acting_injectable, "every 2 weeks"),
        ("escitalopram 10-20 mg daily", "escitalopram", "ssri", "10-20 mg", None, "daily"),
        ("fluoxetine", "fluoxetine", "ssri", None, None, None),
    ],
)
def test_parse_medication(
    sentence: str, name: str, class_id: str, dose: str | None, route: Route | None, frequency: str | None
) -> None:
    match = find_terms(sentence, "medication")[0]
    got = parse_medication(sentence, match)
    observed = (got.name, got.class_id, got.dose, got.route, got.frequency)
    assert observed == (name, class_id, dose, route, frequency)


def test_parse_medication_stops_at_the_next_drug() -> None:
    s = "sertraline and quetiapine 50 mg at night"
    first, second = find_terms(s, "medication")
    assert parse_medication(s, first).dose is None
    assert parse_medication(s, second).dose == "50 mg"


def test_stressor_alternatives_respect_age_bands() -> None:
    adult = lx.stressor_alternatives("job_loss", 40)
    child = lx.stressor_alternatives("job_loss", 9)
    assert "after being laid off from a warehouse job" in adult
    assert "after being laid off from a warehouse job" not in child
    assert child and adult
    assert lx.stressor_alternatives("no_such_category", 40) == ()
    assert lx.stressor_generalized("workplace_conflict") == "after a stressful event at work"
    assert lx.stressor_generalized(None) == lx.stressor_taxonomy().fallback


def test_age_band_of_boundaries() -> None:
    assert [lx.age_band_of(a) for a in (0, 12, 13, 17, 18, 64, 65, 120)] == [
        "child", "child", "adolescent", "adolescent", "adult", "adult", "older_adult", "older_adult"
    ]
    assert lx.age_band_of(121) is None


def test_loading_and_matching_a_long_text_runs() -> None:
    """Performance sanity: a 1,000-word note through every kind (timings are reported, not asserted)."""
    sentence = ("Pt reports low mood, poor sleep and hearing voices; denies SI. "
                "Takes sertraline 100 mg PO daily and attends CBT. "
                "She felt scared after she was laid off; lives alone, works as a nurse. ")
    text = sentence * (1000 // len(sentence.split()) + 1)
    for kind in TERM_KINDS:
        lx.term_index(kind)
    start = time.perf_counter()
    found = {kind: find_terms(text, kind) for kind in TERM_KINDS}
    elapsed = time.perf_counter() - start
    assert all(found[k] for k in ("symptom", "medication", "therapy", "emotion", "occupation", "stressor"))
    assert elapsed >= 0.0


_VOCAB = [
    "low", "mood", "hearing", "voices", "no", "SI", "Li", "li", "self", "-", "harm", "checking", "account",
    "cutting", "back", "ETOH", "use", ",", ".", "paranoid", "not", "sleeping", "’", "'", "t", "can",
    "lithium", "carbonate", "300mg", "  ", "\n", "é", "ß", "İ", "AVH", "drinking", "water", "binge",
]


@given(st.lists(st.sampled_from(_VOCAB), max_size=40).map(" ".join), st.sampled_from(TERM_KINDS))
@example("İ low mood", "symptom")
@example("can’t sleep", "symptom")
@example("self -harm", "symptom")
def test_find_terms_spans_are_exact(text: str, kind: TermKind) -> None:
    matches: list[TermMatch] = find_terms(text, kind)
    last_end = 0
    for m in matches:
        assert m.surface == text[m.start: m.end]
        assert m.start >= last_end
        assert m.start < m.end
        last_end = m.end


@given(st.text(max_size=200), st.sampled_from(TERM_KINDS))
def test_find_terms_never_fails_on_arbitrary_text(text: str, kind: TermKind) -> None:
    for m in find_terms(text, kind):
        assert m.surface == text[m.start: m.end]


def test_pair_lengths_find_what_every_length_finds() -> None:
    """The lengths tried by the first two tokens (``by_pair``) give the matches of trying every length of the
    first token (the index without ``by_pair``), on the fixture narratives."""
    import dataclasses
    from pathlib import Path

    from anonpsy.extract.sections import sentences

    texts = [s.text for p in sorted((Path(__file__).parent.parent / "fixtures" / "cases").glob("*.txt"))
             for s in sentences(p.read_text(encoding="utf-8"))]
    texts += ["No sleep disturbance, no appetite changes.", "Zoloft 50 mg and Xanax 0.5 mg p.r.n.", "SI", "no"]
    for kind in TERM_KINDS:
        idx = lx.term_index(kind)
        every_length = dataclasses.replace(idx, by_pair={}, single=frozenset(), _memo={})
        for text in texts:
            assert idx._find(text) == every_length._find(text), (kind, text)
