"""Vocabularies fixed across the project, shared by the tests that check rules, lexicons and fixtures against them.

One copy here keeps the rule files, the symptom lexicon and the fixtures checked against the same lists.
"""

from __future__ import annotations


def _words(text: str, sep: str | None = None) -> frozenset[str]:
    """Items of a whitespace- or ``sep``-separated list written as prose (line breaks read as spaces)."""
    return frozenset(" ".join(w.split()) for w in text.split(sep) if w.strip())


CHAPTER_IDS = _words(
    """
    neurodevelopmental schizophrenia_spectrum bipolar depressive anxiety obsessive_compulsive
    trauma_stressor dissociative somatic_symptom feeding_eating elimination sleep_wake
    sexual_dysfunction gender_dysphoria disruptive_impulse_conduct substance_related neurocognitive
    personality paraphilic other
    """
)

REQUIRED_DSM_RULE_IDS = _words(
    """
    adhd autism_spectrum_disorder intellectual_disability tourettes_disorder conduct_disorder
    oppositional_defiant_disorder antisocial_personality_disorder borderline_personality_disorder
    schizophrenia schizophreniform_disorder brief_psychotic_disorder schizoaffective_disorder
    delusional_disorder substance_induced_psychotic_disorder bipolar_i_disorder bipolar_ii_disorder
    cyclothymic_disorder major_depressive_disorder persistent_depressive_disorder
    premenstrual_dysphoric_disorder generalized_anxiety_disorder panic_disorder agoraphobia
    social_anxiety_disorder specific_phobia separation_anxiety_disorder obsessive_compulsive_disorder
    posttraumatic_stress_disorder acute_stress_disorder adjustment_disorder anorexia_nervosa
    bulimia_nervosa binge_eating_disorder enuresis encopresis insomnia_disorder erectile_disorder
    female_sexual_interest_arousal_disorder female_orgasmic_disorder
    male_hypoactive_sexual_desire_disorder premature_ejaculation delayed_ejaculation
    alcohol_use_disorder cannabis_use_disorder opioid_use_disorder stimulant_use_disorder
    alcohol_withdrawal delirium major_neurocognitive_disorder mild_neurocognitive_disorder
    pedophilic_disorder gender_dysphoria functional_neurological_symptom_disorder
    somatic_symptom_disorder illness_anxiety_disorder dissociative_identity_disorder
    depersonalization_derealization_disorder
    """
)

MEDICATION_CLASS_IDS = _words(
    """
    ssri snri tca maoi atypical_antidepressant first_generation_antipsychotic
    second_generation_antipsychotic lithium anticonvulsant_mood_stabilizer anticonvulsant benzodiazepine
    z_drug_hypnotic other_hypnotic stimulant non_stimulant_adhd alpha2_agonist cholinesterase_inhibitor
    nmda_antagonist opioid_agonist_therapy opioid_antagonist alcohol_use_disorder_medication
    anticholinergic beta_blocker antihistamine pde5_inhibitor smoking_cessation hormonal thyroid
    antidiabetic antihypertensive statin analgesic opioid_analgesic antibiotic corticosteroid
    vitamin_supplement antiemetic proton_pump_inhibitor anticoagulant other_medical ketamine_esketamine contrast_agent
    """
)

CORE_SYMPTOM_HEADWORDS = _words(
    """
    depressed mood, anhedonia, irritability, elevated mood, expansive mood, grandiosity, decreased need
    for sleep, pressured speech, flight of ideas, racing thoughts, distractibility, psychomotor
    agitation, psychomotor retardation, fatigue, worthlessness, excessive guilt, hopelessness,
    diminished concentration, indecisiveness, tearfulness, mood swings, affective instability, excessive
    worry, restlessness, muscle tension, panic attack, anticipatory anxiety, avoidance, fear of negative
    evaluation, phobic fear, separation distress, agoraphobic fear, obsessions, compulsions, checking,
    contamination fear, hoarding, intrusive memories, nightmares, flashbacks, hypervigilance,
    exaggerated startle, emotional numbing, trauma-related avoidance, dissociation, depersonalization,
    derealization, dissociative amnesia, identity disturbance, persecutory delusion, grandiose delusion,
    delusion of reference, delusion of control, somatic delusion, erotomanic delusion, nihilistic
    delusion, jealous delusion, auditory hallucination, command hallucination, visual hallucination,
    tactile hallucination, olfactory hallucination, disorganized speech, disorganized behavior, thought
    broadcasting, thought insertion, catatonia, avolition, alogia, blunted affect, social withdrawal,
    paranoia, poor insight, memory impairment, disorientation, confusion, fluctuating consciousness,
    executive dysfunction, word-finding difficulty, impaired judgment, inattention, hyperactivity,
    impulsivity, social communication deficit, restricted interests, repetitive behavior, motor tic,
    vocal tic, learning difficulty, intellectual impairment, speech delay, aggression, temper outbursts,
    defiance, rule breaking, cruelty to animals, fire setting, theft, deceitfulness, property
    destruction, lack of remorse, reckless behavior, impulsive spending, hypersexuality, fear of
    abandonment, chronic emptiness, unstable relationships, insomnia, hypersomnia, early morning
    awakening, sleep disturbance, decreased appetite, increased appetite, weight loss, weight gain,
    binge eating, purging, food restriction, fear of weight gain, body image disturbance, low body
    weight, alcohol use, craving, tolerance, withdrawal symptoms, tremor, cannabis use, opioid use,
    stimulant use, cocaine use, methamphetamine use, benzodiazepine misuse, tobacco use, intoxication,
    blackouts, somatic complaints, chest pain, palpitations, shortness of breath, dizziness, headache,
    gastrointestinal complaints, chronic pain, health anxiety, functional weakness, non-epileptic
    seizures, erectile dysfunction, low sexual desire, premature ejaculation, delayed ejaculation,
    anorgasmia, premenstrual mood symptoms, enuresis, encopresis, gender incongruence, suicidal
    ideation, suicide plan, suicide attempt, passive death wish, self-harm, homicidal ideation, violent
    behavior, threats of violence
    """,
    ",",
)
