"""DSM diagnosis labels in canonical form, so that diagnoses can be compared across texts.

Rules live in ``rules/canonical/synonyms.yaml`` (kind ``canonical``). :func:`canonicalize` of a label:

1. normalizes it with :func:`anonpsy.rules.dsm.normalize_label` (case-folded, punctuation to spaces); a
   variant with parenthetical remarks removed is tried after the label as written;
2. removes trailing specifiers step by step -- at each step the longest trailing word run that is one
   specifier pattern ("in early remission", "with psychotic features", "recurrent", "severe",
   "current episode manic", ...) -- then leading qualifiers ("history of", "probable", "chronic", ...);
3. at every step, in that order, looks the form up among the synonyms (``conversion disorder`` ->
   ``functional_neurological_symptom_disorder``, ``methamphetamine use disorder`` ->
   ``stimulant_use_disorder``, ``manic depression`` -> ``bipolar_i_disorder``, ...);
4. failing that, asks :func:`anonpsy.rules.dsm.match_label` (exact names, ids and aliases, then fuzzy).

The result carries the DSM rule id (or None), the canonical text (the DSM rule name when one matched, else
the fully stripped label) and the specifiers removed. Two labels name the same diagnosis when their
:attr:`Canonical.key` is equal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from anonpsy.errors import R100_RULE_SCHEMA, R101_RULE_YAML, R104_DUPLICATE_ID, AnonpsyError
from anonpsy.paths import rules_dir
from anonpsy.rules.dsm import load_dsm, match_label, normalize_label
from anonpsy.yamlio import load_yaml

RULE_FILE = Path("canonical") / "synonyms.yaml"
_PARENS_RE = re.compile(r"\([^()]*\)")
_PERIPARTUM_RE = re.compile(r"\b(?:peri ?partum|post ?partum|peri ?natal|post ?natal|puerperal)\b")
PERIPARTUM_SPECIFIER = "with peripartum onset"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SynonymEntry(_Model):
    """Every synonym names the DSM rule ``id``."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    synonyms: tuple[str, ...] = Field(min_length=1)
    source: str | None = None
    note: str | None = None


class CanonicalDoc(_Model):
    """The whole ``canonical`` rule file."""

    kind: Literal["canonical"]
    version: int = Field(ge=1)
    source: str | None = None
    description: str | None = None
    specifiers: tuple[str, ...] = ()
    qualifiers: tuple[str, ...] = ()
    rules: tuple[SynonymEntry, ...] = ()


@dataclass(frozen=True)
class CanonicalTable:
    """Compiled canonicalization rules."""

    synonyms: Mapping[str, str]
    specifier_re: re.Pattern[str] | None
    qualifier_re: re.Pattern[str] | None


@dataclass(frozen=True)
class Canonical:
    """A diagnosis label in canonical form."""

    label: str
    text: str
    rule_id: str | None
    specifiers: tuple[str, ...]
    via: Literal["synonym", "dsm", "none"]

    @property
    def key(self) -> str:
        """Comparison key: the DSM rule id, else the stripped label with spaces as underscores."""
        return self.rule_id if self.rule_id is not None else self.text.replace(" ", "_")


def build_table(doc: Mapping[str, Any]) -> CanonicalTable:
    """Compile a parsed rule file. Raises ValueError on an invalid file, a bad pattern or a synonym that
    names two rules."""
    try:
        parsed = CanonicalDoc.model_validate(doc)
    except ValidationError as err:
        raise ValueError(f"canonical rule file is invalid ({err.error_count()} error(s))") from None
    index: dict[str, str] = {}
    for entry in parsed.rules:
        for syn in (*entry.synonyms, entry.id.replace("_", " ")):
            key = normalize_label(syn)
            prev = index.get(key)
            if prev is not None and prev != entry.id:
                raise ValueError(f"synonym {key!r} names both {prev} and {entry.id}; keep it on one rule")
            index[key] = entry.id
    try:
        spec = re.compile("|".join(f"(?:{p})" for p in parsed.specifiers)) if parsed.specifiers else None
        qual = (
            re.compile(r"^(?:" + "|".join(re.escape(normalize_label(q)) for q in parsed.qualifiers) + r")\s+")
            if parsed.qualifiers
            else None
        )
    except re.error as err:
        raise ValueError(f"a specifier pattern does not compile: {err.msg}") from None
    return CanonicalTable(synonyms=index, specifier_re=spec, qualifier_re=qual)


