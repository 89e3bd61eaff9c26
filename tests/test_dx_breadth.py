"""Breadth of the diagnosis vocabulary: the names, abbreviations and older (DSM-IV, ICD) names a note uses for every
DSM-5-TR disorder, chapter by chapter, and the neurological and sleep conditions the annotations enter, each read
as the diagnosis it names; ambiguous abbreviations where they mean something else read as nothing.

Every phrase is tried in lower case, title case and capitals (an abbreviation as written). The rows are general
clinical usage, not text of any note.
"""

from __future__ import annotations

import re

import pytest

from anonpsy import lexicon
from anonpsy.extract import extract
from anonpsy.extract.mentions.diagnoses import find_diagnoses
from anonpsy.graph import Certainty

#: (phrase, DSM rule id), by DSM-5-TR chapter.
DSM_ROWS: list[tuple[str, str]] = [
    # Neurodevelopmental
    ("intellectual disability", "intellectual_disability"),
    ("mental retardation", "intellectual_disability"),
    ("mild mental retardation", "intellectual_disability"),
    ("intellectual developmental disorder", "intellectual_disability"),
    ("global developmental delay", "global_developmental_delay"),
    ("expressive language disorder", "language_disorder"),
    ("phonological disorder", "speech_sound_disorder"),
    ("childhood-onset fluency disorder", "childhood_onset_fluency_disorder"),
    ("stuttering", "childhood_onset_fluency_disorder"),
    ("social (pragmatic) communication disorder", "social_pragmatic_communication_disorder"),
    ("autism spectrum disorder", "autism_spectrum_disorder"),
    ("ASD", "autism_spectrum_disorder"),
    ("autistic spectrum disorder", "autism_spectrum_disorder"),
    ("high-functioning autism", "autism_spectrum_disorder"),
    ("Asperger's", "autism_spectrum_disorder"),
    ("Asperger's disorder", "autism_spectrum_disorder"),
    ("Asperger syndrome", "autism_spectrum_disorder"),
    ("PDD-NOS", "autism_spectrum_disorder"),
    ("pervasive developmental disorder not otherwise specified", "autism_spectrum_disorder"),
    ("attention-deficit/hyperactivity disorder", "adhd"),
    ("attention deficit hyperactivity disorder", "adhd"),
    ("ADHD", "adhd"),
    ("ADD", "adhd"),
    ("attention deficit hyperactivity disorder, combined type", "adhd"),
    ("specific learning disorder", "specific_learning_disorder"),
    ("dyslexia", "specific_learning_disorder"),
    ("learning disability", "specific_learning_disorder"),
    ("developmental coordination disorder", "developmental_coordination_disorder"),
    ("dyspraxia", "developmental_coordination_disorder"),
    ("stereotypic movement disorder", "stereotypic_movement_disorder"),
    ("Tourette's disorder", "tourettes_disorder"),
    ("Tourette syndrome", "tourettes_disorder"),
    ("chronic motor tic disorder", "persistent_motor_or_vocal_tic_disorder"),
    ("provisional tic disorder", "provisional_tic_disorder"),
    ("transient tic disorder", "provisional_tic_disorder"),
    ("tic disorder", "unspecified_tic_disorder"),
    ("tic disorder NOS", "unspecified_tic_disorder"),
    # Schizophrenia spectrum and other psychotic disorders
    ("schizophrenia", "schizophrenia"),
    ("paranoid schizophrenia", "schizophrenia"),
    ("schizophreniform disorder", "schizophreniform_disorder"),
    ("brief psychotic disorder", "brief_psychotic_disorder"),
    ("schizoaffective disorder", "schizoaffective_disorder"),
    ("delusional disorder", "delusional_disorder"),
    ("shared psychotic disorder", "delusional_disorder"),
    ("folie a deux", "delusional_disorder"),
    ("substance-induced psychotic disorder", "substance_induced_psychotic_disorder"),
    ("psychotic disorder due to another medical condition", "psychotic_disorder_due_to_another_medical_condition"),
    ("psychotic disorder NOS", "unspecified_schizophrenia_spectrum_disorder"),
    ("catatonia NOS", "unspecified_catatonia"),
    # Bipolar and related
    ("bipolar I disorder", "bipolar_i_disorder"),
    ("bipolar II disorder", "bipolar_ii_disorder"),
    ("cyclothymic disorder", "cyclothymic_disorder"),
    ("cyclothymia", "cyclothymic_disorder"),
    ("bipolar disorder", "unspecified_bipolar_and_related_disorder"),
    ("bipolar affective disorder", "unspecified_bipolar_and_related_disorder"),
    ("Bi-polar Affective Disorder", "unspecified_bipolar_and_related_disorder"),
    ("bipolar disorder NOS", "unspecified_bipolar_and_related_disorder"),
    ("manic depression", "unspecified_bipolar_and_related_disorder"),
    ("manic-depressive illness", "unspecified_bipolar_and_related_disorder"),
    ("manic depressive disorder", "unspecified_bipolar_and_related_disorder"),
    # Depressive
    ("disruptive mood dysregulation disorder", "disruptive_mood_dysregulation_disorder"),
    ("DMDD", "disruptive_mood_dysregulation_disorder"),
    ("major depressive disorder", "major_depressive_disorder"),
    ("MDD", "major_depressive_disorder"),
    ("major depression", "major_depressive_disorder"),
    ("seasonal affective disorder", "major_depressive_disorder"),
    ("persistent depressive disorder", "persistent_depressive_disorder"),
    ("dysthymia", "persistent_depressive_disorder"),
    ("dysthymic disorder", "persistent_depressive_disorder"),
    ("neurotic depression", "persistent_depressive_disorder"),
    ("premenstrual dysphoric disorder", "premenstrual_dysphoric_disorder"),
    ("PMDD", "premenstrual_dysphoric_disorder"),
    ("substance-induced depressive disorder", "substance_induced_depressive_disorder"),
    ("depressive disorder NOS", "unspecified_depressive_disorder"),
    ("depression NOS", "unspecified_depressive_disorder"),
    ("mood disorder NOS", "unspecified_mood_disorder"),
    # Anxiety
    ("separation anxiety disorder", "separation_anxiety_disorder"),
    ("selective mutism", "selective_mutism"),
    ("specific phobia", "specific_phobia"),
    ("social anxiety disorder", "social_anxiety_disorder"),
    ("social phobia", "social_anxiety_disorder"),
    ("panic disorder", "panic_disorder"),
    ("agoraphobia", "agoraphobia"),
    ("generalized anxiety disorder", "generalized_anxiety_disorder"),
    ("GAD", "generalized_anxiety_disorder"),
    ("anxiety disorder NOS", "unspecified_anxiety_disorder"),
    # Obsessive-compulsive and related
    ("obsessive-compulsive disorder", "obsessive_compulsive_disorder"),
    ("OCD", "obsessive_compulsive_disorder"),
    ("body dysmorphic disorder", "body_dysmorphic_disorder"),
    ("hoarding disorder", "hoarding_disorder"),
    ("trichotillomania", "trichotillomania"),
    ("hair-pulling disorder", "trichotillomania"),
    ("excoriation disorder", "excoriation_disorder"),
    ("skin-picking disorder", "excoriation_disorder"),
    # Trauma- and stressor-related
    ("reactive attachment disorder", "reactive_attachment_disorder"),
    ("disinhibited social engagement disorder", "disinhibited_social_engagement_disorder"),
    ("posttraumatic stress disorder", "posttraumatic_stress_disorder"),
    ("post-traumatic stress disorder", "posttraumatic_stress_disorder"),
    ("PTSD", "posttraumatic_stress_disorder"),
    ("acute stress disorder", "acute_stress_disorder"),
    ("adjustment disorder with depressed mood", "adjustment_disorder"),
    ("prolonged grief disorder", "prolonged_grief_disorder"),
    # Dissociative
    ("dissociative identity disorder", "dissociative_identity_disorder"),
    ("multiple personality disorder", "dissociative_identity_disorder"),
    ("dissociative amnesia", "dissociative_amnesia"),
    ("depersonalization/derealization disorder", "depersonalization_derealization_disorder"),
    ("dissociative disorder NOS", "unspecified_dissociative_disorder"),
    # Somatic symptom and related
    ("somatic symptom disorder", "somatic_symptom_disorder"),
    ("somatization disorder", "somatic_symptom_disorder"),
    ("illness anxiety disorder", "illness_anxiety_disorder"),
    ("hypochondriasis", "illness_anxiety_disorder"),
    ("functional neurological symptom disorder", "functional_neurological_symptom_disorder"),
    ("conversion disorder", "functional_neurological_symptom_disorder"),
    ("psychological factors affecting other medical conditions",
     "psychological_factors_affecting_other_medical_conditions"),
    ("factitious disorder", "factitious_disorder"),
    ("Munchausen syndrome", "factitious_disorder"),
    # Feeding and eating
    ("pica", "pica"),
    ("rumination disorder", "rumination_disorder"),
    ("avoidant/restrictive food intake disorder", "avoidant_restrictive_food_intake_disorder"),
    ("ARFID", "avoidant_restrictive_food_intake_disorder"),
    ("anorexia nervosa", "anorexia_nervosa"),
    ("bulimia nervosa", "bulimia_nervosa"),
    ("binge-eating disorder", "binge_eating_disorder"),
    ("eating disorder NOS", "unspecified_feeding_or_eating_disorder"),
    ("EDNOS", "unspecified_feeding_or_eating_disorder"),
    ("eating disorder", "unspecified_feeding_or_eating_disorder"),
    # Elimination
    ("enuresis", "enuresis"),
    ("nocturnal enuresis", "enuresis"),
    ("encopresis", "encopresis"),
    # Sleep-wake
    ("insomnia disorder", "insomnia_disorder"),
    ("primary insomnia", "insomnia_disorder"),
    ("hypersomnolence disorder", "hypersomnolence_disorder"),
    ("narcolepsy", "narcolepsy"),
    ("obstructive sleep apnea", "obstructive_sleep_apnea_hypopnea"),
    ("OSA", "obstructive_sleep_apnea_hypopnea"),
    ("central sleep apnea", "central_sleep_apnea"),
    ("circadian rhythm sleep disorder", "circadian_rhythm_sleep_wake_disorder"),
    ("delayed sleep phase syndrome", "circadian_rhythm_sleep_wake_disorder"),
    ("sleepwalking disorder", "nrem_sleep_arousal_disorder"),
    ("sleep terror disorder", "nrem_sleep_arousal_disorder"),
    ("nightmare disorder", "nightmare_disorder"),
    ("REM sleep behavior disorder", "rem_sleep_behavior_disorder"),
    ("RBD", "rem_sleep_behavior_disorder"),
    ("restless legs syndrome", "restless_legs_syndrome"),
    ("RLS", "restless_legs_syndrome"),
    # Sexual dysfunctions
    ("delayed ejaculation", "delayed_ejaculation"),
    ("erectile disorder", "erectile_disorder"),
    ("female orgasmic disorder", "female_orgasmic_disorder"),
    ("female sexual interest/arousal disorder", "female_sexual_interest_arousal_disorder"),
    ("genito-pelvic pain/penetration disorder", "genito_pelvic_pain_penetration_disorder"),
    ("vaginismus", "genito_pelvic_pain_penetration_disorder"),
    ("male hypoactive sexual desire disorder", "male_hypoactive_sexual_desire_disorder"),
    ("premature ejaculation", "premature_ejaculation"),
    # Gender dysphoria
    ("gender dysphoria", "gender_dysphoria"),
    ("gender identity disorder", "gender_dysphoria"),
    # Disruptive, impulse-control and conduct
    ("oppositional defiant disorder", "oppositional_defiant_disorder"),
    ("ODD", "oppositional_defiant_disorder"),
    ("intermittent explosive disorder", "intermittent_explosive_disorder"),
    ("conduct disorder", "conduct_disorder"),
    ("pyromania", "pyromania"),
    ("kleptomania", "kleptomania"),
    ("disruptive behavior disorder NOS", "unspecified_disruptive_impulse_control_and_conduct_disorder"),
    ("impulse control disorder NOS", "unspecified_disruptive_impulse_control_and_conduct_disorder"),
    # Substance-related and addictive
    ("alcohol use disorder", "alcohol_use_disorder"),
    ("alcohol dependence", "alcohol_use_disorder"),
    ("alcohol abuse", "alcohol_use_disorder"),
    ("alcohol withdrawal", "alcohol_withdrawal"),
    ("alcohol intoxication", "alcohol_intoxication"),
    ("caffeine intoxication", "caffeine_intoxication"),
    ("caffeine withdrawal", "caffeine_withdrawal"),
    ("cannabis use disorder", "cannabis_use_disorder"),
    ("marijuana abuse", "cannabis_use_disorder"),
    ("cannabis intoxication", "cannabis_intoxication"),
    ("phencyclidine use disorder", "phencyclidine_use_disorder"),
    ("PCP abuse", "phencyclidine_use_disorder"),
    ("hallucinogen use disorder", "other_hallucinogen_use_disorder"),
    ("LSD abuse", "other_hallucinogen_use_disorder"),
    ("inhalant use disorder", "inhalant_use_disorder"),
    ("inhalant abuse", "inhalant_use_disorder"),
    ("opioid use disorder", "opioid_use_disorder"),
    ("opioid dependence", "opioid_use_disorder"),
    ("heroin abuse", "opioid_use_disorder"),
    ("opioid intoxication", "opioid_intoxication"),
    ("opioid withdrawal", "opioid_withdrawal"),
    ("sedative, hypnotic, or anxiolytic use disorder", "sedative_hypnotic_anxiolytic_use_disorder"),
    ("benzodiazepine dependence", "sedative_hypnotic_anxiolytic_use_disorder"),
    ("sedative use disorder", "sedative_hypnotic_anxiolytic_use_disorder"),
    ("benzodiazepine withdrawal", "sedative_hypnotic_anxiolytic_withdrawal"),
    ("stimulant use disorder", "stimulant_use_disorder"),
    ("cocaine dependence", "stimulant_use_disorder"),
    ("methamphetamine use disorder", "stimulant_use_disorder"),
    ("cocaine intoxication", "stimulant_intoxication"),
    ("cocaine withdrawal", "stimulant_withdrawal"),
    ("tobacco use disorder", "tobacco_use_disorder"),
    ("nicotine dependence", "tobacco_use_disorder"),
    ("nicotine withdrawal", "tobacco_withdrawal"),
    ("polysubstance dependence", "other_substance_use_disorder"),
    ("gambling disorder", "gambling_disorder"),
    ("pathological gambling", "gambling_disorder"),
    # Neurocognitive, with etiologies
    ("delirium", "delirium"),
    ("major neurocognitive disorder", "major_neurocognitive_disorder"),
    ("dementia", "major_neurocognitive_disorder"),
    ("Alzheimer's disease", "major_neurocognitive_disorder"),
    ("Alzheimer's dementia", "major_neurocognitive_disorder"),
    ("vascular dementia", "major_neurocognitive_disorder"),
    ("frontotemporal dementia", "major_neurocognitive_disorder"),
    ("Pick's disease", "major_neurocognitive_disorder"),
    ("dementia with Lewy bodies", "major_neurocognitive_disorder"),
    ("major neurocognitive disorder due to traumatic brain injury", "major_neurocognitive_disorder"),
    ("major neurocognitive disorder due to Parkinson's disease", "major_neurocognitive_disorder"),
    ("major neurocognitive disorder due to Huntington's disease", "major_neurocognitive_disorder"),
    ("dementia due to head trauma", "major_neurocognitive_disorder"),
    ("mild neurocognitive disorder", "mild_neurocognitive_disorder"),
    ("mild cognitive impairment", "mild_neurocognitive_disorder"),
    ("MCI", "mild_neurocognitive_disorder"),
    ("mild neurocognitive disorder due to traumatic brain injury", "mild_neurocognitive_disorder"),
    ("cognitive disorder NOS", "unspecified_neurocognitive_disorder"),
    ("HIV-associated neurocognitive disorder", "neurocognitive_disorder_due_to_another_medical_condition"),
    # Personality
    ("paranoid personality disorder", "paranoid_personality_disorder"),
    ("schizoid personality disorder", "schizoid_personality_disorder"),
    ("schizotypal personality disorder", "schizotypal_personality_disorder"),
    ("antisocial personality disorder", "antisocial_personality_disorder"),
    ("borderline personality disorder", "borderline_personality_disorder"),
    ("BPD", "borderline_personality_disorder"),
    ("histrionic personality disorder", "histrionic_personality_disorder"),
    ("narcissistic personality disorder", "narcissistic_personality_disorder"),
    ("avoidant personality disorder", "avoidant_personality_disorder"),
    ("dependent personality disorder", "dependent_personality_disorder"),
    ("obsessive-compulsive personality disorder", "obsessive_compulsive_personality_disorder"),
    ("personality disorder NOS", "unspecified_personality_disorder"),
    # Paraphilic
    ("voyeuristic disorder", "voyeuristic_disorder"),
    ("exhibitionistic disorder", "exhibitionistic_disorder"),
    ("frotteuristic disorder", "frotteuristic_disorder"),
    ("sexual masochism disorder", "sexual_masochism_disorder"),
    ("sexual sadism disorder", "sexual_sadism_disorder"),
    ("pedophilic disorder", "pedophilic_disorder"),
    ("pedophilia", "pedophilic_disorder"),
    ("fetishistic disorder", "fetishistic_disorder"),
    ("transvestic disorder", "transvestic_disorder"),
]

