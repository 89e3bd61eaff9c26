"""Semantic similarity of each original narrative to its de-identified output.

The score is the cosine of the two document embeddings (see :mod:`.embeddings`); with unit-length embeddings
it lies in [-1, 1], in practice in [0, 1]. A high value means the output is close in meaning to its source,
i.e. the source is easy to recall from it (the x-axis of the report's recallability–structure plane is
``1 - cosine``). All texts of a call are encoded in one batch; every score records the model name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from anonpsy.evaluate.embeddings import Encoder


@dataclass(frozen=True)
class SimilarityScore:
    """Cosine similarity of one case's original and output, with the model that produced it."""

    case_id: str
    cosine: float
    model: str


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors; NaN when either has zero length (norm)."""
    if len(a) != len(b):
        raise ValueError("vectors differ in dimension")
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(math.fsum(x * x for x in a))
    nb = math.sqrt(math.fsum(y * y for y in b))
    if na == 0.0 or nb == 0.0:
        return math.nan
    return max(-1.0, min(1.0, dot / (na * nb)))


def pairwise_cosine(encoder: Encoder, originals: Sequence[str], outputs: Sequence[str]) -> list[float]:
    """Cosine of ``originals[i]`` vs ``outputs[i]`` for every i, with one batched encode of all texts."""
    if len(originals) != len(outputs):
        raise ValueError("originals and outputs must have the same length")
    if not originals:
        return []
    emb = encoder.encode([*originals, *outputs])
    n = len(originals)
    return [cosine(emb[i], emb[n + i]) for i in range(n)]


def case_similarities(
    encoder: Encoder, case_ids: Sequence[str], originals: Sequence[str], outputs: Sequence[str]
) -> list[SimilarityScore]:
    """:func:`pairwise_cosine` as records carrying the case id and the model name."""
    if len(case_ids) != len(originals):
        raise ValueError("case_ids and originals must have the same length")
    scores = pairwise_cosine(encoder, originals, outputs)
    return [SimilarityScore(cid, s, encoder.name) for cid, s in zip(case_ids, scores, strict=True)]
