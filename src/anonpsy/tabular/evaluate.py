"""``anonpsy tabular evaluate``: every metric of :mod:`anonpsy.tabular.metrics` for one or more synthetic tables
against a real one, with bootstrap confidence intervals and paired deltas between synthetic tables.

The schema audit (:mod:`anonpsy.tabular.audit`) runs first and stops the evaluation on any mismatch.

Bootstrap: ``scipy.stats.bootstrap`` resamples row indices of every table independently (``n_boot`` replicates,
seeded) and calls one vectorised statistic with all replicates at once; the statistic turns index matrices into
row-count weights and evaluates every metric as matrix products (see :mod:`.metrics`). Fidelity metrics and
psychometrics resample the real and the synthetic rows; privacy metrics keep the real table fixed (it is the
population being protected) and resample the synthetic rows. A paired delta ``B - A`` between two synthetic
tables is computed within each replicate, on the same real resample, so its interval reflects the comparison
itself. Intervals are percentile (default) or basic; a replicate where a statistic is undefined (e.g. alpha of a
resample whose total never varies) is left out of that interval and counted.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from anonpsy import errors
from anonpsy.errors import AnonpsyError
from anonpsy.tabular import metrics as M
from anonpsy.tabular.audit import AuditReport
from anonpsy.tabular.instruments import Instrument
from anonpsy.tabular.table import Table

#: key, label, group, which direction is better for a synthetic table
METRICS: tuple[tuple[str, str, str, str], ...] = (
    ("jsd", "Mean Jensen–Shannon divergence (base 2)", "fidelity", "lower"),
    ("cramers_v_mae", "MAE of bias-corrected Cramér's V", "fidelity", "lower"),
    ("energy", "Squared energy distance (normalised Hamming)", "fidelity", "lower"),
    ("exact_overlap", "Exact overlap (share of rows copying a real row)", "privacy", "lower"),
    ("nn_p5", "Nearest-neighbour Hamming distance, 5th percentile", "privacy", "higher"),
    ("nn_share_1p", "Share of rows within 1/p of a real row", "privacy", "lower"),
    ("kmap_risk", "Average k-map risk on the quasi-identifiers", "privacy", "lower"),
)
PSYCHOMETRICS: tuple[tuple[str, str], ...] = (
    ("alpha", "Cronbach's α"),
    ("omega", "McDonald's ω (one factor)"),
    ("item_total", "Mean corrected item–total r"),
    ("prevalence", "Share at or above the cut-off"),
)
ITEM_RE = re.compile(r"^item_\d+$")
CIMethod = Literal["percentile", "basic"]


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float
    high: float
    n_valid: int

    def as_dict(self) -> dict[str, Any]:
        def f(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 6)

        return {"estimate": f(self.value), "low": f(self.low), "high": f(self.high), "replicates": self.n_valid}


@dataclass
class SynResult:
    name: str
    n_rows: int
    metrics: dict[str, Estimate]
    psychometrics: dict[str, Estimate]
    psych_delta: dict[str, Estimate]
    item_total: list[float]
    v_pairs: list[float]


@dataclass
class EvalResult:
    real: str
    n_real: int
    columns: list[str]
    item_columns: list[str]
    qi: list[str]
    instrument: str | None
    cutoff: int | None
    alpha_smoothing: float
    n_boot: int
    level: float
    method: str
    seed: int
    real_psychometrics: dict[str, Estimate]
    real_item_total: list[float]
    v_real: list[float]
    synthetic: list[SynResult]
    deltas: dict[str, dict[str, Estimate]]
    audit: AuditReport
    distributions: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    labels: dict[str, list[str]] = field(default_factory=dict)
    bins: dict[str, list[float]] = field(default_factory=dict)


def _counts(idx: Any, n: int) -> np.ndarray:
    arr = np.asarray(idx, dtype=np.int64)
    if arr.ndim == 1:
        arr = arr[None]
    b = arr.shape[0]
    flat = (arr + (np.arange(b, dtype=np.int64) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=b * n).reshape(b, n).astype(float)


def item_columns_for(table: Table, instrument: Instrument | None) -> list[str]:
    if instrument is not None:
        return list(instrument.columns)
    return [c for c in table.columns if ITEM_RE.match(c)]


def _item_matrix(table: Table, items: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Complete rows of the item columns as floats, and their row indices (non-numeric cells count as missing)."""
    cols = [table.numbers(c) for c in items]
    rows, keep = [], []
    for i in range(table.n_rows):
        vals = [col[i] for col in cols]
        if all(v is not None for v in vals):
            rows.append(vals)
            keep.append(i)
    x = np.asarray(rows, dtype=float).reshape(len(rows), len(items))
    return x, np.asarray(keep, dtype=np.int64)


