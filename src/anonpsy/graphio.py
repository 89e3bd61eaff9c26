"""Reading and writing case graphs as stable YAML."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from anonpsy.graph import CaseGraph
from anonpsy.yamlio import dump_yaml, load_yaml


def graph_to_data(graph: CaseGraph) -> dict[str, Any]:
    return graph.model_dump(mode="json", exclude_defaults=False)


def dump_graph(graph: CaseGraph) -> str:
    return dump_yaml(graph_to_data(graph))


def load_graph(text: str) -> CaseGraph:
    return CaseGraph.model_validate(load_yaml(text))


def read_graph(path: Path) -> CaseGraph:
    return load_graph(Path(path).read_text(encoding="utf-8"))
