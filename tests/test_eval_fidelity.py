"""The independent fidelity scorer: every contradiction kind on small synthetic sentences, both directions (must
flag / must not flag), recall, excess over the original, independence from the extractor, and the dev notes'
noise floor (MTSamples, CC0; read from ../shared/data, skipped when absent)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from anonpsy.evaluate.facts import DiagnosisFact, FactsNote, MedicationFact
from anonpsy.evaluate.fidelity import (
    CONTRADICTION_KINDS,
    NoteScorer,
    denied_concept,
    excess,
    score_text,
    summarize,
    surface_pattern,
)

NOTE = FactsNote(
    note_id="syn1",
    case_id="syn1",
    diagnoses=(
        DiagnosisFact("attention-deficit/hyperactivity disorder", ("ADHD",), "ruled_out"),
        DiagnosisFact("antisocial personality disorder", ("antisocial personality disorder",), "possible"),
        DiagnosisFact("bipolar disorder", ("bipolar disorder",), "family"),
        DiagnosisFact("major depressive disorder", ("depression",), "affirmed"),
        DiagnosisFact("anorexia nervosa", ("anorexia",), "past"),
    ),
    medications=(
        MedicationFact("sertraline", ("Zoloft",), "current"),
        MedicationFact("escitalopram", ("Lexapro",), "past"),
        MedicationFact("fluoxetine", ("Prozac",), "planned"),
        MedicationFact("lithium", ("lithium",), "refused"),
    ),
    denied=("suicidal ideation", "auditory hallucinations", "prior psychiatric hospitalization"),
)
SCORER = NoteScorer(NOTE)

MUST_FLAG = [
    ("A diagnosis of ADHD was made.", "ruled_out_asserted", "attention-deficit/hyperactivity disorder"),
    ("She has a history of attention-deficit/hyperactivity disorder.", "ruled_out_asserted",
     "attention-deficit/hyperactivity disorder"),
    ("She received supportive psychotherapy for Attention-Deficit/Hyperactivity disorder.", "ruled_out_asserted",
     "attention-deficit/hyperactivity disorder"),
    ("These symptoms were consistent with antisocial personality disorder.", "possible_asserted",
     "antisocial personality disorder"),
    ("A diagnosis of antisocial personality disorder was made.", "possible_asserted",
     "antisocial personality disorder"),
    ("Her bipolar I disorder was treated with supportive psychotherapy.", "family_as_patient", "bipolar disorder"),
    ("The presentation was provisionally diagnosed as bipolar disorder.", "family_as_patient", "bipolar disorder"),
    ("A diagnosis of schizophrenia was made.", "invented_diagnosis", "schizophrenia"),
    ("She also met criteria for obsessive-compulsive disorder.", "invented_diagnosis",
     "obsessive-compulsive disorder"),
    ("She was treated with escitalopram.", "past_med_as_current", "escitalopram"),
    ("She takes Lexapro 10 mg daily.", "past_med_as_current", "escitalopram"),
    ("Treatment included Prozac and psychotherapy.", "planned_med_as_taken", "fluoxetine"),
    ("She is on fluoxetine 20 mg.", "planned_med_as_taken", "fluoxetine"),
    ("She is on lithium.", "refused_med_as_taken", "lithium"),
    ("At the visit she was noted to have suicidal ideation.", "denied_as_present", "suicidal ideation"),
    ("She reports hearing voices.", "denied_as_present", "auditory hallucinations"),
    ("Years ago she had a psychiatric hospitalization.", "denied_as_present", "prior psychiatric hospitalization"),
]

MUST_NOT_FLAG = [
    "ADHD was ruled out.",
    "ADHD was considered; testing did not support it.",
    "Testing did not support a diagnosis of ADHD.",
    "She does not meet criteria for attention-deficit/hyperactivity disorder.",
    "The diagnosis of ADHD appears to be unlikely.",
    "She wondered whether she might have ADHD.",
    "A possible antisocial personality disorder could not be excluded.",
    "Rule out antisocial personality disorder.",
    "Antisocial personality disorder cannot be entirely ruled out.",
    "Her father may have had bipolar disorder.",
    "Family history is significant for bipolar disorder in her mother.",
    "There is bipolar disorder in her family.",
    "Family history of schizophrenia.",
    "She denies any history of schizophrenia.",
    "She had previously taken escitalopram, stopped because of side effects.",
    "Lexapro was discontinued in October.",
    "She tried Lexapro and Wellbutrin, which she stopped taking last year.",
    "She was switched from Lexapro to Zoloft.",
    "Fluoxetine was recommended if needed.",
    "Consider starting Prozac if symptoms persist.",
    "She refused lithium.",
    "She declined a trial of lithium.",
    "She denies suicidal ideation.",
    "No auditory hallucinations.",
    "She had suicidal thoughts in the past.",
    "Suicidal ideation: denied.",
    "She denies prior psychiatric hospitalization.",
    "Did you ever have a psychiatric hospitalization?",
    "Her mother has depression and anorexia nervosa.",
    "Anorexia nervosa in adolescence, now resolved.",
    "She is monitored for suicidal ideation.",
]


@pytest.mark.parametrize(("sentence", "kind", "fact"), MUST_FLAG)
def test_scorer_flags_each_contradiction_kind(sentence: str, kind: str, fact: str) -> None:
    found = {(c.kind, c.fact) for c in SCORER.score(sentence).contradictions}
    assert (kind, fact) in found


@pytest.mark.parametrize("sentence", MUST_NOT_FLAG)
def test_scorer_does_not_flag_faithful_sentences(sentence: str) -> None:
    assert SCORER.score(sentence).contradictions == []


def test_every_kind_has_a_must_flag_case() -> None:
    # invented_symptom needs a source text: its cases are in test_eval_support.py
    assert {k for _, k, _ in MUST_FLAG} | {"invented_symptom"} == set(CONTRADICTION_KINDS)


def test_contradiction_reports_kind_fact_and_sentence_index_only() -> None:
    text = "She was seen today. A diagnosis of ADHD was made. She denies suicidal ideation."
    (c,) = SCORER.score(text).contradictions
    assert (c.kind, c.fact, c.sentences) == ("ruled_out_asserted", "attention-deficit/hyperactivity disorder", (1,))


@pytest.mark.parametrize(("text", "found"), [
    ("Major depressive disorder was diagnosed.", True),
    ("She has depression.", True),
    ("She has a history of major depression.", True),
    ("She has no depression.", False),
    ("Possible depression.", False),
    ("Her mother has depression.", False),
    ("Depression, in full remission.", False),
])
def test_affirmed_diagnosis_recall_needs_an_assertion(text: str, found: bool) -> None:
    assert SCORER.score(text).dx_recall == (1.0 if found else 0.0)


@pytest.mark.parametrize(("text", "found"), [
    ("She continues Zoloft 50 mg daily.", True),
    ("Sertraline 50 mg at bedtime.", True),
    ("She is currently taking sertraline.", True),
    ("She previously took Zoloft.", False),
    ("Zoloft was stopped.", False),
    ("We will consider sertraline.", False),
    ("Her mother takes sertraline.", False),
    ("Zoloft 50 mg daily, which has not helped.", True),
    ("Zoloft has not really worked so far.", True),
    ("She is not taking Zoloft.", False),
    ("Lexapro 10 mg, which she has not been taking, Zoloft 50 mg daily.", True),
    ("Zoloft 50 mg daily, which she has not been taking.", False),
])
def test_current_medication_recall_needs_a_current_presentation(text: str, found: bool) -> None:
    assert SCORER.score(text).med_recall == (1.0 if found else 0.0)


LIST_NOTE = FactsNote("lst", "lst", (), (
    MedicationFact("multivitamin", ("daily vitamin",), "current"),
    MedicationFact("pyridoxine", ("vitamin B6",), "current"),
), ())


@pytest.mark.parametrize(("text", "found"), [
    ("Her medications include aspirin 81 mg daily, vitamin B6 100 mg daily.", [False, True]),
    ("Her medications include aspirin 81 mg daily; vitamin B6 100 mg daily.", [False, True]),
    ("She takes a daily vitamin and vitamin B6 100 mg.", [True, True]),
    ("She takes a daily-vitamin.", [True, False]),
])
def test_a_list_comma_does_not_join_two_items_into_one_name(text: str, found: list[bool]) -> None:
    assert [h.found for h in NoteScorer(LIST_NOTE).score(text).current_meds] == found


def test_recall_is_nan_without_facts_of_that_status() -> None:
    note = FactsNote("n", "n", (), (), ())
    sc = score_text("Nothing here.", note)
    assert math.isnan(sc.dx_recall) and math.isnan(sc.med_recall) and sc.contradictions == []


def test_excess_keeps_only_what_the_original_does_not_show() -> None:
    original = SCORER.score("Rule out ADHD. She has suicidal ideation at times.")
    output = SCORER.score("A diagnosis of ADHD was made. She has suicidal ideation.")
    assert {c.kind for c in original.contradictions} == {"denied_as_present"}
    assert [(c.kind, c.fact) for c in excess(output, original)] == [
        ("ruled_out_asserted", "attention-deficit/hyperactivity disorder")]


def test_summary_pools_facts_and_counts_cases() -> None:
    a = SCORER.score("She has depression. She continues Zoloft.")
    b = SCORER.score("A diagnosis of ADHD was made.")
    b.excess = b.contradictions
    s = summarize("m", [a, b])
    assert (s.affirmed_dx_found, s.affirmed_dx_total, s.current_meds_found, s.current_meds_total) == (1, 2, 1, 2)
    assert s.cases_with_contradiction == 1 and s.cases_with_excess == 1 and s.excess["ruled_out_asserted"] == 1


def test_denied_items_expand_to_concept_synonyms_and_lifetime() -> None:
    c = denied_concept("prior psychiatric hospitalization")
    assert c.lifetime and any("admission" in p for p in c.patterns)
    assert not denied_concept("suicidal ideation").lifetime
    assert denied_concept("other drug use").patterns == (r"other[\W_]+drug[\W_]+use",)


def test_scorer_imports_nothing_from_the_extractor() -> None:
    code = (
        "import sys\n"
        "from anonpsy.evaluate.facts import FactsNote, DiagnosisFact\n"
        "from anonpsy.evaluate.fidelity import score_text\n"
        "note = FactsNote('n', 'n', (DiagnosisFact('schizophrenia', ('schizophrenia',), 'affirmed'),), (), ())\n"
        "score_text('Schizophrenia. She takes Zoloft 50 mg.', note, source='Schizophrenia.')\n"
        "bad = sorted(m for m in sys.modules if m.startswith(('anonpsy.extract', 'anonpsy.context_rules',"
        " 'anonpsy.lexicon', 'anonpsy.generate', 'anonpsy.pipeline')))\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    src = Path(__file__).resolve().parents[1] / "src" / "anonpsy" / "evaluate"
    for name in ("fidelity.py", "cues.py", "sentences.py", "verbatim.py", "facts.py", "support.py"):
        text = (src / name).read_text(encoding="utf-8")
        assert "anonpsy.extract" not in text.replace("from the project's extractor", "")
        assert "context_rules" not in text.split('"""', 2)[-1]


