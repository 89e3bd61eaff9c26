"""ConText classification and stressor detection."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.extract.assertion.context import ContextResult, classify, default_engine
from anonpsy.perturb.contexts import stressor_category


def _ctx(sentence: str, target: str) -> ContextResult:
    i = sentence.index(target)
    return classify(sentence, i, i + len(target))


def test_brief_examples() -> None:
    assert _ctx("Patient denies suicidal ideation.", "suicidal ideation").negated
    assert _ctx("No history of psychosis.", "psychosis").negated
    fam = _ctx("Mother had bipolar disorder.", "bipolar disorder")
    assert (fam.experiencer, fam.family_member) == ("family", "mother")
    assert _ctx("if he stops taking lithium", "lithium").hypothetical


def test_affirmed_has_no_flags() -> None:
    r = _ctx("She reports hearing voices.", "hearing voices")
    assert r.affirmed and r.labels() == frozenset({"affirmed"})
    assert r.trigger_ids == ()


def test_trigger_ids_name_the_rules_that_applied() -> None:
    r = _ctx("No family history of suicide.", "suicide")
    assert set(r.trigger_ids) == {"neg.no", "fam.history"}
    assert r.labels() == frozenset({"negated", "family"})


def test_pseudo_triggers_and_terminations() -> None:
    assert _ctx("No increase in anxiety.", "anxiety").affirmed
    assert _ctx("Not only depressed but anxious.", "depressed").affirmed
    assert _ctx("Denies SI but reports AH.", "AH").affirmed
    assert _ctx("Denies SI. Reports AH.", "AH").affirmed


def test_scope_window_is_bounded() -> None:
    far = "No " + "really " * 20 + "tremor."
    assert not _ctx(far, "tremor").negated


def test_uncertain_and_historical() -> None:
    assert _ctx("Possible psychosis.", "psychosis").uncertain
    assert _ctx("History of overdose.", "overdose").historical
    assert not _ctx("History of overdose, now with low mood.", "low mood").historical


def test_other_experiencer_keeps_member() -> None:
    r = _ctx("His wife has depression.", "depression")
    assert (r.experiencer, r.family_member) == ("other", "partner")


def test_informant_is_not_experiencer() -> None:
    assert _ctx("His mother reports that he hears voices.", "hears voices").experiencer == "patient"


@pytest.mark.parametrize(("start", "end"), [(-1, 2), (3, 3), (0, 999), (5, 2)])
def test_bad_span_is_rejected(start: int, end: int) -> None:
    with pytest.raises(ValueError, match="concept span"):
        classify("No tremor.", start, end)


def test_default_rules_have_no_conflicting_phrases() -> None:
    assert default_engine().conflicts == []


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("after he was laid off from the plant", "job_loss"),
        ("since her mother died last spring", "bereavement"),
        ("after she was bullied at school", "bullying"),
        ("denies any recent job loss", None),
        ("if he loses his job", None),
        ("possible eviction next month", None),
        ("", None),
    ],
)
def test_stressor_category(text: str, category: str | None) -> None:
    assert stressor_category(text) == category


@given(st.text(max_size=120), st.data())
@example("No SI.", None)
def test_classify_is_total_on_valid_spans(sentence: str, data: st.DataObject | None) -> None:
    if not sentence:
        return
    if data is None:
        start, end = 3, 5
    else:
        start = data.draw(st.integers(0, len(sentence) - 1))
        end = data.draw(st.integers(start + 1, len(sentence)))
    r = classify(sentence, start, end)
    assert r.experiencer in ("patient", "family", "other")
    assert r.labels()


_ROS_ITEMS = ["headache", "nausea and vomiting", "fevers", "chills", "cough", "dizziness", "rash"]
_ALTERNATIVES = ["shortness of breath or chest pain", "chills or shortness of breath or chest pain",
                 "palpitations or chest pain"]


@given(st.sampled_from(["Negative for", "Currently negative for", "No"]),
       st.lists(st.sampled_from(_ROS_ITEMS), min_size=1, max_size=4, unique=True), st.sampled_from(_ALTERNATIVES))
@example("Currently negative for", ["headache", "nausea and vomiting", "fevers"],
         "chills or shortness of breath or chest pain")
def test_property_a_negated_list_reaches_alternatives_joined_by_or(
        trigger: str, items: list[str], alternatives: str) -> None:
    """A comma item made of short alternatives joined by "or" is as many items of the negated list: its last
    alternative is as far from the trigger as the list's first item."""
    sentence = f"{trigger} {', '.join(items)}, {alternatives}."
    assert _ctx(sentence, "chest pain").negated


_SLASH_ITEMS = ["weight loss", "fever", "chills", "night sweats", "CP", "SOB", "cough", "headache", "nausea"]


@given(st.sampled_from(["No", "no recent", "Denies", "Negative for"]),
       st.lists(st.sampled_from(_SLASH_ITEMS), min_size=2, max_size=7, unique=True))
