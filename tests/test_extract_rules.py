"""Rules backend of extraction E: segmentation, demographics, ConText handling, medications, visit cues, STEB
clauses, calendar dates relative to the visit, and a property that extraction never breaks the graph."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from anonpsy import lexicon
from anonpsy.extract import extract
from anonpsy.extract.assembly.steb import extract_steb
from anonpsy.extract.mentions.demographics import extract_age
from anonpsy.extract.mentions.diagnoses import find_diagnoses
from anonpsy.extract.mentions.family import family_conditions
from anonpsy.extract.mentions.time import absolute_dates, time_mentions, visit_date
from anonpsy.extract.sections import section_name, sentences
from anonpsy.graph import ArrivalMode, Certainty, LegalStatus, Route, SafetyFlag, Setting, Unit
from anonpsy.temporal import TimeSpec, normalize
from anonpsy.validate import structural_violations


def _sx(text: str) -> dict[str, bool]:
    """Headword -> current, after temporal normalisation."""
    return {s.headword: s.current_symptom for s in normalize(extract(text)).symptoms}


# ---------------------------------------------------------------------------------------------------------------
# Segmentation


def test_soap_headers_split_sections() -> None:
    text = "S: Low mood for 3 weeks. Poor sleep.\nO: BP 120/80.\nA: Major depressive disorder.\nP: Start sertraline."
    got = [(s.section, s.text) for s in sentences(text)]
    assert got == [("hpi", "Low mood for 3 weeks."), ("hpi", "Poor sleep."), ("exam", "BP 120/80."),
                   ("assessment", "Major depressive disorder."), ("plan", "Start sertraline.")]


def test_prose_without_headers_is_history() -> None:
    text = "Ms. A is a 40-year-old woman. She reports low mood. Dr. B referred her."
    sents = sentences(text)
    assert [s.section for s in sents] == ["hpi"] * 3
    assert sents[0].text == "Ms. A is a 40-year-old woman."


@pytest.mark.parametrize(("text", "expected"), [
    ("Continue to taper off p.r.n. Ativan and discontinue all Ativan prior to discharge.", 1),
    ("He was given his p.r.n. Haldol at noon.", 1),
    # a p.r.n. after a dose or frequency ends a list item: the next drug starts a new one
    ("Ativan 1 mg p.r.n. Zoloft 50 mg daily.", 2),
    ("Lorazepam 1 mg IV q.6-8h. p.r.n. Clonazepam 0.5 mg bid.", 2),
])
def test_prn_before_a_drug_name_ends_a_sentence_only_after_a_dose(text: str, expected: int) -> None:
    assert len(sentences(text)) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("She takes vitamin D. She denies low mood.", ["She takes vitamin D.", "She denies low mood."]),
    ("He has hepatitis C. Will start sertraline.", ["He has hepatitis C.", "Will start sertraline."]),
    ("HEPATITIS C. Treated with interferon.", ["HEPATITIS C.", "Treated with interferon."]),
    # boundary: an initial of a name ends no sentence, nor a vitamin before a dose
    ("Seen by Dr. J. Smith today.", ["Seen by Dr. J. Smith today."]),
    ("Vitamin D. 50,000 units weekly.", ["Vitamin D. 50,000 units weekly."]),
])
def test_a_vitamin_or_hepatitis_letter_ends_a_sentence(text: str, expected: list[str]) -> None:
    """The letter of "vitamin D" or "hepatitis C" is no initial: a period after it ends the sentence when a
    capitalised word follows."""
    assert [s.text for s in sentences(text)] == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("A new patient evaluation for Mr. A. There is a meningioma.",
     ["A new patient evaluation for Mr. A.", "There is a meningioma."]),
    ("Referred by Dr. B. He has seizures.", ["Referred by Dr. B.", "He has seizures."]),
    ("Seen with Ms. C. The MRI shows edema.", ["Seen with Ms. C.", "The MRI shows edema."]),
    ("Referred to Dr. F. Under his care MRIs were done.", ["Referred to Dr. F.", "Under his care MRIs were done."]),
    # boundary: an initial before a surname, or a letter without a title, ends no sentence
    ("Seen by Dr. A. Smith today.", ["Seen by Dr. A. Smith today."]),
    ("Seen by Mr. J. Thomas and Dr. A. He left.", ["Seen by Mr. J. Thomas and Dr. A.", "He left."]),
    ("Seen by John A. There he sat.", ["Seen by John A. There he sat."]),
])
def test_a_title_and_a_letter_for_the_name_end_a_sentence(text: str, expected: list[str]) -> None:
    """"Mr. A." standing for the patient's name ends its sentence when a word that starts one follows; an initial
    before a surname ("Dr. A. Smith") does not."""
    assert [s.text for s in sentences(text)] == expected


def test_a_doubt_mark_before_a_list_item_ends_no_sentence() -> None:
    """"Zetia 10 mg daily, ? Triglide 50 mg daily": the question mark doubts the next item; it asks nothing and
    ends no sentence, so the drugs before it are no question's words."""
    got = sentences("MEDICATIONS: Imdur 20 mg daily, Zetia 10 mg daily, ? Triglide 50 mg daily, Prevacid 30 mg daily.")
    assert len(got) == 1 and got[0].question_end == 0
    # boundary: a question still ends its sentence
    assert len(sentences("Do you smoke? She said no.")) == 2


