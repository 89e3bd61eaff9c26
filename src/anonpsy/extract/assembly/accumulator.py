"""The nodes, durations and edges collected while reading a narrative."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from anonpsy.extract.mentions.family import canonical_condition, normalize_condition
from anonpsy.graph import (
    Diagnosis,
    Duration,
    Edge,
    Evidence,
    FamilyCertainty,
    FamilyHistory,
    PastHistory,
    Sex,
    Symptom,
    Treatment,
)
from anonpsy.temporal import TimeSpec

if TYPE_CHECKING:
    from anonpsy.extract.assertion.status import Decision, DiagnosisStatus
    from anonpsy.graph import TreatmentStatus


@dataclass
class DiagnosisVote:
    """One patient mention of a diagnosis: its status, the sentence, and what it says beyond the status."""

    status: DiagnosisStatus
    sentence_index: int
    evidence_text: str
    spec: TimeSpec | None = None
    specifiers: tuple[str, ...] = ()


@dataclass
class Accumulator:
    """Nodes, durations and edges collected while reading a narrative (shared with the LLM backend's extraction)."""

    symptoms: dict[str, Symptom] = field(default_factory=dict)
    durations: list[Duration] = field(default_factory=list)
    diagnoses: dict[str, Diagnosis] = field(default_factory=dict)
    treatments: dict[str, Treatment] = field(default_factory=dict)
    past: dict[str, PastHistory] = field(default_factory=dict)
    family: list[FamilyHistory] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    mentions: dict[str, int] = field(default_factory=dict)  # node id -> first sentence index
    med_class: dict[str, str] = field(default_factory=dict)  # treatment id -> medication class id
    present: set[str] = field(default_factory=set)  # symptom ids with a mention present at the visit
    flaggable: set[str] = field(default_factory=set)  # headwords present at the visit in words, not a lab value
    # symptom ids asserted by a cue (not by default), and where the last mention read as present sits
    cued_present: set[str] = field(default_factory=set)
    last_present: dict[str, int] = field(default_factory=dict)
    admission_reason: set[str] = field(default_factory=set)  # symptoms told present only as an admission's reason
    told_present: set[str] = field(default_factory=set)  # symptoms told present otherwise
    asserted_in: dict[str, set[str]] = field(default_factory=dict)  # symptom id -> sections asserting it
    exam_text: list[str] = field(default_factory=list)  # sentences of the mental status and physical examination
    index_is_admission: bool = False  # a discharge summary: day 0 is the admission
    patient_sex: Sex | None = None  # the patient's sex: a pronoun of the other sex is someone else
    # Symptoms only denied or hypothetical, and diagnoses only to be ruled out or ruled out: they join the graph
    # at the end unless an asserted mention of the same item exists, and take part in no relation.
    unasserted_sx: dict[str, Symptom] = field(default_factory=dict)
    unasserted_dx: dict[str, Diagnosis] = field(default_factory=dict)
    # Every patient mention's status, resolved into one status per diagnosis / treatment at the end.
    dx_votes: dict[str, list[DiagnosisVote]] = field(default_factory=dict)
    dx_names: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (label, dsm rule id)
    tx_votes: dict[str, list[Decision[TreatmentStatus]]] = field(default_factory=dict)
    # votes of a drug named as the cause of a condition ("digoxin toxicity"), weighed only without another mention
    tx_condition_votes: dict[str, list[Decision[TreatmentStatus]]] = field(default_factory=dict)
    # decided mentions of a group of drugs ("stay off antidepressants"): (classes covered, status)
    group_votes: list[tuple[frozenset[str], Decision[TreatmentStatus]]] = field(default_factory=list)
    condition_votes: dict[str, list[DiagnosisVote]] = field(default_factory=dict)  # medical comorbidities
    condition_names: dict[str, str] = field(default_factory=dict)  # condition id -> lexicon phrasing used
    condition_name_ranks: dict[str, tuple[int, int]] = field(default_factory=dict)  # condition id -> its name's rank
    condition_denials: dict[str, tuple[Evidence, str]] = field(default_factory=dict)  # id -> first denial
    #: (condition id, sentence index) of an event the presentation's work-up found ("MRI revealed a right SDH")
    condition_findings_now: set[tuple[str, int]] = field(default_factory=set)
    #: condition id -> (key, qualifiers) of each distinct condition of that entry the note names ("a lacunar
    #: infarct of the right pons" and "an infarct of the left cerebellar hemisphere" are two strokes)
    condition_variants: dict[str, list[tuple[str, frozenset[str]]]] = field(default_factory=dict)

    def duration_for(self, spec: TimeSpec) -> str:
        for d in self.durations:
            if (d.offset, d.span, d.unit, d.ongoing) == (spec.offset, spec.span, spec.unit, spec.ongoing):
                return d.id
        did = f"d{len(self.durations) + 1}"
        self.durations.append(Duration(id=did, offset=spec.offset, span=spec.span, unit=spec.unit,
                                       ongoing=spec.ongoing))
        return did

    def add_family(self, member: str | None, condition: str, evidence: str,
                   certainty: FamilyCertainty = FamilyCertainty.confirmed,
                   certainty_evidence: Evidence | None = None) -> None:
        """Record a relative's condition; a condition inside another of the same sentence and relative, or the
        same condition named again ("seizures" and "seizure type"), merges with it, and confirmed wins over
        possible."""
        cond = normalize_condition(condition)
        mem = member or "relative"
        new = FamilyHistory(member=mem, condition=cond, certainty=certainty, certainty_evidence=certainty_evidence,
                            evidence_text=evidence)
        canon = canonical_condition(cond)
        for i, f in enumerate(self.family):
            have = normalize_condition(f.condition)
            if f.evidence_text != evidence and f.member == mem and canonical_condition(have) == canon:
                # the same relative's same condition told again in another sentence: one fact
                if f.certainty != FamilyCertainty.confirmed and certainty == FamilyCertainty.confirmed:
                    self.family[i] = f.model_copy(update={"certainty": certainty,
                                                          "certainty_evidence": certainty_evidence})
                return
            if f.evidence_text != evidence or (f.member != mem and mem != "relative"):
                continue
            keep = f if f.certainty == FamilyCertainty.confirmed or certainty != FamilyCertainty.confirmed else new
            if re.search(rf"\b{re.escape(cond)}\b", have) or canonical_condition(have) == canon:
                # "anxiety" inside "generalized anxiety" from the same sentence
                self.family[i] = f.model_copy(update={"certainty": keep.certainty,
                                                      "certainty_evidence": keep.certainty_evidence})
                return
            if re.search(rf"\b{re.escape(have)}\b", cond):
                self.family[i] = new.model_copy(update={"member": f.member, "certainty": keep.certainty,
                                                        "certainty_evidence": keep.certainty_evidence})
                return
        self.family.append(new)


@lru_cache(maxsize=4096)
def slug(s: str) -> str:
    # asked again for every mention of a node, on every read of a text
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")[:40] or "x"
