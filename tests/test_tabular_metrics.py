"""Metrics of anonpsy.tabular: a named property per invariant and a hand-computed example per metric."""

from __future__ import annotations

import math

import pytest

np = pytest.importorskip("numpy", reason="the tabular extra (numpy) is not installed")

from hypothesis import example, given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from tests.strategies import coded_table_pairs, item_matrices  # noqa: E402

from anonpsy.tabular import metrics as M  # noqa: E402
from anonpsy.tabular.table import parse_table  # noqa: E402


def codes(*rows: tuple[int, ...]) -> np.ndarray:
    return np.asarray(rows, dtype=np.int64)


# ------------------------------------------------------------------------------------------ Cramér's V (Bergsma)


def test_bergsma_v_matches_the_worked_example() -> None:
    # Worked by hand. Contingency table (rows a1, a2; columns b1, b2, b3), n = 50:
    #   a1: 10  5  5   (row sum 20)
    #   a2:  5 10 15   (row sum 30)     column sums 15, 15, 20
    # Expected counts E = row * col / n:  a1: 6 6 8;  a2: 9 9 12
    # chi2 = 16/6 + 1/6 + 9/8 + 16/9 + 1/9 + 9/12 = 17/6 + 9/8 + 17/9 + 3/4 = (204 + 81 + 136 + 54)/72 = 475/72
    # phi2 = chi2 / n = 475/3600 = 19/144
    # r = 2, k = 3:  phi2~ = 19/144 - (k-1)(r-1)/(n-1) = 19/144 - 2/49 = (931 - 288)/7056 = 643/7056
    # r~ = 2 - 1/49 = 97/49;  k~ = 3 - 4/49 = 143/49;  min(r~ - 1, k~ - 1) = 48/49
    # V~^2 = (643/7056) / (48/49) = 643/(144 * 48) = 643/6912   ->   V~ = sqrt(643/6912) = 0.30500...
    table = np.asarray([[10, 5, 5], [5, 10, 15]], dtype=float)
    assert M.bergsma_v(table)[0] == pytest.approx(math.sqrt(643 / 6912), abs=1e-9)
    # The same table given as rows of codes gives the same V through the pair machinery.
    rows = [(0, 0)] * 10 + [(0, 1)] * 5 + [(0, 2)] * 5 + [(1, 0)] * 5 + [(1, 1)] * 10 + [(1, 2)] * 15
    assert M.cramers_v(codes(*rows), [2, 3])[0, 0] == pytest.approx(math.sqrt(643 / 6912), abs=1e-9)


def test_bergsma_v_uncorrected_part_agrees_with_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    table = np.asarray([[10, 5, 5], [5, 10, 15]])
    v = stats.contingency.association(table, method="cramer", correction=False)
    assert v == pytest.approx(math.sqrt(19 / 144), abs=1e-12)  # the phi2 of the worked example


def test_bergsma_v_of_a_constant_column_is_zero() -> None:
    assert M.bergsma_v(np.asarray([[3.0, 4.0]]))[0] == 0.0


@given(st.lists(st.lists(st.integers(0, 20), min_size=2, max_size=4), min_size=2, max_size=4).filter(
    lambda t: len({len(r) for r in t}) == 1))
def test_bergsma_v_is_bounded_and_symmetric(table: list[list[int]]) -> None:
    t = np.asarray(table, dtype=float)
    v = M.bergsma_v(t)[0]
    assert 0.0 <= v <= 1.0 + 1e-12
    assert M.bergsma_v(t.T)[0] == pytest.approx(v, abs=1e-12)


@given(coded_table_pairs())
def test_cramers_v_mae_of_a_table_with_itself_is_zero(pair: tuple[np.ndarray, np.ndarray, list[int]]) -> None:
    a, _, sizes = pair
    va = M.cramers_v(a, sizes)
    assert np.abs(va - va).mean() == 0.0 if va.size else True


