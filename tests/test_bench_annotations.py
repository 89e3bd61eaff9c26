"""The annotated MTSamples sets of tests/bench/annotations load as facts.v1 and match their notes.

Data: ../shared/data/mtsamples-all/notes.jsonl.gz (MTSamples, CC0; see ../shared/data/LICENSES.md). The note
checks skip when the corpus is absent; the format checks always run.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from anonpsy.evaluate.facts import load_facts

ANNOTATIONS = Path(__file__).resolve().parent / "bench" / "annotations"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "mtsamples-all" / "notes.jsonl.gz"
SETS = sorted(ANNOTATIONS.glob("*.facts.yaml"))


def test_annotated_sets_exist() -> None:
    names = {p.name.removesuffix(".facts.yaml") for p in SETS}
    assert {"fix-a1", "fix-a2", "fix-a3", "fix-a4", "held-b1", "held-b2"} <= names


@pytest.mark.parametrize("path", SETS, ids=lambda p: p.name)
def test_annotated_set_is_facts_v1(path: Path) -> None:
    facts = load_facts(path)
    assert facts, "an annotated set holds at least one note"


def test_annotated_sets_do_not_overlap() -> None:
    seen: dict[str, str] = {}
    for path in SETS:
        for cid in load_facts(path):
            assert cid not in seen, f"note {cid} is in {seen.get(cid)} and {path.name}"
            seen[cid] = path.name


@pytest.fixture(scope="module")
def corpus() -> dict[str, str]:
    if not CORPUS.is_file():
        pytest.skip("../shared/data/mtsamples-all is not present")
    with gzip.open(CORPUS, "rt", encoding="utf-8") as fh:
        return {str(r["note_id"]): r.get("text") or "" for r in map(json.loads, fh)}


@pytest.mark.parametrize("path", SETS, ids=lambda p: p.name)
def test_every_mention_occurs_in_its_note(path: Path, corpus: dict[str, str]) -> None:
    missing: list[str] = []
    for cid, note in load_facts(path).items():
        assert cid in corpus, f"note {cid} of {path.name} is not in the corpus"
        text = corpus[cid]
        for fact in [*note.diagnoses, *note.medications]:
            missing.extend(f"{cid}:{i}" for i, m in enumerate(fact.mentions) if m not in text)
    assert not missing, f"mentions not found verbatim: {missing}"
