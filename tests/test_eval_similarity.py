"""Cosine similarity per case pair, with a fake encoder on tiny fixed vectors."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anonpsy.evaluate.similarity import case_similarities, cosine, pairwise_cosine

VECTORS = {"a": [1.0, 0.0, 0.0], "b": [1.0, 1.0, 0.0], "c": [0.0, 0.0, 2.0], "d": [-1.0, 0.0, 0.0]}


class FakeEncoder:
    """Looks texts up in VECTORS and records each call."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    @property
    def name(self) -> str:
        return "fake-3d"

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [VECTORS[t] for t in texts]


def test_cosine_hand_computed() -> None:
    assert cosine([1, 0, 0], [1, 1, 0]) == pytest.approx(1 / math.sqrt(2))
    assert cosine([1, 0, 0], [0, 0, 2]) == 0.0
    assert cosine([1, 0, 0], [-1, 0, 0]) == -1.0
    assert math.isnan(cosine([0, 0], [1, 0]))


def test_pairwise_cosine_encodes_once_and_keeps_order() -> None:
    enc = FakeEncoder()
    got = pairwise_cosine(enc, ["a", "a", "a"], ["b", "c", "d"])
    assert got == pytest.approx([1 / math.sqrt(2), 0.0, -1.0])
    assert enc.calls == [["a", "a", "a", "b", "c", "d"]]


def test_case_similarities_record_the_model() -> None:
    scores = case_similarities(FakeEncoder(), ["c1", "c2"], ["a", "b"], ["a", "c"])
    assert [s.case_id for s in scores] == ["c1", "c2"]
    assert scores[0].cosine == pytest.approx(1.0) and scores[1].cosine == 0.0
    assert {s.model for s in scores} == {"fake-3d"}


def test_lengths_must_match() -> None:
    with pytest.raises(ValueError):
        pairwise_cosine(FakeEncoder(), ["a"], [])


vec = st.lists(st.floats(-10, 10, allow_nan=False), min_size=3, max_size=3)


@given(vec, vec)
def test_cosine_is_symmetric_and_bounded(a: list[float], b: list[float]) -> None:
    c = cosine(a, b)
    if math.isnan(c):
        assert not any(a) or not any(b) or math.isnan(cosine(b, a))
        return
    assert -1.0 <= c <= 1.0
    assert c == pytest.approx(cosine(b, a))
