"""Reading and writing case graphs as stable YAML, with one-line errors for bad input.

Graphs are written in the current schema version (2); version-1 files are migrated on read (:mod:`anonpsy.migrate`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from anonpsy import errors
from anonpsy.errors import AnonpsyError
from anonpsy.graph import SCHEMA_VERSION, CaseGraph
from anonpsy.migrate import MigrationError, migrate_data
from anonpsy.yamlio import dump_yaml, line_for, load_yaml, load_yaml_lines

GRAPH_SCHEMA_FILE = f"graph.v{SCHEMA_VERSION}.json"


def graph_to_data(graph: CaseGraph) -> dict[str, Any]:
    return graph.model_dump(mode="json", exclude_defaults=False)


def dump_graph(graph: CaseGraph) -> str:
    return dump_yaml(graph_to_data(graph))


def graph_from_data(data: Any) -> CaseGraph:
    """A graph from a mapping of any readable schema version (version 1 is migrated)."""
    return CaseGraph.model_validate(migrate_data(data) if isinstance(data, dict) else data)


def load_graph(text: str) -> CaseGraph:
    return graph_from_data(load_yaml(text))


def read_graph(path: Path) -> CaseGraph:
    return load_graph(Path(path).read_text(encoding="utf-8"))


def graph_json_schema() -> dict[str, Any]:
    schema = CaseGraph.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://anonpsy.org/schemas/{GRAPH_SCHEMA_FILE}"
    return schema


def graph_json_schema_text() -> str:
    return json.dumps(graph_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def read_text_input(path: Path, *, max_bytes: int | None = None) -> str:
    """Read a UTF-8 text file with one-line errors (missing, empty, binary, not UTF-8, too large)."""
    p = Path(path)
    loc = p.name
    if not p.is_file():
        raise AnonpsyError(errors.E100_MISSING_FILE, "file not found or not a regular file", loc)
    size = p.stat().st_size
    if max_bytes is not None and size > max_bytes:
        raise AnonpsyError(errors.E107_TOO_LARGE, f"input is {size} bytes, over the limit of {max_bytes}; "
                                                  "raise --max-bytes or split the input", loc)
    raw = p.read_bytes()
    return decode_text(raw, loc)


def decode_text(raw: bytes, loc: str) -> str:
    if b"\x00" in raw:
        raise AnonpsyError(errors.E106_BINARY, "input looks binary (NUL bytes); give a UTF-8 text file", loc)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AnonpsyError(errors.E105_NOT_UTF8, f"input is not valid UTF-8 (byte offset {exc.start}); "
                                                 "re-encode it as UTF-8", loc) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise AnonpsyError(errors.E101_EMPTY_INPUT, "input is empty or whitespace only", loc)
    return text


def read_graph_checked(path: Path) -> CaseGraph:
    """Load a graph file, turning every failure into a one-line :class:`AnonpsyError` with a location."""
    p = Path(path)
    text = read_text_input(p)
    loc = p.name
    try:
        data, lines = load_yaml_lines(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{loc}:{mark.line + 1}" if mark is not None else loc
        raise AnonpsyError(errors.E102_MALFORMED_YAML, "malformed YAML; fix the syntax", where) from None
    if not isinstance(data, dict):
        raise AnonpsyError(errors.E103_SCHEMA, "a case graph must be a YAML mapping", f"{loc}:1")
    try:
        data = migrate_data(data)
    except MigrationError as exc:
        raise AnonpsyError(errors.E103_SCHEMA, str(exc), f"{loc}:{line_for(lines, '/schema_version')}") from None
    try:
        graph = CaseGraph.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        ptr = "/" + "/".join(str(x) for x in err["loc"])
        field = ".".join(str(x) for x in err["loc"]) or "(top level)"
        more = f" (+{len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
        raise AnonpsyError(errors.E103_SCHEMA, f"{field}: {_safe_msg(err)}{more}",
                           f"{loc}:{line_for(lines, ptr)}") from None
    return graph


def _safe_msg(err: Any) -> str:
    """Pydantic's message without the offending input value (which may be narrative text)."""
    msg = str(err.get("msg", "invalid value"))
    return msg.split(" [type=")[0]