@lru_cache(maxsize=4)
def _load_table(root: Path) -> CanonicalTable:
    path = root / RULE_FILE
    location = f"rules/{RULE_FILE.as_posix()}"
    try:
        doc = load_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError:
        raise AnonpsyError(R101_RULE_YAML, "malformed YAML; fix the syntax", location) from None
    try:
        return build_table(doc)
    except ValueError as err:
        code = R104_DUPLICATE_ID if "names both" in str(err) else R100_RULE_SCHEMA
        raise AnonpsyError(code, str(err), location) from None


def load_table(rules_root: Path | None = None) -> CanonicalTable:
    """The canonicalization rules of ``rules_root`` (default: the project rules directory), cached."""
    root = (Path(rules_root) if rules_root is not None else rules_dir()).resolve()
    return _load_table(root)


def strip_forms(normalized: str, table: CanonicalTable) -> tuple[list[str], list[str]]:
    """Successive forms of a normalized label with trailing specifiers, then leading qualifiers, removed.

    Returns (forms, removed specifier phrases in the order removed). The first word always stays.
    """
    forms = [normalized]
    removed: list[str] = []
    words = normalized.split()
    if table.specifier_re is not None:
        changed = True
        while changed and len(words) > 1:
            changed = False
            for k in range(1, len(words)):
                suffix = " ".join(words[k:])
                if table.specifier_re.fullmatch(suffix):
                    removed.append(suffix)
                    words = words[:k]
                    forms.append(" ".join(words))
                    changed = True
                    break
    cur = " ".join(words)
    if table.qualifier_re is not None:
        while True:
            m = table.qualifier_re.match(cur)
            if not m or m.end() >= len(cur):
                break
            cur = cur[m.end() :].strip()
            forms.append(cur)
    return forms, removed


def canonicalize(
    label: str, table: CanonicalTable | None = None, rules_root: Path | None = None
) -> Canonical:
    """The canonical form of one diagnosis label (see the module docstring for the steps)."""
    tbl = table if table is not None else load_table(rules_root)
    variants = [label]
    no_parens = _PARENS_RE.sub(" ", label)
    if no_parens != label:
        variants.append(no_parens)
    first_forms: list[str] | None = None
    first_removed: list[str] = []
    for variant in variants:
        forms, removed = strip_forms(normalize_label(variant), tbl)
        if first_forms is None or (not first_removed and removed):
            first_forms, first_removed = forms, removed
        for form in forms:
            rid = tbl.synonyms.get(form)
            if rid is not None:
                text = _rule_text(rid, form, rules_root)
                return Canonical(label, text, rid, _specs(label, removed), "synonym")
    assert first_forms is not None
    rule = match_label(label, rules_root) if label.strip() else None
    if rule is not None:
        return Canonical(label, _name_text(rule.name), rule.id, _specs(label, first_removed), "dsm")
    return Canonical(label, first_forms[-1], None, _specs(label, first_removed), "none")


def _specs(label: str, removed: list[str]) -> tuple[str, ...]:
    """Removed specifiers; a label naming a peripartum presentation also yields "with peripartum onset"."""
    out = list(removed)
    if _PERIPARTUM_RE.search(normalize_label(label)) and not any(
        "peripartum onset" in s or "postpartum onset" in s for s in out
    ):
        out.append(PERIPARTUM_SPECIFIER)
    return tuple(out)


def _name_text(name: str) -> str:
    return normalize_label(_PARENS_RE.sub(" ", name))


def _rule_text(rule_id: str, fallback: str, rules_root: Path | None) -> str:
    rule = load_dsm(rules_root).get(rule_id)
    return _name_text(rule.name) if rule is not None else fallback


def same_diagnosis(a: str, b: str, table: CanonicalTable | None = None) -> bool:
    """Whether two labels name the same diagnosis after canonicalization."""
    return canonicalize(a, table).key == canonicalize(b, table).key
