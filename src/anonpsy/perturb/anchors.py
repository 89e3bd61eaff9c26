"""Rare anchors: distinctive proper-noun phrases that identify a case without being a classic PHI type.

"his junior year at Pacific Lutheran", "standing on South 38th Street": a school, a street, a team, a ship. The
PHI recognizers catch names, places and institutions they know; an anchor is any other capitalised run that is not
sentence-initial, not clinical vocabulary (DSM names, symptom, condition and drug lexicons, test names, PHI safe-list)
and not a short all-caps clinical abbreviation. The same detector drives both the context scrubber and the leak
audit, so what the audit would flag is what the scrubber removes.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

_TOKEN = re.compile(r"[A-Z][A-Za-z'’.-]*[A-Za-z]|[A-Z]|\d+(?:st|nd|rd|th)\b")
_RUN = re.compile(
    r"(?<![\w])((?:[A-Z][A-Za-z'’-]*[A-Za-z]|\d+(?:st|nd|rd|th))(?:[ \t]+(?:(?:of|the|de|van|von|du|la|and|&)[ \t]+)?"
    r"(?:[A-Z][A-Za-z'’-]*[A-Za-z]|\d+(?:st|nd|rd|th)))*)"
)

# Capitalised words that carry no identifying information in clinical text.
_COMMON = frozenset(
    """
i i'm i've i'd i'll patient pt mr mrs ms dr doctor nurse md do np pa rn lcsw phd the a an he she
they his her their him them it this that these those we you my our your mother father mom dad sister
brother wife husband son daughter monday tuesday wednesday thursday friday saturday sunday today
tonight yesterday tomorrow english spanish christian catholic muslim jewish hindu buddhist
protestant no yes not none denies reports states notes per emergency department hospital clinic unit
ward floor service team room spo spo2 dsm icd dsm-5 dsm-5-tr mse hpi pmh fh sh ros cbc bmp cmp tsh
ekg ecg eeg mri ct cxr ua uds bal etoh
""".split()  # noqa: SIM905
)


@dataclass(frozen=True)
class Anchor:
    start: int
    end: int


@lru_cache(maxsize=1)
def _vocabulary() -> frozenset[str]:
    """Lower-cased clinical vocabulary: DSM names/aliases, lexicon headwords and synonyms (symptoms, drugs,
    therapies, medical conditions), tests."""
    words: set[str] = set()
    try:
        from anonpsy.rules.dsm import load_dsm

        for r in load_dsm().values():
            for s in (r.name, *r.aliases):
                words.update(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]+", s))
    except Exception:  # pragma: no cover - rules are part of the package
        pass
    try:
        from anonpsy import lexicon

        for e in lexicon.symptom_lexicon().rules:
            for s in e.surfaces():
                words.update(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]+", s))
        for m in lexicon.medication_lexicon().rules:
            for s in m.surfaces():
                words.update(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]+", s))
        for t in lexicon.therapy_lexicon().rules:
            for s in t.surfaces():
                words.update(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]+", s))
        # the medical conditions' names, eponyms included ("Graves disease", "Chiari malformation")
        for c in lexicon.condition_lexicon().rules:
            for s in c.surfaces():
                words.update(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]+", s))
    except Exception:  # pragma: no cover
        pass
    try:
        from anonpsy.rules.test_values import load_test_values

        for test in load_test_values().values():
            for s in (test.name, *test.aliases):
                words.update(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9'-]+", s))
    except Exception:  # pragma: no cover
        pass
    return frozenset(words)


@lru_cache(maxsize=1)
def _ethnicity_phrases() -> frozenset[str]:
    """Ethnicity descriptors: perturbed as a demographic attribute, not scrubbed as anchors."""
    from anonpsy import lexicon

    out: set[str] = set()
    for e in lexicon.demographic_lexicon().ethnicities:
        for s in e.surfaces():
            out.add(s.lower())
            out.add(f"non-{s.lower()}")
    return frozenset(out)


def _is_clinical_word(word: str) -> bool:
    w = word.lower().strip("'’.")
    if w in _COMMON or w in _vocabulary():
        return True
    return word.isupper() and len(word) <= 5  # SI, HI, ED, BP, PRN, CIWA: abbreviations


_WORD = re.compile(r"[\w'’-]+")
_DIGIT = re.compile(r"\d")
_LIST_MARK = re.compile(r"(?:^|\n)[ \t]*(?:[-*•]|\d+[.)])$")


def _sentence_initial(text: str, pos: int) -> bool:
    """Does the run at ``pos`` open a sentence, a line item or a quotation?"""
    tail = text[max(0, pos - 40):pos].rstrip(" \t")
    if not tail:
        return True
    # Comma-glued headers ("...Adderall.,PLAN:,  Discussed ..."): a comma right after a colon or full stop
    # is the glue between fields, and what follows it opens a sentence.
    # The glue may hold spaces on either side of the comma ("LABORATORY DATA: , Most recent labs").
    if tail[-1] == "," and tail[:-1].rstrip(" \t")[-1:] in (".", ":"):
        return True
    return tail[-1] in ".!?:;\n\"“(" or bool(_LIST_MARK.search(tail))


def find_anchors(text: str) -> list[Anchor]:
    """Spans of capitalised runs that are neither sentence-initial single words nor clinical vocabulary."""
    out: list[Anchor] = []
    counts = Counter(_WORD.findall(text.lower()))
    for m in _RUN.finditer(text):
        run = m.group(1)
        if run.upper() == run and not _DIGIT.search(run):
            continue  # all-caps runs are headings and abbreviations; PHI recognizers handle capitalised names
        words = run.split()
        content = [w for w in words if w.lower() not in ("of", "the", "de", "van", "von", "du", "la", "and", "&")]
        if all(_is_clinical_word(w) for w in content) or run.lower() in _ethnicity_phrases():
            continue
        sentence_initial = _sentence_initial(text, m.start())
        if sentence_initial and len(content) > 1 and all(_is_clinical_word(w) for w in content[1:]):
            # the opening word is capitalised for the sentence, not as a name: "Clogged AV shunt", "Worsening
            # PTSD symptoms" hold one candidate word, judged as a sentence-initial word alone
            content = content[:1]
            run = content[0]
        if sentence_initial and len(content) == 1:
            # A single capitalised word opening a sentence is an anchor only if it appears nowhere else.
            if counts[run.lower()] > 1:
                continue
            if run.lower() in _COMMON or len(run) <= 3:
                continue
            # Most sentence-initial words are ordinary words; without a dictionary, keep only ordinal/number tokens.
            if not _DIGIT.search(run):
                continue
        # Ordinary words capitalised after a colon or in headings are frequent; a single word must appear nowhere
        # else in the text.
        if len(content) == 1 and not sentence_initial and counts[content[0].lower()] > 1:
            continue
        out.append(Anchor(m.start(1), m.end(1)))
    return out