def test_bullet_and_numbered_lists_are_items() -> None:
    text = "PLAN:\n1. Start sertraline 50 mg daily.\n2. CBT weekly.\n- Follow up in 4 weeks."
    assert [s.text for s in sentences(text)] == ["Start sertraline 50 mg daily.", "CBT weekly.",
                                                 "Follow up in 4 weeks."]


def test_heading_lines_without_colon_and_header_blocks() -> None:
    text = ("DISCHARGE SUMMARY\nPatient: A B    Age: 41\nHOSPITAL COURSE\nHe improved.\n"
            "FAMILY HISTORY\nFather had bipolar disorder.")
    sents = sentences(text)
    assert [(s.section, s.text) for s in sents] == [
        ("hpi", "DISCHARGE SUMMARY"), ("hpi", "Patient: A B    Age: 41"), ("plan", "He improved."),
        ("family_history", "Father had bipolar disorder."),
    ]


def test_inline_headers_and_exported_list_artefacts() -> None:
    text = "HISTORY:,  Sad mood.,MENTAL STATUS EXAM:,  Attitude: calm.,Appearance: tidy."
    got = [(s.section, s.text) for s in sentences(text)]
    assert got == [("hpi", "Sad mood."), ("mse", "Attitude: calm."), ("mse", "Appearance: tidy.")]


def test_closing_quote_stays_with_its_sentence() -> None:
    text = 'He said it "dulled my edge." He stopped lithium.'
    assert [s.text for s in sentences(text)] == ['He said it "dulled my edge."', "He stopped lithium."]


@pytest.mark.parametrize(("header", "section"), [
    ("DEVELOPMENTAL AND JUVENILE HISTORY", "social_history"), ("Psych hx", "past_psych"),
    ("DIAGNOSTIC FORMULATION", "assessment"), ("IDENTIFICATION AND REASON FOR ADMISSION", "chief_complaint"),
    ("MENTAL STATUS AT DISCHARGE", "mse"), ("Patient", None), ("Clinician", None),
])
def test_section_names(header: str, section: str | None) -> None:
    assert section_name(header) == section


@pytest.mark.parametrize(("header", "section"), [
    ("FAMILY BACKGROUND", "family_history"), ("ACADEMIC BACKGROUND", "social_history"),
    ("PREVIOUS COUNSELING", "past_psych"), ("DSM IV DIAGNOSES", "diagnoses"), ("INITIAL DIAGNOSES", "diagnoses"),
    ("MINI-MENTAL STATUS EXAM", "labs"), ("NEUROLOGICAL EXAMINATION", "exam"),
])
def test_background_and_diagnosis_headings(header: str, section: str) -> None:
    text = f"HISTORY:,  Low mood.,{header}:,  Her father drank heavily."
    assert [(s.section, s.text) for s in sentences(text)] == [("hpi", "Low mood."), (section,
                                                                                     "Her father drank heavily.")]


# ---------------------------------------------------------------------------------------------------------------
# Demographics


@pytest.mark.parametrize(("text", "age"), [
    ("A 34-year-old woman presents with low mood.", 34),
    ("She is a woman in her thirties.", 35),
    ("Mateo is a boy aged 7 in second grade.", 7),
    ("Patient: M. Q., 33 F\nReferral: ED follow-up", 33),
    ("Pt: K. A., 23M, software tester.", 23),
    ("22 y/o F with cutting.", 22),
])
def test_age_phrases(text: str, age: int) -> None:
    assert extract_age(sentences(text)) == age


@pytest.mark.parametrize(("text", "age"), [
    # another person's age is never the patient's: told of a relative, after a possessive, of a relative the
    # patient has, in a list of relatives' ages
    ("Her father died at age 92 of a stroke. She is a 30-year-old woman with low mood.", 30),
    ("She cares for her 95-year-old mother. She is 60 years old.", 60),
    ("Mother, aged 80, lives with her. Patient is 55 yo.", 55),
    ("She has a 51-year-old sister with colon polyps. She is a 50-year-old woman.", 50),
    ("He has two sons 54 and 57 years old who are healthy.", None),
    ("He has two brothers, ages 68 and 77 years old.", None),
    ("Her husband is 47 years old.", None),
    # boundary: the patient described by a relative's role, or reported on by a relative, is the patient
    ("She is a very pleasant 31-year-old mother of two children.", 31),
    ("Mother reports that Johnny, a 9-year-old boy, has tantrums.", 9),
    ("This 32-year-old with family history of coronary disease was admitted.", 32),
])
def test_another_persons_age_is_not_the_patients(text: str, age: int | None) -> None:
    assert extract_age(sentences(text)) == age


