"""Family-history mentions: relatives and the conditions written after them."""

from __future__ import annotations

import re

from anonpsy import kinship, lexicon

#: A blood relative, with the words it carries before it ("maternal aunt", "half-brother", "great-grandmother").
MEMBER = re.compile(rf"\b((?:{kinship.modifiers()}(?:-|\s*))*{kinship.alternation(kinship.RELATIVES)})\b", re.I)
#: How a relative died of a condition: "died of", "passed away secondary to".
_DIED_OF = r"(?:died|passed away|passed) (?:of|from|by|secondary to|due to|because of)"
_FH_VERB = re.compile(r"\b(?:has|had|have|with|diagnosed with|was diagnosed with|suffer(?:s|ed)? from|"
                      rf"{_DIED_OF}|developed|"
                      r"struggle[sd]? with|treated for|was treated for|history of|"
                      r"is on \w+ for|takes \w+ for|took \w+ for)\s+", re.I)
_FH_LEAD_VERB = re.compile(r"^(?:has|had|have|with|diagnosed with|was diagnosed with|suffer(?:s|ed)? from|"
                           rf"(?:has |had |){_DIED_OF}|"
                           r"developed|struggle[sd]? with|also had|also has)\s+", re.I)
# A date or year after the condition ("Brother had CABG 8/95", "... in 1995", "in March") is when, not what: the
# condition ends before it, so that no date is carried into the label (and from there into the output).
_FH_DATE = (r"(?:(?:in|on|during|around|circa|about)\s+)?(?:\d{1,2}/\d{1,2}(?:/\d{2,4})?|\d{1,2}/\d{4}|"
            r"(?:19|20)\d{2}(?:['’]?s)?|['’]\d{2}s?|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
            r"(?:\s+\d{1,2})?(?:,?\s+\d{2,4})?)")
# An age after the condition ("died from CA at the age of 79", "stroke aged 62", "MI age 50") is when, not what,
# and would carry a relative's age into the output.
_FH_STOP = re.compile(r"[,;.()]|\s(?:who|which|after|when|while|since|until|in (?:his|her|their|a|the)|"
                      r"(?:(?:at|around|about|by|from)\s+)?(?:the\s+)?ages?\s+(?:of\s+)?\d+|aged|at \d+|as a|"
                      r"treated|never|institutionali[sz]ed|but)\b|\s" + _FH_DATE + r"(?=\W|$)", re.I)
_FH_BREAK = re.compile(r"^(?:treated|was|were|is|are|who|which|never|institutionali[sz]ed|takes|took|on|drank|drinks|"
                       r"also|in|at|after|when|while|but|not|no|incarcerated|imprisoned|died|lives|lived|works|"
                       r"worked|describes|denies|reports)\b", re.I)
_FH_NEGATIVE = re.compile(r"\b(?:no|none|not|unknown|denies|negative|noncontributory|non-contributory|never "
                          r"diagnosed)\b", re.I)
_FH_NOT_CONDITION = re.compile(r"^(?:a|an|the|his|her|their|two|three|one|been|also|some|several|children|"
                               r"custody|contact|always|never|just|really|still|often|usually|sometimes|"
                               r"frequently|ages?|aged)\b|\d", re.I)
#: A person named inside what follows the verb: an act towards someone ("had abandoned them", "has always wanted to
#: follow her around"), not a condition.
_FH_PERSON = re.compile(r"\b(?:he|she|him|her|they|them|it|you|me|us)\b", re.I)


def member_before(text: str, pos: int) -> str | None:
    found = None
    for m in MEMBER.finditer(text, 0, pos):
        found = m.group(1)
    return re.sub(r"\s+", " ", found.lower()) if found else None


#: A written abbreviation ("THC", "ADD"): kept in capitals or named by its lexicon entry, never lower-cased into a
#: word.
ABBREVIATION = re.compile(r"^[A-Z][A-Z0-9/+-]{1,5}$")
_QUOTES = re.compile(r"[\"“”]")
_EPONYM_POSSESSIVE = re.compile(r"(\w)['’]s\s+(disease|syndrome|disorder|dementia|chorea|palsy)\b")
_SPACES = re.compile(r"\s+")


def normalize_condition(label: str) -> str:
    """A family-history condition as a short lowercase label; eponyms lose the possessive ("Parkinson's disease"
    → "parkinson disease").

    >>> normalize_condition('"Bad nerves"')
    'bad nerves'
    """
    t = _QUOTES.sub("", label).strip(" .,;:")
    if ABBREVIATION.match(t):
        return t  # "ADD", "ODD": lower-cased they read as words
    t = _EPONYM_POSSESSIVE.sub(r"\1 \2", t.lower())
    return _SPACES.sub(" ", t)


