"""Medical conditions keep what the note writes about them: the lexicon phrase, with the grade and side written just
before it ("mild white matter disease", "right-sided hemiparesis"), and the status its sentence gives."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy import lexicon
from anonpsy.extract import extract
from anonpsy.extract.assembly.nodes import condition_name
from anonpsy.graph import Certainty, HistoryStatus

HEAD = "The patient is a 60-year-old man seen for weakness.\n"


def _past(note: str) -> dict[str, str]:
    g = extract(HEAD + note)
    return {p.id: p.condition for p in g.past_history if p.status != HistoryStatus.denied}


@pytest.mark.parametrize(("note", "pid", "name"), [
    ("IMAGING: MRI of the brain shows mild white matter disease.", "ph_cerebral_white_matter_disease",
     "mild white matter disease"),
    ("PAST MEDICAL HISTORY: Old injury leaving him with right-sided hemiparesis.", "ph_hemiparesis",
     "right-sided hemiparesis"),
    ("PAST MEDICAL HISTORY: Moderate to severe aortic stenosis.", "ph_valvular_heart_disease",
     "moderate to severe aortic stenosis"),
    ("COURSE: Angiography showed a small aneurysm at the origin of the artery.", "ph_aneurysm", "small aneurysm"),
    ("COURSE: CT showed a small right SDH.", "ph_subdural_hematoma", "small right subdural hematoma"),
    ("IMPRESSION: Disc herniation with radicular symptoms in the leg.", "ph_radiculopathy", "radicular symptoms"),
])
def test_a_condition_keeps_its_grade_and_side(note: str, pid: str, name: str) -> None:
    past = _past(note)
    assert past.get(pid) == name, past


@pytest.mark.parametrize(("results", "pid"), [
    ("IMAGING: MRI of the brain showed a small venous angioma.", "ph_developmental_venous_anomaly"),
    ("RADIOLOGY: Abnormal signal in the frontal lobe consistent with a parenchymal hemorrhage.",
     "ph_intraparenchymal_hemorrhage"),
])
def test_a_conclusion_of_imaging_is_the_patients_finding(results: str, pid: str) -> None:
    assert pid in _past(results)


@pytest.mark.parametrize("results", [
    "LABS: HIV antibody negative. Hepatitis C panel pending.",
    "LABS: Hepatitis C antibody was shown to be negative.",
    "IMAGING: CT of the head showed no evidence of stroke or hemorrhage.",
    "LABS: Glucose 104, sodium 138.",
])
def test_a_test_name_or_a_normal_study_is_no_condition(results: str) -> None:
    g = extract(HEAD + results)
    assert [p.condition for p in g.past_history] == [], results


def test_a_suspected_vasculitis_is_a_possibility_not_a_history() -> None:
    g = extract(HEAD + "IMPRESSION: The angiogram is suggestive of CNS vasculitis.")
    assert "ph_cns_vasculitis" not in {p.id for p in g.past_history}
    dx = {d.id: d for d in g.diagnoses}
    assert dx["dx_cns_vasculitis"].certainty == Certainty.provisional


def test_a_denied_condition_is_denied() -> None:
    g = extract(HEAD + "PAST MEDICAL HISTORY: No history of hemiparesis.")
    ph = {p.id: p for p in g.past_history}
    assert ph["ph_hemiparesis"].status == HistoryStatus.denied


def test_a_relatives_condition_is_the_relatives() -> None:
    g = extract(HEAD + "FAMILY HISTORY: His mother had a brain aneurysm.")
    assert "ph_cerebral_aneurysm" not in {p.id for p in g.past_history}
    assert any("aneurysm" in f.condition for f in g.family_history)


def test_a_grade_far_from_the_condition_is_not_its_grade() -> None:
    # "severe" belongs to the pain, not to the hemiparesis two words on
    assert _past("PAST MEDICAL HISTORY: Severe pain and hemiparesis.").get("ph_hemiparesis") == "hemiparesis"


_CONDITION_PHRASES = sorted({s for e in lexicon.condition_lexicon().rules for s in (e.headword, *e.synonyms)
                             if len(s) > 4 and not s.isupper()})
_ALLOWED = frozenset({"mild", "moderate", "moderately", "severe", "to", "small", "large", "tiny", "minimal", "marked",
                      "extensive", "massive", "right", "left", "bilateral", "right-sided", "left-sided",
                      "bilateral-sided"})
_WORDS = st.sampled_from(["Mild", "moderate", "to", "severe", "small", "right", "left-sided", "Jones", "Smith",
                          "with", "a", "the", "of", "Dr.", "12/03", "Boston", "-", "sided", "marked", "and"])


@given(before=st.lists(_WORDS, max_size=8), phrase=st.sampled_from(_CONDITION_PHRASES))
@example(before=["Dr.", "Smith", "moderate", "to", "severe"], phrase="aortic stenosis")
@example(before=["Smith", "right-sided"], phrase="hemiparesis")
@example(before=["Mild", "-", "moderate"], phrase="Bell's palsy")
def test_condition_name_copies_only_a_grade_a_side_and_the_phrase(before: list[str], phrase: str) -> None:
    """Property: whatever precedes a condition in the note, its graph name holds the lexicon's own words and at
    most a grade and a side (never a name, place or date of the note)."""
    text = " ".join(before) + (" " if before else "") + phrase + "."
    matches = [m for m in lexicon.find_terms(text, "condition") if m.end == len(text) - 1]
    if not matches:
        return  # the words before joined the phrase into another term
    m = matches[0]
    name = condition_name(m, text)
    lexicon_words = {w for e in lexicon.condition_lexicon().rules for s in (e.headword, *e.synonyms, *e.findings)
                     for w in re.findall(r"[\w'’-]+", s.lower())}
    for w in re.findall(r"[^\s()]+", name.lower()):
        assert w in _ALLOWED or w in lexicon_words or all(p in _ALLOWED for p in w.split("-")), (text, name)


@pytest.mark.parametrize(("note", "pid", "name"), [
    # a name typed in capitals is the name, not an abbreviation of the headword
    ("IMPRESSION: GLIOBLASTOMA MULTIFORME.", "ph_brain_tumor", "glioblastoma multiforme"),
    ("IMPRESSION: CEREBROVASCULAR ACCIDENT.", "ph_stroke", "cerebrovascular accident"),
    # a short abbreviation in capitals still names the headword
    ("IMPRESSION: CVA.", "ph_stroke", "stroke"),
    # an eponym keeps its possessive
    ("PAST MEDICAL HISTORY: Parkinson's disease.", "ph_parkinson_disease", "Parkinson's disease"),
    ("PAST MEDICAL HISTORY: Parkinson disease.", "ph_parkinson_disease", "Parkinson disease"),
])
def test_a_condition_is_named_as_written(note: str, pid: str, name: str) -> None:
    past = _past(note)
    assert past.get(pid) == name, past


@pytest.mark.parametrize(("note", "pid", "name"), [
    # a named type later in the note renames the entry's generic headword
    ("DIAGNOSES: Brain tumor of the left temporal lobe. Glioblastoma multiforme on frozen section.",
     "ph_brain_tumor", "glioblastoma multiforme"),
    # the assessment's name of the diagnosis over a name of the history
    ("HISTORY: He has had sciatica for years.\nASSESSMENT: Lumbar radiculopathy.", "ph_radiculopathy",
     "lumbar radiculopathy"),
    # a generic name never replaces a specific one
    ("HISTORY: He had a glioblastoma resected in 2019.\nASSESSMENT: Brain tumor.", "ph_brain_tumor", "glioblastoma"),
    # the first of two names of the same rank stays
    ("PAST MEDICAL HISTORY: Meningioma. Glioma.", "ph_brain_tumor", "meningioma"),
])
def test_a_condition_takes_its_most_specific_confirmed_name(note: str, pid: str, name: str) -> None:
    past = _past(note)
    assert past.get(pid) == name, past


def test_a_possible_specific_name_does_not_rename_a_confirmed_condition() -> None:
    past = _past("DIAGNOSES: Brain tumor.\nHISTORY: It may be a meningioma.")
    assert past.get("ph_brain_tumor") == "brain tumor", past


def test_a_brain_injury_keeps_its_clinical_name() -> None:
    g = extract(HEAD + "HISTORY: A concussion was diagnosed after the fall last month.")
    assert [s.headword for s in g.symptoms] == ["concussion"]
    from anonpsy.pipeline import deid_text

    assert "concussion" in deid_text(HEAD + "HISTORY: A concussion was diagnosed after the fall last month.",
                                     seed=0, case_id="t").text.lower()


def test_restless_leg_syndrome_in_the_singular_is_the_dsm_diagnosis() -> None:
    from anonpsy.extract.mentions.diagnoses import find_diagnoses

    assert find_diagnoses("Restless leg syndrome.", "past_medical") == [(0, 21, "restless_legs_syndrome")]
    assert "Restless Legs Syndrome" in _past("PAST MEDICAL HISTORY: Restless leg syndrome.").values()


def test_alcohol_withdrawal_seizures_are_alcohol_withdrawal() -> None:
    from anonpsy.extract.mentions.diagnoses import find_diagnoses

    assert [r for _s, _e, r in find_diagnoses("History of alcohol withdrawal seizures.")] == ["alcohol_withdrawal"]


def _dx_labels(note: str) -> dict[str, str]:
    return {d.id: d.label for d in extract(HEAD + note).diagnoses}


@pytest.mark.parametrize(("note", "did", "label"), [
    ("IMPRESSION: The tremor suggests possible Parkinson's.", "dx_parkinson_disease", "Parkinson's disease"),
    ("IMPRESSION: Possible Huntington's.", "dx_huntington_disease", "Huntington's disease"),
])
def test_an_eponym_alone_names_its_disease(note: str, did: str, label: str) -> None:
    assert _dx_labels(note).get(did) == label


_BARE_EPONYMS = sorted({(e.id, s) for e in lexicon.condition_lexicon().rules for s in e.synonyms
                        if re.fullmatch(r"[A-Za-z][\w-]*['’]s", s)})


@pytest.mark.parametrize(("cid", "eponym"), _BARE_EPONYMS)
def test_no_condition_is_named_by_a_bare_eponym(cid: str, eponym: str) -> None:
    """Property over the lexicon: an eponym alone in the possessive is never a condition's whole name; the name
    is its disease, with the eponym's capital."""
    text = f"History of {eponym}."
    m = next(m for m in lexicon.find_terms(text, "condition") if m.id == cid)
    name = condition_name(m, text)
    assert name.lower() != eponym.lower() and len(name.split()) > 1, name
    assert name[0].isupper(), name


