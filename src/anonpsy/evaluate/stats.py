"""Thin, typed wrappers over scipy / statsmodels tests (``eval`` extra; imported on first use).

Every test returns a :class:`TestResult` (statistic, p, n, test name, alternative). Degenerate inputs -- all
paired differences zero, every value tied, a sample too small, no discordant pairs -- give NaN statistic and p
with a ``reason`` instead of raising; malformed inputs (paired samples of different lengths, values outside
{0, 1} for binary tests) still raise ValueError. Pairs or blocks containing NaN are dropped first and ``n``
counts what was used.

=====================  ==============================================  =====================================
function               computes                                        library call
=====================  ==============================================  =====================================
wilcoxon_signed_rank   paired differences, zeros dropped ("wilcox")    scipy.stats.wilcoxon
friedman               k >= 3 related samples, complete blocks         scipy.stats.friedmanchisquare
cochrans_q             k related binary samples                        statsmodels cochrans_q
mcnemar                two related binary samples                      statsmodels mcnemar (exact if b+c<25)
mann_whitney_u         two independent samples                         scipy.stats.mannwhitneyu
binomial_test          k successes in n trials against p               scipy.stats.binomtest
holm                   Holm step-down adjusted p-values                statsmodels multipletests("holm")
bootstrap_ci           seeded bootstrap CI of a statistic              scipy.stats.bootstrap
=====================  ==============================================  =====================================
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from anonpsy.evaluate.errors import missing_extra

Alternative = Literal["two-sided", "less", "greater"]
_ALTERNATIVES = ("two-sided", "less", "greater")


@dataclass(frozen=True)
class TestResult:
    """Outcome of one statistical test. ``reason`` says why statistic and p are NaN."""

    __test__ = False  # not a pytest test class

    test: str
    statistic: float
    p: float
    n: int
    alternative: str
    reason: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the test produced a p-value."""
        return not math.isnan(self.p)


@dataclass(frozen=True)
class ConfidenceInterval:
    """A bootstrap confidence interval. ``reason`` says why the bounds are NaN."""

    estimate: float
    low: float
    high: float
    level: float
    n: int
    method: str
    n_resamples: int
    seed: int
    reason: str | None = None


def _scipy_stats() -> Any:
    try:
        from scipy import stats
    except ImportError:
        raise missing_extra("scipy") from None
    return stats


def _np() -> Any:
    try:
        import numpy
    except ImportError:
        raise missing_extra("numpy") from None
    return numpy


def _statsmodels(module: str) -> Any:
    try:
        import importlib

        return importlib.import_module(f"statsmodels.stats.{module}")
    except ImportError:
        raise missing_extra("statsmodels") from None


def _nan(test: str, n: int, alternative: str, reason: str) -> TestResult:
    return TestResult(test, math.nan, math.nan, n, alternative, reason)


def _check_alt(alternative: str) -> None:
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {', '.join(_ALTERNATIVES)}")


def _isnan(x: float) -> bool:
    return isinstance(x, float) and math.isnan(x)


def _finite_pairs(x: Sequence[float], y: Sequence[float]) -> tuple[list[float], list[float]]:
    if len(x) != len(y):
        raise ValueError("paired samples must have the same length")
    keep = [(float(a), float(b)) for a, b in zip(x, y, strict=True) if not (_isnan(a) or _isnan(b))]
    return [a for a, _ in keep], [b for _, b in keep]


def _result(test: str, res: Any, n: int, alternative: str, degenerate: str) -> TestResult:
    stat = float(res.statistic)
    p = float(res.pvalue)
    if math.isnan(stat) or math.isnan(p):
        return _nan(test, n, alternative, degenerate)
    return TestResult(test, stat, p, n, alternative)


def wilcoxon_signed_rank(
    x: Sequence[float], y: Sequence[float] | None = None, *, alternative: Alternative = "two-sided"
) -> TestResult:
    """Wilcoxon signed-rank test of ``x - y`` (or of ``x`` alone) against a zero median.

    One-sided: ``alternative="greater"`` tests whether ``x`` tends to exceed ``y``. Zero differences are
    dropped (Wilcoxon's method) and ``n`` is the number of non-zero differences; scipy picks the exact
    distribution for small samples without ties. NaN with a reason when every difference is zero.
    """
    _check_alt(alternative)
    if y is None:
        d = [float(a) for a in x if not _isnan(a)]
    else:
        xs, ys = _finite_pairs(x, y)
        d = [a - b for a, b in zip(xs, ys, strict=True)]
    nz = [v for v in d if v != 0.0]
    if not nz:
        reason = "no pairs" if not d else "all paired differences are zero"
        return _nan("wilcoxon", 0, alternative, reason)
    st = _scipy_stats()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = st.wilcoxon(nz, alternative=alternative, zero_method="wilcox")
    return _result("wilcoxon", res, len(nz), alternative, "test undefined for these differences")


