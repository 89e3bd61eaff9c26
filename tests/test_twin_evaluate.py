"""RecordTwin evaluation metrics: the sparse Jaccard attack, bit-parallel ROUGE-L, diversity and utility."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

pytest.importorskip("sklearn", exc_type=ImportError, reason="needs the twin extra: pip install -e '.[twin]'")
pytest.importorskip("rouge_score", exc_type=ImportError, reason="needs the twin extra: pip install -e '.[twin]'")

from anonpsy.evaluate.reident import nearest_document_reid, token_set
from anonpsy.twin import evaluate as ev
from anonpsy.twin.mentions import default_hierarchy

WORDS = st.sampled_from(["mood", "low", "sleep", "poor", "sertraline", "daily", "the", "a", "pain", "chest"])
TEXTS = st.lists(WORDS, max_size=12).map(" ".join)


@given(st.lists(TEXTS, min_size=1, max_size=12))
@example(["a b", "a b", "c"])
def test_sparse_attack_matches_the_reference_implementation(texts: list[str]) -> None:
    """Every original with a twin: the sparse attack equals the harness's per-pair Jaccard linkage (run the
    other way round: each original is the 'output' looking for its source among the synthetic documents)."""
    rng = random.Random(len(texts))
    synth = [" ".join(rng.sample(t.split(), len(t.split()))) + (" extra" if rng.random() < 0.3 else "")
             for t in texts]
    got = ev.jaccard_attack(ev.token_sets(texts), ev.token_sets(synth), list(range(len(texts))))
    ref = nearest_document_reid(synth, texts)
    assert math.isclose(got.accuracy, ref.accuracy)
    assert got.attacks == len(texts)
    chosen = [max(ev_j(token_set(t), token_set(s)) for s in synth) for t in texts]
    assert math.isclose(got.mean_chosen_jaccard, sum(chosen) / len(chosen))


def ev_j(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def test_attack_counts_only_originals_with_a_twin_and_credits_ties() -> None:
    orig = [frozenset({"a"}), frozenset({"a"}), frozenset({"z"})]
    synth = [frozenset({"a"}), frozenset({"a"})]
    r = ev.jaccard_attack(orig, synth, [0, 1, None])
    assert r.attacks == 2 and r.candidates == 2
    assert math.isclose(r.accuracy, 0.5)  # each original ties between the two identical twins
    assert math.isclose(r.chance, 0.5)


@given(st.lists(WORDS, max_size=40), st.lists(WORDS, max_size=40), st.booleans())
@example([], ["a"], False)
def test_bit_parallel_rouge_l_equals_rouge_score(a: list[str], b: list[str], stem: bool) -> None:
    from rouge_score import rouge_scorer

    ref, cand = " ".join(a), " ".join(b)
    want = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=stem).score(ref, cand)["rougeL"].fmeasure
    assert math.isclose(ev.rouge_l(ref, cand, stem), want, abs_tol=1e-12)


def test_rouge_batch_in_processes_keeps_the_order() -> None:
    pairs = [("a b c d", "a c"), ("x y", "x y"), ("", "q")] * 100
    assert ev.rouge_batch(pairs, jobs=2) == ev.rouge_batch(pairs, jobs=1)
    assert ev.rouge_batch(pairs[:3]) == [pytest.approx(2 / 3), 1.0, 0.0]


def test_diversity_counts_specific_and_generalised_concepts() -> None:
    h = default_hierarchy()
    orig = [frozenset({"rx:sertraline", "sx:insomnia"}), frozenset({"rx:fluoxetine"})]
    synth = [frozenset({"rx.class:ssri", "sx:insomnia"}), frozenset({"rx.class:ssri"})]
    d = ev.diversity(orig, synth, h)
    assert d["medication"]["source_distinct"] == 2 and d["medication"]["synthetic_generalised"] == 1
    assert d["medication"]["source_kept_share"] == 0.0 and d["symptom"]["source_kept_share"] == 1.0


def test_utility_split_holds_out_and_the_classifier_learns() -> None:
    ids = [f"d{i}" for i in range(60)]
    labels = ["psych" if i % 2 else "cardio" for i in range(60)] + []
    labels[0] = "rare"
    train, test = ev.split(ids, labels, 0.25, 0)
    assert not set(train) & set(test) and "d0" in train and len(test) == 15
    text = {"psych": "low mood anhedonia sertraline", "cardio": "chest pain troponin aspirin", "rare": "x"}
    lab = dict(zip(ids, labels, strict=True))
    res = ev.classify([text[lab[d]] for d in train], [lab[d] for d in train], [text[lab[d]] for d in test],
                      [lab[d] for d in test], 0)
    assert res["macro_f1"] == 1.0
    assert ev.majority([lab[d] for d in train], [lab[d] for d in test])["macro_f1"] < 1.0


def test_kde_plot_is_a_png() -> None:
    png = ev.kde_png({"a": [0.1, 0.2, 0.3], "b": [0.5, 0.5]})
    assert png.startswith(b"\x89PNG")
