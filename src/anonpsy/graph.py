"""The semantic graph of one psychiatric case.

Case-level attributes (demographics, test results, family history) sit outside the relational graph; nodes are
diagnoses, symptoms, treatments, past-history items and exactly one visit event; edges are typed relations; every
temporal fact lives in one shared pool of durations referenced by id.

Time is measured in integer days relative to the index encounter (day 0; negative = before). A duration
``(offset, span, unit)`` denotes the half-open interval ``[offset * u, (offset + span) * u)`` where ``u`` is the
length of the unit in days. ``ongoing`` durations continue through the visit; the temporal engine gives every
duration a finite span (see :mod:`anonpsy.temporal`).

Schema version 2 gives every clinical fact an assertion status and the evidence that decided it:

* a diagnosis has a ``certainty`` (confirmed, provisional, rule_out, ruled_out) and a ``temporality`` (current,
  past); a symptom an ``assertion`` (present, absent, possible, hypothetical, historical); a treatment a
  ``status`` (current, past, planned, refused, prn) and, when stated, why it was stopped; a relative's condition a
  ``certainty`` (confirmed, possible). A relative's condition lives only in ``family_history``.
* each status carries an :class:`Evidence`: the character span of the source sentence that decided it (offsets,
  never the text), the section it sits in, and the id of the rule that decided it. Rule ids are dotted and say
  where the rule lives: ``context.<trigger id>`` (a ConText trigger of ``rules/lexicon/context.yaml``),
  ``section.<section>`` (the section decided), ``time.<what>`` (a temporal expression decided), ``cue.<name>``
  (a named cue pattern of the extractor), ``default`` (nothing contradicted the default value), ``llm.<template>``
  (read from a language-model reply and checked), ``migrate.v1.<field>.<old value>`` (migrated from a version-1
  graph), ``manual`` (written by hand), ``implied.<field>`` (inferred from other fields, not read in the note:
  never told as a fact of the note).
* the visit's legal status carries an evidence too: the sentence that states it (``cue.legal_status.<value>``),
  or ``implied.legal_status`` when only the setting and the way of arriving imply it (an outpatient visit is
  voluntary). A graph without it (written before the field existed, by hand, or by the language-model backend)
  reads as before: a status that differs from the implied one counts as stated.
* the mental status examination is a :class:`MentalStatus` of short normalised values (the patient's quoted mood
  is kept only as a flag) and test results are structured :class:`TestValue` items whose pools come from
  ``rules/test_values``. Source text that could not be structured is not carried: it is counted in ``omitted``.

Version-1 graphs are migrated on load (:mod:`anonpsy.migrate`); graphs are always written as version 2.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

SCHEMA_VERSION: Literal["2"] = "2"

Id = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)]
CaseId = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=128)]
RuleId = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*(?:\.[a-z0-9][a-z0-9_-]*)*$", max_length=128,
                              description="Dotted id of the rule that decided a value, e.g. context.neg.denies.")]
SectionName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)]
#: A short normalised value: lower case, no sentence punctuation, so no name or quotation can ride along.
ShortValue = Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[a-z0-9][a-z0-9 ,;/()+'%<>=-]*$")]


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
    denied = "denied"  # stated never had: "No past psychiatric history", "denies a history of stroke"


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


class Certainty(StrEnum):
    """How sure the clinician is that the patient has a diagnosis."""

    confirmed = "confirmed"
    provisional = "provisional"  # possible, probable, suspected, working or differential diagnosis
    rule_out = "rule_out"  # to be ruled out: under consideration, not yet decided
    ruled_out = "ruled_out"  # considered and excluded ("does not meet criteria", "testing did not support")

    def is_asserted(self) -> bool:
        """The patient is said to have it (confirmed or provisional)."""
        return self in (Certainty.confirmed, Certainty.provisional)


class Temporality(StrEnum):
    """Whether a diagnosis holds at the index encounter."""

    current = "current"
    past = "past"  # remitted, resolved, a history of


class Assertion(StrEnum):
    """Whether the patient has a symptom."""

    present = "present"
    absent = "absent"  # denied or negated
    possible = "possible"  # uncertain, questionable, suspected
    hypothetical = "hypothetical"  # conditional or future ("return if suicidal thoughts occur")
    historical = "historical"  # had it before, asserted as past


class TreatmentStatus(StrEnum):
    """Whether the patient takes, took, will take or declined a treatment."""

    current = "current"
    past = "past"  # discontinued, tried before
    planned = "planned"  # recommended, to start, to consider
    refused = "refused"  # declined by the patient
    prn = "prn"  # as needed, or a one-time dose


class FamilyCertainty(StrEnum):
    """How sure the source is about a relative's condition ("may have had" is possible)."""

    confirmed = "confirmed"
    possible = "possible"


