"""Rule kinds of the RecordTwin general clinical vocabulary (``rules/twin/``).

Kinds: ``twin_icd10cm``, ``twin_medications``, ``twin_procedures``, ``twin_tests`` (what the RecordTwin table
reads beyond the psychiatric lexicons) and ``twin_lookalikes`` (when a lexicon term is read in its other sense).
Every case runs against the rule file being checked (ICD-10-CM forms are built from the tabular list that the
``simple-icd-10-cm`` package ships, with the file's rules).

Case inputs:

* vocabulary kinds: ``{text, expect_ids: [...]}`` -- the entry ids found in ``text`` by that file alone, in text
  order (ICD-10-CM ids are category codes in lower case). Codes: ``MISSING_TERM``, ``UNEXPECTED_TERM``.
* ``twin_lookalikes``: ``{text, target, occurrence?, expect: concept|other_sense}`` for the rule named by the
  case's ``rule``. Code: ``SENSE_MISMATCH``.

PASS::

    - {id: htn, rule: i10, input: {text: "History of HTN.", expect_ids: [i10]}, expect: pass}
    - {id: od-eye, rule: od_right_eye, input: {text: "20/40 OD", target: OD, expect: other_sense}, expect: pass}

Coverage: each file needs a negative case (``expect_ids: []``); drug, procedure and test entries must name a
known class, system or category; a drug or test form that the project's lexicons already have is a problem (they
are read first and would shadow it); every look-alike rule needs a case of each sense.
"""

from __future__ import annotations

import importlib.util
from collections import Counter
from typing import Any

from anonpsy.rules.registry import Case, CaseSkipped, Doc, RuleKind, register

_CACHE: dict[tuple[int, str], tuple[Doc, Any]] = {}


def _cached(doc: Doc, key: str, build: Any) -> Any:
    slot = (id(doc), key)
    hit = _CACHE.get(slot)
    if hit is not None and hit[0] is doc:
        return hit[1]
    if len(_CACHE) > 16:
        _CACHE.clear()
    value = build()
    _CACHE[slot] = (doc, value)
    return value


def _missing_extra() -> str | None:
    for mod, pkg in (("ahocorasick", "pyahocorasick"), ("simple_icd_10_cm", "simple-icd-10-cm")):
        if importlib.util.find_spec(mod) is None:
            return f"needs {pkg} (pip install 'anonpsy[twin]')"
    return None


def _matcher(doc: Doc, kind: str) -> Any:
    from anonpsy.twin import vocabulary as v

    def build() -> Any:
        vocab = v.Vocabulary()
        if kind == "twin_icd10cm":
            v._icd(doc, vocab)
        elif kind == "twin_medications":
            v._medications(doc, vocab, v.project_forms("medication"))
        elif kind == "twin_procedures":
            v._procedures(doc, vocab)
        else:
            v._tests(doc, vocab, v.project_forms("test"))
        return v.PhraseMatcher(vocab.entries)

    return _cached(doc, kind, build)


def _short(concept: str) -> str:
    x = concept.split(":", 1)[1]
    return x.lower() if x[:1].isupper() else x


def _vocab_runner(kind: str) -> Any:
    def run_case(doc: Doc, case: Case) -> list[str]:
        inp = case.get("input")
        if not isinstance(inp, dict) or not isinstance(inp.get("text"), str):
            return ["malformed case input: needs 'text' (string) and 'expect_ids' (list)"]
        missing = _missing_extra()
        if missing:
            raise CaseSkipped(missing)
        got = [_short(h.concept) for h in _matcher(doc, kind).find(inp["text"])]
        want = [str(x) for x in inp.get("expect_ids", [])]
        found: list[str] = []
        if Counter(want) - Counter(got):
            found.append("MISSING_TERM")
        if Counter(got) - Counter(want) or (not found and got != want):
            found.append("UNEXPECTED_TERM")
        return _expectation(case, found, f"found {got}")

    return run_case


def _expectation(case: Case, found: list[str], detail: str) -> list[str]:
    if case.get("expect") == "pass":
        return [] if not found else [f"expected pass, got violations {sorted(set(found))} ({detail})"]
    want = sorted(set(case.get("violations", [])))
    return [] if sorted(set(found)) == want else [f"expected violations {want}, got {sorted(set(found)) or 'none'} "
                                                  f"({detail})"]


