"""RecordTwin end to end on MTSamples (CC0, ../shared/data/mtsamples-all): table + anonymize + generate + evaluate
with the rules backend (target <= 600 s on 2 cores for ~5,000 documents).

Each stage runs as its own ``anonpsy twin`` process, as a user would run it, and prints its wall time, the CPU time
of its process tree and the load average before it, because this machine is shared: a wall time far above the
CPU time divided by the cores in use means other work competed for them. ``--keep-duplicates`` keeps the 4,941
records as 4,941 documents (the scale target); by default records with the same text are one document (2,356).

    python tests/bench/bench_twin.py [--k 5] [--keep-duplicates] [--jobs 2] [--out DIR] [--corpus PATH]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 600.0
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "data" / "mtsamples-all" / "notes.jsonl.gz"


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def stage(name: str, args: list[str]) -> float:
    load = os.getloadavg()[0]
    c0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "anonpsy", "twin", name, *args], capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if proc.returncode != 0:
        sys.exit(f"{name} failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()[:500]}")
    print(f"{name:<9} wall {wall:7.1f} s, cpu {cpu:7.1f} s, load average before {load:5.2f}")
    for line in proc.stdout.strip().splitlines():
        print(f"          {line}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep-duplicates", action="store_true")
    parser.add_argument("--out", type=Path, default=None, help="Keep the outputs here (default: a temporary dir).")
    args = parser.parse_args()
    if not args.corpus.is_file():
        print(f"skipped: {args.corpus} is not present")
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        t, k = out / "table", str(args.k)
        print(f"corpus {args.corpus.name}; k={k}; jobs {args.jobs}; {os.cpu_count()} cores")
        walls = [
            stage("table", [str(args.corpus), "-o", str(t), "--jobs", str(args.jobs), "--no-progress",
                            *(["--keep-duplicates"] if args.keep_duplicates else [])]),
            stage("anonymize", [str(t), "-k", k, "--no-progress"]),
            stage("generate", [str(t / f"k{k}"), "--examples", "2", "-o", str(t / f"k{k}" / "recordtwin"),
                               "--no-progress", "--restart"]),
            stage("evaluate", [str(t), str(t / f"k{k}" / "recordtwin"), "-o", str(out / "report"), "--jobs",
                               str(args.jobs), "--no-progress"]),
        ]
    total = sum(walls)
    print(f"total wall {total:.1f} s (target <= {TARGET_S:.0f} s): {'OK' if total <= TARGET_S else 'OVER TARGET'}")


if __name__ == "__main__":
    main()