def friedman(groups: Sequence[Sequence[float]]) -> TestResult:
    """Friedman test of k >= 3 related samples (``groups[j][i]``: method j on case i).

    Blocks (cases) with a NaN in any group are dropped. NaN with a reason for fewer than 3 groups, fewer
    than 2 complete blocks, or when every block is tied throughout.
    """
    k = len(groups)
    if k < 3:
        return _nan("friedman", 0, "two-sided", "needs at least 3 related samples")
    n0 = len(groups[0])
    if any(len(g) != n0 for g in groups):
        raise ValueError("related samples must have the same length")
    blocks = [
        [float(g[i]) for g in groups] for i in range(n0) if not any(_isnan(g[i]) for g in groups)
    ]
    n = len(blocks)
    if n < 2:
        return _nan("friedman", n, "two-sided", "needs at least 2 complete cases")
    if all(len(set(b)) == 1 for b in blocks):
        return _nan("friedman", n, "two-sided", "all values tie within every case")
    st = _scipy_stats()
    cols = [[b[j] for b in blocks] for j in range(k)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = st.friedmanchisquare(*cols)
    return _result("friedman", res, n, "two-sided", "test undefined for these samples")


def _binary(values: Sequence[Any], what: str) -> list[int]:
    out = []
    for v in values:
        if isinstance(v, bool) or v in (0, 1):
            out.append(int(v))
        else:
            raise ValueError(f"{what} must hold only 0/1 or booleans")
    return out


def cochrans_q(rows: Sequence[Sequence[Any]]) -> TestResult:
    """Cochran's Q test: ``rows[i][j]`` is the binary outcome of method j on case i (k >= 2 methods).

    NaN with a reason for fewer than 2 methods or cases, or when no case differs across methods.
    """
    data = [_binary(r, "Cochran's Q outcomes") for r in rows]
    n = len(data)
    k = len(data[0]) if data else 0
    if any(len(r) != k for r in data):
        raise ValueError("every case needs one outcome per method")
    if k < 2 or n < 2:
        return _nan("cochran_q", n, "two-sided", "needs at least 2 methods and 2 cases")
    if all(len(set(r)) == 1 for r in data):
        return _nan("cochran_q", n, "two-sided", "no case differs across methods")
    ct = _statsmodels("contingency_tables")
    np = _np()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ct.cochrans_q(np.asarray(data))
    return _result("cochran_q", res, n, "two-sided", "test undefined for these outcomes")


def mcnemar(x: Sequence[Any], y: Sequence[Any], *, exact: bool | None = None) -> TestResult:
    """McNemar test of two related binary samples (two-sided).

    ``exact=None`` uses the exact binomial test when the discordant pairs number fewer than 25, else the
    chi-square statistic with continuity correction. NaN with a reason when there are no discordant pairs.
    """
    if len(x) != len(y):
        raise ValueError("paired samples must have the same length")
    a = _binary(x, "McNemar outcomes")
    b = _binary(y, "McNemar outcomes")
    n = len(a)
    t11 = sum(1 for u, v in zip(a, b, strict=True) if u == 1 and v == 1)
    t10 = sum(1 for u, v in zip(a, b, strict=True) if u == 1 and v == 0)
    t01 = sum(1 for u, v in zip(a, b, strict=True) if u == 0 and v == 1)
    t00 = n - t11 - t10 - t01
    if t10 + t01 == 0:
        return _nan("mcnemar", n, "two-sided", "no discordant pairs")
    use_exact = (t10 + t01) < 25 if exact is None else exact
    ct = _statsmodels("contingency_tables")
    res = ct.mcnemar([[t11, t10], [t01, t00]], exact=use_exact, correction=True)
    name = "mcnemar_exact" if use_exact else "mcnemar_chi2"
    return _result(name, res, n, "two-sided", "test undefined for this table")


def mann_whitney_u(
    x: Sequence[float], y: Sequence[float], *, alternative: Alternative = "two-sided"
) -> TestResult:
    """Mann–Whitney U test of two independent samples (U of ``x``); ``n`` is the total size.

    NaN with a reason when a sample is empty or every value ties.
    """
    _check_alt(alternative)
    xs = [float(v) for v in x if not _isnan(v)]
    ys = [float(v) for v in y if not _isnan(v)]
    n = len(xs) + len(ys)
    if not xs or not ys:
        return _nan("mann_whitney_u", n, alternative, "a sample is empty")
    if len(set(xs) | set(ys)) == 1:
        return _nan("mann_whitney_u", n, alternative, "all values tie")
    st = _scipy_stats()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = st.mannwhitneyu(xs, ys, alternative=alternative)
    return _result("mann_whitney_u", res, n, alternative, "test undefined for these samples")


def binomial_test(k: int, n: int, p: float = 0.5, *, alternative: Alternative = "two-sided") -> TestResult:
    """Exact binomial test of ``k`` successes in ``n`` trials; the statistic is ``k / n``. NaN for n = 0."""
    _check_alt(alternative)
    if n < 0 or k < 0 or k > n:
        raise ValueError("need 0 <= k <= n")
    if not 0.0 <= p <= 1.0:
        raise ValueError("p must lie in [0, 1]")
    if n == 0:
        return _nan("binomial", 0, alternative, "no trials")
    st = _scipy_stats()
    res = st.binomtest(k, n, p, alternative=alternative)
    return TestResult("binomial", k / n, float(res.pvalue), n, alternative)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in input order; NaN entries stay NaN and are not counted."""
    idx = [i for i, p in enumerate(pvalues) if not _isnan(p)]
    out = [math.nan] * len(pvalues)
    if not idx:
        return out
    mt = _statsmodels("multitest")
    _, adj, _, _ = mt.multipletests([float(pvalues[i]) for i in idx], method="holm")
    for i, v in zip(idx, adj, strict=True):
        out[i] = float(v)
    return out


Statistic = Literal["mean", "median"] | Callable[[Any], Any]


def bootstrap_ci(
    values: Sequence[float],
    *,
    statistic: Statistic = "mean",
    level: float = 0.95,
    n_resamples: int = 9999,
    seed: int = 0,
    method: Literal["percentile", "basic", "BCa"] = "percentile",
) -> ConfidenceInterval:
    """Seeded bootstrap confidence interval of ``statistic`` over ``values`` (NaN values dropped).

    The same seed always gives the same interval. NaN bounds with a reason for fewer than 2 values or when
    the method cannot form an interval (e.g. BCa on constant data); constant data under the percentile method
    give the degenerate interval [v, v].
    """
    if not 0.0 < level < 1.0:
        raise ValueError("level must lie in (0, 1)")
    xs = [float(v) for v in values if not _isnan(v)]
    n = len(xs)
    np = _np()
    if statistic == "mean":
        fn: Callable[..., Any] = np.mean
    elif statistic == "median":
        fn = np.median
    elif callable(statistic):
        fn = statistic
    else:
        raise ValueError("statistic must be 'mean', 'median' or a callable")
    name = statistic if isinstance(statistic, str) else getattr(statistic, "__name__", "statistic")
    estimate = float(fn(np.asarray(xs))) if xs else math.nan
    if n < 2:
        return ConfidenceInterval(estimate, math.nan, math.nan, level, n, method, n_resamples, seed,
                                  f"needs at least 2 values for a bootstrap {name} interval")
    st = _scipy_stats()

    def stat(sample: Any, axis: int = -1) -> Any:
        return fn(sample, axis=axis)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = st.bootstrap(
            (np.asarray(xs),),
            stat,
            n_resamples=n_resamples,
            confidence_level=level,
            method=method,
            rng=np.random.default_rng(seed),
            vectorized=True,
        )
    low = float(res.confidence_interval.low)
    high = float(res.confidence_interval.high)
    reason = None
    if math.isnan(low) or math.isnan(high):
        reason = f"the {method} bootstrap is undefined for these values (constant data?)"
    return ConfidenceInterval(estimate, low, high, level, n, method, n_resamples, seed, reason)


@dataclass(frozen=True)
class Comparison:
    """One method against the reference on one metric: the paired test and its Holm-adjusted p."""

    metric: str
    method: str
    reference: str
    n: int
    median_difference: float
    result: TestResult
    p_holm: float


def compare_to_reference(
    metric: str,
    by_method: Mapping[str, Sequence[float]],
    reference: str,
    *,
    binary: bool = False,
) -> list[Comparison]:
    """Paired two-sided tests of every method against ``reference`` on one metric, Holm-corrected together.

    Values are aligned by position (case order). Continuous metrics use the Wilcoxon signed-rank test,
    binary ones McNemar's. ``median_difference`` is the median of ``method - reference`` over complete pairs.
    """
    if reference not in by_method:
        raise ValueError("the reference method has no values for this metric")
    ref = by_method[reference]
    rows: list[tuple[str, int, float, TestResult]] = []
    for method, vals in by_method.items():
        if method == reference:
            continue
        xs, ys = _finite_pairs(vals, ref)
        diffs = sorted(a - b for a, b in zip(xs, ys, strict=True))
        med = _median(diffs)
        if binary:
            res = mcnemar([int(v) for v in xs], [int(v) for v in ys]) if xs else _nan(
                "mcnemar", 0, "two-sided", "no pairs"
            )
        else:
            res = wilcoxon_signed_rank(xs, ys)
        rows.append((method, len(xs), med, res))
    adjusted = holm([r[3].p for r in rows])
    return [
        Comparison(metric, m, reference, n, med, res, padj)
        for (m, n, med, res), padj in zip(rows, adjusted, strict=True)
    ]


def _median(sorted_values: Sequence[float]) -> float:
    n = len(sorted_values)
    if n == 0:
        return math.nan
    mid = n // 2
    return sorted_values[mid] if n % 2 else (sorted_values[mid - 1] + sorted_values[mid]) / 2
