"""Rule kind ``audio_cues`` (``rules/audio/cues.yaml``): spoken context of identifiers.

A case is a short transcript with the region under test in square brackets; ``[]`` is a gap (speech no word
accounts for), ``[words]`` are recognised words that stand in an identifier's place, ``|`` is a pause. Words are
timed 0.3 s apart, a pause adds 0.6 s. ``expect_type`` is the identifier type the region must get, or null
when it must stay unmarked. Codes: ``CUE_MISSED`` (nothing marked), ``CUE_TYPE_MISMATCH``,
``CUE_SPAN_MISMATCH`` (marked words differ from the bracketed ones), ``CUE_UNEXPECTED``.

PASS::

    - {id: name-gap, rule: audio.person.name-intro, input: {text: "my name is [] and I", expect_type: PERSON},
       expect: pass}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from anonpsy.rules.registry import Case, Doc, RuleKind, register


@dataclass(frozen=True)
class _W:
    text: str
    start: float
    end: float


def parse_case_text(text: str) -> tuple[list[_W], int, int]:
    """Timed words of a case and the bracketed region ``[first, last)`` (first == last for a gap)."""
    words: list[_W] = []
    t = 0.0
    first = last = -1
    for raw in text.replace("[", " [ ").replace("]", " ] ").split():
        if raw == "|":
            t += 0.6
        elif raw == "[":
            first = len(words)
        elif raw == "]":
            last = len(words)
        else:
            words.append(_W(raw, t, t + 0.25))
            t += 0.3
    if first < 0 or last < first:
        raise ValueError("case text needs one [region]")
    return words, first, last


def _observe(doc: Doc, case_input: dict[str, Any]) -> list[str]:
    from anonpsy.audio.cues import CueSet

    cues = CueSet.from_doc(doc)
    words, first, last = parse_case_text(str(case_input["text"]))
    expected = case_input.get("expect_type")
    texts = [w.text for w in words]
    if first == last:
        rule = cues.classify_gap(texts[:first], texts[first:])
        got = rule.type if rule else None
        if expected is None:
            return ["CUE_UNEXPECTED"] if got else []
        if got is None:
            return ["CUE_MISSED"]
        return [] if got == expected else ["CUE_TYPE_MISMATCH"]
    matches = cues.spans(words) + cues.number_spans(texts)
    hits = [m for m in matches if m.first < last and first <= m.last]
    if expected is None:
        return ["CUE_UNEXPECTED"] if hits else []
    if not hits:
        return ["CUE_MISSED"]
    codes = []
    if not any(m.rule.type == expected for m in hits):
        codes.append("CUE_TYPE_MISMATCH")
    covered = {k for m in hits for k in range(m.first, m.last + 1)}
    if covered != set(range(first, last)):
        codes.append("CUE_SPAN_MISMATCH")
    return codes


def run_case(doc: Doc, case: Case) -> list[str]:
    """Problems of one case (empty when it behaves as written)."""
    try:
        observed = sorted(_observe(doc, dict(case.get("input") or {})))
    except (ValueError, KeyError) as exc:
        return [f"case input is malformed: {exc}"]
    expect = case.get("expect")
    wanted = sorted(case.get("violations") or [])
    if expect == "pass":
        return [f"expected no violations, got {observed}"] if observed else []
    if observed != wanted:
        return [f"expected violations {wanted}, got {observed}"]
    return []


def coverage(doc: Doc, cases: list[Case]) -> list[str]:
    """Every rule needs a case, and every rule with ``before`` cues a case where the region stays unmarked."""
    problems = []
    rules = [r for r in doc.get("rules", []) if isinstance(r, dict)]
    by_rule: dict[str, list[Case]] = {}
    for c in cases:
        by_rule.setdefault(str(c.get("rule")), []).append(c)
    for r in rules:
        rid = str(r.get("id"))
        mine = by_rule.get(rid, [])
        if not mine:
            problems.append(f"rule {rid} has no case")
    if not any((c.get("input") or {}).get("expect_type") is None for c in cases):
        problems.append("no case where a region must stay unmarked (expect_type: null)")
    return problems


register(
    RuleKind(
        "audio_cues",
        run_case,
        coverage=coverage,
        description="Spoken context of identifiers for audio de-identification",
    )
)
