"""Rule kind ``sections``: clinical note sections, sub-headers and field answers (``rules/sections/``).

Cases (``input``):

* ``{header: "REFERRAL QUESTIONS", section: referral}`` -- the section a header names (``section: null`` for
  none);
* ``{text: "...", sentences: [[section, text], ...]}`` -- how a text is cut into sentences and sections; an item
  may instead be a mapping ``{section, text, label?, question?, answer?}`` where ``label`` is the field label the
  sentence starts with, ``question`` the question it asks and ``answer`` negative, unknown, positive or null.
"""

from __future__ import annotations

from typing import Any

from anonpsy.rules.registry import Case, Doc, RuleKind, entries_from, register


def _table(doc: Doc) -> Any:
    from anonpsy.extract.sections import SectionTable

    key = "_compiled_sections"
    cached = doc.get(key)
    if cached is None:
        cached = SectionTable.from_doc({k: v for k, v in doc.items() if not k.startswith("_")})
        doc[key] = cached
    return cached


def _run_case(doc: Doc, case: Case) -> list[str]:
    from anonpsy.extract import sections as sec

    inp = case.get("input")
    if not isinstance(inp, dict):
        return ["BAD_CASE_INPUT: input must be a mapping"]
    table = _table(doc)
    found: list[str] = []
    detail = ""
    if "header" in inp:
        got = table.name(str(inp["header"]))
        if got != inp.get("section"):
            found.append("SECTION_MISMATCH")
            detail = f"got {got!r}"
    elif "text" in inp and isinstance(inp.get("sentences"), list):
        got_sents = sec.sentences(str(inp["text"]), table)
        want = inp["sentences"]
        if len(got_sents) != len(want):
            found.append("SENTENCE_COUNT")
        for s, w in zip(got_sents, want, strict=False):
            exp = w if isinstance(w, dict) else {"section": w[0], "text": w[1]}
            label = s.text[:s.label_end].rstrip(" ,:-\u2013\u2014") or None  # a colon or a dash sets it off
            got = {"section": s.section, "text": s.text, "label": label,
                   "question": s.text[s.label_end:s.question_end].strip() or None, "answer": s.answer}
            for k, v in exp.items():
                if got.get(k) != v:
                    found.append(f"{k.upper()}_MISMATCH")
        detail = "got " + "; ".join(f"[{s.section}] {s.text!r} label_end={s.label_end} q={s.question_end} "
                                    f"answer={s.answer}" for s in got_sents)
    else:
        return ["BAD_CASE_INPUT: needs 'header' and 'section', or 'text' and 'sentences'"]
    found = sorted(set(found))
    want_fail = case.get("expect") == "fail"
    if want_fail:
        wanted = set(case.get("violations") or [])
        return [] if wanted and wanted <= set(found) else [f"expected {sorted(wanted)}, {detail}"]
    return [f"{', '.join(found)}: {detail}"] if found else []


def _coverage(doc: Doc, cases: list[Case]) -> list[str]:
    covered = {c.get("rule") for c in cases} | {c.get("input", {}).get("section") for c in cases
                                                 if isinstance(c.get("input"), dict)}
    return [f"no case for section {s['id']!r}" for s in doc.get("sections", []) if s.get("id") not in covered]


register(
    RuleKind(
        name="sections",
        run_case=_run_case,
        entries=entries_from("sections"),
        coverage=_coverage,
        description="Clinical note sections, the sub-headers inside them and the answers a field may be given.",
    )
)