@example("no recent", ["weight loss", "fever", "chills", "night sweats", "CP", "SOB"])
def test_property_a_negated_slash_list_reaches_its_last_item(trigger: str, items: list[str]) -> None:
    """A charted list joined by slashes ("no fever/chills/SOB") is a list like one joined by commas: the negation
    reaches its last item however many come before."""
    sentence = f"{trigger} {'/'.join(items)}."
    assert _ctx(sentence, items[-1]).negated


def test_a_slash_list_after_a_new_clause_is_not_negated() -> None:
    assert not _ctx("No fever; she reports cough/SOB.", "SOB").negated
    assert _ctx("He denies fever and/or chills.", "chills").negated


def test_a_new_clause_after_a_negated_list_is_not_negated() -> None:
    assert not _ctx("No fever, he has a long history of cough or chest pain.", "chest pain").negated


_DRUGS = ["Plavix", "lithium", "sertraline", "Lovenox", "Depakote"]
_PLANS = ["I recommend that the {b} be discontinued", "we plan to start {b}", "recommend starting {b}",
          "she should be placed on {b}", "options would include {b}"]


@given(st.sampled_from(["is on", "is taking", "continues"]), st.sampled_from(_DRUGS), st.sampled_from(_DRUGS),
       st.sampled_from(_PLANS))
@example("is on", "Plavix", "clopidogrel", "I recommend that the {b} be discontinued")
def test_property_a_plan_ends_an_earlier_current_scope(current: str, a: str, b: str, plan: str) -> None:
    """A plan (a hypothetical trigger) between a current trigger and a later drug frames that drug: it is never
    current by the earlier trigger ("Since the patient is on Plavix, I recommend that the Plavix be discontinued")."""
    first = f"Since the patient {current} {a}, "
    sentence = first + plan.format(b=b) + "."
    i = sentence.index(b, len(first))
    assert not classify(sentence, i, i + len(b), "medication").current
    j = sentence.index(a)
    assert classify(sentence, j, j + len(a), "medication").current


@given(st.sampled_from(["daughter", "son", "mother", "father", "sister", "brother", "aunt", "uncle"]),
       st.sampled_from([" who has", ", who has", " who had", ", who suffered from", " that has"]),
       st.sampled_from(["schizophrenia", "bipolar disorder", "seizures", "autism"]))
@example("daughter", " who has", "seizures")
def test_property_a_relative_clause_keeps_the_relative_as_experiencer(relative: str, clause: str,
                                                                       condition: str) -> None:
    """A condition in a relative clause on a relative ("one daughter who has seizures") is the relative's, never
    the patient's."""
    sentence = f"He has one {relative}{clause} {condition}."
    assert _ctx(sentence, condition).experiencer == "family"


@pytest.mark.parametrize(
    ("sentence", "target", "uncertain"),
    [
        ("Sleep apnea needs to be investigated.", "Sleep apnea", True),
        ("Hypothyroidism in this patient must be investigated.", "Hypothyroidism", True),
        # an item-bound hedge after a list governs only the item right before it
        ("Depression and sleep apnea need to be investigated.", "sleep apnea", True),
        ("Depression and sleep apnea need to be investigated.", "Depression", False),
        ("Depression, sleep apnea should be evaluated.", "Depression", False),
        # a hedge that is not item-bound still reaches every item of the list
        ("Depression and sleep apnea need to be ruled out.", "Depression", True),
    ],
)
def test_an_item_bound_hedge_after_a_list_reaches_only_the_nearest_item(
        sentence: str, target: str, uncertain: bool) -> None:
    assert _ctx(sentence, target).uncertain is uncertain


def test_masked_periods_are_those_of_the_patterns_read_from_the_letters() -> None:
    """The period-first patterns mask the periods the letter-first patterns (the plain way to write them) mask."""
    import re

    from anonpsy.extract.assertion.context import _mask_dots

    abbrev = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]|Mr|Mrs|Ms|Dr|Drs|Prof)\.(?=[A-Za-z]\.|[\s,;)]|$)")
    etc = re.compile(r"(?<![A-Za-z0-9])((?i:etc))\.(?=\s*[,;)]|\s+[a-z])")
    decimal = re.compile(r"(?<=\d)\.(?=\d)")
    for s in ["Seroquel 25 mg p.o. q.h.s., Ativan 0.5 mg b.i.d.", "Mr. T and Mrs.Jones, Drs. A.B. and Prof. X.",
              "a stroke, subdural hematoma, etc., should be ruled out", "ETC. Etc. etc", "x.y.z.", "1.5.2", "e.g. i.e.",
              "Dr.", ".a. b.", "aDr. xMr. Prof.s.", "3.a. b.1 c.d", "U.S.A.) ok"]:
        assert _mask_dots(s) == decimal.sub("\u00b7", etc.sub("\\1\u00b7", abbrev.sub("\\1\u00b7", s))), s
