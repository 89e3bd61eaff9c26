"""Core benchmarks: perturb + check on the 40-node fixture graph, loading all rules, and counts.

Targets (issue: core): perturb + check median ≤ 5 ms; loading all rules ≤ 200 ms.
Run: python tests/bench/bench_core.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load_rules_cold() -> float:
    """Load every rule kind in a fresh interpreter (no caches) and return seconds."""
    code = (
        "import time;"
        "from anonpsy.rules.dsm import load_dsm; from anonpsy.rules import tables;"
        "from anonpsy.rules.test_values import load_test_values; from anonpsy import lexicon;"
        "t=time.perf_counter();"
        "load_dsm(); tables.load_all_tables(); load_test_values();"
        "[f() for f in (lexicon.symptom_lexicon, lexicon.medication_lexicon, lexicon.therapy_lexicon,"
        " lexicon.emotion_lexicon, lexicon.demographic_lexicon, lexicon.stressor_taxonomy)];"
        "print(time.perf_counter()-t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    from anonpsy.graphio import read_graph
    from anonpsy.perturb import check, perturb
    from anonpsy.rules.check import check_rules
    from anonpsy.rules.dsm import load_dsm
    from anonpsy.rules.test_values import load_test_values
    from anonpsy.temporal import normalize

    g = normalize(read_graph(ROOT / "fixtures" / "graphs" / "13_comorbid_inpatient.yaml"))
    nodes = len(g.iter_nodes())
    perturb(g, 0)  # warm caches
    times = []
    for seed in range(200):
        t0 = time.perf_counter()
        new, _ = perturb(g, seed)
        check(g, new)
        times.append(time.perf_counter() - t0)
    med = statistics.median(times) * 1000
    p95 = sorted(times)[int(len(times) * 0.95)] * 1000
    print(f"perturb+check, {nodes}-node graph, 200 seeds: median {med:.2f} ms, p95 {p95:.2f} ms (target ≤ 5 ms)")
    cold = [_load_rules_cold() for _ in range(3)]
    print(f"loading all rules (fresh process, modules imported, caches cold): "
          f"median {statistics.median(cold) * 1000:.0f} ms (target ≤ 200 ms)")
    t0 = time.perf_counter()
    report = check_rules()
    print(f"anonpsy rules check: {report.files} files, {report.rules} rules, {report.cases} cases, "
          f"{len(report.problems)} problems, {time.perf_counter() - t0:.2f} s")
    print(f"counts: {len(load_dsm())} DSM diagnoses, {len(load_test_values())} tests, {report.cases} cases")
    props = subprocess.run(["grep", "-rhoE", r"^def test_[a-z_]+", str(ROOT / "tests")], capture_output=True,
                           text=True).stdout
    given = subprocess.run(["grep", "-rlE", "@given", str(ROOT / "tests")], capture_output=True, text=True).stdout
    n_props = 0
    for f in given.split():
        text = Path(f).read_text(encoding="utf-8")
        n_props += text.count("@given(")
    print(f"counts: {len(props.split())} test functions, {n_props} Hypothesis properties")


if __name__ == "__main__":
    main()
