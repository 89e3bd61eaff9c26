"""deid benchmarks (rules backend, in-process): per-case latency on ~1,000-word cases, scaling when the text
doubles, deid-batch throughput with --jobs 2 on the MTSamples dev set, and extraction quality on fixtures.

Targets: median ≤ 50 ms per ~1,000-word case; time grows at most 2.2× when the text doubles.
Run: python tests/bench/bench_deid.py
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MTS = ROOT.parent / "shared" / "data" / "mtsamples-psych-dev" / "notes.jsonl"


def _cases_of_words(target: int) -> list[str]:
    """Fixture narratives concatenated into one case per fixture, cut at the line where ``target`` words are
    reached (so every case has about ``target`` words)."""
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "fixtures" / "cases").glob("*.txt"))]
    out = []
    for i in range(len(texts)):
        lines: list[str] = []
        words, j = 0, i
        while words < target:
            for line in texts[j % len(texts)].splitlines():
                lines.append(line)
                words += len(line.split())
                if words >= target:
                    break
            j += 1
        out.append("\n".join(lines))
    return out


def _time_cases(cases: list[str], repeats: int = 3) -> list[float]:
    from anonpsy.pipeline import deid_text

    times = []
    for k, text in enumerate(cases):
        best = min(_once(deid_text, text, k) for _ in range(repeats))
        times.append(best)
    return times


def _once(fn: object, text: str, k: int) -> float:
    t0 = time.perf_counter()
    fn(text, seed=k, case_id=f"b{k}")  # type: ignore[operator]
    return time.perf_counter() - t0


def main() -> None:
    from anonpsy.pipeline import deid_text

    deid_text((ROOT / "fixtures" / "cases" / "01_adhd_child.txt").read_text(encoding="utf-8"), seed=0)  # warm up
    one = _cases_of_words(1000)
    two = _cases_of_words(2000)
    t1 = _time_cases(one)
    t2 = _time_cases(two)
    w1 = statistics.mean(len(c.split()) for c in one)
    w2 = statistics.mean(len(c.split()) for c in two)
    m1, m2 = statistics.median(t1) * 1000, statistics.median(t2) * 1000
    print(f"deid rules backend, {len(one)} cases of ~{w1:.0f} words: median {m1:.1f} ms (target ≤ 50 ms)")
    print(f"deid rules backend, {len(two)} cases of ~{w2:.0f} words: median {m2:.1f} ms; "
          f"growth ×{m2 / m1:.2f} for ×{w2 / w1:.2f} text (target ≤ 2.2)")
    if MTS.is_file():
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out"
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "anonpsy", "deid-batch", str(MTS), "-o", str(out),
                                   "--jobs", "2", "--no-progress"], capture_output=True, text=True)
            dt = time.perf_counter() - t0
            summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
            words = sum(len(json.loads(x)["text"].split()) for x in MTS.read_text(encoding="utf-8").splitlines())
            print(f"deid-batch --jobs 2 on MTSamples ({summary['total']} notes, {words} words): {dt:.2f} s wall "
                  f"incl. start-up, {summary['total'] / dt:.2f} cases/s; ok={summary['ok']} "
                  f"rejected={summary['rejected']} failed={summary['failed']} (exit {proc.returncode})")
    subprocess.run([sys.executable, str(ROOT / "tests" / "bench" / "extraction_quality.py")], check=False)


if __name__ == "__main__":
    main()
