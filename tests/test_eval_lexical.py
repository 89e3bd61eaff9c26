"""ROUGE-L F on known pairs."""

from __future__ import annotations

import pytest

pytest.importorskip(
    "rouge_score", exc_type=ImportError, reason="needs the eval extra: run .ci/eval.sh"
)

from anonpsy.evaluate.lexical import rouge_l_batch, rouge_l_f


def test_rouge_l_known_pair() -> None:
    # LCS "the cat on the mat" = 5 of 6 tokens on each side: P = R = F = 5/6.
    assert rouge_l_f("the cat sat on the mat", "the cat lay on the mat") == pytest.approx(5 / 6)


def test_rouge_l_unequal_lengths() -> None:
    # LCS 3 ("a b c"); P = 3/3, R = 3/6, F = 2PR/(P+R) = 2/3.
    assert rouge_l_f("a b x c y z", "a b c") == pytest.approx(2 / 3)


def test_rouge_l_identical_and_disjoint() -> None:
    assert rouge_l_batch(
        ["Low mood, poor sleep.", "alpha"], ["low mood poor sleep", "beta"]
    ) == pytest.approx([1.0, 0.0])
