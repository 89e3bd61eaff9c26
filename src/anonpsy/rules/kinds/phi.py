"""Rule kinds ``phi_patterns``, ``phi_names``, ``phi_gazetteer`` and ``phi_safelist`` (``rules/phi/*.yaml``).

A case gives a short synthetic text and what the analyzer must report on it. The analyzer runs with all PHI
rule files of the rules directory, the file under test standing in for its copy on disk. The "violations" of a
text are the identifier types found in it, as codes ``PHI_<ENTITY_TYPE>``; an AGE above 89 reports
``PHI_AGE_OVER_89`` instead of ``PHI_AGE``. So ``expect: pass`` means the text must yield no span at all (a
safe-list or negative case), and ``expect: fail`` lists exactly the codes the text must yield::

    - id: dob-numeric
      rule: date.numeric              # fail cases: at least one span must come from this rule
      input:
        text: "DOB 03/14/1961"
        expect_spans:                 # optional: each must be reported with exactly this text and type
          - {text: "03/14/1961", type: BIRTH_DATE_TIME}
        not_spans: ["24/30"]          # optional: no span may overlap an occurrence of these strings
        entities: [BIRTH_DATE_TIME]   # optional: restrict the analyzer to these types
      expect: fail
      violations: [PHI_BIRTH_DATE_TIME]

Coverage asks for at least one case per entry, and for files with AGE rules cases with ages 88, 89 and 90
(the Safe Harbor limit of 89, and one year either side).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from anonpsy.errors import AnonpsyError
from anonpsy.phi.analyzer import PHI_KINDS, Analyzer, load_phi_docs
from anonpsy.phi.recognizers import age_value
from anonpsy.phi.spans import Span
from anonpsy.phi.types import AGE_SAFE_HARBOR_LIMIT, EntityType
from anonpsy.rules.registry import Case, Doc, RuleKind, register

AGE_OVER_CODE = "PHI_AGE_OVER_89"
VIOLATION_CODES = frozenset({f"PHI_{t.value}" for t in EntityType} | {AGE_OVER_CODE})


def _ids(doc: Mapping[str, Any]) -> set[str]:
    rules = doc.get("rules", [])
    if not isinstance(rules, list):
        return set()
    return {e["id"] for e in rules if isinstance(e, dict) and isinstance(e.get("id"), str)}


@functools.lru_cache(maxsize=16)
def _analyzer_for(doc_json: str) -> Analyzer:
    doc = json.loads(doc_json)
    docs = [d for _, d in load_phi_docs()]
    ids = _ids(doc)
    best = -1
    best_overlap = 0
    for i, d in enumerate(docs):
        if d.get("kind") == doc.get("kind"):
            overlap = len(_ids(d) & ids)
            if overlap > best_overlap:
                best, best_overlap = i, overlap
    if best >= 0 and docs[best] == doc:
        return Analyzer.default()
    if best >= 0:
        docs[best] = doc
    else:
        docs.append(doc)
    return Analyzer.from_docs(docs)


def codes_for(spans: list[Span], text: str) -> list[str]:
    """Violation codes of a list of spans: ``PHI_<TYPE>``, with ``PHI_AGE_OVER_89`` for ages above 89."""
    codes = set()
    for s in spans:
        if s.type == EntityType.AGE:
            value = age_value(text[s.start : s.end])
            over = value is not None and value > AGE_SAFE_HARBOR_LIMIT
            codes.add(AGE_OVER_CODE if over else "PHI_AGE")
        else:
            codes.add(f"PHI_{s.type}")
    return sorted(codes)


def run_case(doc: Doc, case: Case) -> list[str]:
    """Run the analyzer on the case text and compare the identifier types found with the expectation."""
    raw = case.get("input")
    if not isinstance(raw, Mapping) or not isinstance(raw.get("text"), str):
        return ["case input must be a mapping with a 'text' string"]
    unknown_keys = set(raw) - {"text", "expect_spans", "not_spans", "entities"}
    if unknown_keys:
        return [
            f"case input has unknown key(s) {', '.join(sorted(unknown_keys))}; "
            "allowed: text, expect_spans, not_spans, entities"
        ]
    rule_id = case.get("rule")
    if rule_id is not None and rule_id not in _ids(doc):
        return [
            f"case names rule {rule_id!r}, which this file does not define; use an id from its rules list"
        ]
    try:
        analyzer = _analyzer_for(json.dumps(doc, sort_keys=True, default=str))
    except AnonpsyError as err:
        return [f"rules cannot be compiled: {err.one_line()}"]
    text: str = raw["text"]
    entities = raw.get("entities")
    spans = analyzer.analyze(text, entities=entities if isinstance(entities, list) else None)
    got = codes_for(spans, text)
    problems: list[str] = []
    expect = case.get("expect")
    if expect == "pass":
        if got:
            problems.append(f"expected no identifier but got {', '.join(got)}")
    elif expect == "fail":
        listed = case.get("violations") or []
        if not isinstance(listed, list) or not listed:
            return ["a fail case must list the expected codes under 'violations'"]
        bad = sorted(str(c) for c in listed if c not in VIOLATION_CODES)
        if bad:
            return [
                f"unknown violation code(s) {', '.join(bad)}; codes are PHI_<EntityType> or {AGE_OVER_CODE}"
            ]
        if sorted(set(listed)) != got:
            problems.append(
                f"expected {', '.join(sorted(set(listed)))} but got {', '.join(got) or 'nothing'}"
            )
        if (
            rule_id is not None
            and kind_of(doc) == "phi_patterns"
            and not any(s.recognizer == rule_id for s in spans)
        ):
            problems.append(f"no reported span comes from rule {rule_id}")
    else:
        return ["expect must be 'pass' or 'fail'"]
    for want in raw.get("expect_spans") or []:
        if not isinstance(want, Mapping) or not isinstance(want.get("text"), str):
            problems.append("each expect_spans item needs 'text' and 'type'")
            continue
        if not any(text[s.start : s.end] == want["text"] and s.type == want.get("type") for s in spans):
            near = sorted(
                {
                    s.type
                    for s in spans
                    if want["text"] in text[s.start : s.end] or text[s.start : s.end] in want["text"]
                }
            )
            problems.append(
                f"expected span #{raw['expect_spans'].index(want)} of type {want.get('type')} not reported"
                + (f" (overlapping types: {', '.join(near)})" if near else "")
            )
    for i, forbidden in enumerate(raw.get("not_spans") or []):
        pos = text.find(str(forbidden))
        while pos >= 0:
            end = pos + len(str(forbidden))
            hit = [s.type for s in spans if s.start < end and pos < s.end]
            if hit:
                problems.append(f"not_spans #{i} is covered by {', '.join(sorted(set(hit)))}")
                break
            pos = text.find(str(forbidden), end)
    return problems


def kind_of(doc: Doc) -> str:
    """The kind name of a rule document."""
    return str(doc.get("kind", ""))


def coverage(doc: Doc, cases: list[Case]) -> list[str]:
    """At least one case per entry; for AGE rules, cases at the Safe Harbor limit 89 and one year around."""
    problems: list[str] = []
    named = {c.get("rule") for c in cases}
    for rid in sorted(_ids(doc)):
        if rid not in named:
            problems.append(f"rule {rid} has no case; add one with 'rule: {rid}'")
    rules = doc.get("rules", [])
    has_age = isinstance(rules, list) and any(
        isinstance(e, dict) and e.get("entity_type") == EntityType.AGE for e in rules
    )
    if has_age:
        seen: set[int] = set()
        for c in cases:
            raw = c.get("input")
            if isinstance(raw, Mapping):
                for want in raw.get("expect_spans") or []:
                    if isinstance(want, Mapping) and want.get("type") == EntityType.AGE:
                        v = age_value(str(want.get("text", "")))
                        if v is not None:
                            seen.add(v)
        for v in (AGE_SAFE_HARBOR_LIMIT - 1, AGE_SAFE_HARBOR_LIMIT, AGE_SAFE_HARBOR_LIMIT + 1):
            if v not in seen:
                problems.append(f"no case with an AGE span of {v}; the over-89 limit needs 88, 89 and 90")
    return problems


for _name in PHI_KINDS:
    register(
        RuleKind(
            name=_name,
            run_case=run_case,
            coverage=coverage,
            description=f"PHI detection rules ({_name.removeprefix('phi_')})",
        )
    )
