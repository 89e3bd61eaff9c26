"""Report generation into tmp_path: Markdown, JSON and PNG figures from a synthetic results table."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "scipy", exc_type=ImportError, reason="needs the eval extra: run .ci/eval.sh"
)
pytest.importorskip(
    "statsmodels", exc_type=ImportError, reason="needs the eval extra: run .ci/eval.sh"
)

from anonpsy.errors import AnonpsyError
from anonpsy.evaluate.report import (
    build_report,
    parse_results_csv,
    parse_results_json,
    render_markdown,
    write_report,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def synthetic_rows(n: int = 24, seed: int = 3) -> list[dict[str, Any]]:
    """Three methods over ``n`` synthetic cases; the masker stays close to the source, others move away."""
    rng = random.Random(seed)
    params = {
        "phi_mask": (0.93, 0.95, 4.0, 0.9),
        "rewrite": (0.78, 0.72, 2.5, 0.4),
        "graph": (0.62, 0.9, 1.7, 0.1),
    }
    rows = []
    for i in range(n):
        for method, (cos, f1, reid, hit) in params.items():
            rows.append(
                {
                    "case_id": f"case{i:03d}",
                    "method": method,
                    "cosine": min(1.0, rng.gauss(cos, 0.04)),
                    "soft_f1": max(0.0, min(1.0, rng.gauss(f1, 0.1))),
                    "reid_score": max(1, min(5, round(rng.gauss(reid, 0.7)))),
                    "reid_hit": int(rng.random() < hit),
                    "leak_count": rng.choice([0, 0, 1]) if method == "phi_mask" else 0,
                }
            )
    return rows


@pytest.fixture(scope="module")
def report() -> Any:
    return build_report(
        synthetic_rows(),
        reference="phi_mask",
        model="fake-model",
        n_resamples=500,
        corpus={"graph": {"jaccard_reid_accuracy": 0.125}},
    )


def test_summaries_and_tests(report: Any) -> None:
    assert report.methods == ("phi_mask", "rewrite", "graph")
    assert report.n_cases == 24
    s = report.summary("cosine", "graph")
    assert s.n == 24 and s.ci.low < s.mean < s.ci.high
    tests = {(c.metric, c.method): c for c in report.comparisons}
    assert tests[("cosine", "graph")].result.test == "wilcoxon"
    assert tests[("cosine", "graph")].p_holm < 0.001
    assert tests[("reid_hit", "graph")].result.test.startswith("mcnemar")
    assert report.friedman["cosine"].ok


def test_leak_count_all_zero_for_two_methods_gives_reasons_not_errors(report: Any) -> None:
    comps = {(c.metric, c.method): c for c in report.comparisons}
    c = comps[("leak_count", "rewrite")]
    assert c.result.ok or c.result.reason


def test_write_report(tmp_path: Path, report: Any) -> None:
    paths = write_report(report, tmp_path / "out")
    names = sorted(str(p.relative_to(tmp_path / "out")) for p in paths)
    assert "report.md" in names and "report.json" in names
    assert "figures/plane.png" in names and "figures/metrics_ci.png" in names
    assert "figures/violin_reid_score.png" in names and "figures/violin_cosine.png" in names
    for p in paths:
        if p.suffix == ".png":
            assert p.read_bytes().startswith(PNG_MAGIC) and p.stat().st_size > 10_000
    data = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert data["model"] == "fake-model" and data["reference"] == "phi_mask"
    assert len(data["values"]["case_ids"]) == 24
    assert {c["metric"] for c in data["comparisons"]} == set(report.metrics)
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "| Diagnosis soft-F1 |" in md and "Holm" in md and "![plane](figures/plane.png)" in md
    assert "embedding model: fake-model" in md
    assert not list((tmp_path / "out").rglob("*.tmp"))


def test_report_is_deterministic(report: Any) -> None:
    again = build_report(
        synthetic_rows(),
        reference="phi_mask",
        model="fake-model",
        n_resamples=500,
        corpus={"graph": {"jaccard_reid_accuracy": 0.125}},
    )
    assert render_markdown(again) == render_markdown(report)


def test_nan_is_written_as_null(tmp_path: Path) -> None:
    rows = [{"case_id": "a", "method": "m", "cosine": 0.5}, {"case_id": "b", "method": "m", "cosine": ""}]
    rep = build_report(rows, reference="m", n_resamples=100)
    write_report(rep, tmp_path, figures=False)
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert data["values"]["cosine"]["m"] == [0.5, None]
    assert data["summaries"][0]["sd"] is None
    assert rep.comparisons == ()


def test_parse_results() -> None:
    rows = parse_results_csv("case_id,method,cosine\nc1,a,0.9\nc1,b,\n")
    assert rows[0]["cosine"] == 0.9 and math.isnan(rows[1]["cosine"])
    assert (
        parse_results_json('{"rows": [{"case_id": "c1", "method": "a", "soft_f1": 1}]}')[0]["soft_f1"] == 1.0
    )


@pytest.mark.parametrize(
    "rows",
    [
        [{"method": "a", "cosine": 1}],
        [{"case_id": "c", "method": "a", "cosine": "high"}],
        [{"case_id": "c", "method": "a"}, {"case_id": "c", "method": "a"}],
    ],
)
def test_bad_rows_are_reported_without_values(rows: list[dict[str, Any]]) -> None:
    with pytest.raises(AnonpsyError) as exc:
        build_report(rows, reference="a")
    assert exc.value.code == "V104" and "high" not in str(exc.value)


def test_reference_must_exist() -> None:
    with pytest.raises(AnonpsyError):
        build_report(synthetic_rows(2), reference="nope")
