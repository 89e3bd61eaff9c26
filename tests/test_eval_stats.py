"""Each statistics wrapper against scipy / statsmodels on a small fixed sample; degenerate inputs."""

from __future__ import annotations

import math

import pytest

pytest.importorskip(
    "scipy", exc_type=ImportError, reason="needs the eval extra: run .ci/eval.sh"
)
pytest.importorskip(
    "statsmodels", exc_type=ImportError, reason="needs the eval extra: run .ci/eval.sh"
)

import numpy as np
from scipy import stats as sps
from statsmodels.stats.contingency_tables import cochrans_q as sm_cochrans_q
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from anonpsy.evaluate import stats as S

X = [0.91, 0.85, 0.88, 0.95, 0.79, 0.83, 0.90, 0.87, 0.93, 0.81]
Y = [0.62, 0.70, 0.58, 0.66, 0.73, 0.61, 0.69, 0.64, 0.71, 0.60]
Z = [0.75, 0.72, 0.80, 0.70, 0.74, 0.79, 0.77, 0.69, 0.82, 0.76]


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_wilcoxon_matches_scipy(alternative: S.Alternative) -> None:
    got = S.wilcoxon_signed_rank(X, Y, alternative=alternative)
    want = sps.wilcoxon(X, Y, alternative=alternative)
    assert got.statistic == pytest.approx(want.statistic)
    assert got.p == pytest.approx(want.pvalue)
    assert (got.n, got.test, got.alternative, got.reason) == (10, "wilcoxon", alternative, None)


def test_wilcoxon_drops_zero_differences_and_nan_pairs() -> None:
    got = S.wilcoxon_signed_rank([1.0, 2.0, 3.0, 4.0, math.nan], [1.0, 1.0, 1.0, 1.0, 0.0])
    assert got.n == 3
    assert got.p == pytest.approx(sps.wilcoxon([1.0, 2.0, 3.0]).pvalue)


def test_wilcoxon_all_ties_is_nan_with_reason() -> None:
    got = S.wilcoxon_signed_rank([1, 2, 3], [1, 2, 3])
    assert math.isnan(got.p) and math.isnan(got.statistic) and not got.ok
    assert got.reason == "all paired differences are zero"


def test_friedman_matches_scipy() -> None:
    got = S.friedman([X, Y, Z])
    want = sps.friedmanchisquare(X, Y, Z)
    assert got.statistic == pytest.approx(want.statistic) and got.p == pytest.approx(want.pvalue)
    assert got.n == 10


def test_friedman_degenerate() -> None:
    assert S.friedman([X, Y]).reason == "needs at least 3 related samples"
    assert S.friedman([[1, 1], [1, 1], [1, 1]]).reason == "all values tie within every case"
    assert S.friedman([[1], [2], [3]]).reason == "needs at least 2 complete cases"


def test_cochrans_q_matches_statsmodels() -> None:
    rows = [[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 0, 1], [1, 0, 0]]
    got = S.cochrans_q(rows)
    want = sm_cochrans_q(np.asarray(rows))
    assert got.statistic == pytest.approx(want.statistic) and got.p == pytest.approx(want.pvalue)
    assert S.cochrans_q([[1, 1], [0, 0]]).reason == "no case differs across methods"


def test_mcnemar_matches_statsmodels() -> None:
    a = [1, 1, 1, 1, 1, 1, 0, 0, 1, 0]
    b = [0, 0, 0, 0, 1, 0, 0, 1, 1, 0]
    got = S.mcnemar(a, b)
    want = sm_mcnemar([[2, 5], [1, 2]], exact=True)
    assert got.test == "mcnemar_exact"
    assert got.p == pytest.approx(want.pvalue) and got.statistic == pytest.approx(want.statistic)
    chi = S.mcnemar(a, b, exact=False)
    assert chi.p == pytest.approx(sm_mcnemar([[2, 5], [1, 2]], exact=False, correction=True).pvalue)
    assert S.mcnemar([1, 0], [1, 0]).reason == "no discordant pairs"
    with pytest.raises(ValueError):
        S.mcnemar([2], [1])


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_mann_whitney_matches_scipy(alternative: S.Alternative) -> None:
    got = S.mann_whitney_u(X, Z, alternative=alternative)
    want = sps.mannwhitneyu(X, Z, alternative=alternative)
    assert got.statistic == pytest.approx(want.statistic) and got.p == pytest.approx(want.pvalue)
    assert got.n == 20


def test_mann_whitney_degenerate() -> None:
    assert S.mann_whitney_u([], [1.0]).reason == "a sample is empty"
    assert S.mann_whitney_u([2, 2], [2, 2, 2]).reason == "all values tie"


def test_binomial_matches_scipy() -> None:
    got = S.binomial_test(8, 10, 0.5, alternative="greater")
    assert got.p == pytest.approx(sps.binomtest(8, 10, 0.5, alternative="greater").pvalue)
    assert got.statistic == 0.8
    assert S.binomial_test(0, 0).reason == "no trials"


def test_holm_on_known_pvalues() -> None:
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06
    assert S.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    out = S.holm([0.02, math.nan, 0.5])
    assert out[0] == pytest.approx(0.04) and math.isnan(out[1]) and out[2] == pytest.approx(0.5)
    assert S.holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])  # 0.8 * 2 is capped at 1


def test_bootstrap_is_seeded_and_matches_scipy() -> None:
    a = S.bootstrap_ci(X, n_resamples=2000, seed=7)
    b = S.bootstrap_ci(X, n_resamples=2000, seed=7)
    assert a == b
    want = sps.bootstrap(
        (np.asarray(X),), np.mean, n_resamples=2000, method="percentile", rng=np.random.default_rng(7)
    )
    assert a.low == pytest.approx(want.confidence_interval.low)
    assert a.high == pytest.approx(want.confidence_interval.high)
    assert a.estimate == pytest.approx(np.mean(X))
    assert a.low < a.estimate < a.high


def test_bootstrap_degenerate() -> None:
    assert S.bootstrap_ci([1.0]).reason is not None
    const = S.bootstrap_ci([0.5] * 5, n_resamples=200)
    assert (const.low, const.high) == (0.5, 0.5)
    bca = S.bootstrap_ci([0.5] * 5, n_resamples=200, method="BCa")
    assert math.isnan(bca.low) and bca.reason is not None


def test_compare_to_reference_holm_corrects_across_methods() -> None:
    comps = S.compare_to_reference("cosine", {"ref": X, "m1": Y, "m2": Z}, "ref")
    raw = [c.result.p for c in comps]
    assert [c.method for c in comps] == ["m1", "m2"]
    assert [c.p_holm for c in comps] == pytest.approx(S.holm(raw))
    assert comps[0].median_difference == pytest.approx(float(np.median(np.subtract(Y, X))))
