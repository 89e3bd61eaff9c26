"""The scorer's unsupported-symptom check (``invented_symptom``): a clinically loaded symptom that a text asserts
for the patient and its source note never mentions. Synthetic sentences only."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.evaluate.facts import FactsNote
from anonpsy.evaluate.fidelity import NoteScorer
from anonpsy.evaluate.support import LOADED_SYMPTOMS, SourceSupport, loaded_mentions

SOURCE = (
    "REASON FOR VISIT: Poor sleep. She reports low mood and difficulty initiating sleep. She is being followed in "
    "the psychiatry clinic for depression. She denies hallucinations. Choreiform movements of the tongue were noted. "
    "Tips for sleep hygiene include bedtime rituals and avoidance of nicotine in the evening. She takes sertraline."
)
SCORER = NoteScorer(FactsNote("syn", "syn", (), (), ()))

MUST_FLAG = [
    ("She has a persecutory delusion.", "persecutory delusion"),
    ("She also presented with insomnia, compulsions and avoidance.", "compulsions"),
    ("Tardive dyskinesia was noted on examination.", "tardive dyskinesia"),
    ("She had suicidal thoughts last year.", "suicidal ideation"),
    ("She was manic for a week.", "mania"),
    ("She became delusional.", "delusions"),
    ("Possible catatonia was noted.", "catatonia"),
    ("She reported obsessive thoughts about germs.", "obsessions"),
    ("She has a history of self-harm.", "self-harm"),
    ("Homicidal ideation was present.", "homicidal ideation"),
    ("At the visit she was noted to have intoxication.", "intoxication"),
    ("She had metabolic syndrome in the past.", "metabolic syndrome"),
]

MUST_NOT_FLAG = [
    "She has no delusions.",
    "She denies compulsions or obsessions.",
    "Monitor for tardive dyskinesia.",
    "Her mother had compulsions.",
    "Suicidal ideation: denied.",
    "She is followed in the psychiatry clinic.",
    "She was started on an antipsychotic.",
    # a source mention, even negated, is support (the annotation-based denied_as_present judges that case)
    "She has auditory hallucinations.",
    "Psychosis was considered.",
]


@pytest.mark.parametrize(("sentence", "label"), MUST_FLAG)
def test_a_loaded_symptom_the_source_never_mentions_is_flagged(sentence: str, label: str) -> None:
    sc = SCORER.score(sentence, source=SOURCE)
    assert [(c.kind, c.fact) for c in sc.contradictions] == [("invented_symptom", label)]


@pytest.mark.parametrize("sentence", MUST_NOT_FLAG)
def test_negated_hypothetical_family_or_supported_mentions_are_not_flagged(sentence: str) -> None:
    assert SCORER.score(sentence, source=SOURCE).contradictions == []


@pytest.mark.parametrize(("source", "sentence"), [
    ("He believes he is being followed by the police.", "He has persecutory delusions."),
    ("Paranoid delusions about the neighbors.", "He has a persecutory delusion."),
    ("He has delusions.", "He has a grandiose delusion."),
    ("He has a grandiose delusion.", "He is delusional."),
    ("Checking rituals for hours each day.", "He has compulsions."),
    ("History of bipolar I disorder.", "He had a manic episode."),
    ("Denies SI/HI.", "He had suicidal ideation."),
    ("Prior overdose on acetaminophen.", "He had a suicide attempt."),
    ("He smelled of alcohol and was unsteady.", "He was intoxicated."),
    ("Hearing voices telling him to hide.", "He has auditory hallucinations."),
    ("Hearing voices telling him to hide.", "He has psychotic symptoms."),
])
def test_a_synonym_or_a_concept_of_the_same_family_is_support(source: str, sentence: str) -> None:
    assert SCORER.score(sentence, source=source).contradictions == []


def test_a_specific_mention_is_counted_once_as_the_specific_concept() -> None:
    assert [m[2] for m in loaded_mentions("auditory hallucinations and persecutory delusions")] == [
        "auditory hallucinations", "persecutory delusion"]
    assert loaded_mentions("delusional disorder, psychotic disorder, antipsychotic, manic-depressive illness") == []


def test_the_fact_is_the_concept_label_and_sentences_are_indices() -> None:
    sc = SCORER.score("She sleeps poorly. She has compulsions. Compulsive checking.", source=SOURCE)
    (c,) = sc.contradictions
    assert (c.kind, c.fact, c.sentences) == ("invented_symptom", "compulsions", (1, 2))


EXAMPLES = {
    "suicidal ideation": "suicidal thoughts", "suicide attempt": "attempted suicide",
    "homicidal ideation": "homicidal ideation", "self-harm": "self-injurious behavior", "overdose": "overdosed",
    "psychosis": "psychotic symptoms", "delusions": "delusional beliefs", "persecutory delusion": "paranoid delusions",
    "paranoia": "paranoid ideation", "grandiose delusion": "grandiosity", "delusion of reference": "ideas of reference",
    "somatic delusion": "somatic delusions", "erotomanic delusion": "erotomanic delusion",
    "nihilistic delusion": "nihilistic delusions", "religious delusion": "religious delusions",
    "bizarre delusion": "bizarre delusions", "jealous delusion": "jealous delusions",
    "thought insertion": "thought broadcasting", "hallucinations": "hallucinating",
    "auditory hallucinations": "command hallucinations", "visual hallucinations": "visual hallucinations",
    "tactile hallucinations": "tactile hallucinations", "olfactory hallucinations": "olfactory hallucination",
    "catatonia": "catatonic", "formal thought disorder": "loosening of associations", "mania": "hypomanic episode",
    "flight of ideas": "flight of ideas", "obsessions": "obsessional thoughts", "compulsions": "compulsively",
    "depersonalization": "depersonalisation", "derealization": "derealization",
    "tardive dyskinesia": "tardive dyskinesia", "extrapyramidal symptoms": "extrapyramidal side effects",
    "akathisia": "akathisia", "acute dystonia": "acute dystonic reaction",
    "neuroleptic malignant syndrome": "neuroleptic malignant syndrome", "serotonin syndrome": "serotonin toxicity",
    "lithium toxicity": "lithium toxicity", "intoxication": "acute alcohol intoxication",
    "metabolic syndrome": "metabolic syndrome",
}


def test_every_concept_is_found_in_a_variant_and_supported_by_it() -> None:
    assert set(EXAMPLES) == {s.label for s in LOADED_SYMPTOMS}
    for label, phrase in EXAMPLES.items():
        text = f"He has {phrase}."
        assert label in [m[2] for m in loaded_mentions(text)], label
        assert SourceSupport(text).supports(label), label


SENTENCES = [
    "He has persecutory delusions.", "She denies hallucinations.", "Compulsive hand washing.", "No SI or HI.",
    "Tardive dyskinesia of the tongue.", "Possible catatonia.", "History of mania.", "Suicidal ideation: none.",
    "She was followed in the clinic.", "He hears voices.", "Her mother was psychotic.", "Self-harm by cutting.",
    "Obsessive thoughts.", "Akathisia on haloperidol.", "Paranoid about neighbors.", "Thought insertion.",
]


@given(st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=8))
@example(["He has persecutory delusions.", "Her mother was psychotic."])
def test_an_original_scored_against_itself_has_no_unsupported_symptom(sentences: list[str]) -> None:
    text = " ".join(sentences)
    assert SCORER.score(text).by_kind()["invented_symptom"] == 0
    assert SCORER.score(text, source=text).by_kind()["invented_symptom"] == 0


def test_the_evaluation_report_has_an_unsupported_symptom_column() -> None:
    from anonpsy.evaluate.fidelity import excess
    from anonpsy.evaluate.runner import ORIGINAL, Evaluation, render_fidelity_markdown

    orig = SCORER.score(SOURCE)
    out = SCORER.score("She has compulsions.", source=SOURCE)
    out.excess = excess(out, orig)
    ev = Evaluation(case_ids=["syn"], methods=["m"], skipped=[], reference=None, model="-", seed=0, judged=False,
                    rows=[], corpus={}, timing={}, cache={}, failures=[], judge_records=[], dx_sources={},
                    seconds=0.0, fidelity={ORIGINAL: {"syn": orig}, "m": {"syn": out}})
    md = "\n".join(render_fidelity_markdown(ev))
    assert "| unsupported symptom |" in md
    assert "unsupported symptom: compulsions (s0)" in md
