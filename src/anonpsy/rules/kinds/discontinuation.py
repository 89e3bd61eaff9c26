"""Rule kind ``discontinuation_reasons``: why a treatment was stopped (``rules/treatments/discontinuation.yaml``).

Cases: ``input: {text, expect_reason}`` -- the reason read from ``text`` (each sentence in turn, the way the
extractor reads the sentences about a stopped drug), ``null`` for none. Code: ``REASON_MISMATCH``.
"""

from __future__ import annotations

from anonpsy.rules.registry import Case, Doc, RuleKind, entries_from, register


def _run_case(doc: Doc, case: Case) -> list[str]:
    from anonpsy.extract.mentions.treatments import ReasonTable
    from anonpsy.extract.sections import sentences

    inp = case.get("input")
    if not isinstance(inp, dict) or not isinstance(inp.get("text"), str) or "expect_reason" not in inp:
        return ["BAD_CASE_INPUT: needs 'text' and 'expect_reason'"]
    key = "_compiled_reasons"
    table = doc.get(key)
    if table is None:
        table = ReasonTable.from_doc({k: v for k, v in doc.items() if not k.startswith("_")})
        doc[key] = table
    got = table.reason([s.text for s in sentences(inp["text"])])
    found = [] if got == inp["expect_reason"] else ["REASON_MISMATCH"]
    if case.get("expect") == "fail":
        want = set(case.get("violations") or [])
        return [] if want and want <= set(found) else [f"expected {sorted(want)}, got reason {got!r}"]
    return [f"REASON_MISMATCH: got {got!r}"] if found else []


register(
    RuleKind(
        name="discontinuation_reasons",
        run_case=_run_case,
        entries=entries_from("rules"),
        description="Why a treatment was stopped: reasons and named adverse effects.",
    )
)
