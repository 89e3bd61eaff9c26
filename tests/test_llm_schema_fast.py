"""The fast reply check (anonpsy.llm.schema_fast) gives jsonschema's verdict on every reply schema it covers."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.llm.schema_fast import compile_check

SCHEMAS = sorted((Path(__file__).resolve().parents[1] / "schemas" / "llm").glob("*.json"))
#: Reply schemas of the templates the llm backend asks on every case: each must have a fast check.
BACKEND = (
    "extract_case", "extract_causal", "extract_diagnoses", "extract_history", "extract_symptoms",
    "extract_timeline", "extract_treatments.v2", "extract_visit", "generate_block", "generate_closing",
    "generate_lead", "perturb_demographics", "perturb_mse", "perturb_steb", "perturb_visit",
)

LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 200),
    st.sampled_from([0.0, 1.0, -1.5, 2.5, 100.0, math.nan, math.inf, -math.inf]),
    st.text(max_size=6),
)
ANY_JSON = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


def near(schema: Any) -> st.SearchStrategy[Any]:
    """Values that mostly follow ``schema``, each part now and then breaking one of its keywords (or of any
    type at all), so that both verdicts are common even for schemas with many properties."""
    if not isinstance(schema, dict):
        return ANY_JSON
    good: list[st.SearchStrategy[Any]] = []
    odd: list[st.SearchStrategy[Any]] = [ANY_JSON]
    if "enum" in schema:
        good.append(st.sampled_from(schema["enum"]))
    types = schema.get("type", [])
    types = [types] if isinstance(types, str) else types
    if "null" in types:
        good.append(st.none())
    if "string" in types and "enum" not in schema:
        lo = schema.get("minLength", 0)
        hi = schema.get("maxLength", lo + 8)
        if "pattern" in schema:
            good.append(st.from_regex(schema["pattern"]))
        else:
            good.append(st.text(min_size=lo, max_size=min(hi, lo + 12)))
        odd.append(st.text(min_size=max(0, lo - 1), max_size=min(hi + 1, lo + 12)))
        if hi > 20:  # strings at the length limit, built by repetition (the limit can be large)
            odd.append(st.builds(lambda c, n: c * n, st.characters(), st.sampled_from([hi - 1, hi, hi + 1])))
    if "integer" in types or "number" in types:
        bounds = [schema[k] for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") if k in schema]
        good.append(st.integers(schema.get("minimum", -10), schema.get("maximum", 1000)))
        odd.append(st.sampled_from([b + d for b in bounds for d in (-1, -0.5, 0, 0.5, 1)] + [0, 1.0, True, math.nan]))
    if "array" in types:
        item = near(schema.get("items", {}))
        lo, hi = schema.get("minItems", 0), schema.get("maxItems", 4)
        good.append(st.lists(item, min_size=lo, max_size=min(hi, lo + 4)))
        odd.append(st.lists(item, min_size=max(0, lo - 1), max_size=min(hi + 1, lo + 5)))
    if "object" in types or "properties" in schema:
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        parts = {k: near(s) for k, s in props.items()}
        must = {k: v for k, v in parts.items() if k in required}
        may = {k: v for k, v in parts.items() if k not in required}
        good.append(st.fixed_dictionaries(must, optional=may))
        odd.append(st.fixed_dictionaries({}, optional=parts))
        odd.append(st.builds(lambda d, x: {**d, **x}, st.fixed_dictionaries(must, optional=may),
                             st.dictionaries(st.sampled_from(["extra", *props][:3]), LEAVES, min_size=1, max_size=1)))
    if not good:
        return st.one_of(odd)
    good_one, odd_one = st.one_of(good), st.one_of(odd)
    return st.integers(0, 11).flatmap(lambda i: odd_one if i == 0 else good_one)  # a part breaks, now and then


def _newline_at_end(value: Any) -> bool:
    """Does any string in ``value`` end with a newline? There a pattern's ``$`` differs: Python's ``re``, which
    jsonschema uses, matches it before a final newline; fastjsonschema, as ECMA-262 regexes, only at the end."""
    if isinstance(value, str):
        return value.endswith("\n")
    if isinstance(value, list):
        return any(_newline_at_end(v) for v in value)
    if isinstance(value, dict):
        return any(_newline_at_end(k) or _newline_at_end(v) for k, v in value.items())
    return False


def _agrees(fast: Any, validator: jsonschema.Draft202012Validator, value: Any) -> None:
    """A fast yes is always jsonschema's yes (the client then skips jsonschema); a fast no makes the client ask
    jsonschema, so the verdict is jsonschema's either way. Outside the one ``$`` difference they agree."""
    valid = validator.is_valid(value)
    if fast(value):
        assert valid
    elif not _newline_at_end(value):
        assert not valid


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_every_backend_reply_schema_has_a_fast_check() -> None:
    stems = {p.stem: p for p in SCHEMAS}
    for name in BACKEND:
        assert compile_check(_load(stems[name])) is not None, name


def test_schemas_beyond_the_fast_check_get_none() -> None:
    assert compile_check({"anyOf": [{"type": "string"}]}) is None
    assert compile_check({"type": "array", "uniqueItems": True}) is None
    assert compile_check({"enum": [1, 2]}) is None
    assert compile_check({"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}}) is None


@pytest.mark.parametrize("path", SCHEMAS, ids=[p.stem for p in SCHEMAS])
def test_fast_check_agrees_with_jsonschema(path: Path) -> None:
    schema = _load(path)
    fast = compile_check(schema)
    if fast is None:
        pytest.skip(f"{path.stem} uses keywords beyond the fast check; jsonschema alone validates it")
    validator = jsonschema.Draft202012Validator(schema)

    @given(value=near(schema))
    @example(value={"base_url": "http://0\n"})
    def fast_verdict_is_jsonschemas(value: Any) -> None:
        _agrees(fast, validator, value)

    fast_verdict_is_jsonschemas()


KEYWORDS: dict[str, Any] = {
    "type": {"type": ["integer", "null"]},
    "enum": {"enum": ["a", "b", None]},
    "low": {"minimum": 0, "exclusiveMaximum": 5},
    "high": {"exclusiveMinimum": -1, "maximum": 3},
    "lengths": {"minLength": 1, "maxLength": 3, "pattern": "^[a-c]"},
    "anchored": {"type": "string", "pattern": "^[a-c]+$"},
    "items": {"type": "array", "items": {"type": "number"}, "minItems": 1, "maxItems": 2},
    "object": {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}},
               "additionalProperties": {"type": "boolean"}},
    "closed": {"type": "object", "properties": {"a": True, "b": False}, "additionalProperties": False},
}


@pytest.mark.parametrize("name", sorted(KEYWORDS))
def test_each_keyword_agrees_with_jsonschema(name: str) -> None:
    schema = KEYWORDS[name]
    fast = compile_check(schema)
    assert fast is not None
    validator = jsonschema.Draft202012Validator(schema)

    @given(value=ANY_JSON | near(schema))
    @example(value=1.0)
    @example(value=True)
    @example(value=-1)
    @example(value=3.5)
    @example(value=5)
    @example(value=math.nan)
    @example(value=None)
    @example(value="\U0001f600bc")
    @example(value={"b": 1})
    @example(value="ab\n")
    def fast_verdict_is_jsonschemas(value: Any) -> None:
        _agrees(fast, validator, value)

    fast_verdict_is_jsonschemas()
