"""The leak audit counts a long number as an identifier unless it is a dose or a measurement."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.pipeline import leak_audit

_UNITS = ["mg", "mL", "ml", "cc", "L", "liters", "units", "kcal", "mEq", "%", "red blood cells", "white blood cells",
          "cells", "RBCs", "WBC", "platelets"]


@given(n=st.integers(min_value=1000, max_value=99999), unit=st.sampled_from(_UNITS), space=st.sampled_from(["", " "]))
@example(n=1000, unit="cc", space=" ")
@example(n=3200, unit="red blood cells", space=" ")
def test_leak_audit_measurements_are_no_number_leak(n: int, unit: str, space: str) -> None:
    """A dose or volume repeated in the output ('1000 cc of saline') is clinical content, not an identifier."""
    dose = f"{n}{space}{unit}"
    report = leak_audit(f"The wound was irrigated with {dose} of saline.", f"Irrigation used {dose} of saline.")
    assert not [lk for lk in report.leaks if lk.kind == "NUMBER"]


@given(n=st.integers(min_value=1000, max_value=99999),
       word=st.sampled_from(["Lincoln Street", "Lane", "ccc", "cases", "Cellar Road", "Redwood Drive"]))
@example(n=4321, word="Lane")
@example(n=1960, word="Lane")
def test_leak_audit_numbers_before_other_words_still_leak(n: int, word: str) -> None:
    """A long number before a word that only starts like a unit ('L' of 'Lane', 'cc' of 'ccc') is still reported.

    A number that reads as a year (1960) is reported as a DATE leak instead; either way it is reported once.
    """
    report = leak_audit(f"Reference {n} {word} was noted.", f"Record {n} {word}.")
    assert len([lk.kind for lk in report.leaks if lk.kind in ("NUMBER", "DATE")]) == 1


_AGE_OUTPUTS = [
    "Seen at {o} years of age.", "A {o}-year-old man.", "A {o} yo woman.", "Aged {o}, she moved.", "At {o}, he left.",
    "He takes {o} mg daily.", "Room {o}{o}.", "Item 1{o} on the list.", "She was {o}y/o.", "No number here.",
]


@given(n=st.integers(min_value=0, max_value=130), o=st.integers(min_value=0, max_value=130),
       form=st.sampled_from(_AGE_OUTPUTS))
@example(n=11, o=11, form="Room {o}{o}.")
@example(n=11, o=11, form="She was {o}y/o.")
def test_leak_audit_age_hits_are_those_of_the_age_phrase(n: int, o: int, form: str) -> None:
    """An age of the source is reported where its phrase occurs in the output, whether or not the output writes
    the number elsewhere (the audit skips the phrase search for a number it never writes)."""
    from anonpsy.pipeline import _age_phrase

    output = form.format(o=o)
    report = leak_audit(f"She is a {n}-year-old woman.", output)
    hit = _age_phrase(str(n)).search(output)
    found = [(lk.output_start, lk.output_end) for lk in report.leaks if lk.kind == "AGE"]
    assert found == ([(hit.start(), hit.end())] if hit else [])
