"""Grouping voiced regions into utterances: every region kept once and in order, no utterance over the limit
unless one region alone is, and a long run cut where the speaker paused longest."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

pytest.importorskip("numpy", reason="needs the audio extra: pip install 'anonpsy[audio]'")

from anonpsy.audio.asr import utterances


@st.composite
def region_lists(draw: st.DrawFn) -> list[tuple[float, float]]:
    """Voiced regions in order: lengths and pauses in centiseconds (pauses short enough to join, or not)."""
    n = draw(st.integers(min_value=0, max_value=30))
    t = draw(st.integers(min_value=0, max_value=100)) / 100
    out = []
    for _ in range(n):
        length = draw(st.integers(min_value=5, max_value=800)) / 100
        out.append((t, t + length))
        t += length + draw(st.integers(min_value=1, max_value=120)) / 100
    return out


@given(region_lists(), st.sampled_from([2.0, 5.0, 15.0, 20.0]))
@example([(0.0, 4.0), (4.1, 8.0), (8.5, 12.0), (12.05, 16.0)], 15.0)
def test_utterances_partition_regions_within_the_limit(regions: list[tuple[float, float]], max_s: float) -> None:
    """Property utterances_partition: each region lies in exactly one utterance, utterances are in order and
    disjoint, and one is longer than ``max_s`` only when it is a single region."""
    groups = utterances(regions, max_s=max_s)
    assert [g[0] for g in groups] == sorted(g[0] for g in groups)
    for (_, b0), (a1, _) in itertools.pairwise(groups):
        assert b0 < a1
    for a, b in regions:
        assert sum(1 for g in groups if g[0] <= a and b <= g[1]) == 1
    for g in groups:
        inside = [r for r in regions if g[0] <= r[0] and r[1] <= g[1]]
        assert inside and inside[0][0] == g[0] and inside[-1][1] == g[1]
        assert g[1] - g[0] <= max_s + 1e-9 or len(inside) == 1


@given(region_lists(), st.sampled_from([2.0, 5.0, 15.0]))
def test_utterances_cut_a_joined_run_at_its_widest_pause(regions: list[tuple[float, float]], max_s: float) -> None:
    """Property cut_at_widest_pause: where a run of regions closer than the join distance is cut, no pause left
    inside the two utterances on either side is wider than the cut (each cut is the widest of a stretch that holds
    both its neighbours)."""
    groups = utterances(regions, max_s=max_s, join_s=0.6)
    for left, right in itertools.pairwise(groups):
        cut = right[0] - left[1]
        if cut >= 0.6:
            continue
        for g in (left, right):
            inside = [r for r in regions if g[0] <= r[0] and r[1] <= g[1]]
            assert all(b[0] - a[1] <= cut + 1e-9 for a, b in itertools.pairwise(inside))


def test_a_long_run_is_cut_at_the_sentence_pause_not_inside_a_number() -> None:
    # Three phrases 0.1 s apart (digit groups) then a 0.5 s sentence pause: the greedy cut at 15 s fell between
    # the digit groups; the widest pause is the sentence end.
    regions = [(0.0, 9.0), (9.5, 12.0), (12.1, 14.0), (14.1, 16.0)]
    assert utterances(regions, max_s=15.0) == [(0.0, 9.0), (9.5, 16.0)]


def test_regions_far_apart_stay_apart_and_short_runs_stay_whole() -> None:
    assert utterances([(0.0, 1.0), (1.2, 2.0), (3.0, 4.0)], max_s=15.0) == [(0.0, 2.0), (3.0, 4.0)]
    assert utterances([(0.0, 30.0)], max_s=15.0) == [(0.0, 30.0)]
    assert utterances([], max_s=15.0) == []


def test_a_looped_decode_is_told_from_numbers_said_digit_by_digit() -> None:
    from anonpsy.audio.asr import looped

    assert looped(["Date", "of", "ques-a-a-a-a-a-a-a-a-a-a-a"])
    assert looped(["I", "need", "to,", "I", "need", "to,", "I", "need", "to,", "I", "need", "to,"])
    assert not looped(["five", "five", "five", "five", "five,", "one", "two"])
    assert not looped(["555-5555", "1111111", "call", "her", "back", "on"])
    assert not looped(["I", "need", "to,", "I", "need", "to", "see", "her."])


def test_a_looped_utterance_is_transcribed_again_in_the_pieces_its_pauses_part_it_into() -> None:
    import numpy as np

    from anonpsy.audio.asr import MoonshineRecognizer, Word

    rec = object.__new__(MoonshineRecognizer)
    rec.max_utterance_s, rec.second_pass_s, rec.second_pass, rec.redecoded = 15.0, 0.6, 0, 0
    asked: list[tuple[float, float]] = []

    def utterance(signal: object, a: float, b: float) -> list[Word]:
        asked.append((a, b))
        if b - a > 8:
            return [Word("ques-a-a-a-a-a-a-a-a-a", a, b)]
        return [Word("fine", a, b)]

    rec._utterance = utterance  # type: ignore[method-assign]
    regions = [(0.0, 4.0), (4.5, 8.0), (8.5, 12.0)]  # pauses short enough to join one utterance
    words = rec.transcribe(np.zeros(16000 * 13, dtype=np.float32), regions)
    assert rec.redecoded == 1
    assert asked[0] == (0.0, 12.0) and len(asked) > 1
    assert all(w.text == "fine" for w in words) and words[0].start == 0.0 and words[-1].end == 12.0
