"""Lexical overlap of original and output: ROUGE-L F-measure (rouge-score, ``eval`` extra).

ROUGE-L uses the longest common subsequence of the two token sequences (rouge-score's tokenizer: lowercase,
non-alphanumerics to spaces, no stemming here): ``P = LCS / len(output)``, ``R = LCS / len(original)``,
``F = 2PR / (P + R)``. The original is the reference, the output the candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from anonpsy.evaluate.errors import missing_extra


@lru_cache(maxsize=2)
def _scorer(use_stemmer: bool) -> Any:
    try:
        from rouge_score import rouge_scorer
    except ImportError:
        raise missing_extra("rouge-score") from None
    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=use_stemmer)


def rouge_l_f(original: str, output: str, *, use_stemmer: bool = False) -> float:
    """ROUGE-L F-measure of ``output`` against ``original`` (0 when either has no tokens)."""
    score = _scorer(use_stemmer).score(original, output)["rougeL"]
    return float(score.fmeasure)


def rouge_l_batch(
    originals: Sequence[str], outputs: Sequence[str], *, use_stemmer: bool = False
) -> list[float]:
    """:func:`rouge_l_f` for every pair."""
    if len(originals) != len(outputs):
        raise ValueError("originals and outputs must have the same length")
    return [rouge_l_f(a, b, use_stemmer=use_stemmer) for a, b in zip(originals, outputs, strict=True)]