@given(coded_table_pairs())
@example((np.array([[0, 0], [0, 0]]), np.array([[0, 0], [1, 1], [0, 0]]), [2, 4]))  # V of a perfect tie rounded above 1
def test_cramers_v_mae_is_symmetric_and_bounded(pair: tuple[np.ndarray, np.ndarray, list[int]]) -> None:
    a, b, sizes = pair
    va, vb = M.cramers_v(a, sizes), M.cramers_v(b, sizes)
    if va.size:
        mae_ab, mae_ba = np.abs(va - vb).mean(), np.abs(vb - va).mean()
        assert mae_ab == mae_ba
        assert 0.0 <= mae_ab <= 1.0


# ------------------------------------------------------------------------------------------------------- JSD


def test_jsd_hand_example() -> None:
    # P = (1/2, 1/2, 0), Q = (0, 1/2, 1/2); M = (1/4, 1/2, 1/4):
    # KL(P||M) = 1/2 log2(2) + 1/2 log2(1) = 1/2 = KL(Q||M)  ->  JSD = 1/2
    real, syn = codes((0,), (1,)), codes((1,), (2,))
    assert M.jsd(real, syn, [3])[0] == pytest.approx(0.5, abs=1e-12)
    # Dirichlet alpha = 1 over the 3 categories: P = (2, 2, 1)/5, Q = (1, 2, 2)/5, M = (3, 4, 3)/10
    # JSD = 1/2 [2/5 log2(4/3) + 1/5 log2(2/3)] * 2 = 2/5 log2(4/3) + 1/5 log2(2/3)
    want = 0.4 * math.log2(4 / 3) + 0.2 * math.log2(2 / 3)
    assert M.jsd(real, syn, [3], alpha=1.0)[0] == pytest.approx(want, abs=1e-12)


def test_jsd_of_disjoint_columns_is_one() -> None:
    assert M.jsd(codes((0,), (0,)), codes((1,), (1,)), [2])[0] == pytest.approx(1.0)


@given(coded_table_pairs(), st.sampled_from([0.0, 0.5, 1.0]))
def test_jsd_of_a_table_with_itself_is_zero(pair: tuple[np.ndarray, np.ndarray, list[int]], alpha: float) -> None:
    a, _, sizes = pair
    assert M.jsd(a, a, sizes, alpha)[0] == pytest.approx(0.0, abs=1e-12)


@given(coded_table_pairs(), st.sampled_from([0.0, 0.5]))
def test_jsd_is_symmetric_and_bounded(pair: tuple[np.ndarray, np.ndarray, list[int]], alpha: float) -> None:
    a, b, sizes = pair
    ab, ba = M.jsd(a, b, sizes, alpha)[0], M.jsd(b, a, sizes, alpha)[0]
    assert ab == pytest.approx(ba, abs=1e-12)
    assert 0.0 <= ab <= 1.0


# ---------------------------------------------------------------------------------------------------- energy


def test_energy_hand_examples() -> None:
    # One column. R = [a, a], S = [b, b]: E d(R,S) = 1, E d(R,R') = E d(S,S') = 0 -> 2*1 - 0 - 0 = 2
    assert M.energy(codes((0,), (0,)), codes((1,), (1,)), [2])[0] == pytest.approx(2.0)
    # R = [a, b], S = [a, a]: E d(R,S) = (0+0+1+1)/4 = 1/2; E d(R,R') = (0+1+1+0)/4 = 1/2; E d(S,S') = 0
    # -> 2 * 1/2 - 1/2 - 0 = 1/2
    assert M.energy(codes((0,), (1,)), codes((0,), (0,)), [2])[0] == pytest.approx(0.5)
    # Two columns, Hamming normalised by p = 2: R = [(a,x)], S = [(a,y)] -> d = 1/2 -> 2 * 1/2 = 1
    assert M.energy(codes((0, 0)), codes((0, 1)), [1, 2])[0] == pytest.approx(1.0)


