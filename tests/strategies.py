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
    CaseGraph,
    Demographics,
    Diagnosis,
    Duration,
    Edge,
    LegalStatus,
    PastHistory,
    RelationType,
    Setting,
    Sex,
    Symptom,
    TestResults,
    Treatment,
    Unit,
    VisitEvent,
)

TEXTS = ["after an argument at work", "believed neighbours were watching", "frightened", "stopped going out",
         "when alone at night", "felt guilty", "paced the corridor", None]


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

    1–3 diagnoses (rule ids drawn from ``rule_ids`` if given), 1–8 symptoms each with 0–3 durations and 0–3 STEB
    frames, 0–3 treatments, 0–2 past-history items, MANIFESTS_AS/TREATMENT_OF/INDUCES edges between them.
    """
    ages = ages if ages is not None else st.integers(18, 80)
    sexes = sexes if sexes is not None else st.sampled_from([Sex.female, Sex.male])
    pool = draw(durations())
    ids = [d.id for d in pool]
    pick = st.lists(st.sampled_from(ids), max_size=3, unique=True)
    dx_rules = draw(st.lists(st.sampled_from(rule_ids), min_size=1, max_size=3, unique=True)) if rule_ids else [None]
    diagnoses = [Diagnosis(id=f"dx_{i}", label=r or "unspecified", rule_id=r, duration_ids=draw(pick))
                 for i, r in enumerate(dx_rules)]
    n_sx = draw(st.integers(1, 8))
    symptoms = [
        Symptom(id=f"sx_{i}", headword=draw(st.sampled_from(["depressed mood", "insomnia", "paranoia",
                                                               "auditory hallucination", "excessive worry"])),
                evidence_text=draw(st.sampled_from(TEXTS)), contexts=draw(st.lists(steb_frames, max_size=3)),
                duration_ids=draw(pick))
        for i in range(n_sx)
    ]
    treatments = [Treatment(id=f"tx_{i}", name=draw(st.sampled_from(["sertraline", "lithium", "cbt"])),
                            duration_ids=draw(pick)) for i in range(draw(st.integers(0, 3)))]
    past = [PastHistory(id=f"ph_{i}", condition=draw(st.sampled_from(["asthma", "head injury", "cannabis use"])),
                        duration_ids=draw(pick)) for i in range(draw(st.integers(0, 2)))]
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
        test_results=TestResults(labs=draw(st.sampled_from([None, "TSH 2.4 mIU/L, sodium 139 mmol/L"])),
                                 other=draw(st.sampled_from([None, "PHQ-9 18", "MMSE 22/30"]))),
        diagnoses=diagnoses, symptoms=symptoms, treatments=treatments, past_history=past,
        visit_event=VisitEvent(setting=draw(st.sampled_from(list(Setting))),
                               arrival_mode=draw(st.sampled_from(list(ArrivalMode))),
                               legal_status=draw(st.sampled_from(list(LegalStatus)))),
        durations=pool, edges=edges,
    )


def _simple_rules() -> list[Any]:
    from anonpsy.rules.dsm import load_dsm

    return [r for r in load_dsm().values()
            if not r.requires_history and r.age_gap is None and r.stressor_onset is None]


@st.composite
def feasible_graphs(draw: Any) -> CaseGraph:
    """A normalised graph whose diagnosis (drawn from rules/dsm) is clinically feasible for its demographics.

    e.g. a 9-year-old boy with ADHD whose illness began 3 years ago (onset before 12), or a 41-year-old woman with
    PMDD; sex respects sex-specific rules, age respects present-age rules, the illness duration lies inside the
    rule's duration window and its onset inside the onset window. Extra symptoms, treatments and test values are
    added around it.
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
                        evidence_text=draw(st.sampled_from(TEXTS)),
                        contexts=draw(st.lists(steb_frames, max_size=2)),
                        duration_ids=[draw(st.sampled_from(["d_dx", "d_late"]))]) for i in range(n_sx)]
    dx = Diagnosis(id="dx_main", label=rule.name, rule_id=rule.id, duration_ids=["d_dx"])
    edges = [Edge(type=RelationType.MANIFESTS_AS, source=dx.id, target=s.id) for s in symptoms]
    treatments = []
    if draw(st.booleans()):
        treatments.append(Treatment(id="tx_0", name="sertraline", dose="50 mg", duration_ids=["d_late"]))
        edges.append(Edge(type=RelationType.TREATMENT_OF, source="tx_0", target=dx.id))
    g = CaseGraph(
        case_id=f"feasible_{rule.id}",
        demographics=Demographics(age=age, sex=sex,
                                  ethnicity=draw(st.sampled_from([None, "Hispanic or Latino", "White"])),
                                  occupation=draw(st.sampled_from([None, "student", "teacher"])) if age >= 18
                                  else draw(st.sampled_from([None, "student"]))),
        test_results=TestResults(labs=draw(st.sampled_from([None, "TSH 2.4 mIU/L, sodium 139 mmol/L",
                                                            "Lithium level 0.8 mmol/L"])),
                                 other=draw(st.sampled_from([None, "PHQ-9 18", "MMSE 22/30"]))),
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


WORDS = ["the", "patient", "reports", "low", "mood", "and", "poor", "sleep", "sertraline", "50", "mg", "daily",
         "she", "was", "seen", "in", "clinic", "for", "anxiety", "denies", "suicidal", "ideation", "at", "bedtime"]


@st.composite
def word_texts(draw: Any, min_words: int = 0, max_words: int = 60) -> str:
    """Clinical-looking text from a small vocabulary (drug, dose and frequency words included), with sentence
    ends: ``"the patient reports low mood. sertraline 50 mg daily and poor sleep."``"""
    words = draw(st.lists(st.sampled_from(WORDS), min_size=min_words, max_size=max_words))
    ends = draw(st.lists(st.booleans(), min_size=len(words), max_size=len(words)))
    return " ".join(w + ("." if e else "") for w, e in zip(words, ends, strict=True))


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
