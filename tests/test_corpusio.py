"""JSONL corpora as every command reads them (``anonpsy.corpusio``)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from anonpsy.corpusio import case_id_from, read_jsonl_records
from anonpsy.errors import AnonpsyError

LINES = [{"note_id": 1758, "text": "a"}, {"id": None, "case_id": "x/y", "text": "b"}, {"text": "c"}]


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    body = "\n".join(json.dumps(r) for r in rows) + "\n\n"
    path.write_bytes(gzip.compress(body.encode()) if path.name.endswith(".gz") else body.encode())
    return path


@pytest.mark.parametrize("name", ["c.jsonl", "c.jsonl.gz"])
def test_records_keep_order_and_take_the_first_present_id(tmp_path: Path, name: str) -> None:
    recs = read_jsonl_records(_write(tmp_path / name, LINES))
    assert [(r.record_id, r.text, r.where) for r in recs] == [
        ("1758", "a", f"{name}:1"), ("x_y", "b", f"{name}:2"), ("line3", "c", f"{name}:3")]


def test_a_duplicate_id_names_the_line_and_the_kind_of_record(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.jsonl", [{"id": "n1", "text": "a"}, {"note_id": "n1", "text": "b"}])
    with pytest.raises(AnonpsyError) as err:
        read_jsonl_records(path, what="case")
    assert err.value.code == "E103" and "duplicate case id" in str(err.value) and "c.jsonl:2" in str(err.value)


@pytest.mark.parametrize(("line", "code"), [("{not json", "E108"), ('{"text": 3}', "E103"), ("[1]", "E103")])
def test_a_bad_line_is_one_coded_error_without_its_text(tmp_path: Path, line: str, code: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(AnonpsyError) as err:
        read_jsonl_records(path)
    assert err.value.code == code and line not in str(err.value)


def test_case_ids_are_safe_file_stems() -> None:
    assert case_id_from("../etc/passwd") == "etc_passwd"
    assert case_id_from("") == "case"
