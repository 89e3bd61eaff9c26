"""Diagnosis soft-F1: hand-computed examples and bounds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rapidfuzz import fuzz

from anonpsy.evaluate.diagnosis import diagnosis_soft_f1


def test_exact_canonical_matches_score_one() -> None:
    r = diagnosis_soft_f1(
        ["MDD, recurrent, severe", "Alcohol use disorder"], ["major depression", "alcoholism"]
    )
    assert (r.precision, r.recall, r.f1) == (1.0, 1.0, 1.0)
    assert {m.how for m in r.matches} == {"canonical"}


def test_extra_prediction_lowers_precision_only() -> None:
    # TP = 2, n = 2, m = 3: P = 2/3, R = 1, F1 = 2*2/5 = 0.8
    r = diagnosis_soft_f1(["MDD", "alcohol use disorder"], ["major depression", "alcohol dependence", "GAD"])
    assert r.precision == pytest.approx(2 / 3) and r.recall == 1.0 and r.f1 == pytest.approx(0.8)


def test_same_chapter_distinct_rules_earn_weighted_partial_credit() -> None:
    sim = fuzz.token_set_ratio("bipolar i disorder", "bipolar ii disorder") / 100
    r = diagnosis_soft_f1(["bipolar I disorder"], ["bipolar II disorder"])
    assert r.matches[0].similarity == pytest.approx(sim)
    assert r.f1 == pytest.approx(0.5 * sim)
    full = diagnosis_soft_f1(["bipolar I disorder"], ["bipolar II disorder"], related_weight=1.0)
    assert full.f1 == pytest.approx(sim)


def test_distinct_chapters_earn_nothing() -> None:
    r = diagnosis_soft_f1(["generalized anxiety disorder"], ["social anxiety disorder", "insomnia disorder"])
    assert r.f1 > 0  # same chapter (anxiety)
    assert diagnosis_soft_f1(["schizophrenia"], ["major depressive disorder"]).f1 == 0.0


def test_unmapped_labels_use_fuzzy_similarity_and_threshold() -> None:
    sim = fuzz.token_set_ratio("zebra syndrome", "zebra syndrome type 2") / 100
    assert sim == 1.0  # token_set_ratio: one token set contains the other
    r = diagnosis_soft_f1(["zebra syndrome"], ["quokka syndrome"], threshold=0.0)
    q = fuzz.token_set_ratio("zebra syndrome", "quokka syndrome") / 100
    assert r.f1 == pytest.approx(q)
    assert diagnosis_soft_f1(["zebra syndrome"], ["quokka syndrome"], threshold=0.99).f1 == 0.0


def test_empty_lists() -> None:
    assert diagnosis_soft_f1([], []).f1 == 1.0
    assert diagnosis_soft_f1(["MDD"], []).f1 == 0.0
    assert diagnosis_soft_f1([], ["MDD"]).f1 == 0.0


def test_duplicates_by_canonical_key_count_once() -> None:
    r = diagnosis_soft_f1(["MDD", "major depressive disorder, recurrent"], ["major depression"])
    assert (r.n_reference, r.n_predicted, r.f1) == (1, 1, 1.0)


class TableEncoder:
    """Embeds fixed labels as fixed 2-d vectors."""

    vectors: ClassVar[dict[str, list[float]]] = {
        "panic disorder": [1.0, 0.0],
        "zebra syndrome": [0.6, 0.8],
        "quokka syndrome": [0.8, 0.6],
    }

    @property
    def name(self) -> str:
        return "table-2d"

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.vectors.get(t, [0.0, 1.0]) for t in texts]


def test_embedding_term_and_model_are_recorded() -> None:
    # cos((0.6, 0.8), (0.8, 0.6)) = 0.96 beats the fuzzy score.
    r = diagnosis_soft_f1(["zebra syndrome"], ["quokka syndrome"], encoder=TableEncoder(), threshold=0.9)
    assert r.model == "table-2d"
    assert r.matches[0].how == "embedding" and r.f1 == pytest.approx(0.96)


labels = st.lists(
    st.sampled_from(
        [
            "MDD",
            "GAD",
            "PTSD",
            "schizophrenia",
            "alcoholism",
            "bipolar II disorder",
            "zebra syndrome",
            "panic disorder",
            "anorexia",
            "insomnia",
        ]
    ),
    max_size=5,
)


@given(labels, labels)
def test_soft_f1_is_bounded(ref: list[str], pred: list[str]) -> None:
    r = diagnosis_soft_f1(ref, pred)
    assert 0.0 <= r.precision <= 1.0 and 0.0 <= r.recall <= 1.0 and 0.0 <= r.f1 <= 1.0
    assert len(r.matches) <= min(r.n_reference, r.n_predicted)


@given(labels)
def test_a_list_agrees_perfectly_with_itself(ref: list[str]) -> None:
    assert diagnosis_soft_f1(ref, list(reversed(ref))).f1 == 1.0
