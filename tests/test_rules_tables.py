"""The small rule tables: schemas, cases, coverage, typed loaders, pinned counts and helper properties."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tests.vocabulary import CHAPTER_IDS, CORE_SYMPTOM_HEADWORDS, MEDICATION_CLASS_IDS, REQUIRED_DSM_RULE_IDS

from anonpsy.errors import AnonpsyError
from anonpsy.graph import ArrivalMode, LegalStatus, NodeType, RelationType, Route, SafetyFlag, Setting
from anonpsy.paths import rules_dir, schemas_dir
from anonpsy.rules import tables as T
from anonpsy.rules.registry import load_all_kinds

KINDS = tuple(T.FILES)


def _words(text: str, sep: str | None = None) -> frozenset[str]:
    """Items of a whitespace- or ``sep``-separated list written as prose (line breaks read as spaces)."""
    return frozenset(" ".join(w.split()) for w in text.split(sep) if w.strip())



# Entries per kind as the rules checker counts them (adding an entry is a deliberate act).
PINNED_ENTRIES = {
    "age_offsets": 9,
    "sex_reassignment": 2,
    "ethnicity": 30,
    "occupations": 7,
    "visit_scaffold": 12,
    "routes": 13,
    "medication_classes": 42,
    "edge_pairs": 28,
    "sex_specific": 50,
}
PINNED_CASES = {
    "age_offsets": 75,
    "sex_reassignment": 12,
    "ethnicity": 15,
    "occupations": 124,
    "visit_scaffold": 25,
    "routes": 38,
    "medication_classes": 62,
    "edge_pairs": 49,
    "sex_specific": 75,
}


def _doc(kind: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((rules_dir() / T.FILES[kind]).read_text(encoding="utf-8"))
    return data


def _cases(kind: str) -> list[dict[str, Any]]:
    path = rules_dir() / T.FILES[kind].replace(".yaml", ".cases.yaml")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    cases: list[dict[str, Any]] = data["cases"]
    return cases


def _schema(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((schemas_dir() / "rules" / f"{name}.json").read_text(encoding="utf-8"))
    return data


# -- files, schemas, cases ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_rule_file_validates_against_its_schema(kind: str) -> None:
    doc = _doc(kind)
    assert doc["kind"] == kind
    schema = _schema(kind)
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(doc)]
    assert errors == []


@pytest.mark.parametrize("kind", KINDS)
def test_cases_file_validates_against_cases_schema(kind: str) -> None:
    path = rules_dir() / T.FILES[kind].replace(".yaml", ".cases.yaml")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(_schema("cases")).validate(data)


@pytest.mark.parametrize("kind", KINDS)
def test_every_case_behaves_as_expected(kind: str) -> None:
    rule_kind = load_all_kinds()[kind]
    doc = _doc(kind)
    ids = {e["id"] for e in rule_kind.entries(doc)}
    cases = _cases(kind)
    assert len({c["id"] for c in cases}) == len(cases), "case ids must be unique"
    problems = []
    for case in cases:
        if "rule" in case and case["rule"] not in ids:
            problems.append(f"{case['id']}: unknown rule {case['rule']!r}")
        if not case.get("todo"):
            problems += [f"{case['id']}: {p}" for p in rule_kind.run_case(doc, case)]
    assert problems == []


@pytest.mark.parametrize("kind", KINDS)
def test_cases_cover_every_threshold(kind: str) -> None:
    rule_kind = load_all_kinds()[kind]
    assert rule_kind.coverage(_doc(kind), _cases(kind)) == []


@pytest.mark.parametrize("kind", KINDS)
def test_entries_have_ids_and_sources(kind: str) -> None:
    doc = _doc(kind)
    entries = load_all_kinds()[kind].entries(doc)
    assert entries
    ids = [e["id"] for e in entries]
    assert len(set(ids)) == len(ids)
    assert all(doc.get("source") or e.get("source") for e in entries)


def test_pinned_entry_and_case_counts() -> None:
    kinds = load_all_kinds()
    assert {k: len(kinds[k].entries(_doc(k))) for k in KINDS} == PINNED_ENTRIES
    assert {k: len(_cases(k)) for k in KINDS} == PINNED_CASES


def test_coverage_reports_a_missing_boundary_case() -> None:
    cases = [c for c in _cases("age_offsets") if c["id"] != "adult-result-18-from-below"]
    cases = [c for c in cases if c["input"].get("age", 0) + c["input"].get("offset", 0) != 18]
    problems = load_all_kinds()["age_offsets"].coverage(_doc("age_offsets"), cases)
    assert any("adult_at_18" in p and "missing [18]" in p for p in problems)
    kept = [
        c for c in _cases("age_offsets") if c["id"] not in ("older-offset-plus-6", "older-offset-minus-6")
    ]
    problems = load_all_kinds()["age_offsets"].coverage(_doc("age_offsets"), kept)
    assert problems == [
        "age_offsets: threshold older_adult.max_offset (|offset|) = 5 needs cases at [4, 5, 6]; missing [6]"
        " (add a case at the boundary and one step either side)"
    ]


def test_run_case_reports_wrong_expectation() -> None:
    kind = load_all_kinds()["age_offsets"]
    case = {"id": "x", "input": {"age": 17, "offset": 2}, "expect": "pass"}
    assert kind.run_case(_doc("age_offsets"), case) == [
        "expected pass, got violations ['AGE_OFFSET_CROSSES_ADULT']"
    ]
    bad = {"id": "y", "input": {"offset": 2}, "expect": "pass"}
    assert kind.run_case(_doc("age_offsets"), bad)[0].startswith("input not understood")


# -- typed loaders ------------------------------------------------------------------------------------------


def test_all_tables_load_from_cold() -> None:
    """Load time is reported by tests/bench/bench_core.py; here only that a cold load gives every kind."""
    for loader in T.LOADERS.values():
        loader.cache_clear()
    tables = T.load_all_tables()
    assert set(tables) == set(KINDS)


def test_broken_table_raises_coded_error_without_content(tmp_path: Path) -> None:
    target = tmp_path / T.FILES["age_offsets"]
    target.parent.mkdir(parents=True)
    target.write_text(
        "kind: age_offsets\nversion: 1\nfloor_age: 0\nmax_age: 120\nrules: []\n", encoding="utf-8"
    )
    with pytest.raises(AnonpsyError) as err:
        T.load_table_from("age_offsets", tmp_path)
    assert err.value.code == "R100"
    target.write_text("kind: [unclosed\n", encoding="utf-8")
    with pytest.raises(AnonpsyError) as err:
        T.load_table_from("age_offsets", tmp_path)
    assert err.value.code == "R101"
    with pytest.raises(AnonpsyError) as err:
        T.load_table_from("routes", tmp_path)
    assert err.value.code == "E100"


def test_age_bands_tile_the_range() -> None:
    doc = _doc("age_offsets")
    doc["rules"][1]["min_age"] = 14
    with pytest.raises(ValueError, match="must start at 13"):
        T.AgeOffsets.model_validate(doc)


# -- vocabularies agree with the graph model and the shared lists -------------------------------------------


def test_visit_vocabularies_equal_graph_enums() -> None:
    vocab = T.visit_vocabularies()
    assert vocab["setting"] == tuple(s.value for s in Setting)
    assert vocab["arrival_mode"] == tuple(a.value for a in ArrivalMode)
    assert vocab["legal_status"] == tuple(lv.value for lv in LegalStatus)
    assert vocab["safety_flags"] == tuple(f.value for f in SafetyFlag)
    assert T.immutable_visit_fields() == ("setting", "arrival_mode", "legal_status", "safety_flags")
    mapped = {r.flag for r in T.load_visit_scaffold().rules}
    assert mapped == {f.value for f in SafetyFlag}


def test_routes_cover_the_route_enum() -> None:
    assert [r.id for r in T.load_routes().rules] == list(Route)


def test_medication_class_ids_equal_the_shared_list() -> None:
    assert sorted(T.medication_class_ids()) == sorted(MEDICATION_CLASS_IDS)
    assert len(CORE_SYMPTOM_HEADWORDS) == 163 and "decreased need for sleep" in CORE_SYMPTOM_HEADWORDS
    assert len(MEDICATION_CLASS_IDS) == 42


def _dsm_rule_ids() -> set[str]:
    ids = set(REQUIRED_DSM_RULE_IDS)
    for path in sorted((rules_dir() / "dsm").glob("*.yaml")):
        if path.name.endswith(".cases.yaml"):
            continue
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        ids |= {e["id"] for e in doc.get("rules", []) if isinstance(e, dict) and "id" in e}
    return ids


def test_indications_use_known_chapters_rules_and_headwords() -> None:
    known_rules = _dsm_rule_ids()
    for c in T.load_medication_classes().rules:
        assert set(c.indications.chapters) <= CHAPTER_IDS, c.id
        assert set(c.indications.rules) <= known_rules, c.id
        assert set(c.indications.symptoms) <= CORE_SYMPTOM_HEADWORDS, c.id


def test_class_indications_examples() -> None:
    chapters, rules = T.class_indications("ssri")
    assert {"depressive", "anxiety", "obsessive_compulsive", "trauma_stressor"} <= set(chapters)
    assert {"premenstrual_dysphoric_disorder", "bulimia_nervosa"} <= set(rules)
    assert "bipolar" in T.class_indications("lithium")[0]
    assert T.class_indications("stimulant")[1][0] == "adhd"
    assert "major_neurocognitive_disorder" in T.class_indications("cholinesterase_inhibitor")[1]
    assert T.class_indications("pde5_inhibitor")[1] == ("erectile_disorder",)
    assert T.class_for_drug("Sertraline") == "ssri"
    assert T.class_for_drug("unobtainium") is None
    med = T.medication_class("lithium")
    assert med is not None and med.psychotropic
    assert T.medication_class("nope") is None
    with pytest.raises(KeyError):
        T.class_indications("nope")


def test_sex_specific_terms_use_known_dsm_rules() -> None:
    known = _dsm_rule_ids()
    for term in T.load_sex_specific().terms:
        assert set(term.dsm_rules) <= known, term.id


def test_support_levels_reference_shared_dsm_rules() -> None:
    for level in T.load_occupations().support_levels:
        assert {m.dsm_rule for m in level.matches} <= REQUIRED_DSM_RULE_IDS


def test_dsm_sex_constraints_are_mirrored() -> None:
    paths = [p for p in sorted((rules_dir() / "dsm").glob("*.yaml")) if not p.name.endswith(".cases.yaml")]
    if not paths:
        pytest.skip("no rules/dsm files in this checkout")
    table = T.load_sex_specific()
    mirrored = {(r, t.sex) for t in table.terms for r in t.dsm_rules}
    for path in paths:
        for entry in yaml.safe_load(path.read_text(encoding="utf-8")).get("rules", []):
            if not isinstance(entry, dict):
                continue
            if entry.get("sex") in ("female", "male"):
                assert (entry["id"], entry["sex"]) in mirrored, entry["id"]
            for specifier, sex in (entry.get("specifier_sex") or {}).items():
                assert T.sex_fixed_by_terms(specifier) == sex, (entry["id"], specifier)


def test_occupations_pools_match_age_bands() -> None:
    bands = [(b.id, b.min_age, b.max_age) for b in T.load_age_offsets().rules]
    pools = [(p.id, p.min_age, p.max_age) for p in T.load_occupations().rules]
    assert bands == pools
    labels = {o.label for p in T.load_occupations().rules for o in p.occupations}
    assert len(labels) == 153
    assert len(labels) >= 120


def test_child_pool_is_school_only() -> None:
    child = T.load_occupations().rules[0]
    assert child.id == "child"
    assert all(o.skill_level == 0 for o in child.occupations)


def test_edge_pairs_match_the_assignment() -> None:
    allowed = T.load_edge_pairs().allowed
    assert {(s, t) for r, s, t in allowed if r == "MANIFESTS_AS"} == {("diagnosis", "symptom")}
    assert {(s, t) for r, s, t in allowed if r == "PRESENTS_WITH"} == {("visit", "symptom")}
    assert {(s, t) for r, s, t in allowed if r == "TREATMENT_OF"} == {
        ("treatment", "diagnosis"),
        ("treatment", "symptom"),
    }
    assert len([1 for r, _, _ in allowed if r == "INDUCES"]) == 8
    assert T.edge_pair_allowed(RelationType.INDUCES, NodeType.symptom, NodeType.diagnosis)
    assert {r for r, _, _ in allowed} == {r.value for r in RelationType}
    assert T.edge_pair_allowed(RelationType.INDUCES, NodeType.symptom, NodeType.symptom)
    assert not T.edge_pair_allowed("MANIFESTS_AS", "symptom", "diagnosis")


# -- helper examples ----------------------------------------------------------------------------------------


def test_helper_examples() -> None:
    assert T.age_offset_allowed(17, 2) == ["AGE_OFFSET_CROSSES_ADULT"]
    assert T.age_offset_bounds(17) == (-2, 0)
    assert T.age_offset_bounds(0) == (0, 2)
    assert T.age_offset_bounds(40) == (-5, 5)
    assert T.age_band(12) == "child" and T.age_band(13) == "adolescent" and T.age_band(65) == "older_adult"
    assert T.occupation_allowed(12, "nurse") == ["OCCUPATION_AGE_BAND"]
    assert T.parse_route("po") is Route.oral
    assert T.parse_route("by mouth") is Route.oral
    assert T.sex_term_violations("postpartum", "male") == ["SEX_TERM_CONFLICT"]
    assert T.sex_fixed_by_terms("bipolar I disorder, with peripartum onset") == "female"
    assert T.sex_weights() == {"keep": 0.5, "switch": 0.5}
    assert T.urgency_for(["intoxication", "suicide_attempt"]) == "emergent"
    assert T.urgency_for([]) == "routine"
    assert T.support_level_for([("autism_spectrum_disorder", ["requiring very substantial support"])]) == (
        "very_substantial_support"
    )
    assert T.support_level_for([("intellectual_disability", ["moderate"])]) == "substantial_support"
    assert T.support_level_for([("intellectual_disability", ["mild"])]) is None
    assert [c.id for c in T.etiologic_cues()][:2] == ["hyphen_induced", "induced"]
    pool = T.ethnicity_pool()
    assert abs(sum(w for _, w in pool) - 1) < 1e-9
    assert "Latina" not in {label for label, _ in pool}
    assert "Latina" in {label for label, _ in T.ethnicity_pool("female")}


def test_every_route_synonym_parses_alone_and_in_a_sig() -> None:
    for entry in T.load_routes().rules:
        for syn in entry.synonyms:
            assert T.parse_route(syn) is entry.id, syn
            assert T.parse_route(syn.upper()) is entry.id, syn
            assert T.parse_route(f"drug 5 mg {syn} daily") is entry.id, syn


def test_every_sex_term_fixes_its_sex() -> None:
    for term in T.load_sex_specific().terms:
        for text in term.terms:
            assert T.sex_fixed_by_terms(f"history of {text.upper()} noted", age=30) == term.sex, text


def test_every_etiologic_cue_is_found() -> None:
    for cue in T.etiologic_cues():
        text = f"steroid{cue.cue} mania" if cue.cue.startswith("-") else f"mania {cue.cue} steroids"
        assert [m.cue_id for m in T.find_etiologic_cues(text)] == [cue.id], cue.id


@pytest.mark.parametrize("age", range(0, 121))
def test_every_age_has_a_nonempty_pool_for_every_support_level(age: int) -> None:
    for level in [None, *(s.id for s in T.load_occupations().support_levels)]:
        pool = T.occupation_pool(age, level)
        assert pool, (age, level)
        for occ in pool:
            assert T.occupation_allowed(age, occ.label, level) == [], (age, level, occ.label)


# -- properties ---------------------------------------------------------------------------------------------

_FILLERS = sorted(_words("the patient reports low mood and was seen today with anxiety it"))
_SEPARATORS = [" ", ", ", ". ", "; ", " (", ") ", "\n"]


def _unambiguous_words(side: str) -> list[str]:
    """Words of one sex that map one-to-one in both directions and swap in every context."""
    table = T.load_sex_specific()
    contextual = {T._norm(c.word) for c in table.contextual}
    out = []
    for pair in table.pairs:
        if pair.scope != "always" or set(pair.directions) != {"to_female", "to_male"}:
            continue
        if T._norm(pair.male) in contextual or T._norm(pair.female) in contextual:
            continue
        out.append(getattr(pair, side))
    return out


def _cased(word: str, style: int) -> str:
    return [word.lower(), word[:1].upper() + word[1:], word.upper()][style]


def _texts(side: str) -> st.SearchStrategy[str]:
    """Texts of filler words and one sex's unambiguous gendered words, in lower, Title or UPPER case."""
    word = st.one_of(
        st.sampled_from(_FILLERS),
        st.tuples(st.sampled_from(_unambiguous_words(side)), st.integers(0, 2)).map(lambda t: _cased(*t)),
    )
    return st.lists(st.tuples(word, st.sampled_from(_SEPARATORS)), min_size=1, max_size=25).map(
        lambda parts: "".join(w + s for w, s in parts)
    )


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["male", "female"]).flatmap(lambda side: st.tuples(st.just(side), _texts(side))))
@example(("male", "He said the gentleman was a Man. "))
@example(("female", "SHE is a woman; Ms Doe, a lady "))
def test_swap_sex_terms_is_involutive_on_unambiguous_text(side_text: tuple[str, str]) -> None:
    side, text = side_text
    other = "female" if side == "male" else "male"
    there = T.swap_sex_terms(text, other)
    assert T.swap_sex_terms(there, side) == text


