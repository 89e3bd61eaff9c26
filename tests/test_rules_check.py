"""`anonpsy rules check`: the whole rules directory passes, and broken rule files are reported with file:line."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from anonpsy.cli import main
from anonpsy.paths import rules_dir
from anonpsy.rules.check import check_rules, rule_files
from anonpsy.rules.registry import load_all_kinds

# Pinned counts: adding or removing rules is a deliberate act that updates these numbers.
PINNED_KINDS_MIN = 10


def test_every_rule_file_passes_schema_and_cases() -> None:
    report = check_rules()
    problems = [p.one_line() for p in report.problems if not p.todo]
    assert problems == [], "\n".join(problems[:50])
    assert report.cases_passed + report.todo + sum(report.skipped.values()) == report.cases
    if importlib.util.find_spec("simple_icd_10_cm") and importlib.util.find_spec("ahocorasick"):
        assert report.skipped == {}, "every case runs when every extra is installed"


def test_a_case_needing_a_missing_extra_is_skipped_and_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    from anonpsy.rules.kinds import twin

    monkeypatch.setattr(twin, "_missing_extra", lambda: "needs simple-icd-10-cm (pip install 'anonpsy[twin]')")
    report = check_rules(rules_dir() / "twin")
    assert [p.one_line() for p in report.problems if not p.todo] == []
    reason = "needs simple-icd-10-cm (pip install 'anonpsy[twin]')"
    assert report.skipped == {reason: report.cases - report.cases_passed}
    assert report.cases > report.cases_passed  # the vocabulary cases did not run
    result = CliRunner().invoke(main, ["rules", "check", str(rules_dir() / "twin")])
    assert result.exit_code == 0
    assert "skipped" in result.output and "anonpsy[twin]" in result.output


def test_every_rule_file_has_cases_and_a_kind() -> None:
    kinds = load_all_kinds()
    assert len(kinds) >= PINNED_KINDS_MIN
    for path in rule_files(rules_dir()):
        cases = path.with_name(path.name[: -len(".yaml")] + ".cases.yaml")
        assert cases.is_file(), f"{path} has no cases file"


def test_cli_rules_check_exit_zero() -> None:
    result = CliRunner().invoke(main, ["rules", "check"])
    assert result.exit_code == 0, result.output[-2000:]
    assert "0 problems" in result.output


@pytest.fixture()
def broken_rules(tmp_path: Path) -> Path:
    dst = tmp_path / "rules"
    shutil.copytree(rules_dir() / "graph", dst / "graph")
    return dst


def test_schema_violation_is_reported_with_line(broken_rules: Path) -> None:
    path = next(p for p in rule_files(broken_rules))
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "\nunexpected_top_level_key: 1\n", encoding="utf-8")
    report = check_rules(broken_rules)
    assert not report.ok
    assert any(p.code == "R100" and p.path.endswith(path.name) for p in report.problems)


def test_malformed_yaml_is_reported(broken_rules: Path) -> None:
    path = next(p for p in rule_files(broken_rules))
    path.write_text("kind: [unclosed\n", encoding="utf-8")
    report = check_rules(broken_rules)
    assert [p.code for p in report.problems] == ["R101"]
    assert report.problems[0].line in (1, 2)  # where the parser noticed the unclosed flow sequence


def test_missing_cases_file_is_reported(broken_rules: Path) -> None:
    path = next(p for p in rule_files(broken_rules))
    path.with_name(path.name[: -len(".yaml")] + ".cases.yaml").unlink()
    report = check_rules(broken_rules)
    assert any(p.code == "R103" for p in report.problems)


def test_failing_case_is_reported_with_case_line(broken_rules: Path) -> None:
    path = next(p for p in rule_files(broken_rules))
    cases = path.with_name(path.name[: -len(".yaml")] + ".cases.yaml")
    text = cases.read_text(encoding="utf-8")
    flipped = text.replace("expect: pass", "expect: PLACEHOLDER").replace("expect: fail", "expect: pass")
    flipped = flipped.replace("expect: PLACEHOLDER", "expect: fail\n    violations: [NOT_A_REAL_CODE]")
    cases.write_text(flipped, encoding="utf-8")
    report = check_rules(broken_rules)
    failing = [p for p in report.problems if p.code in ("R102", "R100")]
    assert failing, "flipping every expectation must make cases fail"
    assert all(p.line >= 1 for p in failing)


def test_unknown_kind_is_reported(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text("kind: no_such_kind\nversion: 1\n", encoding="utf-8")
    report = check_rules(tmp_path)
    assert [p.code for p in report.problems] == ["R108"]


def test_rule_counts_are_pinned() -> None:
    """Every kind's number of rules is pinned; update this table deliberately when adding or removing rules."""
    report = check_rules()
    assert report.per_kind == PINNED_COUNTS, report.per_kind


PINNED_COUNTS: dict[str, int] = {
    "age_offsets": 9,
    "audio_cues": 17,
    "canonical": 30,
    "context_rules": 122,
    "discontinuation_reasons": 6,
    "dsm": 151,
    "edge_pairs": 28,
    "instrument": 76,
    "kinship": 35,
    "ethnicity": 30,
    "lexicon_conditions": 142,
    "lexicon_demographic": 262,
    "lexicon_emotions": 35,
    "lexicon_general_conditions": 34,
    "lexicon_medications": 483,
    "lexicon_mse": 130,
    "lexicon_symptoms": 300,
    "lexicon_therapies": 90,
    "medication_classes": 42,
    "occupations": 7,
    "persona_priors": 5,
    "phi_gazetteer": 12,
    "phi_names": 7,
    "phi_patterns": 83,
    "phi_safelist": 9,
    "routes": 13,
    "sections": 22,
    "sex_reassignment": 2,
    "sex_specific": 50,
    "stressors": 22,
    "test_values": 62,
    "twin_icd10cm": 397,
    "twin_lookalikes": 13,
    "twin_medications": 274,
    "twin_procedures": 143,
    "twin_tests": 42,
    "visit_scaffold": 12,
}
