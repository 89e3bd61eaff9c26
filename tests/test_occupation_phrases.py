"""Occupation phrases: every occupation in the rules reads grammatically in every frame it is written into.

Statuses (retired, on disability, unemployed) are states and take no article; job nouns take "a"/"an" by sound; a
status used as a verb ("he retired as a nurse") keeps its verb frame when the occupation is swapped.
"""

from __future__ import annotations

import re
from functools import cache

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.generate.faithful import generate
from anonpsy.generate.words import indefinite, occupation_is_predicate, occupation_phrase
from anonpsy.graph import CaseGraph, Demographics, Sex
from anonpsy.perturb.demographics import replace_occupation
from anonpsy.rules import tables
from anonpsy.temporal import normalize


@cache
def _labels() -> list[str]:
    t = tables.load_occupations()
    return sorted({o.name for pool in t.rules for o in pool.occupations})


_DOUBLED = re.compile(r"\b(\w+)\s+\1\b", re.I)
_DANGLING = re.compile(r"\b(?:a|an|as)\s*[,.;]|\s,|,,|\b(?:a|an)\s+(?:a|an)\b", re.I)
_ARTICLE = re.compile(r"\b(a|an)\s+([\w-]+)", re.I)


def _grammatical(sentence: str) -> None:
    assert not _DOUBLED.search(sentence), sentence
    assert not _DANGLING.search(sentence), sentence
    for m in _ARTICLE.finditer(sentence):
        assert m.group(1).lower() == indefinite(m.group(2)), sentence
        following = sentence[m.end(1):].strip()
        assert not any(re.match(rf"{re.escape(lbl)}\s*(?:[,.;]|$)", following, re.I) for lbl in _labels()
                       if occupation_is_predicate(lbl)), sentence
    assert not re.search(r",\s+(?:attends|works|goes|lives|stays)\b[^,]*,", sentence), sentence


def _retirement(label: str) -> bool:
    return tables.occupation_status(label) == "retirement"


@pytest.mark.parametrize("label", _labels())
def test_every_occupation_reads_grammatically_in_every_frame(label: str) -> None:
    """The lead's apposition, a copula, an article, a form field, and a status used as a verb."""
    g = normalize(CaseGraph(case_id="occ", demographics=Demographics(age=40, sex=Sex.male, occupation=label)))
    lead = generate(g, seed=0, source="", round_trip=False).text.splitlines()[0]
    assert occupation_phrase(label).lower() in lead.lower()
    frames = [lead,
              replace_occupation("She is a nurse.", "nurse", label),
              replace_occupation("She is unemployed.", "unemployed", label),
              replace_occupation("He works as an engineer at the plant.", "engineer", label),
              replace_occupation("Occupation: unemployed.", "unemployed", label)]
    if _retirement(label):
        frames.append(replace_occupation("He retired as a nurse in 2010.", "retired", label))
    for sentence in frames:
        _grammatical(sentence)


@given(st.sampled_from(["retired", "unemployed", "on disability", "nurse", "student"]),
       st.sampled_from(["retired", "retired nurse", "retired physician", "on disability", "unemployed", "cashier",
                        "engineer", "homemaker", "attends daycare"]))
@example("retired", "retired nurse")
@example("on disability", "unemployed")
def test_occupation_swap_keeps_the_frame(old: str, new: str) -> None:
    """A swap in any of the frames a note uses leaves no doubled or dangling word and no wrong article."""
    for text in (f"He is {occupation_phrase(old)}.", f"The patient, {occupation_phrase(old)}, was seen today.",
                 f"Occupation: {old}.", "He retired as a nurse in 2010." if old == "retired" else f"He is {old}."):
        _grammatical(replace_occupation(text, old, new))


def test_a_verb_status_keeps_its_verb() -> None:
    assert replace_occupation("He retired as a nurse in 2010.", "retired", "retired physician") == \
        "He retired as a physician in 2010."
    assert replace_occupation("He retired as a nurse in 2010.", "retired", "retired") == "He retired in 2010."
    assert occupation_phrase("on disability") == "on disability"
    assert occupation_phrase("engineer") == "an engineer"
    assert occupation_phrase("union organizer") == "a union organizer"
