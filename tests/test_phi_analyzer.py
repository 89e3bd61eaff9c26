"""The PHI analyzer end to end: rule files and their cases, schemas, options, and recall on public datasets.

Datasets (skipped when absent): presidio-research's synthetic set (MIT, microsoft/presidio-research) and the
ASQ-PHI development queries (MIT, JamesWeatherhead/asq-phi). A gold entity counts as found when spans of a
compatible type cover at least half of its characters. Over-masking is the share of PHI-free queries where the
analyzer reports a Safe Harbor identifier (ages up to 89, year-only dates, states and countries, and
quasi-identifiers such as race are allowed by Safe Harbor and are not counted); the share with any span at all
is reported too.
"""

from __future__ import annotations

import itertools
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from anonpsy.paths import rules_dir, schemas_dir
from anonpsy.phi.analyzer import PHI_KINDS, Analyzer, analyze, load_phi_docs
from anonpsy.phi.spans import Span
from anonpsy.rules.registry import load_all_kinds
from anonpsy.yamlio import load_yaml

PHI_DIR = rules_dir() / "phi"

# Pinned rule counts per file: adding or removing a recognizer is a deliberate act.
RULE_COUNTS = {
    "addresses": 8,
    "ages": 8,
    "contact": 13,
    "dates": 18,
    "demographics": 7,
    "ids": 21,
    "locations": 12,
    "names": 7,
    "organizations": 8,
    "safelist": 9,
}

# Dataset entity types -> groups of compatible EntityType values.
GROUPS: dict[str, set[str]] = {
    "PHONE": {"TELEPHONE_NUMBER", "FAX_NUMBER"},
    "EMAIL": {"EMAIL"},
    "SSN": {"SSN_OR_TAXPAYER"},
    "ID": {
        "MEDICAL_RECORD_NUMBER",
        "HEALTH_PLAN_ID",
        "ACCOUNT_NUMBER",
        "FIN",
        "BANK_ACCOUNT_NUMBER",
        "DRIVER_ID_US",
        "PASSPORT_NUMBER_US",
        "LICENSE_NUMBER",
        "CERTIFICATE_NUMBER",
        "DEVICE_IDENTIFIER",
        "OTHER_ID",
        "SSN_OR_TAXPAYER",
        "GUID",
        "IBAN",
        "CREDIT_DEBIT_NUMBER",
        "BANK_ROUTING",
        "BANK_SWIFT",
    },
    "DATE": {"DATE", "BIRTH_DATE_TIME", "DEATH_DATE_TIME"},
    "CARD": {"CREDIT_DEBIT_NUMBER"},
    "IBAN": {"IBAN"},
    "IP": {"IP_ADDRESS"},
    "URL": {"URL"},
    "AGE": {"AGE"},
    "PERSON": {"PERSON"},
    "LOCATION": {"LOCATION", "ADDRESS", "ZIP_CODE", "ORGANIZATION", "PHARMACY", "DIAGNOSTIC_LABS"},
    "ZIP": {"ZIP_CODE", "ADDRESS", "LOCATION"},
    "ORGANIZATION": {"ORGANIZATION", "PHARMACY", "DIAGNOSTIC_LABS", "LOCATION"},
    "NRP": {"ETHNICITY", "RACE"},
    "TITLE": {"OCCUPATION"},
}
PATTERN_GROUPS = {"PHONE", "EMAIL", "SSN", "ID", "DATE", "CARD", "IBAN", "IP"}

