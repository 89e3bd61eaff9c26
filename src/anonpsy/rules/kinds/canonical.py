"""Rule kind ``canonical``: diagnosis-label canonicalization (``rules/canonical/synonyms.yaml``).

Each entry maps synonyms to one DSM rule id; the file also lists the specifier patterns and leading qualifiers
that :func:`anonpsy.evaluate.canonical.canonicalize` removes. A case's ``input`` is one of:

* ``{label, id, specifiers?}`` -- the label must canonicalize to rule ``id`` (null: to no DSM rule), else
  CANONICAL_ID_MISMATCH; when ``specifiers`` is given, the removed specifiers must be exactly that list in
  removal order, else CANONICAL_SPECIFIERS_MISMATCH::

      - id: meth-use-disorder-is-stimulant
        rule: stimulant_use_disorder
        input: {label: "Methamphetamine use disorder, severe", id: stimulant_use_disorder,
                specifiers: [severe]}
        expect: pass

* ``{a, b, same}`` -- whether the two labels name the same diagnosis must equal ``same``, else
  CANONICAL_SAME_MISMATCH.

Cases run against the file being checked, not the installed one. Coverage: every entry needs a case.
"""

from __future__ import annotations

from typing import Any

from anonpsy.evaluate.canonical import CanonicalTable, build_table, canonicalize
from anonpsy.rules.registry import Case, Doc, RuleKind, register

CANONICAL_ID_MISMATCH = "CANONICAL_ID_MISMATCH"
CANONICAL_SPECIFIERS_MISMATCH = "CANONICAL_SPECIFIERS_MISMATCH"
CANONICAL_SAME_MISMATCH = "CANONICAL_SAME_MISMATCH"
VIOLATION_CODES = frozenset({CANONICAL_ID_MISMATCH, CANONICAL_SPECIFIERS_MISMATCH, CANONICAL_SAME_MISMATCH})

_TABLES: dict[int, tuple[Doc, CanonicalTable]] = {}


def _table(doc: Doc) -> CanonicalTable:
    hit = _TABLES.get(id(doc))
    if hit is not None and hit[0] is doc:
        return hit[1]
    table = build_table(doc)
    if len(_TABLES) > 16:
        _TABLES.clear()
    _TABLES[id(doc)] = (doc, table)
    return table


def violations(table: CanonicalTable, inp: dict[str, Any]) -> list[str]:
    """Violation codes of one case input (see the module docstring). Raises ValueError on bad input."""
    if "label" in inp:
        label = inp["label"]
        if not isinstance(label, str):
            raise ValueError("label must be a string")
        if "id" not in inp:
            raise ValueError("a label case needs the expected id (null for none)")
        got = canonicalize(label, table)
        found: list[str] = []
        if got.rule_id != inp["id"]:
            found.append(CANONICAL_ID_MISMATCH)
        if "specifiers" in inp and list(got.specifiers) != list(inp["specifiers"] or []):
            found.append(CANONICAL_SPECIFIERS_MISMATCH)
        return found
    if {"a", "b", "same"} <= set(inp):
        a, b, same = inp["a"], inp["b"], inp["same"]
        if not isinstance(a, str) or not isinstance(b, str) or not isinstance(same, bool):
            raise ValueError("a and b must be strings and same a boolean")
        equal = canonicalize(a, table).key == canonicalize(b, table).key
        return [] if equal == same else [CANONICAL_SAME_MISMATCH]
    raise ValueError("input needs {label, id} or {a, b, same}")


def run_case(doc: Doc, case: Case) -> list[str]:
    """Run one case against the rule file ``doc``."""
    try:
        table = _table(doc)
    except ValueError as err:
        return [f"rule file does not load: {err}"]
    inp = case.get("input")
    if not isinstance(inp, dict):
        return ["input must be a mapping: {label, id, specifiers?} or {a, b, same}"]
    try:
        found = violations(table, inp)
    except ValueError as err:
        return [f"input not understood: {err}"]
    found_set = sorted(set(found))
    if case.get("expect") == "pass":
        return [] if not found_set else [f"expected pass, got violations {found_set}"]
    listed = case.get("violations") or []
    unknown = sorted(str(c) for c in listed if c not in VIOLATION_CODES)
    if unknown:
        return [f"unknown violation code(s) {unknown}; known: {sorted(VIOLATION_CODES)}"]
    want = sorted(set(listed))
    return [] if found_set == want else [f"expected violations {want}, got {found_set or 'none'}"]


def coverage(doc: Doc, cases: list[Case]) -> list[str]:
    """Every synonym entry needs at least one case naming it."""
    named = {c.get("rule") for c in cases}
    rules = doc.get("rules", [])
    ids = [e.get("id") for e in rules if isinstance(e, dict)] if isinstance(rules, list) else []
    return [f"entry {rid!r} has no case; add one with rule: {rid}" for rid in ids if rid not in named]


register(
    RuleKind(
        name="canonical",
        run_case=run_case,
        coverage=coverage,
        description="Diagnosis-label synonyms, specifiers and qualifiers for evaluation canonicalization.",
    )
)
