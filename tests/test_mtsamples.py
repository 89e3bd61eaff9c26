"""End to end on public MTSamples psychiatry notes (CC0; ../shared/data/mtsamples-psych-dev): every case completes,
every invariant holds and the leak audit is empty. Skipped when the shared data is absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anonpsy.pipeline import deid_text
from anonpsy.validate import structural_violations

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "mtsamples-psych-dev" / "notes.jsonl"

pytestmark = pytest.mark.skipif(not DATA.is_file(), reason="../shared/data/mtsamples-psych-dev is not present")


def _notes() -> list[dict[str, object]]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("seed", [0, 1])
def test_mtsamples_deid_completes_with_invariants_and_no_leaks(seed: int) -> None:
    notes = _notes()
    assert len(notes) == 25
    problems = []
    for note in notes:
        cid = str(note["note_id"])
        result = deid_text(str(note["text"]), seed=seed, case_id=cid)
        if result.audit.violations:
            problems.append(f"{cid}: violations {[v['code'] for v in result.audit.violations]}")
        if result.leaks.leaks:
            problems.append(f"{cid}: leaks {[leak.kind for leak in result.leaks.leaks]}")
        if structural_violations(result.perturbed):
            problems.append(f"{cid}: perturbed graph is structurally invalid")
        assert result.text.strip()
    assert problems == []