_ANY_WORDS = [
    "she", "her", "hers", "herself", "he", "him", "his", "himself", "a", "an", "the", "mother", "father",
    "wife", "husband", "single", "told", "that", "own", "Mrs", "Mr", "woman", "man", "girl", ".", ",",
]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(_ANY_WORDS), min_size=1, max_size=20).map(" ".join),
    st.sampled_from(["male", "female"]),
)
@example("a her mother", "male")
def test_swap_sex_terms_is_idempotent(text: str, to_sex: str) -> None:
    once = T.swap_sex_terms(text, to_sex)
    assert T.swap_sex_terms(once, to_sex) == once


@settings(max_examples=200, deadline=None)
@given(st.integers(-2, 122), st.integers(-12, 12))
@example(17, 1)
@example(89, 1)
def test_age_offset_bounds_agree_with_allowed(age: int, offset: int) -> None:
    if not 0 <= age <= 120:
        assert T.age_offset_allowed(age, offset) == ["AGE_INVALID"]
        return
    lo, hi = T.age_offset_bounds(age)
    assert lo <= 0 <= hi
    assert (T.age_offset_allowed(age, offset) == []) == (lo <= offset <= hi)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["female", "male", "unknown"]),
    st.sampled_from([None, "female", "male"]),
    st.integers(0, 2**32 - 1),
)
def test_choose_sex_never_violates_constraints(current: str, fixed: str | None, seed: int) -> None:
    chosen = T.choose_sex(current, fixed, random.Random(seed))
    assert chosen == T.choose_sex(current, fixed, random.Random(seed))
    if fixed is not None and current != "unknown" and current != fixed:
        assert chosen.value == fixed
        return
    assert T.sex_change_allowed(current, chosen.value, fixed) == []


def test_choose_sex_keeps_about_half() -> None:
    rng = random.Random(7)
    kept = sum(T.choose_sex("female", None, rng).value == "female" for _ in range(4000))
    assert 1800 < kept < 2200


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([None, "female", "male"]))
def test_choose_ethnicity_draws_allowed_labels(seed: int, sex: str | None) -> None:
    label = T.choose_ethnicity(random.Random(seed), sex)
    assert T.ethnicity_allowed(label, sex) == []
