"""The semantic graph model: strictness, stable YAML, the exported JSON Schema, and the migration of version-1
graphs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given
from pydantic import ValidationError
from tests.strategies import case_graphs

from anonpsy.errors import AnonpsyError
from anonpsy.graph import CaseGraph, Diagnosis, Duration, Evidence, MentalStatus, Symptom, TestResults, TestValue, Unit
from anonpsy.graphio import (
    dump_graph,
    graph_json_schema,
    graph_json_schema_text,
    graph_to_data,
    load_graph,
    read_graph,
    read_graph_checked,
)
from anonpsy.yamlio import load_yaml

ROOT = Path(__file__).resolve().parents[1]


@given(case_graphs())
def test_yaml_round_trip_is_identity(g: CaseGraph) -> None:
    text = dump_graph(g)
    again = load_graph(text)
    assert again == g
    assert dump_graph(again) == text  # byte-stable


@given(case_graphs())
def test_dumped_graph_validates_against_exported_schema(g: CaseGraph) -> None:
    jsonschema.Draft202012Validator(graph_json_schema()).validate(graph_to_data(g))


def test_schema_file_matches_models() -> None:
    path = ROOT / "schemas" / "graph.v2.json"
    assert path.is_file(), "run `just schemas` to generate schemas/graph.v2.json"
    assert path.read_text(encoding="utf-8") == graph_json_schema_text(), (
        "schemas/graph.v2.json drifted from the models; run `just schemas` and review the diff"
    )
    json.loads(path.read_text(encoding="utf-8"))


# -- version 1 ---------------------------------------------------------------------------------------------------

V1_GRAPHS = sorted((ROOT / "fixtures" / "graphs" / "v1").glob("*.yaml"))
V1_STATUS = {"current": ("confirmed", "current"), "provisional": ("provisional", "current"),
             "rule_out": ("rule_out", "current"), "historical": ("confirmed", "past")}


@pytest.mark.parametrize("path", V1_GRAPHS, ids=[p.stem for p in V1_GRAPHS])
def test_v1_graph_loads_migrated_to_v2(path: Path) -> None:
    raw = load_yaml(path.read_text(encoding="utf-8"))
    assert raw["schema_version"] == "1"
    jsonschema.Draft202012Validator(json.loads((ROOT / "schemas" / "graph.v1.json").read_text())).validate(raw)
    g = read_graph(path)
    assert g.schema_version == "2"
    jsonschema.Draft202012Validator(graph_json_schema()).validate(graph_to_data(g))
    # Every status decided by the migration names the version-1 value it came from.
    for old, dx in zip(raw["diagnoses"], g.diagnoses, strict=True):
        assert (dx.certainty.value, dx.temporality.value) == V1_STATUS[old["status"]]
        assert dx.certainty_evidence is not None
        assert dx.certainty_evidence.rule_id == f"migrate.v1.status.{old['status']}"
    for old, sx in zip(raw["symptoms"], g.symptoms, strict=True):
        assert sx.assertion.value == ("present" if old["current_symptom"] else "historical")
    for old, tx in zip(raw["treatments"], g.treatments, strict=True):
        assert tx.status.value in ("current", "past") and tx.name == old["name"]
    assert all(f.certainty.value == "confirmed" for f in g.family_history)
    # Nothing else changes: nodes, durations, edges, demographics and the visit are carried over as they were.
    assert [(n["id"], n.get("duration_ids")) for n in raw["diagnoses"] + raw["symptoms"]] == [
        (n.id, n.duration_ids) for n in [*g.diagnoses, *g.symptoms]]
    assert g.durations == CaseGraph.model_validate({"case_id": "x", "durations": raw["durations"]}).durations
    assert [e.key() for e in g.edges] == [(e["type"], e["source"], e["target"]) for e in raw["edges"]]
    # (the legal status gains no evidence: a version-1 graph does not know whether its note stated it)
    assert graph_to_data(g)["visit_event"] == {**raw["visit_event"], "legal_status_evidence": None}
    # The free-text sections become structured values; none of their sentences survives as text.
    tests = raw["test_results"]
    assert g.test_results.values and g.mental_status.present_fields()
    dumped = dump_graph(g)
    for field in ("labs", "imaging", "other", "mental_status"):
        for sentence in re.split(r"(?<=[.;])\s+", tests.get(field) or ""):
            if len(sentence.split()) > 6:
                assert sentence not in dumped, f"{field} copied verbatim"
    mapped = [v for v in g.test_results.values if v.rule_id]
    assert all(v.interpretation and v.value and v.flag.value != "unknown" for v in mapped)
    assert all(o.words > 0 and o.start is None for o in g.omitted), "omissions are counted, never copied"


@pytest.mark.parametrize("path", V1_GRAPHS, ids=[p.stem for p in V1_GRAPHS])
def test_v1_fixture_has_its_v2_twin(path: Path) -> None:
    twin = ROOT / "fixtures" / "graphs" / path.name
    assert twin.is_file(), f"{path.name}: fixtures/graphs/ holds the version-2 graph of every version-1 fixture"
    assert read_graph(twin).case_id == read_graph(path).case_id


def test_unknown_schema_version_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "future.yaml"
    path.write_text("schema_version: '9'\ncase_id: c1\n", encoding="utf-8")
    with pytest.raises(AnonpsyError, match=r"^E103 future.yaml:1: schema_version '9' is not supported"):
        read_graph_checked(path)


def test_evidence_span_is_ordered_and_complete() -> None:
    assert Evidence(start=3, end=9, section="hpi", rule_id="context.neg.denies").end == 9
    assert Evidence(rule_id="manual").start is None
    for bad in ({"start": 5, "rule_id": "default"}, {"start": 9, "end": 3, "rule_id": "default"},
                {"rule_id": "Not A Rule"}):
        with pytest.raises(ValidationError):
            Evidence.model_validate(bad)


def test_normalised_values_cannot_carry_text() -> None:
    with pytest.raises(ValidationError):
        MentalStatus(mood="\"I'm fine\"")
    with pytest.raises(ValidationError):
        MentalStatus(appearance="Ms. Smith appeared tired")
    with pytest.raises(ValidationError):
        TestResults(values=[TestValue(id="tv_1", name="INR", value="1.2"), TestValue(id="tv_1", name="x", value="2")])


def test_extra_fields_are_rejected() -> None:
    with pytest.raises(ValidationError):
        CaseGraph.model_validate({"case_id": "c1", "surprise": 1})
    with pytest.raises(ValidationError):
        Symptom.model_validate({"id": "sx_1", "headword": "insomnia", "severity_score": 3})


def test_duplicate_node_ids_are_rejected() -> None:
    with pytest.raises(ValidationError):
        CaseGraph(case_id="c1", symptoms=[Symptom(id="x", headword="a"), Symptom(id="x", headword="b")])


def test_duration_interval_is_half_open_in_days() -> None:
    assert Duration(id="d", offset=-2, span=2, unit=Unit.week).interval() == (-14, 0)
    assert Duration(id="d", offset=-1, span=1, unit=Unit.year).interval() == (-365, 0)
    with pytest.raises(ValueError, match="no finite span"):
        Duration(id="d", offset=-1, unit=Unit.month).interval()


def test_exactly_one_visit_event() -> None:
    g = CaseGraph(case_id="c1")
    assert [t for _, t in g.iter_nodes()].count("visit") == 1
    with pytest.raises(ValidationError):
        CaseGraph.model_validate({"case_id": "c1", "visit_event": [{"id": "v1"}, {"id": "v2"}]})


@pytest.mark.parametrize("label", ["", "   ", "None", "null"])
def test_a_diagnosis_without_a_name_is_rejected(label: str) -> None:
    with pytest.raises(ValidationError):
        Diagnosis(id="dx_x", label=label)


def test_a_diagnosis_named_is_accepted() -> None:
    assert Diagnosis(id="dx_x", label="Parkinson's disease").label == "Parkinson's disease"
