"""Graph validation: structural integrity, assertion statuses and clinical feasibility, returned as data.

Violations carry a code, a message and the node ids involved; they never contain narrative text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from anonpsy.graph import (
    Assertion,
    CaseGraph,
    Certainty,
    Diagnosis,
    Evidence,
    HistoryStatus,
    NodeType,
    RelationType,
    TreatmentStatus,
)
from anonpsy.rules import dsm as dsm_rules
from anonpsy.rules import tables
from anonpsy.temporal import Interval, covers_day0, duration_interval, horizon, interval_index

DAYS_PER_YEAR = 365


class Violation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    code: str
    message: str
    node_ids: tuple[str, ...] = ()
    rule_id: str | None = None

    def one_line(self) -> str:
        where = f" [{', '.join(self.node_ids)}]" if self.node_ids else ""
        rule = f" (rule {self.rule_id})" if self.rule_id else ""
        return f"{self.code}{where}{rule}: {self.message}"


# ---------------------------------------------------------------------------------------------------------------
# Structure


def structural_violations(graph: CaseGraph) -> list[Violation]:
    out: list[Violation] = []
    types = graph.node_types()
    dmap = graph.duration_map()
    for node in graph.temporal_nodes():
        for did in node.duration_ids:
            if did not in dmap:
                out.append(Violation(code="REF_DURATION_MISSING", node_ids=(node.id,),
                                     message=f"duration id {did!r} is referenced but not in the pool"))
        if len(set(node.duration_ids)) != len(node.duration_ids):
            out.append(Violation(code="REF_DURATION_REPEATED", node_ids=(node.id,),
                                 message="a duration id is listed twice on the same node"))
    seen_edges: set[tuple[str, str, str]] = set()
    for e in graph.edges:
        missing = [x for x in (e.source, e.target) if x not in types]
        if missing:
            out.append(Violation(code="REF_EDGE_ENDPOINT_MISSING", node_ids=tuple(missing),
                                 message=f"{e.type.value} edge points to a node id that does not exist"))
            continue
        if e.source == e.target:
            out.append(Violation(code="EDGE_SELF_LOOP", node_ids=(e.source,),
                                 message=f"{e.type.value} edge from a node to itself"))
        if not tables.edge_pair_allowed(e.type.value, types[e.source].value, types[e.target].value):
            out.append(Violation(code="EDGE_PAIR_FORBIDDEN", node_ids=(e.source, e.target),
                                 message=f"{e.type.value} is not permitted from {types[e.source].value} to "
                                         f"{types[e.target].value} (rules/graph/edge_pairs.yaml)"))
        if e.key() in seen_edges:
            out.append(Violation(code="EDGE_DUPLICATE", node_ids=(e.source, e.target),
                                 message=f"duplicate {e.type.value} edge"))
        seen_edges.add(e.key())
    h = horizon(graph) if all(d.span is not None or d.ongoing for d in graph.durations) else 1
    for d in graph.durations:
        start, end = duration_interval(d, h)
        if end <= start:
            out.append(Violation(code="INTERVAL_EMPTY", node_ids=(d.id,), message="interval end is not after start"))
        if d.ongoing and d.span is not None and not (start <= 0 < end):
            out.append(Violation(code="INTERVAL_ONGOING_NOT_AT_VISIT", node_ids=(d.id,),
                                 message="an ongoing duration must cover day 0; fix offset/span or unset ongoing"))
    used = {i for n in graph.temporal_nodes() for i in n.duration_ids}
    for d in graph.durations:
        if d.id not in used:
            out.append(Violation(code="DURATION_UNREFERENCED", node_ids=(d.id,),
                                 message="duration is in the pool but no node references it"))
    # PRESENTS_WITH must point at exactly the symptoms covering day 0 (only checkable when all are timed).
    pw = {e.target for e in graph.edges if e.type == RelationType.PRESENTS_WITH}
    index = interval_index(graph)
    for sx in graph.symptoms:
        ivs = index.get(sx.id, [])
        if not ivs:
            continue
        cur = covers_day0(ivs)
        if cur != sx.current_symptom:
            out.append(Violation(code="CURRENT_FLAG_MISMATCH", node_ids=(sx.id,),
                                 message="current_symptom disagrees with whether an interval covers day 0"))
        if cur and sx.id not in pw:
            out.append(Violation(code="PRESENTS_WITH_MISSING", node_ids=(sx.id,),
                                 message="symptom covers day 0 but has no PRESENTS_WITH edge from the visit"))
        if not cur and sx.id in pw:
            out.append(Violation(code="PRESENTS_WITH_NOT_CURRENT", node_ids=(sx.id,),
                                 message="PRESENTS_WITH edge to a symptom that does not cover day 0"))
    for edge in graph.edges:
        if edge.type == RelationType.PRESENTS_WITH and edge.source != graph.visit_event.id:
            out.append(Violation(code="PRESENTS_WITH_SOURCE", node_ids=(edge.source,),
                                 message="PRESENTS_WITH must start at the visit event"))
    return out


def unknown_diagnoses(graph: CaseGraph) -> list[Violation]:
    """Diagnoses whose rule id is unknown or whose label matches no rules/dsm entry."""
    rules = dsm_rules.rules_by_id()  # looked up only: no copy
    out = []
    for dx in graph.diagnoses:
        if dx.rule_id is not None and dx.rule_id not in rules:
            out.append(Violation(code="DX_UNKNOWN_RULE", node_ids=(dx.id,),
                                 message=f"rule_id {dx.rule_id!r} is not in rules/dsm"))
        elif dx.rule_id is None and dsm_rules.match_label(dx.label) is None:
            out.append(Violation(code="DX_UNKNOWN_LABEL", node_ids=(dx.id,),
                                 message="diagnosis label matches no rules/dsm entry or alias; set rule_id"))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Clinical feasibility


def rule_for(dx: Diagnosis) -> dsm_rules.DsmRule | None:
    rules = dsm_rules.rules_by_id()  # looked up only: no copy
    if dx.rule_id is not None:
        return rules.get(dx.rule_id)
    return dsm_rules.match_label(dx.label)


@dataclass(frozen=True)
class TimedFacts:
    """Age-independent temporal facts of one diagnosis (days relative to day 0)."""

    dx_id: str
    rule_id: str
    onset_day: int | None
    duration_days: int | None
    stressor_to_onset_days: int | None
    specifiers: tuple[str, ...]
    history_days: dict[str, int | None] = field(default_factory=dict)


def _extent(index: dict[str, list[Interval]], ids: list[str]) -> tuple[int, int] | None:
    ivs = [iv for i in ids for iv in index.get(i, [])]
    if not ivs:
        return None
    return min(s for s, _ in ivs), max(e for _, e in ivs)


def diagnosis_timed_facts(graph: CaseGraph) -> list[TimedFacts]:
    """Onset day, illness duration and history of every asserted (confirmed or provisional) diagnosis that maps to
    a DSM rule; a diagnosis to be ruled out or ruled out claims nothing the DSM rules could check."""
    manifests: dict[str, list[str]] = {}
    induces_into: dict[str, list[str]] = {}
    types = graph.node_types()
    index = interval_index(graph)
    for e in graph.edges:
        if e.type == RelationType.MANIFESTS_AS:
            manifests.setdefault(e.source, []).append(e.target)
        if e.type == RelationType.INDUCES and types.get(e.source) == NodeType.past_history:
            induces_into.setdefault(e.target, []).append(e.source)
    history: dict[str, int | None] = {}
    asserted = [dx for dx in graph.diagnoses if dx.asserted]
    for dx in asserted:
        rule = rule_for(dx)
        if rule is None:
            continue
        ext = _extent(index, [dx.id, *manifests.get(dx.id, [])])
        prev = history.get(rule.id)
        onset = ext[0] if ext else None
        history[rule.id] = onset if prev is None or (onset is not None and onset < prev) else prev
    for ph in graph.past_history:
        rule = dsm_rules.match_label(ph.condition) if ph.status != HistoryStatus.denied else None
        if rule is None:
            continue
        ext = _extent(index, [ph.id])
        onset = ext[0] if ext else None
        prev = history.get(rule.id)
        if rule.id not in history or (onset is not None and (prev is None or onset < prev)):
            history[rule.id] = onset
    out = []
    for dx in asserted:
        rule = rule_for(dx)
        if rule is None:
            continue
        ext = _extent(index, [dx.id, *manifests.get(dx.id, [])])
        stressor = None
        stressors = induces_into.get(dx.id, [])
        if ext and stressors:
            sext = _extent(index, stressors)
            if sext is not None:
                stressor = ext[0] - sext[0]
        out.append(TimedFacts(
            dx_id=dx.id, rule_id=rule.id,
            onset_day=ext[0] if ext else None,
            duration_days=(ext[1] - ext[0]) if ext else None,
            stressor_to_onset_days=stressor,
            specifiers=tuple(dx.specifiers),
            history_days={k: v for k, v in history.items() if k != rule.id},
        ))
    return out


def _age_at(present_age: int | None, day: int | None) -> float | None:
    if present_age is None or day is None:
        return None
    return present_age + day / DAYS_PER_YEAR


def dsm_violations(
    graph: CaseGraph, *, age: int | None = None, sex: str | None = None,
    timed: list[TimedFacts] | None = None,
) -> list[Violation]:
    """Check every diagnosis' DSM rule against the case demographics (or the given age/sex)."""
    rules = dsm_rules.rules_by_id()  # looked up only: no copy
    present = graph.demographics.age if age is None else age
    sex_value = graph.demographics.sex.value if sex is None else sex
    out = []
    for tf in timed if timed is not None else diagnosis_timed_facts(graph):
        onset_age = _age_at(present, tf.onset_day)
        facts = dsm_rules.DiagnosisFacts(
            present_age=present,
            sex=sex_value,
            onset_age=None if onset_age is None else max(0.0, onset_age),
            duration_days=tf.duration_days,
            specifiers=tf.specifiers,
            stressor_to_onset_days=tf.stressor_to_onset_days,
            history={k: (None if v is None else _age_at(present, v)) for k, v in tf.history_days.items()},
        )
        for v in dsm_rules.check_diagnosis(rules[tf.rule_id], facts):
            out.append(Violation(code=v.code, message=v.message, node_ids=(tf.dx_id,), rule_id=v.rule_id))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Assertion status