class Ideation(StrEnum):
    """Suicidal or homicidal ideation at the mental status examination."""

    absent = "absent"
    passive = "passive"  # death wishes without a wish to act
    present = "present"  # active ideation, no plan stated
    plan = "plan"  # with a plan
    intent = "intent"  # with intent to act


class TestKind(StrEnum):
    """The kind of a test value (the first four are the categories of ``rules/test_values``)."""

    __test__ = False  # not a pytest test class

    lab = "lab"
    vital = "vital"
    rating_scale = "rating_scale"
    cognition = "cognition"
    imaging = "imaging"
    other = "other"


class ReferenceFlag(StrEnum):
    """A test value against its reference range or screen threshold."""

    normal = "normal"
    low = "low"
    high = "high"
    abnormal = "abnormal"
    positive = "positive"
    negative = "negative"
    unknown = "unknown"


# ---------------------------------------------------------------------------------------------------------------
# Evidence


class Evidence(_Model):
    """Why a status has its value: where in the source it was decided and which rule decided it.

    ``start``/``end`` are character offsets into the source narrative of the sentence that decided the status (never
    the text itself); both are absent when the graph was not extracted from a text (written by hand, migrated).
    ``section`` is the canonical section that sentence sits in (see :mod:`anonpsy.extract.sections`).
    """

    start: int | None = Field(default=None, ge=0)
    end: int | None = Field(default=None, ge=1)
    section: SectionName | None = None
    rule_id: RuleId

    @model_validator(mode="after")
    def _span(self) -> Evidence:
        if (self.start is None) != (self.end is None):
            raise ValueError("evidence start and end are given together or not at all")
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise ValueError("evidence end must be after its start")
        return self


# ---------------------------------------------------------------------------------------------------------------
# Case-level attributes


class Demographics(_Model):
    age: int | None = Field(default=None, ge=0, le=120, description="Present age in years at day 0.")
    sex: Sex = Sex.unknown
    ethnicity: str | None = None
    occupation: str | None = None
    family_structure: str | None = None


class TestValue(_Model):
    """One test result: a laboratory value, a vital sign, a rating-scale or cognitive score, an imaging finding.

    A numeric result has ``value`` (the number as written, without thousands separators) and ``unit``; a
    qualitative one has ``result`` ("positive for cannabinoids", "no acute abnormality"). ``rule_id`` names the
    ``rules/test_values`` entry (``test_values.<id>``) whose pools the value is resampled in; a value no entry
    maps keeps ``rule_id`` empty and is never changed. ``interpretation`` is the pool the value falls in.
    """

    __test__: ClassVar[bool] = False  # not a pytest test class

    id: Id
    kind: TestKind = TestKind.lab
    name: str = Field(min_length=1, max_length=100, description="The test's name ('Serum lithium concentration').")
    value: str | None = Field(default=None, pattern=r"^\d+(?:\.\d+)?$", max_length=16)
    unit: str | None = Field(default=None, max_length=24)
    result: ShortValue | None = None
    flag: ReferenceFlag = ReferenceFlag.unknown
    interpretation: str | None = Field(default=None, max_length=80)
    rule_id: RuleId | None = None
    evidence: Evidence | None = None

    @property
    def test_id(self) -> str | None:
        """The ``rules/test_values`` id of a mapped value."""
        prefix = "test_values."
        return self.rule_id[len(prefix):] if self.rule_id and self.rule_id.startswith(prefix) else None