def test_sex_from_pronouns() -> None:
    g = extract("A 34-year-old woman. She reports poor sleep and her mood is low.")
    assert g.demographics.sex.value == "female"


# ---------------------------------------------------------------------------------------------------------------
# Negation, family, hypothetical


def test_denied_symptoms_are_absent_and_never_current() -> None:
    g = normalize(extract("He reports low mood. He denies suicidal ideation. Parents deny aggression toward others."))
    got = {s.headword: (s.assertion.value, s.current_symptom) for s in g.symptoms}
    assert got == {"depressed mood": ("present", True), "suicidal ideation": ("absent", False),
                   "aggression": ("absent", False)}
    denied = [s for s in g.symptoms if s.assertion.value == "absent"]
    assert all(not s.duration_ids and not s.contexts for s in denied)
    assert not {e.target for e in g.edges} & {s.id for s in denied}


def test_postfix_negation_and_criteria_language_rule_diagnoses_out() -> None:
    text = ("Insomnia disorder. Obstructive sleep apnea and restless legs syndrome are not supported. "
            "Does not meet criteria for agoraphobia (avoidance limited to one situation) or generalized anxiety "
            "disorder. Does not yet meet criteria for alcohol use disorder. Delirium was ruled out.")
    g = extract(text)
    assert {d.rule_id for d in g.diagnoses if d.asserted} == {"insomnia_disorder"}
    excluded = {d.rule_id: d.certainty_evidence.rule_id for d in g.diagnoses
                if d.certainty.value == "ruled_out" and d.certainty_evidence is not None}
    assert excluded == {"restless_legs_syndrome": "context.neg.backward",
                        "obstructive_sleep_apnea_hypopnea": "context.neg.backward",
                        "agoraphobia": "context.neg.criteria",
                        "generalized_anxiety_disorder": "context.neg.criteria",
                        "alcohol_use_disorder": "context.neg.criteria", "delirium": "context.neg.backward"}
    assert not [e for e in g.edges if e.source in {d.id for d in g.diagnoses if not d.asserted}]


def test_rating_scale_names_are_not_diagnoses_or_symptoms() -> None:
    text = "Geriatric Depression Scale-15: 3. Panic Disorder Severity Scale (PDSS): 16. Children's Depression " \
           "Inventory-2 within normal range."
    g = extract(text)
    assert g.diagnoses == []
    assert "depressed mood" not in {s.headword for s in g.symptoms}


def test_relatives_own_conditions_are_family_history() -> None:
    g = extract("FAMILY HISTORY: Mother reports her own depression. Father had coronary artery disease and "
                "diabetes; no psychiatric illness known.\nSOCIAL HISTORY: Lives alone.")
    assert g.diagnoses == []
    assert {(f.member, f.condition) for f in g.family_history} >= {
        ("father", "coronary artery disease"), ("father", "diabetes")}
    assert any(f.member == "mother" and "depression" in f.condition for f in g.family_history)


def test_family_sentence_outside_the_section() -> None:
    g = extract("He has panic attacks. His sister has bipolar disorder.")
    assert {d.rule_id for d in g.diagnoses} == set()
    assert [(f.member, f.condition) for f in g.family_history] == [("sister", "bipolar disorder")]


def test_family_conditions_parser() -> None:
    assert family_conditions("Maternal uncle with schizophrenia, institutionalized.") == [
        ("maternal uncle", "schizophrenia")]
    assert family_conditions("Brother had Parkinson's disease.") == [("brother", "parkinson disease")]
    assert family_conditions("No family history of suicide.") == []
    assert family_conditions("Father unknown.") == []


def test_hypothetical_and_conditional_mentions_are_never_asserted() -> None:
    g = extract("Return to the ED if suicidal thoughts recur. Consider sertraline if no response. "
                "Would consider lithium.")
    assert [(s.headword, s.assertion.value) for s in g.symptoms] == [("suicidal ideation", "hypothetical")]
    # An option under consideration is a planned treatment, never one the patient takes.
    assert {(t.name, t.status.value) for t in g.treatments} == {("sertraline", "planned"), ("lithium", "planned")}
    g = extract("Educated about the risk of lithium toxicity. Monitor for akathisia.")
    assert g.treatments == []


def test_planned_treatments_are_kept() -> None:
    g = extract("PLAN: Referral for dialectical behavior therapy. Will start sertraline 25 mg daily.")
    assert {t.name for t in g.treatments} == {"dialectical behavior therapy", "sertraline"}


def test_historical_mentions_are_not_current() -> None:
    got = _sx("She has had nightmares for the past 3 weeks. She quit tobacco in 2010. History of self-harm.")
    assert got["nightmares"] is True
    assert got["tobacco use"] is False
    assert got["self-harm"] is False


def test_aside_does_not_negate_the_next_item() -> None:
    got = _sx('She describes poor self-esteem ("I\'ve never been good at anything"), difficulty making '
              "decisions and low energy.")
    assert got.get("indecisiveness") is True


# ---------------------------------------------------------------------------------------------------------------
# Medications


