"""Masking quality on the PhysioNet deid dev half, whole and by patient-disjoint parts.

The dev half (../shared/data/physionet-deid-dev, GPL-2.0; see ../shared/data/LICENSES.md) holds the patients with
odd ids. Two patient-disjoint splits of it are scored, so that a change can be judged on patients it was not
tuned on:

* split 1: part A (patient id = 1 mod 4) and part B (3 mod 4);
* split 2: part C (1 or 3 mod 8) and part D (5 or 7 mod 8).

Rules are developed on ``dev`` (1 mod 8, the patients that are in A and in C) only; B, D and ``held-out``
(3, 5 or 7 mod 8) are only ever scored. ``--show`` prints, for the development patients alone, the gold spans
that still leak and the predictions that overlap no gold span, with a little context; it refuses other parts.

Printed per part: notes, gold spans, entity recall (at least half of a gold span's characters masked), strict
recall, precision (predicted spans overlapping a gold span), document all-or-nothing, recall per gold label and
the number of notes that still leak per label. Rules only, default policy (``identifiers``), as
``anonpsy mask-eval --format physionet`` scores them.

    python tests/bench/physionet_parts.py [--json FILE] [--show leaks|false-positives]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "data" / "physionet-deid-dev"

PARTS: dict[str, Callable[[int], bool]] = {
    "whole": lambda p: True,
    "A": lambda p: p % 4 == 1,
    "B": lambda p: p % 4 == 3,
    "C": lambda p: p % 8 in (1, 3),
    "D": lambda p: p % 8 in (5, 7),
    "dev": lambda p: p % 8 == 1,
    "held-out": lambda p: p % 8 in (3, 5, 7),
}
DESCRIPTION = {
    "whole": "all 1,450 notes",
    "A": "split 1, patients 1 mod 4",
    "B": "split 1, patients 3 mod 4 (scored only)",
    "C": "split 2, patients 1 or 3 mod 8",
    "D": "split 2, patients 5 or 7 mod 8 (scored only)",
    "dev": "patients 1 mod 8 (developed on)",
    "held-out": "patients 3, 5 or 7 mod 8 (scored only)",
}


def patient(doc_id: str) -> int:
    """The patient number of a PhysioNet record id ("12-3" -> 12)."""
    return int(doc_id.split("-", 1)[0])


def predict(docs: list) -> list:  # type: ignore[type-arg]
    """Rule predictions for every document, default policy."""
    from anonpsy.phi.operators import MaskOperator
    from anonpsy.phi.pipeline import mask_text
    from anonpsy.phi.readers import Document, GoldSpan

    masker = MaskOperator()
    out = []
    for doc in docs:
        result = mask_text(doc.text, operator=masker, policy="identifiers")
        out.append(Document(doc.id, doc.text, tuple(GoldSpan(s.start, s.end, s.type) for s in result.spans)))
    return out


def figures(gold: list, pred: list) -> dict:  # type: ignore[type-arg]
    """Coverage figures of one part."""
    from anonpsy.phi import scoring

    report = scoring.score_coverage(gold, pred)
    leaking = report.leaking_by_label()
    return {
        "notes": report.documents,
        "gold": report.gold,
        "recall": round(report.recall, 4),
        "strict_recall": round(report.strict_recall, 4),
        "precision": round(report.precision, 4),
        "all_or_nothing": round(report.all_or_nothing, 4),
        "per_label": {
            k: {"gold": v.gold, "recall": round(v.detected / v.gold, 4) if v.gold else 1.0}
            for k, v in sorted(report.per_label.items())
        },
        "leaking_notes": {k: len(v) for k, v in leaking.items()},
    }


def _context(text: str, start: int, end: int, width: int = 50) -> str:
    lo, hi = max(0, start - width), min(len(text), end + width)
    return (text[lo:start] + "[[" + text[start:end] + "]]" + text[end:hi]).replace("\n", " ")


def show(kind: str, gold: list, pred: list) -> None:  # type: ignore[type-arg]
    """Print leaks or false positives of the development patients."""
    from anonpsy.phi import scoring

    for g, p in zip(gold, pred, strict=True):
        if kind == "leaks":
            report = scoring.score_coverage([g], [p])
            for leak in report.leaks:
                print(f"{g.id}\t{leak.label}\t{leak.coverage:.2f}\t{_context(g.text, leak.start, leak.end)}")
        else:
            for s in p.spans:
                if not any(x.start < s.end and s.start < x.end for x in g.spans):
                    print(f"{g.id}\t{s.type}\t{_context(g.text, s.start, s.end)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    ap.add_argument("--show", choices=["leaks", "false-positives"], help="print them for the dev patients only")
    ap.add_argument("--part", default="dev", help="the part --show prints (only 'dev' is allowed)")
    args = ap.parse_args(argv)
    if not CORPUS.is_dir():
        print(f"skipped: {CORPUS} not found (the PhysioNet deid dev half)")
        return 0
    from anonpsy.phi.readers import read_physionet

    gold = read_physionet(CORPUS)
    pred = predict(gold)
    if args.show:
        if args.part != "dev":
            print("E: only the development patients (dev, 1 mod 8) may be inspected", file=sys.stderr)
            return 2
        sel = [i for i, d in enumerate(gold) if PARTS["dev"](patient(d.id))]
        show(args.show, [gold[i] for i in sel], [pred[i] for i in sel])
        return 0
    out = {}
    for name, keep in PARTS.items():
        sel = [i for i, d in enumerate(gold) if keep(patient(d.id))]
        out[name] = figures([gold[i] for i in sel], [pred[i] for i in sel])
    labels = sorted({k for f in out.values() for k in f["per_label"]})
    head = f"{'part':<9}{'notes':>6}{'gold':>6}{'recall':>8}{'strict':>8}{'prec':>7}{'AoN':>7}"
    print(head + "  " + "  ".join(f"{lab[:10]:>10}" for lab in labels))
    for name, f in out.items():
        row = (
            f"{name:<9}{f['notes']:>6}{f['gold']:>6}{f['recall']:>8.3f}{f['strict_recall']:>8.3f}"
            f"{f['precision']:>7.3f}{f['all_or_nothing']:>7.3f}"
        )
        cells = []
        for lab in labels:
            pl = f["per_label"].get(lab)
            cells.append(f"{pl['recall']:>5.2f}/{f['leaking_notes'].get(lab, 0):<4}" if pl else f"{'-':>10}")
        print(row + "  " + "  ".join(f"{c:>10}" for c in cells))
    print("label cells: recall / notes still leaking that label")
    for name, text in DESCRIPTION.items():
        print(f"  {name}: {text}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
