"""Record schemas with x-deid actions: fail closed on undescribed fields, output validates."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from anonpsy.errors import AnonpsyError
from anonpsy.phi import records as rec
from anonpsy.phi.operators import HashOperator

KEY = b"0123456789abcdef-test-key"
ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures" / "records"


def _masker(text: str, pointer: str) -> str:
    return "[TEXT]"


def test_registry_lists_three_valid_schemas() -> None:
    assert rec.list_schemas() == ["medication_order", "psych_encounter", "questionnaire_response"]
    for name in rec.list_schemas():
        schema = rec.load_record_schema(name)
        assert rec.check_schema(schema.schema) == []
        assert schema.schema["properties"]["dataType"]["const"] == name


def test_unknown_schema() -> None:
    with pytest.raises(AnonpsyError) as err:
        rec.load_record_schema("nope")
    assert err.value.code == "M107"


def test_check_schema_finds_problems() -> None:
    bad: dict[str, Any] = {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "integer", "x-deid": {"action": "shouldMask", "entity_type": "PERSON"}},
            "c": {"type": "string", "x-deid": {"action": "explode"}},
            "d": {"type": "string", "x-deid": {"action": "shouldMask", "entity_type": "NOPE"}},
        },
    }
    problems = rec.check_schema(bad)
    assert any("additionalProperties" in p for p in problems)
    assert any(p.startswith("/a:") and "no x-deid" in p for p in problems)
    assert any(p.startswith("/b:") and "string fields only" in p for p in problems)
    assert any(p.startswith("/c:") for p in problems)
    assert any(p.startswith("/d:") and "entity_type" in p for p in problems)


def test_encounter_is_deidentified_and_validates() -> None:
    schema = rec.load_record_schema("psych_encounter")
    record = json.loads((FIX / "psych_encounter.json").read_text())
    out = rec.deidentify_record(record, schema, text_masker=_masker, hasher=HashOperator(KEY))
    assert out["patient"]["name"] == "[PERSON]"
    assert out["patient"]["mrn"].startswith("[MEDICAL_RECORD_NUMBER:")
    assert out["patient"]["phones"] == ["[TELEPHONE_NUMBER]", "[TELEPHONE_NUMBER]"]
    assert out["patient"]["birth_year"] == 1987
    assert out["encounter"]["notes"][0]["text"] == "[TEXT]"
    assert out["encounter"]["diagnoses"] == record["encounter"]["diagnoses"]
    dumped = json.dumps(out)
    for value in ("Okafor", "Lindqvist", "40381927", "555-0142", "Larkspur Lane"):
        assert value not in dumped


def test_undescribed_field_fails_closed_naming_the_path_only() -> None:
    schema = rec.load_record_schema("psych_encounter")
    record = json.loads((FIX / "psych_encounter.json").read_text())
    bad = copy.deepcopy(record)
    bad["encounter"]["notes"][1]["nickname"] = "Maggie Secretvalue"
    with pytest.raises(AnonpsyError) as err:
        rec.deidentify_record(bad, schema, text_masker=_masker, hasher=HashOperator(KEY))
    assert err.value.code == "M103"
    assert "/encounter/notes/1/nickname" in err.value.one_line()
    assert "Secretvalue" not in err.value.one_line()


def test_invalid_value_error_has_no_value() -> None:
    schema = rec.load_record_schema("psych_encounter")
    record = json.loads((FIX / "psych_encounter.json").read_text())
    record["patient"]["sex"] = "Zyxwv-secret"
    with pytest.raises(AnonpsyError) as err:
        rec.deidentify_record(record, schema, text_masker=_masker, hasher=HashOperator(KEY))
    assert err.value.code == "M108"
    assert "/patient/sex" in err.value.one_line() and "Zyxwv" not in err.value.one_line()


def test_hash_fields_need_a_key() -> None:
    schema = rec.load_record_schema("psych_encounter")
    record = json.loads((FIX / "psych_encounter.json").read_text())
    assert schema.uses_hash
    with pytest.raises(AnonpsyError) as err:
        rec.deidentify_record(record, schema, text_masker=_masker, hasher=None)
    assert err.value.code == "M100"


def test_jsonl_records() -> None:
    schema = rec.load_record_schema("medication_order")
    records, header = rec.parse_records((FIX / "medication_order.jsonl").read_text(), "jsonl", schema)
    assert len(records) == 2 and header == []
    out = [rec.deidentify_record(r, schema, text_masker=_masker, hasher=HashOperator(KEY)) for r in records]
    assert out[0]["prescriber"]["name"] == "[PERSON]" and out[0]["medication"]["dose"] == 50
    text = rec.dump_records(out, "jsonl", header, single=False)
    assert len(text.splitlines()) == 2 and "Lindqvist" not in text


def test_csv_records_round_trip_columns() -> None:
    schema = rec.load_record_schema("questionnaire_response")
    text = (FIX / "questionnaire_response.csv").read_text()
    records, header = rec.parse_records(text, "csv", schema)
    assert records[0]["items"][0]["score"] == 2 and records[0]["total_score"] == 16
    assert "email" not in records[1]["respondent"]
    out = [rec.deidentify_record(r, schema, text_masker=_masker, hasher=HashOperator(KEY)) for r in records]
    dumped = rec.dump_records(out, "csv", header, single=False)
    assert dumped.splitlines()[0] == text.splitlines()[0]
    assert "Okafor" not in dumped and "example.org" not in dumped


def test_malformed_inputs() -> None:
    schema = rec.load_record_schema("medication_order")
    with pytest.raises(AnonpsyError) as err:
        rec.parse_records("{not json", "json", schema)
    assert err.value.code == "E108"
    with pytest.raises(AnonpsyError) as err:
        rec.parse_records("   ", "json", schema)
    assert err.value.code == "E101"
    with pytest.raises(AnonpsyError) as err:
        rec.parse_records("[1, 2]", "json", schema)
    assert err.value.code == "M108"