def test_medication_dose_route_frequency() -> None:
    g = extract("MEDICATIONS: Sertraline 50 mg PO daily. Olanzapine 10 mg IM every 6 hours PRN agitation. "
                "Haloperidol decanoate 50 mg IM every 4 weeks.")
    tx = {t.name: t for t in g.treatments}
    assert (tx["sertraline"].dose, tx["sertraline"].route, tx["sertraline"].frequency) == ("50 mg", Route.oral,
                                                                                          "daily")
    assert tx["olanzapine"].route == Route.intramuscular
    assert tx["haloperidol"].route == Route.long_acting_injectable


@pytest.mark.parametrize(("sentence", "doses"), [
    # MTSamples, CC0: two drugs given during a cardioversion, each dose written before its name
    ("The patient received a total of 7 mg of Versed and 50 micrograms of fentanyl.",
     {"Versed": "7 mg", "fentanyl": "50 micrograms"}),
    ("Sertraline 50 mg daily and 2 mg of Ativan at night.", {"Sertraline": "50 mg", "Ativan": "2 mg"}),
    # boundary: "of which" after a dose refers back to the drug before it
    ("Zoloft 50 mg of which she takes half.", {"Zoloft": "50 mg"}),
])
def test_a_dose_written_before_of_belongs_to_the_drug_after_it(sentence: str, doses: dict[str, str]) -> None:
    got = {m.surface: lexicon.parse_medication(sentence, m).dose for m in lexicon.find_terms(sentence, "medication")}
    assert got == doses


def test_laboratory_values_are_not_treatments() -> None:
    g = extract("Labs today: magnesium 0.58 mmol/L, vitamin B12 512 pg/mL, folate normal. "
                "Acetaminophen and salicylate levels undetectable.")
    assert g.treatments == []


# ---------------------------------------------------------------------------------------------------------------
# Visit


def test_visit_from_title_police_and_hold() -> None:
    text = ("EMERGENCY DEPARTMENT PSYCHIATRIC CONSULTATION\nLegal status: involuntary 72-hour emergency detention\n"
            "HPI: Brought to the ED by city police officers after shouting at cars. He threatened to kill his "
            "neighbor.")
    v = extract(text).visit_event
    assert (v.setting, v.arrival_mode, v.legal_status) == (Setting.emergency_department, ArrivalMode.police,
                                                           LegalStatus.involuntary)
    assert SafetyFlag.violence in v.safety_flags


def test_voluntary_by_default_only_for_outpatient_like_settings() -> None:
    out = extract("OUTPATIENT PSYCHIATRY FOLLOW-UP\nS: Doing well.").visit_event
    assert out.legal_status == LegalStatus.voluntary
    inpt = extract("DISCHARGE SUMMARY\nHOSPITAL COURSE: Improved on lithium.").visit_event
    assert inpt.setting == Setting.inpatient and inpt.legal_status == LegalStatus.unknown


def test_safety_flags_only_from_affirmed_current_symptoms() -> None:
    v = extract("ED CONSULT\nHPI: He denies suicidal ideation. No self-harm. History of a suicide attempt at "
                "age 19.").visit_event
    assert v.safety_flags == []
    v2 = extract("ED CONSULT\nHPI: She cut her forearm tonight and reports suicidal ideation.").visit_event
    assert set(v2.safety_flags) == {SafetyFlag.self_harm, SafetyFlag.suicidal_ideation}


def test_medical_instability_cue() -> None:
    v = extract("CONSULT\nAssessment: Anorexia nervosa with bradycardia requiring inpatient medical "
                "stabilization.").visit_event
    assert SafetyFlag.medical_instability in v.safety_flags


# ---------------------------------------------------------------------------------------------------------------
# STEB


def test_steb_thought_drops_the_verb() -> None:
    s = "He believes his neighbors implanted a microchip in his molar during a dental visit."
    frame = extract_steb(s, (s.index("believes"), s.index("believes") + 8))
    assert frame is not None
    assert frame.thought == "his neighbors implanted a microchip in his molar during a dental visit"


def test_steb_situation_and_behavior_stay_with_their_symptom() -> None:
    s = "She sits with her back to the wall in restaurants, checks the locks repeatedly at night, and cries " \
        "when a door slams."
    spans = [(m.start, m.end) for m in lexicon.find_terms(s, "symptom")]
    cries = next(sp for sp in spans if s[sp[0]:sp[1]].startswith("cries"))
    checks = next(sp for sp in spans if s[sp[0]:sp[1]].startswith("checks"))
    f_cry = extract_steb(s, cries, spans)
    f_check = extract_steb(s, checks, spans)
    assert f_cry is not None and f_cry.situation == "when a door slams"
    assert f_check is not None and f_check.situation is None
    assert f_check.behavior == "checks the locks repeatedly at night"


