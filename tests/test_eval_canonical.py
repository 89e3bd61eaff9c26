"""DSM canonicalization: the rule file, its cases, and invariants."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from anonpsy.evaluate.canonical import build_table, canonicalize, load_table, same_diagnosis
from anonpsy.paths import rules_dir
from anonpsy.rules.check import check_rules
from anonpsy.rules.dsm import load_dsm
from anonpsy.rules.kinds import canonical as kind

RULE = rules_dir() / "canonical" / "synonyms.yaml"
CASES = rules_dir() / "canonical" / "synonyms.cases.yaml"
DOC = yaml.safe_load(RULE.read_text(encoding="utf-8"))
PINNED_ENTRIES = 30


def test_rule_file_and_cases_pass_the_generic_checker() -> None:
    report = check_rules(RULE)
    assert [p.one_line() for p in report.problems] == []
    assert report.per_kind == {"canonical": PINNED_ENTRIES}


@pytest.mark.parametrize(
    "case", yaml.safe_load(CASES.read_text(encoding="utf-8"))["cases"], ids=lambda c: c["id"]
)
def test_canonical_case(case: dict[str, object]) -> None:
    assert kind.run_case(DOC, case) == []


def test_every_entry_targets_an_existing_dsm_rule() -> None:
    dsm = load_dsm()
    assert [e["id"] for e in DOC["rules"] if e["id"] not in dsm] == []


def test_every_entry_has_a_source() -> None:
    assert all(e.get("source") for e in DOC["rules"])


def test_a_synonym_naming_two_rules_is_rejected() -> None:
    bad = {**DOC, "rules": [*DOC["rules"], {"id": "adhd", "synonyms": ["manic depression"]}]}
    with pytest.raises(ValueError, match="names both"):
        build_table(bad)
    assert kind.run_case(bad, {"id": "x", "input": {"label": "x", "id": None}, "expect": "pass"})


def test_examples_from_the_brief() -> None:
    assert canonicalize("Conversion disorder").rule_id == "functional_neurological_symptom_disorder"
    assert canonicalize("methamphetamine use disorder").rule_id == "stimulant_use_disorder"
    assert canonicalize("manic depression").rule_id == "bipolar_i_disorder"
    c = canonicalize("Major depressive disorder, recurrent, severe, with psychotic features")
    assert (c.rule_id, c.specifiers) == (
        "major_depressive_disorder",
        ("with psychotic features", "severe", "recurrent"),
    )
    assert canonicalize("Alcohol use disorder, in sustained remission").specifiers == (
        "in sustained remission",
    )
    assert same_diagnosis("conversion disorder", "functional neurological symptom disorder")


def test_unknown_label_keeps_its_stripped_text() -> None:
    c = canonicalize("Zebra Syndrome, severe")
    assert (c.rule_id, c.text, c.key, c.via) == (None, "zebra syndrome", "zebra_syndrome", "none")


def test_table_loads_fast_and_is_cached(tmp_path: Path) -> None:
    assert load_table() is load_table()


SYNONYMS = [s for e in DOC["rules"] for s in e["synonyms"]]


@given(st.sampled_from(SYNONYMS), st.sampled_from(["", ", severe", ", in early remission", ", recurrent"]))
def test_canonicalizing_twice_changes_nothing(label: str, suffix: str) -> None:
    first = canonicalize(label + suffix)
    assert first.rule_id is not None
    again = canonicalize(first.text)
    assert again.key == first.key