@given(coded_table_pairs())
def test_energy_of_a_table_with_itself_is_zero(pair: tuple[np.ndarray, np.ndarray, list[int]]) -> None:
    a, _, sizes = pair
    assert M.energy(a, a, sizes)[0] == pytest.approx(0.0, abs=1e-12)


@given(coded_table_pairs())
def test_energy_is_symmetric_and_bounded(pair: tuple[np.ndarray, np.ndarray, list[int]]) -> None:
    a, b, sizes = pair
    ab, ba = M.energy(a, b, sizes)[0], M.energy(b, a, sizes)[0]
    assert ab == pytest.approx(ba, abs=1e-12)
    assert 0.0 <= ab <= 2.0 + 1e-12


# --------------------------------------------------------------------------------------------------- privacy


def _privacy(real: np.ndarray, syn: np.ndarray, sizes: list[int]) -> dict[str, float]:
    nn = M.nearest_distances(syn, real, sizes)
    out = M.privacy_from(nn, np.zeros(len(syn)), real.shape[1], np.ones((1, len(syn))))
    return {k: float(v[0]) for k, v in out.items()}


def test_privacy_hand_example() -> None:
    # real rows (a,x), (b,y); synthetic rows (a,x), (a,y), (c,z): nearest distances 0, 1/2, 1
    # exact overlap 1/3; share <= 1/p = 1/2: 2/3; inverted-CDF 5th percentile of {0, 1/2, 1}: 0
    real, syn = codes((0, 0), (1, 1)), codes((0, 0), (0, 1), (2, 2))
    got = _privacy(real, syn, [3, 3])
    assert got["exact_overlap"] == pytest.approx(1 / 3)
    assert got["nn_share_1p"] == pytest.approx(2 / 3)
    assert got["nn_p5"] == 0.0
    # Inverted-CDF quantile: with 20 values 0..19 (/20), the 5th percentile is the first value (0.05 * 20 = 1).
    vals = np.arange(20) / 20
    assert M.weighted_quantile_inverted_cdf(vals, np.ones((1, 20)), 0.05)[0] == 0.0
    assert M.weighted_quantile_inverted_cdf(vals, np.ones((1, 20)), 0.06)[0] == pytest.approx(0.05)


def test_kmap_hand_example() -> None:
    # real QI sex = [1, 1, 2]; synthetic [1, 2, 3]: k = 2, 1, 0 -> risks 1/2, 1, 0 -> mean 1/2
    real = parse_table("sex\n1\n1\n2\n", "r")
    syn = parse_table("sex\n1\n2\n3\n", "s")
    assert M.kmap_risk(real, syn, ["sex"]).tolist() == [0.5, 1.0, 0.0]


@given(coded_table_pairs())
def test_exact_overlap_of_a_table_with_itself_is_one(pair: tuple[np.ndarray, np.ndarray, list[int]]) -> None:
    a, _, sizes = pair
    got = _privacy(a, a, sizes)
    assert got["exact_overlap"] == 1.0
    assert got["nn_share_1p"] == 1.0
    assert got["nn_p5"] == 0.0


@given(coded_table_pairs())
def test_privacy_metrics_are_bounded(pair: tuple[np.ndarray, np.ndarray, list[int]]) -> None:
    a, b, sizes = pair
    got = _privacy(a, b, sizes)
    assert 0.0 <= got["exact_overlap"] <= got["nn_share_1p"] <= 1.0
    assert 0.0 <= got["nn_p5"] <= 1.0


@given(st.lists(st.sampled_from("123"), min_size=1, max_size=15), st.lists(st.sampled_from("1234"), min_size=1,
                                                                          max_size=15))
def test_kmap_risk_is_bounded_and_self_risk_counts_classes(real: list[str], syn: list[str]) -> None:
    r = parse_table("sex\n" + "\n".join(real) + "\n", "r")
    s = parse_table("sex\n" + "\n".join(syn) + "\n", "s")
    risk = M.kmap_risk(r, s, ["sex"])
    assert ((risk >= 0) & (risk <= 1)).all()
    assert M.kmap_risk(r, r, ["sex"]).mean() == pytest.approx(len(set(real)) / len(real))


