"""Demographic mentions: the patient's age, sex, occupation, ethnicity and family structure."""

from __future__ import annotations

import re
from functools import lru_cache

from anonpsy import caseless, kinship, lexicon
from anonpsy.extract.mentions.family import MEMBER
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
_FEMALE = (r"she|her|hers|herself|woman|female|girl|lady|mrs|ms|miss|mother of|wife|daughter|sister|pregnant|"
           r"postpartum")
_MALE = r"he|him|his|himself|man|male|boy|gentleman|mr|father of|husband|son|brother"
#: A word of either sex, read in one scan (group 1: female, group 2: male). Every word is whole and no word of
#: one sex holds or overlaps one of the other, so the scan finds every match each sex alone would find.
_SEX_WORD = caseless.compile(rf"\b(?:({_FEMALE})|({_MALE}))\b")


#: An age at some event of the past ("diagnosed when she was 5 years old", "since he was 12 years old"), not the
#: present age.
_AT_EVENT = re.compile(r"\b(?:when|since|until|after|before|as|while)\s+(?:he|she|they|the patient|patient|"
                       r"[A-Z][a-z]+)\s+(?:was|were|turned|became)\s+(?:about\s+|around\s+|approximately\s+|only\s+)?$")


def _others_age(text: str, start: int, end: int) -> bool:
    """Whether the age whose number starts at ``start`` (the age phrase ends at ``end``) is another person's:
    written after a possessive ("her 95-year-old mother"), of a relative the patient has ("has a 51-year-old
    sister"), in a list of relatives' ages ("two sons 54 and 57 years old") or told of a relative or partner ("her
    father died at age 92", "husband is 60 years old")."""
    if _POSSESSOR_BEFORE.search(text, max(0, start - 40), start) or _KIN_AGES_BEFORE.search(text, max(0, start - 60),
                                                                                              start):
        return True
    if _HAS_ONE_BEFORE.search(text, max(0, start - 20), start) and _KIN_AFTER.match(text, end):
        return True
    return _OWNER_BEFORE.search(text, max(0, start - 60), start) is not None


def extract_age(sents: list[Sentence]) -> int | None:
    """Present age from the opening lines: "34-year-old", "34 yo", "aged 7", "33 F", else "in her thirties".

    >>> from anonpsy.extract.sections import sentences
    >>> extract_age(sentences("A 34-year-old woman with low mood."))
    34
    >>> extract_age(sentences("She is a woman in her late thirties."))
    38
    >>> extract_age(sentences("Seizures began when she was 5 years old. Now she is 17 years old."))
    17
    """
    for s in sents[:12]:
        age = _stated_age(s.text)
        if age is not None:
            return age
    for s in sents[:12]:
        age = _decade_age(s.text)
        if age is not None:
            return age
    return None


@lru_cache(maxsize=4096)
def _stated_age(text: str) -> int | None:
    """The patient's age one sentence states in years ("34-year-old", "34 yo", "aged 7", "33 F"), else None
    (remembered per sentence: every read of a text asks about its opening sentences, the lead of every round-trip
    probe among them)."""
    for pat in _AGE_PATTERNS:
        for hit in pat.finditer(text):
            if 0 <= int(hit.group(1)) <= 120 and not _AT_EVENT.search(text, 0, hit.start()) \
                    and not _others_age(text, hit.start(1), hit.end()):
                return int(hit.group(1))
    return None


@lru_cache(maxsize=4096)
def _decade_age(text: str) -> int | None:
    """The age one sentence gives as a decade of life ("in her late thirties"), else None."""
    m = _DECADE.search(text)
    if not m:
        return None
    word = m.group(2).lower()
    base = _DECADES.get(word) or int(word[:2]) + 5
    mod = (m.group(1) or "").strip().lower()
    return base - 3 if mod == "early" else base + 3 if mod == "late" else base


def extract_sex(text: str) -> Sex:
    """Sex from pronouns, nouns and titles, weighting the patient-describing opening lines."""
    f, m = _sex_words(text)
    if len(text) <= 600:  # the whole text is the opening (every probe of the round trip is)
        f, m = 4 * f, 4 * m
    else:
        head_f, head_m = _sex_words(text[:600])
        f += 3 * head_f
        m += 3 * head_m
    if f == m == 0:
        return Sex.unknown
    if f > 1.5 * m:
        return Sex.female
    if m > 1.5 * f:
        return Sex.male
    return Sex.unknown


#: The one-word female and male words, and what follows the first word of each two-word one.
_FEMALE_WORDS = frozenset(w for w in _FEMALE.split("|") if " " not in w)
_MALE_WORDS = frozenset(w for w in _MALE.split("|") if " " not in w)
_RUN = re.compile(r"\w+")
_MOTHER_OF = caseless.compile(r"\bmother of\b")
_FATHER_OF = caseless.compile(r"\bfather of\b")


