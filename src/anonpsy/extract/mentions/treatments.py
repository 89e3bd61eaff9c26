"""Treatment mentions: drugs (with dose, route and frequency) and therapies from the lexicons.

A drug name followed by a laboratory value ("lithium level 0.8", "vitamin B12 normal") is a test, not a
treatment.
"""

from __future__ import annotations

import re
from functools import lru_cache

from anonpsy import lexicon


@lru_cache(maxsize=1)
def therapy_types() -> dict[str, str]:
    return {e.id: e.type for e in lexicon.therapy_lexicon().rules}


LAB_AFTER = re.compile(r"^\s*(?:levels?\b|level was\b|concentrations?\b|(?:was |is )?(?:normal|low|high|"
                        r"undetectable|within normal|wnl|elevated|decreased|deficien)|[<>≤≥]?\s*\d+(?:[.,]\d+)?\s*"
                        r"(?:mmol/L|mg/dL|ng/mL|ng/dL|pg/mL|ug/L|µg/L|mcg/L|U/L|IU/L|mIU/L|mEq/L|umol/L|µmol/L|g/L|"
                        r"g/dL|nmol/L|pmol/L|fL)\b)", re.I)


def medication_mentions(sentence: str) -> list[lexicon.TermMatch]:
    """Drug names of the medication lexicon that are not followed by a laboratory value."""
    return [m for m in lexicon.find_terms(sentence, "medication") if not LAB_AFTER.match(sentence[m.end:m.end + 30])]


def therapy_mentions(sentence: str) -> list[lexicon.TermMatch]:
    """Therapies, procedures and psychosocial interventions of the therapy lexicon."""
    return lexicon.find_terms(sentence, "therapy")