def test_every_suspected_condition_has_a_name() -> None:
    """Property over the lexicon: a condition the note only suspects becomes a diagnosis named by a non-empty
    name, never by a bare possessive."""
    for e in lexicon.condition_lexicon().rules:
        if e.system not in ("neurological", "cerebrovascular"):
            continue
        for phrase in (e.headword, *e.synonyms[:3]):
            if not re.fullmatch(r"[\w' -]+", phrase):
                continue
            for d in extract(HEAD + f"IMPRESSION: Possible {phrase}.").diagnoses:
                assert d.label.strip() and not re.fullmatch(r"\w+['’]s", d.label.strip()), (phrase, d.label)


@pytest.mark.parametrize(("note", "pid", "name"), [
    # an aneurysm an intracranial artery places is an intracranial aneurysm, named with its artery
    ("HISTORY: He had clipping for a left ICA bifurcation aneurysm.", "ph_cerebral_aneurysm",
     "left ICA bifurcation aneurysm (intracranial aneurysm)"),
    ("IMPRESSION: Moderately severe spasm of the left internal carotid artery.", "ph_cerebral_vasospasm",
     "moderately severe spasm of the left internal carotid artery (cerebral vasospasm)"),
    ("COURSE: Angiography showed a small aneurysm at the origin of the LPCA.", "ph_cerebral_aneurysm",
     "small intracranial aneurysm"),
    # a grade or type of a named tumour or epilepsy stays with it
    ("IMPRESSION: There is a malignant meningioma.", "ph_brain_tumor", "malignant meningioma"),
    ("HISTORY: He carries a diagnosis of benign rolandic epilepsy.", "ph_epilepsy", "benign rolandic epilepsy"),
    ("IMPRESSION: MRI shows significant brain edema.", "ph_cerebral_edema", "brain edema"),
    # an abbreviation inside a name keeps its capitals
    ("IMPRESSION: A small right MCA infarct.", "ph_stroke", "small right MCA infarct (stroke)"),
])
def test_a_specific_name_is_kept(note: str, pid: str, name: str) -> None:
    past = _past(note)
    assert past.get(pid) == name, past


