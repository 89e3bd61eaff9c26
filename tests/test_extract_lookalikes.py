"""Look-alikes of clinical facts: words that name a symptom, a substance or a treatment in one use and something else
in another (a DSM-IV axis heading, a plan's adjective, a beverage), and acts of other people. Synthetic texts."""

from __future__ import annotations

from anonpsy.extract import extract


def _sx(text: str) -> dict[str, str]:
    """Headword -> assertion of the patient's symptoms."""
    return {s.headword: s.assertion.value for s in extract(text).symptoms}


def _tx(text: str) -> dict[str, str]:
    """Treatment name -> status."""
    return {t.name: t.status.value for t in extract(text).treatments}


def test_axis_iv_primary_support_group_is_no_group_therapy() -> None:
    """DSM-IV Axis IV 'problems with primary support group' names the family as a stress area, not a therapy."""
    text = ("HPI: He has had seizures at school.\nDSM IV DIAGNOSES: AXIS I: Conversion disorder. AXIS IV: Problems "
            "with primary support group, peer problems, and educational problems.")
    assert "group therapy" not in _tx(text)
    assert "group therapy" in _tx("PLAN: She will attend a weekly support group.")


def test_an_adjective_grading_a_noun_of_care_is_no_aggression() -> None:
    """'Aggressive exploration' of a problem in the plan grades the exploration: the patient is not aggressive."""
    plan = ("ASSESSMENT: Major depressive disorder.\nRECOMMENDATIONS: We recommend weekly psychotherapy with "
            "aggressive exploration of the patient's reaction to her therapist's departure, and aggressive treatment "
            "of pain.")
    assert "aggression" not in _sx(plan)
    assert _sx("HPI: He is aggressive toward staff on the unit.").get("aggression") == "present"


def test_drinking_coffee_by_the_cup_is_no_alcohol_use() -> None:
    """'Drinks' names alcohol when nothing else is drunk; with a drink without alcohol as its object it does not."""
    from anonpsy.extract.mentions.symptoms import symptom_mentions

    ids = [m.id for m in symptom_mentions("She drinks two to four cups of coffee per day.")]
    assert ids == ["caffeine_use"]
    assert [m.id for m in symptom_mentions("He drank a glass of water and drinks diet soda.")] == []
    assert [m.id for m in symptom_mentions("He drinks daily, about two beers.")] == ["alcohol_use", "alcohol_use"]
    text = ("SUBSTANCE USE: She rarely drinks alcohol and denies smoking. She drinks two to four cups of coffee per "
            "day.")
    g = extract(text)
    assert not [s for s in g.symptoms if s.headword == "alcohol use" and "coffee" in (s.evidence_text or "")]
    assert "caffeine use" in _sx(text)


def test_not_speaking_in_a_moment_of_anger_is_no_mutism() -> None:
    """Mutism is a sign: 'mute', no speech at all or through the interview. Falling silent when angry is conduct."""
    assert "mutism" not in _sx("HPI: When things do not go her way, she becomes angry, does not speak, and calms "
                               "down in her room.")
    assert "mutism" not in _sx("HPI: He does not speak English; an interpreter was used.")
    assert _sx("MENTAL STATUS EXAM: He is mute and stares at the wall.").get("mutism") == "present"
    assert _sx("HPI: She does not speak at all and stares at the wall.").get("mutism") == "present"


def test_a_use_ended_years_ago_is_past() -> None:
    """'Used alcohol after his divorce, but has not used it for the last two years': past use, not present."""
    text = ("SUBSTANCE ABUSE HISTORY: He stated he used alcohol following his divorce in 1993, but has not used it "
            "for the last two years. No other substance abuse was noted.")
    assert _sx(text).get("alcohol use") == "historical"
    assert _sx("SOCIAL HISTORY: He drinks alcohol daily and smokes cigarettes.").get("alcohol use") == "present"


def test_a_coworkers_aggression_is_not_the_patients() -> None:
    """The subject of the act decides whose it is: another employee's aggressive style is not the patient's."""
    text = ("HPI: Mr. T stated he was harassed by another employee. This other employee had confronted Mr. T with a "
            "very aggressive, verbal style, and called him names.")
    assert "aggression" not in {h for h, a in _sx(text).items() if a == "present"}
    assert _sx("HPI: He confronted a coworker and was aggressive toward him.").get("aggression") == "present"


def test_a_partners_death_and_its_cause_are_not_the_patients() -> None:
    """'Her ex-husband died ... secondary to alcohol abuse': the alcohol abuse is his, no diagnosis of hers."""
    text = ("SOCIAL HISTORY: She was married for two years. Her ex-husband died in 1980 from acute pancreatitis "
            "secondary to alcohol abuse. She has two children.\nASSESSMENT: Cognitive disorder.")
    g = extract(text)
    assert "alcohol use" not in _sx(text)
    assert not [d for d in g.diagnoses if "alcohol" in d.label.lower()]


def test_a_denial_in_a_second_clause_does_not_reach_back() -> None:
    text = "SUBSTANCE USE: She rarely drinks alcohol and she denied smoking or using illicit drugs."
    sx = _sx(text)
    assert sx.get("alcohol use") != "absent" and sx.get("tobacco use") == "absent"
