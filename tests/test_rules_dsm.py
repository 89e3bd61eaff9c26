"""DSM-5-TR diagnosis rules: schema, cases, coverage, pinned thresholds, matching, checker invariants."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from anonpsy.paths import rules_dir, schemas_dir
from anonpsy.rules.dsm import (
    CHAPTERS,
    VIOLATION_CODES,
    DiagnosisFacts,
    DsmRule,
    check_diagnosis,
    clear_dsm_cache,
    extract_specifiers,
    facts_from_mapping,
    load_dsm,
    match_label,
    normalize_label,
    parse_rules,
    required_sex,
    rule_files,
)
from anonpsy.rules.kinds.dsm import rule_coverage, thresholds
from anonpsy.rules.registry import load_all_kinds

DSM_DIR = rules_dir() / "dsm"
RULE_FILES = rule_files()
RULES = load_dsm()

EXPECTED_TOTAL = 151
EXPECTED_PER_CHAPTER = {
    "neurodevelopmental": 15,
    "schizophrenia_spectrum": 10,
    "bipolar": 5,
    "depressive": 8,
    "anxiety": 10,
    "obsessive_compulsive": 5,
    "trauma_stressor": 6,
    "dissociative": 4,
    "somatic_symptom": 5,
    "feeding_eating": 7,
    "elimination": 2,
    "sleep_wake": 10,
    "sexual_dysfunction": 7,
    "gender_dysphoria": 1,
    "disruptive_impulse_conduct": 6,
    "substance_related": 25,
    "neurocognitive": 6,
    "personality": 11,
    "paraphilic": 8,
}
EXPECTED_CASES = 637

REQUIRED_IDS = [
    "adhd",
    "autism_spectrum_disorder",
    "intellectual_disability",
    "tourettes_disorder",
    "conduct_disorder",
    "oppositional_defiant_disorder",
    "antisocial_personality_disorder",
    "borderline_personality_disorder",
    "schizophrenia",
    "schizophreniform_disorder",
    "brief_psychotic_disorder",
    "schizoaffective_disorder",
    "delusional_disorder",
    "substance_induced_psychotic_disorder",
    "bipolar_i_disorder",
    "bipolar_ii_disorder",
    "cyclothymic_disorder",
    "major_depressive_disorder",
    "persistent_depressive_disorder",
    "premenstrual_dysphoric_disorder",
    "generalized_anxiety_disorder",
    "panic_disorder",
    "agoraphobia",
    "social_anxiety_disorder",
    "specific_phobia",
    "separation_anxiety_disorder",
    "obsessive_compulsive_disorder",
    "posttraumatic_stress_disorder",
    "acute_stress_disorder",
    "adjustment_disorder",
    "anorexia_nervosa",
    "bulimia_nervosa",
    "binge_eating_disorder",
    "enuresis",
    "encopresis",
    "insomnia_disorder",
    "erectile_disorder",
    "female_sexual_interest_arousal_disorder",
    "female_orgasmic_disorder",
    "male_hypoactive_sexual_desire_disorder",
    "premature_ejaculation",
    "delayed_ejaculation",
    "alcohol_use_disorder",
    "cannabis_use_disorder",
    "opioid_use_disorder",
    "stimulant_use_disorder",
    "alcohol_withdrawal",
    "delirium",
    "major_neurocognitive_disorder",
    "mild_neurocognitive_disorder",
    "pedophilic_disorder",
    "gender_dysphoria",
    "functional_neurological_symptom_disorder",
    "somatic_symptom_disorder",
    "illness_anxiety_disorder",
    "dissociative_identity_disorder",
    "depersonalization_derealization_disorder",
]


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _all_cases() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    out = []
    for path in RULE_FILES:
        doc = _load(path)
        for case in _load(path.with_suffix(".cases.yaml"))["cases"]:
            out.append((f"{path.stem}:{case['id']}", doc, case))
    return out


ALL_CASES = _all_cases()


# ------------------------------------------------------------------------------------------------------------
# Files, schema, cases, coverage


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_rule_file_validates_against_schema(path: Path) -> None:
    schema = json.loads((schemas_dir() / "rules" / "dsm.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(_load(path))]
    assert errors == []


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_rule_file_is_named_for_its_chapter(path: Path) -> None:
    doc = _load(path)
    assert doc["kind"] == "dsm"
    assert doc["chapter"] == path.stem
    assert path.stem in CHAPTERS
    assert all(rule.chapter == path.stem for rule in parse_rules(doc, path.name))


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_cases_file_validates_against_cases_schema(path: Path) -> None:
    cases_path = path.with_suffix(".cases.yaml")
    assert cases_path.is_file()
    schema = json.loads((schemas_dir() / "rules" / "cases.json").read_text(encoding="utf-8"))
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(_load(cases_path))]
    assert errors == []
    ids = [c["id"] for c in _load(cases_path)["cases"]]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(("doc", "case"), [(d, c) for _, d, c in ALL_CASES], ids=[i for i, _, _ in ALL_CASES])
def test_case_behaves_as_expected(doc: dict[str, Any], case: dict[str, Any]) -> None:
    kind = load_all_kinds()["dsm"]
    problems = kind.run_case(doc, case)
    if case.get("todo"):
        pytest.xfail("known gap")
    assert problems == []


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_coverage_has_no_problems(path: Path) -> None:
    kind = load_all_kinds()["dsm"]
    assert kind.coverage(_load(path), _load(path.with_suffix(".cases.yaml"))["cases"]) == []


def test_coverage_reports_a_missing_boundary_case() -> None:
    cases = [{"id": "t", "rule": "adhd", "input": {"onset_age": 11}, "expect": "pass"}]
    problems = rule_coverage(RULES["adhd"], cases)
    assert any("onset_age max_exclusive = 12 (value 12)" in p for p in problems)
    assert any("duration min_days = 180 (value 179)" in p for p in problems)
    assert rule_coverage(RULES["adhd"], []) == ["adhd: no case; add at least a passing typical case"]


def test_run_case_reports_wrong_expectations() -> None:
    kind = load_all_kinds()["dsm"]
    doc = _load(DSM_DIR / "neurodevelopmental.yaml")
    wrong = {"id": "w", "rule": "adhd", "input": {"onset_age": 12}, "expect": "pass"}
    assert kind.run_case(doc, wrong) == ["expected pass but got DSM_ONSET_TOO_LATE"]
    other = {**wrong, "expect": "fail", "violations": ["DSM_AGE_BELOW_MIN"]}
    assert kind.run_case(doc, other) == ["expected DSM_AGE_BELOW_MIN but got DSM_ONSET_TOO_LATE"]
    unknown_code = {**wrong, "expect": "fail", "violations": ["DSM_NOPE"]}
    assert "unknown violation code" in kind.run_case(doc, unknown_code)[0]
    assert "does not define" in kind.run_case(doc, {**wrong, "rule": "schizophrenia"})[0]
    assert "unknown fact(s) age" in kind.run_case(doc, {**wrong, "input": {"age": 3}})[0]


def test_text_cases_check_mentions_and_look_alikes() -> None:
    """A text case says whether the text names the rule; an ``excludes`` look-alike ("bipolar cautery",
    "respiratory depression") holds an alias without naming the diagnosis."""
    kind = load_all_kinds()["dsm"]
    doc = _load(DSM_DIR / "bipolar.yaml")
    rule = "unspecified_bipolar_and_related_disorder"
    case = {"id": "t", "rule": rule, "input": {"text": "Hemostasis with a bipolar cautery.", "names": False},
            "expect": "pass"}
    assert kind.run_case(doc, case) == []
    assert kind.run_case(doc, {**case, "input": {**case["input"], "names": True}}) == [
        f"the text does not name {rule}"]
    bare = {**case, "input": {"text": "History of bipolar, on lithium.", "names": False}}
    assert kind.run_case(doc, bare) == [f"the text names {rule}"]
    assert "expects pass" in kind.run_case(doc, {**case, "expect": "fail", "violations": ["X"]})[0]


def test_excludes_block_only_their_own_rule() -> None:
    from anonpsy.extract.mentions.diagnoses import find_diagnoses

    assert find_diagnoses("Admitted for respiratory depression after sedation.") == []
    assert find_diagnoses("ECG: 1 mm ST depression.") == []
    assert [r for *_, r in find_diagnoses("Depression; no respiratory depression.")] == [
        "unspecified_depressive_disorder"]
    assert [r for *_, r in find_diagnoses("Bipolar disorder. Bipolar electrocautery was used.")] == [
        "unspecified_bipolar_and_related_disorder"]


# ------------------------------------------------------------------------------------------------------------
# Pinned counts, ids, sources and thresholds


def test_counts_are_pinned() -> None:
    assert len(RULES) == EXPECTED_TOTAL
    per_chapter: dict[str, int] = {}
    for rule in RULES.values():
        per_chapter[rule.chapter] = per_chapter.get(rule.chapter, 0) + 1
    assert per_chapter == EXPECTED_PER_CHAPTER
    assert len(ALL_CASES) == EXPECTED_CASES


def test_required_ids_exist() -> None:
    assert sorted(set(REQUIRED_IDS) - set(RULES)) == []


def test_every_rule_cites_dsm_and_every_constraint_has_a_source() -> None:
    for rule in RULES.values():
        assert rule.source.startswith("DSM-5-TR, "), rule.id
        parts: list[Any] = [
            rule.present_age,
            rule.onset_age,
            rule.duration,
            *rule.duration_by_age,
            rule.stressor_onset,
            rule.age_gap,
            *rule.requires_history,
        ]
        for part in parts:
            if part is not None:
                assert part.source, rule.id
        assert (rule.sex is None) == (rule.sex_source is None), rule.id


def test_every_rule_has_symptoms_except_paraphilic_and_pica() -> None:
    empty = sorted(r.id for r in RULES.values() if not r.symptoms)
    assert empty == sorted([r.id for r in RULES.values() if r.chapter == "paraphilic"] + ["pica"])


def _pin(rule_id: str) -> dict[str, Any]:
    return RULES[rule_id].model_dump(
        exclude_none=True,
        include={
            "present_age",
            "onset_age",
            "duration",
            "duration_by_age",
            "stressor_onset",
            "sex",
            "age_gap",
            "requires_history",
            "specifier_sex",
        },
    )


@pytest.mark.parametrize(
    ("rule_id", "path", "value"),
    [
        ("adhd", ("onset_age", "max_exclusive"), 12),
        ("adhd", ("duration", "min_days"), 180),
        ("tourettes_disorder", ("onset_age", "max_exclusive"), 18),
        ("intellectual_disability", ("onset_age", "max_exclusive"), 18),
        ("autism_spectrum_disorder", ("onset_age", "max_exclusive"), 18),
        ("major_depressive_disorder", ("duration", "min_days"), 14),
        ("generalized_anxiety_disorder", ("duration", "min_days"), 180),
        ("schizophrenia", ("duration", "min_days"), 180),
        ("schizophreniform_disorder", ("duration", "min_days"), 30),
        ("schizophreniform_disorder", ("duration", "max_days_exclusive"), 180),
        ("brief_psychotic_disorder", ("duration", "min_days"), 1),
        ("brief_psychotic_disorder", ("duration", "max_days_exclusive"), 30),
        ("posttraumatic_stress_disorder", ("duration", "min_days"), 31),
        ("acute_stress_disorder", ("duration", "min_days"), 3),
        ("acute_stress_disorder", ("duration", "max_days_exclusive"), 31),
        ("bipolar_i_disorder", ("duration", "min_days"), 7),
        ("bipolar_ii_disorder", ("duration", "min_days"), 4),
        ("specific_phobia", ("duration", "min_days"), 180),
        ("social_anxiety_disorder", ("duration", "min_days"), 180),
        ("insomnia_disorder", ("duration", "min_days"), 90),
        ("adjustment_disorder", ("stressor_onset", "max_days_after"), 90),
        ("antisocial_personality_disorder", ("present_age", "min"), 18),
        ("borderline_personality_disorder", ("present_age", "min"), 18),
        ("enuresis", ("present_age", "min"), 5),
        ("encopresis", ("present_age", "min"), 4),
        ("pedophilic_disorder", ("present_age", "min"), 16),
        ("pedophilic_disorder", ("age_gap", "min_years"), 5),
        ("premenstrual_dysphoric_disorder", ("sex",), "female"),
        ("erectile_disorder", ("sex",), "male"),
        ("female_sexual_interest_arousal_disorder", ("sex",), "female"),
        ("female_orgasmic_disorder", ("sex",), "female"),
        ("male_hypoactive_sexual_desire_disorder", ("sex",), "male"),
        ("premature_ejaculation", ("sex",), "male"),
        ("delayed_ejaculation", ("sex",), "male"),
        ("genito_pelvic_pain_penetration_disorder", ("sex",), "female"),
    ],
)
def test_threshold_is_pinned(rule_id: str, path: tuple[str, ...], value: Any) -> None:
    node: Any = _pin(rule_id)
    for key in path:
        node = node[key]
    assert node == value


def test_age_dependent_durations_are_pinned() -> None:
    def bands(rule_id: str) -> list[tuple[int | None, int | None]]:
        return [(b.age_max_exclusive, b.min_days) for b in RULES[rule_id].duration_by_age]

    assert bands("persistent_depressive_disorder") == [(18, 365), (None, 730)]
    assert bands("cyclothymic_disorder") == [(18, 365), (None, 730)]
    assert bands("separation_anxiety_disorder") == [(18, 28), (None, 180)]


def test_aspd_requires_conduct_disorder_before_15() -> None:
    (req,) = RULES["antisocial_personality_disorder"].requires_history
    assert (req.rule, req.onset_age_max_exclusive) == ("conduct_disorder", 15)
    assert RULES["antisocial_personality_disorder"].present_age is not None
    assert RULES["antisocial_personality_disorder"].present_age.exceptions == ()
    assert RULES["conduct_disorder"].onset_age is None  # childhood-onset type is a specifier


def test_peripartum_specifier_fixes_female() -> None:
    for rule_id in ("major_depressive_disorder", "bipolar_i_disorder", "bipolar_ii_disorder"):
        assert RULES[rule_id].specifier_sex["with peripartum onset"] == "female"
        assert required_sex(RULES[rule_id], ["severe", "with peripartum onset"]) == "female"
        assert required_sex(RULES[rule_id], ["severe"]) is None
    assert required_sex(RULES["erectile_disorder"]) == "male"
    assert required_sex(RULES["schizophrenia"], ["with peripartum onset"]) is None


def test_every_threshold_of_a_rule_is_seen_by_coverage() -> None:
    # thresholds() is what coverage walks; pin how many it finds so a new constraint shape is not skipped.
    assert len(thresholds(RULES["disruptive_mood_dysregulation_disorder"])) == 4
    assert len(thresholds(RULES["persistent_depressive_disorder"])) == 3
    assert len(thresholds(RULES["borderline_personality_disorder"])) == 2
    assert len(thresholds(RULES["antisocial_personality_disorder"])) == 2
    assert len(thresholds(RULES["pedophilic_disorder"])) == 3
    assert len(thresholds(RULES["adjustment_disorder"])) == 2


# ------------------------------------------------------------------------------------------------------------
# Loading


def test_cold_and_cached_loads_agree() -> None:
    """Load time is reported by tests/bench/bench_core.py (a timed assertion flakes on a loaded machine)."""
    clear_dsm_cache()
    cold = load_dsm()
    assert match_label("ADHD") is not None
    assert load_dsm() == cold


def test_loader_rejects_bad_rule_sets(tmp_path: Path) -> None:
    from anonpsy.errors import AnonpsyError

    (tmp_path / "dsm").mkdir()
    src = (DSM_DIR / "elimination.yaml").read_text(encoding="utf-8")
    moved = src.replace("chapter: elimination\n    icd10cm", "chapter: anxiety\n    icd10cm", 1)
    (tmp_path / "dsm" / "elimination.yaml").write_text(moved, encoding="utf-8")
    with pytest.raises(AnonpsyError) as err:
        load_dsm(tmp_path)
    assert err.value.code == "R100"
    (tmp_path / "dsm" / "elimination.yaml").write_text(
        src.replace("fecal soiling]", "fecal soiling, bedwetting]"), encoding="utf-8"
    )
    with pytest.raises(AnonpsyError) as err:
        load_dsm(tmp_path)
    assert err.value.code == "R104"
    (tmp_path / "dsm" / "elimination.yaml").write_text("kind: dsm\nrules: [", encoding="utf-8")
    with pytest.raises(AnonpsyError) as err:
        load_dsm(tmp_path)
    assert err.value.code == "R101"


# ------------------------------------------------------------------------------------------------------------
# Label matching


@pytest.mark.parametrize(
    ("label", "rule_id"),
    [
        ("MDD, recurrent, severe with psychotic features", "major_depressive_disorder"),
        ("ADHD", "adhd"),
        ("conversion disorder", "functional_neurological_symptom_disorder"),
        ("attention-deficit/hyperactivity disorder, combined presentation, moderate", "adhd"),
        ("manic depression", "unspecified_bipolar_and_related_disorder"),
        ("unspecified anxiety disorder", "unspecified_anxiety_disorder"),
        ("Depression, NOS", "unspecified_depressive_disorder"),
        ("Bipolar I disorder, current episode manic, severe, with mixed features", "bipolar_i_disorder"),
        ("Bipolar II disorder, most recent episode depressed", "bipolar_ii_disorder"),
        (
            "Major depressive disorder, single episode, severe, without psychotic features, "
            "with peripartum onset",
            "major_depressive_disorder",
        ),
        ("Conduct disorder, childhood-onset type (historical)", "conduct_disorder"),
        (
            "Methamphetamine-induced psychotic disorder, with onset during intoxication, resolved",
            "substance_induced_psychotic_disorder",
        ),
        ("Stimulant (methamphetamine) use disorder, severe", "stimulant_use_disorder"),
        (
            "Obsessive-compulsive disorder, with fair insight, severe, "
            "with contamination and checking dimensions",
            "obsessive_compulsive_disorder",
        ),
        ("anorexia nervosa, restricting type", "anorexia_nervosa"),
        (
            "Major neurocognitive disorder due to probable Alzheimer's disease, moderate severity, without "
            "behavioral disturbance",
            "major_neurocognitive_disorder",
        ),
        ("mild neurocognitive disorder", "mild_neurocognitive_disorder"),
        ("erectile disorder, acquired, generalized, moderate", "erectile_disorder"),
        ("schizophrenia, multiple episodes, currently in acute episode", "schizophrenia"),
        ("Alcohol use disorder, moderate, in early remission", "alcohol_use_disorder"),
        ("Tourette syndrome", "tourettes_disorder"),
        ("Tourette's Disorder", "tourettes_disorder"),
        ("dysthymia", "persistent_depressive_disorder"),
        ("PTSD, with delayed expression", "posttraumatic_stress_disorder"),
        (
            "Depressive Disorder Due to Another Medical Condition, severe",
            "depressive_disorder_due_to_another_medical_condition",
        ),
        ("postpartum depression", "major_depressive_disorder"),
        ("schizoaffective", "schizoaffective_disorder"),
        ("probable Alzheimer's dementia", "major_neurocognitive_disorder"),
        ("Insomnia", "insomnia_disorder"),
        ("hoarding", "hoarding_disorder"),
        ("schizophrenai", "schizophrenia"),
        ("major depresive disorder", "major_depressive_disorder"),
        ("generalised anxiety disorder", "generalized_anxiety_disorder"),
    ],
)
def test_match_label_examples(label: str, rule_id: str) -> None:
    rule = match_label(label)
    assert rule is not None
    assert rule.id == rule_id


@pytest.mark.parametrize(
    "label",
    ["hello world", "other specified depressive disorder", "worry", ""],
)
def test_match_label_returns_none_for_unknown_labels(label: str) -> None:
    assert match_label(label) is None


def test_match_label_finds_every_id_name_and_alias() -> None:
    for rule in RULES.values():
        for label in (rule.id, rule.name, *rule.aliases):
            found = match_label(label)
            assert found is not None and found.id == rule.id, label


def test_only_dsm_names_share_a_core_symptom_headword() -> None:
    # A label that is also a symptom headword makes text extraction ambiguous; only DSM-5-TR names themselves
    # are allowed to coincide (the everyday "erectile dysfunction" names the symptom, not Erectile Disorder).
    schema = json.loads((schemas_dir() / "rules" / "dsm.json").read_text(encoding="utf-8"))
    heads = {normalize_label(h) for h in schema["$defs"]["symptom"]["enum"]}
    heads |= {f"{h}s" for h in heads}
    shared = sorted(
        (rule.id, label)
        for rule in RULES.values()
        for label in (rule.name, *rule.aliases)
        if normalize_label(label) in heads
    )
    assert shared == [
        ("delayed_ejaculation", "Delayed Ejaculation"),
        ("dissociative_amnesia", "Dissociative Amnesia"),
        ("encopresis", "Encopresis"),
        ("enuresis", "Enuresis"),
    ]


def test_extract_specifiers() -> None:
    assert extract_specifiers("MDD, recurrent, severe with psychotic features") == (
        "recurrent",
        "severe",
        "with psychotic features",
    )
    assert extract_specifiers("postpartum depression") == ("with peripartum onset",)
    assert extract_specifiers("ADHD") == ()


SPECIFIER_SUFFIXES = [
    "recurrent",
    "single episode",
    "severe",
    "moderate",
    "mild",
    "in partial remission",
    "in full remission",
    "in early remission",
    "with psychotic features",
    "with anxious distress",
    "with mixed features",
    "current episode manic",
    "chronic",
    "unspecified",
]


@settings(max_examples=150, deadline=None)
@given(
    rule_id=st.sampled_from(sorted(RULES)),
    suffixes=st.lists(st.sampled_from(SPECIFIER_SUFFIXES), min_size=1, max_size=3),
    sep=st.sampled_from([", ", " ", "; "]),
)
@example(rule_id="mild_neurocognitive_disorder", suffixes=["mild"], sep=", ")
@example(rule_id="depressive_disorder_due_to_another_medical_condition", suffixes=["severe"], sep=", ")
@example(rule_id="acute_stress_disorder", suffixes=["in partial remission"], sep=", ")
def test_trailing_specifiers_do_not_change_match(rule_id: str, suffixes: list[str], sep: str) -> None:
    label = sep.join([RULES[rule_id].name, *suffixes])
    found = match_label(label)
    assert found is not None and found.id == rule_id


@given(st.text(max_size=60))
def test_normalize_label_is_idempotent(s: str) -> None:
    once = normalize_label(s)
    assert normalize_label(once) == once


# ------------------------------------------------------------------------------------------------------------
# Checker


def test_all_unknown_facts_never_violate() -> None:
    facts = DiagnosisFacts(present_age=None)
    for rule in RULES.values():
        assert check_diagnosis(rule, facts) == [], rule.id


_facts = st.builds(
    DiagnosisFacts,
    present_age=st.none() | st.integers(0, 100),
    sex=st.sampled_from(["female", "male", "unknown"]),
    onset_age=st.none() | st.integers(0, 100).map(float) | st.floats(0, 100, allow_nan=False),
    duration_days=st.none() | st.integers(0, 1500),
    specifiers=st.lists(
        st.sampled_from(["with peripartum onset", "severe", "with postpartum onset"]), max_size=2
    ).map(tuple),
    stressor_to_onset_days=st.none() | st.integers(-5, 200),
    other_party_age=st.none() | st.integers(0, 60),
    history=st.dictionaries(
        st.sampled_from(["conduct_disorder", "adhd"]), st.none() | st.integers(0, 30).map(float)
    ),
    history_complete=st.booleans(),
)
_UNKNOWN = {
    "present_age": None,
    "onset_age": None,
    "duration_days": None,
    "stressor_to_onset_days": None,
    "other_party_age": None,
    "sex": "unknown",
    "specifiers": (),
}


@settings(max_examples=300, deadline=None)
@given(rule_id=st.sampled_from(sorted(RULES)), facts=_facts, forget=st.sampled_from(sorted(_UNKNOWN)))
@example(
    rule_id="borderline_personality_disorder",
    facts=DiagnosisFacts(present_age=16, duration_days=100),
    forget="duration_days",
)
@example(
    rule_id="persistent_depressive_disorder",
    facts=DiagnosisFacts(present_age=30, duration_days=400),
    forget="present_age",
)
def test_unknown_facts_never_add_violations(rule_id: str, facts: DiagnosisFacts, forget: str) -> None:
    rule = RULES[rule_id]
    before = {v.code for v in check_diagnosis(rule, facts)}
    after = {v.code for v in check_diagnosis(rule, dataclasses.replace(facts, **{forget: _UNKNOWN[forget]}))}
    assert after <= before


@settings(max_examples=200, deadline=None)
@given(rule_id=st.sampled_from(sorted(RULES)), facts=_facts)
def test_violations_are_known_codes_for_the_rule(rule_id: str, facts: DiagnosisFacts) -> None:
    for v in check_diagnosis(RULES[rule_id], facts):
        assert v.code in VIOLATION_CODES
        assert v.rule_id == rule_id
        assert "; " in v.message  # what and why, then how to fix


@settings(max_examples=100, deadline=None)
@given(age=st.integers(0, 17), days=st.integers(0, 364))
def test_messages_do_not_depend_on_case_values(age: int, days: int) -> None:
    rule = RULES["borderline_personality_disorder"]
    reference = check_diagnosis(rule, DiagnosisFacts(present_age=17, duration_days=364))
    assert check_diagnosis(rule, DiagnosisFacts(present_age=age, duration_days=days)) == reference


def test_violation_message_says_what_why_and_how_to_fix() -> None:
    (v,) = check_diagnosis(RULES["antisocial_personality_disorder"], DiagnosisFacts(present_age=17))
    assert v.code == "DSM_AGE_BELOW_MIN"
    assert "Antisocial Personality Disorder" in v.message
    assert "Criterion B" in v.message
    assert "use an age of at least 18" in v.message
    (v,) = check_diagnosis(
        RULES["major_depressive_disorder"],
        DiagnosisFacts(present_age=30, sex="male", specifiers=("with peripartum onset",)),
    )
    assert v.code == "DSM_SPECIFIER_SEX_MISMATCH"
    assert "drop the specifier" in v.message


def test_onset_min_bound_is_checked() -> None:
    rule = DsmRule.model_validate(
        {
            "id": "late_onset_example",
            "name": "Late Onset Example",
            "chapter": "other",
            "icd10cm": "F99",
            "source": "DSM-5-TR, example",
            "onset_age": {"min": 40, "max_exclusive": 60},
        }
    )
    codes = [
        [v.code for v in check_diagnosis(rule, DiagnosisFacts(present_age=None, onset_age=a))]
        for a in (39, 40, 59, 60)
    ]
    assert codes == [["DSM_ONSET_TOO_EARLY"], [], [], ["DSM_ONSET_TOO_LATE"]]


def test_rule_model_rejects_inconsistent_constraints() -> None:
    base = {"id": "x", "name": "X", "chapter": "other", "icd10cm": "F99", "source": "DSM-5-TR, x"}
    bad = [
        {"duration": {"min_days": 10, "max_days_exclusive": 10}},
        {
            "duration": {"min_days": 1},
            "duration_by_age": [{"age_max_exclusive": 18, "min_days": 1}, {"min_days": 2}],
        },
        {"duration_by_age": [{"min_days": 1}, {"age_max_exclusive": 18, "min_days": 2}]},
        {"present_age": {"min": 20, "max": 10}},
        {"present_age": {"max": 10, "exceptions": [{"min_duration_days": 365, "text": "t"}]}},
        {"onset_age": {"min": 12, "max_exclusive": 12}},
        {"sex_source": "s"},
        {"unknown_field": 1},
    ]
    for extra in bad:
        with pytest.raises(ValueError):
            DsmRule.model_validate({**base, **extra})


def test_facts_from_mapping_validates_types() -> None:
    facts = facts_from_mapping(
        {"present_age": 30, "sex": "male", "onset_age": 12, "history": {"conduct_disorder": 9}}
    )
    assert facts.onset_age == 12.0 and facts.history == {"conduct_disorder": 9.0}
    for bad in (
        {"present_age": "30"},
        {"present_age": True},
        {"sex": "m"},
        {"specifiers": "severe"},
        {"history": [1]},
        {"history_complete": "yes"},
        {"ages": 3},
    ):
        with pytest.raises(ValueError):
            facts_from_mapping(bad)
