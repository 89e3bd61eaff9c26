"""Demographic perturbation in P: age, sex, ethnicity and occupation, with the text rewrites they imply.

:func:`perturb_demographics` changes only these identifying attributes; node ids, edges, durations, the visit
scaffold and all clinical content stay by construction, and :func:`anonpsy.perturb.check.check` verifies that
afterwards. Every change names the rule that allowed it; every field that could not be changed names the reason.

Randomness: each step draws from its own ``random.Random`` seeded by ``(seed, case_id, step)`` so that adding a step
never shifts another step's draws.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from functools import lru_cache

from anonpsy.audit import Audit, Change, Kept
from anonpsy.graph import CaseGraph, HistoryStatus, Sex
from anonpsy.rules import dsm as dsm_rules
from anonpsy.rules import tables
from anonpsy.temporal import interval_index
from anonpsy.textfields import graph_texts, map_graph_text
from anonpsy.validate import TimedFacts, Violation, diagnosis_timed_facts, dsm_violations, rule_for

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
    r"\b(\d{1,3})\s(?:years?|yrs?)\sof\sage\b",
    r"\bwhen (?:he|she|they) (?:was|were) (\d{1,3})\b",
    r"\bin (?:his|her|their) (\d)0s\b",
]
_AGE_RE = re.compile("|".join(f"(?:{p})" for p in _AGE_PHRASES), re.I)
_DECADE_GROUP = len(_AGE_PHRASES)
#: Every age phrase holds a digit: a text without one (most evidence sentences and STEB fields) has none to find,
#: which one scan for a digit tells sooner than the six phrases tried at every word.
_DIGIT = re.compile(r"\d")


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
        elif n > present_age or n == 0:  # not the patient's age, or birth (which no shift moves)
            return whole
        else:
            new = str(max(0, n + delta))
        return whole[:rel_s] + new + whole[rel_e:]

    if not _DIGIT.search(text):
        return text
    return _AGE_RE.sub(repl, text)


def patient_age_mentions(text: str, present_age: int) -> list[int]:
    """Ages (in years) the patient's age phrases in ``text`` name, up to the present age, in order.

    These are the numbers :func:`shift_age_mentions` moves: a number above the present age is no age of the
    patient; a decade ("in her 30s") names no event age.
    """
    out: list[int] = []
    if not _DIGIT.search(text):
        return out
    for m in _AGE_RE.finditer(text):
        idx = next(i for i in range(1, _DECADE_GROUP + 1) if m.group(i) is not None)
        n = int(m.group(idx))
        if idx != _DECADE_GROUP and n <= present_age:
            out.append(n)
    return out


def event_ages(graph: CaseGraph, age: int | None = None) -> list[tuple[str, float]]:
    """(node id, age in years) at the start of every timed interval before the visit, at ``age`` (default: the
    graph's age); empty when the age is unknown. Durations are days before the visit, so an event age is the
    present age less the time since the event."""
    present = graph.demographics.age if age is None else age
    if present is None:
        return []
    return [(nid, present + s / 365) for nid, ivs in interval_index(graph).items() for s, _e in ivs if s < 0]


def lowest_age_offset(graph: CaseGraph, texts: list[tuple[str, str]] | None = None) -> int | None:
    """The lowest age offset that keeps every event age possible (None when the age is unknown).

    The time since each event is fixed (durations are immutable), so every event age moves with the present age,
    and only a lower bound on the offset follows: an event after birth stays after birth (a milestone at 18 months
    cannot move before birth), an event the source puts at birth or before is moved no earlier, and an age a
    phrase names ("at age 2", "his 3-year-old sister") stays at least one year, never 0 or below. Events keep
    their order and stay before the (shifted) present age by construction: they all move by the same amount.
    ``texts``: :func:`graph_texts` of the graph, when the caller has them.
    """
    age = graph.demographics.age
    if age is None:
        return None
    bounds = [0 if a <= 0 else math.floor(-a) + 1 for _nid, a in event_ages(graph)]
    bounds += [1 - n for _p, t in (graph_texts(graph) if texts is None else texts)
               for n in patient_age_mentions(t, age) if n >= 1]
    return max(bounds, default=-age)


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
    # Event ages move with the present age (the time since each event is fixed): no offset may put one before
    # birth, and the DSM onset rules are re-checked below at the new age.
    texts = graph_texts(graph)  # a dump of the whole graph: once for both uses below
    lowest = lowest_age_offset(graph, texts)
    feasible = []
    for delta in range(max(lo, -age if lowest is None else lowest), hi + 1):
        if delta == 0 or tables.age_offset_allowed(age, delta):
            continue
        if _no_new_violations(baseline, dsm_violations(graph, age=age + delta, timed=timed)):
            feasible.append(delta)
    # A new age that equals another age mentioned in the case (a relative's, an earlier event's) would read as a
    # verbatim source age; prefer offsets that avoid them when any remain.
    mentioned = {int(n) for _p, t in texts for m in _AGE_RE.finditer(t)
                 for n in m.groups() if n is not None and n.isdigit()}
    distinct = [d for d in feasible if age + d not in mentioned]
    feasible = distinct or feasible
    if not feasible:
        audit.kept.append(Kept(path="demographics.age", reason="AGE_NO_FEASIBLE_OFFSET",
                               rule_id=tables.age_rule_id(age),
                               detail=f"no offset in [{lo}, {hi}] keeps every diagnosis rule satisfied and "
                                      "every event age possible"))
        return graph
    delta = rng.choice(feasible)
    new_age = age + delta
    audit.changes.append(Change(path="demographics.age", rule_id=tables.age_rule_id(age), old=age, new=new_age,
                                detail=f"offset {delta:+d} of {len(feasible)} feasible; rules re-checked"))
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

    Only the patient's own items are read (diagnoses, past history, symptoms, treatments, family situation), then
    the sentences they were read from, with the age, so that a relative's condition or a child's birth history
    never fixes the patient's sex.
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
        *(ph.condition for ph in graph.past_history if ph.status != HistoryStatus.denied),
        *(s.headword for s in graph.symptoms),
        *(t.name for t in graph.treatments),
        # the patient's own situation ("pregnancy" read as the family structure of a pregnant patient)
        graph.demographics.family_structure or "",
    ]
    for text in items:
        fixed = _sex_fixed_by_terms(text, age)
        if fixed:
            return fixed, tables.sex_terms_rule_id()
    # the sentences those items were read from ("a 36-year-old with carcinoma of the cervix", "penile swelling
    # after circumcision"): the organ that makes the item sex-specific is often named there, not in the item; a
    # relative named in such a sentence can only keep the recorded sex, never change it
    sentences = [*(d.evidence_text for d in graph.diagnoses), *(p.evidence_text for p in graph.past_history),
                 *(s.evidence_text for s in graph.symptoms), *(t.evidence_text for t in graph.treatments)]
    fixed_by_evidence = {f for t in sentences if t and (f := _sex_fixed_by_terms(t, age))}
    if len(fixed_by_evidence) == 1:
        return next(iter(fixed_by_evidence)), tables.sex_terms_rule_id()
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


def _occupation_fits(occupation: str, age: int, level: str | None) -> bool:
    return any(o.name.lower() == occupation.lower() for o in tables.occupation_pool(age, level))


def occupation_fits_age(graph: CaseGraph) -> bool:
    """Whether the graph's occupation is one its age band can hold (True when there is no occupation or age)."""
    old, age = graph.demographics.occupation, graph.demographics.age
    if not old or age is None:
        return True
    return _occupation_fits(old, age, support_level(graph))


def occupation_candidates(occupation: str, age: int, level: str | None) -> tuple[list[tables.Occupation], str]:
    """The occupations a draw may replace ``occupation`` with at ``age`` (and support level id), in file order,
    with the rule id that shaped them. Both backends draw or validate from this one list.

    A status is no job: a retiree stays retired, a student a student, someone out of work out of work. A job of a
    known skill level is redrawn at that level where the pool allows (a nurse is no apprentice). When nothing else
    of its kind fits the age, a status (unemployed, retired) has no candidate (it names no one and is kept), but a
    job the age band cannot hold (paid work at five, most often a relative's job read as the patient's) is redrawn
    from the whole band, since keeping it would keep a distinctive detail the age already contradicts.
    """
    kind = tables.occupation_status(occupation)
    pool = [o for o in tables.occupation_pool(age, level, status=kind) if o.name.lower() != occupation.lower()]
    known = tables.load_occupations().any_pool_index.get(tables.occupation_key(occupation))
    skill = known.skill_level if known is not None else 0
    same_level = [o for o in pool if skill >= 1 and o.skill_level == skill]
    pool = same_level or pool
    if not pool and kind == tables.WORK and not _occupation_fits(occupation, age, level):
        pool = [o for o in tables.occupation_pool(age, level) if o.name.lower() != occupation.lower()]
    return pool, tables.occupation_rule_id(age, level)


_OCC_ARTICLE = re.compile(r"\b(?:a|an)\s+$", re.I)
_OCC_COPULA = re.compile(r"(?:\b(?:is|was|are|were|be|been|being|now|currently)|,)\s+$", re.I)
_OCC_SUBJECT = re.compile(r"\b(?:he|she|they|who|and|has|had|have|recently|later|then|eventually|since|i|we)\s+$",
                          re.I)
#: "as a nurse" after a verb use of a status ("He retired as a nurse in 2010"): the job it names.
_OCC_AS_JOB = re.compile(r"\s+as\s+(?:a|an)\s+(?:[\w-]+\s+){0,3}?[\w-]+?(?=\s+(?:in|from|at|after|since|for|on|"
                         r"when|with|and|but|because|due)\b|\s*[,.;:)]|\s*$)", re.I)


def replace_occupation(text: str, old: str, new: str) -> str:
    """Replace the occupation ``old`` by ``new`` in ``text``, in the frame each mention stands in.

    A mention after "a"/"an" takes the new label's own article or none ("a nurse" -> "an engineer", "retired");
    one after a copula or a comma takes the new label as a phrase ("is unemployed" -> "is a cashier"); a status used
    as a verb ("he retired as a nurse in 2010") keeps the verb and swaps the job it was done as ("he retired as a
    physician in 2010"), or drops that job when the new label names none; elsewhere the label itself is written.
    """
    from anonpsy.generate.words import indefinite, occupation_is_predicate, occupation_phrase

    pat = re.compile(rf"\b{re.escape(old)}\b", re.I)
    out: list[str] = []
    pos = 0
    for m in pat.finditer(text):
        if m.start() < pos:
            continue
        left = text[pos:m.start()]
        before = text[:m.start()]
        art = _OCC_ARTICLE.search(before)
        if art is not None and art.start() >= pos:
            out.append(text[pos:art.start()] + occupation_phrase(new))
            pos = m.end()
            continue
        if _OCC_SUBJECT.search(before) and occupation_is_predicate(old) and old.lower().endswith("ed"):
            # A verb: "he retired (as a nurse)". The new label's job, if any, is what the verb was done as.
            job = new[len(old):].strip() if new.lower().startswith(old.lower() + " ") else ""
            as_job = _OCC_AS_JOB.match(text, m.end())
            tail = f" as {indefinite(job)} {job}" if job else ""
            out.append(left + m.group(0) + tail)
            pos = as_job.end() if as_job is not None else m.end()
            continue
        value = occupation_phrase(new) if _OCC_COPULA.search(before) else new
        out.append(left + value)
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def _perturb_occupation(graph: CaseGraph, seed: int, audit: Audit, pending: Pending) -> CaseGraph:
    old = graph.demographics.occupation
    age = graph.demographics.age
    if not old:
        return graph
    if age is None:
        audit.kept.append(Kept(path="demographics.occupation", reason="OCCUPATION_AGE_UNKNOWN"))
        return graph
    rng = step_rng(seed, graph.case_id, "occupation")
    pool, rule_id = occupation_candidates(old, age, support_level(graph))
    if not pool:
        audit.kept.append(Kept(path="demographics.occupation", reason="OCCUPATION_POOL_EMPTY"))
        return graph
    choice = rng.choice(pool)
    audit.changes.append(Change(path="demographics.occupation", rule_id=rule_id, old=old, new=choice.name))
    g = graph.model_copy(update={"demographics": graph.demographics.model_copy(update={"occupation": choice.name})})
    pending.append((rule_id, lambda t: replace_occupation(t, old, choice.name)))
    return g


# ---------------------------------------------------------------------------------------------------------------


def _rewrite_text(graph: CaseGraph, audit: Audit, pending: Pending) -> CaseGraph:
    """Apply every pending text rewrite in one pass over the graph; one audit change per (field, rule)."""
    if not pending:
        return graph

    # Every rewrite is a function of the text alone, and evidence sentences recur across fields: each distinct text
    # is rewritten once, and its steps are recorded again for every field that holds it.
    done: dict[str, tuple[str, list[tuple[str, str, str]]]] = {}

    def apply(path: str, text: str) -> str:
        if text not in done:
            steps: list[tuple[str, str, str]] = []
            cur = text
            for rule_id, fn in pending:
                new = fn(cur)
                if new != cur:
                    steps.append((rule_id, cur, new))
                    cur = new
            done[text] = (cur, steps)
        out, steps = done[text]
        audit.changes.extend(Change(path=path, rule_id=rule_id, old=old, new=new) for rule_id, old, new in steps)
        return out

    return map_graph_text(graph, apply)


def perturb_demographics(graph: CaseGraph, seed: int, audit: Audit) -> CaseGraph:
    """Age, sex, ethnicity and occupation of a (temporally normalised) graph, then every text rewrite they imply."""
    timed = diagnosis_timed_facts(graph)
    pending: Pending = []
    g = _perturb_age(graph, seed, audit, timed, pending)
    g = _perturb_sex(g, seed, audit, timed, pending)
    g = _perturb_ethnicity(g, seed, audit, pending)
    g = _perturb_occupation(g, seed, audit, pending)
    return _rewrite_text(g, audit, pending)
