"""The clinical facts of a graph as normalised tuples: what a text generated from the graph must state, and how.

A :class:`Fact` is one diagnosis, treatment, symptom or relative's condition with its status folded into one
string. Keys are normalised so that two graphs that name the same thing differently still compare equal:

* a diagnosis by its ``rules/dsm`` rule (its id, or the rule its label matches), else its normalised label; a
  past-history item that names a DSM diagnosis is that diagnosis with status ``confirmed/past`` (the rules
  extractor files a remitted diagnosis outside the assessment as past history);
* a treatment by the medication or therapy lexicon entry its whole name matches (brand or generic), else its
  normalised name;
* a symptom by the symptom lexicon entry its whole headword matches, else its normalised headword;
* a relative's condition by its condition's key (whose relative is not compared).

Statuses: ``<certainty>/<temporality>`` for a diagnosis (``ruled_out`` alone: an excluded diagnosis has no
time), the treatment status, the symptom assertion (a present symptom not current at the visit counts as
historical, see :func:`symptom_status`), the relative's certainty. Where a graph holds several nodes
with one key (two mentions the extractor did not merge), the status that the extractor's own precedence keeps
is the graph's: the patient has it over may have it over had it.

Example::

    >>> from anonpsy.graph import CaseGraph, Diagnosis, Certainty
    >>> g = CaseGraph(case_id="x", diagnoses=[Diagnosis(id="dx_1", label="ADHD", certainty=Certainty.ruled_out)])
    >>> [(f.kind, f.key, f.status) for f in graph_facts(g)]
    [('diagnosis', 'dsm:attention_deficit_hyperactivity_disorder', 'ruled_out')]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from anonpsy.graph import (
    Assertion,
    CaseGraph,
    Certainty,
    Diagnosis,
    FamilyHistory,
    HistoryStatus,
    Symptom,
    Temporality,
    Treatment,
    TreatmentStatus,
    TreatmentType,
)

FactKind = Literal["diagnosis", "treatment", "symptom", "family"]
FACT_KINDS: tuple[FactKind, ...] = ("diagnosis", "treatment", "symptom", "family")

#: When one graph holds several nodes with one key, the status kept (first listed wins).
_DX_ORDER = ("confirmed/current", "provisional/current", "rule_out/current", "confirmed/past", "provisional/past",
             "rule_out/past", "ruled_out")
_TX_ORDER = tuple(s.value for s in (TreatmentStatus.current, TreatmentStatus.prn, TreatmentStatus.planned,
                                    TreatmentStatus.past, TreatmentStatus.refused))
_SX_ORDER = tuple(a.value for a in (Assertion.present, Assertion.possible, Assertion.historical,
                                    Assertion.hypothetical, Assertion.absent))
_FAM_ORDER = ("confirmed", "possible")
ORDER: dict[FactKind, tuple[str, ...]] = {"diagnosis": _DX_ORDER, "treatment": _TX_ORDER, "symptom": _SX_ORDER,
                                          "family": _FAM_ORDER}


@dataclass(frozen=True)
class Fact:
    """One clinical fact: kind, normalised key, normalised status, the graph node that holds it (``fh_<i>`` for
    the i-th relative's condition) and its display name as the graph writes it."""

    kind: FactKind
    key: str
    status: str
    node_id: str
    name: str

    @property
    def ident(self) -> tuple[str, str]:
        return (self.kind, self.key)


def _norm(s: str) -> str:
    from anonpsy.rules.dsm import normalize_label

    return normalize_label(s)


@lru_cache(maxsize=4096)
def dx_key(label: str, rule_id: str | None = None) -> str:
    """A diagnosis' key: ``dsm:<rule id>`` when it has or matches a DSM rule, else ``label:<normalised label>``."""
    from anonpsy.rules.dsm import match_label, rules_by_id

    if rule_id and rule_id in rules_by_id():
        return f"dsm:{rule_id}"
    rule = match_label(label)
    return f"dsm:{rule.id}" if rule is not None else f"label:{_norm(label)}"


def _whole_term(text: str, kind: Literal["medication", "therapy", "symptom"]) -> str | None:
    from anonpsy.lexicon import find_terms

    hits = find_terms(text, kind)
    if len(hits) == 1 and hits[0].start == 0 and hits[0].end == len(text.strip()):
        return hits[0].id
    return None


@lru_cache(maxsize=4096)
def treatment_key(name: str) -> str:
    """A treatment's key: the medication or therapy lexicon entry its whole name matches, else its name."""
    name = name.strip()
    term = _whole_term(name, "medication") or _whole_term(name, "therapy")
    return f"lex:{term}" if term else f"name:{_norm(name)}"


@lru_cache(maxsize=4096)
def symptom_key(headword: str) -> str:
    """A symptom's key: the symptom lexicon entry its whole headword matches, else its headword."""
    headword = headword.strip()
    term = _whole_term(headword, "symptom")
    return f"lex:{term}" if term else f"name:{_norm(headword)}"


def family_key(f: FamilyHistory) -> str:
    """A relative's condition by the condition alone: which relative is a detail extractors name at different
    granularities ("maternal uncle", "uncle", "relative"); that the condition is a relative's, and how sure, is
    what the comparison keeps."""
    return dx_key(f.condition)


def dx_status(d: Diagnosis) -> str:
    if d.certainty == Certainty.ruled_out:
        return "ruled_out"
    return f"{d.certainty.value}/{d.temporality.value}"


def symptom_status(s: Symptom) -> str:
    """A symptom's assertion, with a present symptom that is not current at the visit counted as historical: the
    patient had it, and when is told by its durations (the rules extractor marks a symptom current exactly when
    it is not historical)."""
    if s.assertion == Assertion.present and not s.current_symptom:
        return Assertion.historical.value
    return s.assertion.value


def _treatment_status(t: Treatment) -> str:
    return t.status.value


def node_facts(g: CaseGraph) -> list[Fact]:
    """One fact per node of ``g`` (several nodes may share a key)."""
    out: list[Fact] = []
    for d in g.diagnoses:
        out.append(Fact("diagnosis", dx_key(d.label, d.rule_id), dx_status(d), d.id, d.label))
    for p in g.past_history:
        key = dx_key(p.condition)
        if key.startswith("dsm:") and p.status != HistoryStatus.denied:
            out.append(Fact("diagnosis", key, f"{Certainty.confirmed.value}/{Temporality.past.value}", p.id,
                            p.condition))
    for t in g.treatments:
        out.append(Fact("treatment", treatment_key(t.name), _treatment_status(t), t.id, t.name))
    for s in g.symptoms:
        out.append(Fact("symptom", symptom_key(s.headword), symptom_status(s), s.id, s.headword))
    for i, f in enumerate(g.family_history):
        out.append(Fact("family", family_key(f), f.certainty.value, f"fh_{i}", f.condition))
    return out


def graph_facts(g: CaseGraph) -> list[Fact]:
    """Every diagnosis, treatment, symptom and relative's condition of ``g`` as a fact, one per key (where
    several nodes share a key, the status of :data:`ORDER` that comes first)."""
    out: dict[tuple[str, str], Fact] = {}
    for f in node_facts(g):
        old = out.get(f.ident)
        order = ORDER[f.kind]
        if old is None or order.index(f.status) < order.index(old.status):
            out[f.ident] = f
    return list(out.values())


def is_medication(t: Treatment) -> bool:
    return t.type == TreatmentType.medication
