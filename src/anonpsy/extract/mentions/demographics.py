"""Demographic mentions: the patient's age, sex, occupation, ethnicity and family structure."""

from __future__ import annotations

import re

from anonpsy import lexicon
from anonpsy.extract.sections import Sentence
from anonpsy.graph import Sex

_AGE_PATTERNS = [
    re.compile(r"\b(\d{1,3})[- ](?:year|yr)s?[- ]old\b", re.I),
    re.compile(r"\b(\d{1,3})\s?(?:yo|y/o|y\.o\.)(?!\w)", re.I),
    re.compile(r"\b(?:aged|age:?)\s(\d{1,3})\b", re.I),
    re.compile(r"\bage\s+of\s+(\d{1,3})\b(?![^.]*\b(?:when|at the time)\b)", re.I),
    # "Marisol Q., 33 F", "Pt: K. A., 23M": age and sex written together in a header line.
    re.compile(r"(?:^|[,:]\s*)(\d{1,3})\s?(?:M|F)\b"),
]
_DECADE = re.compile(r"\bin (?:his|her|their) (early |mid-?|late )?(twenties|thirties|forties|fifties|sixties|"
                     r"seventies|eighties|nineties|teens|20s|30s|40s|50s|60s|70s|80s|90s)\b", re.I)
_DECADES = {"teens": 15, "twenties": 25, "thirties": 35, "forties": 45, "fifties": 55, "sixties": 65,
            "seventies": 75, "eighties": 85, "nineties": 95}
_FEMALE = re.compile(r"\b(she|her|hers|herself|woman|female|girl|lady|mrs|ms|miss|mother of|wife|daughter|"
                     r"sister|pregnant|postpartum)\b", re.I)
_MALE = re.compile(r"\b(he|him|his|himself|man|male|boy|gentleman|mr|father of|husband|son|brother)\b", re.I)


def extract_age(sents: list[Sentence]) -> int | None:
    """Present age from the opening lines: "34-year-old", "34 yo", "aged 7", "33 F", else "in her thirties".

    >>> from anonpsy.extract.sections import sentences
    >>> extract_age(sentences("A 34-year-old woman with low mood."))
    34
    >>> extract_age(sentences("She is a woman in her late thirties."))
    38
    """
    for s in sents[:12]:
        for pat in _AGE_PATTERNS:
            m = pat.search(s.text)
            if m and 0 <= int(m.group(1)) <= 120:
                return int(m.group(1))
    for s in sents[:12]:
        m = _DECADE.search(s.text)
        if m:
            word = m.group(2).lower()
            base = _DECADES.get(word) or int(word[:2]) + 5
            mod = (m.group(1) or "").strip().lower()
            return base - 3 if mod == "early" else base + 3 if mod == "late" else base
    return None


def extract_sex(text: str) -> Sex:
    """Sex from pronouns, nouns and titles, weighting the patient-describing opening lines."""
    f, m = len(_FEMALE.findall(text)), len(_MALE.findall(text))
    if len(text) <= 600:  # the whole text is the opening (every probe of the round trip is)
        f, m = 4 * f, 4 * m
    else:
        head = text[:600]
        f += 3 * len(_FEMALE.findall(head))
        m += 3 * len(_MALE.findall(head))
    if f == m == 0:
        return Sex.unknown
    if f > 1.5 * m:
        return Sex.female
    if m > 1.5 * f:
        return Sex.male
    return Sex.unknown


_OCC_CUE = re.compile(r"\b(?:works?|worked|working|employed)\s+(?:as|at)\b|\bretired\b|\bunemployed\b|"
                      r"\bstudent\b|\boccupation\b|\bby profession\b|\bis an?\b", re.I)


def extract_occupation(sents: list[Sentence]) -> str | None:
    """The patient's occupation from the history or social history (a lexicon term with an occupation cue)."""
    for s in sents:
        if s.section not in ("hpi", "social_history", "chief_complaint"):
            continue
        matches = lexicon.find_terms(s.text, "occupation")
        if matches and (_OCC_CUE.search(s.text) or s.section == "social_history"):
            return matches[0].surface.lower()
    return None


def extract_ethnicity(sents: list[Sentence]) -> str | None:
    """Ethnicity, race, nationality or religion written in the opening lines."""
    for s in sents[:8]:
        matches = lexicon.find_terms(s.text, "ethnicity")
        if matches:
            return matches[0].surface
    return None


def extract_family_structure(sents: list[Sentence]) -> str | None:
    """Marital status / household ("married", "lives with her parents")."""
    for s in sents:
        matches = lexicon.find_terms(s.text, "family")
        if matches:
            return matches[0].surface.lower()
    return None
