"""Rule kinds of the extraction lexicons, the ConText rules and the stressor taxonomy.

Kinds: ``lexicon_symptoms``, ``lexicon_medications``, ``lexicon_therapies``, ``lexicon_emotions``,
``lexicon_demographic``, ``lexicon_mse``, ``context_rules``, ``stressors``. Every case is run against the rule file
being checked (not the installed rules), so an edit is tested before it ships.

Case inputs (``expect: pass`` means the observation matches; ``fail`` lists the mismatch codes):

* lexicon kinds: ``{text, expect_ids: [...], kind?}`` — ids found, in text order. ``kind`` picks the section
  of ``lexicon_demographic`` (occupation, ethnicity, family, sex) or of ``lexicon_mse`` (mse, mse_domain).
  Medication cases may add ``mentions: [{id, dose, route, frequency}]`` checked with
  :func:`anonpsy.lexicon.parse_medication`. Codes: ``MISSING_TERM``, ``UNEXPECTED_TERM``, ``MENTION_MISMATCH``.
* ``context_rules``: ``{text, target, kind?, expect: negated|possible|hypothetical|historical|current|family|other|
  affirmed (or a list), occurrence?, member?}``; ``kind`` (diagnosis, symptom, medication, therapy) enables the
  rules limited to that kind of concept. Code: ``CONTEXT_MISMATCH``, ``MEMBER_MISMATCH``.
* ``stressors``: ``{text, expect_category}`` (null for none) — code ``CATEGORY_MISMATCH``; or ``{category,
  age, expect_includes?, expect_excludes?}`` over the age-filtered alternatives — codes
  ``ALTERNATIVE_MISSING``, ``ALTERNATIVE_UNEXPECTED``.

PASS::

    - {id: denies-si, input: {text: "Denies SI.", target: SI, expect: negated}, expect: pass}

FAIL (a known wrong reading, kept as documentation)::

    - {id: lowercase-si, input: {text: "denies si", expect_ids: [suicidal_ideation]}, expect: fail,
       violations: [MISSING_TERM]}
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from anonpsy.extract.assertion.context import CONTEXT_LABELS, ContextEngine, ContextRules
from anonpsy.lexicon import (
    AgeBand,
    ConditionLexicon,
    MedicationLexicon,
    SitedIndex,
    StressorTaxonomy,
    TermIndex,
    TermKind,
    TermMatch,
    build_index,
    find_sited_conditions,
    list_alias_matches,
    medication_by_id,
    parse_medication,
    specs_for,
    stressor_alternatives,
)
from anonpsy.rules.registry import Case, Doc, RuleKind, entries_from, register

_CACHE: dict[tuple[int, str], tuple[Doc, Any]] = {}
_CACHE_MAX = 32


def _cached(doc: Doc, key: str, build: Any) -> Any:
    slot = (id(doc), key)
    hit = _CACHE.get(slot)
    if hit is not None and hit[0] is doc:
        return hit[1]
    if len(_CACHE) >= _CACHE_MAX:
        _CACHE.clear()
    value = build()
    _CACHE[slot] = (doc, value)
    return value


def _index(doc: Doc, kind: TermKind) -> TermIndex:
    result: TermIndex = _cached(doc, kind, lambda: build_index(specs_for(kind, doc)))
    return result


def _engine(doc: Doc) -> ContextEngine:
    result: ContextEngine = _cached(doc, "context", lambda: ContextEngine.from_doc(doc))
    return result


def _expectation(case: Case, found: list[str], detail: str) -> list[str]:
    found_set = sorted(set(found))
    if case["expect"] == "pass":
        return [] if not found_set else [f"expected pass, got violations {found_set} ({detail})"]
    want = sorted(set(case.get("violations", [])))
    if found_set == want:
        return []
    return [f"expected violations {want}, got {found_set or 'none'} ({detail})"]


def _bad_input(message: str) -> list[str]:
    return [f"malformed case input: {message}"]


# ----------------------------------------------------------------------------------------------------
# Lexicon kinds


def _lexicon_runner(default_kind: TermKind, kinds: tuple[TermKind, ...]) -> Any:
    def run_case(doc: Doc, case: Case) -> list[str]:
        inp = case.get("input")
        if not isinstance(inp, dict) or not isinstance(inp.get("text"), str):
            return _bad_input("needs 'text' (string) and 'expect_ids' (list)")
        kind = inp.get("kind", default_kind)
        if kind not in kinds:
            return _bad_input(f"'kind' must be one of {', '.join(kinds)}")
        expected = [str(x) for x in inp.get("expect_ids", [])]
        matches = _index(doc, kind).find(inp["text"])
        if kind == "medication":
            matches = list_alias_matches(inp["text"], matches, MedicationLexicon.model_validate(doc).rules)
        if kind == "condition":
            sited: SitedIndex = _cached(doc, "sited",
                                        lambda: SitedIndex.from_lexicon(ConditionLexicon.model_validate(doc)))
            matches = find_sited_conditions(inp["text"], matches, sited)
        got = [m.id for m in matches]
        missing = Counter(expected) - Counter(got)
        extra = Counter(got) - Counter(expected)
        found: list[str] = []
        if missing:
            found.append("MISSING_TERM")
        if extra:
            found.append("UNEXPECTED_TERM")
        if not missing and not extra and got != expected:
            found.append("UNEXPECTED_TERM")  # same ids, different order
        detail = f"found {got}"
        if "mentions" in inp:
            problems = _mention_problems(inp["text"], matches, inp["mentions"])
            if problems:
                found.append("MENTION_MISMATCH")
                detail += "; " + "; ".join(problems)
        return _expectation(case, found, detail)

    return run_case


def _mention_problems(text: str, matches: list[TermMatch], wanted: Any) -> list[str]:
    if not isinstance(wanted, list):
        return ["'mentions' must be a list"]
    out: list[str] = []
    known = medication_by_id()
    for i, want in enumerate(wanted):
        match = next((m for m in matches if m.id == want.get("id")), None)
        if match is None:
            out.append(f"mention {i}: no match for {want.get('id')!r}")
            continue
        if match.id not in known:
            out.append(f"mention {i}: {match.id!r} is not in the installed medication lexicon")
            continue
        got = parse_medication(text, match)
        for key in ("dose", "route", "frequency"):
            if key in want:
                value = getattr(got, key)
                value = value.value if hasattr(value, "value") else value
                if value != want[key]:
                    out.append(f"mention {i}: {key} {value!r} != {want[key]!r}")
    return out


def _lexicon_coverage(kinds: tuple[TermKind, ...]) -> Any:
    def coverage(doc: Doc, cases: list[Case]) -> list[str]:
        out: list[str] = []
        for kind in kinds:
            out += [f"{kind}: {c}" for c in _index(doc, kind).conflicts]
        kinds_cased = {
            c.get("input", {}).get("kind", kinds[0]) for c in cases if isinstance(c.get("input"), dict)
        }
        out += [f"no case exercises the {k} section" for k in kinds if k not in kinds_cased]
        if not any(
            c.get("input", {}).get("expect_ids") == [] for c in cases if isinstance(c.get("input"), dict)
        ):
            out.append("no negative case (expect_ids: []); add a look-alike text that must not match")
        return out

    return coverage


def _demographic_entries(doc: Doc) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for key in ("occupations", "ethnicities", "family_structure", "sex_cues"):
        value = doc.get(key, [])
        if isinstance(value, list):
            out += value
    return out


# ----------------------------------------------------------------------------------------------------
# Context rules


def _context_case(doc: Doc, case: Case) -> list[str]:
    inp = case.get("input")
    if not isinstance(inp, dict) or not all(isinstance(inp.get(k), str) for k in ("text", "target")):
        return _bad_input("needs 'text', 'target' and 'expect'")
    want_raw = inp.get("expect")
    want = {want_raw} if isinstance(want_raw, str) else set(want_raw or [])
    if not want or not want <= set(CONTEXT_LABELS):
        return _bad_input(f"'expect' must be one or more of {', '.join(CONTEXT_LABELS)}")
    text, target = inp["text"], inp["target"]
    occurrence = int(inp.get("occurrence", 1))
    start = -1
    for _ in range(occurrence):
        start = text.find(target, start + 1)
        if start < 0:
            return _bad_input("'target' does not occur in 'text' (often enough)")
    kind = inp.get("kind")
    if kind is not None and kind not in ("diagnosis", "symptom", "medication", "therapy"):
        return _bad_input("'kind' must be diagnosis, symptom, medication or therapy")
    result = _engine(doc).classify(text, start, start + len(target), kind)
    got = set(result.labels())
    found: list[str] = []
    if got != want:
        found.append("CONTEXT_MISMATCH")
    if "member" in inp and inp["member"] != result.family_member:
        found.append("MEMBER_MISMATCH")
    detail = f"got {sorted(got)}, member {result.family_member!r}, triggers {list(result.trigger_ids)}"
    return _expectation(case, found, detail)


def _context_coverage(doc: Doc, cases: list[Case]) -> list[str]:
    engine = _engine(doc)
    out = list(engine.conflicts)
    exercised: set[str] = set()
    for c in cases:
        inp = c.get("input")
        if not isinstance(inp, dict) or not isinstance(inp.get("text"), str):
            continue
        exercised |= {t.rule.id for t in engine.triggers(inp["text"], inp.get("kind"))}
    rules = ContextRules.model_validate(doc).rules
    out += [f"no case contains a trigger of rule {r.id!r}" for r in rules if r.id not in exercised]
    return out


# ----------------------------------------------------------------------------------------------------
# Stressors


def _stressor_case(doc: Doc, case: Case) -> list[str]:
    from anonpsy.perturb.contexts import stressor_category

    inp = case.get("input")
    if not isinstance(inp, dict):
        return _bad_input("needs {text, expect_category} or {category, age, expect_includes/excludes}")
    tax: StressorTaxonomy = _cached(doc, "stressors", lambda: StressorTaxonomy.model_validate(doc))
    if "text" in inp:
        got = stressor_category(str(inp["text"]), index=_index(doc, "stressor"))
        found = ["CATEGORY_MISMATCH"] if got != inp.get("expect_category") else []
        return _expectation(case, found, f"got {got!r}")
    if "category" in inp:
        age = inp.get("age")
        alts = set(stressor_alternatives(str(inp["category"]), age if isinstance(age, int) else None, tax))
        found = []
        if any(a not in alts for a in inp.get("expect_includes", [])):
            found.append("ALTERNATIVE_MISSING")
        if any(a in alts for a in inp.get("expect_excludes", [])):
            found.append("ALTERNATIVE_UNEXPECTED")
        return _expectation(case, found, f"{len(alts)} alternatives fit")
    return _bad_input("needs 'text' or 'category'")


def _stressor_coverage(doc: Doc, cases: list[Case]) -> list[str]:
    out = [f"stressor: {c}" for c in _index(doc, "stressor").conflicts]
    tax = StressorTaxonomy.model_validate(doc)
    detected = {c["input"].get("expect_category") for c in cases if isinstance(c.get("input"), dict)}
    out += [f"no detection case for category {c.id!r}" for c in tax.rules if c.id not in detected]
    ages = {
        c["input"].get("age") for c in cases if isinstance(c.get("input"), dict) and "category" in c["input"]
    }
    bands: dict[str, AgeBand] = {str(k): v for k, v in tax.age_bands.items()}
    for name, band in bands.items():
        for edge in (band.min, band.max):
            for age in (edge - 1, edge, edge + 1):
                if 0 <= age <= 120 and age not in ages:
                    out.append(f"age band {name}: no alternatives case at age {age} (boundary {edge})")
    for c in tax.rules:
        for a in c.alternatives:
            if a.age_bands is not None and not set(a.age_bands) <= set(bands):
                out.append(f"category {c.id!r}: alternative names an unknown age band")
        for name in bands:
            if not stressor_alternatives(c.id, bands[name].min, tax):
                out.append(f"category {c.id!r}: no alternative fits the {name} band; add one")
    return out


# ----------------------------------------------------------------------------------------------------

_LEXICON_KINDS: tuple[tuple[str, TermKind, tuple[TermKind, ...], str], ...] = (
    ("lexicon_symptoms", "symptom", ("symptom",), "Symptom headwords and their phrasings."),
    ("lexicon_medications", "medication", ("medication",), "Medications with class, brands and aliases."),
    ("lexicon_therapies", "therapy", ("therapy",), "Psychotherapies, procedures and psychosocial care."),
    ("lexicon_emotions", "emotion", ("emotion",), "Emotion words for STEB frames."),
    ("lexicon_conditions", "condition", ("condition",), "Medical comorbidities and their phrasings."),
)

for _name, _kind, _kinds, _desc in _LEXICON_KINDS:
    register(
        RuleKind(
            name=_name,
            run_case=_lexicon_runner(_kind, _kinds),
            coverage=_lexicon_coverage(_kinds),
            description=_desc,
        )
    )

register(
    RuleKind(
        name="lexicon_demographic",
        run_case=_lexicon_runner("occupation", ("occupation", "ethnicity", "family", "sex")),
        entries=_demographic_entries,
        coverage=_lexicon_coverage(("occupation", "ethnicity", "family", "sex")),
        description="Occupation, ethnicity, family-structure and sex cues.",
    )
)
def _mse_entries(doc: Doc) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for key in ("domains", "rules"):
        value = doc.get(key, [])
        if isinstance(value, list):
            out += value
    return out


register(
    RuleKind(
        name="lexicon_mse",
        run_case=_lexicon_runner("mse", ("mse", "mse_domain")),
        entries=_mse_entries,
        coverage=_lexicon_coverage(("mse", "mse_domain")),
        description="Mental status examination findings and the words that name each part.",
    )
)
register(
    RuleKind(
        name="context_rules",
        run_case=_context_case,
        coverage=_context_coverage,
        entries=entries_from("rules"),
        description="ConText negation / temporality / experiencer.",
    )
)
register(
    RuleKind(
        name="stressors",
        run_case=_stressor_case,
        coverage=_stressor_coverage,
        description="Life-event / stressor taxonomy with age-banded alternatives.",
    )
)