def _prevalence_vectors(table: Table, instrument: Instrument | None) -> tuple[np.ndarray, np.ndarray] | None:
    if instrument is None:
        return None
    cols = [table.values(c) for c in instrument.columns]
    above, valid = [], []
    for i in range(table.n_rows):
        answers: list[int | None] = []
        for col in cols:
            v = col[i]
            answers.append(None if v is None else int(float(v)))
        res = instrument.score(answers)
        valid.append(1.0 if res.ok else 0.0)
        above.append(1.0 if res.ok and res.above_cutoff else 0.0)
    return np.asarray(above), np.asarray(valid)


class _Side:
    """Precomputed matrices of one table for the vectorised statistic."""

    def __init__(self, table: Table, codes: np.ndarray, enc: M.Encoded, items: Sequence[str],
                 instrument: Instrument | None) -> None:
        self.n = table.n_rows
        self.oh = M.onehot(codes, enc.sizes)
        self.poh, self.pairs = M.pair_onehot(codes, enc.sizes)
        self.x: np.ndarray
        self.complete: np.ndarray
        self.x, self.complete = _item_matrix(table, items) if items else (np.zeros((0, 0)), np.zeros(0, np.int64))
        self.prev = _prevalence_vectors(table, instrument)

    def psychometrics(self, w: np.ndarray) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        b = w.shape[0]
        if self.x.shape[1] >= 2 and len(self.complete) >= 3:
            wc = w[:, self.complete]
            ok = wc.sum(axis=1) > 2
            cov = M.weighted_cov(self.x, np.where(ok[:, None], wc, 1.0))
            out["alpha"] = np.where(ok, M.cronbach_alpha(cov), np.nan)
            out["omega"] = np.where(ok, M.mcdonald_omega(cov), np.nan)
            itc = M.item_total(cov)
            out["item_total_items"] = itc
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                out["item_total"] = np.where(ok, np.nanmean(itc, axis=1), np.nan)
        else:
            for k in ("alpha", "omega", "item_total"):
                out[k] = np.full(b, np.nan)
        if self.prev is not None:
            above, valid = self.prev
            denom = w @ valid
            with np.errstate(invalid="ignore", divide="ignore"):
                out["prevalence"] = np.where(denom > 0, (w @ above) / np.where(denom > 0, denom, 1), np.nan)
        else:
            out["prevalence"] = np.full(b, np.nan)
        return out


