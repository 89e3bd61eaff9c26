"""A fast yes/no check of a reply against its JSON Schema, compiled by fastjsonschema.

Validating every reply with :class:`jsonschema.Draft202012Validator` walks the schema through generic keyword
dispatch, error generators and path bookkeeping; for the small object schemas of the model steps that costs
several milliseconds per reply, while nearly every reply is valid. :func:`compile_check` has fastjsonschema
compile a schema into plain Python code that answers only "valid or not"; the client runs jsonschema only when
the answer is "not valid" (to describe the problems), so the verdict on a reply is jsonschema's in every case.

fastjsonschema implements drafts 4, 6 and 7, so only schemas whose keywords mean the same there as in Draft
2020-12 get a fast check: ``type``, ``properties``, ``required``, ``additionalProperties``, ``items`` (one
schema), ``minItems``/``maxItems``, ``minLength``/``maxLength``, the numeric bounds (numbers, as drafts 6 and
later write them), ``pattern``, ``enum`` of strings and null, boolean schemas and the annotations (``title``,
``description``, ...). A schema using any other keyword gets none (``None``) and is validated by jsonschema
alone. The one difference left is a pattern's ``$`` before a final newline, which fastjsonschema (as ECMA-262)
refuses and Python's ``re`` accepts: there the fast no sends the reply to jsonschema, whose verdict stands. A
Hypothesis property (``tests/test_llm_schema_fast.py``) checks this on every reply schema of the backend.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import fastjsonschema

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "default", "examples", "deprecated", "readOnly",
     "writeOnly"}
)
_SUPPORTED = _ANNOTATIONS | {
    "type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems", "minLength",
    "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern", "enum",
}
_SCHEMA_KEYS = ("items", "additionalProperties")
_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})
_DRAFT7 = "http://json-schema.org/draft-07/schema#"


def _covered(schema: Any) -> bool:
    """Do all keywords of ``schema`` (and of its subschemas) mean the same in draft 7 and Draft 2020-12?"""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict) or not set(schema) <= _SUPPORTED:
        return False
    t = schema.get("type")
    if t is not None and not (t in _TYPES if isinstance(t, str)
                              else isinstance(t, list) and t and all(n in _TYPES for n in t)):
        return False
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if key in schema and (isinstance(schema[key], bool) or not isinstance(schema[key], int | float)):
            return False
    for key in ("minItems", "maxItems", "minLength", "maxLength"):
        if key in schema and (isinstance(schema[key], bool) or not isinstance(schema[key], int)
                              or schema[key] < 0):
            return False
    if "pattern" in schema and not isinstance(schema["pattern"], str):
        return False
    if "required" in schema and not (isinstance(schema["required"], list)
                                     and all(isinstance(k, str) for k in schema["required"])):
        return False
    if "enum" in schema and not (isinstance(schema["enum"], list)
                                 and all(e is None or isinstance(e, str) for e in schema["enum"])):
        return False  # Python's == makes True equal 1, and 1 equal 1.0: only strings and null compare alike
    props = schema.get("properties", {})
    if not isinstance(props, dict) or not all(_covered(s) for s in props.values()):
        return False
    return all(_covered(schema[k]) for k in _SCHEMA_KEYS if k in schema)


def compile_check(schema: Any) -> Check | None:
    """A function telling whether a value is valid under ``schema`` (as jsonschema's Draft 2020-12 validator
    decides), or ``None`` when the schema uses a keyword this check does not cover."""
    if not _covered(schema):
        return None
    if isinstance(schema, bool):
        return (lambda v: True) if schema else (lambda v: False)
    try:
        validate = fastjsonschema.compile({**schema, "$schema": _DRAFT7})
    except (fastjsonschema.JsonSchemaDefinitionException, re.error):
        return None

    def check(value: Any) -> bool:
        try:
            validate(value)
        except fastjsonschema.JsonSchemaValueException:
            return False
        return True

    return check
