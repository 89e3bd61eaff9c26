"""Hypothesis strategies for anonpsy tests. Each strategy's docstring shows what it generates.

All graphs are structurally valid (ids unique, references resolved, edge pairs permitted) and temporally
normalised where the name says so; clinically feasible graphs are built from the DSM rules themselves.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from anonpsy.graph import (
    STEB,
    ArrivalMode,
    Assertion,
    CaseGraph,
    Certainty,
    Demographics,
    Diagnosis,
    Duration,
    Edge,
    Evidence,
    FamilyCertainty,
    FamilyHistory,
    Ideation,
    LegalStatus,
    MentalStatus,
    PastHistory,
    RelationType,
    Setting,
    Sex,
    Symptom,
    Temporality,
    TestResults,
    TestValue,
    Treatment,
    TreatmentStatus,
    Unit,
    VisitEvent,
)

TEXTS = ["after an argument at work", "believed neighbours were watching", "frightened", "stopped going out",
         "when alone at night", "felt guilty", "paced the corridor", None]
#: Test-result texts read into structured values by the extractor's reader (mapped, unmapped and qualitative).
RESULT_TEXTS = ["TSH 2.4 mIU/L, sodium 139 mmol/L", "Lithium level 0.8 mmol/L", "PHQ-9 18", "MMSE 22/30",
                "BP 128/84, HR 92", "UDS positive for cannabinoids", "INR 1.2, zorblin 55 units", "GAD-7 of 9"]
RULE_IDS = ["default", "context.neg.denies", "context.poss.forward", "context.hist.forward", "section.past_psych",
            "time.past", "cue.prn", "manual"]


@st.composite
def evidences(draw: Any) -> Evidence | None:
    """Evidence of a status, or None: a source span (or none), a section and a rule id.

    e.g. Evidence(start=120, end=164, section='hpi', rule_id='context.neg.denies')
    """
    if draw(st.booleans()):
        return None
    start = draw(st.one_of(st.none(), st.integers(0, 5000)))
    end = None if start is None else start + draw(st.integers(1, 300))
    return Evidence(start=start, end=end, section=draw(st.sampled_from([None, "hpi", "assessment", "mse"])),
                    rule_id=draw(st.sampled_from(RULE_IDS)))


@st.composite
def structured_test_values(draw: Any) -> list[TestValue]:
    """Structured test values as the extractor reads them from realistic result texts, numbered tv_1…

    e.g. [TestValue(id='tv_1', name='Thyroid-stimulating hormone', value='2.4', unit='mIU/L',
    interpretation='normal', rule_id='test_values.tsh'), TestValue(id='tv_2', name='UDS', result='positive for
    cannabinoids', flag=positive)]
    """
    from anonpsy.extract.mentions.results import number_values, parse_results

    values: list[TestValue] = []
    for text in draw(st.lists(st.sampled_from(RESULT_TEXTS), max_size=3, unique=True)):
        values += parse_results(text, "labs")[0]
    return number_values(values)


mental_statuses = st.builds(
    MentalStatus,
    appearance=st.sampled_from([None, "well groomed", "disheveled"]),
    mood=st.sampled_from([None, "depressed", "anxious", "euthymic"]),
    mood_quoted=st.booleans(),
    affect=st.sampled_from([None, "restricted, tearful", "full range"]),
    thought_content=st.sampled_from([None, "no delusions", "paranoid delusions"]),
    suicidal_ideation=st.sampled_from([None, *Ideation]),
    homicidal_ideation=st.sampled_from([None, Ideation.absent]),
    orientation=st.sampled_from([None, "oriented x3"]),
    insight=st.sampled_from([None, "fair", "poor"]),
    evidence=evidences(),
)
mental_statuses.__doc__ = "A mental status examination with some domains filled, e.g. mood='depressed'."


@st.composite
def family_histories(draw: Any) -> list[FamilyHistory]:
    """0–2 relatives' conditions, each confirmed or possible, e.g. [FamilyHistory(member='father',
    condition='bipolar disorder', certainty=possible)]."""
    return [FamilyHistory(member=draw(st.sampled_from(["mother", "father", "sister"])),
                          condition=draw(st.sampled_from(["bipolar disorder", "alcohol use disorder", "diabetes"])),
                          certainty=draw(st.sampled_from(list(FamilyCertainty))), certainty_evidence=draw(evidences()))
            for _ in range(draw(st.integers(0, 2)))]


@st.composite
def unasserted_symptoms(draw: Any, start: int) -> list[Symptom]:
    """0–2 denied or hypothetical symptoms (no duration, never current), ids from ``sx_<start>``."""
    return [Symptom(id=f"sx_{start + i}", headword=draw(st.sampled_from(["suicidal ideation", "hallucination"])),
                    assertion=draw(st.sampled_from([Assertion.absent, Assertion.hypothetical])),
                    assertion_evidence=draw(evidences()))
            for i in range(draw(st.integers(0, 2)))]


@st.composite
def durations(draw: Any, prefix: str = "d", min_size: int = 1, max_size: int = 8) -> list[Duration]:
    """A pool of durations: offsets −400..+10 in a random unit, span 1..24 or open, some ongoing.

    e.g. [Duration(id='d0', offset=-3, span=2, unit=week), Duration(id='d1', offset=-12, span=None, ongoing=True)]
    """
    n = draw(st.integers(min_size, max_size))
    out = []
    for i in range(n):
        unit = draw(st.sampled_from(list(Unit)))
        lim = {Unit.day: 400, Unit.week: 60, Unit.month: 24, Unit.year: 10}[unit]
        offset = draw(st.integers(-lim, 3))
        ongoing = draw(st.booleans()) and offset <= 0
        if ongoing:
            span = draw(st.one_of(st.none(), st.integers(max(1, -offset + 1), -offset + 6)))
        else:
            span = draw(st.one_of(st.none(), st.integers(1, 24)))
        out.append(Duration(id=f"{prefix}{i}", offset=offset, span=span, unit=unit, ongoing=ongoing))
    return out


steb_frames = st.builds(
    STEB,
    situation=st.sampled_from(TEXTS), thought=st.sampled_from(TEXTS),
    emotion=st.sampled_from(TEXTS), behavior=st.sampled_from(TEXTS),
)


@st.composite
def case_graphs(
    draw: Any,
    rule_ids: list[str] | None = None,
    ages: st.SearchStrategy[int] | None = None,
    sexes: st.SearchStrategy[Sex] | None = None,
) -> CaseGraph:
    """A structurally valid, un-normalised case graph.

    1–3 diagnoses (rule ids drawn from ``rule_ids`` if given; confirmed or provisional, current or past), 1–8
    symptoms (present or possible) each with 0–3 durations and 0–3 STEB frames, 0–2 denied or hypothetical symptoms
    with no duration or edge, 0–3 treatments of any status, 0–2 past-history items, 0–2 relatives' conditions,
    structured test values and a mental status examination; every status may carry evidence; MANIFESTS_AS /
    TREATMENT_OF / INDUCES edges between the asserted nodes.
    """
    ages = ages if ages is not None else st.integers(18, 80)
    sexes = sexes if sexes is not None else st.sampled_from([Sex.female, Sex.male])
    pool = draw(durations())
    ids = [d.id for d in pool]
    pick = st.lists(st.sampled_from(ids), max_size=3, unique=True)
    dx_rules = draw(st.lists(st.sampled_from(rule_ids), min_size=1, max_size=3, unique=True)) if rule_ids else [None]
    diagnoses = [Diagnosis(id=f"dx_{i}", label=r or "unspecified", rule_id=r, duration_ids=draw(pick),
                           certainty=draw(st.sampled_from([Certainty.confirmed, Certainty.provisional])),
                           certainty_evidence=draw(evidences()), temporality=draw(st.sampled_from(list(Temporality))),
                           temporality_evidence=draw(evidences()))
                 for i, r in enumerate(dx_rules)]
    n_sx = draw(st.integers(1, 8))
    symptoms = [
        Symptom(id=f"sx_{i}", headword=draw(st.sampled_from(["depressed mood", "insomnia", "paranoia",
                                                               "auditory hallucination", "excessive worry"])),
                assertion=draw(st.sampled_from([Assertion.present, Assertion.possible])),
                assertion_evidence=draw(evidences()),
                evidence_text=draw(st.sampled_from(TEXTS)), contexts=draw(st.lists(steb_frames, max_size=3)),
                duration_ids=draw(pick))
        for i in range(n_sx)
    ]
    treatments = [_treatment(draw, f"tx_{i}", draw(st.sampled_from(["sertraline", "lithium", "cbt"])), draw(pick))
                  for i in range(draw(st.integers(0, 3)))]
    past = [PastHistory(id=f"ph_{i}", condition=draw(st.sampled_from(["asthma", "head injury", "cannabis use"])),
                        status_evidence=draw(evidences()), duration_ids=draw(pick))
            for i in range(draw(st.integers(0, 2)))]
    edges: list[Edge] = []
    for dx in diagnoses:
        for sx in draw(st.lists(st.sampled_from(symptoms), unique_by=lambda s: s.id, max_size=4)):
            edges.append(Edge(type=RelationType.MANIFESTS_AS, source=dx.id, target=sx.id))
    for tx in treatments:
        edges.append(Edge(type=RelationType.TREATMENT_OF, source=tx.id, target=draw(st.sampled_from(diagnoses)).id))
    for ph in past:
        if draw(st.booleans()):
            edges.append(Edge(type=RelationType.INDUCES, source=ph.id, target=draw(st.sampled_from(symptoms)).id,
                              evidence_text="due to"))
    return CaseGraph(
        case_id=f"gen_{draw(st.integers(0, 9999))}",
        demographics=Demographics(age=draw(ages), sex=draw(sexes),
                                  ethnicity=draw(st.sampled_from([None, "Hispanic or Latino", "White"])),
                                  occupation=draw(st.sampled_from([None, "teacher", "nurse"]))),
        mental_status=draw(mental_statuses),
        test_results=TestResults(values=draw(structured_test_values())),
        family_history=draw(family_histories()),
        diagnoses=diagnoses, symptoms=[*symptoms, *draw(unasserted_symptoms(n_sx))], treatments=treatments,
        past_history=past,
        visit_event=VisitEvent(setting=draw(st.sampled_from(list(Setting))),
                               arrival_mode=draw(st.sampled_from(list(ArrivalMode))),
                               legal_status=draw(st.sampled_from(list(LegalStatus)))),
        durations=pool, edges=edges,
    )


def _treatment(draw: Any, tid: str, name: str, duration_ids: list[str]) -> Treatment:
    status = draw(st.sampled_from(list(TreatmentStatus)))
    reason = draw(st.sampled_from([None, "side effects", "ineffective"])) if status == TreatmentStatus.past else None
    return Treatment(id=tid, name=name, status=status, status_evidence=draw(evidences()), discontinued_reason=reason,
                     duration_ids=duration_ids)


def _simple_rules() -> list[Any]:
    from anonpsy.rules.dsm import load_dsm

    return [r for r in load_dsm().values()
            if not r.requires_history and r.age_gap is None and r.stressor_onset is None]


@st.composite
def feasible_graphs(draw: Any) -> CaseGraph:
    """A normalised graph whose diagnosis (drawn from rules/dsm) is clinically feasible for its demographics.

    e.g. a 9-year-old boy with ADHD whose illness began 3 years ago (onset before 12), or a 41-year-old woman with
    PMDD; sex respects sex-specific rules, age respects present-age rules, the illness duration lies inside the
    rule's duration window and its onset inside the onset window. Extra symptoms, treatments, test values, a mental
    status examination and relatives' conditions are added around it, with statuses drawn (the diagnosis itself
    confirmed or provisional, so that its rule applies).
    """
    from hypothesis import assume

    from anonpsy.rules.dsm import required_sex
    from anonpsy.temporal import normalize
    from anonpsy.validate import dsm_violations

    rule = draw(st.sampled_from(_simple_rules()))
    fixed = required_sex(rule, ())
    sex = Sex(fixed) if fixed else draw(st.sampled_from([Sex.female, Sex.male]))
    lo = max(4, rule.present_age.min if rule.present_age and rule.present_age.min is not None else 4)
    hi = min(85, rule.present_age.max if rule.present_age and rule.present_age.max is not None else 85)
    assume(lo <= hi)
    age = draw(st.integers(lo, hi))
    dmin, dmax = 1, 3 * 365
    for band in rule.duration_bands():
        if band.age_max_exclusive is None or age < band.age_max_exclusive:
            dmin = band.min_days or 1
            dmax = (band.max_days_exclusive - 1) if band.max_days_exclusive else max(dmin * 3, 3 * 365)
            break
    if rule.onset_age is not None:
        if rule.onset_age.max_exclusive is not None:
            dmin = max(dmin, int((age - rule.onset_age.max_exclusive) * 365) + 2)
        if rule.onset_age.min is not None:
            dmax = min(dmax, int((age - rule.onset_age.min) * 365) - 1)
    dmax = min(dmax, age * 365 - 1)
    assume(1 <= dmin <= dmax)
    dur = draw(st.integers(dmin, dmax))
    half = max(1, dur // 2)
    durations = [Duration(id="d_dx", offset=-dur, span=dur, unit=Unit.day),
                 Duration(id="d_late", offset=-half, span=half, unit=Unit.day)]
    n_sx = draw(st.integers(1, 4))
    heads = list(rule.symptoms) or ["depressed mood"]
    symptoms = [Symptom(id=f"sx_{i}", headword=heads[i % len(heads)],
                        assertion=draw(st.sampled_from([Assertion.present, Assertion.possible])),
                        assertion_evidence=draw(evidences()),
                        evidence_text=draw(st.sampled_from(TEXTS)),
                        contexts=draw(st.lists(steb_frames, max_size=2)),
                        duration_ids=[draw(st.sampled_from(["d_dx", "d_late"]))]) for i in range(n_sx)]
    dx = Diagnosis(id="dx_main", label=rule.name, rule_id=rule.id, duration_ids=["d_dx"],
                   certainty=draw(st.sampled_from([Certainty.confirmed, Certainty.provisional])),
                   certainty_evidence=draw(evidences()), temporality_evidence=draw(evidences()))
    edges = [Edge(type=RelationType.MANIFESTS_AS, source=dx.id, target=s.id) for s in symptoms]
    treatments = []
    if draw(st.booleans()):
        treatments.append(_treatment(draw, "tx_0", "sertraline", ["d_late"]).model_copy(update={"dose": "50 mg"}))
        edges.append(Edge(type=RelationType.TREATMENT_OF, source="tx_0", target=dx.id))
    symptoms += draw(unasserted_symptoms(n_sx))
    g = CaseGraph(
        case_id=f"feasible_{rule.id}",
        demographics=Demographics(age=age, sex=sex,
                                  ethnicity=draw(st.sampled_from([None, "Hispanic or Latino", "White"])),
                                  occupation=draw(st.sampled_from([None, "student", "teacher"])) if age >= 18
                                  else draw(st.sampled_from([None, "student"]))),
        mental_status=draw(mental_statuses),
        test_results=TestResults(values=draw(structured_test_values())),
        family_history=draw(family_histories()),
        diagnoses=[dx], symptoms=symptoms, treatments=treatments,
        visit_event=VisitEvent(setting=draw(st.sampled_from(list(Setting))),
                               arrival_mode=draw(st.sampled_from(list(ArrivalMode))),
                               legal_status=draw(st.sampled_from(list(LegalStatus))),
                               visit_episode=draw(st.sampled_from([None, "The patient, a 40-year-old, said he "
                                                                   "was frightened."]))),
        durations=durations, edges=edges,
    )
    g = normalize(g)
    assume(not dsm_violations(g))
    return g


#: Vocabularies that both the rules extractor and the independent fidelity judge know, for status graphs.
STATUS_DX_RULES = ["major_depressive_disorder", "bipolar_i_disorder", "schizophrenia", "adhd",
                   "antisocial_personality_disorder", "generalized_anxiety_disorder", "panic_disorder",
                   "posttraumatic_stress_disorder", "alcohol_use_disorder", "anorexia_nervosa",
                   "obsessive_compulsive_disorder", "borderline_personality_disorder"]
STATUS_SYMPTOMS = ["insomnia", "depressed mood", "paranoia", "anhedonia", "irritability", "fatigue", "hopelessness",
                   "panic attack", "auditory hallucination", "suicidal ideation", "homicidal ideation",
                   "social withdrawal"]
STATUS_DRUGS = ["sertraline", "lithium", "quetiapine", "lorazepam", "fluoxetine", "escitalopram", "bupropion",
                "aripiprazole", "olanzapine", "citalopram"]
STATUS_REASONS = [None, "side effects", "nausea", "weight gain", "ineffective"]
STATUS_RELATIVES = ["mother", "father", "sister", "brother"]
STATUS_FAMILY_CONDITIONS = ["bipolar disorder", "schizophrenia", "alcohol use disorder", "major depressive disorder"]


@st.composite
def status_graphs(draw: Any) -> CaseGraph:
    """A normalised, assertion-valid graph whose facts take every status, named in words the rules extractor and
    the fidelity judge both know: 1–4 diagnoses (any certainty, current or past), 1–8 symptoms (present now, had
    in the past, possible, denied, conditional), 0–4 drugs (current, as needed, stopped with or without a reason,
    planned, declined), 0–2 relatives' conditions (confirmed or possible), 0–2 past-history items, MANIFESTS_AS
    from asserted diagnoses to asserted symptoms and TREATMENT_OF to asserted diagnoses.

    e.g. a woman with confirmed current major depressive disorder, ADHD ruled out, denied suicidal ideation,
    escitalopram stopped for side effects, fluoxetine planned and a father who may have had bipolar disorder.
    """
    from hypothesis import assume

    from anonpsy.rules.dsm import load_dsm
    from anonpsy.temporal import normalize
    from anonpsy.validate import assertion_violations, structural_violations

    rules = load_dsm()
    pool = draw(durations(max_size=4))
    ids = [d.id for d in pool]
    rule_ids = draw(st.lists(st.sampled_from(STATUS_DX_RULES), min_size=1, max_size=4, unique=True))
    diagnoses = []
    for i, rid in enumerate(rule_ids):
        certainty = draw(st.sampled_from(list(Certainty)))
        diagnoses.append(Diagnosis(id=f"dx_{i}", label=rules[rid].name, rule_id=rid, certainty=certainty,
                                   temporality=draw(st.sampled_from(list(Temporality))),
                                   certainty_evidence=draw(evidences())))
    heads = draw(st.lists(st.sampled_from(STATUS_SYMPTOMS), min_size=1, max_size=8, unique=True))
    symptoms = []
    for i, h in enumerate(heads):
        kind = draw(st.sampled_from(["now", "past", "historical", "possible", "absent", "hypothetical"]))
        if kind in ("absent", "hypothetical"):
            symptoms.append(Symptom(id=f"sx_{i}", headword=h, assertion=Assertion(kind)))
            continue
        assertion = {"now": Assertion.present, "past": Assertion.present, "historical": Assertion.historical,
                     "possible": Assertion.possible}[kind]
        timed = draw(st.booleans())
        symptoms.append(Symptom(id=f"sx_{i}", headword=h, assertion=assertion,
                                current_symptom=kind in ("now", "possible"),
                                duration_ids=draw(st.lists(st.sampled_from(ids), max_size=1)) if timed else [],
                                contexts=draw(st.lists(steb_frames, max_size=1))))
    treatments = []
    for i, name in enumerate(draw(st.lists(st.sampled_from(STATUS_DRUGS), max_size=4, unique=True))):
        status = draw(st.sampled_from(list(TreatmentStatus)))
        reason = draw(st.sampled_from(STATUS_REASONS)) if status == TreatmentStatus.past else None
        treatments.append(Treatment(id=f"tx_{i}", name=name, status=status, discontinued_reason=reason,
                                    dose=draw(st.sampled_from([None, "10 mg", "50 mg"])),
                                    frequency="as needed" if status == TreatmentStatus.prn else
                                    draw(st.sampled_from([None, "daily"])),
                                    duration_ids=draw(st.lists(st.sampled_from(ids), max_size=1))))
    family = [FamilyHistory(member=draw(st.sampled_from(STATUS_RELATIVES)),
                            condition=draw(st.sampled_from(STATUS_FAMILY_CONDITIONS)),
                            certainty=draw(st.sampled_from(list(FamilyCertainty))))
              for _ in range(draw(st.integers(0, 2)))]
    past = [PastHistory(id=f"ph_{i}", condition=c)
            for i, c in enumerate(draw(st.lists(st.sampled_from(["asthma", "migraine", "head injury"]), max_size=2,
                                                unique=True)))]
    asserted_dx = [d for d in diagnoses if d.certainty != Certainty.ruled_out]
    edges: list[Edge] = []
    for dx in asserted_dx:
        for sx in draw(st.lists(st.sampled_from(symptoms), unique_by=lambda s: s.id, max_size=3)):
            if sx.asserted:
                edges.append(Edge(type=RelationType.MANIFESTS_AS, source=dx.id, target=sx.id))
    for tx in treatments:
        if asserted_dx and draw(st.booleans()):
            target = draw(st.sampled_from(asserted_dx)).id
            edges.append(Edge(type=RelationType.TREATMENT_OF, source=tx.id, target=target))
    sex = draw(st.sampled_from([Sex.female, Sex.male]))
    g = CaseGraph(case_id=f"status_{draw(st.integers(0, 9999))}",
                  demographics=Demographics(age=draw(st.integers(18, 80)), sex=sex),
                  family_history=family, diagnoses=diagnoses, symptoms=symptoms, treatments=treatments,
                  past_history=past, visit_event=VisitEvent(setting=draw(st.sampled_from(list(Setting)))),
                  durations=pool, edges=edges)
    used = {i for n in g.temporal_nodes() for i in n.duration_ids}
    g = g.model_copy(update={"durations": [d for d in pool if d.id in used]})
    g = normalize(g)
    assume(not structural_violations(g) and not assertion_violations(g))
    return g

# ---------------------------------------------------------------------------------------------------------------
# RecordTwin tables

#: Concepts of the project's hierarchy with siblings under shared generalisations (SSRIs, benzodiazepines,
#: anxiety disorders, mood symptoms, vital signs), so that generalisation and local recoding are exercised.
TWIN_CONCEPTS = [
    "rx:sertraline", "rx:fluoxetine", "rx:citalopram", "rx:escitalopram", "rx:fluvoxamine", "rx:lorazepam",
    "rx:clonazepam", "rx:metformin", "rx:lisinopril", "dx:major_depressive_disorder", "dx:panic_disorder",
    "dx:generalized_anxiety_disorder", "dx:social_anxiety_disorder", "dx:schizophrenia", "sx:depressed_mood",
    "sx:anhedonia", "sx:insomnia", "sx:excessive_worry", "sx:chest_pain", "test:heart_rate", "test:temperature",
    "test:tsh", "tx:cbt", "tx:dbt",
]


@st.composite
def twin_tables(draw: Any, max_docs: int = 40) -> dict[str, frozenset[str]]:
    """Documents' entity sets for the k-anonymizer: 0..max_docs documents, each 0..8 concepts from
    :data:`TWIN_CONCEPTS`, with repeated sets likely.

    e.g. {'d0': frozenset({'rx:sertraline', 'sx:insomnia'}), 'd1': frozenset(), 'd2': frozenset({'rx:sertraline',
    'sx:insomnia'})}
    """
    n = draw(st.integers(0, max_docs))
    base = draw(st.lists(st.frozensets(st.sampled_from(TWIN_CONCEPTS), max_size=8), min_size=1, max_size=6))
    out: dict[str, frozenset[str]] = {}
    for i in range(n):
        if draw(st.booleans()):
            out[f"d{i}"] = draw(st.sampled_from(base))
        else:
            out[f"d{i}"] = draw(st.frozensets(st.sampled_from(TWIN_CONCEPTS), max_size=8))
    return out


# --------------------------------------------------------------------------------------------------- audio

SPOKEN_DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
TRANSCRIPT_WORDS = ("she", "reports", "low", "mood", "for", "three", "weeks", "my", "name", "is", "doctor",
                    "march", "fourteenth", "the", "of", "twenty", "one", "hundred", "oh", "to", "nineteen",
                    "eighty", "double", "and", "street", "oak", "call", "me", "at", "Maria", "Lopez.", "uh")


@st.composite
def spoken_digit_strings(draw: Any, min_size: int = 4, max_size: int = 12) -> tuple[str, list[str]]:
    """A digit string and the words that say it digit by digit: ("2530", ["two", "five", "three", "zero"])."""
    digits = draw(st.text(alphabet="0123456789", min_size=min_size, max_size=max_size))
    return digits, [SPOKEN_DIGITS[int(d)] for d in digits]


def transcripts(max_size: int = 30) -> st.SearchStrategy[list[str]]:
    """Recogniser-like word lists mixing clinical words, number words, month and cue words."""
    return st.lists(st.sampled_from(TRANSCRIPT_WORDS), max_size=max_size)


WRITTEN_TOKENS = ("She", "reports", "9th,", "1974.", "555-0127", "42-year-old", "Dr.", "Mr.", "100", "mg",
                  "(253)", "12:30", "3/14/1982", "ninety-three", "O'Brien's", "St.", "%", "&", "--", "...", "2005")


def written_tokens() -> st.SearchStrategy[str]:
    """Tokens as a recogniser that writes text prints them: numerals, dashes, abbreviations, stray characters."""
    return st.one_of(st.sampled_from(WRITTEN_TOKENS), st.text(max_size=12))


CASED_WORDS = ("She", "reports", "low", "mood.", "Her", "sister,", "Zoramathan", "called", "the", "clinic.",
               "Maria", "Okonkwo", "de", "La", "Croix,", "in", "Beringham.", "takes", "Lexapro", "Mr.", "I")


def cased_transcripts(max_size: int = 30) -> st.SearchStrategy[list[str]]:
    """Word lists as a recogniser that writes case and punctuation prints them."""
    return st.lists(st.sampled_from(CASED_WORDS), max_size=max_size)


@st.composite
def mute_plans(draw: Any) -> tuple[int, int, int, list[tuple[float, float]]]:
    """(rate, frames, channels, intervals in seconds) for muting properties; intervals may overrun the end."""
    rate = draw(st.sampled_from([8000, 16000, 22050, 44100, 48000]))
    frames = draw(st.integers(min_value=1, max_value=rate * 2))
    channels = draw(st.integers(min_value=1, max_value=3))
    dur = frames / rate
    spans = draw(st.lists(st.tuples(st.floats(0, dur * 1.2), st.floats(0, 0.5)), max_size=6))
    return rate, frames, channels, [(a, a + w) for a, w in spans]
WORDS = ["the", "patient", "reports", "low", "mood", "and", "poor", "sleep", "sertraline", "50", "mg", "daily",
         "she", "was", "seen", "in", "clinic", "for", "anxiety", "denies", "suicidal", "ideation", "at", "bedtime"]


@st.composite
def word_texts(draw: Any, min_words: int = 0, max_words: int = 60) -> str:
    """Clinical-looking text from a small vocabulary (drug, dose and frequency words included), with sentence
    ends: ``"the patient reports low mood. sertraline 50 mg daily and poor sleep."``"""
    words = draw(st.lists(st.sampled_from(WORDS), min_size=min_words, max_size=max_words))
    ends = draw(st.lists(st.booleans(), min_size=len(words), max_size=len(words)))
    return " ".join(w + ("." if e else "") for w, e in zip(words, ends, strict=True))


GENERAL_WORDS = ["history", "of", "HTN", "hypertension", "type", "2", "diabetes", "mellitus", "chest", "pain", "CXR",
                 "x-ray", "lap", "chole", "cholecystectomy", "MRI", "the", "brain", "Ancef", "1", "g", "IV", "total",
                 "knee", "arthroplasty", "TKA", "echo", "echogenic", "status", "post", "CAD", "MI", "withdrawn",
                 "scope", "COPD", "chronic", "obstructive", "pulmonary", "disease", "(", ")", ",", "/", "-"]


@st.composite
def general_clinical_texts(draw: Any, max_words: int = 40) -> str:
    """General-medicine text (problems, drugs, procedures, tests, abbreviations, punctuation) in any letter case:
    ``"status post TKA, HISTORY OF HTN. chest pain"``"""
    words = draw(st.lists(st.sampled_from(GENERAL_WORDS + WORDS), max_size=max_words))
    cases = draw(st.lists(st.sampled_from(["as", "upper", "lower"]), min_size=len(words), max_size=len(words)))
    seps = draw(st.lists(st.sampled_from([" ", " ", ". ", "\n", "  "]), min_size=len(words), max_size=len(words)))
    out = []
    for w, c, sep in zip(words, cases, seps, strict=True):
        out.append((w if c == "as" else w.upper() if c == "upper" else w.lower()) + sep)
    return "".join(out)


# --------------------------------------------------------------------------------------------------------------
# Coded questionnaire tables (anonpsy.tabular)


@st.composite
def coded_table_pairs(draw: Any, max_rows: int = 25, max_cols: int = 5, max_categories: int = 4) -> Any:
    """Two integer-coded tables over the same columns and category counts, as numpy arrays, and the sizes.

    e.g. (array([[0, 2], [1, 0]]), array([[1, 1], [0, 2], [1, 0]]), [2, 3])
    """
    import numpy as np

    p = draw(st.integers(1, max_cols))
    sizes = [draw(st.integers(1, max_categories)) for _ in range(p)]

    def table(n: int) -> Any:
        rows = [[draw(st.integers(0, m - 1)) for m in sizes] for _ in range(n)]
        return np.asarray(rows, dtype=np.int64).reshape(n, p)

    a = table(draw(st.integers(2, max_rows)))
    b = table(draw(st.integers(2, max_rows)))
    return a, b, sizes


@st.composite
def item_matrices(draw: Any, max_rows: int = 30, max_items: int = 6, top: int = 4) -> Any:
    """An ``(n, k)`` float matrix of Likert answers 0..top, k >= 2 items.

    e.g. array([[0., 3.], [2., 2.], [4., 1.]])
    """
    import numpy as np

    k = draw(st.integers(2, max_items))
    n = draw(st.integers(3, max_rows))
    rows = [[draw(st.integers(0, top)) for _ in range(k)] for _ in range(n)]
    return np.asarray(rows, dtype=float)


# -- PHI masking: nursing-note-like text and span sets

_NOTE_WORDS = (
    "DR",
    "dr.",
    "son",
    "DTR",
    "Mary",
    "SOUZA",
    "pt",
    "aware",
    "7/22",
    "'92",
    "to",
    "GH",
    "HOSPITAL",
    "lives",
    "in",
    "PSV",
    "10/5",
    "bp",
    "120/80",
    "Pager",
    "#",
    "40417",
    "O'Rourke",
    "Kessler-Adventist",
    "St.",
    "x",
)


@st.composite
def note_texts(draw: Any) -> str:
    """Short texts mixing nursing shorthand, names, dates and odd characters, in any case."""
    parts = draw(
        st.lists(
            st.one_of(st.sampled_from(_NOTE_WORDS), st.text(min_size=1, max_size=6)),
            min_size=0,
            max_size=14,
        )
    )
    seps = draw(
        st.lists(st.sampled_from([" ", "  ", ", ", ". ", "\n", ": ", "-"]), min_size=len(parts), max_size=len(parts))
    )
    text = "".join(p + s for p, s in zip(parts, seps, strict=True))
    case = draw(st.sampled_from(["keep", "upper", "lower"]))
    return text.upper() if case == "upper" else text.lower() if case == "lower" else text


@st.composite
def span_sets(draw: Any, length: int, max_size: int = 6) -> list[tuple[int, int]]:
    """Half-open spans inside a text of ``length`` characters (possibly overlapping)."""
    if length < 1:
        return []
    out = []
    for _ in range(draw(st.integers(0, max_size))):
        a = draw(st.integers(0, length - 1))
        b = draw(st.integers(a + 1, length))
        out.append((a, b))
    return out
