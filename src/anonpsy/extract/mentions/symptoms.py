"""Symptom mentions: terms of the symptom lexicon and numeric phrasings (weight change, large spending)."""

from __future__ import annotations

import re

from anonpsy import lexicon


def _quote_blanked(text: str) -> str:
    """Quotation marks replaced by spaces (offsets kept), so 'Energy is "low"' reads as 'Energy is  low '."""
    return re.sub(r"[\"“”]", " ", text)


#: Numeric phrasings the lexicon cannot express: (pattern, symptom id, headword).
_NUMERIC_SYMPTOMS: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(r"\b(?:gained|has gained|put on|gain of)\s+(?:about\s+|approximately\s+|nearly\s+|almost\s+|over\s+|"
                r"more than\s+|roughly\s+)?\d+(?:\.\d+)?\s*(?:kg|kilograms?|kilos?|lbs?|pounds)\b", re.I),
     "weight_gain", "weight gain"),
    (re.compile(r"\b(?:lost|has lost|loss of)\s+(?:about\s+|approximately\s+|nearly\s+|almost\s+|over\s+|"
                r"more than\s+|roughly\s+)?\d+(?:\.\d+)?\s*(?:kg|kilograms?|kilos?|lbs?|pounds)\b", re.I),
     "weight_loss", "weight loss"),
    # Spending of four figures or more in one go ("spending about $18,000 on power tools").
    (re.compile(r"\bspen(?:t|ding|ds)\s+(?:about\s+|nearly\s+|over\s+|more than\s+|almost\s+)?\$\s?\d{1,3}(?:,\d{3})+",
                re.I), "impulsive_spending", "impulsive spending"),
]


def symptom_mentions(text: str) -> list[lexicon.TermMatch]:
    """Symptom mentions in a sentence: lexicon terms (quotation marks ignored) and the numeric phrasings of
    weight change and large spending, in text order, non-overlapping."""
    out = list(lexicon.find_terms(_quote_blanked(text), "symptom"))
    out = [lexicon.TermMatch(m.start, m.end, m.id, m.headword, text[m.start:m.end]) for m in out]
    for pat, sid, head in _NUMERIC_SYMPTOMS:
        for m in pat.finditer(text):
            if not any(x.start < m.end() and m.start() < x.end for x in out):
                out.append(lexicon.TermMatch(m.start(), m.end(), sid, head, m.group(0)))
    return sorted(out, key=lambda x: x.start)