class Omission(_Model):
    """Source text of a structured section that could not be structured and is therefore not in the graph.

    Counted, located by offsets when the source is known, never copied: nothing is dropped silently.
    """

    field: Literal["labs", "imaging", "other", "mental_status"]
    words: int = Field(ge=0)
    start: int | None = Field(default=None, ge=0)
    end: int | None = Field(default=None, ge=1)
    reason: str = Field(pattern=r"^[A-Z][A-Z0-9_]*$", description="Why it was not structured, e.g. UNPARSED.")

    @model_validator(mode="after")
    def _span(self) -> Omission:
        if (self.start is None) != (self.end is None):
            raise ValueError("omission start and end are given together or not at all")
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise ValueError("omission end must be after its start")
        return self


class TestResults(_Model):
    __test__: ClassVar[bool] = False  # not a pytest test class

    values: list[TestValue] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_ids(self) -> TestResults:
        ids = [v.id for v in self.values]
        if len(set(ids)) != len(ids):
            raise ValueError("duplicate test value id")
        return self


MSE_FIELDS: tuple[str, ...] = (
    "appearance", "behavior", "speech", "mood", "affect", "thought_process", "thought_content",
    "suicidal_ideation", "homicidal_ideation", "perception", "cognition", "orientation", "insight", "judgment",
)


class MentalStatus(_Model):
    """The mental status examination as short normalised findings, one field per domain (None = not reported).

    ``mood`` is a normalised category ("depressed", "anxious", "euthymic"); when the source quoted the patient's
    own words, ``mood_quoted`` is set and the words themselves are not kept.
    """

    appearance: ShortValue | None = None
    behavior: ShortValue | None = None
    speech: ShortValue | None = None
    mood: ShortValue | None = None
    mood_quoted: bool = False
    affect: ShortValue | None = None
    thought_process: ShortValue | None = None
    thought_content: ShortValue | None = None
    suicidal_ideation: Ideation | None = None
    homicidal_ideation: Ideation | None = None
    perception: ShortValue | None = None
    cognition: ShortValue | None = None
    orientation: ShortValue | None = None
    insight: ShortValue | None = None
    judgment: ShortValue | None = None
    evidence: Evidence | None = None

    def present_fields(self) -> tuple[str, ...]:
        return tuple(f for f in MSE_FIELDS if getattr(self, f) is not None)


class FamilyHistory(_Model):
    member: str
    condition: str
    certainty: FamilyCertainty = FamilyCertainty.confirmed
    certainty_evidence: Evidence | None = None
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
    certainty: Certainty = Certainty.confirmed
    certainty_evidence: Evidence | None = None
    temporality: Temporality = Temporality.current
    temporality_evidence: Evidence | None = None
    duration_ids: list[str] = Field(default_factory=list)
    evidence_text: str | None = None

    @model_validator(mode="after")
    def _named(self) -> Diagnosis:
        """A diagnosis is told by its name: never an empty label, nor the word "None" standing for one."""
        if not self.label.strip() or self.label.strip().lower() in ("none", "null"):
            raise ValueError(f"diagnosis {self.id} has no name")
        return self

    @property
    def asserted(self) -> bool:
        """The patient is said to have (or have had) it: confirmed or provisional."""
        return self.certainty.is_asserted()


class Symptom(_Model):
    id: Id
    headword: str = Field(description="DSM-aligned headword, e.g. 'persecutory delusion'.")
    pattern: str | None = Field(default=None, description="Course pattern, e.g. episodic, persistent, worsening.")
    current_symptom: bool = False
    assertion: Assertion = Assertion.present
    assertion_evidence: Evidence | None = None
    evidence_text: str | None = None
    contexts: list[STEB] = Field(default_factory=list)
    duration_ids: list[str] = Field(default_factory=list)

    @property
    def asserted(self) -> bool:
        """The patient has, had or may have it (not denied, not merely hypothetical)."""
        return self.assertion not in (Assertion.absent, Assertion.hypothetical)


class Treatment(_Model):
    id: Id
    type: TreatmentType = TreatmentType.medication
    name: str
    dose: str | None = None
    route: Route | None = None
    frequency: str | None = None
    status: TreatmentStatus = TreatmentStatus.current
    status_evidence: Evidence | None = None
    discontinued_reason: ShortValue | None = Field(default=None, description="Why it was stopped, when stated.")
    outcome: str | None = None
    duration_ids: list[str] = Field(default_factory=list)
    evidence_text: str | None = None


