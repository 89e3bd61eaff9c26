"""Event ages under age perturbation: none before birth, none above the present age, order kept.

The time since each event is fixed (durations are immutable), so an event's age moves with the present age; the age
step must only pick offsets under which every event age stays possible, and ``check`` must report one that is not.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from anonpsy.graph import Assertion, CaseGraph, Demographics, Duration, Sex, Symptom, Unit
from anonpsy.perturb import check, perturb
from anonpsy.perturb.demographics import event_ages, lowest_age_offset, patient_age_mentions
from anonpsy.temporal import normalize
from anonpsy.textfields import graph_texts

ROOT = Path(__file__).resolve().parents[1]
CASES = sorted((ROOT / "fixtures" / "cases").glob("*.txt"))
_NEGATIVE_AGE = re.compile(r"\bage\s*-\s?\d|(?<![\w-])-\d+[- ]year[- ]old", re.I)
_AT_AGE = re.compile(r"\bat age (\d+)")


@cache
def _fixture_graph(name: str) -> tuple[str, CaseGraph]:
    from anonpsy.extract import extract
    from anonpsy.extract.assembly.build import withhold_identified
    from anonpsy.perturb.contexts import SourceIdentifiers

    text = (ROOT / "fixtures" / "cases" / name).read_text()
    ids = SourceIdentifiers(text)
    return text, normalize(withhold_identified(extract(text, case_id=name[:-4]), ids.find))


def _child(age: int, days_ago: list[int]) -> CaseGraph:
    """A child with one past event per entry of ``days_ago`` (a month long, that many days before the visit)."""
    durations = [Duration(id=f"d{i}", offset=-d, span=min(30, d), unit=Unit.day) for i, d in enumerate(days_ago)]
    symptoms = [Symptom(id=f"sx_{i}", headword="developmental delay", assertion=Assertion.historical,
                        duration_ids=[f"d{i}"]) for i in range(len(days_ago))]
    return normalize(CaseGraph(case_id="ages", demographics=Demographics(age=age, sex=Sex.male),
                               symptoms=symptoms, durations=durations))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([p.name for p in CASES]), st.integers(0, 2**32 - 1))
@example("01_adhd_child.txt", 11)
def test_no_event_age_before_birth_in_fixtures(name: str, seed: int) -> None:
    """Over every fixture and any seed, no event age in the perturbed graph or its rendered text is negative or
    named above the present age, and check agrees."""
    from anonpsy.generate.faithful import generate

    text, g = _fixture_graph(name)
    new, audit = perturb(g, seed)
    before = dict(event_ages(g))
    for nid, a in event_ages(new):
        assert a >= 0 or a >= before[nid], nid
    age = new.demographics.age
    out = generate(new, seed=seed, source=text, round_trip=False).text
    assert not _NEGATIVE_AGE.search(out)
    if age is not None:
        assert all(int(n) <= age for n in _AT_AGE.findall(out))
        for _p, t in graph_texts(new):
            assert not _NEGATIVE_AGE.search(t)
    assert not [v for v in audit.violations if v["code"] == "CHECK_EVENT_AGE"]


@given(st.integers(1, 17), st.lists(st.integers(1, 17 * 365), min_size=1, max_size=3), st.integers(0, 2**32 - 1))
@example(7, [6 * 365 - 180], 11)  # a milestone at 18 months in a 7-year-old
@example(2, [700], 0)
def test_no_offset_puts_an_event_before_birth(age: int, days_ago: list[int], seed: int) -> None:
    days_ago = [d for d in days_ago if d < age * 365] or [age * 365 - 1]
    g = _child(age, days_ago)
    new, audit = perturb(g, seed)
    for _nid, a in event_ages(new):
        assert a > 0
    assert new.demographics.age is not None and new.demographics.age >= 1
    assert check(g, new) == [] and audit.violations == []


@given(st.integers(1, 17), st.lists(st.integers(1, 17 * 365), min_size=2, max_size=4, unique=True),
       st.integers(0, 2**32 - 1))
@example(7, [2000, 300], 11)
def test_event_order_is_preserved(age: int, days_ago: list[int], seed: int) -> None:
    """Events keep their order by age, and every event age stays at or below the present age."""
    days_ago = [d for d in days_ago if d < age * 365]
    g = _child(age, days_ago)
    new, _ = perturb(g, seed)
    old_ages, new_ages = dict(event_ages(g)), dict(event_ages(new))
    order = sorted(old_ages, key=lambda n: old_ages[n])
    assert sorted(new_ages, key=lambda n: new_ages[n]) == order
    assert all(a <= (new.demographics.age or 0) for a in new_ages.values())


@given(st.integers(2, 17), st.integers(1, 16), st.integers(-30, 30))
@example(7, 2, -2)
def test_age_phrases_stay_at_least_one_year(age: int, at: int, delta: int) -> None:
    """An offset at or above the lowest one keeps every named event age at one year or more."""
    at = min(at, age)
    g = CaseGraph(case_id="phr", demographics=Demographics(age=age, sex=Sex.female),
                  symptoms=[Symptom(id="sx_0", headword="speech delay", assertion=Assertion.historical,
                                    evidence_text=f"Sentences by age {at}.")])
    lowest = lowest_age_offset(g)
    assert lowest is not None
    from anonpsy.perturb.demographics import shift_age_mentions

    if delta >= lowest:
        assert all(n >= 1 for n in patient_age_mentions(shift_age_mentions(f"at age {at}", age, delta), 10**3))


def test_check_reports_an_event_before_birth() -> None:
    g = _child(7, [6 * 365])
    younger = g.model_copy(update={"demographics": g.demographics.model_copy(update={"age": 5})})
    assert [v.code for v in check(g, younger)] == ["CHECK_EVENT_AGE"]
    older = g.model_copy(update={"demographics": g.demographics.model_copy(update={"age": 9})})
    assert check(g, older) == []


def test_check_reports_a_negative_or_too_high_age_phrase() -> None:
    g = CaseGraph(case_id="phr", demographics=Demographics(age=7, sex=Sex.male),
                  symptoms=[Symptom(id="sx_0", headword="speech delay", assertion=Assertion.historical,
                                    evidence_text="Sentences by age 2.")])
    for bad in ("Sentences by age -1.", "Sentences by age 6."):
        sx = g.symptoms[0].model_copy(update={"evidence_text": bad})
        new = g.model_copy(update={"demographics": g.demographics.model_copy(update={"age": 5}),
                                   "symptoms": [sx]})
        assert [v.code for v in check(g, new)] == ["CHECK_EVENT_AGE"], bad
