"""Extraction quality of the rules backend on fixtures/cases: per-field precision and recall against the expected
facts, with the targets the backend must keep. Run with ``-s`` to see the table.

Symptom lists in the fixtures are the key symptoms only, so symptom precision is underestimated by design; recall
is the meaningful number there. Diagnosis precision is real.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from anonpsy.extract import extract
from anonpsy.extract.scoring import Counts, score_against_expected
from anonpsy.temporal import normalize

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "cases"

#: (field, measure, minimum). Diagnosis recall >= 0.9 and key-symptom recall >= 0.8 are the published targets.
TARGETS: list[tuple[str, str, float]] = [
    ("diagnoses", "recall", 0.90),
    ("diagnoses", "precision", 0.85),
    ("symptoms", "recall", 0.85),
    ("current_symptoms", "recall", 0.80),
    ("negations", "recall", 0.95),
    ("treatments", "recall", 0.85),
    ("family_history", "recall", 0.75),
    ("visit", "recall", 0.85),
    ("demographics", "recall", 0.90),
]


@pytest.fixture(scope="module")
def totals() -> dict[str, Counts]:
    out: dict[str, Counts] = {}
    for txt in sorted(CASES.glob("*.txt")):
        expected = yaml.safe_load(txt.with_suffix(".expected.yaml").read_text(encoding="utf-8"))
        graph = normalize(extract(txt.read_text(encoding="utf-8"), case_id=txt.stem))
        for field, counts in score_against_expected(graph, expected).items():
            out.setdefault(field, Counts()).add(counts)
    lines = [f"{'field':18} {'P':>6} {'R':>6} {'F1':>6}   tp/fp/fn"]
    for field, c in out.items():
        lines.append(f"{field:18} {c.precision:6.3f} {c.recall:6.3f} {c.f1:6.3f}   {c.tp}/{c.fp}/{c.fn}")
    print("\n" + "\n".join(lines))
    return out


def test_fixtures_are_present() -> None:
    assert len(list(CASES.glob("*.txt"))) >= 20


@pytest.mark.parametrize(("field", "measure", "minimum"), TARGETS, ids=[f"{f}-{m}" for f, m, _ in TARGETS])
def test_extraction_meets_target(totals: dict[str, Counts], field: str, measure: str, minimum: float) -> None:
    value = getattr(totals[field], measure)
    assert value >= minimum, f"{field} {measure} {value:.3f} is below the target {minimum}"
