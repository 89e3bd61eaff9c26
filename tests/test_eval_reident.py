"""Nearest-document Jaccard re-identification on a toy corpus; rubric and A/B aggregation."""

from __future__ import annotations

import math

import pytest

from anonpsy.evaluate.reident import (
    ab_win_rate,
    jaccard,
    nearest_document_reid,
    rubric_summary,
    summarize_rubric,
    token_set,
)

ORIGINALS = [
    "woman aged 34 teacher hears voices",  # case 0
    "man aged 61 farmer drinks daily",  # case 1
    "boy aged 9 restless at school",  # case 2
]


def test_token_set_and_jaccard() -> None:
    assert token_set("Hears VOICES, hears!") == frozenset({"hears", "voices"})
    assert jaccard(frozenset("ab"), frozenset("bc")) == pytest.approx(1 / 3)
    assert jaccard(frozenset(), frozenset()) == 0.0


def test_three_document_corpus_hand_computed() -> None:
    outputs = [
        "woman aged 35 nurse hears voices",  # own: {woman,aged,hears,voices} 4 / union 8 = 0.5
        "man aged 58 fisher drinks daily",  # own: {man,aged,drinks,daily} 4/8 = 0.5
        "man aged 61 farmer restless",  # vs 1: {man,aged,61,farmer} 4/7; vs own 2: {aged,restless} 2/9
    ]
    res = nearest_document_reid(ORIGINALS, outputs)
    assert res.nearest == (0, 1, 1)
    assert res.credit == (1.0, 1.0, 0.0)
    assert res.accuracy == pytest.approx(2 / 3)
    assert res.chance == pytest.approx(1 / 3)
    assert res.own[0] == pytest.approx(0.5)
    assert res.best_other[2] == pytest.approx(4 / 7)
    assert res.own[2] == pytest.approx(2 / 9)


def test_ties_give_fractional_credit() -> None:
    originals = ["a b", "a c"]
    res = nearest_document_reid(originals, ["a", "a"])  # both originals at 1/2
    assert res.credit == (0.5, 0.5)
    assert res.accuracy == 0.5


def test_empty_corpus_is_nan() -> None:
    assert math.isnan(nearest_document_reid([], []).accuracy)


def test_rubric_summary() -> None:
    s = rubric_summary([1, 2, 2, 5])
    assert s.n == 4 and s.mean == 2.5 and s.median == 2.0
    assert s.counts == {1: 1, 2: 2, 3: 0, 4: 0, 5: 1}
    assert s.share_high == 0.25
    assert s.sd == pytest.approx(1.7320508, rel=1e-6)
    assert set(summarize_rubric({"x": [3], "y": []})) == {"x", "y"}
    assert math.isnan(rubric_summary([]).mean)


@pytest.mark.parametrize("bad", [[0], [6], [2.5], [True]])
def test_rubric_rejects_out_of_range(bad: list[int]) -> None:
    with pytest.raises(ValueError):
        rubric_summary(bad)


def test_ab_win_rate() -> None:
    pytest.importorskip("scipy", exc_type=ImportError, reason="the sign test uses scipy (eval extra)")
    w = ab_win_rate(["A"] * 9 + ["b", "tie"])
    assert (w.wins_a, w.wins_b, w.ties) == (9, 1, 1)
    assert w.rate_a == pytest.approx(9.5 / 11)
    from scipy.stats import binomtest

    assert w.test.p == pytest.approx(binomtest(9, 10, 0.5).pvalue)
    assert not ab_win_rate(["tie", "tie"]).test.ok
    with pytest.raises(ValueError):
        ab_win_rate(["C"])