#: (phrase, condition id of rules/lexicon/conditions.yaml): the neurological, cerebrovascular and sleep
#: conditions the annotations enter.
CONDITION_ROWS: list[tuple[str, str]] = [
    ("stroke", "stroke"),
    ("CVA", "stroke"),
    ("cerebrovascular accident", "stroke"),
    ("lacunar infarct", "stroke"),
    ("cerebral infarction", "stroke"),
    ("cerebellar infarct", "stroke"),
    ("right MCA infarct", "stroke"),
    ("cerebral ischemic event", "stroke"),
    ("intracerebral hemorrhage", "stroke"),
    ("TIA", "transient_ischemic_attack"),
    ("transient ischemic attack", "transient_ischemic_attack"),
    ("subdural hematoma", "subdural_hematoma"),
    ("SDH", "subdural_hematoma"),
    ("cerebral contusion", "cerebral_contusion"),
    ("seizure disorder", "epilepsy"),
    ("epilepsy", "epilepsy"),
    ("normal pressure hydrocephalus", "normal_pressure_hydrocephalus"),
    ("NPH", "normal_pressure_hydrocephalus"),
    ("hydrocephalus", "hydrocephalus"),
    ("moyamoya disease", "moyamoya_disease"),
    ("Moya Moya disease", "moyamoya_disease"),
    ("cerebral small vessel disease", "cerebral_small_vessel_disease"),
    ("migraine", "migraine"),
    ("migraine headaches", "migraine"),
    ("benign paroxysmal positional vertigo", "benign_positional_vertigo"),
    ("BPPV", "benign_positional_vertigo"),
    ("vertebrobasilar insufficiency", "vertebrobasilar_insufficiency"),
    ("VBI", "vertebrobasilar_insufficiency"),
    ("Parkinson's disease", "parkinson_disease"),
    ("Huntington's disease", "huntington_disease"),
    ("multiple sclerosis", "multiple_sclerosis"),
    ("meningioma", "brain_tumor"),
    ("peripheral neuropathy", "neuropathy"),
    ("brain aneurysm", "cerebral_aneurysm"),
    ("progressive supranuclear palsy", "progressive_supranuclear_palsy"),
    ("hepatic encephalopathy", "hepatic_encephalopathy"),
]

