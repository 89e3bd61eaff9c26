"""Rule kind ``test_values``: clinical test definitions and value pools (``rules/test_values/*.yaml``).

A case runs the value finder over a short test-results text, using the tests of the rule file under check::

    - id: lithium_level-1.2-at
      rule: lithium_level
      input: {text: "Li 1.2 mmol/L", expect_tests: [lithium_level], value: 1.2, expect_pool: high}
      expect: pass
    - id: bp-systolic-only
      input: {text: "BP 132", expect_tests: []}
      expect: fail
      violations: [AMBIGUOUS]

PASS: every number in ``text`` maps to a test, the mapped tests are ``expect_tests`` in order, and (when
given) ``value`` written in ``unit`` (canonical when absent) falls in the pool ``expect_pool``, as does the
first mapped value of the case's test. FAIL: the reason codes of the unmapped values (UNKNOWN_TEST,
UNKNOWN_UNIT, OUT_OF_RANGE, AMBIGUOUS) are exactly ``violations``.

Coverage: the file satisfies the loader's invariants (pools contiguous, no pool straddles a cut-off, pools
within range) and every cut-off of every test has cases at the cut-off and one step (``10 ** -decimals``)
either side."""

from __future__ import annotations

from typing import Any

from anonpsy.errors import AnonpsyError
from anonpsy.perturb.test_values import REASONS, find_values
from anonpsy.rules.check import expectation_problems
from anonpsy.rules.registry import Case, Doc, RuleKind, register
from anonpsy.rules.test_values import (
    KIND,
    cross_test_problems,
    defs_from_doc,
    defs_map_from_doc,
    validation_messages,
)

_INPUT_KEYS = frozenset({"text", "expect_tests", "value", "unit", "expect_pool"})


def _input_problems(inp: Any) -> list[str]:
    if not isinstance(inp, dict):
        return ["input must be a mapping with 'text'"]
    out = []
    unknown = sorted(set(inp) - _INPUT_KEYS)
    if unknown:
        out.append(f"input has unknown keys {unknown}; allowed: {sorted(_INPUT_KEYS)}")
    if not isinstance(inp.get("text"), str) or not inp.get("text"):
        out.append("input.text must be a non-empty string")
    et = inp.get("expect_tests")
    if et is not None and not (isinstance(et, list) and all(isinstance(x, str) for x in et)):
        out.append("input.expect_tests must be a list of test ids")
    if "value" in inp and (isinstance(inp["value"], bool) or not isinstance(inp["value"], int | float)):
        out.append("input.value must be a number")
    if "unit" in inp and not isinstance(inp["unit"], str):
        out.append("input.unit must be a string")
    if "expect_pool" in inp and not isinstance(inp["expect_pool"], str):
        out.append("input.expect_pool must be a pool interpretation (string)")
    return out


def run_case(doc: Doc, case: Case) -> list[str]:
    """Run one case of a test-values file; returns problems (empty when the case behaves as expected)."""
    inp = case.get("input")
    problems = _input_problems(inp)
    if problems:
        return problems
    assert isinstance(inp, dict)
    try:
        defs = defs_map_from_doc(doc)
    except AnonpsyError as exc:
        return [f"rule file is invalid, case not run: {exc.message}"]
    mentions = find_values(inp["text"], defs)
    got = [m.test_id for m in mentions if m.mapped]
    expect_tests = inp.get("expect_tests")
    if expect_tests is not None and got != expect_tests:
        problems.append(f"finder mapped the text to {got}, expected {expect_tests}")
    codes = sorted({m.reason for m in mentions if m.reason is not None})
    bad = sorted(set(case.get("violations") or []) - set(REASONS))
    if bad:
        problems.append(f"violations {bad} are not reason codes; use {list(REASONS)}")
    problems += expectation_problems(case, codes)

    test_id = case.get("rule") or (expect_tests[0] if expect_tests else None)
    expect_pool = inp.get("expect_pool")
    if "value" in inp or expect_pool is not None:
        test = defs.get(test_id) if isinstance(test_id, str) else None
        if test is None:
            problems.append(f"case names no test of this file (rule {test_id!r}); set 'rule' to a test id")
            return problems
        if "value" in inp:
            unit = inp.get("unit")
            if unit is not None and test.unit_for(unit) is None:
                problems.append(f"unit {unit!r} is not a unit of test {test.id!r}")
            else:
                pool = test.pool_for_unit(float(inp["value"]), unit)
                got_pool = pool.interpretation if pool else None
                if expect_pool is not None and got_pool != expect_pool:
                    problems.append(
                        f"value {inp['value']} of test {test.id!r} falls in pool {got_pool!r}, "
                        f"expected {expect_pool!r}"
                    )
        if expect_pool is not None:
            first = next((m for m in mentions if m.mapped and m.test_id == test.id), None)
            if first is None:
                problems.append(f"no value of test {test.id!r} was found in the text")
            elif first.interpretation != expect_pool:
                problems.append(
                    f"the text's {test.id!r} value is in pool {first.interpretation!r}, "
                    f"expected {expect_pool!r}"
                )
    return problems


def _close(a: float, b: float, step: float) -> bool:
    return abs(a - b) < step / 2


def coverage(doc: Doc, cases: list[Case]) -> list[str]:
    """Invariant problems of the file and missing boundary cases (each cut-off, and one step either side)."""
    problems = list(validation_messages(doc))
    if problems:
        return problems
    tests = defs_from_doc(doc)
    problems += cross_test_problems(tests)
    for t in tests:
        step = t.step
        values: list[float] = []
        for c in cases:
            inp = c.get("input")
            if not isinstance(inp, dict) or not isinstance(inp.get("value"), int | float):
                continue
            et = inp.get("expect_tests") or []
            if (c.get("rule") or (et[0] if et else None)) != t.id or "expect_pool" not in inp:
                continue
            unit = inp.get("unit")
            if unit is None or t.unit_for(unit) is t.canonical_unit:
                values.append(float(inp["value"]))
        if not t.cutoffs and not values:
            problems.append(f"test {t.id!r} has no case with a value and expect_pool")
        for cut in t.cutoffs:
            for label, v in (("one step below", cut - step), ("at", cut), ("one step above", cut + step)):
                if not t.in_range(v):
                    continue
                if not any(_close(x, v, step) for x in values):
                    problems.append(
                        f"test {t.id!r}: no case {label} cut-off {cut:.{t.decimals}f} (value "
                        f"{v:.{t.decimals}f} in {t.canonical_unit.unit} with expect_pool)"
                    )
    return problems


register(
    RuleKind(
        name=KIND,
        run_case=run_case,
        coverage=coverage,
        description="Clinical test definitions (aliases, units, cut-offs) and value pools for resampling",
    )
)
