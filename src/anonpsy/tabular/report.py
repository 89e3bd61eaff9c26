"""The evaluation report: ``report.md``, ``report.json`` and PNG figures.

* ``figures/items.png`` -- per-column distributions, real vs every synthetic table (grouped bars);
* ``figures/cramers_v_diff_<n>.png`` -- heat-map of V~(synthetic) - V~(real) for every column pair;
* the Markdown holds the audit (findings and recodes), the metric table with confidence intervals, paired
  deltas between synthetic tables, and the psychometrics real vs synthetic.

Figures use matplotlib's Agg canvas (pyplot's global state is never touched); without matplotlib the report is
written without figures and says so.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from anonpsy.tabular.evaluate import METRICS, PSYCHOMETRICS, Estimate, EvalResult
from anonpsy.yamlio import write_atomic


def _f(x: float, digits: int = 3) -> str:
    return "–" if x is None or math.isnan(x) else f"{x:.{digits}f}"


def _ci(e: Estimate, digits: int = 3) -> str:
    if math.isnan(e.value):
        return "–"
    if math.isnan(e.low):
        return _f(e.value, digits)
    return f"{_f(e.value, digits)} [{_f(e.low, digits)}, {_f(e.high, digits)}]"


def result_dict(r: EvalResult, figures: list[str] | None = None) -> dict[str, Any]:
    return {
        "format": "anonpsy.tabular.evaluate/v1",
        "real": {"table": r.real, "rows": r.n_real},
        "columns": r.columns, "item_columns": r.item_columns, "quasi_identifiers": r.qi,
        "instrument": r.instrument, "cutoff": r.cutoff,
        "settings": {"smoothing_alpha": r.alpha_smoothing, "bootstrap_replicates": r.n_boot, "level": r.level,
                     "interval": r.method, "seed": r.seed},
        "audit": {"recodes": r.audit.recodes,
                  "findings": [{"code": f.code, "level": f.level, "table": f.table, "column": f.column,
                                "message": f.message} for f in r.audit.findings]},
        "real_psychometrics": {k: v.as_dict() for k, v in r.real_psychometrics.items()},
        "real_item_total": r.real_item_total,
        "synthetic": [{
            "table": s.name, "rows": s.n_rows,
            "metrics": {k: v.as_dict() for k, v in s.metrics.items()},
            "psychometrics": {k: v.as_dict() for k, v in s.psychometrics.items()},
            "psychometrics_minus_real": {k: v.as_dict() for k, v in s.psych_delta.items()},
            "item_total": s.item_total,
        } for s in r.synthetic],
        "paired_deltas": {name: {k: v.as_dict() for k, v in d.items()} for name, d in r.deltas.items()},
        "figures": figures or [],
    }


def render_markdown(r: EvalResult, figures: list[str] | None = None) -> str:
    lv = f"{r.level:.0%}"
    out = [f"# Synthetic table evaluation: {', '.join(s.name for s in r.synthetic)} against {r.real}", ""]
    out.append(f"Real table `{r.real}`: {r.n_real} rows, {len(r.columns)} columns; "
               + "; ".join(f"`{s.name}`: {s.n_rows} rows" for s in r.synthetic) + ".")
    out.append(f"Instrument: {r.instrument or 'not given'}; quasi-identifiers: {', '.join(r.qi) or 'none'}; "
               f"{r.n_boot} bootstrap replicates (seed {r.seed}), {lv} {r.method} intervals; JSD smoothing "
               f"α = {r.alpha_smoothing:g}.")
    if r.bins:
        out.append("Binned numeric columns (real deciles): " + ", ".join(f"`{c}`" for c in r.bins) + ".")
    out += ["", "## Schema audit", ""]
    if r.audit.recodes:
        out.append("Recodes applied: " + "; ".join(f"`{x}`" for x in r.audit.recodes) + ".")
    shown = [f for f in r.audit.findings if f.level != "note"]
    out.append("No coding mismatch." if not shown else "")
    for f in shown:
        out.append(f"- {f.level} {f.code} `{f.table}:{f.column}`: {f.message}")
    out += ["", f"## Fidelity and privacy (estimate [{lv} CI])", ""]
    out.append("| metric | better | " + " | ".join(f"`{s.name}`" for s in r.synthetic) + " |")
    out.append("|---|---|" + "---|" * len(r.synthetic))
    for key, label, group, better in METRICS:
        out.append(f"| {label} ({group}) | {better} | " + " | ".join(_ci(s.metrics[key]) for s in r.synthetic)
                   + " |")
    out += ["", "Divergences are biased upwards under resampling, so their percentile interval can lie above the "
            "estimate; compare tables through the paired deltas. Privacy metrics keep the real table fixed.", ""]
    if r.deltas:
        out += ["## Paired deltas between synthetic tables", ""]
        names = list(r.deltas)
        out.append("| metric | " + " | ".join(f"`{n}`" for n in names) + " |")
        out.append("|---|" + "---|" * len(names))
        for key, label, _, _ in METRICS:
            out.append(f"| {label} | " + " | ".join(_ci(r.deltas[n][key]) for n in names) + " |")
        for key, label in PSYCHOMETRICS:
            out.append(f"| {label} | " + " | ".join(_ci(r.deltas[n][f'psych.{key}']) for n in names) + " |")
        out.append("")
    out += ["## Psychometrics, real vs synthetic", ""]
    out.append(f"| statistic | `{r.real}` | " + " | ".join(f"`{s.name}` | Δ" for s in r.synthetic) + " |")
    out.append("|---|---|" + "---|---|" * len(r.synthetic))
    for key, label in PSYCHOMETRICS:
        row = f"| {label} | {_ci(r.real_psychometrics[key])} | "
        row += " | ".join(f"{_ci(s.psychometrics[key])} | {_ci(s.psych_delta[key])}" for s in r.synthetic)
        out.append(row + " |")
    if r.item_columns and r.real_item_total:
        out += ["", "Corrected item–total correlations:", ""]
        out.append(f"| item | `{r.real}` | " + " | ".join(f"`{s.name}`" for s in r.synthetic) + " |")
        out.append("|---|---|" + "---|" * len(r.synthetic))
        for i, col in enumerate(r.item_columns):
            vals = [_f(s.item_total[i]) if i < len(s.item_total) else "–" for s in r.synthetic]
            out.append(f"| {col} | {_f(r.real_item_total[i])} | " + " | ".join(vals) + " |")
    if figures:
        out += ["", "## Figures", ""]
        out += [f"![{Path(f).stem}]({f})" for f in figures]
    else:
        out += ["", "_Figures not drawn (matplotlib is not installed or --no-figures was given)._"]
    return "\n".join(out) + "\n"


def figure_pngs(r: EvalResult) -> dict[str, bytes]:
    """PNG figures by relative path; empty when matplotlib is missing."""
    try:
        import numpy as np

        from anonpsy.evaluate.plots import _colors, _figure, _png
    except ImportError:
        return {}
    try:
        _figure(1, 1)
    except Exception:
        return {}
    out: dict[str, bytes] = {}
    cols = r.columns
    ncol = 4
    nrow = math.ceil(len(cols) / ncol)
    fig = _figure(3.2 * ncol, 2.4 * nrow)
    names = [r.real] + [s.name for s in r.synthetic]
    colors = _colors(len(names))
    width = 0.8 / len(names)
    for j, col in enumerate(cols):
        ax = fig.add_subplot(nrow, ncol, j + 1)
        labels = r.labels[col]
        x = np.arange(len(labels))
        for i, name in enumerate(names):
            ax.bar(x + (i - (len(names) - 1) / 2) * width, r.distributions[col][name], width, color=colors[i],
                   label=name if j == 0 else None)
        ax.set_title(col, fontsize=9)
        ax.set_xticks(x)
        ax.set_xticklabels(labels, fontsize=6, rotation=45 if len(labels) > 6 else 0)
        ax.tick_params(axis="y", labelsize=7)
    fig.legend(loc="outside lower center", ncols=len(names), fontsize=8)
    out["figures/items.png"] = _png(fig)
    from anonpsy.tabular.metrics import v_matrix

    p = len(cols)
    vr = v_matrix(np.asarray(r.v_real), p)
    for k, s in enumerate(r.synthetic, 1):
        diff = v_matrix(np.asarray(s.v_pairs), p) - vr
        np.fill_diagonal(diff, 0.0)
        fig = _figure(0.45 * p + 2.5, 0.45 * p + 1.5)
        ax = fig.add_subplot(1, 1, 1)
        lim = max(0.1, float(np.abs(diff).max()))
        im = ax.imshow(diff, cmap="RdBu_r", vmin=-lim, vmax=lim)
        ax.set_xticks(range(p))
        ax.set_yticks(range(p))
        ax.set_xticklabels(cols, rotation=90, fontsize=7)
        ax.set_yticklabels(cols, fontsize=7)
        ax.set_title(f"Cramér's V: {s.name} − {r.real}", fontsize=9)
        fig.colorbar(im, ax=ax, shrink=0.8)
        out[f"figures/cramers_v_diff_{k}.png"] = _png(fig)
    return out


def write_report(r: EvalResult, out_dir: Path, *, figures: bool = True) -> list[Path]:
    """Write ``report.md``, ``report.json`` and the figures under ``out_dir`` (each file atomically)."""
    out_dir = Path(out_dir)
    pngs = figure_pngs(r) if figures else {}
    written = []
    for rel, data in pngs.items():
        write_atomic(out_dir / rel, data)
        written.append(out_dir / rel)
    names = list(pngs)
    write_atomic(out_dir / "report.json", json.dumps(result_dict(r, names), indent=2, ensure_ascii=False) + "\n")
    write_atomic(out_dir / "report.md", render_markdown(r, names))
    return [out_dir / "report.md", out_dir / "report.json", *written]
