"""Perturbation P: invariants as named Hypothesis properties, a stateful chain, and fixture-based examples."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from tests.strategies import feasible_graphs

from anonpsy.extract.mentions.results import number_values, parse_results
from anonpsy.graph import CaseGraph, Certainty, Sex, TestResults
from anonpsy.graphio import dump_graph, read_graph
from anonpsy.perturb import check, perturb, perturb_attributes
from anonpsy.perturb.check import statuses
from anonpsy.perturb.demographics import shift_age_mentions
from anonpsy.perturb.test_values import pool_of
from anonpsy.rules import tables
from anonpsy.temporal import normalize, temporal_backbone
from anonpsy.validate import dsm_violations, structural_violations

ROOT = Path(__file__).resolve().parents[1]
GRAPHS = sorted((ROOT / "fixtures" / "graphs").glob("*.yaml"))


@given(feasible_graphs(), st.integers(0, 2**32 - 1))
def test_perturbation_keeps_temporal_backbone(g: CaseGraph, seed: int) -> None:
    new, _ = perturb(g, seed)
    assert temporal_backbone(new) == temporal_backbone(g)


@given(feasible_graphs(), st.integers(0, 2**32 - 1))
def test_perturbation_keeps_edges_ids_and_scaffold(g: CaseGraph, seed: int) -> None:
    new, _ = perturb(g, seed)
    assert [i for i in new.iter_nodes()] == [i for i in g.iter_nodes()]
    assert sorted(e.key() for e in new.edges) == sorted(e.key() for e in g.edges)
    assert new.durations == g.durations
    for fld in tables.immutable_visit_fields():
        assert getattr(new.visit_event, fld) == getattr(g.visit_event, fld)


@given(feasible_graphs(), st.integers(0, 2**32 - 1))
def test_perturbed_demographics_satisfy_every_rule(g: CaseGraph, seed: int) -> None:
    assume(not dsm_violations(g))
    new, audit = perturb(g, seed)
    assert dsm_violations(new) == []
    assert audit.violations == []
    assert check(g, new) == []


@given(feasible_graphs(), st.integers(0, 2**32 - 1))
def test_perturb_is_perturb_attributes_then_check(g: CaseGraph, seed: int) -> None:
    """Property (the pipeline's single check loses nothing): perturbing without the closing check gives the very
    graph and audit changes, and checking that graph gives the violations :func:`perturb` records."""
    new, audit = perturb(g, seed)
    bare, bare_audit = perturb_attributes(g, seed)
    assert dump_graph(bare) == dump_graph(new)
    assert bare_audit.violations == []
    bare_audit.violations = [v.model_dump() for v in check(g, bare)]
    assert bare_audit.model_dump() == audit.model_dump()


@given(feasible_graphs(), st.integers(0, 2**32 - 1))
def test_same_seed_gives_identical_output(g: CaseGraph, seed: int) -> None:
    a, audit_a = perturb(g, seed)
    b, audit_b = perturb(g, seed)
    assert dump_graph(a) == dump_graph(b)
    assert audit_a == audit_b


@given(feasible_graphs(), st.integers(0, 2**32 - 1))
def test_every_change_names_a_rule(g: CaseGraph, seed: int) -> None:
    _, audit = perturb(g, seed)
    for c in audit.changes:
        assert c.rule_id, c.path
        assert c.old != c.new


@pytest.mark.parametrize("path", GRAPHS, ids=[p.stem for p in GRAPHS])
def test_fixture_graphs_perturb_cleanly(path: Path) -> None:
    g = normalize(read_graph(path))
    assert structural_violations(g) == []
    assert dsm_violations(g) == [], "fixtures are clinically consistent"
    for seed in range(5):
        new, audit = perturb(g, seed)
        assert audit.violations == []
        assert check(g, new) == []


def test_sex_fixed_by_specific_diagnosis_is_kept() -> None:
    for path in GRAPHS:
        g = normalize(read_graph(path))
        rule_ids = {d.rule_id for d in g.diagnoses}
        if rule_ids & {"premenstrual_dysphoric_disorder", "erectile_disorder"}:
            for seed in range(10):
                new, audit = perturb(g, seed)
                assert new.demographics.sex == g.demographics.sex
                assert any(k.reason == "SEX_FIXED_BY_RULE" for k in audit.kept)


@pytest.mark.parametrize("text", [
    # MTSamples (CC0): a dietary consult of a pregnant patient, read as the family situation "pregnancy"
    "SUBJECTIVE: This is a 38-year-old female who comes for dietary consultation for gestational diabetes. "
    "Her calorie requirements include additional calories for pregnancy.",
    "HPI: A 30-year-old woman, currently pregnant, with low mood.",
])
def test_a_pregnant_patient_keeps_her_sex(text: str) -> None:
    from anonpsy.extract import extract

    g = extract(text, case_id="preg")
    for seed in range(12):
        new, audit = perturb(g, seed)
        assert new.demographics.sex == Sex.female
        assert any(k.reason == "SEX_FIXED_BY_RULE" for k in audit.kept)


def test_an_unstated_sex_stays_unstated_under_a_sex_specific_condition() -> None:
    """A male-only condition (benign prostatic hyperplasia) in a note that never states the sex: keeping the sex
    unknown changes nothing and is no violation; moving a stated sex away from the fixed one still is."""
    from anonpsy.graph import Demographics, PastHistory

    g = normalize(CaseGraph(case_id="bph", demographics=Demographics(age=82),
                            past_history=[PastHistory(id="ph_1", condition="benign prostatic hyperplasia")]))
    for seed in range(5):
        new, audit = perturb(g, seed)
        assert new.demographics.sex == Sex.unknown
        assert check(g, new) == [] and audit.violations == []
    male = g.model_copy(update={"demographics": Demographics(age=82, sex=Sex.male)})
    female = g.model_copy(update={"demographics": Demographics(age=82, sex=Sex.female)})
    assert [v.code for v in check(male, female)] == ["CHECK_SEX_FIXED"]


def test_test_values_are_resampled_and_unmapped_listed() -> None:
    values, _ = parse_results("TSH 2.4 mIU/L, sodium 139 mmol/L, zorblin 55 units", "labs")
    g = CaseGraph(case_id="tv", test_results=TestResults(values=number_values(values)))
    new, audit = perturb(g, 3)
    assert [v.value for v in new.test_results.values] != [v.value for v in g.test_results.values]
    changed = {c.path: c.rule_id for c in audit.changes}
    assert changed["test_results.values[tv_1].value"] == "test_values.tsh"
    assert [u.path for u in audit.unmapped_values] == ["test_results.values[tv_3].value"], (
        "a number that maps to no test is listed, never dropped or changed")
    assert new.test_results.values[2] == g.test_results.values[2]
    assert check(g, new) == []


@given(feasible_graphs(), st.integers(0, 2**32 - 1))
def test_perturbation_never_changes_a_status(g: CaseGraph, seed: int) -> None:
    new, audit = perturb(g, seed)
    assert statuses(new) == statuses(g)
    assert new.mental_status == g.mental_status
    assert [(f.member, f.condition, f.certainty) for f in new.family_history] == [
        (f.member, f.condition, f.certainty) for f in g.family_history]
    assert not [v for v in audit.violations if v["code"] in ("CHECK_STATUS", "CHECK_MENTAL_STATUS")]


@given(feasible_graphs(), st.integers(0, 2**32 - 1))
def test_perturbation_keeps_test_values_in_their_pools(g: CaseGraph, seed: int) -> None:
    new, audit = perturb(g, seed)
    rules = {f"test_results.values[{v.id}].value": v.rule_id for v in g.test_results.values}
    for old, now in zip(g.test_results.values, new.test_results.values, strict=True):
        assert pool_of(now) == pool_of(old)
        if old.value != now.value:
            assert old.rule_id is not None
            assert any(c.path.endswith(f"[{old.id}].value") and c.rule_id == old.rule_id for c in audit.changes)
    for c in audit.changes:
        if c.path.startswith("test_results."):
            assert c.rule_id == rules[c.path] and c.rule_id.startswith("test_values.")


def test_check_reports_a_changed_status_and_a_value_out_of_its_pool() -> None:
    g = normalize(read_graph(ROOT / "fixtures" / "graphs" / "13_comorbid_inpatient.yaml"))
    dx = g.diagnoses[0].model_copy(update={"certainty": Certainty.ruled_out})
    tv = next(v for v in g.test_results.values if v.rule_id == "test_values.sodium")
    values = [v.model_copy(update={"value": "120"}) if v.id == tv.id else v for v in g.test_results.values]
    bad = g.model_copy(update={"diagnoses": [dx, *g.diagnoses[1:]],
                               "test_results": TestResults(values=values),
                               "mental_status": g.mental_status.model_copy(update={"insight": "good"})})
    codes = {(v.code, v.node_ids) for v in check(g, bad)}
    assert ("CHECK_STATUS", (dx.id,)) in codes
    assert ("CHECK_TEST_VALUE", (tv.id,)) in codes
    assert ("CHECK_MENTAL_STATUS", ()) in codes


@pytest.mark.parametrize(
    ("text", "age", "delta", "expected"),
    [
        ("A 34-year-old woman", 34, 2, "A 36-year-old woman"),
        ("first admitted at age 15", 34, -3, "first admitted at age 12"),
        ("her 62-year-old mother", 34, 2, "her 62-year-old mother"),
        ("in her 30s", 34, 8, "in her 40s"),
    ],
)
def test_shift_age_mentions(text: str, age: int, delta: int, expected: str) -> None:
    assert shift_age_mentions(text, age, delta) == expected


class RepeatedPerturbation(RuleBasedStateMachine):
    """Perturbing an already-perturbed graph again and again keeps every invariant against the original."""

    @initialize(g=feasible_graphs())
    def start(self, g: CaseGraph) -> None:
        self.original = g
        self.current = g

    @rule(seed=st.integers(0, 2**32 - 1))
    def perturb_again(self, seed: int) -> None:
        self.current, _ = perturb(self.current, seed)

    @invariant()
    def backbone_and_structure_hold(self) -> None:
        assert temporal_backbone(self.current) == temporal_backbone(self.original)
        assert sorted(e.key() for e in self.current.edges) == sorted(e.key() for e in self.original.edges)
        assert [i for i in self.current.iter_nodes()] == [i for i in self.original.iter_nodes()]

    @invariant()
    def rules_still_satisfied(self) -> None:
        before = {(v.code, v.node_ids) for v in dsm_violations(self.original)}
        assert {(v.code, v.node_ids) for v in dsm_violations(self.current)} <= before

    @invariant()
    def sex_constraint_holds(self) -> None:
        if self.original.demographics.sex == Sex.unknown:
            assert self.current.demographics.sex == Sex.unknown


TestRepeatedPerturbation = RepeatedPerturbation.TestCase
TestRepeatedPerturbation.settings = settings(max_examples=15, stateful_step_count=6, deadline=None,
                                             suppress_health_check=[HealthCheck.too_slow])
_ = example


# -- occupations keep their status kind --------------------------------------------------------------------------

_WRITTEN_OCCUPATIONS = ["retired", "retiree", "pensioner", "a retired school teacher", "unemployed", "out of work",
                        "on disability", "medically retired", "student", "college student", "housewife",
                        "homemaker", "volunteer", "adult day program participant", "nurse", "welder", "carpenter",
                        "sheltered workshop worker", "elementary school student", "special education student"]


def _occupation_graph(age: int, occupation: str) -> CaseGraph:
    from anonpsy.graph import Demographics

    return normalize(CaseGraph(case_id="occ", demographics=Demographics(age=age, occupation=occupation)))


def test_a_retiree_is_never_redrawn_as_a_day_program_or_a_job() -> None:
    g = _occupation_graph(72, "retired")
    drawn = {perturb(g, seed)[0].demographics.occupation for seed in range(40)}
    assert drawn and all(tables.occupation_status(o or "") == "retirement" for o in drawn), drawn
    assert "adult day program participant" not in drawn


def test_check_reports_an_occupation_of_another_kind() -> None:
    g = _occupation_graph(72, "retired")
    other = g.model_copy(update={"demographics": g.demographics.model_copy(
        update={"occupation": "adult day program participant"})})
    assert [v.code for v in check(g, other)] == ["CHECK_OCCUPATION_KIND"]
    same = g.model_copy(update={"demographics": g.demographics.model_copy(update={"occupation": "retired nurse"})})
    assert check(g, same) == []


@given(st.integers(18, 100), st.sampled_from(_WRITTEN_OCCUPATIONS), st.integers(0, 2**32 - 1))
@example(72, "retired", 0)
@example(30, "student", 1)
@example(45, "on disability", 2)
def test_perturbed_occupation_keeps_its_status_kind(age: int, occupation: str, seed: int) -> None:
    """A status (retired, unemployed, student, on disability ...) is redrawn within its kind, a job as a job."""
    g = _occupation_graph(age, occupation)
    new, audit = perturb(g, seed)
    drawn = new.demographics.occupation
    assert drawn is not None
    assert tables.occupation_status(drawn) == tables.occupation_status(occupation), (occupation, drawn)
    assert check(g, new) == [] and audit.violations == []


def test_an_occupation_the_age_cannot_hold_is_redrawn_not_kept() -> None:
    """Paid work at five (often a parent's job read as the child's) is no status to keep: it is redrawn from the
    age band, and check accepts the change of kind."""
    g = _occupation_graph(5, "commercial fisherman")
    for seed in range(10):
        new, audit = perturb(g, seed)
        assert new.demographics.occupation not in (None, "commercial fisherman")
        assert not any(k.path == "demographics.occupation" for k in audit.kept)
        assert check(g, new) == [] and audit.violations == []


def test_a_status_its_age_band_holds_is_kept_when_nothing_else_is_of_its_kind() -> None:
    g = _occupation_graph(40, "unemployed")
    new, _ = perturb(g, 0)
    assert tables.occupation_status(new.demographics.occupation or "") == tables.occupation_status("unemployed")


def test_a_job_of_a_known_skill_level_is_redrawn_at_that_level() -> None:
    g = _occupation_graph(40, "registered nurse")
    index = tables.load_occupations().any_pool_index
    drawn = [perturb(g, seed)[0].demographics.occupation or "" for seed in range(30)]
    assert {index[tables.occupation_key(o)].skill_level for o in drawn} == {4}
    assert len(set(drawn)) > 1


@given(st.integers(0, 100), st.sampled_from([*_WRITTEN_OCCUPATIONS, "commercial fisherman", "dental hygienist"]),
       st.integers(0, 2**32 - 1))
@example(5, "commercial fisherman", 11)
@example(72, "retired", 0)
def test_the_occupation_drawn_is_one_of_the_shared_candidates(age: int, occupation: str, seed: int) -> None:
    """The rules backend draws from :func:`occupation_candidates` (what the llm backend offers), under its rule id."""
    from anonpsy.perturb.demographics import occupation_candidates

    g = _occupation_graph(age, occupation)
    new, audit = perturb(g, seed)
    new_age = new.demographics.age
    assert new_age is not None
    pool, rule_id = occupation_candidates(occupation, new_age, None)
    changes = [c for c in audit.changes if c.path == "demographics.occupation"]
    if pool:
        assert new.demographics.occupation in {o.name for o in pool}
        assert [c.rule_id for c in changes] == [rule_id]
    else:
        assert new.demographics.occupation == occupation and not changes


_ORGAN_SENTENCES = [
    "The patient is a 36-year-old white female with carcinoma of the cervix and pain in the pelvis.",
    "The patient is a 53-year-old female with vaginal vault prolapse and urinary incontinence.",
    "He is a 16-month-old boy, irritable and crying since his circumcision, with penile swelling.",
]


@given(st.sampled_from(_ORGAN_SENTENCES), st.integers(min_value=0, max_value=2**31 - 1))
@example(_ORGAN_SENTENCES[0], 0)
def test_property_sex_named_by_an_organ_in_the_patients_sentences_never_changes(text: str, seed: int) -> None:
    """A sex-specific organ named in a sentence the patient's items were read from fixes the sex."""
    from anonpsy.extract import extract

    g = normalize(extract(text))
    p, _ = perturb(g, seed)
    assert p.demographics.sex == g.demographics.sex != Sex.unknown
