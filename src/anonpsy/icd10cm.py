"""ICD-10-CM as a vocabulary of problems and findings: categories with their block and chapter, and the surface
forms a clinical note writes them with.

The tabular list (CMS/NCHS, public domain) is read from the XML file that the ``simple-icd-10-cm`` package ships
(MIT; its data file is the CMS release itself), with ElementTree: the package's own index is not needed and its
import is slow. A **concept** is an ICD-10-CM *category* (three characters: ``E11`` "Type 2 diabetes mellitus"); its
parents are the *block* (``E08-E13`` "Diabetes mellitus") and the *chapter* ("Endocrine, nutritional and metabolic
diseases"). Subcategories are not concepts of their own: laterality, encounter and complication details are what
makes a record rare, and their descriptions rarely occur verbatim in notes. Their descriptions and inclusion terms
are surface forms of their category.

Official descriptions are long ("Calculus of gallbladder without cholecystitis without obstruction"). Surface forms
are built from every description and inclusion term of a category and its subcategories by the rules of
``rules/twin/icd10cm.yaml``:

1. "NOS" dropped; nonessential modifiers in parentheses ("Essential (primary) hypertension") written with and
   without each of them (ICD-10-CM's own convention: they may be present or absent without changing the code);
2. the *head phrase*: the text before the first ``split_on`` marker (", " " with " " without " " due to " …) and
   without the ``drop_words`` (unspecified, other, right, left, …);
3. forms with fewer than ``min_chars`` letters, longer than ``max_words`` words, or in ``stop_surfaces`` (a generic
   word such as "disease" or "pain" on its own) are not surfaces.

A form written by several categories goes to the one that names it most directly: a curated synonym of
``synonyms`` first, then an inclusion term marked "NOS" (ICD-10-CM's default for an unqualified mention: "diabetes
NOS" is E11), then a category's own description, then a subcategory's description or inclusion term, then a head
phrase; a tie at the same rank leaves the form out (it names no category on its own). Every decision is data: the
rules file says which chapters are read and as what entity type, and which words are dropped.
"""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from anonpsy.errors import E100_MISSING_FILE, AnonpsyError

#: Ranks of a surface form's evidence (lower wins).
RANK_SYNONYM, RANK_NOS, RANK_TITLE, RANK_SUB, RANK_HEAD = 0, 1, 2, 3, 4
MAX_PAREN_FORMS = 8


@dataclass(frozen=True)
class Category:
    """One ICD-10-CM category with the texts of its subtree."""

    code: str
    description: str
    block: str
    chapter: str
    inclusions: tuple[str, ...]  # its own inclusion terms and includes notes
    sub_texts: tuple[str, ...]  # descriptions and inclusion terms of its subcategories


@dataclass(frozen=True)
class Tabular:
    """The parts of the tabular list the vocabulary uses."""

    version: str
    chapters: dict[str, str]  # chapter number -> title (without the code range)
    blocks: dict[str, tuple[str, str]]  # block id -> (title, chapter)
    categories: dict[str, Category]


def tabular_path() -> Path:
    """The tabular-list XML shipped by ``simple-icd-10-cm`` (a core dependency: the condition vocabulary of
    :mod:`anonpsy.extract.mentions.general_conditions` and the RecordTwin vocabulary both read it)."""
    import importlib.util

    spec = importlib.util.find_spec("simple_icd_10_cm")
    found = sorted((Path(spec.origin).parent / "data").glob("icd10c*-tabular*.xml")) \
        if spec is not None and spec.origin is not None else []
    if not found:
        raise AnonpsyError(E100_MISSING_FILE, "the ICD-10-CM tabular list of simple-icd-10-cm is not installed; "
                                              "reinstall anonpsy with its dependencies")
    return found[-1]


def _text(el: ET.Element | None) -> str:
    return " ".join((el.text or "").split()) if el is not None else ""


def _notes(diag: ET.Element, tags: Iterable[str]) -> list[str]:
    out: list[str] = []
    for tag in tags:
        for holder in diag.findall(tag):
            out += [_text(n) for n in holder.findall("note") if _text(n)]
    return out


