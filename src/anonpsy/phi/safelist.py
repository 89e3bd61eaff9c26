"""Clinical safe-list: terms that look like names, places or organisations but are not identifiers.

The entries live in ``rules/phi/safelist.yaml`` (kind ``phi_safelist``). Medication names may also come from
the medication lexicon ``rules/lexicon/medications.yaml`` when it exists (an entry with ``from_lexicon:
medications``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from anonpsy.phi.recognizers import Safelist, SafeRule
from anonpsy.yamlio import load_yaml

# Keys of lexicon entries whose string values are names of the thing (ids use underscores for spaces).
_NAME_KEYS = frozenset({"id", "name", "names", "generic", "brand", "brands", "aliases", "synonyms", "synonym"})


def lexicon_terms(doc: Any) -> list[str]:
    """Every name-like string of a lexicon document (under id/name/brands/aliases/... keys, any depth)."""
    out: list[str] = []

    def walk(node: Any, key: str | None) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, str(k))
        elif isinstance(node, list):
            for item in node:
                walk(item, key)
        elif isinstance(node, str) and key in _NAME_KEYS:
            term = node.replace("_", " ").strip()
            if term and len(term) <= 80:
                out.append(term)

    walk(doc, None)
    return out


def load_lexicons(rules_root: Path, names: Iterable[str]) -> dict[str, list[str]]:
    """Read ``rules/lexicon/<name>.yaml`` for each name; a missing lexicon gives an empty list."""
    result: dict[str, list[str]] = {}
    for name in names:
        path = rules_root / "lexicon" / f"{name}.yaml"
        result[name] = lexicon_terms(load_yaml(path.read_text(encoding="utf-8"))) if path.is_file() else []
    return result


#: Safe-list categories whose single words are never (part of) a person name. Eponyms are left out: "Dr.
#: Parkinson" is a person.
NOT_NAME_CATEGORIES = frozenset({"medication", "scale", "clinical_word", "abbreviation"})


def clinical_words(rules: Iterable[SafeRule], lexicons: dict[str, list[str]]) -> frozenset[str]:
    """Folded single words of the safe-list entries that can never be a name (drugs, scales, abbreviations)."""
    out: set[str] = set()
    for r in rules:
        if r.category not in NOT_NAME_CATEGORIES:
            continue
        terms = list(r.terms) + (list(lexicons.get(r.from_lexicon, [])) if r.from_lexicon else [])
        for t in terms:
            words = t.replace("’", "'").lower().split()
            if len(words) == 1:
                out.add(words[0])
    return frozenset(out)


def build_safelist(rules: Iterable[SafeRule], lexicons: dict[str, list[str]]) -> Safelist:
    """Compile safe-list entries (with lexicon terms resolved) into a :class:`Safelist`."""
    return Safelist.from_rules(rules, lexicons)


__all__ = ["NOT_NAME_CATEGORIES", "build_safelist", "clinical_words", "lexicon_terms", "load_lexicons"]
