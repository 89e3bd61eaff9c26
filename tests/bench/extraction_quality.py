"""Extraction quality of the rules backend on fixtures/cases: per-field precision and recall.

Run: python tests/bench/extraction_quality.py [--per-case]
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from anonpsy.extract import extract
from anonpsy.extract.scoring import Counts, score_against_expected
from anonpsy.temporal import normalize

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    totals: dict[str, Counts] = {}
    per_case = "--per-case" in sys.argv
    for txt in sorted((ROOT / "fixtures" / "cases").glob("*.txt")):
        expected = yaml.safe_load(txt.with_suffix(".expected.yaml").read_text(encoding="utf-8"))
        g = normalize(extract(txt.read_text(encoding="utf-8"), case_id=txt.stem))
        scores = score_against_expected(g, expected)
        for k, c in scores.items():
            totals.setdefault(k, Counts()).add(c)
        if per_case:
            missing = {s["headword"] for s in expected["symptoms"]} - {s.headword for s in g.symptoms}
            extra = {s.headword for s in g.symptoms} - {s["headword"] for s in expected["symptoms"]}
            dx_missing = set(expected["diagnoses"]) - {d.rule_id for d in g.diagnoses}
            dx_extra = {d.rule_id for d in g.diagnoses} - set(expected["diagnoses"])
            print(f"{txt.stem}: dx-missing={sorted(dx_missing)} dx-extra={sorted(dx_extra)}")
            print(f"   sx-missing={sorted(missing)}\n   sx-extra={sorted(extra)}")
    print(f"{'field':18} {'P':>6} {'R':>6} {'F1':>6}   tp/fp/fn")
    for k, c in totals.items():
        print(f"{k:18} {c.precision:6.3f} {c.recall:6.3f} {c.f1:6.3f}   {c.tp}/{c.fp}/{c.fn}")


if __name__ == "__main__":
    main()
