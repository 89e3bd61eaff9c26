"""Fidelity, privacy and psychometric metrics of a synthetic table against a real one (numpy).

Every metric is computed from integer-coded tables (:func:`encode`) and *row weights*: a weight vector of ones
gives the metric of the tables themselves, a vector of bootstrap counts gives the metric of one bootstrap
resample, and a ``(B, n)`` matrix of counts gives ``B`` resamples at once -- the point estimate and the bootstrap
share one implementation, and the bootstrap is a handful of matrix products instead of a Python loop.

Fidelity (real R with ``n_r`` rows, synthetic S with ``n_s`` rows, ``p`` columns):

* :func:`jsd` -- mean over columns of the Jensen–Shannon divergence, base 2, between the column's category
  distributions over the union of both tables' categories, each count smoothed by a Dirichlet ``alpha``
  (``(count + alpha) / (n + alpha * m)``; ``alpha = 0``: empirical). In [0, 1]; 0 iff the distributions agree.
* :func:`cramers_v` -- bias-corrected Cramér's V of every column pair (Bergsma W. J Korean Stat Soc
  2013;42:323-328): ``phi2 = chi2 / n``; ``phi2~ = max(0, phi2 - (k-1)(r-1)/(n-1))``;
  ``r~ = r - (r-1)^2/(n-1)``, ``k~ = k - (k-1)^2/(n-1)``; ``V~ = sqrt(phi2~ / min(k~-1, r~-1))`` with ``r``, ``k``
  the numbers of categories observed in the pair. A pair with a constant column has no association: 0.
  The fidelity metric is the mean absolute difference of the two tables' V~ over all pairs (in [0, 1]).
* :func:`energy` -- squared energy distance (V-statistic) with the normalised Hamming distance
  ``d(x, y) = #{j: x_j != y_j} / p``: ``2 E d(R, S) - E d(R, R') - E d(S, S')``; 0 for identical tables, in [0, 2].

Privacy (the real table fixed as the population to protect; per synthetic row, then averaged):

* exact overlap -- share of synthetic rows identical to some real row (1 for a table against itself);
* nearest-neighbour distance -- the normalised Hamming distance from each synthetic row to its closest real row:
  its 5th percentile (inverted-CDF quantile, one of the observed distances) and the share ``<= 1/p`` (rows that
  differ from some real row in at most one column);
* average k-map risk on the quasi-identifiers -- ``1/k`` where ``k`` real rows share the synthetic row's
  quasi-identifier values, 0 when none does.

Psychometrics (item columns, complete rows): Cronbach's alpha, McDonald's omega (total) from a one-factor
principal-axis solution of the item correlation matrix, corrected item–total correlations, and the share of rows
at or above the instrument's cut-off.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anonpsy.tabular.table import Table

F = NDArray[np.float64]
IntArr = NDArray[np.int64]
NA = "NA"


# ----------------------------------------------------------------------------------------------------- encoding


@dataclass
class Encoded:
    """Integer codes of several tables over shared categories: ``codes[i]`` is ``(n_i, p)``; column ``j`` has
    ``sizes[j]`` categories labelled ``labels[j]``; ``bins[col]`` the edges of a binned numeric column."""

    columns: list[str]
    sizes: list[int]
    labels: list[list[str]]
    codes: list[IntArr]
    bins: dict[str, list[float]]


def _bin_edges(values: Sequence[float], n_bins: int) -> list[float]:
    qs = np.quantile(np.asarray(values, dtype=float), np.linspace(0, 1, n_bins + 1)[1:-1])
    return sorted(set(float(q) for q in qs))


def encode(tables: Sequence[Table], columns: Sequence[str], *, max_categories: int = 20, n_bins: int = 10) -> Encoded:
    """Code ``columns`` of ``tables`` over the union of their categories. A numeric column with more than
    ``max_categories`` distinct values is binned at the first table's deciles (open-ended outer bins); missing
    cells are the category ``NA``."""
    sizes, labels, codes_cols, bins = [], [], [], {}
    for col in columns:
        kinds = {t.kind(col) for t in tables} - {"empty"}
        numeric = bool(kinds) and kinds <= {"integer", "numeric"}
        distinct = sorted({v for t in tables for v in t.values(col) if v is not None},
                          key=(lambda v: float(v)) if numeric else (lambda v: v))
        per_table: list[list[int]] = []
        if numeric and len(distinct) > max_categories:
            ref = [x for x in tables[0].numbers(col) if x is not None]
            edges = _bin_edges(ref or [float(v) for v in distinct], n_bins)
            bins[col] = edges
            if edges:
                lab = [f"<={edges[0]:g}", *(f"({a:g},{b:g}]" for a, b in pairwise(edges)), f">{edges[-1]:g}"]
            else:
                lab = ["all"]
            arr_edges = np.asarray(edges)
            for t in tables:
                nums = t.numbers(col)
                per_table.append([len(lab) if x is None else int(np.searchsorted(arr_edges, x, side="left"))
                                  for x in nums])
        else:
            lab = list(distinct)
            index = {v: i for i, v in enumerate(lab)}
            for t in tables:
                per_table.append([len(lab) if v is None else index[v] for v in t.values(col)])
        if any(len(lab) in row for row in per_table):
            lab = [*lab, NA]
        sizes.append(max(len(lab), 1))
        labels.append(lab)
        codes_cols.append(per_table)
    codes = [np.asarray([codes_cols[j][i] for j in range(len(columns))], dtype=np.int64).T.reshape(
        tables[i].n_rows, len(columns)) for i in range(len(tables))]
    return Encoded(list(columns), sizes, labels, codes, bins)


def onehot(codes: IntArr, sizes: Sequence[int]) -> NDArray[np.float32]:
    """``(n, sum(sizes))`` indicator matrix of the categories of every column."""
    n, _ = codes.shape
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    out = np.zeros((n, int(np.sum(sizes))), dtype=np.float32)
    rows = np.repeat(np.arange(n), codes.shape[1])
    out[rows, (codes + offsets).ravel()] = 1.0
    return out


def as_weights(w: Any, n: int) -> F:
    """Row weights as a ``(B, n)`` float array (``None`` = one unweighted table)."""
    if w is None:
        return np.ones((1, n))
    arr = np.asarray(w, dtype=float)
    return arr.reshape(1, n) if arr.ndim == 1 else arr


# ------------------------------------------------------------------------------------------------------ fidelity


def column_counts(onehot_matrix: NDArray[np.float32], w: F) -> F:
    """Category counts ``(B, M)`` of every column under row weights ``w``."""
    return np.asarray(w.astype(np.float32) @ onehot_matrix, dtype=float)


def jsd_from_counts(cr: F, cs: F, sizes: Sequence[int], alpha: float = 0.0) -> F:
    """Per-column Jensen–Shannon divergence (base 2), ``(B, p)``, from category counts ``(B, M)``."""
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    m_of = np.repeat(np.asarray(sizes, dtype=float), sizes)

    def dist(c: F) -> F:
        n = np.add.reduceat(c, starts, axis=1)
        n_of = np.repeat(n, sizes, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n_of + alpha * m_of > 0, (c + alpha) / (n_of + alpha * m_of), 0.0)

    p, q = dist(cr), dist(cs)
    m = (p + q) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        tp = np.where(p > 0, p * np.log2(np.where(p > 0, p, 1) / np.where(m > 0, m, 1)), 0.0)
        tq = np.where(q > 0, q * np.log2(np.where(q > 0, q, 1) / np.where(m > 0, m, 1)), 0.0)
    out = np.add.reduceat(0.5 * (tp + tq), starts, axis=1)
    return np.clip(out, 0.0, 1.0)


def jsd(r: IntArr, s: IntArr, sizes: Sequence[int], alpha: float = 0.0, wr: Any = None, ws: Any = None) -> F:
    """Mean per-column JSD, one value per weight row."""
    oh_r, oh_s = onehot(r, sizes), onehot(s, sizes)
    per = jsd_from_counts(column_counts(oh_r, as_weights(wr, len(r))),
                          column_counts(oh_s, as_weights(ws, len(s))), sizes, alpha)
    return np.asarray(per.mean(axis=1))


def pair_onehot(codes: IntArr, sizes: Sequence[int]) -> tuple[NDArray[np.float32], list[tuple[int, int, int]]]:
    """Indicator matrix of the joint categories of every column pair, and ``(a, b, offset)`` per pair."""
    n, p = codes.shape
    blocks, pairs, offset = [], [], 0
    for a in range(p):
        for b in range(a + 1, p):
            cells = sizes[a] * sizes[b]
            block = np.zeros((n, cells), dtype=np.float32)
            block[np.arange(n), codes[:, a] * sizes[b] + codes[:, b]] = 1.0
            blocks.append(block)
            pairs.append((a, b, offset))
            offset += cells
    if not blocks:
        return np.zeros((n, 0), dtype=np.float32), []
    return np.concatenate(blocks, axis=1), pairs


def bergsma_v(table: F) -> F:
    """Bias-corrected Cramér's V of contingency tables ``(B, r, k)`` of counts (see the module docstring)."""
    t = np.asarray(table, dtype=float)
    if t.ndim == 2:
        t = t[None]
    n = t.sum(axis=(1, 2))
    rows, cols = t.sum(axis=2), t.sum(axis=1)
    r = (rows > 0).sum(axis=1).astype(float)
    k = (cols > 0).sum(axis=1).astype(float)
    expected = rows[:, :, None] * cols[:, None, :] / np.where(n > 0, n, 1)[:, None, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        chi2 = np.where(expected > 0, (t - expected) ** 2 / np.where(expected > 0, expected, 1), 0.0).sum(axis=(1, 2))
        nm1 = np.where(n > 1, n - 1, np.nan)
        phi2 = chi2 / np.where(n > 0, n, np.nan)
        phi2c = np.maximum(0.0, phi2 - (k - 1) * (r - 1) / nm1)
        rc = r - (r - 1) ** 2 / nm1
        kc = k - (k - 1) ** 2 / nm1
        denom = np.minimum(rc - 1, kc - 1)
        v = np.where((denom > 0) & (r > 1) & (k > 1), np.sqrt(phi2c / np.where(denom > 0, denom, 1)), 0.0)
    # V is bounded by 1; a perfect association can round to 1 + 2⁻⁵² in the divisions above
    return np.asarray(np.clip(np.nan_to_num(v, nan=0.0), 0.0, 1.0))


def cramers_v_from_counts(counts: F, pairs: Sequence[tuple[int, int, int]], sizes: Sequence[int]) -> F:
    """``(B, n_pairs)`` bias-corrected V of every pair from joint counts ``(B, cells)``."""
    out = np.empty((counts.shape[0], len(pairs)))
    for i, (a, b, off) in enumerate(pairs):
        block = counts[:, off:off + sizes[a] * sizes[b]].reshape(-1, sizes[a], sizes[b])
        out[:, i] = bergsma_v(block)
    return out


def cramers_v(codes: IntArr, sizes: Sequence[int], w: Any = None) -> F:
    """``(B, n_pairs)`` bias-corrected V of every column pair (pairs in row-major order a < b)."""
    oh, pairs = pair_onehot(codes, sizes)
    counts = np.asarray(as_weights(w, len(codes)).astype(np.float32) @ oh, dtype=float)
    return cramers_v_from_counts(counts, pairs, sizes)


def v_matrix(values: F, p: int) -> F:
    """Square symmetric matrix (diagonal 1) from the pair vector of :func:`cramers_v`."""
    m = np.eye(p)
    iu = np.triu_indices(p, 1)
    m[iu] = values
    m[(iu[1], iu[0])] = values
    return m


def hamming(x: IntArr, y: IntArr, sizes: Sequence[int]) -> F:
    """``(n_x, n_y)`` normalised Hamming distances between the rows of two coded tables."""
    p = x.shape[1]
    matches = onehot(x, sizes).astype(np.float64) @ onehot(y, sizes).astype(np.float64).T
    return np.asarray(1.0 - matches / p)


def energy_from(d_rs: F, d_rr: F, d_ss: F, wr: F, ws: F) -> F:
    """Squared energy distance (V-statistic) under row weights, from precomputed distance matrices."""
    nr, ns = wr.sum(axis=1), ws.sum(axis=1)
    e_rs = ((wr @ d_rs) * ws).sum(axis=1) / (nr * ns)
    e_rr = ((wr @ d_rr) * wr).sum(axis=1) / (nr * nr)
    e_ss = ((ws @ d_ss) * ws).sum(axis=1) / (ns * ns)
    return np.asarray(np.maximum(2 * e_rs - e_rr - e_ss, 0.0))


def energy(r: IntArr, s: IntArr, sizes: Sequence[int], wr: Any = None, ws: Any = None) -> F:
    return energy_from(hamming(r, s, sizes), hamming(r, r, sizes), hamming(s, s, sizes),
                       as_weights(wr, len(r)), as_weights(ws, len(s)))


# ------------------------------------------------------------------------------------------------------- privacy


def nearest_distances(s: IntArr, r: IntArr, sizes: Sequence[int]) -> F:
    """Per synthetic row, the normalised Hamming distance to its closest real row."""
    return np.asarray(hamming(s, r, sizes).min(axis=1))


def weighted_quantile_inverted_cdf(values: F, w: F, q: float) -> F:
    """Inverted-CDF quantile of ``values`` under each row of weights ``w`` (``(B, n)``)."""
    order = np.argsort(values, kind="stable")
    v = values[order]
    cw = np.cumsum(w[:, order], axis=1)
    target = q * w.sum(axis=1, keepdims=True)
    idx = np.argmax(cw >= target - 1e-9, axis=1)
    return np.asarray(v[idx])


def privacy_from(nn: F, risk: F, p: int, ws: F) -> dict[str, F]:
    """Exact overlap, NN 5th percentile, share within 1/p and mean k-map risk under synthetic-row weights."""
    ns = ws.sum(axis=1)
    return {
        "exact_overlap": (ws @ (nn <= 1e-12).astype(float)) / ns,
        "nn_p5": weighted_quantile_inverted_cdf(nn, ws, 0.05),
        "nn_share_1p": (ws @ (nn <= 1.0 / p + 1e-12).astype(float)) / ns,
        "kmap_risk": (ws @ risk) / ns,
    }


def kmap_risk(real: Table, syn: Table, qi: Sequence[str]) -> F:
    """Per synthetic row ``1/k`` (``k`` real rows with the same quasi-identifier values) or 0."""
    from collections import Counter

    def key(t: Table, i: int) -> tuple[str | None, ...]:
        return tuple(t.values(c)[i] for c in qi)

    counts = Counter(key(real, i) for i in range(real.n_rows))
    return np.asarray([1.0 / counts[k] if counts.get(k) else 0.0
                       for k in (key(syn, i) for i in range(syn.n_rows))], dtype=float)


# ------------------------------------------------------------------------------------------------- psychometrics


def weighted_cov(x: F, w: F) -> F:
    """``(B, k, k)`` covariance matrices of the item matrix ``x`` (``(n, k)``) under row weights (divisor n)."""
    n = w.sum(axis=1)
    mean = (w @ x) / n[:, None]
    second = np.einsum("bn,ni,nj->bij", w, x, x, optimize=True) / n[:, None, None]
    return np.asarray(second - mean[:, :, None] * mean[:, None, :])


def cronbach_alpha(cov: F) -> F:
    """``k/(k-1) * (1 - sum(item variances) / variance of the total)``; NaN when the total does not vary."""
    k = cov.shape[-1]
    total = cov.sum(axis=(1, 2))
    items = np.trace(cov, axis1=1, axis2=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = k / (k - 1) * (1 - items / total)
    return np.asarray(np.where(total > 1e-12, out, np.nan))


def correlation(cov: F) -> F:
    sd = np.sqrt(np.clip(np.diagonal(cov, axis1=1, axis2=2), 0, None))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(cov / (sd[:, :, None] * sd[:, None, :]))


def one_factor_loadings(corr: F, iterations: int = 200, tol: float = 1e-7) -> F:
    """Principal-axis loadings ``(B, k)`` of one factor (communalities start at the squared multiple
    correlations, capped at 0.995). Matrices with a non-varying item give NaN."""
    b, k, _ = corr.shape
    ok = np.asarray(np.isfinite(corr).all(axis=(1, 2)), dtype=bool)
    r = np.where(ok[:, None, None], corr, np.eye(k)[None])
    try:
        inv_diag = np.diagonal(np.linalg.pinv(r), axis1=1, axis2=2)
        h2 = np.clip(1 - 1 / np.where(inv_diag > 0, inv_diag, np.inf), 0.0, 0.995)
    except np.linalg.LinAlgError:
        h2 = np.full((b, k), 0.5)
    lam = np.zeros((b, k))
    for _ in range(iterations):
        rh = r.copy()
        idx = np.arange(k)
        rh[:, idx, idx] = h2
        vals, vecs = np.linalg.eigh(rh)
        lam = vecs[:, :, -1] * np.sqrt(np.clip(vals[:, -1], 0, None))[:, None]
        new = np.clip(lam**2, 0.0, 0.995)
        if np.nanmax(np.abs(new - h2)) < tol:
            h2 = new
            break
        h2 = new
    lam = lam * np.where(lam.sum(axis=1, keepdims=True) < 0, -1.0, 1.0)
    return np.asarray(np.where(ok[:, None], lam, np.nan))


def mcdonald_omega(cov: F) -> F:
    """Omega total of a one-factor model on the item correlations: ``(sum l)^2 / ((sum l)^2 + sum(1 - l^2))``."""
    lam = one_factor_loadings(correlation(cov))
    s = lam.sum(axis=1) ** 2
    u = (1 - lam**2).sum(axis=1)
    return np.asarray(s / (s + u))


def item_total(cov: F) -> F:
    """``(B, k)`` corrected item–total correlations ``r(x_i, T - x_i)`` from covariance matrices."""
    total_cov = cov.sum(axis=2)
    diag = np.diagonal(cov, axis1=1, axis2=2)
    cov_rest = total_cov - diag
    var_rest = cov.sum(axis=(1, 2))[:, None] - 2 * total_cov + diag
    with np.errstate(invalid="ignore", divide="ignore"):
        out = cov_rest / np.sqrt(diag * var_rest)
    return np.asarray(np.where((diag > 1e-12) & (var_rest > 1e-12), out, np.nan))
