"""The text path: detection, overlap resolution, operators, output offsets."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anonpsy.phi.dateshift import find_dates
from anonpsy.phi.operators import MaskContext, MaskOperator, build_operator
from anonpsy.phi.pipeline import UNCHECKED_TYPE, apply_operator, mask_text
from anonpsy.phi.spans import Span

KEY = b"0123456789abcdef-test-key"
_PHONE = re.compile(r"\(?\b\d{3}\)?[ .-]\d{3}-\d{4}\b")
_EMAIL = re.compile(r"\b[\w.]+@[\w.-]+\.[a-z]{2,}\b")


def make_analyzer(names: list[str]):  # type: ignore[no-untyped-def]
    """A small rule analyzer for tests: the given names, phones, e-mails and dates."""

    def analyze(text: str) -> list[Span]:
        spans = [Span(m.start(), m.end(), "TELEPHONE_NUMBER") for m in _PHONE.finditer(text)]
        spans += [Span(m.start(), m.end(), "EMAIL") for m in _EMAIL.finditer(text)]
        spans += [Span(a, b, "DATE") for a, b in find_dates(text)]
        for name in names:
            spans += [Span(m.start(), m.end(), "PERSON") for m in re.finditer(re.escape(name), text)]
        return spans

    return analyze


TEXT = "Adam Wilson called (614) 555-0173 on March 5, 2021; Wilson wrote to a.wilson@example.org."
ANALYZER = make_analyzer(["Adam Wilson", "Wilson"])


def test_mask_with_output_offsets() -> None:
    res = mask_text(TEXT, operator="mask", analyzer=ANALYZER)
    assert res.text == "[PERSON] called [TELEPHONE_NUMBER] on [DATE]; [PERSON] wrote to [EMAIL]."
    for s in res.spans:
        assert res.text[s.out_start : s.out_end] == f"[{s.type}]"
    assert [s.type for s in res.spans] == ["PERSON", "TELEPHONE_NUMBER", "DATE", "PERSON", "EMAIL"]
    assert res.stats["spans"] == 5 and res.stats["by_type"]["PERSON"] == 2


def test_overlaps_are_resolved_longest_first() -> None:
    res = mask_text("Adam Wilson", operator="mask", analyzer=make_analyzer(["Adam Wilson", "Wilson"]))
    assert res.text == "[PERSON]" and len(res.spans) == 1


def test_redact_and_generalize() -> None:
    assert mask_text(TEXT, operator="redact", analyzer=ANALYZER).text == " called  on ;  wrote to ."
    assert "2021" in mask_text(TEXT, operator="generalize", analyzer=ANALYZER).text


def test_surrogate_operator_keeps_shape_and_consistency() -> None:
    op = build_operator("surrogate", key=KEY)
    res = mask_text(TEXT, operator=op, patient_id="p1", analyzer=ANALYZER)
    assert "Wilson" not in res.text and "555-0173" not in res.text
    first, _phone, date, last, _email = (res.text[s.out_start : s.out_end] for s in res.spans)
    assert first.split()[-1] == last
    assert re.fullmatch(r"[A-Z][a-z]+ \d{1,2}, \d{4}", date)


def test_keyed_operator_by_name_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANONPSY_HMAC_KEY", "k" * 24)
    res = mask_text(TEXT, operator="hash", analyzer=ANALYZER)
    assert "[PERSON:" in res.text


def test_apply_operator_rejects_overlaps_and_handles_unchecked() -> None:
    with pytest.raises(ValueError):
        apply_operator("abcdef", [Span(0, 3, "PERSON"), Span(2, 4, "PERSON")], MaskOperator())
    res = apply_operator(
        "abc def", [Span(0, 3, UNCHECKED_TYPE, "llm_failure")], MaskOperator(), MaskContext()
    )
    assert res.text == "[UNCHECKED] def"


_CONS = "bcdfghjklmnpqrstvwxz"
_name = st.tuples(
    st.text(_CONS, min_size=3, max_size=8).map(str.capitalize),
    st.text(_CONS, min_size=3, max_size=8).map(str.capitalize),
).map(" ".join)
_filler = st.sampled_from(["was seen today.", "reports low mood;", "and", "called", "- follow up", "\n"])


@given(
    names=st.lists(_name, min_size=1, max_size=4, unique=True),
    picks=st.lists(st.tuples(st.integers(0, 3), _filler), min_size=1, max_size=8),
    phone=st.text("0123456789", min_size=10, max_size=10),
    operator=st.sampled_from(["mask", "redact", "hash", "surrogate"]),
)
def test_masking_output_contains_no_detected_value(
    names: list[str], picks: list[tuple[int, str]], phone: str, operator: str
) -> None:
    parts = []
    for i, filler in picks:
        parts += [names[i % len(names)], filler]
    parts.append(f"Call {phone[:3]}-{phone[3:6]}-{phone[6:]}.")
    text = " ".join(parts)
    analyzer = make_analyzer(names)
    detected = {text[s.start : s.end] for s in analyzer(text)}
    res = mask_text(text, operator=build_operator(operator, key=KEY), analyzer=analyzer)
    for value in detected:
        assert value not in res.text


def test_safe_harbor_policy_keeps_quasi_identifiers_and_masks_identifiers() -> None:
    text = "A 45-year-old man seen at Mercy Hospital on 03/14/2025, age 93, asked about metformin."
    safe = mask_text(text, policy="safe-harbor").text
    assert "45-year-old" in safe, "ages up to 89 are not Safe Harbor identifiers"
    assert "03/14/2025" not in safe and "93" not in safe and "Mercy Hospital" not in safe
    everything = mask_text(text, policy="all").text
    assert "45-year-old" not in everything


def test_unknown_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="policy"):
        mask_text("text", policy="nope")  # type: ignore[arg-type]
