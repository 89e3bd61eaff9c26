"""The semantic graph model: strictness, stable YAML and the exported JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given
from pydantic import ValidationError
from tests.strategies import case_graphs

from anonpsy.graph import CaseGraph, Duration, Symptom, Unit
from anonpsy.graphio import dump_graph, graph_json_schema, graph_json_schema_text, graph_to_data, load_graph

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
    path = ROOT / "schemas" / "graph.v1.json"
    assert path.is_file(), "run `just schemas` to generate schemas/graph.v1.json"
    assert path.read_text(encoding="utf-8") == graph_json_schema_text(), (
        "schemas/graph.v1.json drifted from the models; run `just schemas` and review the diff"
    )
    json.loads(path.read_text(encoding="utf-8"))


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