class _Evaluator:
    def __init__(self, real: Table, syns: Sequence[Table], columns: Sequence[str], items: Sequence[str],
                 qi: Sequence[str], instrument: Instrument | None, alpha: float) -> None:
        self.enc = M.encode([real, *syns], columns)
        self.p = len(columns)
        self.alpha = alpha
        self.real = _Side(real, self.enc.codes[0], self.enc, items, instrument)
        self.syns = [_Side(s, self.enc.codes[i + 1], self.enc, items, instrument) for i, s in enumerate(syns)]
        sizes = self.enc.sizes
        r_codes = self.enc.codes[0]
        self.d_rr = M.hamming(r_codes, r_codes, sizes)
        self.d_rs, self.d_ss, self.nn, self.risk = [], [], [], []
        for i, s in enumerate(syns):
            s_codes = self.enc.codes[i + 1]
            d_rs = M.hamming(r_codes, s_codes, sizes)
            self.d_rs.append(d_rs)
            self.d_ss.append(M.hamming(s_codes, s_codes, sizes))
            self.nn.append(d_rs.min(axis=0))
            self.risk.append(M.kmap_risk(real, s, qi) if qi else np.zeros(s.n_rows))
        self.has_qi = bool(qi)
        self.keys: list[str] = []

    def statistic(self, *idx: Any, axis: int = -1) -> np.ndarray:
        single = np.asarray(idx[0]).ndim == 1
        wr = _counts(idx[0], self.real.n)
        ws = [_counts(i, side.n) for i, side in zip(idx[1:], self.syns, strict=True)]
        cr = M.column_counts(self.real.oh, wr)
        v_r = M.cramers_v_from_counts(np.asarray(wr.astype(np.float32) @ self.real.poh, dtype=float),
                                      self.real.pairs, self.enc.sizes)
        psych_r = self.real.psychometrics(wr)
        out: dict[str, np.ndarray] = {f"real.{k}": v for k, v in psych_r.items() if k != "item_total_items"}
        per_syn: list[dict[str, np.ndarray]] = []
        for k, (side, w) in enumerate(zip(self.syns, ws, strict=True)):
            cs = M.column_counts(side.oh, w)
            v_s = M.cramers_v_from_counts(np.asarray(w.astype(np.float32) @ side.poh, dtype=float), side.pairs,
                                          self.enc.sizes)
            m: dict[str, np.ndarray] = {
                "jsd": M.jsd_from_counts(cr, cs, self.enc.sizes, self.alpha).mean(axis=1),
                "cramers_v_mae": np.abs(v_r - v_s).mean(axis=1) if v_r.shape[1] else np.zeros(len(w)),
                "energy": M.energy_from(self.d_rs[k], self.d_rr, self.d_ss[k], wr, w),
            }
            priv = M.privacy_from(self.nn[k], self.risk[k], self.p, w)
            if not self.has_qi:
                priv["kmap_risk"] = np.full(len(w), np.nan)
            m.update(priv)
            psych = side.psychometrics(w)
            for key, _ in PSYCHOMETRICS:
                m[f"psych.{key}"] = psych[key]
                m[f"psych_delta.{key}"] = psych[key] - psych_r[key]
            per_syn.append(m)
            for key, v in m.items():
                out[f"syn{k}.{key}"] = v
        for a in range(len(per_syn)):
            for b in range(a + 1, len(per_syn)):
                for key, _, _, _ in METRICS:
                    out[f"delta{a}_{b}.{key}"] = per_syn[b][key] - per_syn[a][key]
                for key, _ in PSYCHOMETRICS:
                    out[f"delta{a}_{b}.psych.{key}"] = per_syn[b][f"psych.{key}"] - per_syn[a][f"psych.{key}"]
        self.keys = list(out)
        stacked = np.stack([np.broadcast_to(np.asarray(v, dtype=float), (wr.shape[0],)) for v in out.values()])
        return stacked[:, 0] if single else stacked


def _interval(dist: np.ndarray, estimate: float, level: float, method: CIMethod) -> tuple[float, float, int]:
    finite = dist[np.isfinite(dist)]
    if len(finite) < 2 or math.isnan(estimate):
        return math.nan, math.nan, len(finite)
    lo_q, hi_q = (1 - level) / 2 * 100, (1 + level) / 2 * 100
    lo, hi = np.percentile(finite, [lo_q, hi_q])
    if method == "basic":
        lo, hi = 2 * estimate - hi, 2 * estimate - lo
    return float(lo), float(hi), len(finite)