def test_steb_fields_are_clean() -> None:
    s = ('After the layoff she believes "I should have seen it coming; it was my fault for trusting them and '
         'now everything I ever worked for is gone and nobody will ever hire me again at my age" and cries.')
    span = (s.index("cries"), s.index("cries") + 5)
    frame = extract_steb(s, span)
    assert frame is not None
    for value in (frame.situation, frame.thought, frame.emotion, frame.behavior):
        if value is None:
            continue
        assert len(value.split()) <= 25
        assert value.count('"') % 2 == 0
        assert not value.endswith((" and", " the", " of"))
    assert frame.thought is not None and frame.thought.startswith("I should have seen it coming")


def test_steb_absent_fields_stay_empty() -> None:
    g = extract("HPI: He reports hearing voices.")
    for s in g.symptoms:
        for f in s.contexts:
            assert f.present_fields()


# ---------------------------------------------------------------------------------------------------------------
# Time


def test_visit_date_from_header_and_prose() -> None:
    assert visit_date("CONSULT\nDOB: 01/02/1990\nDate: 03/14/2025") == date(2025, 3, 14)
    assert visit_date("She was seen on 09/09/2025 at the clinic.") == date(2025, 9, 9)
    assert visit_date("No dates here.") is None


def test_absolute_dates_relative_to_visit() -> None:
    v = date(2025, 3, 14)
    specs = [m.spec for m in absolute_dates("on 03/12/2025", v)]
    assert specs == [TimeSpec(-2, 1, Unit.day)]
    since = absolute_dates("since January 2024", v)[0].spec
    assert since.ongoing and since.span is None and since.offset < 0
    season = absolute_dates("in the spring of 2018", v)[0].spec
    iv = season.interval()
    assert iv is not None and iv[1] <= (date(2018, 6, 1) - v).days + 31 and iv[0] <= (date(2018, 3, 1) - v).days
    assert absolute_dates("DOB: 01/02/1990", v) == []
    assert absolute_dates("7/9 inattentive items", v) == []


@pytest.mark.parametrize(("text", "ongoing", "past"), [
    ("Self-harm since age 14.", True, False),
    ("One suicide attempt at 19: overdose.", False, True),
    ("in childhood", False, True),
    ("since last spring", True, False),
    ("two days before admission", False, True),
    ("yesterday", False, True),
])
def test_relative_expressions(text: str, ongoing: bool, past: bool) -> None:
    t = time_mentions(text, age=22, visit=None)
    assert t, text
    spec = t[0].spec
    assert spec.ongoing is ongoing
    iv = spec.interval()
    assert (not spec.ongoing and iv is not None and iv[1] <= 0) is past


def test_untimed_events_get_no_duration() -> None:
    g = extract("HPI: She reports low mood and poor sleep.")
    assert g.durations == [] and all(not s.duration_ids for s in g.symptoms)


def test_dated_event_in_the_past_is_not_current() -> None:
    text = ("Date: 09/09/2025\nHPI: In the spring of 2018 she had a period of intense guilt. She now reports low "
            "mood for the past 2 months.")
    got = _sx(text)
    assert got == {"excessive guilt": False, "depressed mood": True}


def test_onset_expression_keeps_the_symptom_current() -> None:
    got = _sx("His memory problems began three years ago and have worsened.")
    assert got == {"memory impairment": True}


def test_diagnoses_with_parenthetical_and_hyphen() -> None:
    got = {r for _s, _e, r in find_diagnoses("Methamphetamine-induced psychotic disorder; Stimulant "
                                             "(methamphetamine) use disorder, severe.")}
    assert got == {"substance_induced_psychotic_disorder", "stimulant_use_disorder"}


# ---------------------------------------------------------------------------------------------------------------
# Property

_PHRASES = [
    "low mood", "hearing voices", "denies suicidal ideation", "panic attacks", "poor sleep", "sertraline 50 mg PO "
    "daily", "CBT weekly", "Mother had bipolar disorder", "since age 15", "for the past 3 weeks", "in March 2024",
    "on 03/12/2025", "at 19", "no history of psychosis", "major depressive disorder", "rule out PTSD",
    "believes he is being followed", "when she is alone", "yesterday", "two days before admission",
    "drinks 6 beers nightly", "Date: 03/14/2025", "HPI:", "ASSESSMENT:", "FAMILY HISTORY:", "\n", "; ", ", ",
    '"', "(", ")", "Insight poor", "quit tobacco in 2010", "has gained about 8 kg", "spending about $18,000",
]


@given(st.lists(st.sampled_from(_PHRASES), min_size=1, max_size=14).map(" ".join))
@example("Date: 03/14/2025\nHPI: low mood since age 15 ; on 03/12/2025 hearing voices")
@example('" ( on 03/12/2025 ) "')
def test_extraction_never_raises_and_graph_is_valid(text: str) -> None:
    graph = normalize(extract(text, case_id="prop"))
    assert structural_violations(graph) == []


def test_clock_times_are_not_ages() -> None:

    text = "Olanzapine 10 mg IM at 01:40 for agitation with good effect; he was first ill at 19, in college."
    mentions = time_mentions(text, age=24, visit=None)
    assert all(m.start > text.index("01:40") for m in mentions), "01:40 is a clock time, not an age"
    assert 19 - 24 in [m.spec.offset for m in mentions], "'at 19' is an age"


