"""Throughput of `anonpsy mask` on a ~10 MB JSONL corpus.

Builds the corpus in a temporary directory from the shared datasets (MTSamples psychiatry notes,
presidio-research sentences, asq-phi queries; see ../shared/data/LICENSES.md) or from synthetic text when they
are absent, runs the `mask` command in process, and prints MB/s and peak memory (resource.getrusage).

    python tests/bench/bench_mask.py [--mb 10] [--operator mask|surrogate|hash] [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

from anonpsy.phi import cli as phi_cli

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"

_SYNTHETIC = (
    "Patient Harriet Vossberg (MRN 40381927) was seen by Dr. Emil Sarkissian at Pinecrest Clinic on "
    "March 12, 2019 for low mood, early waking and poor concentration over six weeks. "
    "She can be reached at (614) 555-0173 or "
    "h.vossberg@example.org. Follow-up on 3/26/2019. PHQ-9 16; sertraline 50 mg daily started."
)


def source_texts() -> list[str]:
    """Texts from the shared datasets, or one synthetic note when none is available."""
    texts: list[str] = []
    notes = SHARED / "mtsamples-psych-dev" / "notes.jsonl"
    if notes.is_file():
        texts += [json.loads(line)["text"] for line in notes.read_text().splitlines() if line.strip()]
    presidio = SHARED / "presidio-synth" / "synth_dataset_v2.json"
    if presidio.is_file():
        texts += [d["full_text"] for d in json.loads(presidio.read_text())]
    asq = SHARED / "asq-phi-dev" / "queries.txt"
    if asq.is_file():
        for block in asq.read_text().split("===QUERY===")[1:]:
            texts.append(block.split("===PHI_TAGS===")[0].strip())
    if not texts:
        print("shared datasets absent: using synthetic text", file=sys.stderr)
        texts = [_SYNTHETIC]
    return texts


def build_corpus(path: Path, target_bytes: int) -> int:
    """Write JSONL records cycling through the source texts until ``target_bytes``; returns text bytes."""
    texts = source_texts()
    size = 0
    text_bytes = 0
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        while size < target_bytes:
            text = texts[n % len(texts)]
            line = json.dumps({"id": f"doc-{n:06d}", "text": text, "patient_id": f"p{n % 97}"}) + "\n"
            fh.write(line)
            size += len(line.encode())
            text_bytes += len(text.encode())
            n += 1
    return text_bytes


def stub_analyzer() -> None:
    """Swap the rule analyzer for a handful of regexes (phones, e-mails, dates, capitalised name pairs)."""
    import re

    from anonpsy.phi import pipeline
    from anonpsy.phi.spans import Span

    patterns = [
        (re.compile(r"\(?\b\d{3}\)?[ .-]\d{3}-\d{4}\b"), "TELEPHONE_NUMBER"),
        (re.compile(r"\b[\w.]+@[\w.-]+\.[a-z]{2,}\b"), "EMAIL"),
        (re.compile(r"\b\d{1,2}/\d{1,2}/\d{4}\b|\b\d{4}-\d{2}-\d{2}\b"), "DATE"),
        (re.compile(r"\b(?:Dr\. )?[A-Z][a-z]+ [A-Z][a-z]+\b"), "PERSON"),
    ]

    def analyze(text: str) -> list[Span]:
        return [Span(m.start(), m.end(), t) for rx, t in patterns for m in rx.finditer(text)]

    pipeline.default_analyzer = analyze


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=10.0)
    parser.add_argument(
        "--operator", default="mask", choices=["mask", "surrogate", "hash", "redact", "generalize"]
    )
    parser.add_argument("--profile", action="store_true", help="print the top cProfile entries")
    parser.add_argument(
        "--stub-analyzer",
        action="store_true",
        help="replace the rule analyzer by a few regexes, to time the masking path alone",
    )
    args = parser.parse_args()
    if args.stub_analyzer:
        stub_analyzer()
    os.environ.setdefault("ANONPSY_HMAC_KEY", "benchmark-key-not-secret-0123456789")
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        text_bytes = build_corpus(corpus, int(args.mb * 1024 * 1024))
        out = Path(tmp) / "out.jsonl"
        cli_args = [str(corpus), "--input-format", "jsonl", "--operator", args.operator, "-o", str(out)]
        if args.operator == "surrogate":
            cli_args += ["--vault", str(Path(tmp) / "vault.sqlite")]
        runner = CliRunner()
        # warm-up: load the rules and reference lists once
        runner.invoke(phi_cli.mask, ["-", "--operator", args.operator], input="Warm up on 3/12/2019.")
        started = time.perf_counter()
        if args.profile:
            import cProfile
            import pstats

            prof = cProfile.Profile()
            prof.enable()
        result = runner.invoke(phi_cli.mask, cli_args, catch_exceptions=False)
        elapsed = time.perf_counter() - started
        if args.profile:
            prof.disable()
            pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
        if result.exit_code != 0:
            print(result.output, file=sys.stderr)
            raise SystemExit(result.exit_code)
        records = sum(1 for _ in out.open())
        file_mb = corpus.stat().st_size / 1e6
    analyzer = "stub" if args.stub_analyzer else "rules"
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        f"operator={args.operator} analyzer={analyzer} records={records} "
        f"input={file_mb:.2f} MB (text {text_bytes / 1e6:.2f} MB) "
        f"time={elapsed:.2f} s throughput={file_mb / elapsed:.2f} MB/s peak_rss={peak_kb / 1024:.0f} MiB"
    )


if __name__ == "__main__":
    main()
