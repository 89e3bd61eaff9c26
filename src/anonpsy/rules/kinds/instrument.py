"""Rule kind ``instrument``: questionnaire structure and scoring (``rules/instruments/*.yaml``).

The file's entries are its items (ids unique across every instrument). A case scores one respondent's answers
with the file under check (:meth:`anonpsy.tabular.instruments.Instrument.score`)::

    - id: moderate-at-15
      input: {answers: [2, 2, 2, 2, 2, 2, 1, 1, 1, 0], expect_total: 15, expect_band: moderate,
              expect_above_cutoff: true}
      expect: pass
    - id: five-is-not-a-code
      input: {answers: [5, 0, 0, 0, 0, 0, 0, 0, 0, 0]}
      expect: fail
      violations: [OUT_OF_SCALE]

``answers`` holds one code per item (null = unanswered). PASS: the answers are scorable and every given
``expect_total`` (raw, prorated when items are missing), ``expect_score`` (the banded score), ``expect_band`` and
``expect_above_cutoff`` holds. FAIL: the reasons the answers cannot be scored (ITEM_COUNT, OUT_OF_SCALE,
TOO_MANY_MISSING) are exactly ``violations``.

Coverage: the file satisfies the loader's invariants, and every band boundary and the cut-off have passing cases
at the first raw total that reaches them and at one total below.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from anonpsy.rules.check import expectation_problems
from anonpsy.rules.registry import Case, Doc, RuleKind, entries_from, register
from anonpsy.tabular.instruments import KIND, REASONS, Instrument

_INPUT_KEYS = frozenset({"answers", "expect_total", "expect_score", "expect_band", "expect_above_cutoff"})


def _parse(doc: Doc) -> Instrument | str:
    try:
        return Instrument.model_validate(doc)
    except ValidationError as exc:
        return f"rule file does not load: {exc.errors()[0]['msg']}"


def run_case(doc: Doc, case: Case) -> list[str]:
    """Score the case's answers with the instrument under check; problems when it behaves otherwise."""
    inst = _parse(doc)
    if isinstance(inst, str):
        return [inst]
    inp = case.get("input")
    if not isinstance(inp, dict) or not isinstance(inp.get("answers"), list):
        return ["input must be a mapping with an 'answers' list"]
    unknown = sorted(set(inp) - _INPUT_KEYS)
    if unknown:
        return [f"input has unknown keys {unknown}; allowed: {sorted(_INPUT_KEYS)}"]
    bad = sorted(set(case.get("violations") or []) - set(REASONS))
    if bad:
        return [f"violations {bad} are not reason codes; use {list(REASONS)}"]
    result = inst.score(inp["answers"])
    problems = expectation_problems(case, list(result.reasons))
    if not result.ok:
        return problems
    got: dict[str, Any] = {"expect_total": result.total, "expect_score": result.score,
                           "expect_band": result.band, "expect_above_cutoff": result.above_cutoff}
    for key, value in got.items():
        if key in inp and inp[key] != value:
            problems.append(f"{key[len('expect_'):]} is {value!r}, expected {inp[key]!r}")
    return problems


def coverage(doc: Doc, cases: list[Case]) -> list[str]:
    """Missing boundary cases: each band start and the cut-off, at the first total reaching it and one below."""
    inst = _parse(doc)
    if isinstance(inst, str):
        return [inst]
    totals = set()
    for c in cases:
        inp = c.get("input")
        if c.get("expect") == "pass" and isinstance(inp, dict) and isinstance(inp.get("expect_total"), int):
            totals.add(inp["expect_total"])
    problems = []
    lo, _ = inst.score_range()
    marks = [(f"band {b.id!r}", b.min) for b in inst.bands if b.min > lo] + [("the cut-off", inst.cutoff.min)]
    for what, score in marks:
        first = inst.first_total_with_score(score)
        for total in (first - 1, first):
            if total not in totals:
                problems.append(f"no passing case with expect_total {total} for {what} (score {score} starts at "
                                f"total {first})")
    return problems


register(
    RuleKind(
        name=KIND,
        run_case=run_case,
        entries=entries_from("items"),
        coverage=coverage,
        description="Questionnaire instruments: response scale, items in anonpsy's wording, scoring, bands, cut-off",
    )
)
