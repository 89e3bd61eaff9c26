"""Operators: each validates its parameters; keyed operators refuse to run without a key."""

from __future__ import annotations

from pathlib import Path

import pytest

from anonpsy.errors import AnonpsyError
from anonpsy.phi import operators as ops
from anonpsy.phi.operators import MaskContext
from anonpsy.phi.spans import Span

KEY = b"0123456789abcdef-test-key"
CTX = MaskContext()


def test_mask_and_redact() -> None:
    assert ops.MaskOperator().replace("Adam Wilson", "PERSON", CTX) == "[PERSON]"
    assert ops.MaskOperator("<{type}>").replace("x", "DATE", CTX) == "<DATE>"
    assert ops.RedactOperator().replace("Adam Wilson", "PERSON", CTX) == ""


def test_hash_is_keyed_deterministic_and_normalized() -> None:
    h = ops.HashOperator(KEY)
    a = h.replace("(555) 123-4567", "TELEPHONE_NUMBER", CTX)
    assert a == h.replace("555-123-4567", "TELEPHONE_NUMBER", CTX)
    assert a == h.replace("+1 555 123 4567", "TELEPHONE_NUMBER", CTX)
    assert a.startswith("[TELEPHONE_NUMBER:") and len(a) == len("[TELEPHONE_NUMBER:]") + 16
    assert h.replace("Adam Wilson", "PERSON", CTX) == h.replace("adam  wilson", "PERSON", CTX)
    assert h.replace("Adam Wilson", "PERSON", CTX) != ops.HashOperator(b"another-key-abcdefgh").replace(
        "Adam Wilson", "PERSON", CTX
    )
    assert "Adam" not in h.replace("Adam Wilson", "PERSON", CTX)


def test_hash_without_key_is_a_typed_error() -> None:
    with pytest.raises(AnonpsyError) as err:
        ops.build_operator("hash")
    assert err.value.code == ops.M100_MISSING_KEY
    assert "\n" not in err.value.one_line()


def test_load_key_sources(tmp_path: Path) -> None:
    assert ops.load_key({"ANONPSY_HMAC_KEY": "k" * 20}) == b"k" * 20
    f = tmp_path / "key"
    f.write_bytes(b"f" * 32 + b"\n")
    assert ops.load_key({"ANONPSY_HMAC_KEY_FILE": str(f)}) == b"f" * 32
    assert ops.load_key({"ANONPSY_HMAC_KEY": "k" * 20}, key_file=f) == b"f" * 32
    with pytest.raises(AnonpsyError) as err:
        ops.load_key({})
    assert err.value.code == "M100"
    with pytest.raises(AnonpsyError) as err:
        ops.load_key({"ANONPSY_HMAC_KEY_FILE": str(tmp_path / "missing")})
    assert err.value.code == "M100"
    with pytest.raises(AnonpsyError) as err:
        ops.load_key({"ANONPSY_HMAC_KEY": "short"})
    assert err.value.code == "M106"


@pytest.mark.parametrize(
    ("value", "etype", "expected"),
    [
        ("89", "AGE", "89"),
        ("90", "AGE", "90 or older"),
        ("103-year-old", "AGE", "90 or older"),
        ("March 12, 2019", "DATE", "2019"),
        ("03/12/1958", "BIRTH_DATE_TIME", "1958"),
        ("3/12", "DATE", "[DATE]"),
        ("44120-1234", "ZIP_CODE", "441"),
        ("Adam Wilson", "PERSON", "[PERSON]"),
    ],
)
def test_generalize(value: str, etype: str, expected: str) -> None:
    assert ops.GeneralizeOperator().replace(value, etype, CTX) == expected


def test_generalize_age_bands() -> None:
    g = ops.GeneralizeOperator(age_band=10)
    assert g.replace("34", "AGE", CTX) == "30-39"
    assert g.replace("85", "AGE", CTX) == "80-89"
    assert g.replace("91", "AGE", CTX) == "90 or older"


def test_dateshift_operator_uses_patient_offset() -> None:
    op = ops.DateShiftOperator(KEY)
    a = op.replace("2019-03-12", "DATE", MaskContext(patient_id="p1"))
    b = op.replace("2019-03-12", "DATE", MaskContext(patient_id="p2"))
    assert a != "2019-03-12"
    assert a == op.replace("2019-03-12", "DATE", MaskContext(patient_id="p1"))
    assert a != b or op.offset("p1") == op.offset("p2")
    assert op.replace("not a date", "DATE", CTX) == "[DATE]"
    assert op.replace("Adam", "PERSON", CTX) == "[PERSON]"


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("mask", {"template": "no placeholder"}),
        ("mask", {"template": "{type} {other}"}),
        ("hash", {"length": 4}),
        ("generalize", {"age_band": 1}),
        ("generalize", {"max_age": 0}),
        ("dateshift", {"low": 10, "high": 1}),
        ("redact", {"x": 1}),
        ("mask", {"unknown": 1}),
        ("nope", {}),
    ],
)
def test_bad_parameters_are_rejected(name: str, params: dict[str, object]) -> None:
    with pytest.raises(AnonpsyError) as err:
        ops.build_operator(name, key=KEY, params=params)
    assert err.value.code == ops.M106_BAD_OPERATOR_PARAM


def test_replacements_per_span() -> None:
    text = "Call 555-123-4567 now"
    spans = [Span(5, 17, "TELEPHONE_NUMBER")]
    assert ops.MaskOperator().replacements(text, spans, CTX) == ["[TELEPHONE_NUMBER]"]


def test_normalize_value() -> None:
    assert ops.normalize_value("MEDICAL_RECORD_NUMBER", "MRN-12 34") == "mrn1234"
    assert ops.normalize_value("PERSON", "  Adam   WILSON. ") == "adam wilson"
    assert ops.normalize_value("TELEPHONE_NUMBER", "1 (555) 123-4567") == "5551234567"