# ------------------------------------------------------------------------------------------------------------
# Dev notes: the judge on the original notes (its noise floor)

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "mtsamples-psych-dev"


@pytest.mark.skipif(not (DEV / "facts.yaml").is_file(), reason="../shared/data/mtsamples-psych-dev is not present")
def test_originals_score_near_full_recall_with_a_small_noise_floor() -> None:
    from anonpsy.evaluate.facts import load_facts

    facts = load_facts(DEV / "facts.yaml")
    scores = []
    for line in (DEV / "notes.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        scores.append(NoteScorer(facts[str(rec["note_id"])]).score(rec["text"]))
    s = summarize("original", scores)
    assert s.dx_recall >= 0.97 and s.med_recall >= 0.97
    # The judge's noise floor on text that is faithful by definition: kept small, and pinned so that a change
    # to the cue lexicon that makes the judge noisier is a deliberate act.
    assert sum(s.contradictions.values()) <= 18
    assert s.contradictions["invented_diagnosis"] == 0


_words = st.from_regex(r"[a-z]{2,9}", fullmatch=True)


@given(_words, _words, st.sampled_from([", ", "; ", ": ", ","]))
@example("daily", "vitamin", ", ")
def test_property_list_punctuation_never_joins_a_form_without_it(w1: str, w2: str, sep: str) -> None:
    """A two-word form written without a comma matches its words with a space or hyphen between them, never with
    the comma, semicolon or colon that separates two items of a list."""
    import re

    rx = re.compile(rf"(?<!\w)(?:{surface_pattern(f'{w1} {w2}')})(?!\w)")
    assert rx.search(f"{w1} {w2}") and rx.search(f"{w1}-{w2}")
    assert not rx.search(f"{w1}{sep}{w2}")
    assert re.search(surface_pattern(f"{w1}, {w2}"), f"{w1}, {w2}")


@given(st.from_regex(r"[a-z]{3,9}", fullmatch=True), st.from_regex(r"[a-z]{4,9}[b-df-hj-np-rtv-z]e",
                                                                  fullmatch=True))
@example("post", "headache")
@example("complex", "seizure")
@example("aaa", "aaaape")  # a plural in "-pes" is a plural: only named conditions ("herpes") keep their "s"
def test_condition_name_number_is_not_scored(w1: str, w2: str) -> None:
    """A condition name matches in either number: annotated in the plural ("headaches"), the singular an output
    writes counts, and the other way; the number of a diagnosis's name is no clinical fact."""
    import re

    from anonpsy.evaluate.fidelity import SINGULAR_IN_S

    assume(f"{w2}s" not in SINGULAR_IN_S)  # "measles" names one condition; "measle" is no singular of it
    for written, annotated in ((f"{w1} {w2}", f"{w1} {w2}s"), (f"{w1} {w2}s", f"{w1} {w2}")):
        rx = re.compile(rf"(?<!\w)(?:{surface_pattern(annotated)})(?!\w)")
        assert rx.search(f"She has {written}.")


def test_plural_stem_leaves_words_ending_in_s_that_are_no_plural() -> None:
    """Only the regular plural loses its "s": psychosis, diabetes, stenosis, abbreviations and short words keep it,
    and a plural annotation never matches a different word that merely shares the stem's letters."""
    import re

    from anonpsy.evaluate.fidelity import singular_stem

    assert [singular_stem(w) for w in ("headaches", "seizures", "psychosis", "diabetes", "stenosis", "TIAs", "tics",
                                       "nervous", "allergies", "herpes", "types")] == [
        "headache", "seizure", "psychosis", "diabetes", "stenosis", "TIAs", "tics", "nervous", "allergies", "herpes",
        "type"]
    rx = re.compile(rf"(?<!\w)(?:{surface_pattern('post-traumatic headaches')})(?!\w)")
    assert rx.search("post-traumatic headache") and rx.search("post-traumatic headaches")
    assert not rx.search("post-traumatic headachey")
    sc = NoteScorer(FactsNote(note_id="p", case_id="p", diagnoses=(
        DiagnosisFact("post-traumatic headache", ("headaches",), "affirmed"),), medications=(), denied=()))
    assert sc.score("She has had headache since the fall.").dx_recall == 1.0


_DX_NAMES = st.sampled_from(["epilepsy", "brain tumor", "asthma", "migraine", "panic disorder", "hypertension"])
_BACKWARD_CUES = st.sampled_from(["now in remission", "resolved", "in full remission", "which resolved"])


@given(_DX_NAMES, _DX_NAMES, _DX_NAMES, _BACKWARD_CUES)
@example("brain tumor", "otitis media", "hemiplegia", "now in remission")
def test_a_parenthetical_cue_qualifies_only_the_item_it_follows(a: str, b: str, c: str, cue: str) -> None:
    """"A, B (now in remission), C": the remission is B's, A and C stay affirmed."""
    from anonpsy.evaluate.cues import classify

    assume(len({a, b, c}) == 3)
    s = f"Her history includes {a}, {b} ({cue}), and {c}."
    status = {x: classify(s, s.index(x), s.index(x) + len(x), "dx").status for x in (a, b, c)}
    assert status == {a: "affirmed", b: "resolved", c: "affirmed"}
    alone = f"{b.capitalize()} ({cue})."
    assert classify(alone, 0, len(b), "dx").status == "resolved"