def _overlaps(a: Evidence | None, b: Evidence | None) -> bool:
    return (a is not None and b is not None and a.start is not None and a.end is not None and b.start is not None
            and b.end is not None and a.start < b.end and b.start < a.end)


def assertion_violations(graph: CaseGraph) -> list[Violation]:
    """Statuses that contradict the rest of the graph.

    * ``SX_NOT_CURRENT``: a denied, hypothetical or historical symptom flagged current;
    * ``SX_UNASSERTED_LINKED``: a denied or hypothetical symptom with a duration or an edge (it never happened);
    * ``DX_EXCLUDED_LINKED``: a ruled-out diagnosis with a duration or an edge;
    * ``TX_REASON_NOT_PAST``: a reason for stopping on a treatment that is not past;
    * ``FAMILY_AS_PATIENT``: a relative's condition that is also the patient's diagnosis (or past history) when
      the patient's item is not independently evidenced. Independently evidenced means its recorded evidence lies
      outside the family-history section and outside every sentence that states the relative's condition. An item
      with no recorded evidence (written by hand, migrated) is taken as its author asserted it.
    """
    out: list[Violation] = []
    linked = {x for e in graph.edges for x in (e.source, e.target)}
    for sx in graph.symptoms:
        if sx.current_symptom and sx.assertion in (Assertion.absent, Assertion.hypothetical, Assertion.historical):
            out.append(Violation(code="SX_NOT_CURRENT", node_ids=(sx.id,),
                                 message=f"a {sx.assertion.value} symptom cannot be current at the visit"))
        if not sx.asserted and (sx.duration_ids or sx.id in linked):
            out.append(Violation(code="SX_UNASSERTED_LINKED", node_ids=(sx.id,),
                                 message=f"a {sx.assertion.value} symptom has a duration or a relation"))
    for dx in graph.diagnoses:
        if dx.certainty == Certainty.ruled_out and (dx.duration_ids or dx.id in linked):
            out.append(Violation(code="DX_EXCLUDED_LINKED", node_ids=(dx.id,),
                                 message="a ruled-out diagnosis has a duration or a relation"))
    for tx in graph.treatments:
        if tx.discontinued_reason is not None and tx.status != TreatmentStatus.past:
            out.append(Violation(code="TX_REASON_NOT_PAST", node_ids=(tx.id,),
                                 message=f"a reason for stopping on a {tx.status.value} treatment"))
    family: dict[str, list[Evidence | None]] = {}
    for f in graph.family_history:
        rule = dsm_rules.match_label(f.condition)
        if rule is not None:
            family.setdefault(rule.id, []).append(f.certainty_evidence)
    items: list[tuple[str, str | None, Evidence | None]] = []
    for dx in graph.diagnoses:
        rule = rule_for(dx) if dx.asserted else None
        items.append((dx.id, rule.id if rule else None, dx.certainty_evidence))
    for ph in graph.past_history:
        rule = dsm_rules.match_label(ph.condition) if ph.status != HistoryStatus.denied else None
        items.append((ph.id, rule.id if rule else None, ph.status_evidence))
    for node_id, rule_id, ev in items:
        if rule_id is None or rule_id not in family or ev is None:
            continue
        if ev.section == "family_history" or any(_overlaps(ev, fe) for fe in family[rule_id]):
            out.append(Violation(code="FAMILY_AS_PATIENT", node_ids=(node_id,), rule_id=rule_id,
                                 message="a relative's condition is recorded as the patient's without evidence of "
                                         "its own"))
    return out


def validate(graph: CaseGraph, *, clinical: bool = True) -> list[Violation]:
    """All violations of a graph: structure, references, intervals, assertion statuses, known diagnoses and DSM
    feasibility."""
    out = structural_violations(graph)
    out += assertion_violations(graph)
    out += unknown_diagnoses(graph)
    if clinical and not any(v.code.startswith("REF_") or v.code.startswith("INTERVAL_") for v in out):
        out += dsm_violations(graph)
    return out