_PLURAL = re.compile(r"(?<=[a-z]{3})(?<![su])s$")


def canonical_condition(label: str) -> str:
    """What a relative's condition is, whatever words name it: the lexicon entry a label is wholly written by
    ("seizures" and "seizure" are both the symptom ``seizures``), else its words in the singular.

    >>> canonical_condition("seizures") == canonical_condition("seizure")
    True
    >>> canonical_condition("Parkinson's disease") == canonical_condition("parkinson disease")
    True
    >>> canonical_condition("depression") == canonical_condition("nervous breakdown")
    False
    """
    cond = normalize_condition(label)
    for kind in ("condition", "symptom"):
        hits = lexicon.find_terms(cond, kind)
        if len(hits) == 1 and hits[0].start == 0 and hits[0].end == len(cond):
            return f"{kind}:{hits[0].id}"
    return " ".join(_PLURAL.sub("", w) for w in cond.split())


def family_conditions(sentence: str) -> list[tuple[str, str]]:
    """(member, condition) pairs of a family-history sentence, including conditions outside the lexicons
    ("Father had coronary artery disease and diabetes"). Negated statements ("no family history of suicide",
    "father unknown") give nothing.

    >>> family_conditions("Father had coronary artery disease and diabetes; no psychiatric illness known.")
    [('father', 'coronary artery disease'), ('father', 'diabetes')]
    >>> family_conditions("Mother had bipolar disorder and died of cancer at 70, treated with lithium.")
    [('mother', 'bipolar disorder'), ('mother', 'cancer')]
    """
    return [(member, cond) for member, cond, _start, _end in family_condition_spans(sentence)]


def family_condition_spans(sentence: str) -> list[tuple[str, str, int, int]]:
    """:func:`family_conditions` with the character span of each condition as written in the sentence.

    >>> family_condition_spans("Father had diabetes.")
    [('father', 'diabetes', 11, 19)]
    """
    out: list[tuple[str, str, int, int]] = []
    pos = 0
    for clause in re.split(r";|\.\s", sentence):
        base = sentence.find(clause, pos)
        pos = base + len(clause)
        for mm in MEMBER.finditer(clause):
            member = re.sub(r"\s+", " ", mm.group(1).lower())
            rest = clause[mm.end():]
            nxt = MEMBER.search(rest)
            scope = rest[: nxt.start()] if nxt else rest
            v = _FH_VERB.search(scope)
            if v is None or len(scope[: v.start()].split()) > 2:
                continue
            if _FH_NEGATIVE.search(clause[: mm.start()] + scope[: v.start()]):
                continue
            cursor = base + mm.end() + v.end()
            for k, raw in enumerate(re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", scope[v.end():])):
                at = sentence.find(raw, cursor)
                cursor = at + len(raw) if at >= 0 else cursor
                part = re.sub(r"[\"“”]", "", raw).strip()
                lead = _FH_LEAD_VERB.match(part)
                if lead:
                    part = part[lead.end():]
                elif k > 0 and _FH_BREAK.match(part):
                    break
                stop = _FH_STOP.search(part)
                cond = normalize_condition(part[: stop.start()] if stop else part)
                if not cond or len(cond) < 3 or len(cond.split()) > 6 or _FH_NOT_CONDITION.match(cond) or \
                        _FH_NEGATIVE.match(cond) or _FH_PERSON.search(cond):
                    break
                start = max(at, 0) + max(raw.find(part), 0)
                out.append((member, cond, start, max(start + 1, min(len(sentence), start + len(cond)))))
    return out


_VERB_SURFACE = re.compile(r"^(?:has|had|have|is|was|with|feels|felt|gets|got)\s+|^\w+(?:ed|ing)$|^(?:drank|drinks|"
                           r"drink|uses|smokes|cries|cried|hears|sees)$", re.I)




def condition_words(m: lexicon.TermMatch) -> str:
    """How a relative's symptom is named in family history: as written ("panic attacks"), unless the text uses a
    verb ("drank", "has panic") or an abbreviation ("THC", "ETOH") -- then the headword."""
    surface = re.sub(r"^(?:has|had|have|is|was|with)\s+", "", m.surface, flags=re.I)
    return m.headword if _VERB_SURFACE.search(surface) or ABBREVIATION.match(surface) else surface
