"""Words shared by both generation backends: pronouns, diagnosis names in running text, amounts of time, lists.

Example::

    >>> clinical_case("Attention-Deficit/Hyperactivity Disorder")
    'attention-deficit/hyperactivity disorder'
    >>> join(["insomnia", "poor appetite", "fatigue"])
    'insomnia, poor appetite and fatigue'
"""

from __future__ import annotations

import re

from anonpsy.graph import Sex

#: Words after a status cue within which a listed fact still lies in its scope (the shortest scope of the
#: extractor's and the fidelity judge's triggers used here is 6; lists are cut before it).
CUE_SCOPE = 5
_WORD = re.compile(r"\S+")
NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]


class Voice:
    """Pronouns and nouns for the patient."""

    def __init__(self, sex: Sex, age: int | None) -> None:
        self.sex = sex
        fem, masc = sex == Sex.female, sex == Sex.male
        self.subj = "she" if fem else "he" if masc else "they"
        self.obj = "her" if fem else "him" if masc else "them"
        self.pos = "her" if fem else "his" if masc else "their"
        self.plural = not (fem or masc)
        if age is not None and age < 13:
            self.noun = "girl" if fem else "boy" if masc else "child"
        elif age is not None and age < 18:
            self.noun = "adolescent girl" if fem else "adolescent boy" if masc else "adolescent"
        elif age is not None:
            self.noun = "woman" if fem else "man" if masc else "person"
        else:  # with no age, "man" or "woman" would assert an adult: the sex alone is told, as notes do
            self.noun = "female" if fem else "male" if masc else "person"

    def was(self) -> str:
        return "were" if self.plural else "was"

    def has(self) -> str:
        return "have" if self.plural else "has"

    def is_(self) -> str:
        return "are" if self.plural else "is"

    def verb(self, singular: str) -> str:
        """A present-tense verb agreeing with the subject pronoun: "takes" / "take"."""
        if not self.plural:
            return singular
        irregular = {"has": "have", "is": "are", "does": "do", "goes": "go"}
        if singular in irregular:
            return irregular[singular]
        if singular.endswith(("shes", "ches", "sses", "xes")):
            return singular[:-2]
        if singular.endswith("ies"):
            return singular[:-3] + "y"
        return singular[:-1] if singular.endswith("s") else singular


_EPONYM = re.compile(r"^[A-Z][a-z]+(?:'s|s')$|^(?:Lewy|Korsakoff|Wernicke|Asperger|Tourette|Down|Cushing|Graves)$")


_PART_SEP = re.compile(r"([-/])")


def clinical_case(label: str) -> str:
    """DSM-style Title Case to running-text case: 'Alcohol Use Disorder' → 'alcohol use disorder'; acronyms and
    eponyms (ADHD, Tourette's, Lewy) keep their capitals."""
    out = []
    for w in label.split(" "):
        parts = _PART_SEP.split(w)  # "Attention-Deficit/Hyperactivity": each part on its own
        for i, part in enumerate(parts):
            core = part.strip("(),")
            if core[:1].isupper() and core[1:].islower() and not _EPONYM.match(core):
                parts[i] = part.replace(core, core.lower(), 1)
        out.append("".join(parts))
    return " ".join(out)


def cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


def num(n: int) -> str:
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else str(n)


def amount(days: int) -> str:
    """Human amount of time for a positive number of days, in the coarsest sensible unit."""
    days = abs(days)
    if days >= 365:
        n, unit = round(days / 365), "year"
    elif days >= 60:
        n, unit = round(days / 30), "month"
    elif days >= 14:
        n, unit = round(days / 7), "week"
    else:
        n, unit = days, "day"
    n = max(1, n)
    return f"{num(n)} {unit}{'s' if n != 1 else ''}"


