"""How far a mention's context reaches: ConText over the sentence with asides blanked, a relative's ownership of a
concept in family history, historical triggers that are only part of a temporal expression, and which
hypothetical triggers still leave a treatment in the case."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

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

#: A bracket after a concept that refers back to it as its subject ("(this agent was stopped on ...)", "(which was
#: later discontinued)", "(it was held)"): a note on the concept of its clause, however long, not an aside.
_BACK_REFERENCE = re.compile(r"\(\s*(?:(?:this|that|the)\s+(?:agent|medication|medicine|drug|treatment)|this|which|"
                             r"it)\s+(?:was|were|is|has|had|have)\b", re.I)


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
        if m.start() >= end and _BACK_REFERENCE.match(note):
            return note  # "Accutane for acne in December (this agent was stopped on ...)": a note on the concept
        return " " * len(m.group(0))

    # an aside opens with a bracket or a quotation mark: a sentence without one has nothing to blank
    plain = "(" not in sentence and '"' not in sentence and "“" not in sentence
    return classify(sentence if plain else _ASIDE.sub(blank, sentence), start, end, kind)


#: The relative named after a condition as the one who has it ("a family history of alcoholism in one of the
#: maternal uncles", "depression in both his sisters").
_IN_MEMBER = re.compile(r"\s*\bin\s+(?:(?:one|two|three|both|all|each|several|some)\s+(?:of\s+)?)?"
                        r"(?:(?:his|her|their|the\s+patient's|patient's|the|a|an)\s+)?" + MEMBER.pattern, re.I)


def family_member(s: Sentence, start: int, ctx: ContextResult, end: int | None = None) -> str | None:
    """The relative a concept belongs to: the kin word written before it ("maternal uncle"), else ConText's, else
    the relative named right after the concept ("alcoholism in one of the maternal uncles")."""
    near = member_before(s.text[:start], start)
    if near and (ctx.family_member is None or ctx.family_member in near):
        return near
    if ctx.family_member is None and near is None and end is not None:
        after = _IN_MEMBER.match(s.text, end)
        if after is not None:
            return re.sub(r"\s+", " ", after.group(1).lower())
    return ctx.family_member or near


_PATIENT_SUBJECT = re.compile(r"\b(?:the patient|patient|pt)\b", re.I)
#: A relative who reports what someone else has: a reporting verb and a new subject ("Mother reported that he had
#: a problem with methamphetamine": the mother is the informant).
_REPORTS_OF_ANOTHER = re.compile(r"\b(?:reports?|reported|states?|stated|says|said|notes?|noted|describes?|described|"
                                 r"believes?|believed|thinks?|thought|feels|felt|adds|added|explains?|explained)\s+"
                                 r"(?:that\s+)?(?:he|she|they)\b", re.I)


#: A relative who opens a clause as its subject ("His daughter uses cannabis", "and her older brother drinks
#: heavily"): at the start of the sentence or of a clause, with at most a possessive or an article before, and a
#: word after that is no preposition, conjunction or relative pronoun, nor a verb of the informant ("Parents deny
#: aggression": the plural forms the pseudo-triggers of ConText leave out).
_KIN_SUBJECT = re.compile(
    r"(?:^|[;:,]|\b(?:and|but|while|whereas|although|though)\b)\s*"
    r"(?:(?:his|her|their|my|the\s+patient's|patient's|the|a|an|one|both|one\s+of\s+(?:his|her|their))\s+)?"
    rf"{MEMBER.pattern}"
    r"(?=\s+(?:(?:also|reportedly|apparently|currently|still|now|often|frequently|regularly|occasionally|too)\s+)*"
    r"(?!(?:and|or|who|whom|whose|which|that|of|in|at|on|with|to|for|from|by|as|deny|denies|denied|"
    r"report|state|say|describe|note|endorse|believe|think|feel|worry|are\s+concerned)\b)[a-z])", re.I)
#: A new subject after the relative's clause: the patient named, or a clause that opens with a pronoun or a noun
#: phrase of its own ("and he smokes", ", and the exam showed", "; we discussed").
_NEW_SUBJECT = re.compile(r"\b(?:the\s+patient|patient|pt|I|we)\b|(?:[;:,]|\b(?:and|but|while|whereas|although|"
                          r"though)\b)\s*(?:the|a|an|this|these|there|it|they|his|her|their|he|she)\b", re.I)
_SUBJECT_PRONOUN = re.compile(r"\b(he|she|they)\b", re.I)


def relative_subject(s: Sentence, start: int, sex: Sex | None = None) -> str | None:
    """The relative who is the grammatical subject of what the concept at ``start`` says ("His daughter uses
    cannabis", "Her brother drinks heavily and smokes marijuana"), in any section: the last relative before the
    concept in its sentence that opens a clause as its subject, with no new subject between them (the patient
    named, a clause of its own, or a subject pronoun that may be the patient's: of the patient's sex, or any when
    the sex is not known). A relative who tells, brings or calls is the informant (a pseudo-trigger of ConText's,
    "Mother reports", "Mother was not able to tell me"), not the one the clause is about."""
    text = s.text
    last = None
    for subject in _kin_subjects(text):
        if subject[0] > start:
            break
        last = subject
    if last is None:
        return None
    end, member, informant = last
    if informant:
        return None  # the informant ("Mother reports", "Mother was not able to tell me")
    between = text[end:start]
    if _NEW_SUBJECT.search(between):
        return None
    for p in _SUBJECT_PRONOUN.finditer(between):
        word = p.group(1).lower()
        if sex not in (Sex.female, Sex.male) or word == "they" or word == ("she" if sex == Sex.female else "he"):
            return None
    return member


@lru_cache(maxsize=4096)
def _kin_subjects(text: str) -> tuple[tuple[int, str, bool], ...]:
    """Every relative who opens a clause of the sentence as its subject (:data:`_KIN_SUBJECT`), in order: where
    the match ends, the relative's words, and whether a pseudo-trigger of ConText holds the kin word (an
    informant). One scan per sentence: every mention of the sentence asks, and the round trip reads it again."""
    out: list[tuple[int, str, bool]] = []
    found = None
    for m in _KIN_SUBJECT.finditer(text):
        if found is None:
            found = [t for t in default_engine().triggers(text) if t.rule.category == "pseudo"]
        kin = m.start(1)
        informant = any(t.start <= kin < t.end for t in found)
        out.append((m.end(), re.sub(r"\s+", " ", m.group(1).lower()), informant))
    return tuple(out)


def is_family(s: Sentence, start: int, ctx: ContextResult, sex: Sex | None = None) -> bool:
    """A concept belongs to a relative: ConText says so, a relative is the subject of its clause
    (:func:`relative_subject`), or it sits in the family-history section after a relative named in the same clause
    with no mention of the patient in between."""
    if ctx.experiencer == "family":
        return True
    if ctx.experiencer == "patient" and relative_subject(s, start, sex) is not None:
        return True
    if s.section != "family_history" or ctx.experiencer != "patient":
        return False
    lo, _hi = clause_bounds(s.text, start)
    last = None
    for m in MEMBER.finditer(s.text, lo, start):
        last = m
    if last is None and lo > 0 and _PRONOUN_OPENS.match(s.text, lo):
        # "Her mother is in a nursing home; she had a stroke": in the family history, a clause whose subject is
        # a bare pronoun goes on about the relative of the clause before it.
        for m in MEMBER.finditer(s.text, 0, lo):
            last = m
    return (last is not None and not _PATIENT_SUBJECT.search(s.text, last.end(), start)
            and not _REPORTS_OF_ANOTHER.search(s.text, last.end(), start))


#: A clause that opens with a subject pronoun (after a conjunction, if any): "; she had", "but he has".
_PRONOUN_OPENS = re.compile(r"\s*(?:(?:and|but|while|whereas|although|though)\s+)?(?:he|she|they)\b", re.I)


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