@pytest.mark.parametrize(("note", "pid", "name"), [
    ("HISTORY: He has epilepsy.\nIMPRESSION: Benign rolandic epilepsy.", "ph_epilepsy", "benign rolandic epilepsy"),
    # a generic synonym of the entry ranks as its headword: the named syndrome written later renames it
    ("HISTORY: He has a seizure disorder. He was told it is benign rolandic epilepsy.", "ph_epilepsy",
     "benign rolandic epilepsy"),
    ("HISTORY: A brain mass was found. It was a meningioma.", "ph_brain_tumor", "meningioma"),
    # boundary: a generic name never replaces a named type
    ("HISTORY: Juvenile myoclonic epilepsy.\nIMPRESSION: Seizure disorder.", "ph_epilepsy",
     "juvenile myoclonic epilepsy"),
])
def test_a_named_type_beats_a_generic_name(note: str, pid: str, name: str) -> None:
    past = _past(note)
    assert past.get(pid) == name, past


def test_the_aneurysm_again_is_the_intracranial_one() -> None:
    """"the aneurysm" after "a left ICA bifurcation aneurysm" is that aneurysm, not a second, generic one."""
    past = _past("IMPRESSION: Well clipped left ICA bifurcation aneurysm. The aneurysm is secured.")
    assert "ph_cerebral_aneurysm" in past and "ph_aneurysm" not in past, past
    # boundary: an aneurysm without an intracranial one before it stays generic
    assert "ph_aneurysm" in _past("IMPRESSION: A small aneurysm at the origin of the artery.")


def test_a_relatives_condition_named_twice_is_one_entry() -> None:
    g = extract(HEAD + "FAMILY HISTORY: A cousin who has seizures, but the specific seizure type is not known.")
    assert [f.condition for f in g.family_history] == ["seizures"], g.family_history


def test_a_nervous_breakdown_is_kept_whole() -> None:
    g = extract(HEAD + 'FAMILY HISTORY: A second-degree relative with a history of depression and "nervous '
                'breakdown".')
    assert "nervous breakdown" in [f.condition for f in g.family_history], g.family_history
    assert "nervous" not in [f.condition for f in g.family_history]