def _vocab_coverage(kind: str) -> Any:
    def coverage(doc: Doc, cases: list[Case]) -> list[str]:
        out: list[str] = []
        if not any(isinstance(c.get("input"), dict) and c["input"].get("expect_ids") == [] for c in cases):
            out.append("no negative case (expect_ids: []); add a look-alike text that must not match")
        parents = {"twin_medications": ("class", "classes"), "twin_procedures": ("system", "systems"),
                   "twin_tests": ("category", "categories")}.get(kind)
        if parents is not None:
            key, table = parents
            known = {x["id"] for x in doc.get(table, [])} | set(doc.get("project_classes") or {})
            out += [f"{r['id']}: unknown {key} {r.get(key)!r}" for r in doc.get("rules", []) if r.get(key) not in known]
            if kind == "twin_medications":
                groups = {g["id"] for g in doc.get("groups", [])}
                out += [f"class {c['id']}: unknown group {c.get('group')!r}" for c in doc.get("classes", [])
                        if c.get("group") not in groups]
        if kind in ("twin_medications", "twin_tests") and _missing_extra() is None:
            from anonpsy.twin import vocabulary as v

            taken = v.project_forms("medication" if kind == "twin_medications" else "test")
            for r in doc.get("rules", []):
                forms = [*(r.get("surfaces") or []), *(r.get("brands") or []), *(r.get("aliases") or [])]
                if kind == "twin_medications":
                    forms.append(r["id"].replace("_", " "))
                dup = sorted({f for f in forms if v._key(f) in taken})
                if dup:
                    out.append(f"{r['id']}: {', '.join(dup)} already in the project's lexicon (read first); remove")
        if _missing_extra() is None:
            out += [f"form {c}" for c in _matcher(doc, kind).conflicts]
        return out

    return coverage


def _lookalike_case(doc: Doc, case: Case) -> list[str]:
    from anonpsy.twin.vocabulary import Lookalikes

    inp = case.get("input")
    if not isinstance(inp, dict) or not all(isinstance(inp.get(k), str) for k in ("text", "target", "expect")):
        return ["malformed case input: needs 'text', 'target' and 'expect' (concept or other_sense)"]
    if inp["expect"] not in ("concept", "other_sense"):
        return ["malformed case input: 'expect' must be concept or other_sense"]
    rules = _cached(doc, "lookalikes", lambda: Lookalikes.from_doc(doc))
    rule = next((r for rs in rules.by_concept.values() for r in rs if r.id == case.get("rule")), None)
    if rule is None:
        return [f"malformed case: no look-alike rule {case.get('rule')!r}"]
    text, target = inp["text"], inp["target"]
    start = -1
    for _ in range(int(inp.get("occurrence", 1))):
        start = text.find(target, start + 1)
        if start < 0:
            return ["malformed case input: 'target' does not occur in 'text' (often enough)"]
    end = start + len(target)
    in_forms = target.casefold() in rule.forms
    got = "other_sense" if in_forms and rule.other_sense(text, start, end) else "concept"
    found = [] if got == inp["expect"] else ["SENSE_MISMATCH"]
    return _expectation(case, found, f"read as {got}")


def _lookalike_coverage(doc: Doc, cases: list[Case]) -> list[str]:
    out: list[str] = []
    for r in doc.get("rules", []):
        senses = {c["input"].get("expect") for c in cases if c.get("rule") == r.get("id")
                  and isinstance(c.get("input"), dict)}
        for s in ("concept", "other_sense"):
            if s not in senses:
                out.append(f"look-alike {r.get('id')!r} has no case read as {s}")
    return out


for _kind, _desc in (("twin_icd10cm", "ICD-10-CM problems and findings (RecordTwin)"),
                     ("twin_medications", "General-medicine drugs with classes and ATC groups (RecordTwin)"),
                     ("twin_procedures", "Procedures with body systems (RecordTwin)"),
                     ("twin_tests", "Imaging, physiological tests and laboratory panels (RecordTwin)")):
    register(RuleKind(_kind, _vocab_runner(_kind), coverage=_vocab_coverage(_kind), description=_desc))
register(RuleKind("twin_lookalikes", _lookalike_case, coverage=_lookalike_coverage,
                  description="Lexicon terms read in their other sense in general notes (RecordTwin)"))
