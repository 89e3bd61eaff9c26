"""Structured records: a schema registry with a de-identification action per field.

A record type (``dataType``) is described by ``schemas/records/<dataType>.json``, a JSON Schema (draft
2020-12) in which every leaf field carries an ``x-deid`` keyword::

    "name": {"type": "string", "x-deid": {"action": "shouldMask", "entity_type": "PERSON"}}

Actions: ``passThrough`` (kept), ``shouldMask`` (``[PERSON]``), ``shouldHash`` (keyed hash token; needs the
HMAC key), ``autoDeID`` (free text: detected and replaced through :func:`anonpsy.phi.pipeline.mask_text`).
Objects and arrays carry no action; their leaves do. Masking, hashing and free-text actions apply to string
fields only.

Processing fails closed: a field the schema does not describe is an error naming the field's path (``M103``),
never its value; input and output are validated against the schema (``M108``, path and schema keyword only).
Records come as JSON (an object or an array of objects), JSONL, or CSV whose column names are dotted paths
(``patient.name``, ``patient.phones.0``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import jsonschema

from anonpsy.errors import E101_EMPTY_INPUT, E108_MALFORMED_JSON, AnonpsyError
from anonpsy.paths import schemas_dir
from anonpsy.phi.operators import (
    M100_MISSING_KEY,
    M103_UNDESCRIBED_FIELD,
    M107_UNKNOWN_SCHEMA,
    M108_RECORD_INVALID,
    HashOperator,
    MaskContext,
    MaskOperator,
)
from anonpsy.phi.types import EntityType

Action = Literal["passThrough", "shouldMask", "shouldHash", "autoDeID"]
ACTIONS: tuple[str, ...] = ("passThrough", "shouldMask", "shouldHash", "autoDeID")
RecordFormat = Literal["json", "jsonl", "csv"]
TextMasker = Callable[[str, str], str]  # (text, json pointer of the field) -> masked text


def records_dir() -> Path:
    """Directory of the record schemas."""
    return schemas_dir() / "records"


def list_schemas() -> list[str]:
    """Names (``dataType``) of the available record schemas."""
    return sorted(p.stem for p in records_dir().glob("*.json"))


def _pointer(parts: list[str | int]) -> str:
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _is_object(node: dict[str, Any]) -> bool:
    return node.get("type") == "object" or "properties" in node


def _is_array(node: dict[str, Any]) -> bool:
    return node.get("type") == "array" or "items" in node


def _string_typed(node: dict[str, Any]) -> bool:
    t = node.get("type")
    if t is None:
        return all(isinstance(v, str) for v in node.get("enum", [node.get("const", "")]))
    types = t if isinstance(t, list) else [t]
    return "string" in types and all(x in ("string", "null") for x in types)


def check_schema(schema: dict[str, Any]) -> list[str]:
    """Problems of a record schema: invalid JSON Schema, leaves without ``x-deid``, bad actions or types."""
    problems: list[str] = []
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        problems.append(f"{_pointer(list(exc.path))}: not a valid JSON Schema ({exc.validator})")
    types = {t.value for t in EntityType}

    def walk(node: Any, where: list[str | int]) -> None:
        if not isinstance(node, dict):
            problems.append(f"{_pointer(where)}: schema node must be an object")
            return
        if _is_object(node):
            props = node.get("properties", {})
            if node.get("additionalProperties", True) is not False:
                problems.append(f"{_pointer(where)}: objects must set additionalProperties: false")
            for key, sub in props.items():
                walk(sub, [*where, key])
            return
        if _is_array(node):
            walk(node.get("items", {}), [*where, "items"])
            return
        deid = node.get("x-deid")
        if not isinstance(deid, dict):
            problems.append(f"{_pointer(where)}: leaf field has no x-deid action")
            return
        action = deid.get("action")
        if action not in ACTIONS:
            problems.append(f"{_pointer(where)}: x-deid action must be one of {', '.join(ACTIONS)}")
        extra = set(deid) - {"action", "entity_type"}
        if extra:
            problems.append(f"{_pointer(where)}: unknown x-deid keys {', '.join(sorted(extra))}")
        et = deid.get("entity_type")
        if et is not None and et not in types:
            problems.append(f"{_pointer(where)}: unknown entity_type")
        if action == "shouldMask" and et is None:
            problems.append(f"{_pointer(where)}: shouldMask needs an entity_type")
        if action in ("shouldMask", "shouldHash", "autoDeID") and not _string_typed(node):
            problems.append(f"{_pointer(where)}: {action} applies to string fields only")

    walk(schema, [])
    return problems


@dataclass(frozen=True)
class RecordSchema:
    """A loaded record schema."""

    name: str
    schema: dict[str, Any]

    @property
    def uses_hash(self) -> bool:
        """True when some field is hashed (the HMAC key is then required)."""
        return '"shouldHash"' in json.dumps(self.schema)

    def validator(self) -> jsonschema.Draft202012Validator:
        """A draft 2020-12 validator for this schema."""
        return jsonschema.Draft202012Validator(self.schema)


def load_record_schema(name: str) -> RecordSchema:
    """Load and check ``schemas/records/<name>.json`` (``M107`` when unknown or invalid)."""
    return _load(name, str(records_dir()))


@lru_cache(maxsize=32)
def _load(name: str, directory: str) -> RecordSchema:
    known = sorted(p.stem for p in Path(directory).glob("*.json"))
    if name not in known:
        raise AnonpsyError(
            M107_UNKNOWN_SCHEMA,
            f"unknown record schema {name!r}; available: {', '.join(known) or 'none'}",
            location="--schema",
        )
    path = Path(directory) / f"{name}.json"
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        raise AnonpsyError(
            M107_UNKNOWN_SCHEMA, "record schema is not valid JSON", location=str(path)
        ) from None
    problems = check_schema(schema)
    if problems:
        raise AnonpsyError(M107_UNKNOWN_SCHEMA, "; ".join(problems[:5]), location=str(path))
    return RecordSchema(name, schema)


# -- checking and processing ---------------------------------------------------------------------------------


def undescribed_fields(
    record: Any, schema: dict[str, Any], where: list[str | int] | None = None
) -> Iterator[str]:
    """JSON pointers of fields in ``record`` that ``schema`` does not describe."""
    path = where or []
    if isinstance(record, dict) and _is_object(schema):
        props = schema.get("properties", {})
        for key, value in record.items():
            if key not in props:
                yield _pointer([*path, key])
            else:
                yield from undescribed_fields(value, props[key], [*path, key])
    elif isinstance(record, list) and _is_array(schema):
        for i, item in enumerate(record):
            yield from undescribed_fields(item, schema.get("items", {}), [*path, i])


def validate_record(record: Any, schema: RecordSchema, *, stage: str, index: int | None = None) -> None:
    """Validate against the schema; the error names path and keyword, never the value (``M108``)."""
    errors = sorted(schema.validator().iter_errors(record), key=lambda e: list(e.absolute_path))
    if not errors:
        return
    shown = "; ".join(f"{_pointer(list(e.absolute_path))} fails {e.validator}" for e in errors[:5])
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    where = f"record {index + 1}" if index is not None else "record"
    raise AnonpsyError(
        M108_RECORD_INVALID,
        f"{stage} does not validate against schema {schema.name}: {shown}{more}",
        location=where,
    )


def check_described(record: Any, schema: RecordSchema, index: int | None = None) -> None:
    """Fail closed on the first field the schema does not describe (``M103``)."""
    for ptr in undescribed_fields(record, schema.schema):
        where = f"record {index + 1} {ptr}" if index is not None else ptr
        raise AnonpsyError(
            M103_UNDESCRIBED_FIELD,
            f"field is not described by schema {schema.name}; add it with an x-deid action or remove it",
            location=where,
        )


def deidentify_record(
    record: dict[str, Any],
    schema: RecordSchema,
    *,
    text_masker: TextMasker,
    hasher: HashOperator | None,
    index: int | None = None,
) -> dict[str, Any]:
    """De-identify one record: check it, apply each field's action, validate the output."""
    check_described(record, schema, index)
    validate_record(record, schema, stage="input", index=index)
    masker = MaskOperator()
    ctx = MaskContext()

    def walk(value: Any, node: dict[str, Any], where: list[str | int]) -> Any:
        if isinstance(value, dict) and _is_object(node):
            props = node.get("properties", {})
            return {k: walk(v, props[k], [*where, k]) for k, v in value.items()}
        if isinstance(value, list) and _is_array(node):
            return [walk(v, node.get("items", {}), [*where, i]) for i, v in enumerate(value)]
        deid = node.get("x-deid", {})
        action = deid.get("action")
        if value is None or action == "passThrough":
            return value
        if not isinstance(value, str):
            raise AnonpsyError(
                M108_RECORD_INVALID, f"{action} field is not a string", location=_pointer(where)
            )
        etype = str(deid.get("entity_type", EntityType.OTHER_ID))
        if action == "shouldMask":
            return masker.replace(value, etype, ctx)
        if action == "shouldHash":
            if hasher is None:
                raise AnonpsyError(
                    M100_MISSING_KEY,
                    "schema hashes this field but no HMAC key is set (ANONPSY_HMAC_KEY)",
                    _pointer(where),
                )
            return hasher.replace(value, etype, ctx)
        return text_masker(value, _pointer(where))

    out = walk(record, schema.schema, [])
    if not isinstance(out, dict):
        raise AnonpsyError(M108_RECORD_INVALID, "a record must be a JSON object", location="record")
    validate_record(out, schema, stage="output", index=index)
    return out


