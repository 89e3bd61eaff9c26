"""The walkers over the narrative fields of a dumped graph visit what a plain recursive walk visits."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.textfields import (
    NARRATIVE_KEYS,
    NARRATIVE_LIST_KEYS,
    STRUCTURED_KEYS,
    _label,
    _map_in_place,
    iter_text,
    map_text,
)


def _iter_reference(data: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(data, dict):
        for k, v in data.items():
            path = f"{prefix}.{k}" if prefix else k
            if not prefix and k in STRUCTURED_KEYS:
                continue
            if isinstance(v, str) and k in NARRATIVE_KEYS:
                yield path, v
            elif isinstance(v, list) and k in NARRATIVE_LIST_KEYS:
                for i, s in enumerate(v):
                    if isinstance(s, str):
                        yield f"{path}[{i}]", s
            elif isinstance(v, dict | list):
                yield from _iter_reference(v, path)
    elif isinstance(data, list):
        for i, item in enumerate(data):
            yield from _iter_reference(item, f"{prefix}[{_label(item, i)}]")


def _map_reference(data: Any, fn: Callable[[str, str], str], prefix: str = "") -> Any:
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for k, v in data.items():
            path = f"{prefix}.{k}" if prefix else k
            if not prefix and k in STRUCTURED_KEYS:
                out[k] = v
            elif isinstance(v, str) and k in NARRATIVE_KEYS:
                out[k] = fn(path, v)
            elif isinstance(v, list) and k in NARRATIVE_LIST_KEYS:
                out[k] = [fn(f"{path}[{i}]", s) if isinstance(s, str) else s for i, s in enumerate(v)]
            elif isinstance(v, dict | list):
                out[k] = _map_reference(v, fn, path)
            else:
                out[k] = v
        return out
    if isinstance(data, list):
        return [_map_reference(item, fn, f"{prefix}[{_label(item, i)}]") for i, item in enumerate(data)]
    return data


_KEYS = st.sampled_from(["id", "evidence_text", "situation", "source_of_information", "mental_status",
                         "test_results", "symptoms", "contexts", "value", "name", ""])
_SCALARS = st.one_of(st.text("ab ", max_size=4), st.integers(0, 3), st.none(), st.booleans())
_DATA = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(_KEYS, inner, max_size=5)), max_leaves=30)


def _mark(path: str, text: str) -> str:
    return f"<{path}|{text}>"


@given(_DATA)
@example({"symptoms": [{"id": "sx_a", "evidence_text": "x", "contexts": [{"situation": "y"}]}],
          "mental_status": {"behavior": "calm"}, "source_of_information": ["patient", 3]})
@example({"": {"mental_status": {"evidence_text": "x"}}})
def test_walkers_equal_plain_recursion(data: Any) -> None:
    """Property (the walkers are transparent): the narrative strings found, their paths and order, and the mapped
    copy are those of a plain recursive walk."""
    assert list(iter_text(data)) == list(_iter_reference(data))
    assert map_text(data, _mark) == _map_reference(data, _mark)


@given(_DATA)
@example({"symptoms": [{"id": "sx_a", "evidence_text": "x", "contexts": [{"situation": "y"}]}],
          "mental_status": {"evidence_text": "calm"}, "source_of_information": ["patient", 3, {"situation": "z"}]})
@example({"": {"mental_status": {"evidence_text": "x"}}, "evidence_text": "w"})
def test_mapping_in_place_equals_the_mapped_copy(data: Any) -> None:
    """Property: mapping a dump where it lies gives the copy :func:`map_text` makes, with the same calls in the
    same order (the rewrites record an audit change per call)."""
    import copy

    calls_copy: list[tuple[str, str]] = []
    calls_here: list[tuple[str, str]] = []

    def rec(calls: list[tuple[str, str]]) -> Callable[[str, str], str]:
        def fn(path: str, text: str) -> str:
            calls.append((path, text))
            return _mark(path, text)
        return fn

    expected = map_text(data, rec(calls_copy))
    here = copy.deepcopy(data)
    _map_in_place(here, rec(calls_here), "")
    assert here == expected
    assert calls_here == calls_copy
