"""Baselines a synthetic questionnaire table should beat.

* :func:`random_table` (built in): every column drawn independently and uniformly over its domain -- the
  instrument's codes for item columns, the categories seen in the real table for other coded columns, the
  integer (or real) range of the real table for many-valued numeric columns. It keeps no dependence between
  columns and no real row, so it marks the floor of fidelity and the ceiling of privacy.
* CTGAN and TVAE through the SDV library (extra ``anonpsy[synth]``) with the privacy-aware selection of
  :func:`privacy_aware_selection`: the real rows are split 70/30 (seeded); a candidate model is trained on the 70%
  for every combination of a small grid of epochs and seeds; each candidate's sample is compared with the
  training rows for privacy -- exact overlap and the share of rows within one column of a training row -- and
  with the held-out 30% for fidelity (mean JSD). A candidate is admissible when its overlap and near-copy share do
  not exceed the thresholds (by default those of the held-out real rows themselves against the training rows: a
  synthetic row should not copy a training row more often than a fresh real respondent happens to match one);
  the admissible candidate with the lowest JSD is chosen. If none is admissible the selection fails loudly.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from anonpsy import errors
from anonpsy.errors import AnonpsyError
from anonpsy.tabular.audit import MAX_CATEGORIES
from anonpsy.tabular.instruments import Instrument
from anonpsy.tabular.table import Table

SYNTH_EXTRA_HINT = ('pip install "torch==2.13.0" first (any other torch request pulls the CUDA build), then '
                    'pip install "anonpsy[synth]"')


Domain = tuple[str, list[str] | tuple[float, float]]


def column_domain(table: Table, column: str, instrument: Instrument | None) -> Domain:
    """``("codes", [...])`` for a coded column or ``("int"|"real", (lo, hi))`` for a many-valued numeric one."""
    if instrument is not None and column in instrument.columns:
        return "codes", [str(v) for v in instrument.values]
    kind = table.kind(column)
    distinct = table.distinct(column)
    if kind in ("integer", "numeric") and len(distinct) > MAX_CATEGORIES:
        nums = [float(v) for v in distinct]
        return ("int" if kind == "integer" else "real"), (min(nums), max(nums))
    if not distinct:
        raise AnonpsyError(errors.T101_BAD_TABLE, f"column {column!r} has no values to draw from", table.name)
    return "codes", distinct


def random_table(real: Table, n: int, *, seed: int = 0, instrument: Instrument | None = None,
                 name: str = "random.csv") -> Table:
    """The uniform baseline (see the module docstring); deterministic in the seed."""
    if n < 1:
        raise AnonpsyError(errors.E109_BAD_OPTION, "the number of rows must be at least 1", "-n")
    cells: dict[str, list[str | None]] = {}
    for j, col in enumerate(real.columns):
        rng = random.Random(f"anonpsy.tabular.random:{seed}:{j}")
        kind, dom = column_domain(real, col, instrument)
        if kind == "codes":
            assert isinstance(dom, list)
            cells[col] = [rng.choice(dom) for _ in range(n)]
        elif kind == "int":
            lo, hi = dom
            cells[col] = [str(rng.randint(int(lo), int(hi))) for _ in range(n)]
        else:
            lo, hi = dom
            cells[col] = [repr(rng.uniform(float(lo), float(hi))) for _ in range(n)]
    return Table(name, list(real.columns), cells)


# ------------------------------------------------------------------------------------------------- SDV models


class Synthesizer(Protocol):
    def fit(self, table: Table) -> None: ...

    def sample(self, n: int) -> Table: ...


def _import_sdv() -> Any:
    try:
        import sdv.single_table
    except ImportError:
        from anonpsy.evaluate.errors import V100_MISSING_EXTRA

        raise AnonpsyError(V100_MISSING_EXTRA, f"SDV is not installed; CTGAN and TVAE need it: {SYNTH_EXTRA_HINT}"
                           ) from None
    import sdv

    return sdv


class SDVSynthesizer:
    """CTGAN or TVAE from SDV, every column modelled as categorical except many-valued numeric ones."""

    def __init__(self, method: str, *, epochs: int, seed: int, instrument: Instrument | None = None) -> None:
        if method not in ("ctgan", "tvae"):
            raise AnonpsyError(errors.E109_BAD_OPTION, f"unknown SDV method {method!r}; use ctgan or tvae", "METHOD")
        _import_sdv()
        self.method, self.epochs, self.seed, self.instrument = method, epochs, seed, instrument
        self._model: Any = None
        self._columns: list[str] = []
        self._numeric: set[str] = set()

    def fit(self, table: Table) -> None:
        import numpy as np
        import pandas as pd
        import torch
        from sdv.metadata import Metadata
        from sdv.single_table import CTGANSynthesizer, TVAESynthesizer

        self._columns = list(table.columns)
        cols: dict[str, dict[str, str]] = {}
        data: dict[str, list[Any]] = {}
        for c in table.columns:
            kind, _ = column_domain(table, c, self.instrument)
            if kind == "codes":
                cols[c] = {"sdtype": "categorical"}
                data[c] = list(table.values(c))
            else:
                cols[c] = {"sdtype": "numerical"}
                self._numeric.add(c)
                data[c] = table.numbers(c)
        metadata = Metadata.load_from_dict({"tables": {"questionnaire": {"columns": cols}}})
        random.seed(self.seed)
        np.random.seed(self.seed)
        torch.manual_seed(self.seed)
        cls = CTGANSynthesizer if self.method == "ctgan" else TVAESynthesizer
        self._model = cls(metadata, epochs=self.epochs, enforce_min_max_values=True, enforce_rounding=True)
        self._model.fit(pd.DataFrame(data))

    def sample(self, n: int) -> Table:
        import numpy as np
        import torch

        np.random.seed(self.seed)
        torch.manual_seed(self.seed)
        df = self._model.sample(num_rows=n)
        cells: dict[str, list[str | None]] = {}
        for c in self._columns:
            vals = df[c].tolist()
            if c in self._numeric:
                cells[c] = [None if v is None or v != v else str(round(float(v))) for v in vals]
            else:
                cells[c] = [None if v is None or v != v else str(v) for v in vals]
        return Table(f"{self.method}.csv", list(self._columns), cells)


# ------------------------------------------------------------------------------------ privacy-aware selection


@dataclass
class Candidate:
    epochs: int
    seed: int
    jsd: float
    exact_overlap: float
    near_share: float
    admissible: bool = False
    chosen: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"epochs": self.epochs, "seed": self.seed, "jsd_holdout": round(self.jsd, 6),
                "exact_overlap_train": round(self.exact_overlap, 6), "near_share_train": round(self.near_share, 6),
                "admissible": self.admissible, "chosen": self.chosen}


@dataclass
class Selection:
    table: Table
    chosen: Candidate
    candidates: list[Candidate]
    thresholds: dict[str, float]
    split: dict[str, int] = field(default_factory=dict)

    def log(self) -> dict[str, Any]:
        return {"split": self.split, "thresholds": {k: round(v, 6) for k, v in self.thresholds.items()},
                "candidates": [c.as_dict() for c in self.candidates]}


def split_rows(table: Table, share: float, seed: int) -> tuple[Table, Table]:
    """A seeded ``share`` / ``1 - share`` split of the rows (train, holdout)."""
    idx = list(range(table.n_rows))
    random.Random(f"anonpsy.tabular.split:{seed}").shuffle(idx)
    cut = max(1, min(len(idx) - 1, round(share * len(idx))))

    def take(rows: Sequence[int], suffix: str) -> Table:
        return Table(f"{table.name}[{suffix}]", list(table.columns),
                     {c: [table.values(c)[i] for i in sorted(rows)] for c in table.columns})

    return take(idx[:cut], "train"), take(idx[cut:], "holdout")


def _privacy_and_fidelity(train: Table, holdout: Table, sample: Table) -> tuple[float, float, float]:
    from anonpsy.tabular import metrics as M

    cols = list(train.columns)
    enc = M.encode([train, holdout, sample], cols)
    tr, ho, sa = enc.codes
    nn = M.nearest_distances(sa, tr, enc.sizes)
    p = len(cols)
    eo = float((nn <= 1e-12).mean())
    near = float((nn <= 1.0 / p + 1e-12).mean())
    jsd = float(M.jsd(ho, sa, enc.sizes)[0])
    return jsd, eo, near


def privacy_aware_selection(
    real: Table,
    make: Callable[[int, int], Synthesizer],
    *,
    n: int,
    epochs: Sequence[int] = (100, 300),
    seeds: Sequence[int] = (0, 1, 2),
    split: float = 0.7,
    split_seed: int = 0,
    max_overlap: float | None = None,
    max_near_share: float | None = None,
) -> Selection:
    """Train one candidate per (epochs, seed) on the 70% split and choose as in the module docstring."""
    if real.n_rows < 10:
        raise AnonpsyError(errors.T103_TOO_FEW_ROWS, "selection needs at least 10 real rows", real.name)
    train, holdout = split_rows(real, split, split_seed)
    _, ref_eo, ref_near = _privacy_and_fidelity(train, holdout, holdout)
    thresholds = {"exact_overlap": ref_eo if max_overlap is None else max_overlap,
                  "near_share": ref_near if max_near_share is None else max_near_share}
    candidates: list[Candidate] = []
    samples: list[Table] = []
    for e in epochs:
        for s in seeds:
            model = make(e, s)
            model.fit(train)
            sample = model.sample(n)
            jsd, eo, near = _privacy_and_fidelity(train, holdout, sample)
            cand = Candidate(e, s, jsd, eo, near)
            cand.admissible = eo <= thresholds["exact_overlap"] + 1e-12 and near <= thresholds["near_share"] + 1e-12
            candidates.append(cand)
            samples.append(sample)
    admissible = [i for i, c in enumerate(candidates) if c.admissible]
    if not admissible:
        raise AnonpsyError(errors.T105_NO_ADMISSIBLE,
                           f"no candidate stays within the overlap thresholds (exact overlap <= "
                           f"{thresholds['exact_overlap']:.3f}, near-copy share <= {thresholds['near_share']:.3f}); "
                           "train shorter, or set --max-overlap / --max-near-share deliberately")
    best = min(admissible, key=lambda i: (candidates[i].jsd, candidates[i].epochs, candidates[i].seed))
    candidates[best].chosen = True
    return Selection(samples[best], candidates[best], candidates, thresholds,
                     {"train": train.n_rows, "holdout": holdout.n_rows, "seed": split_seed})
