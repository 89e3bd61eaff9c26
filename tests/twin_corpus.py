"""A small synthetic clinical corpus for the RecordTwin tests (written here, no real patient data).

:func:`make_corpus` builds JSONL-ready records with a specialty label: sectioned notes whose diagnoses,
symptoms, medications, therapies and tests come from the project's lexicons, with negations, a relative's
history, an allergy list, boilerplate sentences shared by many notes and one duplicated record.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

SPECIALTIES: dict[str, dict[str, list[str]]] = {
    "Psychiatry": {
        "dx": ["major depressive disorder", "generalized anxiety disorder", "bipolar I disorder", "schizophrenia",
               "panic disorder", "posttraumatic stress disorder", "alcohol use disorder", "insomnia disorder"],
        "sx": ["low mood", "anhedonia", "insomnia", "excessive worry", "auditory hallucinations", "panic attacks",
               "nightmares", "poor concentration", "racing thoughts"],
        "rx": ["sertraline", "fluoxetine", "escitalopram", "citalopram", "quetiapine", "olanzapine", "risperidone",
               "lorazepam", "clonazepam", "bupropion", "mirtazapine", "trazodone", "fluvoxamine", "paroxetine"],
        "tx": ["cognitive behavioral therapy", "dialectical behavior therapy", "supportive psychotherapy"],
        "test": ["PHQ-9 score of 17", "GAD-7 score of 12", "TSH 2.1 mIU/L"],
    },
    "Neurology": {
        "dx": ["major neurocognitive disorder", "delirium", "attention-deficit/hyperactivity disorder"],
        "sx": ["headaches", "dizziness", "memory loss", "confusion", "tremor", "numbness"],
        "rx": ["donepezil", "memantine", "gabapentin", "levetiracetam", "topiramate", "sumatriptan"],
        "tx": ["cognitive rehabilitation"],
        "test": ["MMSE 24/30", "MoCA 21/30", "blood pressure 132/84"],
    },
    "General Medicine": {
        "dx": ["tobacco use disorder", "opioid use disorder"],
        "sx": ["chest pain", "shortness of breath", "nausea", "fatigue", "abdominal pain"],
        "rx": ["metformin", "lisinopril", "atorvastatin", "aspirin", "omeprazole", "metoprolol", "levothyroxine"],
        "tx": ["motivational interviewing"],
        "test": ["hemoglobin A1c 7.2%", "creatinine 1.1 mg/dL", "heart rate 88", "sodium 139 mmol/L"],
    },
}
BOILERPLATE = ["The patient was seen and examined in the clinic today.",
               "All questions were answered to the patient's satisfaction.",
               "The patient will follow up in four weeks.",
               "The risks and benefits of the treatment were discussed with the patient.",
               "The patient tolerated the visit well and agreed with the plan."]
NAMES = ["Alder", "Birch", "Cedar", "Dunmore", "Ellery", "Fairweather", "Greaves", "Holloway"]


def _note(rng: random.Random, spec: str) -> str:
    pool = SPECIALTIES[spec]
    dx = rng.sample(pool["dx"], rng.randint(1, min(2, len(pool["dx"]))))
    sx = rng.sample(pool["sx"], rng.randint(1, 3))
    rx = rng.sample(pool["rx"], rng.randint(1, 3))
    age = rng.randint(19, 84)
    other = rng.choice([s for s in SPECIALTIES if s != spec])
    lines = [
        "CHIEF COMPLAINT:",
        f"{sx[0].capitalize()}.",
        "",
        "HISTORY OF PRESENT ILLNESS:",
        f"Mr. {rng.choice(NAMES)} is a {age}-year-old man seen on 03/{rng.randint(10, 28)}/2021 with "
        f"{' and '.join(sx)}.",
        f"He denies {rng.choice(SPECIALTIES[other]['sx'])}.",
        rng.choice(BOILERPLATE),
        f"He has been taking {rx[0]} for several months.",
        "",
        "FAMILY HISTORY:",
        f"His mother had {rng.choice(SPECIALTIES[other]['dx'])}.",
        "",
        "ALLERGIES:",
        "Penicillin.",
        "",
        "MEDICATIONS:",
        ", ".join(rx) + ".",
        "",
        "LABORATORY DATA:",
        f"{rng.choice(pool['test'])}.",
        "",
        "ASSESSMENT:",
        f"{'; '.join(dx)}.",
        "",
        "PLAN:",
        f"Continue {rx[-1]}.",
    ]
    if rng.random() < 0.6:
        lines.append(f"Start {rng.choice(pool['tx'])}.")
    lines += [rng.choice(BOILERPLATE), rng.choice(BOILERPLATE)]
    return "\n".join(lines) + "\n"


def make_corpus(n: int = 40, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` records ``{"note_id", "medical_specialty", "text"}`` (the last repeats the first record's text)."""
    rng = random.Random(seed)
    specs = list(SPECIALTIES)
    out = []
    for i in range(n - 1):
        spec = specs[i % len(specs)]
        out.append({"note_id": i + 1, "medical_specialty": spec, "text": _note(rng, spec)})
    out.append({"note_id": n, "medical_specialty": out[0]["medical_specialty"], "text": out[0]["text"]})
    return out


def write_corpus(path: Path, n: int = 40, seed: int = 0) -> Path:
    """Write :func:`make_corpus` as JSONL and return the path."""
    path.write_text("".join(json.dumps(r) + "\n" for r in make_corpus(n, seed)), encoding="utf-8")
    return path