@pytest.mark.parametrize("text", [
    # MTSamples, CC0: a plan item listing medications on admission
    "Artane 2 mg p.o. daily, lorazepam 0.5 mg p.o. q.6h. p.r.n. anxiety and agitation.",
    "Xanax 0.25 mg b.i.d. for anxiety.",
    "Ativan as needed for agitation or anxiety.",
])
def test_indication_of_a_dose_is_no_diagnosis(text: str) -> None:
    assert find_diagnoses(text, "assessment") == []


def test_listed_symptom_word_and_named_diagnosis_after_a_dose_still_count() -> None:
    assert [r for _s, _e, r in find_diagnoses("1. Anxiety. 2. Depression.", "assessment")] == [
        "unspecified_anxiety_disorder", "unspecified_depressive_disorder"]
    assert [r for _s, _e, r in find_diagnoses("Seroquel 50 mg for bipolar disorder.", "assessment")] == [
        "unspecified_bipolar_and_related_disorder"]


def test_prn_indication_in_a_plan_invents_no_diagnosis() -> None:
    text = ("ASSESSMENT: Major depressive disorder, recurrent.\nPLAN:\n1. Continue sertraline 100 mg daily.\n"
            "2. Lorazepam 0.5 mg q.6h. p.r.n. anxiety and agitation.\n")
    labels = {d.label for d in extract(text, case_id="prn").diagnoses}
    assert not any("anxiety" in x.lower() for x in labels), labels


@pytest.mark.parametrize(("text", "expected"), [
    # MTSamples, CC0: "a history of abusing opiates, benzodiazepines, and Vicodin"
    ("She has a history of abusing opiates, benzodiazepines, and Vicodin.",
     {"opioid_use_disorder", "sedative_hypnotic_anxiolytic_use_disorder"}),
    ("He has been addicted to pain pills since his surgery.", {"opioid_use_disorder"}),
    ("Abuse of cocaine and marijuana in his twenties.", {"stimulant_use_disorder", "cannabis_use_disorder"}),
])
def test_substances_after_a_problem_use_verb_are_their_use_disorders(text: str, expected: set[str]) -> None:
    assert {r for _s, _e, r in find_diagnoses(text)} == expected


@pytest.mark.parametrize("text", [
    "No history of physical or sexual abuse.",
    "She was abused by her father in childhood.",
    "He is dependent on his mother for transportation.",
])
def test_abuse_of_a_person_or_dependence_on_a_person_is_no_use_disorder(text: str) -> None:
    assert find_diagnoses(text) == []


def test_general_medicine_drugs_of_a_discharge_list_are_kept() -> None:
    # MTSamples, CC0: a discharge medication list of a medical admission
    text = ("DISCHARGE MEDICATIONS: Lasix 80 mg daily, Lumigan one drop both eyes at bed time, Feldene 20 mg daily, "
            "Timoptic one drop OU daily, lidocaine patch.\n")
    names = {t.name for t in extract(text, case_id="dc").treatments}
    # the dictionary's "lidocaine patch" is a form of the listed lidocaine, which keeps its name
    assert {"furosemide", "bimatoprost", "piroxicam", "timolol", "lidocaine"} <= names, names
    assert "lidocaine patch" not in names, names


_LISTED_DRUGS = sorted({e.headword for e in lexicon.medication_lexicon().rules
                        if e.class_id in ("ssri", "snri", "benzodiazepine", "opioid_analgesic", "statin")})


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(_LISTED_DRUGS))
@example("oxycodone/acetaminophen")
def test_a_drug_of_the_current_list_stays_taken_when_the_plan_allows_more_if_needed(drug: str) -> None:
    """A plan that lets the patient take more of a listed drug "if needed" speaks of further doses: the drug
    is taken already, never only planned."""
    text = f"CURRENT MEDICATIONS: {drug} 10 mg daily.\nPLAN: She may take an extra {drug} if needed.\n"
    statuses = {t.name: t.status.value for t in extract(text, case_id="x").treatments}
    assert statuses and set(statuses.values()) <= {"current", "prn"}, statuses


def test_a_drug_only_the_plan_names_if_needed_is_planned() -> None:
    text = "PLAN: She may take sertraline if needed.\n"
    assert [(t.name, t.status.value) for t in extract(text, case_id="x").treatments] == [("sertraline", "planned")]


@pytest.mark.parametrize(("text", "want"), [
    # a stop hyphened onto an item of the list annotates that item, not the next
    ("MEDICATIONS: Lipitor 40 mg q.d., Plavix 75 mg q.d-discontinued, enalapril 10 mg b.i.d.\n"
     "PLAN: Plavix discontinued.\n", {"clopidogrel": "past", "enalapril": "current", "atorvastatin": "current"}),
    # a free-standing stop still reads forward
    ("HPI: Discontinued Plavix last week.\n", {"clopidogrel": "past"}),
])
def test_a_hyphened_stop_marks_its_own_list_item(text: str, want: dict[str, str]) -> None:
    statuses = {t.name: t.status.value for t in extract(text, case_id="x").treatments}
    assert {k: statuses.get(k) for k in want} == want, statuses