PRESIDIO_MAP = {
    "PHONE_NUMBER": "PHONE",
    "EMAIL_ADDRESS": "EMAIL",
    "US_SSN": "SSN",
    "US_DRIVER_LICENSE": "ID",
    "DATE_TIME": "DATE",
    "CREDIT_CARD": "CARD",
    "IBAN_CODE": "IBAN",
    "IP_ADDRESS": "IP",
    "DOMAIN_NAME": "URL",
    "AGE": "AGE",
    "PERSON": "PERSON",
    "STREET_ADDRESS": "LOCATION",
    "GPE": "LOCATION",
    "ZIP_CODE": "ZIP",
    "ORGANIZATION": "ORGANIZATION",
    "NRP": "NRP",
    "TITLE": "TITLE",
}
ASQ_MAP = {
    "NAME": "PERSON",
    "GEOGRAPHIC_LOCATION": "LOCATION",
    "DATE": "DATE",
    "MEDICAL_RECORD_NUMBER": "ID",
    "HEALTH_PLAN_BENEFICIARY_NUMBER": "ID",
    "ACCOUNT_NUMBER": "ID",
    "UNIQUE_IDENTIFIER": "ID",
    "CERTIFICATE_LICENSE_NUMBER": "ID",
    "PHONE_NUMBER": "PHONE",
    "FAX_NUMBER": "PHONE",
    "SOCIAL_SECURITY_NUMBER": "SSN",
    "EMAIL_ADDRESS": "EMAIL",
}
# A weekday alone names no calendar date, so it is no Safe Harbor date element; presidio tags it DATE_TIME.
WEEKDAYS = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer.default()


# -------------------- rule files


def _rule_files() -> list[Path]:
    return sorted(p for p in PHI_DIR.glob("*.yaml") if not p.name.endswith(".cases.yaml"))


def test_rule_files_validate_against_their_schemas() -> None:
    for path in _rule_files():
        doc = load_yaml(path.read_text(encoding="utf-8"))
        assert doc["kind"] in PHI_KINDS
        schema = json.loads((schemas_dir() / "rules" / f"{doc['kind']}.json").read_text(encoding="utf-8"))
        jsonschema.Draft202012Validator.check_schema(schema)
        errors = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
        assert not errors, f"{path.name}: {errors[0].message[:200]}"


def test_rule_ids_sources_and_counts_are_pinned() -> None:
    seen: dict[str, set[str]] = defaultdict(set)
    counts = {}
    for path in _rule_files():
        doc = load_yaml(path.read_text(encoding="utf-8"))
        ids = [r["id"] for r in doc["rules"]]
        counts[path.stem] = len(ids)
        assert doc.get("source") or all(r.get("source") for r in doc["rules"]), path.name
        for rid in ids:
            assert rid not in seen[doc["kind"]], f"duplicate id {rid}"
            seen[doc["kind"]].add(rid)
    assert counts == RULE_COUNTS


def test_rule_files_all_load() -> None:
    """Speed is measured by tests/bench/bench_core.py, not asserted here (timed tests flake on loaded runners)."""
    docs = load_phi_docs()
    assert len(docs) == len(RULE_COUNTS)


def _cases() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    out = []
    for path in _rule_files():
        cases_path = path.with_name(f"{path.stem}.cases.yaml")
        doc = load_yaml(path.read_text(encoding="utf-8"))
        for case in load_yaml(cases_path.read_text(encoding="utf-8"))["cases"]:
            out.append((path.stem, doc, case))
    return out


CASES = _cases()


@pytest.mark.parametrize(("stem", "doc", "case"), CASES, ids=[f"{s}:{c['id']}" for s, _, c in CASES])
def test_rule_case(stem: str, doc: dict[str, Any], case: dict[str, Any]) -> None:
    kind = load_all_kinds()[doc["kind"]]
    assert kind.run_case(doc, case) == []


@pytest.mark.parametrize("path", _rule_files(), ids=lambda p: p.stem)
def test_every_rule_has_cases(path: Path) -> None:
    doc = load_yaml(path.read_text(encoding="utf-8"))
    cases = load_yaml(path.with_name(f"{path.stem}.cases.yaml").read_text(encoding="utf-8"))["cases"]
    assert load_all_kinds()[doc["kind"]].coverage(doc, cases) == []


