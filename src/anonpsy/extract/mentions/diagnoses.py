"""Diagnosis mentions: DSM-5-TR names, aliases and abbreviations from ``rules/dsm``; never a rating scale's name."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from anonpsy.rules import dsm as dsm_rules


@lru_cache(maxsize=1)
def _dx_matcher() -> tuple[re.Pattern[str], dict[str, str]]:
    names: dict[str, str] = {}
    for rule in dsm_rules.load_dsm().values():
        for alias in [rule.name, *rule.aliases]:
            key = _dx_key(alias)
            if len(key) < 3 and not alias.isupper():
                continue
            names.setdefault(key, rule.id)
    # Spaces, hyphens and slashes in a name match any run of them ("methamphetamine-induced", line wraps). The
    # alternation is a character trie so the engine tests each position against shared prefixes once.
    pattern = re.compile(r"(?<![\w-])(" + _trie_regex(names) + r")(?![\w-])", re.I)
    return pattern, names


def _trie_regex(strings: Iterable[str]) -> str:
    """A regex matching exactly ``strings`` (longest first at each branch), built as a character trie."""
    trie: dict[str, Any] = {}
    for text in strings:
        node = trie
        for ch in text:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        ends = "" in node
        alts = [(r"[\s/-]+" if ch == " " else re.escape(ch)) + build(node[ch]) for ch in sorted(node) if ch]
        if not alts:
            return ""
        if len(alts) == 1 and not ends:
            return alts[0]
        return "(?:" + "|".join(alts) + ")" + ("?" if ends else "")

    return build(trie)


def _dx_key(s: str) -> str:
    return " ".join(re.sub(r"[\s/-]+", " ", s.strip().lower()).split())


#: A diagnosis or symptom word that names an instrument ("Geriatric Depression Scale", "PHQ depression module").
_INSTRUMENT_AFTER = re.compile(r"^[\s-]*(?:[A-Z][\w'-]*\s+){0,2}(?:scale|inventory|questionnaire|checklist|rating|"
                               r"index|subscale|screen(?:er|ing)?|measure|module|interview|schedule|severity|score|"
                               r"test|assessment tool)\b", re.I)
_INSTRUMENT_BEFORE = re.compile(r"\b(?:Yale-Brown|Hamilton|Beck|Geriatric|Children's|Edinburgh|Montgomery|Zung|"
                                r"Hospital|Patient Health|Young)\s+(?:[A-Z][\w'-]*\s+)?$")


def is_instrument_name(text: str, start: int, end: int) -> bool:
    """Is ``text[start:end]`` part of the name of a rating scale or test?

    >>> s = "Geriatric Depression Scale-15: 3."
    >>> is_instrument_name(s, 10, 20)
    True
    """
    before = text[max(0, start - 40):start]
    return bool(_INSTRUMENT_AFTER.match(text[end:end + 40]) or _INSTRUMENT_BEFORE.search(before))


def _blank_parentheticals(text: str) -> str:
    """Short parenthetical remarks replaced by spaces (offsets kept): "Stimulant (methamphetamine) use disorder"."""
    return re.sub(r"\((?:[^()]{1,30})\)", lambda m: " " * len(m.group(0)), text)


def find_diagnoses(text: str) -> list[tuple[int, int, str]]:
    """DSM diagnoses named in ``text``: (start, end, rule id). Short all-caps abbreviations (MDD, GAD) must be in
    capitals; names of rating scales ("Geriatric Depression Scale") do not count.

    >>> find_diagnoses("Stimulant (methamphetamine) use disorder, severe.")
    [(0, 40, 'stimulant_use_disorder')]
    """
    pattern, names = _dx_matcher()
    out: list[tuple[int, int, str]] = []
    seen: set[tuple[int, int]] = set()
    for source in (text, _blank_parentheticals(text)) if "(" in text else (text,):
        for m in pattern.finditer(source):
            surface = m.group(1)
            key = _dx_key(surface)
            if key not in names:
                continue
            if len(key) <= 5 and not surface.isupper() and " " not in key:
                continue
            if is_instrument_name(text, m.start(1), m.end(1)):
                continue
            if any(a < m.end(1) and m.start(1) < b for a, b in seen):
                continue
            seen.add((m.start(1), m.end(1)))
            out.append((m.start(1), m.end(1), names[key]))
    return sorted(out)
