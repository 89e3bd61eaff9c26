"""Rule kinds of the small tables: demographics, visit scaffold, treatments, graph pairs, sex-specific terms.

Each kind has one rule file and runs its cases through the helpers of :mod:`anonpsy.rules.tables`, against the
file being checked (not the installed one). The ``input`` of a case, per kind:

* ``age_offsets``: ``{age, offset}`` -> :func:`~anonpsy.rules.tables.age_offset_allowed`
* ``sex_reassignment``: ``{from, to, fixed}`` -> :func:`~anonpsy.rules.tables.sex_change_allowed`
* ``ethnicity``: ``{label, sex?}`` -> :func:`~anonpsy.rules.tables.ethnicity_allowed`
* ``occupations``: ``{age, occupation, support_level?}`` -> :func:`~anonpsy.rules.tables.occupation_allowed`
* ``visit_scaffold``: ``{before, after}`` -> ``visit_changes_allowed``; ``{safety_flags, urgency}`` ->
  ``urgency_violations``
* ``routes``: ``{text, route}`` -> :func:`~anonpsy.rules.tables.parse_route` must give ``route`` (null: none);
  ROUTE_MISMATCH / ROUTE_UNPARSED otherwise
* ``medication_classes``: ``{class, rule?, chapter?, symptom?}`` -> ``treatment_indicated``
* ``edge_pairs``: ``{type, source, target}`` -> ``edge_pair_violations``; ``{text, cues}`` ->
  ``find_etiologic_cues`` must give exactly ``cues`` (CUE_MISMATCH otherwise)
* ``sex_specific``: ``{text, sex, age?}`` -> ``sex_term_violations``; ``{text, age?, fixed}`` ->
  ``sex_fixed_by_terms`` (FIXED_SEX_MISMATCH); ``{text, to_sex, expected}`` -> ``swap_sex_terms``
  (SWAP_MISMATCH)

Coverage: every numeric threshold (age-band edges, offset bounds, forbidden boundaries, floor and maximum
age, item age limits in occupation pools, support-level skill caps, minimum ages of sex-fixing terms) needs
cases at the threshold and one step either side.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from pydantic import ValidationError

from anonpsy.rules import tables as T
from anonpsy.rules.registry import Case, Doc, RuleKind, register

_M = TypeVar("_M", bound=T.RuleDoc)

_PARSED: dict[tuple[int, str], tuple[Doc, Any]] = {}


def _parse(model: type[_M], doc: Doc) -> _M:
    """The typed model of ``doc``, cached while the same dict object is being checked (the checker never
    mutates a document between cases)."""
    key = (id(doc), model.__name__)
    hit = _PARSED.get(key)
    if hit is not None and hit[0] is doc:
        parsed: _M = hit[1]
        return parsed
    value = model.model_validate(doc)
    if len(_PARSED) > 64:
        _PARSED.clear()
    _PARSED[key] = (doc, value)
    return value


def _expect(case: Case, found: Iterable[str]) -> list[str]:
    found_set = sorted(set(found))
    if case.get("expect") == "pass":
        return [] if not found_set else [f"expected pass, got violations {found_set}"]
    want = sorted(set(case.get("violations") or []))
    return [] if found_set == want else [f"expected violations {want}, got {found_set or 'none'}"]


def _runner(
    model: type[_M], check: Callable[[_M, dict[str, Any]], list[str]]
) -> Callable[[Doc, Case], list[str]]:
    def run_case(doc: Doc, case: Case) -> list[str]:
        try:
            table = _parse(model, doc)
        except ValidationError as exc:
            return [f"rule file does not load: {exc.error_count()} validation error(s)"]
        inp = case.get("input")
        if not isinstance(inp, dict):
            return ["input must be a mapping"]
        try:
            found = check(table, inp)
        except (KeyError, TypeError, ValueError) as exc:
            return [f"input not understood ({type(exc).__name__}); see the kind's description of input"]
        return _expect(case, found)

    return run_case


def _entries(*keys: str) -> Callable[[Doc], list[dict[str, Any]]]:
    def entries(doc: Doc) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for key in keys:
            value = doc.get(key)
            if isinstance(value, list):
                out += [e for e in value if isinstance(e, dict)]
        return out

    return entries


def _ints(cases: list[Case], *keys: str) -> list[tuple[Case, dict[str, Any]]]:
    out = []
    for c in cases:
        inp = c.get("input")
        if isinstance(inp, dict) and all(isinstance(inp.get(k), int) for k in keys):
            out.append((c, inp))
    return out


def _missing(kind: str, what: str, value: int, have: set[int], floor: int | None = None) -> list[str]:
    want = [v for v in (value - 1, value, value + 1) if floor is None or v >= floor]
    lacking = [v for v in want if v not in have]
    if not lacking:
        return []
    return [
        f"{kind}: threshold {what} = {value} needs cases at {want}; missing {lacking}"
        " (add a case at the boundary and one step either side)"
    ]


# -- age_offsets -----------------------------------------------------------------------------------


def _age_check(t: T.AgeOffsets, inp: dict[str, Any]) -> list[str]:
    return T.age_offset_allowed(int(inp["age"]), int(inp["offset"]), t)


def _age_coverage(doc: Doc, cases: list[Case]) -> list[str]:
    try:
        t = _parse(T.AgeOffsets, doc)
    except ValidationError:
        return []
    rows = _ints(cases, "age", "offset")
    ages = {i["age"] for _, i in rows}
    results = {i["age"] + i["offset"] for _, i in rows}
    out: list[str] = []
    for band in t.rules:
        out += _missing("age_offsets", f"{band.id}.min_age", band.min_age, ages)
        out += _missing("age_offsets", f"{band.id}.max_age", band.max_age, ages)
        in_band = {abs(i["offset"]) for _, i in rows if band.min_age <= i["age"] <= band.max_age}
        out += _missing("age_offsets", f"{band.id}.max_offset (|offset|)", band.max_offset, in_band, floor=0)
    for b in t.boundaries:
        out += _missing("age_offsets", f"{b.id}.age (age + offset)", b.age, results)
    out += _missing("age_offsets", "floor_age (age + offset)", t.floor_age, results)
    out += _missing("age_offsets", "max_age (age + offset)", t.max_age, results)
    return out


# -- sex_reassignment ------------------------------------------------------------------------------


def _sex_check(t: T.SexReassignment, inp: dict[str, Any]) -> list[str]:
    return T.sex_change_allowed(str(inp["from"]), str(inp["to"]), inp.get("fixed"))


# -- ethnicity -------------------------------------------------------------------------------------


def _ethnicity_check(t: T.EthnicityTable, inp: dict[str, Any]) -> list[str]:
    sex = inp.get("sex")
    return T.ethnicity_allowed(str(inp["label"]), None if sex is None else str(sex), t)


# -- occupations -----------------------------------------------------------------------------------


def _occupation_check(t: T.OccupationTable, inp: dict[str, Any]) -> list[str]:
    level = inp.get("support_level")
    like = inp.get("like")
    return T.occupation_allowed(int(inp["age"]), str(inp["occupation"]), level, t, None if like is None else str(like))


def _occupation_coverage(doc: Doc, cases: list[Case]) -> list[str]:
    try:
        t = _parse(T.OccupationTable, doc)
    except ValidationError:
        return []
    rows = [(c, i) for c, i in _ints(cases, "age") if isinstance(i.get("occupation"), str)]
    ages = {i["age"] for _, i in rows}
    out: list[str] = []
    for pool in t.rules:
        out += _missing("occupations", f"{pool.id}.min_age", pool.min_age, ages)
        out += _missing("occupations", f"{pool.id}.max_age", pool.max_age, ages)
        thresholds: dict[tuple[str, int], set[str]] = {}
        for occ in pool.occupations:
            if occ.min_age is not None and occ.min_age > pool.min_age:
                thresholds.setdefault(("min_age", occ.min_age), set()).update(occ.names())
            if occ.max_age is not None and occ.max_age < pool.max_age:
                thresholds.setdefault(("max_age", occ.max_age), set()).update(occ.names())
        for (which, value), names in sorted(thresholds.items()):
            have = {i["age"] for _, i in rows if T.occupation_key(i["occupation"]) in names}
            out += _missing("occupations", f"{pool.id} occupations' {which}", value, have)
    for level in t.support_levels:
        if level.max_skill_level is None:
            continue
        skills: set[int] = set()
        for _, i in rows:
            if i.get("support_level") != level.id:
                continue
            found = t.any_pool_index.get(T.occupation_key(i["occupation"]))
            if found is not None:
                skills.add(found.skill_level)
        out += _missing("occupations", f"{level.id}.max_skill_level", level.max_skill_level, skills)
    return out


# -- visit_scaffold --------------------------------------------------------------------------------


def _visit_check(t: T.VisitScaffold, inp: dict[str, Any]) -> list[str]:
    if "before" in inp or "after" in inp:
        return T.visit_changes_allowed(inp.get("before") or {}, inp.get("after") or {}, t)
    return T.urgency_violations([str(f) for f in inp["safety_flags"]], str(inp["urgency"]), t)


# -- routes ----------------------------------------------------------------------------------------


def _route_check(t: T.RouteTable, inp: dict[str, Any]) -> list[str]:
    want = inp["route"]
    got = T.parse_route(str(inp["text"]), t)
    if got is None:
        return [] if want is None else ["ROUTE_UNPARSED"]
    return [] if want is not None and got.value == want else ["ROUTE_MISMATCH"]


# -- medication_classes ----------------------------------------------------------------------------


def _class_check(t: T.MedicationClassTable, inp: dict[str, Any]) -> list[str]:
    return T.treatment_indicated(
        str(inp["class"]),
        rule_id=inp.get("rule"),
        chapter=inp.get("chapter"),
        symptom=inp.get("symptom"),
        table=t,
    )


# -- edge_pairs ------------------------------------------------------------------------------------


def _edge_check(t: T.EdgePairTable, inp: dict[str, Any]) -> list[str]:
    if "text" in inp:
        found = [m.cue_id for m in T.find_etiologic_cues(str(inp["text"]), t)]
        return [] if found == list(inp["cues"]) else ["CUE_MISMATCH"]
    return T.edge_pair_violations(str(inp["type"]), str(inp["source"]), str(inp["target"]), t)


# -- sex_specific ----------------------------------------------------------------------------------


def _sex_specific_check(t: T.SexSpecificTable, inp: dict[str, Any]) -> list[str]:
    text = str(inp["text"])
    age = inp.get("age")
    if "to_sex" in inp:
        return [] if T.swap_sex_terms(text, str(inp["to_sex"]), t) == inp["expected"] else ["SWAP_MISMATCH"]
    if "fixed" in inp:
        return [] if T.sex_fixed_by_terms(text, age, t) == inp["fixed"] else ["FIXED_SEX_MISMATCH"]
    return T.sex_term_violations(text, str(inp["sex"]), age, t)


def _sex_specific_coverage(doc: Doc, cases: list[Case]) -> list[str]:
    try:
        t = _parse(T.SexSpecificTable, doc)
    except ValidationError:
        return []
    rows = [(c, i) for c, i in _ints(cases, "age") if isinstance(i.get("text"), str) and "to_sex" not in i]
    out: list[str] = []
    for term, pat in t.term_patterns:
        if term.min_age is None:
            continue
        have = {i["age"] for _, i in rows if pat.search(i["text"])}
        out += _missing("sex_specific", f"{term.id}.min_age", term.min_age, have)
    return out


register(
    RuleKind(
        name="age_offsets",
        run_case=_runner(T.AgeOffsets, _age_check),
        entries=_entries("rules", "boundaries"),
        coverage=_age_coverage,
        description="Age bands with maximum age offsets and boundaries a perturbed age must not cross.",
    )
)
register(
    RuleKind(
        name="sex_reassignment",
        run_case=_runner(T.SexReassignment, _sex_check),
        description="Weights for keeping or switching recorded sex; unknown stays unknown.",
    )
)
register(
    RuleKind(
        name="ethnicity",
        run_case=_runner(T.EthnicityTable, _ethnicity_check),
        description="Weighted pool of ethnicity descriptors grouped by OMB category.",
    )
)
register(
    RuleKind(
        name="occupations",
        run_case=_runner(T.OccupationTable, _occupation_check),
        entries=_entries("rules", "support_levels"),
        coverage=_occupation_coverage,
        description="Occupation pools by age band; support-level limits for neurodevelopmental disorders.",
    )
)
register(
    RuleKind(
        name="visit_scaffold",
        run_case=_runner(T.VisitScaffold, _visit_check),
        entries=_entries("immutable", "rules"),
        description="Immutable visit-event fields, their vocabularies and the safety-flag urgency map.",
    )
)
register(
    RuleKind(
        name="routes",
        run_case=_runner(T.RouteTable, _route_check),
        description="Route vocabulary and the spellings that name each route.",
    )
)
register(
    RuleKind(
        name="medication_classes",
        run_case=_runner(T.MedicationClassTable, _class_check),
        description="Medication classes, whether psychotropic, and the diagnoses and symptoms they treat.",
    )
)
register(
    RuleKind(
        name="edge_pairs",
        run_case=_runner(T.EdgePairTable, _edge_check),
        entries=_entries("rules", "etiologic_cues"),
        description="Permitted node-type pairs per relation type, and etiologic cues for INDUCES edges.",
    )
)
register(
    RuleKind(
        name="sex_specific",
        run_case=_runner(T.SexSpecificTable, _sex_specific_check),
        entries=_entries("terms", "contextual", "pairs"),
        coverage=_sex_specific_coverage,
        description="Terms that fix the patient's sex, and the words swapped when sex changes.",
    )
)
