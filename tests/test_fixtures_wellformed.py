"""Well-formedness of the synthetic fixtures under ``fixtures/``.

``fixtures/cases/`` holds narratives (``NN_name.txt``) with their expected facts (``NN_name.expected.yaml``);
``fixtures/graphs/`` holds case graphs (schema version 2) in the exact form ``dump_graph`` writes, migrated from the
hand-written version-1 graphs kept in ``fixtures/graphs/v1/`` (see ``tests/test_graph.py``). These tests pin
the contract the rest of the project relies on: texts are UTF-8 and of bounded length, expectations use only
the shared vocabularies, every listed identifier occurs verbatim in its text, graphs load and re-dump byte for
byte, and graph edges and durations are internally consistent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.vocabulary import CORE_SYMPTOM_HEADWORDS as CORE_HEADWORDS
from tests.vocabulary import REQUIRED_DSM_RULE_IDS as DSM_RULE_IDS

from anonpsy.graph import (
    UNIT_DAYS,
    ArrivalMode,
    CaseGraph,
    Diagnosis,
    Duration,
    LegalStatus,
    NodeType,
    RelationType,
    SafetyFlag,
    Setting,
    Sex,
    TreatmentType,
)
from anonpsy.graphio import dump_graph, read_graph

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CASES_DIR = FIXTURES / "cases"
GRAPHS_DIR = FIXTURES / "graphs"

CASE_TEXTS = sorted(CASES_DIR.glob("*.txt"))
EXPECTED_FILES = sorted(CASES_DIR.glob("*.expected.yaml"))
GRAPH_FILES = sorted(GRAPHS_DIR.glob("*.yaml"))


def _words(text: str) -> frozenset[str]:
    """Whitespace-separated ids in a block of text."""
    return frozenset(text.split())


STEM_RE = re.compile(r"^\d{2}_[a-z0-9_]+$")
MIN_WORDS, MAX_WORDS = 150, 900



# Diagnoses that the case narratives and the graphs must each cover at least once.
REQUIRED_CASE_DIAGNOSES = _words(
    """
    adhd antisocial_personality_disorder conduct_disorder premenstrual_dysphoric_disorder
    major_depressive_disorder erectile_disorder schizophrenia substance_induced_psychotic_disorder
    obsessive_compulsive_disorder anorexia_nervosa major_neurocognitive_disorder
    posttraumatic_stress_disorder bipolar_i_disorder generalized_anxiety_disorder alcohol_use_disorder
    borderline_personality_disorder autism_spectrum_disorder panic_disorder alcohol_withdrawal delirium
    adjustment_disorder separation_anxiety_disorder social_anxiety_disorder
    persistent_depressive_disorder insomnia_disorder
    """
)
REQUIRED_GRAPH_DIAGNOSES = _words(
    """
    adhd antisocial_personality_disorder premenstrual_dysphoric_disorder major_depressive_disorder
    erectile_disorder schizophrenia substance_induced_psychotic_disorder obsessive_compulsive_disorder
    anorexia_nervosa major_neurocognitive_disorder posttraumatic_stress_disorder bipolar_i_disorder
    """
)

EXPECTED_KEYS = (
    "case_id",
    "demographics",
    "diagnoses",
    "symptoms",
    "negated_symptoms",
    "treatments",
    "family_history",
    "visit",
    "identifiers",
)

# Allowed (source type, target type) pairs per relation.
EDGE_PAIRS: dict[RelationType, frozenset[tuple[NodeType, NodeType]]] = {
    RelationType.MANIFESTS_AS: frozenset({(NodeType.diagnosis, NodeType.symptom)}),
    RelationType.TREATMENT_OF: frozenset(
        {(NodeType.treatment, NodeType.diagnosis), (NodeType.treatment, NodeType.symptom)}
    ),
    RelationType.PRESENTS_WITH: frozenset({(NodeType.visit, NodeType.symptom)}),
    RelationType.INDUCES: frozenset(
        {
            (src, dst)
            for src in (NodeType.treatment, NodeType.past_history, NodeType.diagnosis)
            for dst in (NodeType.diagnosis, NodeType.symptom)
        }
    ),
}

MIN_SYMPTOMS_PER_GRAPH, MAX_SYMPTOMS_PER_GRAPH = 3, 10
BENCHMARK_NODE_COUNT = 40


def _values(enum: Any) -> frozenset[str]:
    return frozenset(member.value for member in enum)


def _stem(path: Path) -> str:
    return path.name.split(".", 1)[0]


@cache
def _graph(path: Path) -> CaseGraph:
    """Load a graph fixture once per session (tests only read it)."""
    return read_graph(path)


def _load_expected(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{path.name}: top level must be a mapping"
    return data


def _covers_day_zero(duration: Duration) -> bool:
    """Whether a duration covers day 0: ongoing, or its half-open interval in days contains 0."""
    if duration.ongoing:
        return True
    if duration.span is None:
        return False
    u = UNIT_DAYS[duration.unit]
    return duration.offset * u <= 0 < (duration.offset + duration.span) * u


def _symptom_covers_day_zero(graph: CaseGraph, symptom_id: str) -> bool:
    durations = graph.duration_map()
    symptom = next(s for s in graph.symptoms if s.id == symptom_id)
    return any(_covers_day_zero(durations[d]) for d in symptom.duration_ids)


def _start_days(graph: CaseGraph, duration_ids: list[str]) -> int:
    durations = graph.duration_map()
    return min(durations[d].offset * UNIT_DAYS[durations[d].unit] for d in duration_ids)


def _contexts(graph: CaseGraph) -> Iterator[tuple[str, tuple[str, ...]]]:
    for symptom in graph.symptoms:
        for context in symptom.contexts:
            yield symptom.id, context.present_fields()


# ------------------------------------------------------------------------------------------------------------
# Case narratives and expected facts


def test_case_counts() -> None:
    assert len(CASE_TEXTS) >= 20
    assert {_stem(p) for p in CASE_TEXTS} == {_stem(p) for p in EXPECTED_FILES}, (
        "every text needs its expected file"
    )


@pytest.mark.parametrize("path", CASE_TEXTS, ids=_stem)
def test_case_text_is_utf8_and_bounded(path: Path) -> None:
    assert STEM_RE.match(_stem(path)), f"{path.name}: name must be NN_short_name.txt"
    raw = path.read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf"), f"{path.name}: no byte-order mark"
    text = raw.decode("utf-8")  # raises on invalid UTF-8
    words = len(text.split())
    assert MIN_WORDS <= words <= MAX_WORDS, f"{path.name}: {words} words"


@pytest.mark.parametrize("path", EXPECTED_FILES, ids=_stem)
def test_expected_file_uses_allowed_keys_and_values(path: Path) -> None:
    data = _load_expected(path)
    name = path.name
    assert tuple(data) == EXPECTED_KEYS, f"{name}: keys must be exactly {EXPECTED_KEYS} in that order"
    assert data["case_id"] == _stem(path)

    demo = data["demographics"]
    assert set(demo) == {"age", "sex"}
    assert isinstance(demo["age"], int) and 0 <= demo["age"] <= 120
    assert demo["sex"] in _values(Sex)

    assert data["diagnoses"], f"{name}: at least one diagnosis"
    assert len(set(data["diagnoses"])) == len(data["diagnoses"])
    assert set(data["diagnoses"]) <= DSM_RULE_IDS, f"{name}: unknown rule ids"

    symptoms = data["symptoms"]
    assert 5 <= len(symptoms) <= 12, f"{name}: {len(symptoms)} symptoms"
    for item in symptoms:
        assert set(item) == {"headword", "current"}, f"{name}: symptom keys {sorted(item)}"
        assert item["headword"] in CORE_HEADWORDS, f"{name}: {item['headword']!r} is not a core headword"
        assert isinstance(item["current"], bool)
    headwords = [s["headword"] for s in symptoms]
    assert len(set(headwords)) == len(headwords), f"{name}: duplicate symptom headwords"

    negated = data["negated_symptoms"]
    assert isinstance(negated, list) and len(set(negated)) == len(negated)
    assert set(negated) <= CORE_HEADWORDS, f"{name}: {sorted(set(negated) - CORE_HEADWORDS)}"
    assert not set(negated) & set(headwords), f"{name}: a headword is both present and negated"

    for item in data["treatments"]:
        assert set(item) == {"name", "type"}, f"{name}: treatment keys {sorted(item)}"
        assert item["name"] == item["name"].lower().strip() and item["name"]
        assert item["type"] in _values(TreatmentType)

    for item in data["family_history"]:
        assert set(item) == {"member", "condition"}, f"{name}: family history keys {sorted(item)}"
        assert all(isinstance(v, str) and v for v in item.values())

    visit = data["visit"]
    assert set(visit) == {"setting", "arrival_mode", "legal_status", "safety_flags"}
    assert visit["setting"] in _values(Setting)
    assert visit["arrival_mode"] in _values(ArrivalMode)
    assert visit["legal_status"] in _values(LegalStatus)
    assert isinstance(visit["safety_flags"], list)
    assert set(visit["safety_flags"]) <= _values(SafetyFlag)

    identifiers = data["identifiers"]
    assert identifiers and all(isinstance(i, str) and i.strip() == i and i for i in identifiers)
    assert len(set(identifiers)) == len(identifiers), f"{name}: duplicate identifiers"


@pytest.mark.parametrize("path", EXPECTED_FILES, ids=_stem)
def test_identifiers_occur_verbatim(path: Path) -> None:
    text = (CASES_DIR / f"{_stem(path)}.txt").read_text(encoding="utf-8")
    missing = [i for i in _load_expected(path)["identifiers"] if i not in text]
    assert not missing, f"{path.name}: {len(missing)} identifier(s) not found verbatim in the text"


def test_cases_cover_required_diagnoses() -> None:
    covered = {dx for p in EXPECTED_FILES for dx in _load_expected(p)["diagnoses"]}
    assert covered >= REQUIRED_CASE_DIAGNOSES, sorted(REQUIRED_CASE_DIAGNOSES - covered)


def test_cases_cover_visit_variety() -> None:
    visits = [_load_expected(p)["visit"] for p in EXPECTED_FILES]
    assert {"emergency_department", "outpatient", "inpatient", "consultation_liaison"} <= {
        v["setting"] for v in visits
    }
    assert any(v["arrival_mode"] == "police" and v["legal_status"] == "involuntary" for v in visits)


# ------------------------------------------------------------------------------------------------------------
# Case graphs


def test_graph_counts() -> None:
    assert len(GRAPH_FILES) >= 12
    sizes = [len(_graph(p).iter_nodes()) for p in GRAPH_FILES]
    assert max(sizes) >= BENCHMARK_NODE_COUNT, "one graph must be large enough for benchmarks"


@pytest.mark.parametrize("path", GRAPH_FILES, ids=_stem)
def test_graph_loads_and_is_byte_stable(path: Path) -> None:
    assert STEM_RE.match(path.stem)
    graph = read_graph(path)
    assert graph.case_id == path.stem
    assert dump_graph(graph).encode("utf-8") == path.read_bytes(), f"{path.name}: not in dump_graph form"


@pytest.mark.parametrize("path", GRAPH_FILES, ids=_stem)
def test_graph_durations_are_consistent(path: Path) -> None:
    graph = _graph(path)
    durations = graph.duration_map()
    referenced: set[str] = set()
    for node in graph.temporal_nodes():
        assert node.duration_ids, f"{path.name}: {node.id} has no duration"
        for duration_id in node.duration_ids:
            assert duration_id in durations, f"{path.name}: {node.id} references unknown {duration_id}"
            referenced.add(duration_id)
    assert referenced == set(durations), (
        f"{path.name}: unused durations {sorted(set(durations) - referenced)}"
    )
    for duration in graph.durations:
        if duration.ongoing and duration.span is not None:
            start, end = duration.interval()
            assert start <= 0 < end, f"{path.name}: ongoing {duration.id} does not cover day 0"
        if not duration.ongoing:
            assert duration.span is not None, f"{path.name}: {duration.id} is neither finite nor ongoing"


@pytest.mark.parametrize("path", GRAPH_FILES, ids=_stem)
def test_graph_edges_are_valid(path: Path) -> None:
    graph = _graph(path)
    types = graph.node_types()
    keys = [edge.key() for edge in graph.edges]
    assert len(set(keys)) == len(keys), f"{path.name}: duplicate edges"
    for edge in graph.edges:
        assert edge.source in types, f"{path.name}: unknown source {edge.source}"
        assert edge.target in types, f"{path.name}: unknown target {edge.target}"
        pair = (types[edge.source], types[edge.target])
        assert pair in EDGE_PAIRS[edge.type], (
            f"{path.name}: {edge.type.value} {pair[0].value}->{pair[1].value}"
        )


@pytest.mark.parametrize("path", GRAPH_FILES, ids=_stem)
def test_presents_with_targets_exactly_day_zero_symptoms(path: Path) -> None:
    graph = _graph(path)
    covering = {s.id for s in graph.symptoms if _symptom_covers_day_zero(graph, s.id)}
    presented = {
        e.target
        for e in graph.edges
        if e.type is RelationType.PRESENTS_WITH and e.source == graph.visit_event.id
    }
    assert presented == covering, f"{path.name}: PRESENTS_WITH differs from the symptoms covering day 0"
    assert {s.id for s in graph.symptoms if s.current_symptom} == covering, (
        f"{path.name}: current_symptom flags"
    )


@pytest.mark.parametrize("path", GRAPH_FILES, ids=_stem)
def test_graph_content_is_complete(path: Path) -> None:
    graph = _graph(path)
    assert graph.diagnoses and all(d.rule_id in DSM_RULE_IDS for d in graph.diagnoses), path.name
    assert MIN_SYMPTOMS_PER_GRAPH <= len(graph.symptoms) <= MAX_SYMPTOMS_PER_GRAPH, path.name
    assert graph.treatments and graph.past_history, path.name
    assert graph.demographics.age is not None and graph.demographics.sex is not Sex.unknown, path.name
    for symptom_id, fields in _contexts(graph):
        assert fields, f"{path.name}: {symptom_id} has an empty STEB context"
    assert all(s.contexts for s in graph.symptoms), f"{path.name}: every symptom needs a STEB context"
    assert len(graph.mental_status.present_fields()) >= 5, f"{path.name}: a structured mental status examination"
    assert any(v.value is not None for v in graph.test_results.values), f"{path.name}: test results need numbers"
    assert graph.schema_version == "2"
    assert graph.visit_event.id == "visit"


def test_graphs_cover_required_content() -> None:
    graphs = [_graph(p) for p in GRAPH_FILES]
    covered = {d.rule_id for g in graphs for d in g.diagnoses}
    assert covered >= REQUIRED_GRAPH_DIAGNOSES, sorted(REQUIRED_GRAPH_DIAGNOSES - covered)
    assert any(len(fields) < 4 for g in graphs for _, fields in _contexts(g)), (
        "some STEB fields should be empty"
    )
    assert sum(len({d.rule_id for d in g.diagnoses}) >= 2 for g in graphs) >= 2, "two comorbid graphs"


def _graphs_with(rule_id: str) -> list[CaseGraph]:
    graphs = [g for g in (_graph(p) for p in GRAPH_FILES) if any(d.rule_id == rule_id for d in g.diagnoses)]
    assert graphs, f"no graph with {rule_id}"
    return graphs


def _diagnosis(graph: CaseGraph, rule_id: str) -> Diagnosis:
    return next(d for d in graph.diagnoses if d.rule_id == rule_id)


def test_graph_specific_requirements() -> None:
    for g in _graphs_with("major_depressive_disorder"):
        dx = _diagnosis(g, "major_depressive_disorder")
        if "with peripartum onset" in dx.specifiers:
            assert g.demographics.sex is Sex.female
            break
    else:
        pytest.fail("no MDD graph with peripartum onset")

    induced = False
    for g in _graphs_with("substance_induced_psychotic_disorder"):
        types = g.node_types()
        dx_ids = {d.id for d in g.diagnoses if d.rule_id == "substance_induced_psychotic_disorder"}
        for e in g.edges:
            if e.type is RelationType.INDUCES and e.target in dx_ids:
                assert types[e.source] in (NodeType.past_history, NodeType.treatment)
                source = g.node(e.source)
                label = str(getattr(source, "condition", None) or getattr(source, "name", ""))
                induced = induced or "methamphetamine" in label.lower()
    assert induced, "an INDUCES edge from methamphetamine use to the induced psychosis"

    assert any(
        any(v.rule_id == "test_values.mmse" for v in g.test_results.values)
        for g in _graphs_with("major_neurocognitive_disorder")
    )
    assert any(
        any(v.rule_id == "test_values.lithium_level" for v in g.test_results.values)
        for g in _graphs_with("bipolar_i_disorder")
    )

    for g in _graphs_with("antisocial_personality_disorder"):
        age = g.demographics.age
        assert age is not None and age >= 18
        conduct = [d.duration_ids for d in g.diagnoses if d.rule_id == "conduct_disorder"]
        conduct += [p.duration_ids for p in g.past_history if "conduct disorder" in p.condition.lower()]
        assert conduct, "ASPD graph needs conduct disorder history"
        assert any(age + _start_days(g, ids) / 365 < 15 for ids in conduct), (
            "conduct disorder onset before 15"
        )


# Minimum illness length in days before day 0 (DSM-5-TR) and onset-age limits per rule id.
MIN_ILLNESS_DAYS = {
    "schizophrenia": 180,
    "posttraumatic_stress_disorder": 31,
    "major_depressive_disorder": 14,
    "bipolar_i_disorder": 7,
    "erectile_disorder": 180,
    "obsessive_compulsive_disorder": 1,
}


@pytest.mark.parametrize("path", GRAPH_FILES, ids=_stem)
def test_graph_is_clinically_consistent(path: Path) -> None:
    graph = _graph(path)
    age = graph.demographics.age
    assert age is not None
    for dx in graph.diagnoses:
        start = _start_days(graph, dx.duration_ids)
        assert age + start / 365 >= 0, f"{path.name}: {dx.id} starts before birth"
        if dx.rule_id in MIN_ILLNESS_DAYS:
            assert -start >= MIN_ILLNESS_DAYS[dx.rule_id], f"{path.name}: {dx.id} too short"
        if dx.rule_id == "adhd":
            assert age + start / 365 < 12, f"{path.name}: ADHD onset must precede age 12"
        if dx.rule_id == "erectile_disorder":
            assert graph.demographics.sex is Sex.male
        if dx.rule_id == "premenstrual_dysphoric_disorder" or "with peripartum onset" in dx.specifiers:
            assert graph.demographics.sex is Sex.female