# --------------------------------------------------------------------------------------------- psychometrics


def _cov(x: np.ndarray) -> np.ndarray:
    return M.weighted_cov(x, np.ones((1, len(x))))


def test_alpha_and_item_total_hand_example() -> None:
    # x1 = 0, 1, 2; x2 = 1, 0, 2. Population variances 2/3 each; totals 1, 1, 4 -> variance 2.
    # alpha = 2 * (1 - (2/3 + 2/3) / 2) = 2/3; cov(x1, x2) = 1/3 -> corrected item-total r = (1/3)/(2/3) = 1/2
    x = np.asarray([[0, 1], [1, 0], [2, 2]], dtype=float)
    assert M.cronbach_alpha(_cov(x))[0] == pytest.approx(2 / 3)
    assert M.item_total(_cov(x))[0].tolist() == pytest.approx([0.5, 0.5])


def test_omega_hand_example() -> None:
    # An exact one-factor correlation matrix with loadings 0.8, 0.7, 0.6 (R_ij = l_i l_j off the diagonal):
    # omega = (0.8 + 0.7 + 0.6)^2 / ((2.1)^2 + (0.36 + 0.51 + 0.64)) = 4.41 / 5.92
    lam = np.asarray([0.8, 0.7, 0.6])
    r = np.outer(lam, lam)
    np.fill_diagonal(r, 1.0)
    assert M.one_factor_loadings(r[None])[0] == pytest.approx(lam, abs=1e-5)
    assert M.mcdonald_omega(r[None])[0] == pytest.approx(4.41 / 5.92, abs=1e-5)


@given(item_matrices())
def test_alpha_is_at_most_one(x: np.ndarray) -> None:
    a = M.cronbach_alpha(_cov(x))[0]
    assert math.isnan(a) or a <= 1.0 + 1e-9


@given(item_matrices())
def test_omega_and_item_total_are_bounded(x: np.ndarray) -> None:
    w = M.mcdonald_omega(_cov(x))[0]
    assert math.isnan(w) or -1e-9 <= w <= 1.0 + 1e-9
    itc = M.item_total(_cov(x))[0]
    assert all(math.isnan(v) or -1 - 1e-9 <= v <= 1 + 1e-9 for v in itc)


# --------------------------------------------------------------------------------- weights = resampled tables


@given(coded_table_pairs(), st.data())
def test_weighted_metrics_equal_metrics_of_the_resampled_table(pair: tuple[np.ndarray, np.ndarray, list[int]],
                                                               data: st.DataObject) -> None:
    """The vectorised bootstrap's row-count weights give exactly the metrics of the explicit resample."""
    a, b, sizes = pair
    ia = np.asarray(data.draw(st.lists(st.integers(0, len(a) - 1), min_size=len(a), max_size=len(a))))
    ib = np.asarray(data.draw(st.lists(st.integers(0, len(b) - 1), min_size=len(b), max_size=len(b))))
    wa = np.bincount(ia, minlength=len(a)).astype(float)
    wb = np.bincount(ib, minlength=len(b)).astype(float)
    ra, rb = a[ia], b[ib]
    assert M.jsd(a, b, sizes, 0.5, wa, wb)[0] == pytest.approx(M.jsd(ra, rb, sizes, 0.5)[0], abs=1e-9)
    assert M.energy(a, b, sizes, wa, wb)[0] == pytest.approx(M.energy(ra, rb, sizes)[0], abs=1e-9)
    assert M.cramers_v(a, sizes, wa) == pytest.approx(M.cramers_v(ra, sizes), abs=1e-9)
    x = a.astype(float)
    if x.shape[1] >= 2:
        got = M.weighted_cov(x, wa[None])
        want = M.weighted_cov(x[ia], np.ones((1, len(ia))))
        assert got == pytest.approx(want, abs=1e-9)
