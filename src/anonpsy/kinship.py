"""The people a note speaks of besides the patient: one relationship vocabulary (``rules/lexicon/kinship.yaml``).

Every step that must tell the patient from someone else draws its relation words from here, each choosing the
groups it needs: family-history members (blood relatives), the relative or companion who brought the patient in,
a belief held by someone other than the patient, and the relatives a generated sentence may take as its subject.
The independent fidelity scorer (:mod:`anonpsy.evaluate.cues`) keeps a list of its own on purpose: it must not
share the extractor's vocabulary.

Patterns are regular-expression alternations, longest form first, to be embedded in a caller's pattern and
matched case-insensitively::

    >>> import re
    >>> bool(re.fullmatch(alternation(("parent",)), "Mum", re.I))
    True
    >>> [m.id for m in find("Her maternal aunt and two cousins visit; she lives with a roommate.")]
    ['kin.aunt', 'kin.cousin', 'kin.roommate']
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from anonpsy.paths import rules_dir
from anonpsy.yamlio import load_yaml

Group = Literal[
    "parent", "sibling", "child", "grandparent", "extended", "collective", "partner", "companion", "carer", "work",
]
#: Blood relatives: who can carry a family history.
RELATIVES: tuple[Group, ...] = ("parent", "sibling", "child", "grandparent", "extended")
#: Everyone in a patient's family, partners and the family as a whole included.
FAMILY: tuple[Group, ...] = (*RELATIVES, "collective", "partner")
#: Everyone the vocabulary names.
EVERYONE: tuple[Group, ...] = (*FAMILY, "companion", "carer", "work")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class KinEntry(_Strict):
    """A relation with its singular surface forms (headword first) and, where not the forms plus "s", plurals."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    group: Group
    forms: tuple[str, ...] = Field(min_length=1)
    plurals: tuple[str, ...] | None = None
    note: str | None = None
    source: str | None = None

    def surfaces(self, *, plurals: bool) -> tuple[str, ...]:
        if not plurals:
            return self.forms
        more = self.plurals if self.plurals is not None else tuple(f + "s" for f in self.forms)
        return (*self.forms, *more)


class Kinship(_Strict):
    """The kinship rule file."""

    kind: Literal["kinship"]
    version: int = Field(ge=1)
    source: str | None = None
    description: str | None = None
    modifiers: tuple[str, ...] = ()
    rules: tuple[KinEntry, ...]

    def entries(self, groups: Iterable[Group] | None = None) -> tuple[KinEntry, ...]:
        want = set(groups) if groups is not None else None
        return tuple(e for e in self.rules if want is None or e.group in want)


@cache
def vocabulary() -> Kinship:
    """The installed vocabulary (read once per process)."""
    return from_doc(load_yaml((rules_dir() / "lexicon" / "kinship.yaml").read_text(encoding="utf-8")))


def from_doc(doc: dict[str, Any]) -> Kinship:
    return Kinship.model_validate(doc)


def _alt(words: Iterable[str]) -> str:
    unique = sorted(set(words), key=lambda w: (-len(w), w))
    return "(?:" + "|".join(re.escape(w).replace(r"\-", "-") for w in unique) + ")"


def alternation(groups: Iterable[Group] | None = None, *, plurals: bool = True, vocab: Kinship | None = None) -> str:
    """A non-capturing alternation of the surface forms of ``groups`` (all groups when None), longest first."""
    v = vocab or vocabulary()
    return _alt(s for e in v.entries(groups) for s in e.surfaces(plurals=plurals))


def modifiers(vocab: Kinship | None = None) -> str:
    """A non-capturing alternation of the words a relation may carry before it ("maternal", "half", "step")."""
    return _alt((vocab or vocabulary()).modifiers)


@dataclass(frozen=True, slots=True)
class KinMention:
    id: str
    group: Group
    start: int
    end: int


@lru_cache(maxsize=8)
def _finder(vocab: Kinship, groups: tuple[Group, ...] | None) -> tuple[re.Pattern[str], dict[str, KinEntry]]:
    by_form = {s.lower(): e for e in vocab.entries(groups) for s in e.surfaces(plurals=True)}
    mods = modifiers(vocab)
    pattern = re.compile(rf"\b(?:{mods}(?:-|\s*))*({_alt(by_form)})\b", re.I)
    return pattern, by_form


def find(text: str, groups: Iterable[Group] | None = None, *, vocab: Kinship | None = None) -> list[KinMention]:
    """Every relation named in ``text`` (with its modifiers), in text order."""
    pattern, by_form = _finder(vocab or vocabulary(), tuple(groups) if groups is not None else None)
    out = []
    for m in pattern.finditer(text):
        e = by_form[m.group(1).lower()]
        out.append(KinMention(e.id, e.group, m.start(), m.end()))
    return out