class PastHistory(_Model):
    id: Id
    condition: str
    status: HistoryStatus = HistoryStatus.unknown
    status_evidence: Evidence | None = None
    duration_ids: list[str] = Field(default_factory=list)
    evidence_text: str | None = None


#: Evidence rule of a legal status that no sentence states: the setting and the way of arriving imply it.
LEGAL_IMPLIED_RULE = "implied.legal_status"


class VisitEvent(_Model):
    id: Id = "visit"
    setting: Setting = Setting.unknown
    arrival_mode: ArrivalMode = ArrivalMode.unknown
    legal_status: LegalStatus = LegalStatus.unknown
    legal_status_evidence: Evidence | None = Field(
        default=None, description="Where the note states the legal status (rule cue.legal_status.<value>), or the "
        "rule implied.legal_status when only the setting and the way of arriving imply it; absent when not recorded.")
    reason_for_visit: str | None = None
    safety_flags: list[SafetyFlag] = Field(default_factory=list)
    source_of_information: list[str] = Field(default_factory=list)
    visit_episode: str | None = Field(default=None, description="Narrative of the index episode.")
    pathway: str | None = Field(default=None, description="Disposition / care pathway, e.g. admitted to ward.")

    @model_validator(mode="after")
    def _legal_evidence(self) -> VisitEvent:
        ev = self.legal_status_evidence
        if ev is not None and self.legal_status == LegalStatus.unknown:
            raise ValueError("an unknown legal status has no evidence")
        if ev is not None and ev.rule_id == LEGAL_IMPLIED_RULE and ev.start is not None:
            raise ValueError("an implied legal status is read in no sentence: its evidence has no offsets")
        return self


#: Outpatient-like settings, where care is voluntary unless the text says otherwise.
_VOLUNTARY_BY_DEFAULT = {Setting.outpatient, Setting.telehealth, Setting.community}
#: Ways of arriving that are voluntary by definition (coming on one's own, a booked visit, a clinician referral).
_VOLUNTARY_ARRIVALS = {ArrivalMode.self, ArrivalMode.scheduled, ArrivalMode.referral}


def implied_legal_status(setting: Setting, arrival: ArrivalMode) -> LegalStatus:
    """The legal status a visit has by its setting and way of arriving alone, when the note states none: voluntary
    for outpatient-like settings and for patients who came on their own, for a booked visit or on a clinician's
    referral (not in a forensic setting); else unknown. A text generated from the graph does not state it as a
    fact of the note (it is inferred, not read)."""
    voluntary = setting in _VOLUNTARY_BY_DEFAULT or (arrival in _VOLUNTARY_ARRIVALS and setting != Setting.forensic)
    return LegalStatus.voluntary if voluntary else LegalStatus.unknown


def legal_status_stated(visit: VisitEvent) -> bool:
    """Whether the note states the visit's legal status (then a text made from the graph tells it): its evidence
    names a sentence; ``implied.legal_status`` is only inferred. A graph that records no evidence (written before
    the field existed, by hand, or by the language-model backend) counts a status as stated when it differs from
    the one its setting and way of arriving imply."""
    if visit.legal_status == LegalStatus.unknown:
        return False
    ev = visit.legal_status_evidence
    if ev is None:
        return visit.legal_status != implied_legal_status(visit.setting, visit.arrival_mode)
    return ev.rule_id != LEGAL_IMPLIED_RULE


class Edge(_Model):
    type: RelationType
    source: str
    target: str
    evidence_text: str | None = None

    def key(self) -> tuple[str, str, str]:
        return (self.type.value, self.source, self.target)


class CaseGraph(_Model):
    schema_version: Literal["2"] = SCHEMA_VERSION
    case_id: CaseId
    demographics: Demographics = Field(default_factory=Demographics)
    mental_status: MentalStatus = Field(default_factory=MentalStatus)
    test_results: TestResults = Field(default_factory=TestResults)
    family_history: list[FamilyHistory] = Field(default_factory=list)
    diagnoses: list[Diagnosis] = Field(default_factory=list)
    symptoms: list[Symptom] = Field(default_factory=list)
    treatments: list[Treatment] = Field(default_factory=list)
    past_history: list[PastHistory] = Field(default_factory=list)
    visit_event: VisitEvent = Field(default_factory=VisitEvent)
    durations: list[Duration] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)
    omitted: list[Omission] = Field(default_factory=list)

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