@pytest.mark.parametrize(("sentence", "drug", "stopped"), [
    # a list of orders: the hold is its own item's, not the antiemetic's three items on
    ("NPO, hold p.o. medications, GI consult, pain control, Zofran IV p.r.n., bedrest.", "Zofran", False),
    # a list of drugs: the stop reaches each
    ("Discontinue Paxil, Zoloft, and Xanax.", "Xanax", True),
    ("Stop Paxil, Zoloft 50 mg daily, and Xanax.", "Xanax", True),
])
def test_a_stop_reaches_the_drugs_of_its_list_but_not_past_an_order(sentence: str, drug: str,
                                                                    stopped: bool) -> None:
    from anonpsy.extract.assertion.context import classify

    at = sentence.index(drug)
    assert classify(sentence, at, at + len(drug), "medication").historical is stopped


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(_LISTED_DRUGS), st.sampled_from(["GI consult", "pain control", "bedrest", "DVT prophylaxis"]),
       st.sampled_from(["hold", "discontinue", "stop"]))
@example("oxycodone", "GI consult", "hold")
def test_a_stop_never_reaches_a_drug_past_an_order_of_the_list(drug: str, order: str, stop: str) -> None:
    """In a list of orders, a stop is its own item's: a drug after an item that names no drug is not stopped;
    in a list of drugs the stop reaches each."""
    from anonpsy.extract.assertion.context import classify

    orders = f"NPO, {stop} p.o. medications, {order}, {drug} 10 mg daily, bedrest."
    at = orders.index(drug, orders.index(order))
    assert not classify(orders, at, at + len(drug), "medication").historical
    drugs = f"{stop.capitalize()} Paxil, Zoloft, and {drug}."
    at = drugs.rindex(drug)
    assert classify(drugs, at, at + len(drug), "medication").historical


@pytest.mark.parametrize("glue", ["q.d-discontinued", "mg-stopped", "daily-discontinued"])
def test_a_hyphened_stop_never_reaches_the_next_item(glue: str) -> None:
    from anonpsy.extract.assertion.context import classify

    sentence = f"Lipitor 40 mg q.d., Plavix 75 {glue}, enalapril 10 mg b.i.d."
    at = sentence.index("enalapril")
    assert not classify(sentence, at, at + len("enalapril"), "medication").historical


def test_short_general_medicine_abbreviations_are_not_read_in_narrative() -> None:
    assert [m.id for m in lexicon.find_terms("Her 90-day LR was revoked; Td status unknown.", "medication")] == []


@pytest.mark.parametrize(("text", "drug"), [
    ("PLAN: Give the patient TPA to the shunt.", "alteplase"),  # MTSamples, CC0
    ("D5W with 3 ounces of bicarbonate at 150 mL an hour.", "dextrose"),  # MTSamples, CC0
    ("She received 2 units of FFP.", "fresh_frozen_plasma"),
])
def test_general_medicine_abbreviations_of_three_characters_are_read_as_written(text: str, drug: str) -> None:
    assert drug in [m.id for m in lexicon.find_terms(text, "medication")]


def test_a_general_medicine_abbreviation_in_lower_case_is_a_word() -> None:
    """Boundary: the abbreviation matches case-sensitively, as the curated lexicon's abbreviations do."""
    assert [m.id for m in lexicon.find_terms("The tpa of the study and the ffp column were reviewed.",
                                             "medication")] == []


def test_misuse_of_prescribed_drugs_as_a_cause_is_no_use_disorder() -> None:
    # MTSamples, CC0: an Axis I delirium "secondary to misuse of prescribed opiates, Soma, Valium"
    text = "Delirium, resolved (recent mental status changes likely secondary to misuse of prescribed opiates, Valium.)"
    assert {r for _s, _e, r in find_diagnoses(text, "assessment")} <= {"delirium"}


@pytest.mark.parametrize("sentence", [
    "He has made threats of harm to him, and his partner no longer feels that he is safe having him at home.",
    "Her mother believes that she is being followed by the neighbours and she is paranoid.",
    "He does not believe that his food is poisoned, although he is paranoid.",
    "She never thought that anyone was watching her and denies paranoia; she is anxious.",
    # a passive "thought/believed/said to" has no holder: nobody's belief, least of all the patient's
    "He has a globus sensation thought to represent reflux.",
    "He is anxious; the tremor is believed to be drug induced and is said to worsen at night.",
])
def test_steb_thought_is_only_the_patients_affirmed_belief(sentence: str) -> None:
    for m in lexicon.find_terms(sentence, "symptom"):
        frame = extract_steb(sentence, (m.start, m.end))
        assert frame is None or frame.thought is None, sentence


def test_steb_thought_reported_by_a_relative_stays_the_patients() -> None:
    s = "Her mother says that she believes her neighbors implanted a microchip in her tooth."
    span = (s.index("implanted"), s.index("tooth") + 5)
    frame = extract_steb(s, span)
    assert frame is not None and frame.thought == "her neighbors implanted a microchip in her tooth"