#: Sentences where an abbreviation of a diagnosis means something else: (sentence, the rule id it must not give).
NEGATIVE_DSM_ROWS: list[tuple[str, str]] = [
    ("Echocardiogram showed a secundum ASD with a left-to-right shunt.", "autism_spectrum_disorder"),
    ("Status post ASD repair in infancy.", "autism_spectrum_disorder"),
    ("History of asthma/RAD, uses albuterol as needed.", "reactive_attachment_disorder"),
    ("Former 26-week preemie with BPD on home oxygen.", "borderline_personality_disorder"),
    ("He was injured by an IED blast during his deployment.", "intermittent_explosive_disorder"),
    ("THE PATIENT DID NOT SLEEP WELL LAST NIGHT.", "dissociative_identity_disorder"),
    ("PLAN: ADD LISINOPRIL 10 MG DAILY.", "adhd"),
    ("PATIENT WAS OUT OF BED MOST OF THE DAY.", "binge_eating_disorder"),
    ("ODD BEHAVIOR WAS NOTED BY THE STAFF.", "oppositional_defiant_disorder"),
    ("NUMBNESS OF THE LEFT HAND FOR TWO DAYS.", "neurocognitive_disorder_due_to_another_medical_condition"),
    ("Type 1 diabetes, IDD since age 9, on an insulin pump.", "intellectual_disability"),
]