# -- formats -------------------------------------------------------------------------------------------------


def _leaf_schema(schema: dict[str, Any], parts: list[str]) -> dict[str, Any] | None:
    node = schema
    for part in parts:
        if _is_object(node):
            props = node.get("properties", {})
            if part not in props:
                return None
            node = props[part]
        elif _is_array(node) and part.isdigit():
            node = node.get("items", {})
        else:
            return None
    return node


def _coerce(cell: str, node: dict[str, Any] | None) -> Any:
    t = (node or {}).get("type")
    types = t if isinstance(t, list) else [t]
    try:
        if "integer" in types:
            return int(cell)
        if "number" in types:
            return float(cell)
    except ValueError:
        return cell
    if "boolean" in types and cell.lower() in ("true", "false"):
        return cell.lower() == "true"
    return cell


def _set_path(target: dict[str, Any], parts: list[str], value: Any) -> None:
    node: Any = target
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        nxt_is_index = not last and parts[i + 1].isdigit()
        if isinstance(node, list):
            idx = int(part)
            while len(node) <= idx:
                node.append(None)
            if last:
                node[idx] = value
            else:
                if node[idx] is None:
                    node[idx] = [] if nxt_is_index else {}
                node = node[idx]
        else:
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, [] if nxt_is_index else {})


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else k, out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}.{i}" if prefix else str(i), out)
    else:
        out[prefix] = value


