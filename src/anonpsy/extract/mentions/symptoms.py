"""Symptom mentions: terms of the symptom lexicon and numeric phrasings (weight change, large spending)."""

from __future__ import annotations

import re
from functools import lru_cache

from anonpsy import lexicon
from anonpsy.caseless import Caseless


def _quote_blanked(text: str) -> str:
    """Quotation marks replaced by spaces (offsets kept), so 'Energy is "low"' reads as 'Energy is  low '."""
    if '"' not in text and "“" not in text and "”" not in text:
        return text
    return re.sub(r"[\"“”]", " ", text)


#: Numeric phrasings the lexicon cannot express: (pattern, symptom id, headword).
_NUMERIC_SYMPTOMS: list[tuple[Caseless, str, str]] = [
    (Caseless(re.compile(r"\b(?:gained|has gained|put on|gain of)\s+(?:about\s+|approximately\s+|nearly\s+|"
                         r"almost\s+|over\s+|more than\s+|roughly\s+)?\d+(?:\.\d+)?\s*(?:kg|kilograms?|kilos?|lbs?|"
                         r"pounds)\b", re.I)),
     "weight_gain", "weight gain"),
    (Caseless(re.compile(r"\b(?:lost|has lost|loss of)\s+(?:about\s+|approximately\s+|nearly\s+|almost\s+|over\s+|"
                         r"more than\s+|roughly\s+)?\d+(?:\.\d+)?\s*(?:kg|kilograms?|kilos?|lbs?|pounds)\b", re.I)),
     "weight_loss", "weight loss"),
    # Spending of four figures or more in one go ("spending about $18,000 on power tools").
    (Caseless(re.compile(r"\bspen(?:t|ding|ds)\s+(?:about\s+|nearly\s+|over\s+|more than\s+|almost\s+)?"
                         r"\$\s?\d{1,3}(?:,\d{3})+", re.I)), "impulsive_spending", "impulsive spending"),
]


#: A modifier joined to a named symptom that shares its head ("auditory or visual hallucinations", "suicidal or
#: homicidal ideation") or a head joined to one that shares its modifier ("psychomotor agitation or
#: retardation").
_JOIN_BEFORE = re.compile(r"\b([A-Za-z-]{3,})\s*(?:,\s*|\s+)(?:and/or|or|and|nor|/)\s*$|\b([A-Za-z-]{3,})\s*/\s*$")
_JOIN_AFTER = re.compile(r"^\s*(?:,\s*|\s+)?(?:and/or|or|and|nor|/)\s*([A-Za-z-]{3,})\b")


def _elided(text: str, found: list[lexicon.TermMatch]) -> list[lexicon.TermMatch]:
    """Symptoms named by ellipsis next to a found one: the modifier or head it shares with its neighbour."""
    out: list[lexicon.TermMatch] = []
    for m in found:
        words = m.surface.split()
        head = m.headword.split()
        if len(words) == 1 and len(head) > 1 and head[-1].casefold() == words[0].casefold():
            # "Psychomotor: without agitation or retardation": the headword says what the bare head shares
            after = _JOIN_AFTER.match(text[m.end:])
            if after is not None:
                start = m.end + after.start(1)
                out += _term_for(f"{' '.join(head[:-1])} {after.group(1)}", start, start + len(after.group(1)), text)
            continue
        if len(words) < 2:
            continue
        before = _JOIN_BEFORE.search(text, 0, m.start)
        if before is not None:
            word = before.group(1) or before.group(2)
            start = before.start(1) if before.group(1) else before.start(2)
            out += _term_for(f"{word} {' '.join(words[1:])}", start, start + len(word), text)
        after = _JOIN_AFTER.match(text[m.end:])
        if after is not None:
            word = after.group(1)
            start = m.end + after.start(1)
            out += _term_for(f"{' '.join(words[:-1])} {word}", start, start + len(word), text)
    return out