#: Sentences where an abbreviation of a condition means something else: (sentence, condition id it must not give).
NEGATIVE_CONDITION_ROWS: list[tuple[str, str]] = [
    ("MS: alert and oriented times three.", "multiple_sclerosis"),
    ("MS 4 mg IV every 4 hours as needed for pain.", "multiple_sclerosis"),
    ("Mitral stenosis (MS) on echocardiogram.", "multiple_sclerosis"),
    ("History of myocardial infarction.", "stroke"),
]


def _title(phrase: str) -> str:
    return re.sub(r"(?<![\w'’])([a-z])", lambda m: m.group(1).upper(), phrase)


def _forms(phrase: str) -> list[str]:
    if phrase.isupper() or re.fullmatch(r"[A-Z][A-Za-z]*[A-Z]+(?:-[A-Z]+)?", phrase):
        return [phrase]  # an abbreviation: as written
    return list(dict.fromkeys([phrase.lower(), _title(phrase), phrase.upper()]))


def _cases(rows: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(form, rid) for phrase, rid in rows for form in _forms(phrase)]


@pytest.mark.parametrize(("phrase", "rule_id"), _cases(DSM_ROWS))
def test_a_dsm_name_in_a_diagnosis_list_names_its_disorder(phrase: str, rule_id: str) -> None:
    found = find_diagnoses(f"{phrase}.", "diagnoses")
    assert [r for _s, _e, r in found] == [rule_id], (phrase, found)
    assert found[0][0] == 0, (phrase, found)


