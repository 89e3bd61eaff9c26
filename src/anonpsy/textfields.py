"""Addressing the free-text fields of a graph by stable, human-readable paths.

Paths name list items by node id where there is one: ``symptoms[sx_low_mood].contexts[0].situation``,
``visit_event.visit_episode``, ``test_results.values[tv_3].value``, ``family_history[1].evidence_text``.

The structured fields (statuses, mental status findings, test values and results, reasons for stopping a
treatment) are normalised values, not narrative: they are not visited here, and perturbation never changes them
(see :func:`anonpsy.perturb.check.check`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from anonpsy.graph import CaseGraph

# Keys whose string values are narrative text that may carry identifiers.
NARRATIVE_KEYS = frozenset({
    "evidence_text", "situation", "thought", "emotion", "behavior", "reason_for_visit", "visit_episode", "pathway",
    "outcome", "family_structure",
})
# Keys that hold lists of short narrative strings.
NARRATIVE_LIST_KEYS = frozenset({"source_of_information"})
# Top-level parts of a graph that hold only normalised values ("behavior" there is a finding, not a STEB field).
STRUCTURED_KEYS = frozenset({"mental_status", "test_results", "omitted"})


def _label(item: Any, index: int) -> str:
    if isinstance(item, dict) and isinstance(item.get("id"), str):
        return str(item["id"])
    return str(index)


def iter_text(data: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """Yield (path, text) for every narrative string in a dumped graph."""
    out: list[tuple[str, str]] = []
    _collect(data, prefix, out)
    return iter(out)


def _collect(data: Any, prefix: str, out: list[tuple[str, str]]) -> None:
    """Append (path, text) of every narrative string to ``out``: the walk of :func:`_map_in_place`, with each string
    written back as it is (entering only dicts and lists: a graph dump holds thousands of scalars, none of which is
    narrative text unless its key says so)."""

    def record(path: str, text: str) -> str:
        out.append((path, text))
        return text

    _map_in_place(data, record, prefix)


def map_text(data: Any, fn: Callable[[str, str], str], prefix: str = "") -> Any:
    """Return a copy of dumped graph data with ``fn(path, text)`` applied to every narrative string."""
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        top = not prefix
        for k, v in data.items():
            if isinstance(v, str):
                out[k] = fn(f"{prefix}.{k}" if prefix else k, v) if k in NARRATIVE_KEYS and not (
                    top and k in STRUCTURED_KEYS) else v
            elif isinstance(v, dict | list) and not (top and k in STRUCTURED_KEYS):
                path = f"{prefix}.{k}" if prefix else k
                if isinstance(v, list) and k in NARRATIVE_LIST_KEYS:
                    out[k] = [fn(f"{path}[{i}]", s) if isinstance(s, str) else s for i, s in enumerate(v)]
                else:
                    out[k] = map_text(v, fn, path)
            else:
                out[k] = v
        return out
    if isinstance(data, list):
        # a scalar item is returned as it is (what the walk of a scalar returns)
        return [map_text(item, fn, f"{prefix}[{_label(item, i)}]") if isinstance(item, dict | list) else item
                for i, item in enumerate(data)]
    return data


def graph_texts(graph: CaseGraph) -> list[tuple[str, str]]:
    return list(iter_text(graph.model_dump(mode="json")))


def map_graph_text(graph: CaseGraph, fn: Callable[[str, str], str]) -> CaseGraph:
    data = graph.model_dump(mode="json")  # a fresh dump, owned here: mapped where it lies, not copied
    _map_in_place(data, fn, "")
    return CaseGraph.model_validate(data)


def _map_in_place(data: Any, fn: Callable[[str, str], str], prefix: str) -> None:
    """:func:`map_text` on data no one else holds: the same calls of ``fn``, in the same order, each narrative
    string replaced where it lies instead of a copy of every dict and list of the dump made around it."""
    if isinstance(data, dict):
        top = not prefix
        for k, v in data.items():
            if top and k in STRUCTURED_KEYS:
                continue
            if isinstance(v, str):
                if k in NARRATIVE_KEYS:
                    data[k] = fn(f"{prefix}.{k}" if prefix else k, v)
            elif isinstance(v, list):
                path = f"{prefix}.{k}" if prefix else k
                if k in NARRATIVE_LIST_KEYS:
                    for i, s in enumerate(v):
                        if isinstance(s, str):
                            v[i] = fn(f"{path}[{i}]", s)
                else:
                    _map_in_place(v, fn, path)
            elif isinstance(v, dict):
                _map_in_place(v, fn, f"{prefix}.{k}" if prefix else k)
    elif isinstance(data, list):
        for i, item in enumerate(data):
            if isinstance(item, dict | list):
                _map_in_place(item, fn, f"{prefix}[{_label(item, i)}]")
