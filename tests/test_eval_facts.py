"""facts.v1 annotations: schema validation with one-line errors that never quote the file, lookup beside the
corpus, and the shared dev annotations load (../shared/data, skipped when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from anonpsy.errors import AnonpsyError
from anonpsy.evaluate.facts import facts_beside, load_facts

GOOD = """\
- note_id: 12
  sex: female
  age: 33
  diagnoses:
    - {label: attention-deficit/hyperactivity disorder, mentions: [ADHD], status: ruled_out}
  medications:
    - {name: escitalopram, mentions: [Lexapro], status: past}
  denied: [suicidal ideation]
  key_findings: [depressed mood]
- note_id: case-b
  diagnoses: []
  medications: []
  denied: []
"""


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "facts.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_valid_file_loads_keyed_by_case_id(tmp_path: Path) -> None:
    notes = load_facts(_write(tmp_path, GOOD))
    assert list(notes) == ["12", "case-b"]
    n = notes["12"]
    assert n.diagnoses[0].status == "ruled_out" and n.medications[0].mentions == ("Lexapro",)
    assert n.denied == ("suicidal ideation",) and n.age == 33


@pytest.mark.parametrize(("text", "code", "fragment"), [
    (GOOD.replace("status: ruled_out", "status: maybe"), "E103", "diagnoses[0].status: must be one of"),
    (GOOD.replace("status: past", "status: stopped"), "E103", "medications[0].status"),
    (GOOD.replace("  denied: [suicidal ideation]\n", ""), "E103", "missing required field(s) denied"),
    (GOOD.replace("  age: 33\n", "  age: 33\n  colour: blue\n"), "E103", "unknown field(s) colour"),
    (GOOD.replace("mentions: [ADHD]", "mentions: ADHD"), "E103", "must be of type array"),
    (GOOD + "- note_id: 12\n  diagnoses: []\n  medications: []\n  denied: []\n", "E103", "repeats entry 1"),
    ("note_id: 12\n", "E103", "YAML list of notes"),
    ("- note_id: [12\n", "E102", "malformed YAML"),
])
def test_bad_file_gives_one_line_error_without_values(tmp_path: Path, text: str, code: str, fragment: str) -> None:
    with pytest.raises(AnonpsyError) as err:
        load_facts(_write(tmp_path, text))
    line = err.value.one_line()
    assert line.startswith(f"{code} facts.yaml") and fragment in line and "\n" not in line
    for value in ("maybe", "stopped", "blue", "Lexapro", "ADHD"):
        assert value not in line


def test_missing_file_and_file_location(tmp_path: Path) -> None:
    with pytest.raises(AnonpsyError, match="E100"):
        load_facts(tmp_path / "absent.yaml")
    with pytest.raises(AnonpsyError) as err:
        load_facts(_write(tmp_path, GOOD.replace("status: ruled_out", "status: maybe")))
    assert err.value.location == "facts.yaml:5"


def test_facts_beside_a_corpus_file_or_directory(tmp_path: Path) -> None:
    corpus = tmp_path / "notes.jsonl"
    corpus.write_text("{}", encoding="utf-8")
    assert facts_beside(corpus) is None
    _write(tmp_path, GOOD)
    assert facts_beside(corpus) == tmp_path / "facts.yaml"
    assert facts_beside(tmp_path) == tmp_path / "facts.yaml"


DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "mtsamples-psych-dev" / "facts.yaml"


@pytest.mark.skipif(not DEV.is_file(), reason="../shared/data/mtsamples-psych-dev is not present")
def test_shared_dev_annotations_validate() -> None:
    notes = load_facts(DEV)
    assert len(notes) == 25
    assert sum(d.status == "affirmed" for n in notes.values() for d in n.diagnoses) > 30
