"""Copied runs of words from the source: hand-computed lengths, the dose exception, per-sentence runs, and
properties of the suffix-automaton matcher."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st
from tests.strategies import word_texts

from anonpsy.evaluate.verbatim import _NOT_NAME_WORDS, copied_runs, dose_mask, name_words, tokens


def test_longest_copied_run_ignores_case_and_punctuation() -> None:
    s = copied_runs("The cat sat on the mat, today.", "A CAT sat on the mat")
    assert s.longest_run == 5 and s.max_sentence_run == 5


def test_drug_names_with_doses_are_excepted_but_labs_are_not() -> None:
    src = "Continue sertraline 50 mg daily and lithium 300 mg at bedtime. Pulse 87, respirations 12, weight 132."
    assert copied_runs(src, "continue sertraline 50 mg daily and lithium 300 mg at bedtime").longest_run == 1
    assert copied_runs(src, "pulse 87 respirations 12 weight 132").longest_run == 6
    words = [w for w, _, _ in tokens("he takes Zoloft 50 mg q.h.s. at night")]
    assert dose_mask(words) == [False, False, True, True, True, True, True, True]


def test_a_list_or_function_word_of_a_passed_name_is_not_a_drug_name_word() -> None:
    # "and" of a therapy's name alone would start a dose group and shorten any run it sits in.
    words = [w for w, _, _ in tokens("he kept saying that he could not remember anything and he was repeating")]
    assert dose_mask(words, ["acceptance and commitment therapy"]) == [False] * len(words)
    src = "she said that he could not remember anything and he was repeating himself all day"
    assert copied_runs(src, src, extra_drug_words=["acceptance and commitment therapy"]).longest_run == 15
    assert name_words(["milk of magnesia", "acceptance and commitment therapy"]) == {
        "milk", "magnesia", "acceptance", "commitment", "therapy"}


def test_per_sentence_runs_are_cut_at_sentence_boundaries() -> None:
    src = "one two three four five six seven"
    out = "one two three. four five six seven"
    s = copied_runs(src, out, sentence_spans=[(0, 14), (15, len(out))], limit=3)
    assert s.longest_run == 7 and s.sentence_runs == (3, 4) and s.sentences_over_limit == 1 and not s.within_limit


@given(word_texts(min_words=1))
@example("sertraline 50 mg daily")
def test_copied_runs_of_a_text_against_itself_count_its_non_dose_words(text: str) -> None:
    words = [w for w, _, _ in tokens(text)]
    s = copied_runs(text, text)
    assert s.longest_run == sum(1 for m in dose_mask(words) if not m)


@given(word_texts(), word_texts())
def test_copied_run_is_bounded_by_the_output_and_by_the_whole_run(source: str, output: str) -> None:
    s = copied_runs(source, output, sentence_spans=[(0, len(output) // 2), (len(output) // 2, len(output))])
    assert 0 <= s.max_sentence_run <= s.longest_run <= len(tokens(output))
    brute = 0
    src = [w for w, _, _ in tokens(source)]
    out = [w for w, _, _ in tokens(output)]
    mask = dose_mask(out)
    for i in range(len(out)):
        for j in range(i + 1, len(out) + 1):
            if any(src[k:k + j - i] == out[i:j] for k in range(len(src) - (j - i) + 1)):
                brute = max(brute, sum(1 for m in mask[i:j] if not m))
    assert s.longest_run == brute


@given(word_texts(), word_texts(), st.lists(st.sampled_from(sorted(_NOT_NAME_WORDS)), max_size=6))
@example("he could not remember anything and he was", "he could not remember anything and he was", ["and"])
def test_names_made_of_dose_list_or_function_words_except_nothing(source: str, output: str,
                                                                  names: list[str]) -> None:
    """Passing names whose words are all dose, list or function words never changes a copied run."""
    assert copied_runs(source, output, extra_drug_words=[" ".join(names)]) == copied_runs(source, output)


def test_words_are_the_words_of_tokens() -> None:
    from anonpsy.evaluate.verbatim import words

    for text in ("", "Mood was okay, though. Risperdal M-Tab 2 mg b.i.d.", "He’s O'Neil's ÉLAN café—mg/day",
                 "İstanbul ǅemal ß STRASSE 3.5/4", "q.h.s. p.r.n.\nLINE two"):
        assert words(text) == [w for w, _, _ in tokens(text)]