#: Words that name a disorder only as an entry of a diagnosis list or the assessment; elsewhere a symptom.
LIST_ONLY = {"stuttering"}


@pytest.mark.parametrize(("phrase", "rule_id"), [c for c in _cases(DSM_ROWS) if c[0].lower() not in LIST_ONLY])
def test_a_dsm_name_in_a_history_sentence_names_its_disorder(phrase: str, rule_id: str) -> None:
    found = find_diagnoses(f"She has a history of {phrase} since her twenties.", "hpi")
    assert rule_id in [r for _s, _e, r in found], (phrase, found)


@pytest.mark.parametrize(("phrase", "cond_id"), _cases(CONDITION_ROWS))
def test_a_condition_name_names_its_condition(phrase: str, cond_id: str) -> None:
    ids = [m.id for m in lexicon.find_terms(f"Past medical history: {phrase}.", "condition")]
    assert ids == [cond_id], (phrase, ids)


@pytest.mark.parametrize(("sentence", "rule_id"), NEGATIVE_DSM_ROWS)
def test_an_abbreviation_that_means_something_else_names_no_disorder(sentence: str, rule_id: str) -> None:
    for section in ("hpi", "assessment"):
        assert rule_id not in [r for _s, _e, r in find_diagnoses(sentence, section)], sentence


