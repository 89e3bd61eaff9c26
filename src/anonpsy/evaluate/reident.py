"""Re-identification risk: nearest-document Jaccard linkage and insider-judge rubric summaries.

**Nearest-document Jaccard** (RecordTwin's linkage attack on a released corpus): every output is linked to
the original whose token set has the highest Jaccard similarity ``|A ∩ B| / |A ∪ B|`` with it; accuracy is
the fraction of outputs whose nearest original is their own source (chance level ``1 / N``). Tokens are
lowercased runs of letters and digits. Ties are credited fairly: an output whose own source shares the top
score with ``k - 1`` others earns ``1 / k`` (the expected accuracy of an attacker who picks among the tied),
so the result does not depend on corpus order.

**Insider judges** rate how likely they are to recognize the patient on a 1–5 rubric (1 = cannot recognize,
5 = certain) and compare pairs of outputs (A/B: which is less identifiable). :func:`summarize_rubric` and
:func:`ab_win_rate` aggregate those ratings.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from anonpsy.evaluate.stats import TestResult, binomial_test

_TOKEN_RE = re.compile(r"[^\W_]+", re.UNICODE)
RUBRIC_MIN = 1
RUBRIC_MAX = 5


def token_set(text: str) -> frozenset[str]:
    """Lowercased letter/digit runs of ``text``."""
    return frozenset(_TOKEN_RE.findall(text.lower()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard similarity of two sets; two empty sets give 0."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


@dataclass(frozen=True)
class ReidResult:
    """Nearest-document re-identification over a corpus.

    ``nearest[i]`` is the index of an original with the top Jaccard for output ``i`` (the first among ties),
    ``credit[i]`` is 1, 0 or ``1/k`` for a k-way tie involving its own source, ``own[i]`` / ``best_other[i]``
    are the Jaccard with its own source and with the closest other original.
    """

    accuracy: float
    n: int
    chance: float
    nearest: tuple[int, ...]
    credit: tuple[float, ...]
    own: tuple[float, ...]
    best_other: tuple[float, ...]


def nearest_document_reid(originals: Sequence[str], outputs: Sequence[str]) -> ReidResult:
    """Link each ``outputs[i]`` (whose source is ``originals[i]``) to its most Jaccard-similar original."""
    if len(originals) != len(outputs):
        raise ValueError("originals and outputs must have the same length")
    n = len(originals)
    if n == 0:
        return ReidResult(math.nan, 0, math.nan, (), (), (), ())
    orig_sets = [token_set(t) for t in originals]
    nearest: list[int] = []
    credit: list[float] = []
    own: list[float] = []
    best_other: list[float] = []
    for i, out in enumerate(outputs):
        s = token_set(out)
        scores = [jaccard(s, o) for o in orig_sets]
        top = max(scores)
        tied = [j for j, v in enumerate(scores) if v == top]
        nearest.append(tied[0])
        credit.append(1.0 / len(tied) if i in tied else 0.0)
        own.append(scores[i])
        others = [v for j, v in enumerate(scores) if j != i]
        best_other.append(max(others) if others else math.nan)
    return ReidResult(
        accuracy=math.fsum(credit) / n,
        n=n,
        chance=1.0 / n,
        nearest=tuple(nearest),
        credit=tuple(credit),
        own=tuple(own),
        best_other=tuple(best_other),
    )


@dataclass(frozen=True)
class RubricSummary:
    """Summary of 1–5 rubric scores for one method."""

    n: int
    mean: float
    median: float
    sd: float
    counts: dict[int, int]
    share_high: float


def _check_scores(scores: Sequence[int]) -> None:
    for s in scores:
        if isinstance(s, bool) or not isinstance(s, int) or not RUBRIC_MIN <= s <= RUBRIC_MAX:
            raise ValueError(f"rubric scores must be integers {RUBRIC_MIN}..{RUBRIC_MAX}")


def rubric_summary(scores: Sequence[int], high: int = 4) -> RubricSummary:
    """Count, mean, median, sample SD, per-level counts and the share of scores ``>= high``.

    An empty list gives n = 0 and NaN statistics. Raises ValueError on a score outside 1..5.
    """
    _check_scores(scores)
    counts = {k: 0 for k in range(RUBRIC_MIN, RUBRIC_MAX + 1)}
    counts.update(Counter(scores))
    n = len(scores)
    if n == 0:
        return RubricSummary(0, math.nan, math.nan, math.nan, counts, math.nan)
    sd = statistics.stdev(scores) if n > 1 else math.nan
    return RubricSummary(
        n=n,
        mean=statistics.fmean(scores),
        median=float(statistics.median(scores)),
        sd=sd,
        counts=counts,
        share_high=sum(1 for s in scores if s >= high) / n,
    )


def summarize_rubric(scores: Mapping[str, Sequence[int]], high: int = 4) -> dict[str, RubricSummary]:
    """:func:`rubric_summary` per method, in the mapping's order."""
    return {method: rubric_summary(vals, high) for method, vals in scores.items()}


Preference = Literal["A", "B", "tie"]


@dataclass(frozen=True)
class WinRate:
    """A/B preferences: counts, the win rate of A (ties count half) and a two-sided sign test on non-ties."""

    wins_a: int
    wins_b: int
    ties: int
    rate_a: float
    test: TestResult


def ab_win_rate(preferences: Sequence[str]) -> WinRate:
    """Aggregate A/B judgments (``"A"``, ``"B"`` or ``"tie"``, case-insensitive).

    ``rate_a = (wins_a + ties / 2) / n``; the test is an exact two-sided binomial test of wins_a out of
    wins_a + wins_b against 1/2 (NaN with a reason when every judgment is a tie). Raises ValueError on any
    other value.
    """
    norm = [p.strip().lower() for p in preferences]
    bad = [p for p in norm if p not in ("a", "b", "tie")]
    if bad:
        raise ValueError("preferences must be 'A', 'B' or 'tie'")
    a = norm.count("a")
    b = norm.count("b")
    t = norm.count("tie")
    n = a + b + t
    rate = (a + t / 2) / n if n else math.nan
    return WinRate(a, b, t, rate, binomial_test(a, a + b, 0.5, alternative="two-sided"))
