"""The ICD-10-CM fallback condition vocabulary (``rules/lexicon/general_conditions.yaml``): what it reads, what it
leaves to the project's own lexicons, and that a fallback condition keeps its status through extraction and
generation."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from anonpsy import lexicon
from anonpsy.extract import extract
from anonpsy.extract.mentions.diagnoses import find_diagnoses
from anonpsy.extract.mentions.general_conditions import (
    PROCEDURE_AFTER,
    TEST_AFTER,
    find_general_conditions,
    general_vocabulary,
    plural_key,
)
from anonpsy.pipeline import deid_text

_PIECES = st.sampled_from([
    "limbic encephalitis", "transverse myelitis", "myelitis", "post-traumatic headaches", "bronchiectasis",
    "HIV antibody", "hepatitis panel", "inguinal hernia repair", "major depressive disorder", "sertraline",
    "hypertension", "headache", "stroke", "encephalitis", "Charcot-Marie-Tooth disease", "no", "history of",
    "possible", "his mother had", ",", ".", "and", "cerebral ischemia", "vascular dementia", "CBT", "pain",
    "juvenile form", "myelitisx", "anti-myelitis", "commotio cerebri",
])
_SECTIONS = st.sampled_from(["hpi", "past_medical", "assessment", "diagnoses", "ros", "exam", "family_history"])


@given(st.lists(_PIECES, min_size=1, max_size=10), _SECTIONS)
@example(["inguinal hernia repair"], "past_medical")
@example(["myelitisx", "anti-myelitis"], "hpi")
@example(["HIV antibody", "hepatitis panel"], "diagnoses")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_fallback_hits_are_whole_words_and_leave_project_terms_alone(pieces: list[str], section: str) -> None:
    """Property: a fallback condition starts and ends on word boundaries, never overlaps a DSM diagnosis, a
    medication or a therapy, holds a curated condition or symptom only when it is longer than it, is never a
    test's or a procedure's name, and is read only in a section its block allows."""
    text = " ".join(pieces)
    vocab = general_vocabulary()
    word = re.compile(r"\w")
    fixed = [(a, b) for a, b, _r in find_diagnoses(text, section)]
    fixed += [(m.start, m.end) for k in ("medication", "therapy") for m in lexicon.find_terms(text, k)]  # type: ignore[arg-type]
    held = [(m.start, m.end) for k in ("condition", "symptom") for m in lexicon.find_terms(text, k)]  # type: ignore[arg-type]
    for h in find_general_conditions(text, section):
        assert h.start == 0 or not word.match(text[h.start - 1])
        assert h.end == len(text) or not word.match(text[h.end])
        assert not any(a < h.end and h.start < b for a, b in fixed)
        for a, b in held:
            if a < h.end and h.start < b:
                assert h.start <= a and b <= h.end and b - a < h.end - h.start
        assert not TEST_AFTER.match(text[h.end:h.end + 30]) and not PROCEDURE_AFTER.match(text[h.end:h.end + 30])
        assert vocab.allowed(h.condition, section)


@given(st.from_regex(r"[a-z]{2,8}( [a-z]{2,8}){0,2}", fullmatch=True))
@example("post traumatic headache")
@example("encephalitis")
def test_plural_key_adds_only_a_final_s(key: str) -> None:
    """Property: the plural form of a key differs from it at most by a final "s" on its last word."""
    p = plural_key(key)
    assert p == key or (p == key + "s" and not key.endswith("s"))


def _graph(text: str) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    g = extract(text, case_id="t")
    return ({p.condition: p.status.value for p in g.past_history},
            {d.label: d.certainty.value for d in g.diagnoses},
            {f.condition: f.member for f in g.family_history})


NOTE = ("HISTORY OF PRESENT ILLNESS: A 52-year-old man seen for memory loss. His mother had transverse myelitis. "
        "He has had post-traumatic headaches since a fall in 2010.\n"
        "PAST MEDICAL HISTORY: Bronchiectasis. No history of myelitis.\n"
        "IMPRESSION: Possible limbic encephalitis.\n")


def test_fallback_conditions_keep_their_status() -> None:
    """Family, possible, denied and the patient's own history, each named as the note wrote it; two forms of one
    ICD-10-CM category stay two conditions; a listed medical condition of the past history is pre-existing, never
    told as chronic."""
    past, dx, fam = _graph(NOTE)
    assert past == {"post-traumatic headaches": "chronic", "bronchiectasis": "pre-existing", "myelitis": "denied"}
    assert dx == {"limbic encephalitis": "provisional"}
    assert fam == {"transverse myelitis": "mother"}


@pytest.mark.parametrize("text", [
    "PAST MEDICAL HISTORY: HIV antibody negative. Hepatitis panel pending.\n",
    "REVIEW OF SYSTEMS: Negative for myelitis, meningitis or psoriasis.\n",
    "HISTORY OF PRESENT ILLNESS: She has psoriasis and an inguinal hernia repair in 2001.\n",
    "FAMILY HISTORY: Mother with Charcot-Marie-Tooth disease.\n",
])
def test_fallback_invents_no_condition_of_the_patient(text: str) -> None:
    """A test's name, a review of systems, a listed-only block outside the history, a procedure and a relative's
    illness give the patient no condition."""
    past, dx, _fam = _graph(text)
    assert not [c for c, s in past.items() if s != "denied"] and not dx


_FORMS = ["limbic encephalitis", "transverse myelitis", "cerebral ischemia", "Charcot-Marie-Tooth disease",
          "Friedreich ataxia", "blepharospasm", "commotio cerebri", "acute disseminated encephalomyelitis"]


@given(st.sampled_from(_FORMS), st.sampled_from(["IMPRESSION", "PAST MEDICAL HISTORY"]), st.integers(0, 3))
@example("limbic encephalitis", "IMPRESSION", 0)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_fallback_condition_survives_deid(form: str, header: str, seed: int) -> None:
    """Property: a fallback condition the note asserts is named in the de-identified text, which passes the
    perturbation check, the round trip and the leak audit."""
    text = ("HISTORY OF PRESENT ILLNESS: A 61-year-old woman is seen for follow-up of memory complaints.\n"
            f"{header}: {form[0].upper() + form[1:]}.\n")
    r = deid_text(text, seed=seed, case_id="t")
    assert not r.audit.violations and r.leaks.clean
    assert form.lower() in r.text.lower()
