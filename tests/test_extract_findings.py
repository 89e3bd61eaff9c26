"""Structured findings: the mental status examination and test results read into normalised values, rendered back
as plain text, and never copied from the source (checked on public MTSamples notes, CC0, when present)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from anonpsy.extract import extract
from anonpsy.extract.mentions.mse import parse_mental_status
from anonpsy.extract.mentions.results import flag_for, parse_results
from anonpsy.generate.findings import mental_status_text, results_text
from anonpsy.graph import Ideation, ReferenceFlag
from anonpsy.pipeline import deid_text
from anonpsy.rules.test_values import load_test_values

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "mtsamples-psych-dev" / "notes.jsonl"


def _dev_notes() -> list[dict[str, str]]:
    return [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines() if line.strip()]


# -- mental status examination ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Mood: \"I'm sad and depressed.\" Affect: constricted, tearful.",
         {"mood": "depressed", "mood_quoted": True, "affect": "restricted, tearful"}),
        ("Thoughts remained tangential, and the patient endorsed paranoid delusions.",
         {"thought_process": "tangential", "thought_content": "paranoid delusions"}),
        ("The patient denied suicidal or homicidal ideation, was oriented to person and place.",
         {"suicidal_ideation": Ideation.absent, "homicidal_ideation": Ideation.absent,
          "orientation": "oriented to person and place"}),
        ("Suicidal/Homicidal Ideation:  The patient denies on admission.",
         {"suicidal_ideation": Ideation.absent, "homicidal_ideation": Ideation.absent}),
        ("Positive for passive suicidal ideations. No auditory or visual hallucinations.",
         {"suicidal_ideation": Ideation.passive, "perception": "no hallucinations"}),
        ("Insight and judgment are both fair. The patient is A&O x3.",
         {"insight": "fair", "judgment": "fair", "orientation": "oriented x3"}),
        ("His attention is fair and his concentration impaired.",
         {"cognition": "attention fair, concentration impaired"}),
        ("His thought content was negative for delusions, phobias, obsessions, suicidal ideation.",
         {"thought_content": "no delusions, no phobias, no obsessions", "suicidal_ideation": Ideation.absent}),
    ],
)
def test_mental_status_findings(text: str, expected: dict[str, object]) -> None:
    ms, _ = parse_mental_status(text)
    got = {k: getattr(ms, k) for k in expected}
    assert got == expected


def test_unread_sentences_are_counted_not_copied() -> None:
    ms, omitted = parse_mental_status("Mood euthymic. The patient spoke about his dog Rex at length.", offset=100)
    assert ms.mood == "euthymic"
    assert [(o.words, o.start, o.reason) for o in omitted] == [(9, 115, "UNPARSED")]
    assert "Rex" not in ms.model_dump_json()


def test_mental_status_renders_every_field() -> None:
    ms, _ = parse_mental_status("Mood \"okay.\" Affect flat. Denies SI. Insight poor.")
    assert mental_status_text(ms) == "mood described by the patient as euthymic; affect flat; suicidal ideation " \
                                     "denied; insight poor"


# -- test results ----------------------------------------------------------------------------------------------


def test_every_pool_has_a_reference_flag() -> None:
    missing = sorted({p.interpretation for t in load_test_values().values() for p in t.pools
                      if flag_for(p.interpretation) == ReferenceFlag.unknown})
    assert missing == [], "map these pool interpretations in extract/mentions/results.py"


def test_results_mapped_unmapped_and_qualitative() -> None:
    values, omitted = parse_results(
        "Lithium 0.9 mmol/L; INR 1.2 (H); UDS positive for cannabinoids; Dr. Ellery reviewed the film.", "labs",
        offset=10, section="labs", rule_id="section.labs")
    got = [(v.name, v.value, v.unit, v.result, v.flag.value, v.rule_id) for v in values]
    assert got == [("Serum lithium concentration", "0.9", "mmol/L", None, "normal", "test_values.lithium_level"),
                   ("INR", "1.2", None, None, "high", None),
                   ("UDS", None, None, "positive for cannabinoids", "positive", None)]
    assert values[0].evidence is not None and values[0].evidence.start == 10
    assert {o.reason for o in omitted} == {"UNPARSED"} and "Ellery" not in str(values)


def test_result_naming_an_anchor_is_withheld() -> None:
    values, omitted = parse_results("Scored 12 at the Harborview Memory Lab, clock drawing abnormal.", "other")
    assert all("Harborview" not in v.name for v in values)
    assert "ANCHOR" in {o.reason for o in omitted} or not any(v.value == "12" for v in values)


def test_results_render_grouped() -> None:
    values, _ = parse_results("TSH 2.4 mIU/L, BP 128/84, PHQ-9 18, CT head: no acute abnormality", "labs")
    groups = results_text(values)
    assert list(groups) == ["Laboratory results", "Vital signs", "Rating scales and cognitive testing", "Imaging"]
    assert groups["Vital signs"].startswith("Systolic blood pressure 128 mmHg")


# -- real notes ------------------------------------------------------------------------------------------------

pytestmark_dev = pytest.mark.skipif(not DEV.is_file(), reason="../shared/data/mtsamples-psych-dev is not present")


def _mse_sentences(text: str) -> list[str]:
    from anonpsy.extract.sections import sentences

    return [s.text for s in sentences(text) if s.section == "mse"]


@pytestmark_dev
def test_dev_notes_mental_status_is_structured_and_never_copied() -> None:
    notes = _dev_notes()
    with_mse = 0
    for note in notes:
        text = note["text"]
        g = extract(text, case_id="dev")
        if [s for s in _mse_sentences(text)]:
            with_mse += bool(g.mental_status.present_fields())
        out = deid_text(text, seed=1, case_id="dev").text.lower()
        for sentence in _mse_sentences(text):
            words = re.findall(r"[a-z0-9']+", sentence.lower())
            for i in range(len(words) - 11):
                run = " ".join(words[i:i + 12])
                assert run not in " ".join(re.findall(r"[a-z0-9']+", out)), (note["note_id"], run)
    assert with_mse >= 10, "most dev notes with an examination yield structured findings"


def test_a_number_in_prose_is_no_named_result() -> None:
    """An unmapped number counts as a result only in a short item whose words before it name it."""
    from anonpsy.extract.mentions.results import parse_results

    prose = ("The Confidence Index associated with ADHD was over 58 percent that no clinical attention problems "
             "are present. The Modified Welsh Code is as follows: 49+86-231/570.")
    values, omitted = parse_results(prose, "labs")
    assert values == [] and omitted
    listed, _ = parse_results("Ferritin 12, prolactin level 30.", "labs")
    assert [v.value for v in listed] == ["12", "30"] and listed[0].name == "Ferritin"


@pytest.mark.parametrize(
    ("text", "names"),
    [
        # MTSamples-style vital signs (synthetic): orthostatic readings named by the posture
        ("Sitting BP 112/84 with a pulse of 84, standing after two minutes 130/90 with a pulse of 66.",
         {"Systolic blood pressure", "Diastolic blood pressure", "Heart rate"}),
        ("Supine 120/80; HbA1c 6.1", {"Haemoglobin A1c"}),
        # MTSamples (CC0): a second reading named by the limb, and a weight gain told after "which is about"
        ("Blood pressure 151/102 in the right arm and 152/104 in the left arm, weight 172 pounds, which is about "
         "6 pounds more than last visit.", {"Systolic blood pressure", "Diastolic blood pressure", "weight"}),
        # boundary: an unmapped value with a name of its own stays
        ("FK506 28", {"FK506"}),
    ],
)
def test_a_posture_names_no_test(text: str, names: set[str]) -> None:
    """A blood pressure taken in a posture ("standing after two minutes 130/90") is a vital sign the words before
    it do not name as a test: it is never carried as a laboratory result called "standing after two minutes"."""
    values, _ = parse_results(text, "labs")
    assert {v.name for v in values} == names


@pytest.mark.parametrize("text", ["Most recent labs from 11/07.", "Labs were drawn on 3/14/2021.", "Labs of 12-01-19."])
def test_a_part_of_a_date_is_no_result(text: str) -> None:
    """The digits of a written date are no unnamed result ("labs from 11/07" is no "from 07")."""
    from anonpsy.extract.mentions.results import parse_results

    values, _ = parse_results(text, "labs")
    assert values == []


def test_an_unmapped_value_is_named_by_its_own_words() -> None:
    """"Hemoglobin 10.7 and hematocrit 31.2" names 31.2 "hematocrit", not "Hemoglobin and hematocrit"; a count
    before a cell name is named by it (MTSamples shapes, CC0)."""
    values, _ = parse_results("Hemoglobin 10.7 and hematocrit 31.2 both are decreased.", "labs")
    assert [(v.name, v.value) for v in values] == [("Haemoglobin", "10.7"), ("hematocrit", "31.2")]
    values, omitted = parse_results("WBC 9200, differential with 82 neutrophils, 8 lymphocytes.", "labs")
    assert [(v.name, v.value) for v in values] == [
        ("White blood cell count", "9200"), ("neutrophils", "82"), ("lymphocytes", "8")]
    assert omitted == []


def test_a_drug_taken_told_in_a_results_section_is_a_treatment() -> None:
    """A results section may tell what the patient takes ("She has been on three Tums ... I am increasing ..."):
    a treatment, while a drug named by a level or a screen there stays none (MTSamples shapes, CC0)."""
    g = extract("LABORATORY DATA: Her calcium level was 7.5 this morning. She has been on three Tums orally b.i.d. "
                "and I am increasing three Tums orally q.i.d.", case_id="lab")
    assert [t.name for t in g.treatments] == ["calcium carbonate"]
    g = extract("LABORATORY DATA: Lithium level 0.8. Urine drug screen positive for cocaine and benzodiazepines.",
                case_id="lab")
    assert g.treatments == []


# -- results told in clauses and lists ---------------------------------------------------------------------------


def _named(text: str) -> dict[str, tuple[str | None, str | None, str]]:
    values, _ = parse_results(text, "labs")
    return {v.name: (v.value, v.result, v.flag.value) for v in values}


def test_a_value_told_in_a_clause_is_named_by_its_subject() -> None:
    got = _named("LDH was elevated to 1925 units/L (upper normal 670), and total protein and albumin were both low "
                 "at 6.2 and 3.4 g/dL respectively.  Calcium was also slightly low at 8.8 mg/dL.")
    assert got["total protein"] == ("6.2", None, "low")
    assert got["albumin"] == ("3.4", None, "low")
    assert got["Calcium"] == ("8.8", None, "low")
    # neither the flag words nor the reference range name a test
    assert not any(n.lower().startswith(("both", "also", "units", "upper")) for n in got)
    assert all(v != "670" for v, _, _ in got.values())


def test_a_list_with_one_verdict_gives_it_to_every_item() -> None:
    got = _named("Electrolytes, BUN, creatinine, uric acid, and magnesium were all normal.")
    assert set(got) == {"Electrolytes", "BUN", "creatinine", "uric acid", "magnesium"}
    assert {r for _, r, _ in got.values()} == {"normal"}
    # boundary: a clause about something else ends the list
    got = _named("He is anxious, cooperative, and his mood is normal.")
    assert "anxious" not in got and "cooperative" not in got


def test_a_reference_range_is_no_result() -> None:
    values, omitted = parse_results("WBC 12.1 (normal range 4-10), ULN 40, normal being 0.34.", "labs")
    assert [v.value for v in values] == ["12.1"]
    assert "REFERENCE_RANGE" in {o.reason for o in omitted}


def test_a_relative_clause_gives_the_value_of_the_name_before_it() -> None:
    assert _named("INR, which is still 8.8.")["INR"] == ("8.8", None, "unknown")


def test_a_childs_values_are_told_without_the_adult_meaning() -> None:
    """The value pools' bands are adult reference ranges: a ten-year-old's heart rate of 123 is told as a value."""
    child = deid_text("The patient is a 10-year-old boy with anxiety. VITAL SIGNS: Heart rate 123, respiratory rate "
                      "24, blood pressure 96/60.", seed=0).text
    adult = deid_text("The patient is a 40-year-old man with anxiety. VITAL SIGNS: Heart rate 123, respiratory rate "
                      "24, blood pressure 96/60.", seed=0).text
    assert "Heart rate" in child and "(" not in child.split("Vital signs:")[1]
    assert "(" in adult.split("Vital signs:")[1]