def evaluate_tables(
    real: Table,
    synthetic: Sequence[Table],
    audit: AuditReport,
    *,
    instrument: Instrument | None = None,
    qi: Sequence[str] = ("sex", "age"),
    alpha: float = 0.0,
    n_boot: int = 1000,
    level: float = 0.95,
    method: CIMethod = "percentile",
    seed: int = 0,
) -> EvalResult:
    """Evaluate ``synthetic`` against ``real`` (the audit must have passed)."""
    try:
        from scipy import stats
    except ImportError:
        from anonpsy.tabular.kb import missing_tabular_extra

        raise missing_tabular_extra("scipy (bootstrap confidence intervals)") from None
    if not audit.ok:
        raise AnonpsyError(errors.T100_SCHEMA_MISMATCH, audit.errors[0].one_line())
    if not synthetic:
        raise AnonpsyError(errors.E109_BAD_OPTION, "give at least one synthetic table", "SYN.csv")
    if not 0 < level < 1:
        raise AnonpsyError(errors.E109_BAD_OPTION, "the confidence level must lie in (0, 1)", "--level")
    if alpha < 0:
        raise AnonpsyError(errors.E109_BAD_OPTION, "the smoothing alpha must be >= 0", "--alpha")
    for t in (real, *synthetic):
        if t.n_rows < 2:
            raise AnonpsyError(errors.T103_TOO_FEW_ROWS, "a table needs at least 2 rows", t.name)
    columns = list(real.columns)
    missing_qi = [c for c in qi if c not in columns]
    if missing_qi:
        raise AnonpsyError(errors.E109_BAD_OPTION, f"quasi-identifier columns {missing_qi} are not in the tables",
                           "--qi")
    items = item_columns_for(real, instrument)
    ev = _Evaluator(real, synthetic, columns, items, list(qi), instrument, alpha)
    data = [np.arange(real.n_rows)] + [np.arange(s.n_rows) for s in synthetic]
    estimate = ev.statistic(*data)
    if n_boot > 0:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = stats.bootstrap(data, ev.statistic, n_resamples=n_boot, vectorized=True, paired=False,
                                  confidence_level=level, method="percentile", rng=np.random.default_rng(seed))
        dist = np.asarray(res.bootstrap_distribution).reshape(len(estimate), -1)
    else:
        dist = np.full((len(estimate), 0), np.nan)
    est: dict[str, Estimate] = {}
    for i, key in enumerate(ev.keys):
        lo, hi, nv = _interval(dist[i], float(estimate[i]), level, method)
        est[key] = Estimate(float(estimate[i]), lo, hi, nv)

    def psych(prefix: str) -> dict[str, Estimate]:
        return {k: est[f"{prefix}{k}"] for k, _ in PSYCHOMETRICS}

    ones_r = np.ones((1, real.n_rows))
    real_psych_items = ev.real.psychometrics(ones_r).get("item_total_items")
    v_real = M.cramers_v_from_counts(np.asarray(ones_r.astype(np.float32) @ ev.real.poh, dtype=float),
                                     ev.real.pairs, ev.enc.sizes)[0]
    syn_results = []
    for k, (t, side) in enumerate(zip(synthetic, ev.syns, strict=True)):
        ones = np.ones((1, t.n_rows))
        v_s = M.cramers_v_from_counts(np.asarray(ones.astype(np.float32) @ side.poh, dtype=float), side.pairs,
                                      ev.enc.sizes)[0]
        itc = side.psychometrics(ones).get("item_total_items")
        syn_results.append(SynResult(
            name=t.name, n_rows=t.n_rows,
            metrics={key: est[f"syn{k}.{key}"] for key, _, _, _ in METRICS},
            psychometrics=psych(f"syn{k}.psych."),
            psych_delta=psych(f"syn{k}.psych_delta."),
            item_total=[] if itc is None else [float(x) for x in itc[0]],
            v_pairs=[float(x) for x in v_s],
        ))
    deltas: dict[str, dict[str, Estimate]] = {}
    for a in range(len(synthetic)):
        for b in range(a + 1, len(synthetic)):
            name = f"{synthetic[b].name} - {synthetic[a].name}"
            d = {key: est[f"delta{a}_{b}.{key}"] for key, _, _, _ in METRICS}
            d.update({f"psych.{key}": est[f"delta{a}_{b}.psych.{key}"] for key, _ in PSYCHOMETRICS})
            deltas[name] = d
    distributions: dict[str, dict[str, list[float]]] = {}
    for j, col in enumerate(columns):
        distributions[col] = {}
        for t, codes in zip([real, *synthetic], ev.enc.codes, strict=True):
            counts = np.bincount(codes[:, j], minlength=ev.enc.sizes[j]).astype(float)
            distributions[col][t.name] = [float(x) for x in counts / max(1, t.n_rows)]
    return EvalResult(
        real=real.name, n_real=real.n_rows, columns=columns, item_columns=items, qi=list(qi),
        instrument=instrument.id if instrument is not None else None,
        cutoff=instrument.cutoff.min if instrument is not None else None,
        alpha_smoothing=alpha, n_boot=n_boot, level=level, method=method, seed=seed,
        real_psychometrics=psych("real."),
        real_item_total=[] if real_psych_items is None else [float(x) for x in real_psych_items[0]],
        v_real=[float(x) for x in v_real], synthetic=syn_results, deltas=deltas, audit=audit,
        distributions=distributions, labels={c: ev.enc.labels[j] for j, c in enumerate(columns)}, bins=ev.enc.bins,
    )