def _term_for(phrase: str, start: int, end: int, text: str) -> list[lexicon.TermMatch]:
    hits = [t for t in lexicon.find_terms(phrase, "symptom") if t.start == 0 and t.end == len(phrase)]
    return [lexicon.TermMatch(start, end, hits[0].id, hits[0].headword, text[start:end])] if hits else []


_LIMIT = r"(?:excessive|binge|heavy|continuous|problematic|regular|daily)"
#: Use named by its limit alone after the substance it qualifies ("consumed alcohol occasionally, but denies any
#: excessive or binge use"): the substance is the one named before it in the sentence.
_QUALIFIED_USE = Caseless(re.compile(rf"\b({_LIMIT}(?:\s*(?:,|or|and/or|and)\s*{_LIMIT})?)\s+"
                                     r"(?:use|consumption|intake)\b(?!\s+of\b)", re.I))


@lru_cache(maxsize=1)
def _domains() -> dict[str, str]:
    return {e.id: e.domain for e in lexicon.symptom_lexicon().rules}


@lru_cache(maxsize=1)
def _takes_drugs() -> frozenset[str]:
    return frozenset(e.id for e in lexicon.symptom_lexicon().rules if e.object == "medication")


def _qualified_use(text: str, found: list[lexicon.TermMatch]) -> list[lexicon.TermMatch]:
    """Use of a substance named by its limit alone, after a mention of that substance ("drinks occasionally but
    denies excessive use"): the term the lexicon gives the limit and the substance's headword together."""
    domains = _domains()
    out: list[lexicon.TermMatch] = []
    for q in _QUALIFIED_USE.finditer(text):
        before = [m for m in found if m.end <= q.start() and domains.get(m.id or "") == "substance"]
        if not before:
            continue
        limit = re.sub(r"\s+", " ", q.group(1).lower())
        out += _term_for(f"{limit} {before[-1].headword}", q.start(), q.end(), text)
    return out


def symptom_mentions(text: str) -> list[lexicon.TermMatch]:
    """Symptom mentions in a sentence: lexicon terms (quotation marks ignored), symptoms named by ellipsis
    ("denies auditory or visual hallucinations" names both; "drinks occasionally but denies excessive use" names
    excessive alcohol use), and the numeric phrasings of weight change and
    large spending, in text order, non-overlapping."""
    return list(_symptom_mentions(text))


#: A negation word that opens a term ("no sleep", "no appetite", "not sleeping").
_NEGATOR_LEAD = re.compile(r"(?:no|not|never|without)\s+", re.I)
#: The head of a noun phrase the term's words only modify ("no sleep disturbance", "no appetite changes").
_MODIFIED_HEAD = re.compile(r"\s*(?:or\s+\w+\s+)?(?:changes?|problems?|disturbances?|difficult(?:y|ies)|issues?|"
                            r"complaints?|concerns?|deficits?|disruptions?|abnormalit(?:y|ies)|pattern|habits?)\b",
                            re.I)


def _negator_scoped(blank: str, found: list[lexicon.TermMatch]) -> list[lexicon.TermMatch]:
    """Terms that open with a negation word keep it only when they end the phrase it negates: in "No sleep
    disturbance was noted" the negation governs "sleep disturbance" (a term of its own, then read with the "no"
    before it), not the insomnia that "no sleep" names; "no appetite changes" names no loss of appetite at all."""
    out: list[lexicon.TermMatch] = []
    skip_to = -1
    for m in found:
        if m.start < skip_to:
            continue
        lead = _NEGATOR_LEAD.match(blank, m.start, m.end)
        if lead is None or _MODIFIED_HEAD.match(blank, m.end) is None:
            out.append(m)
            continue
        inner = [t for t in lexicon.find_terms(blank[lead.end():], "symptom") if t.start == 0]
        if inner and lead.end() + inner[0].end > m.end:
            t = inner[0]
            out.append(lexicon.TermMatch(lead.end(), lead.end() + t.end, t.id, t.headword, ""))
            skip_to = lead.end() + t.end
    return out


