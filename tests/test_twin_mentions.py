"""The mention and assertion layers of the RecordTwin table and the generalisation hierarchy."""

from __future__ import annotations

import pytest

pytest.importorskip("simple_icd_10_cm", reason="needs the twin extra: pip install 'anonpsy[twin]'")

from anonpsy.twin.concepts import ENTITY_TYPES, parse_types
from anonpsy.twin.mentions import Matcher, default_hierarchy, matcher

H = default_hierarchy()


def _entities(text: str) -> dict[str, int]:
    return matcher().document(text).entities()


def test_negated_family_and_hypothetical_mentions_are_not_entities() -> None:
    text = ("HISTORY OF PRESENT ILLNESS:\nNo history of depression. She denies suicidal ideation. She takes "
            "sertraline 50 mg daily and reports insomnia.\n\nFAMILY HISTORY:\nHer mother had bipolar disorder.\n")
    dm = matcher().document(text)
    by = {text[m.start:m.end].lower(): m for m in dm.mentions}
    assert by["depression"].assertion == "negated" and not by["depression"].entity
    assert by["suicidal ideation"].assertion == "negated"
    assert by["bipolar disorder"].assertion == "family" and not by["bipolar disorder"].entity
    assert set(dm.entities()) == {"rx:sertraline", "sx:insomnia"}


def test_allergy_list_is_not_a_treatment_and_a_plan_is() -> None:
    text = ("ALLERGIES:\nLorazepam.\n\nPLAN:\nWe will start cognitive behavioral therapy. Consider lithium if no "
            "response.\n")
    ents = _entities(text)
    assert "tx:cbt" in ents
    assert "rx:lorazepam" not in ents and "rx:lithium" not in ents


def test_canonical_synonyms_and_dsm_aliases_give_the_dsm_concept() -> None:
    ents = _entities("ASSESSMENT:\nAlcohol dependence. MDD, recurrent. Conversion disorder.\n")
    assert {"dx:alcohol_use_disorder", "dx:major_depressive_disorder",
            "dx:functional_neurological_symptom_disorder"} <= set(ents)


def test_short_test_aliases_need_a_value_and_drug_names_stay_drugs() -> None:
    assert "test:potassium" in _entities("LABS:\nK 4.1, creatinine 0.9.\n")
    assert "test:potassium" not in _entities("HPI:\nVitamin K was given.\n")
    ents = _entities("HPI:\nHe takes lithium 900 mg at night. Lithium level 0.8 mmol/L last week.\n")
    assert "rx:lithium" in ents and "test:lithium_level" in ents


def test_systolic_and_diastolic_pressure_are_one_test_named_blood_pressure() -> None:
    assert H["test:blood_pressure"].name == "blood pressure"
    assert "test:blood_pressure" in _entities("EXAM:\nBlood pressure 128/84, heart rate 72.\n")


def test_every_concept_climbs_to_a_root_of_its_own_type() -> None:
    for cid, c in H.concepts.items():
        chain = H.lineage(cid)
        assert all(H[a].type == c.type for a in chain)
        assert [H[a].level for a in chain] == sorted(H[a].level for a in chain)
        assert H[chain[-1]].parent is None


def test_a_generalisation_never_reads_as_a_specific_concept() -> None:
    m = matcher()
    for g in H.generalisations():
        spans = m.spans(g.name)
        assert [(s.start, s.end, s.concept) for s in spans] == [(0, len(g.name), g.id)], g.id
    assert "rx.class:lithium" not in H  # its name is the drug's: lithium generalises to the next level
    assert H.ancestors("rx:lithium") == ("rx.group:psychotropic",)


def test_dsm_chapters_generalise_to_the_residual_category() -> None:
    assert H.ancestors("dx:panic_disorder") == ("dx.chapter:anxiety", "dx.root")
    assert H["dx.chapter:anxiety"].name == "unspecified anxiety disorder"
    assert H["rx.class:ssri"].name == "selective serotonin reuptake inhibitor"


def test_types_are_configurable() -> None:
    assert parse_types("test,diagnosis") == ("diagnosis", "test")
    only = Matcher(("medication",), H)
    assert {s.concept for s in only.spans("Depression treated with sertraline.")} == {"rx:sertraline"}
    assert len(ENTITY_TYPES) == 6
