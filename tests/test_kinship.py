"""The relationship vocabulary (rules/lexicon/kinship.yaml) and the steps that draw on it."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy import kinship
from anonpsy.extract.assembly.steb import _patients_belief
from anonpsy.extract.mentions.family import MEMBER, member_before

VOCAB = kinship.vocabulary()
ENTRIES = VOCAB.rules
GROUPS = sorted({e.group for e in ENTRIES})


def test_every_group_is_used_and_blood_relatives_are_a_subset_of_the_family() -> None:
    assert set(GROUPS) == set(kinship.EVERYONE)
    assert set(kinship.RELATIVES) < set(kinship.FAMILY) < set(kinship.EVERYONE)


def test_no_surface_form_belongs_to_two_relations() -> None:
    seen: dict[str, str] = {}
    for e in ENTRIES:
        for s in e.surfaces(plurals=True):
            assert seen.setdefault(s.lower(), e.id) == e.id, s


@given(entry=st.sampled_from(ENTRIES), plural=st.booleans(), data=st.data())
def test_property_alternation_matches_exactly_the_forms_of_its_groups(
        entry: kinship.KinEntry, plural: bool, data: st.DataObject) -> None:
    forms = entry.surfaces(plurals=plural)
    if not forms:
        return
    form = data.draw(st.sampled_from(forms))
    mine = re.compile(kinship.alternation((entry.group,)), re.I)
    assert mine.fullmatch(form) and mine.fullmatch(form.upper())
    others = tuple(g for g in kinship.EVERYONE if g != entry.group)
    assert not re.fullmatch(kinship.alternation(others), form, re.I)


@given(entry=st.sampled_from(ENTRIES), mods=st.lists(st.sampled_from(VOCAB.modifiers), max_size=2),
       sep=st.sampled_from([" ", "-"]))
@example(entry=next(e for e in ENTRIES if e.id == "kin.sister"), mods=["twin"], sep=" ")
def test_property_find_names_the_relation_whatever_its_modifiers(
        entry: kinship.KinEntry, mods: list[str], sep: str) -> None:
    text = f"Her {sep.join([*mods, entry.forms[0]])} came."
    assert [m.id for m in kinship.find(text)] == [entry.id]


def test_family_history_member_takes_every_modifier_before_a_blood_relative() -> None:
    m = MEMBER.search("several paternal great aunts had breast cancer")
    assert m and m.group(1) == "paternal great aunts"
    assert member_before("His mum had depression", 8) == "mum"
    assert MEMBER.search("her husband drinks") is None


def test_a_belief_held_by_any_relation_is_not_the_patients() -> None:
    s = "Her fiancée believes that she is being followed."
    assert not _patients_belief(s, s.index("believes"))
    s = "She believes that she is being followed."
    assert _patients_belief(s, s.index("believes"))
