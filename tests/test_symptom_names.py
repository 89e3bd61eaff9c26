"""A symptom written by a clinical name of its own (``names`` in rules/lexicon/symptoms.yaml: "altered mental
status", "speech and language delay") keeps that name in the graph, and so in the output; a synonym is told by
its headword. The sentences are short synthetic ones."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from anonpsy import lexicon
from anonpsy.extract import extract

_NAMES = sorted((e.id, e.headword, n) for e in lexicon.symptom_lexicon().rules for n in e.names)


def _symptoms(text: str) -> dict[str, str]:
    g = extract(text, case_id="t")
    return {s.id: s.headword for s in g.symptoms if s.asserted}


def test_some_symptoms_have_names() -> None:
    assert len(_NAMES) >= 10


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(_NAMES), st.sampled_from(["She presents with {}.", "ASSESSMENT: 1. {}."]), st.booleans())
@example(("fluctuating_consciousness", "fluctuating consciousness", "altered mental status"),
         "She presents with {}.", False)
def test_a_symptom_named_by_its_clinical_name_keeps_it(entry: tuple[str, str, str], frame: str,
                                                      capital: bool) -> None:
    sid, _head, name = entry
    written = name.capitalize() if capital or frame.startswith("ASSESSMENT") else name
    found = _symptoms(frame.format(written))
    assert found.get(f"sx_{sid.replace('.', '_')}") == name or name in found.values(), found


def test_a_synonym_is_told_by_its_headword() -> None:
    assert "confusion" in _symptoms("She presents with acute confusion.").values()


def test_a_later_name_replaces_the_headword_of_an_earlier_synonym() -> None:
    found = _symptoms("He has had frequent falls. ASSESSMENT: 1. Mild gait impairment.")
    assert "mild gait impairment" in found.values()
    assert "gait disturbance" not in found.values()


@given(st.sampled_from(_NAMES), st.sampled_from(["mild", "moderate", "severe", "mild to moderate"]))
@settings(max_examples=15, deadline=None)
@example(("slowed_thinking", "slowed thinking", "cognitive slowing"), "mild")
def test_a_named_symptom_keeps_the_grade_written_before_it(entry: tuple[str, str, str], grade: str) -> None:
    _sid, _head, name = entry
    found = _symptoms(f"ASSESSMENT: 1. {grade.capitalize()} {name}.")
    assert f"{grade} {name}" in found.values(), found
