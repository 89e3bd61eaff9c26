"""How far a mention's context reaches: ConText over the sentence with asides blanked, a relative's ownership of a
concept in family history, historical triggers that are only part of a temporal expression, and which
hypothetical triggers still leave a treatment in the case."""

from __future__ import annotations

import re
from collections.abc import Sequence

from anonpsy.extract.assertion.context import ConceptKind, ContextResult, classify, default_engine
from anonpsy.extract.mentions.family import MEMBER, member_before
from anonpsy.extract.mentions.time import TimeMention
from anonpsy.extract.sections import Sentence, clause_bounds
from anonpsy.graph import Sex

#: A bracket of at most this many words right after a concept is a note on it, not an aside.
_NOTE_WORDS = 4
#: A parenthetical remark or a quotation; a charting sign in brackets ("(-) SI", "HI (+)") is not a remark but a
#: ConText trigger, and stays.
_ASIDE = re.compile(r"\((?!\s*(?:[-+]|neg|pos|negative|positive)\s*\))[^()]*\)|\"[^\"]*\"|“[^”]*”", re.I)


def classify_in_sentence(sentence: str, start: int, end: int, kind: ConceptKind | None = None) -> ContextResult:
    """ConText classification of ``sentence[start:end]`` with parenthetical remarks and quotations that do not
    contain the concept blanked out, so that a trigger inside an aside ("poor self-esteem ('I've never been good
    at anything'), difficulty making decisions") does not reach across it. A bracket right after the concept
    that is a short unquoted note on it stays ("Zoloft (discontinued)", "SI (denied)")."""
    def blank(m: re.Match[str]) -> str:
        if m.start() <= start and end <= m.end():
            return m.group(0)
        note = m.group(0)
        if (note.startswith("(") and m.start() >= end and not sentence[end:m.start()].strip()
                and len(note.split()) <= _NOTE_WORDS and not re.search(r"[\"“'‘]", note)):
            return note
        return " " * len(m.group(0))

    # an aside opens with a bracket or a quotation mark: a sentence without one has nothing to blank
    plain = "(" not in sentence and '"' not in sentence and "“" not in sentence
    return classify(sentence if plain else _ASIDE.sub(blank, sentence), start, end, kind)


def family_member(s: Sentence, start: int, ctx: ContextResult) -> str | None:
    """The relative a concept belongs to: the kin word written before it ("maternal uncle"), else ConText's."""
    near = member_before(s.text[:start], start)
    if near and (ctx.family_member is None or ctx.family_member in near):
        return near
    return ctx.family_member or near


_PATIENT_SUBJECT = re.compile(r"\b(?:the patient|patient|pt)\b", re.I)
#: A relative who reports what someone else has: a reporting verb and a new subject ("Mother reported that he had
#: a problem with methamphetamine": the mother is the informant).
_REPORTS_OF_ANOTHER = re.compile(r"\b(?:reports?|reported|states?|stated|says|said|notes?|noted|describes?|described|"
                                 r"believes?|believed|thinks?|thought|feels|felt|adds|added|explains?|explained)\s+"
                                 r"(?:that\s+)?(?:he|she|they)\b", re.I)


def is_family(s: Sentence, start: int, ctx: ContextResult) -> bool:
    """A concept belongs to a relative: ConText says so, or it sits in the family-history section after a
    relative named in the same clause with no mention of the patient in between."""
    if ctx.experiencer == "family":
        return True
    if s.section != "family_history" or ctx.experiencer != "patient":
        return False
    lo, _hi = clause_bounds(s.text, start)
    last = None
    for m in MEMBER.finditer(s.text, lo, start):
        last = m
    return (last is not None and not _PATIENT_SUBJECT.search(s.text, last.end(), start)
            and not _REPORTS_OF_ANOTHER.search(s.text, last.end(), start))


def unnamed_in_family_section(s: Sentence) -> bool:
    """Does a sentence of the family-history section name neither a relative nor the patient ("Positive for
    depression and alcoholism.", "She was an average student, had learning difficulties in reading." after the
    mother's schooling)? It goes on about the family the section tells of: what it names is a relative's."""
    return (s.section == "family_history" and MEMBER.search(s.text) is None
            and _PATIENT_SUBJECT.search(s.text) is None)


#: Subject pronouns and the possessive that name one sex only ("her" may be an object, so it is not one of them).
_SEXED_SUBJECT = re.compile(r"\b(he|she|his)\b", re.I)
#: Object and possessive pronouns of each sex: the patient named after another person's pronoun ("he started her on
#: sertraline") is still the one the clause is about.
_SEXED_OBJECT = {Sex.female: re.compile(r"\b(?:her|hers|herself)\b", re.I),
                 Sex.male: re.compile(r"\b(?:him|his|himself)\b", re.I)}


def other_sex_subject(s: Sentence, start: int, sex: Sex | None) -> bool:
    """Is the concept at ``start`` about someone of the other sex than the patient? The nearest sexed subject
    pronoun before it in its clause is of the other sex ("Mother reported that he had a problem with
    methamphetamine" in a note on a girl), with neither the patient nor a pronoun of the patient's sex between
    them ("he started her on sertraline" is still the patient's drug). Unknown sex decides nothing."""
    if sex not in (Sex.female, Sex.male):
        return False
    lo, _hi = clause_bounds(s.text, start)
    last = None
    for m in _SEXED_SUBJECT.finditer(s.text, lo, start):
        last = m
    if last is None:
        return False
    other = last.group(1).lower() in (("he", "his") if sex == Sex.female else ("she",))
    if not other:
        return False
    return not (_PATIENT_SUBJECT.search(s.text, last.end(), start) or _SEXED_OBJECT[sex].search(s.text, last.end(),
                                                                                               start))


def only_time_words(sentence: str, ctx: ContextResult, times: Sequence[TimeMention]) -> bool:
    """Is every historical trigger of the sentence part of a parsed temporal expression ("three years ago")?
    Then the expression, not the trigger word, decides whether the mention is past."""
    if not set(ctx.trigger_ids) <= {"hist.bidirectional", "hist.backward"}:
        return False
    hist = [t for t in default_engine().triggers(sentence) if t.rule.category == "historical"]
    return bool(hist) and all(any(tm.start <= t.start and t.end <= tm.end for tm in times) for t in hist)


def course_of_index_stay(s: Sentence, ctx: ContextResult, index_is_admission: bool) -> bool:
    """In a discharge summary day 0 is the admission: what "resolved" during the hospital course was present
    then."""
    return (index_is_admission and s.section in ("plan", "assessment") and set(ctx.trigger_ids) <= {
        "hist.backward"} and bool(re.search(r"\bresolv", s.text, re.I)))