def _strip_range(title: str) -> str:
    return re.sub(r"\s*\([A-Z0-9]{3}(?:-[A-Z0-9]{3})?\)\s*$", "", title).strip()


@lru_cache(maxsize=2)
def load_tabular(path: Path | None = None) -> Tabular:
    """Parse the tabular list (about two seconds; cached per process)."""
    root = ET.parse(path or tabular_path()).getroot()
    chapters: dict[str, str] = {}
    blocks: dict[str, tuple[str, str]] = {}
    cats: dict[str, Category] = {}
    for ch in root.findall("chapter"):
        num = _text(ch.find("name"))
        chapters[num] = _strip_range(_text(ch.find("desc")))
        for sec in ch.findall("section"):
            bid = sec.get("id") or ""
            blocks[bid] = (_strip_range(_text(sec.find("desc"))), num)
            for diag in sec.findall("diag"):
                code = _text(diag.find("name"))
                own = _notes(diag, ("inclusionTerm", "includes"))
                sub: list[str] = []
                for d in diag.iter("diag"):
                    if d is diag:
                        continue
                    sub.append(_text(d.find("desc")))
                    sub += _notes(d, ("inclusionTerm", "includes"))
                cats[code] = Category(code, _text(diag.find("desc")), bid, num, tuple(own), tuple(s for s in sub if s))
    version = _text(root.find("version"))
    return Tabular(version, chapters, blocks, cats)


# -------------------------------------------------------------------------------------------------------------
# Surface forms


@dataclass(frozen=True)
class SurfaceRules:
    """The surface-form rules of ``rules/twin/icd10cm.yaml``."""

    split_on: tuple[str, ...]
    drop_words: frozenset[str]
    drop_phrases: tuple[str, ...]
    stop_surfaces: frozenset[str]
    min_chars: int = 4
    max_words: int = 6
    min_head_words: int = 2

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> SurfaceRules:
        s = doc.get("surfaces", {}) or {}
        return cls(tuple(s.get("split_on", ())), frozenset(w.lower() for w in s.get("drop_words", ())),
                   tuple(p.lower() for p in s.get("drop_phrases", ())),
                   frozenset(w.lower() for w in s.get("stop_surfaces", ())), int(s.get("min_chars", 4)),
                   int(s.get("max_words", 6)), int(s.get("min_head_words", 2)))


_PAREN = re.compile(r"\s*\(([^()]*)\)")
_SPACES = re.compile(r"\s+")


def _norm(text: str) -> str:
    t = _SPACES.sub(" ", text.replace("\u2019", "'")).strip(" ,;:.").lower()
    return t


def paren_forms(text: str) -> list[str]:
    """``text`` with each parenthesised nonessential modifier present or absent (at most ``MAX_PAREN_FORMS``)."""
    parts = _PAREN.split(text)
    plain, mods = parts[0::2], parts[1::2]
    if not mods:
        return [text]
    out: list[str] = []
    for keep in itertools.product((False, True), repeat=min(len(mods), 3)):
        buf = [plain[0]]
        for i, mod in enumerate(mods):
            on = keep[i] if i < len(keep) else False
            # an alternative list "(arterial) (benign)" or "(acute) (chronic)": each is one modifier
            buf.append((" " + mod.split(",")[0].strip()) if on and "," not in mod else "")
            buf.append(plain[i + 1])
        out.append("".join(buf))
        if len(out) >= MAX_PAREN_FORMS:
            break
    return list(dict.fromkeys(out))


def _head(text: str, rules: SurfaceRules) -> str:
    t = " " + text + " "
    cut = len(t)
    for marker in rules.split_on:
        i = t.find(marker)
        if 0 < i < cut:
            cut = i
    t = t[:cut]
    for p in rules.drop_phrases:
        t = t.replace(" " + p + " ", " ")
    words = [w for w in t.split() if w not in rules.drop_words]
    return " ".join(words)


def _ok(form: str, rules: SurfaceRules) -> bool:
    letters = sum(ch.isalpha() for ch in form)
    words = form.split()
    return (letters >= rules.min_chars and 0 < len(words) <= rules.max_words and form not in rules.stop_surfaces
            and words[0] != "unspecified"  # the wording of generalisations (the residual categories)
            and "[" not in form and "]" not in form
            and not form.startswith(("of ", "and ", "or ", "in ", "to ")) and not form.endswith(
                (" of", " and", " or", " in", " to", " the", " with", " by")))


