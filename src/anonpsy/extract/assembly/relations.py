"""Relations of the collected nodes: MANIFESTS_AS from the DSM symptom sets, TREATMENT_OF from medication-class
indications and narrative proximity, INDUCES from etiologic cues."""

from __future__ import annotations

import re
from functools import lru_cache

from anonpsy import lexicon
from anonpsy.caseless import Caseless
from anonpsy.extract.assembly.accumulator import Accumulator, slug
from anonpsy.extract.mentions.diagnoses import find_diagnoses
from anonpsy.extract.sections import Sentence
from anonpsy.graph import (
    Edge,
    HistoryStatus,
    PastHistory,
    RelationType,
    TreatmentType,
)
from anonpsy.rules import dsm as dsm_rules
from anonpsy.rules import tables

_CAUSAL = Caseless(re.compile(r"\b(?:due to|secondary to|induced by|caused by|triggered by|precipitated by|"
                              r"in the context of|after (?:starting|using|smoking|taking|drinking)|following "
                              r"(?:use of|heavy)|withdrawal from)\b", re.I))
_SUBSTANCE_DX = re.compile(r"(?:substance|medication|alcohol|cannabis|stimulant|methamphetamine|cocaine|opioid)"
                           r"[- ]induced|withdrawal|intoxication", re.I)


@lru_cache(maxsize=4096)
def _causal_cue(text: str) -> tuple[int, int] | None:
    """Where the first causal cue of :data:`_CAUSAL` in a sentence lies, or None."""
    # every read of a text asks again about the sentences it shares with another (a round-trip probe's lead)
    cue = _CAUSAL.search(text)
    return None if cue is None else cue.span()


#: The symptoms of each DSM rule as headwords (lower case) and as symptom ids, by ``id`` of the rule (kept with the
#: rule, which the loaded rule set holds as long as it is used): every read of a text that names the diagnosis asks.
_RULE_SYMPTOMS: dict[int, tuple[dsm_rules.DsmRule, frozenset[str], frozenset[str]]] = {}


def _rule_symptoms(rule: dsm_rules.DsmRule) -> tuple[frozenset[str], frozenset[str]]:
    hit = _RULE_SYMPTOMS.get(id(rule))
    if hit is None or hit[0] is not rule:
        hit = (rule, frozenset(h.lower() for h in rule.symptoms), frozenset(f"sx_{slug(h)}" for h in rule.symptoms))
        _RULE_SYMPTOMS[id(rule)] = hit
    return hit[1], hit[2]


def derive_relations(text: str, sents: list[Sentence], acc: Accumulator) -> None:
    """Deterministic relations of the collected nodes: MANIFESTS_AS from the DSM symptom sets, TREATMENT_OF from
    medication-class indications and narrative proximity, INDUCES from etiologic cues with verbatim evidence."""
    rules = dsm_rules.rules_by_id()
    # MANIFESTS_AS from the per-diagnosis symptom sets.
    for dx in acc.diagnoses.values():
        rule = rules.get(dx.rule_id or "")
        if rule is None:
            continue
        wanted, wanted_ids = _rule_symptoms(rule)
        for sx in acc.symptoms.values():
            if sx.headword.lower() in wanted or sx.id in wanted_ids:  # a symptom told by a name of its own
                acc.edges.append(Edge(type=RelationType.MANIFESTS_AS, source=dx.id, target=sx.id))
    # TREATMENT_OF from medication class indications, nearest diagnosis by narrative position on ties.
    for t in acc.treatments.values():
        if t.type != TreatmentType.medication:
            targets = sorted(acc.diagnoses.values(), key=lambda d: abs(acc.mentions.get(d.id, 0)
                                                                       - acc.mentions.get(t.id, 0)))
            if targets:
                acc.edges.append(Edge(type=RelationType.TREATMENT_OF, source=t.id, target=targets[0].id))
            continue
        cls = acc.med_class.get(t.id)
        if cls is None:
            continue
        chapters, rule_ids = tables.class_indications(cls)
        cands = [d for d in acc.diagnoses.values()
                 if (d.rule_id in rule_ids) or (rules.get(d.rule_id or "") is not None
                                                 and rules[d.rule_id or ""].chapter in chapters)]
        cands.sort(key=lambda d: abs(acc.mentions.get(d.id, 0) - acc.mentions.get(t.id, 0)))
        for d in cands[:1]:
            acc.edges.append(Edge(type=RelationType.TREATMENT_OF, source=t.id, target=d.id))
    # INDUCES: etiologic morphology of substance-induced diagnoses and causal cue phrases with verbatim evidence.
    for s in sents:
        cue = _causal_cue(s.text)
        if cue is None:
            continue
        before, after = s.text[:cue[0]], s.text[cue[1]:]
        effects = _nodes_in(before, acc) or _nodes_in(s.text, acc, kinds=("dx",))
        causes = _nodes_in(after, acc, kinds=("ph", "tx", "sx", "dx"))
        for cause in causes[:1]:
            for effect in effects[:2]:
                if cause == effect or (cause.startswith("sx_") and effect.startswith("dx_")):
                    continue  # a symptom does not induce a diagnosis (rules/graph/edge_pairs.yaml)
                acc.edges.append(Edge(type=RelationType.INDUCES, source=cause, target=effect,
                                      evidence_text=s.text.strip()))
    for dx in acc.diagnoses.values():
        if not _SUBSTANCE_DX.search(dx.label) or any(e.type == RelationType.INDUCES and e.target == dx.id
                                                    for e in acc.edges):
            continue
        subst = [sx for sx in acc.symptoms.values() if sx.headword.endswith(" use")]
        for sx in subst[:1]:
            # The substance use is the cause: recorded as active history ("methamphetamine use") → diagnosis.
            pid = f"ph_{slug(sx.headword)}"
            if pid not in acc.past:
                acc.past[pid] = PastHistory(id=pid, condition=sx.headword, status=HistoryStatus.active,
                                            evidence_text=sx.evidence_text)
            acc.edges.append(Edge(type=RelationType.INDUCES, source=pid, target=dx.id,
                                  evidence_text=dx.evidence_text))


def _nodes_in(fragment: str, acc: Accumulator, kinds: tuple[str, ...] = ("dx", "sx")) -> list[str]:
    out: list[str] = []
    low = fragment.lower()
    if "dx" in kinds:
        for _start, _e, rule_id in find_diagnoses(fragment):
            did = f"dx_{slug(rule_id)}"
            if did in acc.diagnoses and did not in out:
                out.append(did)
    if "sx" in kinds:
        for m in lexicon.find_terms(fragment, "symptom"):
            sid = f"sx_{slug(m.headword)}"
            if sid in acc.symptoms and sid not in out:
                out.append(sid)
    if "tx" in kinds:
        for m in lexicon.find_terms(fragment, "medication"):
            tid = f"tx_{slug(m.headword)}"
            if tid in acc.treatments and tid not in out:
                out.append(tid)
    if "ph" in kinds:
        for pid, ph in acc.past.items():
            if ph.condition.lower() in low and pid not in out:
                out.append(pid)
    return out


def dedupe_edges(edges: list[Edge]) -> list[Edge]:
    return list({e.key(): e for e in edges}.values())
