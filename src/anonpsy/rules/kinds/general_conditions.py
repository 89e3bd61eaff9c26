"""Rule kind ``lexicon_general_conditions``: the ICD-10-CM fallback condition vocabulary
(``rules/lexicon/general_conditions.yaml``, read by :mod:`anonpsy.extract.mentions.general_conditions`).

Case input: ``{text, section?, expect_ids: [...]}`` -- the fallback conditions found in ``text`` of ``section``
(default ``hpi``), in text order, as ICD-10-CM category codes in lower case; what the curated lexicons, the DSM
rules, a test's or a procedure's name or the section's scope leave out is not found. Codes: ``MISSING_TERM``,
``UNEXPECTED_TERM``.

PASS::

    - {id: myelitis, rule: g35-g37, input: {text: "Acute transverse myelitis.", expect_ids: [g37]}, expect: pass}

Coverage: a negative case (``expect_ids: []``) and a case of each block and synonym entry.
"""

from __future__ import annotations

from typing import Any

from anonpsy.rules.registry import Case, Doc, RuleKind, register

_CACHE: dict[int, tuple[Doc, Any]] = {}


def _vocab(doc: Doc) -> Any:
    from anonpsy.extract.mentions.general_conditions import vocabulary_of

    hit = _CACHE.get(id(doc))
    if hit is not None and hit[0] is doc:
        return hit[1]
    _CACHE.clear()
    v = vocabulary_of(doc)
    _CACHE[id(doc)] = (doc, v)
    return v


def _run_case(doc: Doc, case: Case) -> list[str]:
    from anonpsy.extract.mentions.general_conditions import find_general_conditions

    inp = case.get("input")
    if not isinstance(inp, dict) or not isinstance(inp.get("text"), str):
        return ["malformed case input: needs 'text' (string) and 'expect_ids' (list)"]
    got = [h.condition.code.lower() for h in find_general_conditions(inp["text"], str(inp.get("section", "hpi")),
                                                                     _vocab(doc))]
    want = [str(x) for x in inp.get("expect_ids", [])]
    found: list[str] = []
    if any(w not in got for w in want):
        found.append("MISSING_TERM")
    if any(g not in want for g in got) or (not found and got != want):
        found.append("UNEXPECTED_TERM")
    if case.get("expect") == "pass":
        return [] if not found else [f"expected pass, got violations {sorted(set(found))} (found {got})"]
    wanted = sorted(set(case.get("violations", [])))
    return [] if sorted(set(found)) == wanted else [f"expected violations {wanted}, got {sorted(set(found)) or 'none'}"
                                                    f" (found {got})"]


def _entries(doc: Doc) -> list[dict[str, Any]]:
    return [*(doc.get("blocks") or []), *(doc.get("synonyms") or [])]


def _coverage(doc: Doc, cases: list[Case]) -> list[str]:
    out: list[str] = []
    if not any(isinstance(c.get("input"), dict) and c["input"].get("expect_ids") == [] for c in cases):
        out.append("no negative case (expect_ids: []); add a look-alike text that must not match")
    covered = {c.get("rule") for c in cases}
    out += [f"entry {e['id']!r} has no case" for e in _entries(doc) if e.get("id") not in covered]
    return out


register(RuleKind(name="lexicon_general_conditions", run_case=_run_case, entries=_entries, coverage=_coverage,
                  description="ICD-10-CM fallback vocabulary of conditions the curated lexicon does not name."))
