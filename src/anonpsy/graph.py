"""The semantic graph of one psychiatric case.

Case-level attributes (demographics, test results, family history) sit outside the relational graph; nodes are
diagnoses, symptoms, treatments, past-history items and exactly one visit event; edges are typed relations; every
temporal fact lives in one shared pool of durations referenced by id.

Time is measured in integer days relative to the index encounter (day 0; negative = before). A duration
``(offset, span, unit)`` denotes the half-open interval ``[offset * u, (offset + span) * u)`` where ``u`` is the
length of the unit in days. ``ongoing`` durations continue through the visit; the temporal engine gives every
duration a finite span (see :mod:`anonpsy.temporal`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

SCHEMA_VERSION: Literal["1"] = "1"

Id = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)]
CaseId = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=128)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, use_enum_values=False)


class Unit(StrEnum):
    day = "day"
    week = "week"
    month = "month"
    year = "year"


UNIT_DAYS: dict[Unit, int] = {Unit.day: 1, Unit.week: 7, Unit.month: 30, Unit.year: 365}


class Sex(StrEnum):
    female = "female"
    male = "male"
    unknown = "unknown"


class Route(StrEnum):
    """Controlled route vocabulary (mirrors ``rules/treatments/routes.yaml``)."""

    oral = "oral"
    sublingual = "sublingual"
    intramuscular = "intramuscular"
    long_acting_injectable = "long_acting_injectable"
    intravenous = "intravenous"
    subcutaneous = "subcutaneous"
    transdermal = "transdermal"
    intranasal = "intranasal"
    inhaled = "inhaled"
    rectal = "rectal"
    topical = "topical"
    not_applicable = "not_applicable"
    unknown = "unknown"


class TreatmentType(StrEnum):
    medication = "medication"
    psychotherapy = "psychotherapy"
    procedure = "procedure"
    psychosocial = "psychosocial"
    other = "other"


class HistoryStatus(StrEnum):
    chronic = "chronic"
    remitted = "remitted"
    pre_existing = "pre-existing"
    resolved = "resolved"
    active = "active"
    unknown = "unknown"


class Setting(StrEnum):
    emergency_department = "emergency_department"
    inpatient = "inpatient"
    outpatient = "outpatient"
    consultation_liaison = "consultation_liaison"
    telehealth = "telehealth"
    community = "community"
    residential = "residential"
    forensic = "forensic"
    unknown = "unknown"


class ArrivalMode(StrEnum):
    self = "self"
    family = "family"
    police = "police"
    ambulance = "ambulance"
    referral = "referral"
    transfer = "transfer"
    scheduled = "scheduled"
    unknown = "unknown"


class LegalStatus(StrEnum):
    voluntary = "voluntary"
    involuntary = "involuntary"
    legal_hold = "legal_hold"
    court_ordered = "court_ordered"
    unknown = "unknown"


class SafetyFlag(StrEnum):
    suicidal_ideation = "suicidal_ideation"
    suicide_attempt = "suicide_attempt"
    homicidal_ideation = "homicidal_ideation"
    self_harm = "self_harm"
    violence = "violence"
    intoxication = "intoxication"
    medical_instability = "medical_instability"
    vulnerability = "vulnerability"


class RelationType(StrEnum):
    MANIFESTS_AS = "MANIFESTS_AS"
    TREATMENT_OF = "TREATMENT_OF"
    PRESENTS_WITH = "PRESENTS_WITH"
    INDUCES = "INDUCES"


class NodeType(StrEnum):
    diagnosis = "diagnosis"
    symptom = "symptom"
    treatment = "treatment"
    past_history = "past_history"
    visit = "visit"


# ---------------------------------------------------------------------------------------------------------------
# Case-level attributes


class Demographics(_Model):
    age: int | None = Field(default=None, ge=0, le=120, description="Present age in years at day 0.")
    sex: Sex = Sex.unknown
    ethnicity: str | None = None
    occupation: str | None = None
    family_structure: str | None = None


class TestResults(_Model):
    labs: str | None = None
    imaging: str | None = None
    mental_status: str | None = Field(default=None, description="Mental status examination, near-verbatim.")
    other: str | None = None


class FamilyHistory(_Model):
    member: str
    condition: str
    evidence_text: str | None = None


# ---------------------------------------------------------------------------------------------------------------
# Durations


class Duration(_Model):
    id: Id
    offset: int = Field(description="Start, in units, relative to day 0 (negative = before).")
    span: int | None = Field(default=None, ge=1, description="Length in units; None = open-ended.")
    unit: Unit = Unit.day
    ongoing: bool = Field(default=False, description="Continues through the index encounter.")

    def interval(self) -> tuple[int, int]:
        """Canonical half-open interval [start, end) in days. Requires a finite span."""
        if self.span is None:
            raise ValueError(f"duration {self.id} has no finite span; run the temporal engine first")
        u = UNIT_DAYS[self.unit]
        return self.offset * u, (self.offset + self.span) * u

    def signature(self) -> tuple[int, int | None, str, bool]:
        return (self.offset, self.span, self.unit.value, self.ongoing)


# ---------------------------------------------------------------------------------------------------------------
# Nodes


class STEB(_Model):
    """One Situation–Thought–Emotion–Behavior frame; each field optional."""

    situation: str | None = None
    thought: str | None = None
    emotion: str | None = None
    behavior: str | None = None

    def present_fields(self) -> tuple[str, ...]:
        return tuple(f for f in ("situation", "thought", "emotion", "behavior") if getattr(self, f))


class Diagnosis(_Model):
    id: Id
    label: str = Field(description="Diagnosis label as written or canonical DSM-5-TR name.")
    rule_id: str | None = Field(default=None, description="Id of the matching entry in rules/dsm.")
    specifiers: list[str] = Field(default_factory=list)
    status: Literal["current", "provisional", "rule_out", "historical"] = "current"
    duration_ids: list[str] = Field(default_factory=list)
    evidence_text: str | None = None


class Symptom(_Model):
    id: Id
    headword: str = Field(description="DSM-aligned headword, e.g. 'persecutory delusion'.")
    pattern: str | None = Field(default=None, description="Course pattern, e.g. episodic, persistent, worsening.")
    current_symptom: bool = False
    evidence_text: str | None = None
    contexts: list[STEB] = Field(default_factory=list)
    duration_ids: list[str] = Field(default_factory=list)


class Treatment(_Model):
    id: Id
    type: TreatmentType = TreatmentType.medication
    name: str
    dose: str | None = None
    route: Route | None = None
    frequency: str | None = None
    outcome: str | None = None
    duration_ids: list[str] = Field(default_factory=list)
    evidence_text: str | None = None


class PastHistory(_Model):
    id: Id
    condition: str
    status: HistoryStatus = HistoryStatus.unknown
    duration_ids: list[str] = Field(default_factory=list)
    evidence_text: str | None = None


class VisitEvent(_Model):
    id: Id = "visit"
    setting: Setting = Setting.unknown
    arrival_mode: ArrivalMode = ArrivalMode.unknown
    legal_status: LegalStatus = LegalStatus.unknown
    reason_for_visit: str | None = None
    safety_flags: list[SafetyFlag] = Field(default_factory=list)
    source_of_information: list[str] = Field(default_factory=list)
    visit_episode: str | None = Field(default=None, description="Narrative of the index episode.")
    pathway: str | None = Field(default=None, description="Disposition / care pathway, e.g. admitted to ward.")


class Edge(_Model):
    type: RelationType
    source: str
    target: str
    evidence_text: str | None = None

    def key(self) -> tuple[str, str, str]:
        return (self.type.value, self.source, self.target)


class CaseGraph(_Model):
    schema_version: Literal["1"] = SCHEMA_VERSION
    case_id: CaseId
    demographics: Demographics = Field(default_factory=Demographics)
    test_results: TestResults = Field(default_factory=TestResults)
    family_history: list[FamilyHistory] = Field(default_factory=list)
    diagnoses: list[Diagnosis] = Field(default_factory=list)
    symptoms: list[Symptom] = Field(default_factory=list)
    treatments: list[Treatment] = Field(default_factory=list)
    past_history: list[PastHistory] = Field(default_factory=list)
    visit_event: VisitEvent = Field(default_factory=VisitEvent)
    durations: list[Duration] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_ids(self) -> CaseGraph:
        seen: set[str] = set()
        for node_id, _ in self.iter_nodes():
            if node_id in seen:
                raise ValueError(f"duplicate node id {node_id!r}")
            seen.add(node_id)
        dur_seen: set[str] = set()
        for d in self.durations:
            if d.id in dur_seen:
                raise ValueError(f"duplicate duration id {d.id!r}")
            dur_seen.add(d.id)
        return self

    # -- navigation -------------------------------------------------------------------------------------------

    def iter_nodes(self) -> list[tuple[str, NodeType]]:
        out: list[tuple[str, NodeType]] = []
        out += [(n.id, NodeType.diagnosis) for n in self.diagnoses]
        out += [(n.id, NodeType.symptom) for n in self.symptoms]
        out += [(n.id, NodeType.treatment) for n in self.treatments]
        out += [(n.id, NodeType.past_history) for n in self.past_history]
        out.append((self.visit_event.id, NodeType.visit))
        return out

    def node_types(self) -> dict[str, NodeType]:
        return dict(self.iter_nodes())

    def node(self, node_id: str) -> Diagnosis | Symptom | Treatment | PastHistory | VisitEvent:
        for coll in (self.diagnoses, self.symptoms, self.treatments, self.past_history):
            for n in coll:
                if n.id == node_id:
                    return n
        if self.visit_event.id == node_id:
            return self.visit_event
        raise KeyError(node_id)

    def duration_map(self) -> dict[str, Duration]:
        return {d.id: d for d in self.durations}

    def temporal_nodes(self) -> list[Diagnosis | Symptom | Treatment | PastHistory]:
        return [*self.diagnoses, *self.symptoms, *self.treatments, *self.past_history]


NODE_COLLECTIONS: dict[NodeType, str] = {
    NodeType.diagnosis: "diagnoses",
    NodeType.symptom: "symptoms",
    NodeType.treatment: "treatments",
    NodeType.past_history: "past_history",
}