def _sex_words(text: str) -> tuple[int, int]:
    """How many female and male words ``text`` holds (the matches of :data:`_SEX_WORD`). In ASCII text each
    one-word match is a whole run of word characters, which a set tells faster than the pattern; the two-word
    ones ("mother of", "father of") share no word with any other and are counted apart."""
    if not text.isascii():
        found = _SEX_WORD.findall(text)
        female = sum(1 for f, _ in found if f)
        return female, len(found) - female
    runs = _RUN.findall(text.lower())
    return (sum(map(_FEMALE_WORDS.__contains__, runs)) + len(_MOTHER_OF.findall(text)),
            sum(map(_MALE_WORDS.__contains__, runs)) + len(_FATHER_OF.findall(text)))


_OCC_CUE = re.compile(r"\b(?:works?|worked|working|employed)\s+(?:as|at)\b|\bretired\b|\bunemployed\b|"
                      r"\bstudent\b|\boccupation\b|\bby profession\b|\bis an?\b", re.I)


_POSSESSED = re.compile(r"\b(?:his|her|their|my|your|our|its|patient's|the patient's)\s+$", re.I)
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
             "eleventh", "twelfth")
_SCHOOL_GRADE = re.compile(r"\b(?:(\d{1,2})(?:st|nd|rd|th)|(" + "|".join(_ORDINALS) + r"))[ -]grade", re.I)


def school_level(surface: str) -> str | None:
    """The school level a grade names ("in the 10th grade" is a high school student), else None.

    A grade is a year of age as precise as the age itself, so it is kept as its level, named as the occupation
    pools name it (grade placement by age: 1-5 elementary, 6-8 middle, 9-12 high school).

    >>> school_level("in the 10th grade"), school_level("a third grader"), school_level("sophomore")
    ('high school student', 'elementary school student', None)
    """
    m = _SCHOOL_GRADE.search(surface)
    if m is None:
        return None
    grade = int(m.group(1)) if m.group(1) else _ORDINALS.index(m.group(2).lower()) + 1
    if not 1 <= grade <= 12:
        return None
    return "elementary school student" if grade <= 5 else "middle school student" if grade <= 8 else \
        "high school student"


#: Between a relative and an occupation, the patient as a new subject ("her father is a pastor; she is a
#: nurse") or a coordinated verb of the patient's ("lives with his mother and works as a cook").
_PATIENT_SUBJECT = re.compile(r"\b(?:he|she|they|patient|client|i)\b|\band\s+(?:works?|worked|is|was|has\s+been)\b",
                              re.I)


_OTHER_PERSON = re.compile(rf"\b(?:{kinship.alternation(kinship.EVERYONE)})\b", re.I)
#: Relatives named right before a list of their ages: "two sons 54 and 57 years old", "brothers, ages 68 and 77".
_KIN_AGES_BEFORE = caseless.compile(rf"\b(?:{kinship.alternation(kinship.EVERYONE)})s?,?\s+(?:ages?\s+|aged\s+)?"
                                    r"(?:\d{1,3}(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s+))+$")
#: "has a" / "with two" right before an age, and a relative right after it: "She has a 51-year-old sister".
_HAS_ONE_BEFORE = re.compile(r"\b(?:has|had|have|with)\s+(?:a|an|one|two|three|four)\s+$", re.I)
_KIN_AFTER = re.compile(rf"\s+(?:[a-z]+\s+)?(?:{kinship.alternation(kinship.EVERYONE)})s?\b", re.I)
#: A possessive right before an age: the age of someone the patient has ("her 95-year-old mother", "Her
#: 11-year-old is having trouble"); "a 31-year-old mother of two" is the patient.
_POSSESSOR_BEFORE = caseless.compile(r"\b(?:her|his|their|my|whose|(?:the\s+)?patient's)\s+(?:[a-z]+\s+)?$")
#: Another person whose age the sentence tells, right before it: "her father died at age 92", "his wife is 60",
#: "mother, aged 80,".
_OWNER_BEFORE = caseless.compile(rf"\b(?:{kinship.alternation(kinship.EVERYONE)})(?:'s)?,?\s+(?:who\s+)?(?:is|was|"
                                 r"died|passed\s+away|passed|turned|aged?|ages|now)\b[^.;:]{0,25}$")


def _relative_owns(text: str, start: int) -> bool:
    """Whether the occupation at ``start`` is another person's: a relative, partner, friend or colleague is named
    before it in the sentence and the patient is not the subject again in between ("Mother is an 8th grade
    teacher", "his wife, who is a nurse")."""
    last = None
    for m in _OTHER_PERSON.finditer(text, 0, start):
        last = m
    return last is not None and not _PATIENT_SUBJECT.search(text, last.end(), start)