def test_case_runner_reports_wrong_expectations() -> None:
    kind = load_all_kinds()["phi_patterns"]
    doc = load_yaml((PHI_DIR / "dates.yaml").read_text(encoding="utf-8"))
    wrong = {"id": "x", "rule": "date.iso", "input": {"text": "On 2025-03-14."}, "expect": "pass"}
    assert kind.run_case(doc, wrong)
    unknown = {"id": "y", "rule": "nope", "input": {"text": "x"}, "expect": "pass"}
    assert kind.run_case(doc, unknown)


def test_edited_rule_file_is_used_by_cases() -> None:
    kind = load_all_kinds()["phi_patterns"]
    doc = load_yaml((PHI_DIR / "dates.yaml").read_text(encoding="utf-8"))
    doc["rules"] = [r for r in doc["rules"] if r["id"] != "date.iso"] + [
        {"id": "date.iso", "entity_type": "DATE", "patterns": [{"regex": "(?!)"}]}
    ]
    case = {"id": "z", "rule": "date.iso", "input": {"text": "On 2025-03-14."}, "expect": "pass"}
    assert kind.run_case(doc, case) == []


# -------------------- options


def test_entities_filter_and_threshold(analyzer: Analyzer) -> None:
    text = "Dr. Alice Wong saw him on 03/14/2025, phone 555-123-4567."
    all_types = {s.type for s in analyzer.analyze(text)}
    assert {"PERSON", "DATE", "TELEPHONE_NUMBER"} <= all_types
    only = analyzer.analyze(text, entities=["DATE"])
    assert [s.type for s in only] == ["DATE"]
    assert analyzer.analyze(text, score_threshold=1.01) == []
    assert analyze(text) == analyzer.analyze(text)


def test_short_state_university_needs_a_capital_u_and_survives_its_scale(analyzer: Analyzer) -> None:
    text = "given 8u maryland scale; per U Maryland scale; Braden scale 14"
    orgs = [text[s.start : s.end] for s in analyzer.analyze(text) if s.type == "ORGANIZATION"]
    persons = [text[s.start : s.end] for s in analyzer.analyze(text) if s.type == "PERSON"]
    assert orgs == ["U Maryland"]
    assert "Braden" not in persons


def test_spans_are_sorted_disjoint_and_in_bounds(analyzer: Analyzer) -> None:
    text = "Jane Roe (DOB 1/2/1950), 1234 Oak Street, Apt 5, Boston, MA 02114; jane@x.org; MRN 998877."
    spans = analyzer.analyze(text)
    assert spans == sorted(spans, key=lambda s: (s.start, s.end))
    for a, b in itertools.pairwise(spans):
        assert a.end <= b.start
    assert all(0 <= s.start < s.end <= len(text) and s.recognizer in analyzer.rule_ids for s in spans)


def test_safe_harbor_category_depends_on_value(analyzer: Analyzer) -> None:
    text = "Aged 92, aged 45, born 1931, seen 3/4/2020, from Ohio, lives in Chicago, Hispanic."

    def cat(value: str, etype: str) -> str | None:
        start = text.index(value)
        span = next(s for s in analyzer.analyze(text) if s.start == start and s.type == etype)
        return analyzer.safe_harbor_category(span, text)

    assert cat("92", "AGE") == "dates_and_ages_over_89"
    assert cat("45", "AGE") is None
    assert cat("1931", "BIRTH_DATE_TIME") is None
    assert cat("3/4/2020", "DATE") == "dates_and_ages_over_89"
    assert cat("Ohio", "LOCATION") is None
    assert cat("Chicago", "LOCATION") == "geographic_subdivisions"
    assert cat("Hispanic", "ETHNICITY") is None
    assert analyzer.safe_harbor_category(Span(0, 1, "NOT_A_TYPE"), text) is None