@pytest.mark.parametrize("sentence", [
    "She is tearful and her husband hit her during an argument.",
    "He is irritable but never hit anyone at home.",
])
def test_steb_behavior_is_only_the_patients_own_act(sentence: str) -> None:
    for m in lexicon.find_terms(sentence, "symptom"):
        frame = extract_steb(sentence, (m.start, m.end))
        assert frame is None or frame.behavior is None or "hit" not in frame.behavior, sentence


def test_involuntary_movements_are_not_a_legal_status() -> None:
    text = ("PSYCHIATRIC CONSULTATION\nHPI: She took an overdose and was transferred to the psychiatric floor.\n"
            "MENTAL STATUS EXAM: Appears depressed, with some mild involuntary movements around her lips.\n"
            "PLAN: She will be admitted on a voluntary basis.")
    assert extract(text).visit_event.legal_status == LegalStatus.voluntary
    held = extract("HPI: He was admitted involuntarily after threatening his neighbor.").visit_event
    assert held.legal_status == LegalStatus.involuntary



@pytest.mark.parametrize("order", ["there was a court order giving the mother custody back",  # MTSamples (CC0)
                                   "a court-ordered supervised visitation schedule was set"])
def test_a_custody_court_order_is_not_the_patients_legal_status(order: str) -> None:
    """A court order that settles custody or visitation is a family matter: the visit is not court-ordered."""
    text = f"HPI: She was referred for low mood. After the divorce {order}.\nPLAN: Follow up in two weeks."
    assert extract(text).visit_event.legal_status != LegalStatus.court_ordered
    ordered = extract("HPI: She is seen under a court order for an evaluation of low mood.").visit_event
    assert ordered.legal_status == LegalStatus.court_ordered

def test_a_denial_under_family_history_is_no_verdict_on_the_patient() -> None:
    g = extract("HPI: She has felt depressed for months.\nFAMILY PSYCHIATRIC HISTORY: The patient denies history of "
                "depression, bipolar, schizophrenia, or suicide attempts.\nASSESSMENT: Major depressive disorder.")
    ruled_out = {d.label for d in g.diagnoses if d.certainty == Certainty.ruled_out}
    assert not ruled_out
    assert any(d.label == "Major Depressive Disorder" and d.certainty == Certainty.confirmed for d in g.diagnoses)


_TITLE_HEADERS = ["History of Present Illness", "Past Medical History", "Family History", "Medications",
                  "Social History"]


@given(header=st.sampled_from(_TITLE_HEADERS),
       lead=st.sampled_from(["Confusion.", "No known drug allergies.", "She had improved."]))
@example(header="Medications", lead="No known drug allergies.")
def test_property_title_case_header_glued_with_commas_opens_its_section(header: str, lead: str) -> None:
    """MTSamples glues title-case headers into one line (",Medications:, Prescribed ..."): a known one opens its
    section, as the capitalised form does."""
    text = f"{lead},{header}:, The patient was prescribed sertraline 50 mg daily."
    expected = section_name(header)
    assert expected is not None
    named = {s.text.strip(): s.section for s in sentences(text)}
    assert named["The patient was prescribed sertraline 50 mg daily."] == expected


def test_title_case_words_before_a_colon_in_prose_open_no_section() -> None:
    # Not a known header, or not glued with the comma on both sides: prose stays in its section.
    for prose in ("HPI: She told her Mother:, nothing more.", "HPI: She listed her medications: none, she said."):
        assert all(s.section == "hpi" for s in sentences(prose))


def test_comma_glued_header_before_a_numbered_list() -> None:
    text = ("ASSESSMENT: , Major depressive disorder.,PLAN,1.  Safety.  Every 15-minute checks.,2.  Psychosocial.  "
            "Team will involve family.")
    named = {s.text.strip(): s.section for s in sentences(text)}
    assert named["Safety."] == "plan" and named["Psychosocial."] == "plan"
    assert section_name("PLAN") == "plan"
    prose = "ASSESSMENT: Depression. She agreed with the plan, 1. to attend groups."
    assert all(s.section == "assessment" for s in sentences(prose))


@pytest.mark.parametrize(("text", "word", "behavior"), [
    ("6-pack beer plus 2 drinks per day for many years.", "beer", None),
    ("He has a few drinks on weekends and panic attacks.", "panic attacks", None),
    ("He has panic attacks and drinks heavily.", "panic attacks", "drinks heavily"),
    ("She has fatigue, and they began complaining as soon as she arrived.", "fatigue", None),
    ("She has panic attacks and stopped going to work.", "panic attacks", "stopped going to work"),
])
def test_a_counted_behaviour_word_is_a_noun(text: str, word: str, behavior: str | None) -> None:
    """'2 drinks per day' counts drinks: no act to tell, and told without its count it would read 'drinks per
    day'. 'they began' is someone else's act, not the patient's behaviour."""
    i = text.index(word)
    frame = extract_steb(text, (i, i + len(word)))
    assert (frame.behavior if frame else None) == behavior
