"""A DSM-5-TR name written with a bound prefix set off by a hyphen or a space ("Bi-polar", "schizo-affective",
"anti-social") names the same disorder as the name written whole; a shorter name inside it ("affective
disorder") never takes its place."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.extract.mentions.diagnoses import _SPLIT_PREFIXES, _dx_key, find_diagnoses, prefix_forms
from anonpsy.rules import dsm as dsm_rules


def _prefixed_names() -> list[tuple[str, str]]:
    out = []
    for rule in dsm_rules.load_dsm().values():
        for alias in (rule.name, *rule.aliases):
            key = _dx_key(alias)
            if "(" not in key and len(prefix_forms(key)) == 2 and find_diagnoses(key, "diagnoses"):
                out.append((key, rule.id))
    return sorted(out)


_NAMES = _prefixed_names()


def test_the_prefixed_names_are_many() -> None:
    assert len(_NAMES) >= 10


@given(st.sampled_from(_NAMES), st.sampled_from(["-", " "]), st.booleans())
@example(("bipolar affective disorder", "unspecified_bipolar_and_related_disorder"), "-", True)
def test_a_prefix_set_off_names_the_same_disorder(name_rule: tuple[str, str], sep: str, title: bool) -> None:
    name, _rule_id = name_rule
    whole = find_diagnoses(f"Diagnoses: {name}.", "diagnoses")
    split = prefix_forms(name)[1]
    for prefix in _SPLIT_PREFIXES:
        split = split.replace(f"{prefix} ", f"{prefix}{sep}")
    written = split.title() if title else split
    found = find_diagnoses(f"Diagnoses: {written}.", "diagnoses")
    assert [r for _a, _b, r in found] == [r for _a, _b, r in whole]
    assert [(a, b) for a, b, _r in found] == [(11, 11 + len(written))]


def test_a_word_that_only_opens_like_a_prefix_is_left_alone() -> None:
    assert prefix_forms("major depressive disorder") == ("major depressive disorder",)
    assert prefix_forms("anorexia nervosa") == ("anorexia nervosa",)
    assert prefix_forms("bipolar i disorder")[1] == "bi polar i disorder"
