"""check(G, G~): the invariants every perturbation keeps, returned as violations.

Node ids and types, edges, the duration pool and every pairwise temporal relation, clinical content, every
assertion status and its evidence, the visit's legal status and its evidence included (``CHECK_STATUS``), the
mental status examination (``CHECK_MENTAL_STATUS``), test values (only a mapped value may change, inside its pool:
``CHECK_TEST_VALUE``), STEB field presence, the immutable visit scaffold, a sex fixed by a rule, the status kind of
an occupation (a retiree stays retired, a student a student: ``CHECK_OCCUPATION_KIND``), event ages (none before
birth, none named above the present age: ``CHECK_EVENT_AGE``), and DSM feasibility (no new violation).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from anonpsy.graph import CaseGraph
from anonpsy.perturb.demographics import event_ages, occupation_fits_age, patient_age_mentions, required_sex
from anonpsy.perturb.test_values import pool_of
from anonpsy.rules import tables
from anonpsy.temporal import temporal_backbone
from anonpsy.textfields import graph_texts
from anonpsy.validate import Violation, diagnosis_timed_facts, dsm_violations


def _time_signature(graph: CaseGraph) -> tuple[object, ...]:
    return (tuple((n.id, tuple(n.duration_ids)) for n in graph.temporal_nodes()), graph.visit_event.id,
            tuple(graph.durations))


def _same_clinical(a: CaseGraph, b: CaseGraph) -> bool:
    """Diagnoses, edges and past history equal: the inputs of the DSM timed facts besides time."""
    return a.diagnoses == b.diagnoses and [e.key() for e in a.edges] == [e.key() for e in b.edges] and [
        (p.id, p.condition) for p in a.past_history] == [(p.id, p.condition) for p in b.past_history]


def _steb_presence(graph: CaseGraph) -> dict[str, list[tuple[str, ...]]]:
    return {s.id: [c.present_fields() for c in s.contexts] for s in graph.symptoms}


def statuses(graph: CaseGraph) -> dict[str, tuple[object, ...]]:
    """Every assertion status of a graph with its evidence, keyed by node id (family items by position)."""
    out: dict[str, tuple[object, ...]] = {}
    for d in graph.diagnoses:
        out[d.id] = (d.certainty, d.certainty_evidence, d.temporality, d.temporality_evidence)
    for s in graph.symptoms:
        out[s.id] = (s.assertion, s.assertion_evidence)
    for t in graph.treatments:
        out[t.id] = (t.status, t.status_evidence, t.discontinued_reason)
    for p in graph.past_history:
        out[p.id] = (p.status, p.status_evidence)
    for i, f in enumerate(graph.family_history):
        out[f"family_history[{i}]"] = (f.certainty, f.certainty_evidence)
    ve = graph.visit_event
    out[f"{ve.id}.legal_status"] = (ve.legal_status, ve.legal_status_evidence)
    return out


def status_violations(original: CaseGraph, perturbed: CaseGraph) -> list[Violation]:
    """``CHECK_STATUS`` for every status (or its evidence) that differs, or that appears or disappears."""
    a, b = statuses(original), statuses(perturbed)
    return [Violation(code="CHECK_STATUS", node_ids=(key,), message="an assertion status or its evidence changed")
            for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key)]


def value_violations(original: CaseGraph, perturbed: CaseGraph) -> list[Violation]:
    """``CHECK_TEST_VALUE``: the same values in the same order; only the number of a value mapped to a test rule may
    change, and only inside the pool it was in."""
    old, new = original.test_results.values, perturbed.test_results.values
    if [v.id for v in old] != [v.id for v in new]:
        return [Violation(code="CHECK_TEST_VALUE", message="test values were added, removed or reordered")]
    out: list[Violation] = []
    for a, b in zip(old, new, strict=True):
        if a.model_copy(update={"value": b.value}) != b:
            out.append(Violation(code="CHECK_TEST_VALUE", node_ids=(a.id,),
                                 message="a test value changed something other than its number"))
        elif a.value != b.value and (a.rule_id is None or pool_of(a) is None or pool_of(a) != pool_of(b)):
            out.append(Violation(code="CHECK_TEST_VALUE", node_ids=(a.id,), rule_id=a.rule_id,
                                 message="a test value left its pool, or changed without a test rule"))
    return out


_NEGATIVE_AGE = re.compile(r"\b(?:age|aged)\s*(?:of\s*)?-\s?\d|(?<![\w-])-\d{1,3}[- ](?:year|yr)s?[- ]old\b", re.I)


def event_age_violations(original: CaseGraph, perturbed: CaseGraph) -> list[Violation]:
    """``CHECK_EVENT_AGE``: an event the perturbation put before birth (or at birth when it came after), a
    negative age phrase, or an age phrase above the present age that the original did not have."""
    out: list[Violation] = []
    old_age, new_age = original.demographics.age, perturbed.demographics.age
    if old_age is not None and new_age is not None:
        before = dict(event_ages(original))
        bad = sorted({nid for nid, a in event_ages(perturbed)
                      if (a < 0 or a <= 0 < before.get(nid, 0.0)) and a < before.get(nid, 0.0)})
        if bad:
            out.append(Violation(code="CHECK_EVENT_AGE", node_ids=tuple(bad),
                                 message="an event age falls before birth"))
    old_texts = dict(graph_texts(original))
    for path, text in graph_texts(perturbed):
        src = old_texts.get(path, "")
        if text == src:
            continue  # a text the perturbation left alone names nothing the original did not
        if _NEGATIVE_AGE.search(text) and not _NEGATIVE_AGE.search(src):
            out.append(Violation(code="CHECK_EVENT_AGE", node_ids=(path,), message="a negative age is named"))
        elif new_age is not None and old_age is not None:
            above = {n for n in _all_ages(text) if n > new_age} - set(_all_ages(src))
            if above and any(n <= old_age for n in _all_ages(src)):
                out.append(Violation(code="CHECK_EVENT_AGE", node_ids=(path,),
                                     message="an event age above the present age is named"))
    return out


def _all_ages(text: str) -> list[int]:
    return patient_age_mentions(text, 10**3)


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
        ("diagnoses", lambda g: [(d.id, d.label, d.rule_id, tuple(d.specifiers)) for d in g.diagnoses]),
        ("symptoms", lambda g: [(s.id, s.headword, s.current_symptom, s.pattern) for s in g.symptoms]),
        ("treatments", lambda g: [(t.id, t.type, t.name, t.dose, t.route, t.frequency) for t in g.treatments]),
        ("past_history", lambda g: [(p.id, p.condition) for p in g.past_history]),
        ("family_history", lambda g: [(f.member, f.condition) for f in g.family_history]),
        ("omitted", lambda g: [tuple(o.model_dump().values()) for o in g.omitted]),
    ]
    for name, key in clinical:
        if key(original) != key(perturbed):
            out.append(Violation(code="CHECK_CLINICAL_CONTENT", message=f"clinical content of {name} changed"))
    out += status_violations(original, perturbed)
    if original.mental_status != perturbed.mental_status:
        out.append(Violation(code="CHECK_MENTAL_STATUS", message="a mental status examination finding changed"))
    out += value_violations(original, perturbed)
    out += event_age_violations(original, perturbed)
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
    # A sex the note never states stays unstated: the rule only forbids moving a stated sex away from the fixed one.
    fixed, rule_id = required_sex(original)
    new_sex = perturbed.demographics.sex
    if fixed is not None and new_sex.value != fixed and new_sex != original.demographics.sex:
        out.append(Violation(code="CHECK_SEX_FIXED", message="sex differs from the sex fixed by a rule",
                             rule_id=rule_id))
    old_occ, new_occ = original.demographics.occupation, perturbed.demographics.occupation
    # A job its age band cannot hold (paid work at five) may be redrawn from the band, of any kind.
    if (old_occ and new_occ and tables.occupation_status(old_occ) != tables.occupation_status(new_occ)
            and (tables.occupation_status(old_occ) != tables.WORK or occupation_fits_age(original))):
        out.append(Violation(code="CHECK_OCCUPATION_KIND", message="an occupation changed its status kind",
                             rule_id="occupations.statuses"))
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
