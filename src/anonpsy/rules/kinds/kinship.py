"""Rule kind ``kinship``: the relationship vocabulary (``rules/lexicon/kinship.yaml``).

Cases: ``input: {text, groups?: [...], expect_ids: [...]}`` -- the relations named in ``text``, in text order,
limited to ``groups`` when given. Code: ``KIN_MISMATCH``.
"""

from __future__ import annotations

from typing import Any

from anonpsy.rules.registry import Case, Doc, RuleKind, entries_from, register


def _run_case(doc: Doc, case: Case) -> list[str]:
    from anonpsy.kinship import find, from_doc

    inp = case.get("input")
    if not isinstance(inp, dict) or not isinstance(inp.get("text"), str) or "expect_ids" not in inp:
        return ["BAD_CASE_INPUT: needs 'text' and 'expect_ids'"]
    key = "_compiled_kinship"
    vocab: Any = doc.get(key)
    if vocab is None:
        vocab = from_doc({k: v for k, v in doc.items() if not k.startswith("_")})
        doc[key] = vocab
    got = [m.id for m in find(inp["text"], inp.get("groups"), vocab=vocab)]
    found = [] if got == list(inp["expect_ids"]) else ["KIN_MISMATCH"]
    if case.get("expect") == "fail":
        want = set(case.get("violations") or [])
        return [] if want and want <= set(found) else [f"expected {sorted(want)}, got {got!r}"]
    return [f"KIN_MISMATCH: got {got!r}"] if found else []


def _coverage(doc: Doc, cases: list[Case]) -> list[str]:
    named: set[str] = set()
    for c in cases:
        inp = c.get("input")
        if isinstance(inp, dict):
            named.update(inp.get("expect_ids") or [])
    rules = doc.get("rules") or []
    return [f"no case finds {r['id']!r}" for r in rules if isinstance(r, dict) and r.get("id") not in named]


register(
    RuleKind(
        name="kinship",
        run_case=_run_case,
        entries=entries_from("rules"),
        coverage=_coverage,
        description="Relatives and others close to the patient, by relation.",
    )
)
