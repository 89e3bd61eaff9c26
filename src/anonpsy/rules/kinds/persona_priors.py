"""Rule kind ``persona_priors``: the persona priors of ``anonpsy tabular synth`` (``rules/personas/*.yaml``).

The file's entries are its attributes (severity, response_style, symptom_awareness, communication_style,
consistency). A case's ``input`` is one of::

    {persona: {sex, age, severity, ...}}                      # may the priors produce this persona?
    {sample: {n: 4000, seed: 1}, expect_share: {severity.none: [0.30, 0.40], sex.female: [0.5, 0.6]}}
    {persona: {...}, instrument: gad7, n: 300, seed: 0, expect_mean_total: [15, 21]}

PASS: the persona is allowed; the shares of ``<attribute>.<level>`` (or ``sex.<id>``) among ``n`` sampled
personas fall in the given closed ranges; the rules backend's mean raw total of ``n`` respondents with that
persona's levels (their latent severity drawn afresh per row) falls in ``expect_mean_total``. FAIL: the reasons
the persona is not allowed (AGE_OUT_OF_RANGE, MISSING_ATTRIBUTE, UNKNOWN_LEVEL, UNKNOWN_SEX) are exactly
``violations``.

Coverage: the file satisfies the loader's invariants and ``age.min`` and ``age.max`` have persona cases at the
bound and one year outside it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from anonpsy.errors import AnonpsyError
from anonpsy.rules.check import expectation_problems
from anonpsy.rules.registry import Case, Doc, RuleKind, entries_from, register
from anonpsy.tabular.instruments import load_instrument
from anonpsy.tabular.personas import ATTRIBUTES, KIND, REASONS, Persona, PersonaPriors, persona_problems, respond
from anonpsy.tabular.personas import sample_persona as _sample


def _parse(doc: Doc) -> PersonaPriors | str:
    try:
        return PersonaPriors.model_validate(doc)
    except ValidationError as exc:
        return f"rule file does not load: {exc.errors()[0]['msg']}"


def _in(value: float, bounds: Any) -> bool:
    return isinstance(bounds, list) and len(bounds) == 2 and bounds[0] <= value <= bounds[1]


def _share_problems(priors: PersonaPriors, inp: dict[str, Any]) -> list[str]:
    sample, want = inp["sample"], inp.get("expect_share") or {}
    n, seed = int(sample["n"]), int(sample.get("seed", 0))
    people = [_sample(priors, seed, i) for i in range(n)]
    out = []
    for key, bounds in want.items():
        attr, _, level = str(key).partition(".")
        if attr != "sex" and attr not in ATTRIBUTES:
            out.append(f"expect_share key {key!r} names no attribute")
            continue
        share = sum(1 for p in people if getattr(p, attr) == level) / n
        if not _in(share, bounds):
            out.append(f"share of {key} is {share:.3f}, expected within {bounds}")
    return out


def _mean_total_problems(priors: PersonaPriors, inp: dict[str, Any]) -> list[str]:
    p = inp["persona"]
    inst = load_instrument(str(inp["instrument"]))
    base = Persona(row=0, sex=p["sex"], age=p["age"], **{a: p[a] for a in ATTRIBUTES})
    n, seed = int(inp.get("n", 200)), int(inp.get("seed", 0))
    mean = sum(sum(respond(priors, replace(base, row=i), inst, seed)) for i in range(n)) / n
    bounds = inp["expect_mean_total"]
    return [] if _in(mean, bounds) else [f"mean total on {inst.id} is {mean:.2f}, expected within {bounds}"]


def run_case(doc: Doc, case: Case) -> list[str]:
    """Run one persona-priors case against the file under check."""
    priors = _parse(doc)
    if isinstance(priors, str):
        return [priors]
    inp = case.get("input")
    if not isinstance(inp, dict):
        return ["input must be a mapping"]
    bad = sorted(set(case.get("violations") or []) - set(REASONS))
    if bad:
        return [f"violations {bad} are not reason codes; use {list(REASONS)}"]
    if "sample" in inp:
        return _share_problems(priors, inp)
    if not isinstance(inp.get("persona"), dict):
        return ["input needs 'persona' or 'sample'"]
    problems = expectation_problems(case, persona_problems(priors, inp["persona"]))
    if not problems and "expect_mean_total" in inp:
        try:
            problems = _mean_total_problems(priors, inp)
        except AnonpsyError as exc:
            problems = [exc.message]
    return problems


def coverage(doc: Doc, cases: list[Case]) -> list[str]:
    """Missing age-bound cases (at age.min / age.max and one year outside each)."""
    priors = _parse(doc)
    if isinstance(priors, str):
        return [priors]
    ages = {c["input"]["persona"].get("age") for c in cases
            if isinstance(c.get("input"), dict) and isinstance(c["input"].get("persona"), dict)}
    want = [priors.age.min - 1, priors.age.min, priors.age.max, priors.age.max + 1]
    return [f"no persona case with age {a} (age bounds {priors.age.min}-{priors.age.max})" for a in want
            if a not in ages]


register(
    RuleKind(
        name=KIND,
        run_case=run_case,
        entries=entries_from("attributes"),
        coverage=coverage,
        description="Persona priors and response-model effects of synthetic questionnaire respondents",
    )
)
