"""The narrative plan: the deterministic timeline and grouping both generation backends share.

Blocks are ordered by start day. A block is one of:

* ``episode``: the symptoms of one diagnosis (or of none) that share one duration, with their STEB frames;
* ``regimen``: the treatments of one diagnosis that share one duration;
* ``induces``: an INDUCES chain source → target(s);
* ``history``: a past-history item linked to other nodes, narrated at its earliest offset.

Bookkeeping guarantees that every (item, duration) pair appears in exactly one block; what is left (unlinked past
history, family history, denied or hypothetical symptoms, tests and the mental status examination) goes to the
closing section.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from anonpsy.graph import (
    CaseGraph,
    Diagnosis,
    NodeType,
    PastHistory,
    RelationType,
    Symptom,
    Treatment,
)
from anonpsy.temporal import Interval, duration_interval, horizon


@dataclass
class Block:
    kind: str  # episode | regimen | induces | history
    interval: Interval | None
    diagnosis: Diagnosis | None = None
    symptoms: list[Symptom] = field(default_factory=list)
    treatments: list[Treatment] = field(default_factory=list)
    history: PastHistory | None = None
    source_id: str | None = None
    target_ids: list[str] = field(default_factory=list)
    evidence: str | None = None

    def sort_key(self) -> tuple[int, int, str]:
        order = {"history": 0, "induces": 1, "episode": 2, "regimen": 3}[self.kind]
        start = self.interval[0] if self.interval else 10**9
        return (start, order, self.first_id())

    def first_id(self) -> str:
        if self.symptoms:
            return self.symptoms[0].id
        if self.treatments:
            return self.treatments[0].id
        if self.history:
            return self.history.id
        return self.source_id or ""


@dataclass
class NarrativePlan:
    blocks: list[Block]
    closing_history: list[PastHistory]
    first_dx_block: dict[str, int]
    narrated: set[tuple[str, str | None]]


def _interval(graph: CaseGraph, ids: list[str]) -> Interval | None:
    dmap = graph.duration_map()
    h = horizon(graph)
    ivs = [duration_interval(dmap[i], h) for i in ids if i in dmap]
    if not ivs:
        return None
    return min(s for s, _ in ivs), max(e for _, e in ivs)


def plan_narrative(graph: CaseGraph) -> NarrativePlan:
    types = graph.node_types()
    dx_of_symptom: dict[str, str] = {}
    dx_of_treatment: dict[str, str] = {}
    for e in graph.edges:
        if e.type == RelationType.MANIFESTS_AS:
            dx_of_symptom.setdefault(e.target, e.source)
        if e.type == RelationType.TREATMENT_OF and types.get(e.target) == NodeType.diagnosis:
            dx_of_treatment.setdefault(e.source, e.target)
    diagnoses = {d.id: d for d in graph.diagnoses}
    narrated: set[tuple[str, str | None]] = set()
    groups: dict[tuple[str, str | None, tuple[str, ...]], Block] = {}

    for s in graph.symptoms:
        if not s.asserted:
            continue  # denied or hypothetical: written in the closing, never as an episode
        key_d = tuple(s.duration_ids)
        dx = dx_of_symptom.get(s.id)
        # Untimed symptoms are grouped by whether they are current, so a block never mixes present and past.
        gkey = ("episode", dx, key_d if key_d else ("current",) if s.current_symptom else ("past",))
        if gkey not in groups:
            groups[gkey] = Block("episode", _interval(graph, s.duration_ids), diagnosis=diagnoses.get(dx or ""))
        groups[gkey].symptoms.append(s)
        narrated.add((s.id, key_d[0] if key_d else None))
    for t in graph.treatments:
        key_d = tuple(t.duration_ids)
        dx = dx_of_treatment.get(t.id)
        gkey = ("regimen", dx, key_d)
        if gkey not in groups:
            groups[gkey] = Block("regimen", _interval(graph, t.duration_ids), diagnosis=diagnoses.get(dx or ""))
        groups[gkey].treatments.append(t)
        narrated.add((t.id, key_d[0] if key_d else None))

    blocks = list(groups.values())
    linked_history: set[str] = set()
    induces: dict[str, list[str]] = {}
    evidence: dict[str, str | None] = {}
    for e in graph.edges:
        if e.type == RelationType.INDUCES:
            induces.setdefault(e.source, []).append(e.target)
            evidence.setdefault(e.source, e.evidence_text)
            if types.get(e.source) == NodeType.past_history:
                linked_history.add(e.source)
            if types.get(e.target) == NodeType.past_history:
                linked_history.add(e.target)
    for ph in graph.past_history:
        if ph.id in linked_history:
            blocks.append(Block("history", _interval(graph, ph.duration_ids), history=ph))
            narrated.add((ph.id, ph.duration_ids[0] if ph.duration_ids else None))
    for src, targets in induces.items():
        node = graph.node(src)
        ids = getattr(node, "duration_ids", [])
        blocks.append(Block("induces", _interval(graph, ids), source_id=src, target_ids=sorted(targets),
                            evidence=evidence.get(src)))
    blocks.sort(key=Block.sort_key)
    first_dx: dict[str, int] = {}
    for i, b in enumerate(blocks):
        if b.kind == "episode" and b.diagnosis is not None:
            first_dx.setdefault(b.diagnosis.id, i)
    closing = [ph for ph in graph.past_history if ph.id not in linked_history]
    return NarrativePlan(blocks=blocks, closing_history=closing, first_dx_block=first_dx, narrated=narrated)