def parse_records(
    text: str, fmt: RecordFormat, schema: RecordSchema
) -> tuple[list[dict[str, Any]], list[str]]:
    """Parse records from JSON, JSONL or CSV; returns the records and the CSV header (empty for JSON)."""
    if not text.strip():
        raise AnonpsyError(E101_EMPTY_INPUT, "no records in the input", location="input")
    if fmt == "csv":
        reader = csv.DictReader(io.StringIO(text))
        header = list(reader.fieldnames or [])
        records: list[dict[str, Any]] = []
        for row in reader:
            rec: dict[str, Any] = {}
            for col, cell in row.items():
                if col is None or cell is None or cell == "":
                    continue
                parts = col.split(".")
                _set_path(rec, parts, _coerce(cell, _leaf_schema(schema.schema, parts)))
            records.append(rec)
        return records, header
    try:
        if fmt == "jsonl":
            data: Any = []
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        data.append(json.loads(line))
                    except json.JSONDecodeError:
                        raise AnonpsyError(
                            E108_MALFORMED_JSON, "not valid JSON", location=f"line {n}"
                        ) from None
        else:
            data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AnonpsyError(E108_MALFORMED_JSON, "not valid JSON", location=f"line {exc.lineno}") from None
    items = data if isinstance(data, list) else [data]
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise AnonpsyError(
                M108_RECORD_INVALID, "a record must be a JSON object", location=f"record {i + 1}"
            )
    return items, []


def dump_records(records: list[dict[str, Any]], fmt: RecordFormat, header: list[str], *, single: bool) -> str:
    """Serialise de-identified records in the input's format."""
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=header, extrasaction="raise", lineterminator="\n")
        writer.writeheader()
        for rec in records:
            flat: dict[str, Any] = {}
            _flatten(rec, "", flat)
            writer.writerow({k: ("" if flat.get(k) is None else flat.get(k)) for k in header})
        return buf.getvalue()
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    data: Any = records[0] if single and len(records) == 1 else records
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
