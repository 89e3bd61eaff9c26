"""Rule kind ``test_values``: the test definitions load, keep their pool invariants, and their cases pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import ValidationError

from anonpsy.errors import AnonpsyError
from anonpsy.paths import rules_dir, schemas_dir
from anonpsy.rules.registry import REGISTRY
from anonpsy.rules.test_values import (
    TestDef,
    cross_test_problems,
    load_test_values,
    rule_paths,
    validation_messages,
)

# Pinned counts: adding or removing a test is a deliberate act that updates these numbers.
PINNED_TOTAL = 62
PINNED_BY_CATEGORY = {"cognition": 9, "rating_scale": 19, "lab": 26, "vital": 8}
PINNED_IDS = sorted(
    [
        "mmse",
        "moca",
        "slums",
        "ace_iii",
        "fsiq",
        "vci",
        "pri",
        "wmi",
        "psi",
        "phq9",
        "phq2",
        "gad7",
        "hamd17",
        "ham_a",
        "madrs",
        "ymrs",
        "bdi2",
        "bai",
        "qids_sr16",
        "ybocs",
        "pcl5",
        "audit",
        "audit_c",
        "ciwa_ar",
        "cows",
        "panss_total",
        "cgi_s",
        "epds",
        "fasting_glucose",
        "hba1c",
        "tsh",
        "free_t4",
        "sodium",
        "potassium",
        "creatinine",
        "alt",
        "ast",
        "ggt",
        "mcv",
        "wbc",
        "anc",
        "hemoglobin",
        "platelets",
        "ck",
        "prolactin",
        "vitamin_b12",
        "folate",
        "vitamin_d",
        "ammonia",
        "lithium_level",
        "valproate_level",
        "carbamazepine_level",
        "clozapine_level",
        "blood_alcohol",
        "bmi",
        "systolic_bp",
        "diastolic_bp",
        "heart_rate",
        "temperature",
        "respiratory_rate",
        "oxygen_saturation",
        "qtc",
    ]
)
STEMS = ("cognition", "labs", "rating_scales", "vitals")


def _doc(stem: str) -> dict[str, Any]:
    data = yaml.safe_load((rules_dir() / "test_values" / f"{stem}.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _cases(stem: str) -> list[dict[str, Any]]:
    data = yaml.safe_load((rules_dir() / "test_values" / f"{stem}.cases.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    cases = data["cases"]
    assert isinstance(cases, list)
    return cases


def _mmse(**changes: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": "mmse",
        "name": "Mini-Mental State Examination",
        "category": "cognition",
        "aliases": ["MMSE"],
        "source": "Folstein 1975",
        "units": [{"unit": "points"}],
        "range": [0, 30],
        "decimals": 0,
        "cutoffs": [10, 18, 24],
        "pools": [
            {"low": 0, "high": 10, "interpretation": "severe"},
            {"low": 10, "high": 18, "interpretation": "moderate"},
            {"low": 18, "high": 24, "interpretation": "mild"},
            {"low": 24, "high": 31, "interpretation": "normal"},
        ],
    }
    entry.update(changes)
    return entry


# -- counts and ids ------------------------------------------------------------------------------------------


def test_counts_and_ids_are_pinned() -> None:
    defs = load_test_values()
    assert len(defs) == PINNED_TOTAL
    assert sorted(defs) == PINNED_IDS
    by_cat: dict[str, int] = {}
    for t in defs.values():
        by_cat[t.category] = by_cat.get(t.category, 0) + 1
    assert by_cat == PINNED_BY_CATEGORY


def test_every_test_has_source_aliases_and_cutoffs() -> None:
    for t in load_test_values().values():
        assert t.source.strip(), t.id
        assert t.aliases, t.id
        assert t.cutoffs, t.id
        assert t.units[0].factor == 1.0 and t.units[0].offset == 0.0, t.id


def test_rule_files_are_the_four_stems() -> None:
    assert [p.stem for p in rule_paths()] == list(STEMS)


def test_loading_all_test_values_uncached() -> None:
    """Load time is reported by tests/bench/bench_core.py; here only that an uncached load gives every test."""
    defs = load_test_values.__wrapped__(None)
    assert len(defs) == PINNED_TOTAL


def test_load_accepts_rules_root_or_concern_dir(tmp_path: Path) -> None:
    src = rules_dir() / "test_values" / "vitals.yaml"
    (tmp_path / "test_values").mkdir()
    (tmp_path / "test_values" / "vitals.yaml").write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    assert len(load_test_values(tmp_path)) == PINNED_BY_CATEGORY["vital"]
    assert len(load_test_values(tmp_path / "test_values")) == PINNED_BY_CATEGORY["vital"]


# -- schema --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stem", STEMS)
def test_rule_file_validates_against_schema(stem: str) -> None:
    schema = json.loads((schemas_dir() / "rules" / "test_values.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(_doc(stem)))
    assert errors == []


def test_schema_rejects_unknown_entry_key() -> None:
    schema = json.loads((schemas_dir() / "rules" / "test_values.json").read_text(encoding="utf-8"))
    doc = {"kind": "test_values", "version": 1, "rules": [_mmse(colour="blue")]}
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    assert validation_messages(doc)


# -- invariants ----------------------------------------------------------------------------------------------


def test_pools_are_contiguous_and_end_one_step_above_range() -> None:
    for t in load_test_values().values():
        assert t.pools[0].low == t.range[0], t.id
        for a, b in zip(t.pools, t.pools[1:], strict=False):
            assert a.high == b.low, t.id
        assert abs(t.pools[-1].high - (t.range[1] + t.step)) < 1e-9, t.id
        assert [p.low for p in t.pools[1:]] == t.cutoffs, t.id


def _pools(*bands: tuple[float, float]) -> list[dict[str, Any]]:
    return [{"low": lo, "high": hi, "interpretation": f"band {i}"} for i, (lo, hi) in enumerate(bands)]


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"pools": _pools((0, 20), (20, 31)), "cutoffs": [10, 20]}, "straddles cut-off 10"),
        ({"pools": _pools((0, 10), (12, 31)), "cutoffs": [10]}, "gap between pool 0"),
        ({"pools": _pools((0, 12), (10, 31)), "cutoffs": [10]}, "overlaps pool 1"),
        ({"pools": _pools((0, 10), (10, 30)), "cutoffs": [10]}, "one step above the range maximum"),
        ({"cutoffs": [10, 18, 24, 40]}, "outside the range"),
        ({"units": [{"unit": "points", "factor": 2}]}, "factor 1"),
        ({"aliases": ["MMSE", "mmse"]}, "normalise to the same spelling"),
    ],
)
def test_invalid_pools_raise_naming_the_test(changes: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValidationError) as info:
        TestDef.model_validate(_mmse(**changes))
    assert "test 'mmse'" in str(info.value)
    assert fragment in str(info.value)


def test_loader_error_names_file_and_test(tmp_path: Path) -> None:
    doc = {"kind": "test_values", "version": 1, "rules": [_mmse(cutoffs=[10, 18, 20])]}
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(AnonpsyError) as info:
        load_test_values.__wrapped__(tmp_path)
    assert info.value.code == "R100"
    assert "test 'mmse'" in info.value.message
    assert "bad.yaml" in (info.value.location or "")


def test_shared_alias_needs_a_slash_pair() -> None:
    a = TestDef.model_validate(_mmse())
    b = TestDef.model_validate(_mmse(id="mmse_copy"))
    assert any("shared by tests" in p for p in cross_test_problems([a, b]))
    defs = load_test_values()
    assert cross_test_problems(defs.values()) == []
    assert defs["systolic_bp"].slash_position == 1 and defs["diastolic_bp"].slash_position == 2


@given(data=st.data())
@example(data=None)
def test_pools_never_straddle_cutoffs(data: st.DataObject | None) -> None:
    defs = load_test_values()
    if data is None:  # every test, exhaustively over its cut-offs
        for t in defs.values():
            for p in t.pools:
                assert not any(p.low < c < p.high for c in t.cutoffs), t.id
        return
    t = data.draw(st.sampled_from(sorted(defs.values(), key=lambda d: d.id)), label="test")
    x = data.draw(
        st.floats(t.range[0], t.upper, exclude_max=True, allow_nan=False, allow_infinity=False), label="value"
    )
    pool = t.pool_for(x)
    assert pool is not None and pool.contains(x)
    for c in t.cutoffs:
        assert (x < c) == (pool.high <= c), (t.id, c)


# -- cases and coverage --------------------------------------------------------------------------------------


def test_kind_is_registered() -> None:
    import anonpsy.rules.kinds.test_values  # noqa: F401  (registration)

    kind = REGISTRY["test_values"]
    assert kind.schema_file == "test_values.json"
    assert len(kind.entries(_doc("vitals"))) == PINNED_BY_CATEGORY["vital"]


@pytest.mark.parametrize("stem", STEMS)
def test_every_case_passes_and_cutoffs_are_covered(stem: str) -> None:
    from anonpsy.rules.kinds.test_values import coverage, run_case

    doc, cases = _doc(stem), _cases(stem)
    failures = {c["id"]: run_case(doc, c) for c in cases}
    assert {k: v for k, v in failures.items() if v} == {}
    assert coverage(doc, cases) == []
    assert len({c["id"] for c in cases}) == len(cases)


def test_run_case_reports_wrong_expectations() -> None:
    from anonpsy.rules.kinds.test_values import run_case

    doc = _doc("cognition")
    inp = {"text": "MMSE 22/30", "expect_tests": ["mmse"], "value": 22, "expect_pool": "mild impairment"}
    ok = {"id": "x", "rule": "mmse", "input": inp, "expect": "pass"}
    assert run_case(doc, ok) == []
    wrong_pool = {**ok, "input": {**ok["input"], "expect_pool": "normal cognition"}}
    assert any("falls in pool" in p for p in run_case(doc, wrong_pool))
    wrong_tests = {**ok, "input": {**ok["input"], "expect_tests": ["moca"]}}
    assert any("mapped the text" in p for p in run_case(doc, wrong_tests))
    fail_input = {"text": "MMSE 34/30", "expect_tests": []}
    fail = {"id": "y", "input": fail_input, "expect": "fail", "violations": ["UNKNOWN_UNIT"]}
    assert run_case(doc, fail) == ["expected violations ['UNKNOWN_UNIT'], got ['OUT_OF_RANGE']"]
    assert run_case(doc, {**fail, "violations": ["OUT_OF_RANGE"]}) == []
    assert run_case(doc, {"id": "z", "input": {"txt": "MMSE 22"}, "expect": "pass"})


def test_coverage_reports_missing_boundary_cases() -> None:
    from anonpsy.rules.kinds.test_values import coverage

    doc = _doc("cognition")
    cases = [c for c in _cases("cognition") if c["id"] != "mmse-24-below"]
    problems = coverage(doc, cases)
    assert problems == [
        "test 'mmse': no case one step below cut-off 24 (value 23 in points with expect_pool)"
    ]


def test_coverage_reports_invalid_file() -> None:
    from anonpsy.rules.kinds.test_values import coverage

    doc = {"kind": "test_values", "version": 1, "rules": [_mmse(cutoffs=[10, 18, 20])]}
    problems = coverage(doc, [])
    assert problems and all("test 'mmse'" in p for p in problems)
