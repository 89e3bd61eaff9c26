"""Scoring an extracted graph against expected facts (fixtures) or another graph (round trip).

Fields: diagnoses (DSM rule ids), symptoms (headwords), current symptoms, treatments (names), visit scaffold
fields, demographics (age, sex), family history (conditions) and negations (denied symptoms that must be absent).
Diagnoses and symptoms count when asserted: a diagnosis ruled out (or to be ruled out) and a denied or hypothetical
symptom are not a finding of the case.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from anonpsy.graph import CaseGraph


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, other: Counts) -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def _counts(pred: Iterable[str], gold: Iterable[str]) -> Counts:
    p, g = set(pred), set(gold)
    return Counts(tp=len(p & g), fp=len(p - g), fn=len(g - p))


def _norm(s: str) -> str:
    return " ".join(s.lower().replace("-", " ").split())


def treatment_key(name: str) -> str:
    """A treatment's lexicon id when its name is a known drug or therapy (so 'CBT' equals 'cognitive behavioral
    therapy'), else the normalised name."""
    from anonpsy import lexicon

    kinds: tuple[lexicon.TermKind, ...] = ("medication", "therapy")
    for kind in kinds:
        hits = lexicon.find_terms(name, kind)
        if hits and hits[0].end - hits[0].start >= len(name.strip()) * 0.6:
            return f"{kind}:{hits[0].id}"
    return _norm(name)


def condition_key(label: str) -> str:
    """A condition's DSM rule id when it matches one, else the normalised label."""
    from anonpsy.rules.dsm import match_label

    rule = match_label(label)
    return rule.id if rule is not None else _norm(label)


def score_against_expected(graph: CaseGraph, expected: dict[str, Any]) -> dict[str, Counts]:
    """Per-field counts of an extracted graph against a fixture's expected-facts mapping."""
    out: dict[str, Counts] = {}
    out["diagnoses"] = _counts({d.rule_id or _norm(d.label) for d in graph.diagnoses if d.asserted},
                               expected.get("diagnoses", []))
    gold_sx = expected.get("symptoms", [])
    out["symptoms"] = _counts({_norm(s.headword) for s in graph.symptoms if s.asserted},
                              {_norm(s["headword"]) for s in gold_sx})
    pred_cur = {_norm(s.headword) for s in graph.symptoms if s.current_symptom}
    gold_cur = {_norm(s["headword"]) for s in gold_sx if s.get("current")}
    out["current_symptoms"] = _counts(pred_cur, gold_cur)
    out["treatments"] = _counts({treatment_key(t.name) for t in graph.treatments},
                                {treatment_key(t["name"]) for t in expected.get("treatments", [])})
    neg = {_norm(h) for h in expected.get("negated_symptoms", [])}
    present = {_norm(s.headword) for s in graph.symptoms if s.current_symptom}
    out["negations"] = Counts(tp=len(neg - present), fn=len(neg & present))
    visit = expected.get("visit", {})
    vc = Counts()
    for fld in ("setting", "arrival_mode", "legal_status"):
        if fld in visit:
            if getattr(graph.visit_event, fld).value == visit[fld]:
                vc.tp += 1
            else:
                vc.fn += 1
                vc.fp += getattr(graph.visit_event, fld).value != "unknown"
    out["visit"] = vc
    demo = expected.get("demographics", {})
    dc = Counts()
    if "age" in demo:
        ok = graph.demographics.age == demo["age"]
        dc.tp += ok
        dc.fn += not ok
    if "sex" in demo:
        ok = graph.demographics.sex.value == demo["sex"]
        dc.tp += ok
        dc.fn += not ok
    out["demographics"] = dc
    fam_pred = {condition_key(f.condition) for f in graph.family_history}
    fam_gold = {condition_key(f["condition"]) for f in expected.get("family_history", [])}
    out["family_history"] = _counts(fam_pred, fam_gold)
    return out


def score_graphs(pred: CaseGraph, gold: CaseGraph) -> dict[str, Counts]:
    """Round-trip structure score: a re-extracted graph against the graph the text was generated from."""
    return {
        "diagnoses": _counts({d.rule_id or _norm(d.label) for d in pred.diagnoses if d.asserted},
                             {d.rule_id or _norm(d.label) for d in gold.diagnoses if d.asserted}),
        "symptoms": _counts({_norm(s.headword) for s in pred.symptoms if s.asserted},
                            {_norm(s.headword) for s in gold.symptoms if s.asserted}),
        "current_symptoms": _counts({_norm(s.headword) for s in pred.symptoms if s.current_symptom},
                                    {_norm(s.headword) for s in gold.symptoms if s.current_symptom}),
        "treatments": _counts({treatment_key(t.name) for t in pred.treatments},
                              {treatment_key(t.name) for t in gold.treatments}),
        "edges": _counts({f"{e.type.value}:{_label(pred, e.source)}>{_label(pred, e.target)}" for e in pred.edges},
                         {f"{e.type.value}:{_label(gold, e.source)}>{_label(gold, e.target)}" for e in gold.edges}),
    }


def _label(g: CaseGraph, node_id: str) -> str:
    n = g.node(node_id)
    for attr in ("rule_id", "headword", "name", "condition"):
        v = getattr(n, attr, None)
        if v:
            return _norm(str(v))
    return "visit"