def test_analyzer_runs_on_clinical_text(analyzer: Analyzer, shared_data: Path) -> None:
    """Runs the analyzer over the whole MTSamples set and prints its rate; throughput targets live in
    tests/bench/bench_mask.py, since a timed assertion flakes on a loaded machine."""
    notes = shared_data / "mtsamples-psych-dev" / "notes.jsonl"
    if not notes.is_file():
        pytest.skip(f"clinical sample notes not found at {notes}")
    text = "\n".join(json.loads(line)["text"] for line in notes.read_text(encoding="utf-8").splitlines())
    analyzer.analyze(text[:2000])
    start = time.perf_counter()
    analyzer.analyze(text)
    rate = len(text) / (time.perf_counter() - start)
    print(f"\nthroughput: {rate / 1e6:.2f} MB/s on {len(text)} characters")
    assert rate > 0


# -------------------- datasets


def _covered(spans: list[Span], start: int, end: int, group: str) -> bool:
    types = GROUPS[group]
    cov = sum(
        min(end, s.end) - max(start, s.start)
        for s in spans
        if s.type in types and s.start < end and start < s.end
    )
    return cov >= 0.5 * (end - start)


def _report(name: str, stats: dict[str, list[int]]) -> float:
    lines = [f"{name}:"]
    for group in sorted(stats):
        hit, total = stats[group]
        lines.append(f"  {group:<13} {hit:>4}/{total:<4} recall {hit / total:.3f}")
    hit = sum(stats[g][0] for g in stats if g in PATTERN_GROUPS)
    total = sum(stats[g][1] for g in stats if g in PATTERN_GROUPS)
    everything = sum(v[0] for v in stats.values()) / sum(v[1] for v in stats.values())
    lines.append(f"  pattern types {hit}/{total} recall {hit / total:.3f}; all types recall {everything:.3f}")
    print("\n" + "\n".join(lines))
    return hit / total


def test_presidio_synthetic_recall(analyzer: Analyzer, shared_data: Path) -> None:
    path = shared_data / "presidio-synth" / "synth_dataset_v2.json"
    if not path.is_file():
        pytest.skip(f"presidio-research synthetic dataset not found at {path}")
    stats: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for item in json.loads(path.read_text(encoding="utf-8")):
        text = item["full_text"]
        spans = analyzer.analyze(text)
        for gold in item["spans"]:
            group = PRESIDIO_MAP[gold["entity_type"]]
            if group == "DATE" and gold["entity_value"].strip().lower() in WEEKDAYS:
                continue
            found = _covered(spans, gold["start_position"], gold["end_position"], group)
            stats[group][0] += found
            stats[group][1] += 1
    assert _report("presidio-research synth_dataset_v2", stats) >= 0.95


def _asq_blocks(path: Path) -> list[tuple[str, list[dict[str, str]]]]:
    out = []
    for block in path.read_text(encoding="utf-8").split("===QUERY===")[1:]:
        query, _, tags = block.partition("===PHI_TAGS===")
        out.append((query.strip("\n"), [json.loads(t) for t in tags.strip().splitlines() if t.strip()]))
    return out


def test_asq_phi_recall_and_over_masking(analyzer: Analyzer, shared_data: Path) -> None:
    path = shared_data / "asq-phi-dev" / "queries.txt"
    if not path.is_file():
        pytest.skip(f"ASQ-PHI development queries not found at {path}")
    stats: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    free = over = over_any = 0
    for query, tags in _asq_blocks(path):
        spans = analyzer.analyze(query)
        if not tags:
            free += 1
            over += any(analyzer.safe_harbor_category(s, query) for s in spans)
            over_any += bool(spans)
        for tag in tags:
            group = ASQ_MAP[tag["identifier_type"]]
            start = query.find(tag["value"])
            found = start >= 0 and _covered(spans, start, start + len(tag["value"]), group)
            stats[group][0] += found
            stats[group][1] += 1
    recall = _report("ASQ-PHI dev queries", stats)
    print(
        f"  over-masking: {over}/{free} PHI-free queries with a Safe Harbor span ({over / free:.3f}); "
        f"{over_any}/{free} with any span"
    )
    assert recall >= 0.95
    assert over / free <= 0.05
