"""Lexicon, ConText and stressor rule files: schema validity, every case, coverage, pinned ids and counts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from anonpsy.paths import rules_dir, schemas_dir
from anonpsy.rules.registry import load_all_kinds

FILES: dict[str, str] = {
    "lexicon_symptoms": "lexicon/symptoms",
    "lexicon_medications": "lexicon/medications",
    "lexicon_therapies": "lexicon/therapies",
    "lexicon_emotions": "lexicon/emotions",
    "lexicon_demographic": "lexicon/demographic",
    "lexicon_mse": "lexicon/mse",
    "context_rules": "lexicon/context",
    "stressors": "contexts/stressors",
}


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _doc(kind: str) -> dict[str, Any]:
    data: dict[str, Any] = _load(rules_dir() / f"{FILES[kind]}.yaml")
    return data


def _cases(kind: str) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = _load(rules_dir() / f"{FILES[kind]}.cases.yaml")["cases"]
    return data


@pytest.mark.parametrize("kind", sorted(FILES))
def test_rule_file_matches_its_schema(kind: str) -> None:
    schema = json.loads((schemas_dir() / "rules" / f"{kind}.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(_doc(kind))]
    assert errors == []
    assert _doc(kind)["kind"] == kind


@pytest.mark.parametrize("kind", sorted(FILES))
def test_cases_file_matches_the_cases_schema(kind: str) -> None:
    schema = json.loads((schemas_dir() / "rules" / "cases.json").read_text(encoding="utf-8"))
    doc = _load(rules_dir() / f"{FILES[kind]}.cases.yaml")
    assert [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(doc)] == []


@pytest.mark.parametrize("kind", sorted(FILES))
def test_every_case_behaves_as_expected(kind: str) -> None:
    rule_kind = load_all_kinds()[kind]
    doc = _doc(kind)
    failures = {c["id"]: rule_kind.run_case(doc, c) for c in _cases(kind) if not c.get("todo")}
    assert {k: v for k, v in failures.items() if v} == {}


@pytest.mark.parametrize("kind", sorted(FILES))
def test_coverage_is_complete(kind: str) -> None:
    rule_kind = load_all_kinds()[kind]
    assert rule_kind.coverage(_doc(kind), _cases(kind)) == []


@pytest.mark.parametrize("kind", sorted(FILES))
def test_ids_are_unique_and_well_formed(kind: str) -> None:
    entries = load_all_kinds()[kind].entries(_doc(kind))
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids))
    assert all(isinstance(i, str) and i == i.lower() for i in ids)


def test_counts_are_pinned() -> None:
    """Adding or removing an entry is a deliberate act: update these numbers with it."""
    kinds = load_all_kinds()
    counts = {k: len(kinds[k].entries(_doc(k))) for k in FILES}
    assert counts == {
        "lexicon_symptoms": 300,
        "lexicon_medications": 483,
        "lexicon_therapies": 90,
        "lexicon_emotions": 35,
        "lexicon_demographic": 193 + 31 + 30 + 8,
        "lexicon_mse": 19 + 111,
        "context_rules": 122,
        "stressors": 22,
    }
    demo = _doc("lexicon_demographic")
    assert len(demo["occupations"]) >= 150
    assert counts["lexicon_symptoms"] >= 220
    assert counts["lexicon_medications"] >= 160
    assert counts["stressors"] >= 14


def test_stressor_categories_have_enough_alternatives() -> None:
    for cat in _doc("stressors")["rules"]:
        assert len(cat["alternatives"]) >= 6, cat["id"]
        assert cat["generalized"]


def test_required_stressor_categories_exist() -> None:
    ids = {c["id"] for c in _doc("stressors")["rules"]}
    assert {
        "job_loss", "bereavement", "breakup_divorce", "relocation", "legal_trouble", "academic_failure",
        "family_illness", "financial_loss", "assault", "military_deployment", "workplace_conflict",
        "housing_loss", "caregiving_burden", "childbirth_new_parent", "retirement", "bullying", "migration",
        "accident_injury",
    } <= ids


def test_required_therapies_exist() -> None:
    ids = {t["id"] for t in _doc("lexicon_therapies")["rules"]}
    assert {
        "cbt", "dbt", "ect", "tms", "emdr", "act", "ipt", "erp", "family_therapy", "mst",
        "motivational_interviewing", "group_therapy", "psychoeducation", "partial_hospitalization",
        "intensive_outpatient", "detoxification",
    } <= ids


def test_context_has_every_category() -> None:
    cats = {r["category"] for r in _doc("context_rules")["rules"]}
    assert cats == {
        "negated", "possible", "hypothetical", "historical", "current", "family", "other_experiencer", "pseudo",
        "termination",
    }


def test_a_broken_case_is_reported_not_raised() -> None:
    rule_kind = load_all_kinds()["lexicon_symptoms"]
    bad = {"id": "x", "input": {"nope": 1}, "expect": "pass"}
    assert rule_kind.run_case(_doc("lexicon_symptoms"), bad)[0].startswith("malformed case input")
    wrong = {"id": "y", "input": {"text": "low mood", "expect_ids": []}, "expect": "pass"}
    assert "UNEXPECTED_TERM" in rule_kind.run_case(_doc("lexicon_symptoms"), wrong)[0]


def test_coverage_reports_a_surface_claimed_twice() -> None:
    doc = _doc("lexicon_emotions")
    doc = {**doc, "rules": [*doc["rules"], {"id": "dup", "headword": "scared", "family": "fear",
                                             "valence": "negative"}]}
    problems = load_all_kinds()["lexicon_emotions"].coverage(doc, _cases("lexicon_emotions"))
    assert any("already belongs to" in p for p in problems)