def extract_occupation(sents: list[Sentence]) -> str | None:
    """The patient's occupation from the history or social history (a lexicon term with an occupation cue).

    A school grade is read as its school level (see :func:`school_level`), so the grade is neither copied nor
    rendered as a noun ("an in the 10th grade").
    """
    for s in sents:
        if s.section not in ("hpi", "social_history", "chief_complaint"):
            continue
        # "referred by his school counselor", "her teacher's concern": a possessive names someone else's role.
        matches = [m for m in lexicon.find_terms(s.text, "occupation")
                   if not _POSSESSED.search(s.text, 0, m.start) and not _relative_owns(s.text, m.start)]
        if matches and (_OCC_CUE.search(s.text) or s.section == "social_history"):
            surface = matches[0].surface.lower()
            return school_level(surface) or surface
    return None


def extract_ethnicity(sents: list[Sentence]) -> str | None:
    """Ethnicity, race, nationality or religion written in the opening lines."""
    for s in sents[:8]:
        matches = lexicon.find_terms(s.text, "ethnicity")
        if matches:
            return matches[0].surface
    return None


#: Sections that hold no present family situation: the past histories, lists and examinations.
_NO_FAMILY_SITUATION = {"medications", "home_medications", "discharge_medications", "past_medications", "allergies",
                        "labs", "exam", "mse", "ros", "diagnoses"}


def extract_family_structure(sents: list[Sentence]) -> str | None:
    """The patient's present marital status or household ("married", "lives with her parents").

    Read outside the past histories and the lists, from terms neither negated nor someone else's ("Her mother is
    divorced"). The marital status comes first, then where and with whom the patient lives, then children, then
    relationships and the household of the upbringing ("raised by"). A marriage named only in the past ("was
    married for two years") or by a spouse ("his wife worked") gives way to a divorce, separation or widowhood
    the note states; a marital status is named by its headword ("married for 30 years" is married).

    >>> from anonpsy.extract.sections import sentences
    >>> extract_family_structure(sentences("He is married for 30 years and lives with his wife."))
    'married'
    >>> extract_family_structure(sentences("PAST MEDICAL HISTORY: Ectopic pregnancy.\\nSOCIAL HISTORY: Lives alone."))
    'lives alone'
    >>> extract_family_structure(sentences("She was married for two years. Her ex-husband died in 1980."))
    'divorced'
    """
    from anonpsy.extract.assertion.scope import classify_in_sentence
    from anonpsy.extract.sections import is_history_section

    facets = _family_facets()
    found: list[tuple[int, str]] = []  # (rank, value) in text order
    for s in sents:
        if s.section in _NO_FAMILY_SITUATION or is_history_section(s.section):
            continue
        for m in lexicon.find_terms(s.text, "family"):
            ctx = classify_in_sentence(s.text, m.start, m.end)
            if ctx.negated or ctx.hypothetical or ctx.experiencer != "patient" or _relatives_own(s.text, m.start):
                continue
            facet = facets.get(m.id, "household")
            if facet == "marital":
                weak = m.id == "family.married" and _WEAK_MARRIAGE.search(m.surface) is not None
                found.append((1 if weak else 0, m.headword))
            else:
                found.append((_FACET_RANK.get(facet, 5), m.surface.lower()))
    if not found:
        return None
    best = min(rank for rank, _ in found)
    return next(value for rank, value in found if rank == best)


#: A marriage named only in the past or through a spouse ("was married", "his wife").
_WEAK_MARRIAGE = re.compile(r"^(?:was|had been)\s|^(?:husband|wife|spouse)$", re.I)
_FACET_RANK = {"living": 0, "parental": 1, "relationship": 2, "household": 3}
#: Who a clause is about: the patient (a subject pronoun, "the patient", a title) or others ("they", a relative).
_PERSON = re.compile(rf"\b(?:(?P<patient>he|she|the patient|patient|mr|mrs|ms|miss)|"
                     rf"(?P<others>they|{MEMBER.pattern[2:-2]}))\b", re.I)


def _relatives_own(sentence: str, start: int) -> bool:
    """Is a family-structure term about others: the person named last before it is a relative or "they" ("but
    they separated", "the paternal grandparents ... are separated", "her mother's partner")?"""
    people = list(_PERSON.finditer(sentence, 0, start))
    return bool(people) and people[-1].group("others") is not None


def _family_facets() -> dict[str, str]:
    return {e.id: e.facet for e in lexicon.demographic_lexicon().family_structure}
