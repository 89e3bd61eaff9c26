"""Round-trip check of generated text: the rules extractor re-reads it and must find the perturbed graph's
diagnoses and current symptoms."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from anonpsy.extract import extract_facts
from anonpsy.graph import CaseGraph
from anonpsy.rules import dsm as dsm_rules


@dataclass(frozen=True)
class Gap:
    """A diagnosis or current symptom of the graph that the rules extractor did not find in the text."""

    kind: Literal["diagnosis", "symptom"]
    node_id: str
    term: str


def _rule_id(label: str) -> str | None:
    rule = dsm_rules.match_label(label)
    return rule.id if rule is not None else None


def read_back(text: str) -> CaseGraph:
    """The facts the rules extractor reads in generated ``text`` (those of extract(), for a fraction of the work)."""
    return extract_facts(text, case_id="roundtrip")


def roundtrip_gaps(graph: CaseGraph, text: str, reread: CaseGraph | None = None) -> list[Gap]:
    """Diagnoses (by DSM rule) and current symptoms (by headword) of ``graph`` missing from the re-read ``text``
    (``reread``: :func:`read_back` of ``text`` when the caller already has it)."""
    if reread is None:
        reread = read_back(text)
    dx_found = {d.rule_id or _rule_id(d.label) for d in reread.diagnoses}
    dx_found |= {_rule_id(p.condition) for p in reread.past_history}
    sx_found = {s.headword for s in reread.symptoms}
    gaps: list[Gap] = []
    for d in graph.diagnoses:
        rid = d.rule_id or _rule_id(d.label)
        if rid is None or rid not in dx_found:
            gaps.append(Gap("diagnosis", d.id, d.label))
    for s in graph.symptoms:
        if s.current_symptom and s.headword not in sx_found:
            gaps.append(Gap("symptom", s.id, s.headword))
    return gaps
