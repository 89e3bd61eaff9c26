"""Rule kind ``dsm``: DSM-5-TR diagnosis constraints (``rules/dsm/<chapter>.yaml``).

A case names one rule and gives the facts of one diagnosis under ``input``, with the field names of
:class:`anonpsy.rules.dsm.DiagnosisFacts`, or a text whose mentions of the rule's names are checked
(``input: {text, names: true|false, section?}``: the text names the diagnosis, or only holds a look-alike
listed under the rule's ``excludes``)::

    - id: adhd-onset-12
      rule: adhd
      input: {onset_age: 12}
      expect: fail
      violations: [DSM_ONSET_TOO_LATE]

Coverage asks, for every numeric threshold of every rule, for cases at the boundary value and one step either
side (1 year for ages, 1 day for durations), for sex-specific rules a case of each sex, for sex-fixing
specifiers a case with each sex, and for every rule at least one case.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from anonpsy.rules.dsm import (
    VIOLATION_CODES,
    DsmRule,
    check_diagnosis,
    facts_from_mapping,
    normalize_label,
)
from anonpsy.rules.registry import Case, Doc, RuleKind, register

ONE_YEAR = 1
ONE_DAY = 1


def _entries(doc: Doc) -> dict[str, Any]:
    rules = doc.get("rules", [])
    if not isinstance(rules, list):
        return {}
    return {e["id"]: e for e in rules if isinstance(e, dict) and isinstance(e.get("id"), str)}


def run_case(doc: Doc, case: Case) -> list[str]:
    """Run one case: check the facts in ``input`` against rule ``rule`` and compare violation codes."""
    rule_id = case.get("rule")
    entry = _entries(doc).get(rule_id) if isinstance(rule_id, str) else None
    if entry is None:
        return [
            f"case names rule {rule_id!r}, which this file does not define; use an id from its rules list"
        ]
    try:
        rule = DsmRule.model_validate(entry)
    except ValidationError as err:
        return [f"rule {rule_id} is invalid ({err.error_count()} error(s)); fix the rule file first"]
    raw = case.get("input", {})
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        return ["case input must be a mapping of diagnosis facts"]
    if "text" in raw:
        return _run_text_case(str(rule_id), raw, case.get("expect"))
    try:
        facts = facts_from_mapping(raw)
    except ValueError as err:
        return [f"case input is invalid: {err}"]
    got = sorted({v.code for v in check_diagnosis(rule, facts)})
    expect = case.get("expect")
    if expect == "pass":
        if got:
            return [f"expected pass but got {', '.join(got)}"]
        return []
    if expect == "fail":
        listed = case.get("violations") or []
        if not isinstance(listed, list) or not listed:
            return ["a fail case must list the expected violation codes under 'violations'"]
        bad = sorted(str(c) for c in listed if c not in VIOLATION_CODES)
        if bad:
            return [
                f"unknown violation code(s) {', '.join(bad)}; known: {', '.join(sorted(VIOLATION_CODES))}"
            ]
        want = sorted({str(c) for c in listed})
        if got != want:
            shown = ", ".join(got) if got else "no violation"
            return [f"expected {', '.join(want)} but got {shown}"]
        return []
    return [f"expect must be pass or fail, not {expect!r}"]


def _run_text_case(rule_id: str, raw: Mapping[str, Any], expect: Any) -> list[str]:
    """A mention case, ``input: {text, names, section?}``: the text names rule ``rule_id`` (``names: true``, the
    default) or holds a look-alike of its names that is not this diagnosis (``names: false``)."""
    from anonpsy.extract.mentions.diagnoses import find_diagnoses

    if expect != "pass":
        return ["a text case expects pass; say under input.names whether the text names the rule"]
    text, section = raw.get("text"), raw.get("section")
    if not isinstance(text, str) or (section is not None and not isinstance(section, str)):
        return ["input.text (and input.section, when given) must be strings"]
    named = any(r == rule_id for _s, _e, r in find_diagnoses(text, section))
    want = bool(raw.get("names", True))
    if named != want:
        return [f"the text {'does not name' if want else 'names'} {rule_id}"]
    return []


# ------------------------------------------------------------------------------------------------------------
# Coverage


@dataclass(frozen=True)
class _Threshold:
    """A numeric threshold: cases must give ``measure`` the values value-1, value, value+1."""

    label: str
    value: float
    measure: Callable[[Mapping[str, Any]], float | None]
    step: int


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v)


def _field(name: str) -> Callable[[Mapping[str, Any]], float | None]:
    def measure(inp: Mapping[str, Any]) -> float | None:
        return _num(inp.get(name))

    return measure


def _field_when(
    name: str, cond: Callable[[Mapping[str, Any]], bool]
) -> Callable[[Mapping[str, Any]], float | None]:
    def measure(inp: Mapping[str, Any]) -> float | None:
        return _num(inp.get(name)) if cond(inp) else None

    return measure


def _age_in(lo: int | None, hi: int | None) -> Callable[[Mapping[str, Any]], bool]:
    def cond(inp: Mapping[str, Any]) -> bool:
        age = _num(inp.get("present_age"))
        if age is None:
            return False
        return (lo is None or age >= lo) and (hi is None or age < hi)

    return cond


def _age_gap(inp: Mapping[str, Any]) -> float | None:
    age, other = _num(inp.get("present_age")), _num(inp.get("other_party_age"))
    return None if age is None or other is None else age - other


def _history(rule_id: str) -> Callable[[Mapping[str, Any]], float | None]:
    def measure(inp: Mapping[str, Any]) -> float | None:
        hist = inp.get("history")
        return _num(hist.get(rule_id)) if isinstance(hist, Mapping) else None

    return measure


def thresholds(rule: DsmRule) -> list[_Threshold]:
    """Every numeric threshold of a rule, with how to read it from a case input."""
    out: list[_Threshold] = []
    pa = rule.present_age
    if pa is not None:
        if pa.min is not None:
            out.append(_Threshold("present_age min", pa.min, _field("present_age"), ONE_YEAR))
        if pa.max is not None:
            out.append(_Threshold("present_age max", pa.max, _field("present_age"), ONE_YEAR))
        for i, exc in enumerate(pa.exceptions):
            if exc.min is not None:
                out.append(
                    _Threshold(f"present_age exception {i} min", exc.min, _field("present_age"), ONE_YEAR)
                )
            if exc.min_duration_days is not None:
                below = _age_in(exc.min, pa.min)
                out.append(
                    _Threshold(
                        f"present_age exception {i} min_duration_days (with present age below {pa.min})",
                        exc.min_duration_days,
                        _field_when("duration_days", below),
                        ONE_DAY,
                    )
                )
    oa = rule.onset_age
    if oa is not None:
        if oa.min is not None:
            out.append(_Threshold("onset_age min", oa.min, _field("onset_age"), ONE_YEAR))
        if oa.max_exclusive is not None:
            out.append(_Threshold("onset_age max_exclusive", oa.max_exclusive, _field("onset_age"), ONE_YEAR))
    if rule.duration is not None:
        d = rule.duration
        if d.min_days is not None:
            out.append(_Threshold("duration min_days", d.min_days, _field("duration_days"), ONE_DAY))
        if d.max_days_exclusive is not None:
            out.append(
                _Threshold(
                    "duration max_days_exclusive", d.max_days_exclusive, _field("duration_days"), ONE_DAY
                )
            )
    lower: int | None = None
    for i, band in enumerate(rule.duration_by_age):
        in_band = _age_in(lower, band.age_max_exclusive)
        where = f"duration_by_age[{i}] (present age {lower or 0}-{band.age_max_exclusive or 'up'})"
        if band.age_max_exclusive is not None:
            out.append(
                _Threshold(
                    f"duration_by_age[{i}] age_max_exclusive",
                    band.age_max_exclusive,
                    _field_when("present_age", lambda inp: "duration_days" in inp),
                    ONE_YEAR,
                )
            )
        if band.min_days is not None:
            out.append(
                _Threshold(f"{where} min_days", band.min_days, _field_when("duration_days", in_band), ONE_DAY)
            )
        if band.max_days_exclusive is not None:
            out.append(
                _Threshold(
                    f"{where} max_days_exclusive",
                    band.max_days_exclusive,
                    _field_when("duration_days", in_band),
                    ONE_DAY,
                )
            )
        lower = band.age_max_exclusive
    so = rule.stressor_onset
    if so is not None:
        if so.min_days_after is not None:
            out.append(
                _Threshold(
                    "stressor_onset min_days_after", so.min_days_after, _field("stressor_to_onset_days"), 1
                )
            )
        out.append(
            _Threshold(
                "stressor_onset max_days_after", so.max_days_after, _field("stressor_to_onset_days"), 1
            )
        )
    if rule.age_gap is not None:
        out.append(_Threshold("age_gap min_years", rule.age_gap.min_years, _age_gap, ONE_YEAR))
    for req in rule.requires_history:
        if req.onset_age_max_exclusive is not None:
            out.append(
                _Threshold(
                    f"requires_history {req.rule} onset_age_max_exclusive",
                    req.onset_age_max_exclusive,
                    _history(req.rule),
                    ONE_YEAR,
                )
            )
    return out


def _inputs(cases: list[Case], rule_id: str) -> list[Mapping[str, Any]]:
    return [
        c["input"]
        for c in cases
        if isinstance(c, dict) and c.get("rule") == rule_id and isinstance(c.get("input"), Mapping)
    ]


def _has_specifier(inp: Mapping[str, Any], key: str) -> bool:
    specs = inp.get("specifiers") or []
    nk = f" {normalize_label(key)} "
    return isinstance(specs, list) and any(
        isinstance(s, str) and nk in f" {normalize_label(s)} " for s in specs
    )


def rule_coverage(rule: DsmRule, cases: list[Case]) -> list[str]:
    """Problems about missing cases for one rule."""
    problems: list[str] = []
    all_for_rule = [c for c in cases if isinstance(c, dict) and c.get("rule") == rule.id]
    if not all_for_rule:
        return [f"{rule.id}: no case; add at least a passing typical case"]
    inputs = _inputs(cases, rule.id)
    for th in thresholds(rule):
        seen = {th.measure(inp) for inp in inputs}
        for delta, what in ((-th.step, "one below"), (0, "at"), (th.step, "one above")):
            want = th.value + delta
            if want not in seen:
                problems.append(
                    f"{rule.id}: no case {what} {th.label} = {th.value:g} (value {want:g}); "
                    "add a boundary case with the expected outcome"
                )
    other = {"female": "male", "male": "female"}
    if rule.sex is not None:
        for sex in (rule.sex, other[rule.sex]):
            if not any(inp.get("sex") == sex for inp in inputs):
                problems.append(f"{rule.id}: no case with sex {sex}; add one (sex is fixed to {rule.sex})")
    for key in sorted(rule.specifier_sex):
        need = rule.specifier_sex[key]
        for sex in (need, other[need]):
            if not any(inp.get("sex") == sex and _has_specifier(inp, key) for inp in inputs):
                problems.append(f"{rule.id}: no case with specifier '{key}' and sex {sex}; add one")
    return problems


def coverage(doc: Doc, cases: list[Case]) -> list[str]:
    """Problems about missing cases for every rule of a dsm rule file."""
    problems: list[str] = []
    for rule_id, entry in _entries(doc).items():
        try:
            rule = DsmRule.model_validate(entry)
        except ValidationError:
            problems.append(f"{rule_id}: rule is invalid, coverage not computed; fix the rule file first")
            continue
        problems.extend(rule_coverage(rule, cases))
    return problems


KIND = register(
    RuleKind(
        name="dsm",
        run_case=run_case,
        coverage=coverage,
        description="DSM-5-TR diagnosis constraints: present age, onset, duration, sex, stressor onset, "
        "age gap, required history.",
    )
)