#: Symptom headwords that name an event (something that happens, once or more), not a state the patient is in:
#: told with an article and as something that happened ("he had a suicide attempt and a psychiatric
#: hospitalization", "she had a positive drug screen"), never as a state experienced or reported.
EVENT_HEADWORDS = ("suicide attempt", "aborted suicide attempt", "interrupted suicide attempt",
                   "psychiatric hospitalization", "overdose", "positive drug screen", "head injury",
                   "withdrawal seizure")


def is_event(headword: str) -> bool:
    """Does the headword (possibly with its object: "overdose of citalopram") name an event?"""
    h = headword.lower()
    return any(h == e or h.startswith(e + " ") for e in EVENT_HEADWORDS)


def with_article(name: str, headword: str | None = None) -> str:
    """``name`` with "a"/"an" when its headword (``name`` itself by default) names an event, else unchanged."""
    if not name or not is_event(headword if headword is not None else name):
        return name
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def join(items: list[str]) -> str:
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def lead_in(when: str, clause: str) -> str:
    """'When, clause' or just 'Clause' when there is no time phrase."""
    return f"{cap(when)}, {clause}" if when else cap(clause)


def strip_end(s: str) -> str:
    return s.strip().rstrip(".;,")


def word_count(s: str) -> int:
    return len(_WORD.findall(s))


def scoped_lists(items: list[str], scope: int = CUE_SCOPE) -> list[list[str]]:
    """Cut a list written after one status cue so that every item starts within ``scope`` words of the cue
    ("A, B and C": B starts after A's words). Each chunk has at least one item."""
    chunks: list[list[str]] = []
    cur: list[str] = []
    used = 0
    for item in items:
        if cur and used + 1 > scope:
            chunks.append(cur)
            cur, used = [], 0
        cur.append(item)
        used += word_count(item) + 1  # the item and its separator ("," / "and")
    if cur:
        chunks.append(cur)
    return chunks


# -- occupations ----------------------------------------------------------------------------------------------------

#: First words that make an occupation label a predicate (a state, no noun): "not yet in school", "on disability",
#: "receiving disability benefits". A one-word past participle ("retired", "unemployed", "disabled") is one too.
_PREDICATE_LEADS = frozenset({"not", "on", "off", "out", "between", "currently", "receiving", "attending", "seeking",
                              "looking", "laid", "medically", "self-employed", "semi-retired", "employed"})
#: A label that starts with a finite verb ("attends daycare") reads as its participle in an apposition.
_FINITE_VERBS = {"attends": "attending", "works": "working", "goes": "going", "lives": "living", "stays": "staying"}
_AN_EXCEPTIONS = re.compile(r"^(?:uni|use|usu|uti|eu|one|once|ur[aeio])", re.I)
_AN_SILENT_H = re.compile(r"^(?:hour|honest|honou?r|heir)", re.I)


def indefinite(phrase: str) -> str:
    """"a" or "an" for a phrase, by the sound of its first word ("an engineer", "a union worker", "an hour")."""
    w = phrase.strip().lower()
    if _AN_SILENT_H.match(w) or (w[:1] in "aeiou" and w[:1] and not _AN_EXCEPTIONS.match(w)):
        return "an"
    return "a"


def occupation_is_predicate(label: str) -> bool:
    """Whether an occupation label is a state rather than a noun ("retired", "on disability", "attends daycare")."""
    words = label.strip().lower().split()
    if not words:
        return False
    if words[0] in _FINITE_VERBS or words[0] in _PREDICATE_LEADS:
        return True
    return len(words) == 1 and words[0].endswith("ed")


def occupation_phrase(label: str) -> str:
    """An occupation as an apposition or after "is": a noun with its article ("a nurse", "an engineer", "a retired
    teacher"), a state without one ("retired", "on disability", "unemployed"), a finite verb as its participle
    ("attending daycare")."""
    label = label.strip()
    words = label.split()
    if words and words[0].lower() in _FINITE_VERBS:
        return " ".join([_FINITE_VERBS[words[0].lower()], *words[1:]])
    if occupation_is_predicate(label):
        return label
    return f"{indefinite(label)} {label}"
