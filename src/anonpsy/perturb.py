"""The deterministic perturbation operator P (attributes): age, sex, ethnicity, occupation, test values.

``perturb(graph, seed)`` returns the perturbed graph and an :class:`~anonpsy.audit.Audit`. Only identifying
attributes change; node ids, edges, durations, the visit scaffold and all clinical content stay by construction, and
:func:`check` verifies that afterwards. Every change names the rule that allowed it; every field that could not be
changed names the reason.

Randomness: each step draws from its own ``random.Random`` seeded by ``(seed, case_id, step)`` so that adding a step
never shifts another step's draws.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from functools import lru_cache

from anonpsy.audit import Audit, Change, Kept, Unmapped
from anonpsy.graph import CaseGraph, Sex
from anonpsy.rules import dsm as dsm_rules
from anonpsy.rules import tables
from anonpsy.temporal import temporal_backbone
from anonpsy.testvalues import resample_values
from anonpsy.textfields import graph_texts, map_graph_text
from anonpsy.validate import TimedFacts, Violation, diagnosis_timed_facts, dsm_violations, rule_for

TEST_RESULT_FIELDS = ("labs", "imaging", "other")
#: Text rewrites collected by the attribute steps and applied in one pass: (rule id, function).
Pending = list[tuple[str, Callable[[str], str]]]


def step_rng(seed: int, case_id: str, step: str) -> random.Random:
    return random.Random(f"anonpsy:{seed}:{case_id}:{step}")


# ---------------------------------------------------------------------------------------------------------------
# Age


_AGE_PHRASES = [
    r"\b(\d{1,3})[- ](?:year|yr)s?[- ]old\b",
    r"\b(\d{1,3})\s?(?:yo|y/o|y\.o\.)(?!\w)",
    r"\b(?:age|aged|at age|age of)\s(\d{1,3})\b",
    r"\bwhen (?:he|she|they) (?:was|were) (\d{1,3})\b",
    r"\bin (?:his|her|their) (\d)0s\b",
]
_AGE_RE = re.compile("|".join(f"(?:{p})" for p in _AGE_PHRASES), re.I)
_DECADE_GROUP = len(_AGE_PHRASES)


def shift_age_mentions(text: str, present_age: int, delta: int) -> str:
    """Shift the patient's age phrases by ``delta`` years (present age and ages at past events).

    Only numbers inside age phrases ("34-year-old", "age 15", "34 yo", "when she was 12") change; a number above
    the present age cannot be the patient's age and stays. Decades ("in her 30s") move to the new age's decade when
    they named the present decade.
    """

    def repl(m: re.Match[str]) -> str:
        idx = next(i for i in range(1, _DECADE_GROUP + 1) if m.group(i) is not None)
        s, e = m.span(idx)
        whole, rel_s, rel_e = m.group(0), s - m.start(), e - m.start()
        n = int(m.group(idx))
        if idx == _DECADE_GROUP:
            if n != present_age // 10:
                return whole
            new = str(max(0, present_age + delta) // 10)
        elif n > present_age:
            return whole
        else:
            new = str(max(0, n + delta))
        return whole[:rel_s] + new + whole[rel_e:]

    return _AGE_RE.sub(repl, text)


def _no_new_violations(before: list[Violation], after: list[Violation]) -> bool:
    old = {(v.code, v.node_ids) for v in before}
    return all((v.code, v.node_ids) in old for v in after)


def _perturb_age(
    graph: CaseGraph, seed: int, audit: Audit, timed: list[TimedFacts], pending: Pending
) -> CaseGraph:
    age = graph.demographics.age
    if age is None:
        audit.kept.append(Kept(path="demographics.age", reason="AGE_UNKNOWN"))
        return graph
    rng = step_rng(seed, graph.case_id, "age")
    lo, hi = tables.age_offset_bounds(age)
    baseline = dsm_violations(graph, timed=timed)
    feasible = []
    for delta in range(lo, hi + 1):
        if delta == 0 or tables.age_offset_allowed(age, delta):
            continue
        if _no_new_violations(baseline, dsm_violations(graph, age=age + delta, timed=timed)):
            feasible.append(delta)
    # A new age that equals another age mentioned in the case (a relative's, an earlier event's) would read as a
    # verbatim source age; prefer offsets that avoid them when any remain.
    mentioned = {int(n) for _p, t in graph_texts(graph) for m in _AGE_RE.finditer(t)
                 for n in m.groups() if n is not None and n.isdigit()}
    distinct = [d for d in feasible if age + d not in mentioned]
    feasible = distinct or feasible
    if not feasible:
        audit.kept.append(Kept(path="demographics.age", reason="AGE_NO_FEASIBLE_OFFSET",
                               rule_id=tables.age_rule_id(age),
                               detail=f"no offset in [{lo}, {hi}] keeps every diagnosis rule satisfied"))
        return graph
    delta = rng.choice(feasible)
    new_age = age + delta
    audit.changes.append(Change(path="demographics.age", rule_id=tables.age_rule_id(age), old=age, new=new_age,
                                detail=f"offset {delta:+d} of {len(feasible)} feasible; dsm rules re-checked"))
    g = graph.model_copy(update={"demographics": graph.demographics.model_copy(update={"age": new_age})})
    pending.append((tables.age_rule_id(age), lambda t: shift_age_mentions(t, age, delta)))
    return g


# ---------------------------------------------------------------------------------------------------------------
# Sex


@lru_cache(maxsize=4096)
def _sex_fixed_by_terms(text: str, age: int | None) -> str | None:
    return tables.sex_fixed_by_terms(text, age=age)


def required_sex(graph: CaseGraph) -> tuple[str | None, str | None]:
    """(sex, rule id) fixed by a sex-specific diagnosis, specifier or term about the patient; (None, None) if free.

    Only the patient's own clinical items are read (diagnoses, past history, symptoms, treatments), with the age,
    so that a relative's condition or a child's birth history never fixes the patient's sex.
    """
    for dx in graph.diagnoses:
        rule = rule_for(dx)
        if rule is None:
            continue
        fixed = dsm_rules.required_sex(rule, tuple(dx.specifiers))
        if fixed:
            return fixed, f"dsm.{rule.id}"
    age = graph.demographics.age
    items = [
        *(" ".join([dx.label, *dx.specifiers]) for dx in graph.diagnoses),
        *(ph.condition for ph in graph.past_history),
        *(s.headword for s in graph.symptoms),
        *(t.name for t in graph.treatments),
    ]
    for text in items:
        fixed = _sex_fixed_by_terms(text, age)
        if fixed:
            return fixed, tables.sex_terms_rule_id()
    return None, None


def _perturb_sex(
    graph: CaseGraph, seed: int, audit: Audit, timed: list[TimedFacts], pending: Pending
) -> CaseGraph:
    sex = graph.demographics.sex
    if sex == Sex.unknown:
        audit.kept.append(Kept(path="demographics.sex", reason="SEX_UNKNOWN"))
        return graph
    fixed, rule_id = required_sex(graph)
    if fixed is not None:
        audit.kept.append(Kept(path="demographics.sex", reason="SEX_FIXED_BY_RULE", rule_id=rule_id))
        return graph
    rng = step_rng(seed, graph.case_id, "sex")
    p_switch, weight_rule = tables.sex_switch_probability()
    switch = rng.random() < p_switch
    if not switch:
        audit.kept.append(Kept(path="demographics.sex", reason="SEX_KEPT_BY_DRAW", rule_id=weight_rule))
        return graph
    new_sex = Sex.female if sex == Sex.male else Sex.male
    baseline = dsm_violations(graph, timed=timed)
    if not _no_new_violations(baseline, dsm_violations(graph, sex=new_sex.value, timed=timed)):
        audit.kept.append(Kept(path="demographics.sex", reason="SEX_SWITCH_VIOLATES_RULE", rule_id=weight_rule))
        return graph
    audit.changes.append(Change(path="demographics.sex", rule_id=weight_rule, old=sex.value, new=new_sex.value))
    g = graph.model_copy(update={"demographics": graph.demographics.model_copy(update={"sex": new_sex})})
    pending.append((tables.sex_terms_rule_id(), lambda t: tables.swap_sex_terms(t, new_sex.value)))
    return g


# ---------------------------------------------------------------------------------------------------------------
# Ethnicity and occupation


def _replace_value(text: str, old: str, new: str) -> str:
    return re.sub(rf"\b{re.escape(old)}\b", new, text, flags=re.I)


def _perturb_ethnicity(graph: CaseGraph, seed: int, audit: Audit, pending: Pending) -> CaseGraph:
    old = graph.demographics.ethnicity
    if not old:
        return graph
    rng = step_rng(seed, graph.case_id, "ethnicity")
    pool = [(v, w) for v, w in tables.ethnicity_pool() if v.lower() != old.lower()]
    if not pool:
        audit.kept.append(Kept(path="demographics.ethnicity", reason="ETHNICITY_POOL_EMPTY"))
        return graph
    new = rng.choices([v for v, _ in pool], weights=[w for _, w in pool], k=1)[0]
    audit.changes.append(Change(path="demographics.ethnicity", rule_id=tables.ethnicity_rule_id(), old=old, new=new))
    g = graph.model_copy(update={"demographics": graph.demographics.model_copy(update={"ethnicity": new})})
    pending.append((tables.ethnicity_rule_id(), lambda t: _replace_value(t, old, new)))
    return g


def support_level(graph: CaseGraph) -> str | None:
    """Support level implied by neurodevelopmental specifiers (used by occupation pools)."""
    for dx in graph.diagnoses:
        level = tables.support_level_from_specifiers(dx.rule_id or "", tuple(dx.specifiers))
        if level:
            return level
    return None


def _perturb_occupation(graph: CaseGraph, seed: int, audit: Audit, pending: Pending) -> CaseGraph:
    old = graph.demographics.occupation
    age = graph.demographics.age
    if not old:
        return graph
    if age is None:
        audit.kept.append(Kept(path="demographics.occupation", reason="OCCUPATION_AGE_UNKNOWN"))
        return graph
    rng = step_rng(seed, graph.case_id, "occupation")
    level = support_level(graph)
    pool = [o for o in tables.occupation_pool(age, level) if o.name.lower() != old.lower()]
    if not pool:
        audit.kept.append(Kept(path="demographics.occupation", reason="OCCUPATION_POOL_EMPTY"))
        return graph
    choice = rng.choice(pool)
    rule_id = tables.occupation_rule_id(age, level)
    audit.changes.append(Change(path="demographics.occupation", rule_id=rule_id, old=old, new=choice.name))
    g = graph.model_copy(update={"demographics": graph.demographics.model_copy(update={"occupation": choice.name})})
    pending.append((rule_id, lambda t: _replace_value(t, old, choice.name)))
    return g


# ---------------------------------------------------------------------------------------------------------------
# Test values


def _perturb_tests(graph: CaseGraph, seed: int, audit: Audit) -> CaseGraph:
    rng = step_rng(seed, graph.case_id, "tests")
    updates: dict[str, str | None] = {}
    for name in TEST_RESULT_FIELDS:
        text = getattr(graph.test_results, name)
        if not text:
            continue
        new_text, changes, unmapped = resample_values(text, rng)
        path = f"test_results.{name}"
        for c in changes:
            if c.old == c.new:  # a single-value pool leaves nothing to change
                continue
            audit.changes.append(Change(path=path, rule_id=f"test_values.{c.test_id}", old=c.old, new=c.new,
                                        detail=f"resampled within pool '{c.interpretation}'"))
        for u in unmapped:
            audit.unmapped_values.append(Unmapped(path=path, start=u.start, end=u.end, reason=u.reason))
        updates[name] = new_text
    if not updates:
        return graph
    return graph.model_copy(update={"test_results": graph.test_results.model_copy(update=updates)})


# ---------------------------------------------------------------------------------------------------------------


def _rewrite_text(graph: CaseGraph, audit: Audit, pending: Pending) -> CaseGraph:
    """Apply every pending text rewrite in one pass over the graph; one audit change per (field, rule)."""
    if not pending:
        return graph

    def apply(path: str, text: str) -> str:
        for rule_id, fn in pending:
            new = fn(text)
            if new != text:
                audit.changes.append(Change(path=path, rule_id=rule_id, old=text, new=new))
                text = new
        return text

    return map_graph_text(graph, apply)


def perturb(graph: CaseGraph, seed: int) -> tuple[CaseGraph, Audit]:
    """Perturb identifying attributes of a (temporally normalised) graph; returns (graph, audit)."""
    audit = Audit(case_id=graph.case_id, seed=seed)
    timed = diagnosis_timed_facts(graph)
    pending: Pending = []
    g = _perturb_age(graph, seed, audit, timed, pending)
    g = _perturb_sex(g, seed, audit, timed, pending)
    g = _perturb_ethnicity(g, seed, audit, pending)
    g = _perturb_occupation(g, seed, audit, pending)
    g = _rewrite_text(g, audit, pending)
    g = _perturb_tests(g, seed, audit)
    audit.violations = [v.model_dump() for v in check(graph, g)]
    return g, audit


# ---------------------------------------------------------------------------------------------------------------
# check(G, G~)


def _time_signature(graph: CaseGraph) -> tuple[object, ...]:
    return (tuple((n.id, tuple(n.duration_ids)) for n in graph.temporal_nodes()), graph.visit_event.id,
            tuple(graph.durations))


def _same_clinical(a: CaseGraph, b: CaseGraph) -> bool:
    """Diagnoses, edges and past history equal: the inputs of the DSM timed facts besides time."""
    return a.diagnoses == b.diagnoses and [e.key() for e in a.edges] == [e.key() for e in b.edges] and [
        (p.id, p.condition) for p in a.past_history] == [(p.id, p.condition) for p in b.past_history]


def _steb_presence(graph: CaseGraph) -> dict[str, list[tuple[str, ...]]]:
    return {s.id: [c.present_fields() for c in s.contexts] for s in graph.symptoms}


def check(original: CaseGraph, perturbed: CaseGraph) -> list[Violation]:
    """Invariants of perturbation; returns violations (empty when the perturbed graph is faithful)."""
    out: list[Violation] = []
    if [i for i in original.iter_nodes()] != [i for i in perturbed.iter_nodes()]:
        out.append(Violation(code="CHECK_NODE_IDS", message="node ids or types differ"))
    if sorted(e.key() for e in original.edges) != sorted(e.key() for e in perturbed.edges):
        out.append(Violation(code="CHECK_EDGES", message="edges differ"))
    if original.durations != perturbed.durations:
        out.append(Violation(code="CHECK_DURATIONS", message="the duration pool differs"))
    # Temporal(a, b) is a function of the node ids, their duration ids and the pool: when those are identical the
    # backbone is identical, so the pairwise comparison only runs when something differs.
    same_time_inputs = not out and _time_signature(original) == _time_signature(perturbed)
    if not same_time_inputs and temporal_backbone(original) != temporal_backbone(perturbed):
        out.append(Violation(code="CHECK_TEMPORAL", message="Temporal(a, b) differs for some node pair"))
    for a, b in zip(original.temporal_nodes(), perturbed.temporal_nodes(), strict=False):
        if a.id == b.id and a.duration_ids != b.duration_ids:
            out.append(Violation(code="CHECK_NODE_DURATIONS", node_ids=(a.id,), message="node duration ids differ"))
    clinical: list[tuple[str, Callable[[CaseGraph], list[tuple[object, ...]]]]] = [
        ("diagnoses", lambda g: [(d.id, d.label, d.rule_id, tuple(d.specifiers), d.status) for d in g.diagnoses]),
        ("symptoms", lambda g: [(s.id, s.headword, s.current_symptom, s.pattern) for s in g.symptoms]),
        ("treatments", lambda g: [(t.id, t.type, t.name, t.dose, t.route, t.frequency) for t in g.treatments]),
        ("past_history", lambda g: [(p.id, p.condition, p.status) for p in g.past_history]),
        ("family_history", lambda g: [(f.member, f.condition) for f in g.family_history]),
    ]
    for name, key in clinical:
        if key(original) != key(perturbed):
            out.append(Violation(code="CHECK_CLINICAL_CONTENT", message=f"clinical content of {name} changed"))
    orig_steb, new_steb = _steb_presence(original), _steb_presence(perturbed)
    for sid, frames in orig_steb.items():
        if new_steb.get(sid) is None or len(new_steb[sid]) != len(frames) or any(
            not set(n) <= set(o) for o, n in zip(frames, new_steb[sid], strict=False)
        ):
            out.append(Violation(code="CHECK_STEB_FIELDS", node_ids=(sid,),
                                 message="STEB fields exist where none existed before, or frames were added/removed"))
    for fld in tables.immutable_visit_fields():
        if getattr(original.visit_event, fld) != getattr(perturbed.visit_event, fld):
            out.append(Violation(code="CHECK_SCAFFOLD", node_ids=(original.visit_event.id,),
                                 message=f"immutable visit field {fld!r} changed"))
    fixed, rule_id = required_sex(original)
    if fixed is not None and perturbed.demographics.sex.value != fixed:
        out.append(Violation(code="CHECK_SEX_FIXED", message="sex differs from the sex fixed by a rule",
                             rule_id=rule_id))
    timed = diagnosis_timed_facts(original) if same_time_inputs else None
    before = dsm_violations(original, timed=timed)
    after = dsm_violations(perturbed, timed=timed if same_time_inputs and _same_clinical(original, perturbed)
                           else None)
    old = {(v.code, v.node_ids) for v in before}
    for v in after:
        if (v.code, v.node_ids) not in old:
            out.append(Violation(code="CHECK_DSM", message=f"perturbed demographics break a rule: {v.message}",
                                 node_ids=v.node_ids, rule_id=v.rule_id))
    return out