#: A bare verb of drinking, which the lexicon reads as drinking alcohol ("he drinks daily").
_DRINK_VERB = re.compile(r"drinks?|drinking|drank", re.I)
_AMOUNT = (r"(?:\d+(?:[.,/-]\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|several|few|couple|many|"
           r"multiple|about|around|approximately|roughly|up|to|or|-|of)")
#: The object of that verb when it is a drink without alcohol: an amount, maybe a container, then the drink
#: ("drinks two to four cups of coffee per day", "drank a glass of water", "drinks diet soda").
_NON_ALCOHOLIC_OBJECT = re.compile(
    rf"(?:\s+{_AMOUNT})*\s+(?:(?:cups?|mugs?|glass(?:es)?|cans?|bottles?|pots?|liters?|litres?|ounces?|oz|servings?|"
    r"pitchers?)\s+of\s+)?(?:(?:diet|iced|hot|black|decaf(?:feinated)?|caffeinated|green|herbal|sweet)\s+)?"
    r"(?:coffees?|teas?|espressos?|lattes?|sodas?|pop|colas?|cokes?|water|juices?|milk|lemonade|energy drinks?|"
    r"caffeinated (?:beverages?|drinks?))\b", re.I)


def _drinks_no_alcohol(text: str, m: lexicon.TermMatch) -> bool:
    """A bare verb of drinking whose object is a drink without alcohol ("she drinks two to four cups of coffee
    per day"): the verb names what she drinks, not alcohol use (the caffeine is its own term)."""
    return (m.id == "alcohol_use" and _DRINK_VERB.fullmatch(text[m.start:m.end]) is not None
            and _NON_ALCOHOLIC_OBJECT.match(text, m.end) is not None)


@lru_cache(maxsize=4096)
def _symptom_mentions(text: str) -> tuple[lexicon.TermMatch, ...]:
    # every read of a text asks again about the sentences it shares with another (a round-trip probe's lead)
    blank = _quote_blanked(text)
    out = _negator_scoped(blank, list(lexicon.find_terms(blank, "symptom")))
    out = [m for m in out if not _drinks_no_alcohol(blank, m)]
    out = [lexicon.TermMatch(m.start, m.end, m.id, m.headword, text[m.start:m.end]) for m in out]
    for e in [*_elided(text, out), *_qualified_use(text, out)]:
        if not any(x.start < e.end and e.start < x.end for x in out):
            out.append(e)
    for pat, sid, head in _NUMERIC_SYMPTOMS:
        for m in pat.finditer(text):
            if not any(x.start < m.end() and m.start() < x.end for x in out):
                out.append(lexicon.TermMatch(m.start(), m.end(), sid, head, m.group(0)))
    return tuple(sorted(out, key=lambda x: x.start))


_OBJECT_OF = re.compile(r"\s+of\s+(?:(?:his|her|their|the patient's|own|prescribed|home)\s+)*", re.I)
_OBJECT_SEP = re.compile(r"\s*(?:,\s*(?:and|or)?|and|or|&|plus)\s*(?:(?:his|her|their|own)\s+)*", re.I)


def symptom_object(text: str, m: lexicon.TermMatch) -> tuple[str, ...]:
    """What a symptom names after "of" as part of the fact, for an entry with ``object: medication`` in
    ``rules/lexicon/symptoms.yaml``: the generic names of the drugs listed right after it ("an overdose of
    citalopram and warfarin" -> citalopram, warfarin); empty when the entry takes none or no drug follows."""
    if m.id not in _takes_drugs():
        return ()
    lead = _OBJECT_OF.match(text, m.end)
    if lead is None:
        return ()
    drugs = {d.start: d for d in lexicon.find_terms(text, "medication")}
    out: list[str] = []
    pos = lead.end()
    while pos in drugs:
        d = drugs[pos]
        out.append(d.headword)
        sep = _OBJECT_SEP.match(text, d.end)
        if sep is None or not sep.group(0).strip(" ") or sep.end() not in drugs:
            break
        pos = sep.end()
    return tuple(dict.fromkeys(out))

