"""Treatment mentions: drugs (with dose, route and frequency) and therapies from the lexicons.

A drug name followed by a laboratory value ("lithium level 0.8", "vitamin B12 normal") is a test, not a
treatment.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import Field

from anonpsy import lexicon
from anonpsy.caseless import Caseless
from anonpsy.lexicon import IndexSpec, TermIndex, _FileHeader, _Strict, build_index, load_doc
from anonpsy.rules.tables import load_medication_classes


@lru_cache(maxsize=1)
def therapy_types() -> dict[str, str]:
    return {e.id: e.type for e in lexicon.therapy_lexicon().rules}


LAB_AFTER = re.compile(r"^\s*(?:levels?\b|level was\b|concentrations?\b|(?:was |is )?(?:normal|low|high|"
                        r"undetectable|within normal|wnl|elevated|decreased|deficien)|[<>≤≥]?\s*\d+(?:[.,]\d+)?\s*"
                        r"(?:mmol/L|mg/dL|ng/mL|ng/dL|pg/mL|ug/L|µg/L|mcg/L|mcg/mL|µg/mL|ug/mL|U/L|IU/L|mIU/L|mEq/L|umol/L|µmol/L|g/L|"
                        r"g/dL|nmol/L|pmol/L|fL)\b)", re.I)


#: Words after a drug name that make it the cause of a condition ("digoxin toxicity", "lithium overdose",
#: "acetaminophen poisoning"): the phrase tells what happened, not how the drug is taken now.
CONDITION_AFTER = re.compile(r"[\s-]*(?:toxicity|toxic\s+(?:levels?|effects?)|overdoses?|over-?use|overdosage|"
                             r"poisoning|intoxication|ingestion|misuse)\b", re.I)


def names_a_condition(sentence: str, end: int) -> bool:
    """Does the drug name ending at ``end`` name the cause of a condition ("digoxin toxicity")?"""
    return bool(CONDITION_AFTER.match(sentence, end))


def medication_mentions(sentence: str) -> list[lexicon.TermMatch]:
    """Drug names of the medication lexicon that are not followed by a laboratory value, with the bare forms
    that name a drug only as an item of a list of drugs (``list_aliases``: "It includes potassium, Pravachol")."""
    found = lexicon.list_alias_matches(sentence, lexicon.find_terms(sentence, "medication"),
                                       lexicon.medication_lexicon().rules)
    return [m for m in found if not LAB_AFTER.match(sentence[m.end:m.end + 30])]


#: The proper name of an institution that acts on the patient ("an evaluation by TIR Rehab Center", "reviewed by the
#: Betty Ford Treatment Center"): "by", then capitalised words up to the therapy's own words and an institution
#: word. The institution evaluated, wrote or referred; what it is named after was not given to the patient.
_AGENT_NAME = re.compile(r"\bby\s+(?:the\s+)?(?:[A-Z][\w&'.-]*\s+){0,4}$")
_INSTITUTION_AFTER = re.compile(r"^(?:\s+[A-Z][\w&'.-]*){0,2}?\s+(?:Center|Centre|Clinic|Hospital|Institute|Program|"
                                r"Programme|Services|Facility|Foundation|Associates|Group|Unit)\b")


def institution_agent(sentence: str, start: int, end: int) -> bool:
    """Is the term at ``sentence[start:end]`` part of the capitalised name of an institution that is the agent of
    another act ("underwent a behavioral evaluation by TIR Rehab Center")?"""
    surface = sentence[start:end]
    if not all(w[:1].isupper() for w in surface.split()):
        return False
    return bool(_AGENT_NAME.search(sentence, 0, start)) and bool(
        _INSTITUTION_AFTER.match(sentence[end:end + 60]) or re.search(
            r"\b(?:Center|Centre|Clinic|Program|Programme)$", surface))


def therapy_mentions(sentence: str) -> list[lexicon.TermMatch]:
    """Therapies, procedures and psychosocial interventions of the therapy lexicon, but not a word of the name of
    an institution that acts as the agent of something else (:func:`institution_agent`)."""
    return [m for m in lexicon.find_terms(sentence, "therapy") if not institution_agent(sentence, m.start, m.end)]


@dataclass(frozen=True)
class GroupMention:
    """A word for a whole group of drugs ("antidepressants") and the medication classes it covers."""

    start: int
    end: int
    classes: frozenset[str]


@lru_cache(maxsize=1)
def _groups() -> tuple[Caseless | None, dict[str, frozenset[str]]]:
    names: dict[str, set[str]] = {}
    for c in load_medication_classes().rules:
        for g in c.group_names:
            names.setdefault(g.lower(), set()).add(c.id)
    if not names:
        return None, {}
    alts = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return Caseless(re.compile(rf"(?<![\w-])({alts})(?![\w-])", re.I)), {k: frozenset(v) for k, v in names.items()}


@lru_cache(maxsize=1)
def _group_first_words() -> frozenset[str] | None:
    """The first words of the group names: a sentence holding none of them ("antidepressants", "mood", "sleep")
    names no group and is not searched."""
    return lexicon.first_words(_groups()[1])


def group_mentions(sentence: str) -> list[GroupMention]:
    """Words for a group of drugs ("since discontinuing antidepressants", "off all antipsychotics") with the
    classes each covers (``group_names`` in ``rules/treatments/medication_classes.yaml``)."""
    return list(_group_mentions(sentence))


@lru_cache(maxsize=4096)
def _group_mentions(sentence: str) -> tuple[GroupMention, ...]:
    """:func:`group_mentions`, remembered per sentence (every reading of a sentence asks again)."""
    rx, names = _groups()
    if rx is None or not lexicon.may_open_with(sentence, _group_first_words()):
        return ()
    return tuple(GroupMention(m.start(1), m.end(1), names[m.group(1).lower()]) for m in rx.finditer(sentence))


# ---------------------------------------------------------------------------------------------------------------
# Why a treatment was stopped

_REASON_PATTERN = r"^[a-z0-9][a-z0-9 ,;/()+'%<>=-]*$"


class AdverseEffect(_Strict):
    effect: str = Field(pattern=_REASON_PATTERN, max_length=30)
    phrases: tuple[str, ...]


class ReasonRule(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    reason: str = Field(pattern=_REASON_PATTERN, max_length=40)
    phrases: tuple[str, ...]
    effects: tuple[AdverseEffect, ...] = ()
    source: str | None = None
    note: str | None = None


class ReasonRules(_FileHeader):
    rules: tuple[ReasonRule, ...]


@dataclass(frozen=True)
class ReasonTable:
    rules: ReasonRules
    index: TermIndex

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> ReasonTable:
        rules = ReasonRules.model_validate(doc)
        specs: list[IndexSpec] = []
        for r in rules.rules:
            specs.append(IndexSpec(r.id, r.reason, r.phrases))
            for e in r.effects:
                specs.append(IndexSpec(f"{r.id}#{e.effect}", e.effect, e.phrases))
        return cls(rules, build_index(specs))

    def reason(self, texts: Sequence[str]) -> str | None:
        """The reason the texts give for stopping a treatment: "side effects (nausea)" when they name adverse
        effects (at most two), else the first reason of the rules that they state, else None."""
        hits = [m for t in texts for m in self.index.find(t)]
        effects = list(dict.fromkeys(m.headword for m in hits if "#" in m.id))
        if effects:
            rule = next(r for r in self.rules.rules if r.id == next(m.id for m in hits if "#" in m.id).split("#")[0])
            return f"{rule.reason} ({', '.join(effects[:2])})"
        found = {m.id for m in hits}
        return next((r.reason for r in self.rules.rules if r.id in found), None)


@lru_cache(maxsize=1)
def reason_table() -> ReasonTable:
    """The project's reasons for stopping a treatment (``rules/treatments/discontinuation.yaml``, cached)."""
    return ReasonTable.from_doc(load_doc("discontinuation"))


#: A sentence that speaks again of the drugs named just before ("He indicated these medications tended to ...").
ANAPHOR = re.compile(r"\b(?:these|those|this|the|both|such) (?:medications?|medicines?|drugs?|agents?|pills?|"
                     r"trials?)\b|^\W*(?:it|they|both|neither)\b|\b(?:neither|both|either) of (?:them|which|these)\b",
                     re.I)