def forms_of(text: str, rules: SurfaceRules, *, head: bool = True) -> Iterator[tuple[str, bool]]:
    """(form, is_head) pairs of one description or inclusion term."""
    base = re.sub(r"\bNOS\b", "", text)
    for variant in paren_forms(base):
        full = _norm(variant)
        if _ok(full, rules):
            yield full, False
        if head:
            h = _norm(_head(full, rules))
            if h and h != full and _ok(h, rules) and len(h.split()) >= rules.min_head_words:
                yield h, True


def display_name(cat: Category, rules: SurfaceRules) -> str:
    """The category's name: its description without parenthesised modifiers and without a trailing
    ", unspecified" (ICD-10-CM's own residual wording)."""
    t = _PAREN.sub("", cat.description)
    t = re.sub(r",\s*(?:unspecified|not elsewhere classified)\b.*$", "", t, flags=re.I)
    return _norm(t) or cat.description.lower()


@dataclass
class CategorySurfaces:
    """Surface forms of every category with the evidence that decided each."""

    surfaces: dict[str, list[str]] = field(default_factory=dict)  # code -> forms (case-insensitive)
    abbreviations: dict[str, list[str]] = field(default_factory=dict)  # code -> case-sensitive forms
    names: dict[str, str] = field(default_factory=dict)
    ambiguous: int = 0


def build_surfaces(tab: Tabular, codes: Iterable[str], rules: SurfaceRules,
                   synonyms: dict[str, tuple[list[str], list[str]]]) -> CategorySurfaces:
    """Surface forms of the ``codes`` (module docstring); ``synonyms`` maps a code to (surfaces, abbreviations)."""
    best: dict[str, tuple[int, set[str]]] = {}

    def offer(form: str, rank: int, code: str) -> None:
        cur = best.get(form)
        if cur is None or rank < cur[0]:
            best[form] = (rank, {code})
        elif rank == cur[0]:
            cur[1].add(code)

    wanted = [c for c in codes if c in tab.categories]
    out = CategorySurfaces()
    for code in wanted:
        cat = tab.categories[code]
        out.names[code] = display_name(cat, rules)
        offer(out.names[code], RANK_TITLE, code)
        for form, is_head in forms_of(cat.description, rules):
            offer(form, RANK_HEAD if is_head else RANK_TITLE, code)
        for inc in cat.inclusions:
            nos = bool(re.search(r"\bNOS\b", inc))
            for form, is_head in forms_of(inc, rules):
                offer(form, RANK_HEAD if is_head else (RANK_NOS if nos else RANK_TITLE), code)
        for sub in cat.sub_texts:
            nos = bool(re.search(r"\bNOS\b", sub))
            for form, is_head in forms_of(sub, rules):
                offer(form, RANK_HEAD if is_head else (RANK_NOS if nos else RANK_SUB), code)
    for code, (surfs, _abbr) in synonyms.items():
        if code in out.names:
            for s in surfs:
                offer(_norm(s), RANK_SYNONYM, code)
    for form, (_rank, owners) in sorted(best.items()):
        if len(owners) != 1:
            out.ambiguous += 1
            continue
        out.surfaces.setdefault(next(iter(owners)), []).append(form)
    for code, (_surfs, abbr) in synonyms.items():
        if code in out.names and abbr:
            out.abbreviations[code] = list(abbr)
    # the name: the first curated synonym the category owns (the clinical name), else its cleaned description
    # when it owns that form, else its first owned form; a name is always one of the category's own surfaces
    owner_of = {f: c for c, fs in out.surfaces.items() for f in fs}
    for code, name in list(out.names.items()):
        curated = [_norm(s) for s in synonyms.get(code, ([], []))[0]]
        first = next((f for f in curated if owner_of.get(f) == code), None)
        if first is not None:
            out.names[code] = first
        elif owner_of.get(name) != code:
            out.names[code] = next(iter(sorted(out.surfaces.get(code, []), key=len)), name)
    return out
