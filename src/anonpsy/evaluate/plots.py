"""Report figures as PNG bytes (matplotlib's Agg canvas; pyplot and its global state are never touched).

* :func:`plane_png` -- the recallability–structure plane: x = 1 − cosine (how far the output moved from its
  source; right = harder to recall the source), y = diagnosis soft-F1 (clinical structure kept; up = better).
  One small point per case, one large marker per method mean. The upper right is where a method should be.
* :func:`violin_png` -- distribution of one risk score per method.
* :func:`bars_png` -- per-metric means per method with bootstrap confidence intervals.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

from anonpsy.evaluate.errors import missing_extra

DPI = 150


def _figure(width: float, height: float) -> Any:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise missing_extra("matplotlib") from None
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _colors(n: int) -> list[Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    return [cmap(i % 10) for i in range(n)]


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def _finite(vals: Sequence[float]) -> list[float]:
    return [float(v) for v in vals if v is not None and not math.isnan(float(v))]


def plane_png(points: Mapping[str, Sequence[tuple[float, float]]], *, model: str | None = None,
              ylabel: str = "Diagnosis soft-F1") -> bytes:
    """Recallability–structure plane from ``method -> [(cosine, structure score), ...]`` (one pair per case)."""
    fig = _figure(6.4, 5.2)
    ax = fig.add_subplot()
    colors = _colors(len(points))
    for (method, pts), color in zip(points.items(), colors, strict=True):
        xy = [(1.0 - c, f) for c, f in pts if not (math.isnan(c) or math.isnan(f))]
        if not xy:
            continue
        xs = [p[0] for p in xy]
        ys = [p[1] for p in xy]
        ax.scatter(xs, ys, s=18, alpha=0.45, color=color, edgecolors="none")
        ax.scatter(
            [sum(xs) / len(xs)], [sum(ys) / len(ys)], s=220, color=color, edgecolors="black",
            linewidths=1.2, marker="o", label=f"{method} (n={len(xy)})", zorder=3,
        )
    ax.set_xlabel("1 − cosine similarity to original  (→ harder to recall the source)")
    ax.set_ylabel(f"{ylabel}  (↑ clinical structure kept)")
    title = "Recallability–structure plane"
    ax.set_title(f"{title}\nembeddings: {model}" if model else title, fontsize=11)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlim(left=min(0.0, ax.get_xlim()[0]))
    ax.grid(True, alpha=0.3)
    ax.legend(title="method mean (large marker)", fontsize=8, title_fontsize=8, loc="lower left")
    return _png(fig)


def violin_png(values: Mapping[str, Sequence[float]], *, title: str, ylabel: str) -> bytes:
    """Violin plot (with median and individual cases) of one score per method."""
    fig = _figure(max(4.0, 1.3 * len(values) + 2.0), 4.4)
    ax = fig.add_subplot()
    methods = [m for m, v in values.items() if _finite(v)]
    data = [_finite(values[m]) for m in methods]
    colors = _colors(len(methods))
    if data:
        positions = list(range(1, len(methods) + 1))
        varied = [i for i, d in enumerate(data) if len(set(d)) > 1]
        if varied:
            parts = ax.violinplot([data[i] for i in varied], positions=[positions[i] for i in varied],
                                  showmedians=True, showextrema=False)
            for body, i in zip(parts["bodies"], varied, strict=True):
                body.set_facecolor(colors[i])
                body.set_alpha(0.45)
            parts["cmedians"].set_color("black")
        for i, d in enumerate(data):
            jitter = [positions[i] + ((k % 7) - 3) * 0.025 for k in range(len(d))]
            ax.scatter(jitter, d, s=8, color=colors[i], alpha=0.7, edgecolors="none")
        ax.set_xticks(positions, methods, rotation=20 if len(methods) > 4 else 0)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11)
    ax.grid(True, axis="y", alpha=0.3)
    return _png(fig)


def bars_png(
    summary: Mapping[str, Mapping[str, tuple[float, float, float]]],
    *,
    labels: Mapping[str, str] | None = None,
    level: float = 0.95,
) -> bytes:
    """One panel per metric: bar = mean per method, error bar = bootstrap CI (``metric -> method -> (mean,
    low, high)``)."""
    metrics = list(summary)
    ncols = min(3, max(1, len(metrics)))
    nrows = max(1, math.ceil(len(metrics) / ncols))
    fig = _figure(4.2 * ncols, 3.6 * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for idx, metric in enumerate(metrics):
        ax = axes[idx // ncols][idx % ncols]
        rows = summary[metric]
        methods = list(rows)
        colors = _colors(len(methods))
        means = [rows[m][0] for m in methods]
        lows = [rows[m][0] - rows[m][1] if not math.isnan(rows[m][1]) else 0.0 for m in methods]
        highs = [rows[m][2] - rows[m][0] if not math.isnan(rows[m][2]) else 0.0 for m in methods]
        xs = list(range(len(methods)))
        ax.bar(xs, [0.0 if math.isnan(v) else v for v in means], color=colors, alpha=0.8)
        ax.errorbar(xs, [0.0 if math.isnan(v) else v for v in means], yerr=[lows, highs], fmt="none",
                    ecolor="black", capsize=4, linewidth=1)
        ax.set_xticks(xs, methods, rotation=25 if len(methods) > 3 else 0, fontsize=8)
        ax.set_title((labels or {}).get(metric, metric), fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    for idx in range(len(metrics), nrows * ncols):
        axes[idx // ncols][idx % ncols].set_visible(False)
    fig.suptitle(f"Mean per method with {round(level * 100)}% bootstrap CI", fontsize=11)
    return _png(fig)
