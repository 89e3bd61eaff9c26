"""A school grade is as precise as an age: it is read as its school level and never copied (synthetic notes)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anonpsy.extract import extract
from anonpsy.extract.mentions.demographics import school_level
from anonpsy.pipeline import deid_text
from anonpsy.rules import tables

_NOTE = ("IDENTIFYING DATA: The patient is a boy referred by his school counselor.\n"
         "SOCIAL HISTORY: The patient is currently in the {grade} grade. He lives with his mother.\n"
         "HISTORY OF PRESENT ILLNESS: He has had low mood and poor sleep for two months.")


@pytest.mark.parametrize(("grade", "level"), [
    ("2nd", "elementary school student"), ("fifth", "elementary school student"), ("7th", "middle school student"),
    ("10th", "high school student"), ("twelfth", "high school student")])
def test_a_grade_is_read_as_its_school_level(grade: str, level: str) -> None:
    assert extract(_NOTE.format(grade=grade), case_id="sg").demographics.occupation == level


def test_a_grade_is_not_copied_when_the_age_is_unknown() -> None:
    r = deid_text(_NOTE.format(grade="10th"), seed=0, case_id="sg")
    assert "10th" not in r.text and "in the 10th" not in r.text
    assert "high school student" in r.text
    assert not r.leaks.leaks


@given(grade=st.integers(min_value=1, max_value=12))
def test_school_level_of_a_grade_is_a_pool_occupation_for_its_usual_age(grade: int) -> None:
    """Property: the level of grade g is an occupation the pools allow at the usual age of grade g (g + 5)."""
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(grade, "th")
    level = school_level(f"in the {grade}{suffix} grade")
    assert level is not None
    assert level in {o.name for o in tables.occupation_pool(grade + 5, None)}


def test_words_without_a_grade_have_no_school_level() -> None:
    assert school_level("sophomore") is None
    assert school_level("in the 13th grade") is None


def test_a_possessed_role_is_someone_elses_occupation() -> None:
    """'referred by his school counselor': the counselor's job is not the patient's."""
    g = extract("SOCIAL HISTORY: He was referred by his school counselor and lives with his mother.", case_id="sg")
    assert g.demographics.occupation is None
    g = extract("SOCIAL HISTORY: He works as a school counselor and lives with his mother.", case_id="sg")
    assert g.demographics.occupation == "school counselor"