@pytest.mark.parametrize(("sentence", "cond_id"), NEGATIVE_CONDITION_ROWS)
def test_an_abbreviation_that_means_something_else_names_no_condition(sentence: str, cond_id: str) -> None:
    assert cond_id not in [m.id for m in lexicon.find_terms(sentence, "condition")], sentence


@pytest.mark.parametrize(("sentence", "cond_id"), [
    ("The patient is a 70-year-old man seen for gait and memory problems.\nASSESSMENT: Possible normal pressure "
     "hydrocephalus.", "normal_pressure_hydrocephalus"),
    ("The patient is a 66-year-old man seen for dizziness.\nIMPRESSION: Possible VBI.",
     "vertebrobasilar_insufficiency"),
    ("The patient is a 58-year-old woman seen for dizziness.\nIMPRESSION: Suspected benign paroxysmal positional "
     "vertigo.", "benign_positional_vertigo"),
])
def test_a_suspected_neurological_condition_is_a_possible_diagnosis(sentence: str, cond_id: str) -> None:
    g = extract(sentence)
    dx = {d.id: d for d in g.diagnoses}
    assert f"dx_{cond_id}" in dx, [d.id for d in g.diagnoses]
    assert dx[f"dx_{cond_id}"].certainty == Certainty.provisional
    assert dx[f"dx_{cond_id}"].rule_id is None
    assert f"ph_{cond_id}" not in {p.id for p in g.past_history}


@pytest.mark.parametrize(("note", "rule_id", "certainty"), [
    ("ASSESSMENT: Rule out PMDD.", "premenstrual_dysphoric_disorder", Certainty.rule_out),
    ("ASSESSMENT: Possible hoarding disorder.", "hoarding_disorder", Certainty.provisional),
    ("ASSESSMENT/PLAN:\n1. Premenstrual dysphoric disorder. Start fluoxetine 20 mg daily.",
     "premenstrual_dysphoric_disorder", Certainty.confirmed),
    ("IMPRESSION: Trichotillomania.", "trichotillomania", Certainty.confirmed),
])
def test_a_diagnosis_keeps_its_certainty(note: str, rule_id: str, certainty: Certainty) -> None:
    g = extract("The patient is a 30-year-old woman.\n" + note)
    dx = {d.rule_id: d for d in g.diagnoses}
    assert rule_id in dx, [d.rule_id for d in g.diagnoses]
    assert dx[rule_id].certainty == certainty
