"""The general clinical vocabulary of RecordTwin tables: ICD-10-CM problems and findings, drugs, procedures and tests
beyond the project's psychiatric lexicons, matched with an Aho-Corasick automaton, and the look-alike rules.

Sources, all rule files under ``rules/twin/`` (each with its ``.cases.yaml``):

* ``icd10cm.yaml`` -- which ICD-10-CM chapters are read and as what type, the surface-form rules and clinical
  synonyms (:mod:`~anonpsy.twin.icd10cm` builds the forms from the tabular list);
* ``medications.yaml`` -- drugs with their class and the class's ATC group;
* ``procedures.yaml`` -- procedures with their body system;
* ``tests.yaml`` -- imaging studies, physiological tests and laboratory panels with their category;
* ``lookalikes.yaml`` -- when a lexicon term is read in its other sense (:class:`Lookalikes`).

Matching: each text is cut into the project lexicon's tokens (:func:`anonpsy.lexicon.tokenize`); the case-folded
tokens, joined by single spaces, are scanned by one :mod:`ahocorasick` automaton holding every case-insensitive
form; matches that start and end on token boundaries are kept leftmost-longest. Case-sensitive abbreviations go
through the project's :class:`~anonpsy.lexicon.TermIndex` (exact or all capitals).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from anonpsy import lexicon
from anonpsy.paths import rules_dir
from anonpsy.phrases import Hit as Hit  # the shared matcher, re-exported
from anonpsy.phrases import PhraseMatcher as PhraseMatcher
from anonpsy.yamlio import load_yaml

#: Generalisation id prefixes of this vocabulary and the rule file that places a concept under each.
RULE_SOURCES: dict[str, str] = {
    "dx.block": "rules/twin/icd10cm.yaml ICD-10-CM block {x}",
    "dx.icd": "rules/twin/icd10cm.yaml ICD-10-CM chapter {x}",
    "sx.block": "rules/twin/icd10cm.yaml ICD-10-CM block {x}",
    "sx.icd": "rules/twin/icd10cm.yaml ICD-10-CM chapter {x}",
    "rx.atc": "rules/twin/medications.yaml ATC group {x}",
    "px.system": "rules/twin/procedures.yaml system {x}",
    "px.root": "rules/twin/procedures.yaml",
}
ICD_TYPE_PREFIX = {"diagnosis": "dx", "symptom": "sx"}


@dataclass(frozen=True)
class Node:
    """A concept (level 0) or a generalisation of the vocabulary."""

    id: str
    type: str
    name: str
    parent: str | None
    level: int


@dataclass(frozen=True)
class Entry:
    """What one concept is written as (``keys``: the case-folded token keys of ``surfaces``, computed once)."""

    id: str
    surfaces: tuple[str, ...]
    abbreviations: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()

    def surface_keys(self) -> tuple[str, ...]:
        return self.keys or tuple(_key(f) for f in self.surfaces)


def twin_dir(root: Path | None = None) -> Path:
    return (root or rules_dir()) / "twin"


def read_doc(stem: str, root: Path | None = None) -> dict[str, Any]:
    path = twin_dir(root) / f"{stem}.yaml"
    data = load_yaml(path.read_text(encoding="utf-8")) or {}
    return data if isinstance(data, dict) else {}


# -------------------------------------------------------------------------------------------------------------
# Names of generalisations

_PLURAL_KEEP = frozenset({"diabetes", "mellitus", "herpes", "sepsis", "causes", "systems", "tuberculosis", "status",
                          "syphilis", "measles", "mumps", "rubella", "mastoiditis", "pubis", "process", "abscess",
                          "diseases"})


def _singular(word: str) -> str:
    if word[-1:] in ",;":
        return _singular(word[:-1]) + word[-1]
    w = word.lower()
    if w in _PLURAL_KEEP or len(w) <= 4:
        return {"diseases": "disease"}.get(w, word)
    if w.endswith("ies"):
        return word[:-3] + "y"
    if w.endswith(("sses", "uses", "xes", "ches", "shes")):
        return word[:-2]
    if w.endswith(("ss", "us", "is", "ys", "ps")):
        return word
    if w.endswith("s"):
        return word[:-1]
    return word


def general_name(title: str) -> str:
    """An ICD-10-CM block or chapter title as the name of a generalisation: "Hypertensive diseases" →
    "unspecified hypertensive disease", "Endocrine, nutritional and metabolic diseases" → "unspecified endocrine,
    nutritional or metabolic disease" (the residual wording ICD-10-CM itself uses). Only the words before a
    preposition are made singular."""
    t = re.sub(r",?\s*not elsewhere classified", "", title, flags=re.I)
    t = re.sub(r"^(?:certain|other)(?:\s+and\s+unspecified)?\s+", "", t.strip(), flags=re.I)
    out: list[str] = []
    head = True
    for w in t.lower().replace(" and ", " or ").split():
        if w in _HEAD_END:
            head = False
        out.append(_singular(w) if head else w)
    return "unspecified " + " ".join(out).strip(" ,")


_HEAD_END = frozenset({"of", "involving", "in", "affecting", "due", "with", "originating", "influencing", "from",
                       "during", "to"})


# -------------------------------------------------------------------------------------------------------------
# The vocabulary


@dataclass
class Vocabulary:
    """Nodes (concepts and their generalisations) and what each concept is written as."""

    nodes: list[Node] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    project_class_groups: dict[str, str] = field(default_factory=dict)  # project class id -> rx.atc id
    stats: dict[str, int] = field(default_factory=dict)

    def concepts_of(self, etype: str) -> list[Node]:
        return [n for n in self.nodes if n.type == etype and n.level == 0]


def _icd(doc: dict[str, Any], vocab: Vocabulary, tab_path: Path | None = None) -> None:
    from anonpsy import icd10cm

    tab = icd10cm.load_tabular(tab_path)
    types = {str(c["chapter"]): c["type"] for c in doc.get("chapters", [])}
    rules = icd10cm.SurfaceRules.from_doc(doc)
    synonyms = {str(r["id"]).upper(): (list(r.get("surfaces", []) or []), list(r.get("abbreviations", []) or []))
                for r in doc.get("rules", [])}
    codes = [c for c, cat in tab.categories.items() if types.get(cat.chapter, "none") != "none"]
    built = icd10cm.build_surfaces(tab, codes, rules, synonyms)
    used_names: set[str] = set()
    for num, title in tab.chapters.items():
        etype = types.get(num, "none")
        if etype == "none":
            continue
        p = ICD_TYPE_PREFIX[etype]
        name = general_name(title)
        used_names.add(name)
        vocab.nodes.append(Node(f"{p}.icd:{num}", etype, name, None, 2))
    for bid, (title, num) in tab.blocks.items():
        etype = types.get(num, "none")
        if etype == "none" or not any(tab.categories[c].block == bid for c in codes if c in tab.categories):
            continue
        p = ICD_TYPE_PREFIX[etype]
        name = general_name(title)
        if name in used_names:
            continue  # two titles with one name: its categories generalise to the chapter
        used_names.add(name)
        vocab.nodes.append(Node(f"{p}.block:{bid}", etype, name, f"{p}.icd:{num}", 1))
    blocks = {n.id for n in vocab.nodes}
    for code in codes:
        cat = tab.categories[code]
        etype = types[cat.chapter]
        p = ICD_TYPE_PREFIX[etype]
        surfaces = built.surfaces.get(code, [])
        if not surfaces:
            continue
        parent = f"{p}.block:{cat.block}" if f"{p}.block:{cat.block}" in blocks else f"{p}.icd:{cat.chapter}"
        cid = f"{p}:{code}"
        vocab.nodes.append(Node(cid, etype, built.names[code], parent, 0))
        vocab.entries.append(Entry(cid, tuple(surfaces), tuple(built.abbreviations.get(code, ()))))
    vocab.stats.update({"icd_categories": sum(1 for n in vocab.nodes if n.level == 0),
                        "icd_surfaces": sum(len(e.surfaces) for e in vocab.entries),
                        "icd_ambiguous_forms_left_out": built.ambiguous})


def _medications(doc: dict[str, Any], vocab: Vocabulary, taken: set[str]) -> None:
    for g in doc.get("groups", []):
        vocab.nodes.append(Node(f"rx.atc:{g['id']}", "medication", f"unspecified {g['name']}", "rx.group:other", 2))
    vocab.project_class_groups = {k: f"rx.atc:{v}" for k, v in (doc.get("project_classes") or {}).items()}
    for c in doc.get("classes", []):
        vocab.nodes.append(Node(f"rx.class:{c['id']}", "medication", c["name"], f"rx.atc:{c['group']}", 1))
    own_classes = {c["id"] for c in doc.get("classes", [])}
    for r in doc.get("rules", []):
        forms = [r["id"].replace("_", " "), *(r.get("brands") or []), *(r.get("aliases") or [])]
        forms = [f for f in forms if _key(f) not in taken]
        if not forms:
            continue
        parent = f"rx.class:{r['class']}"
        if r["class"] not in own_classes and r["class"] not in vocab.project_class_groups:
            continue
        cid = f"rx:{r['id']}"
        vocab.nodes.append(Node(cid, "medication", forms[0], parent, 0))
        vocab.entries.append(Entry(cid, tuple(forms), tuple(r.get("abbreviations") or ())))


def _procedures(doc: dict[str, Any], vocab: Vocabulary) -> None:
    vocab.nodes.append(Node("px.root", "procedure", "unspecified medical or surgical procedure", None, 2))
    for s in doc.get("systems", []):
        vocab.nodes.append(Node(f"px.system:{s['id']}", "procedure", f"unspecified {s['name']}", "px.root", 1))
    for r in doc.get("rules", []):
        forms = list(r.get("surfaces") or [])
        cid = f"px:{r['id']}"
        vocab.nodes.append(Node(cid, "procedure", forms[0], f"px.system:{r['system']}", 0))
        vocab.entries.append(Entry(cid, tuple(forms), tuple(r.get("abbreviations") or ())))


def _tests(doc: dict[str, Any], vocab: Vocabulary, taken: set[str]) -> None:
    for c in doc.get("categories", []):
        vocab.nodes.append(Node(f"test.category:{c['id']}", "test", c["name"], None, 1))
    for r in doc.get("rules", []):
        forms = [f for f in (r.get("surfaces") or []) if _key(f) not in taken]
        abbr = [a for a in (r.get("abbreviations") or []) if _key(a) not in taken]
        if not forms and not abbr:
            continue
        cid = f"test:{r['id']}"
        vocab.nodes.append(Node(cid, "test", (forms or abbr)[0], f"test.category:{r['category']}", 0))
        vocab.entries.append(Entry(cid, tuple(forms), tuple(abbr)))


def _key(form: str) -> str:
    return " ".join(t.key for t in lexicon.tokenize(form))


def project_forms(kind: str) -> set[str]:
    """Keys of every form the project's own lexicons give ``kind`` (they are read first and keep their words)."""
    out: set[str] = set()
    if kind == "medication":
        for med in lexicon.medication_lexicon().rules:
            out.update(_key(s) for s in med.surfaces())
    elif kind == "test":
        from anonpsy.twin.concepts import test_groups

        for g in test_groups():
            out.update(_key(a) for a in g.aliases)
    elif kind == "therapy":
        for th in lexicon.therapy_lexicon().rules:
            out.update(_key(s) for s in th.surfaces())
    return out


#: Bump when the way the vocabulary is built changes (the cache key includes it).
BUILD_VERSION = 1
_SOURCES = ("twin/icd10cm.yaml", "twin/medications.yaml", "twin/procedures.yaml", "twin/tests.yaml",
            "lexicon/medications.yaml", "lexicon/therapies.yaml", "test_values/*.yaml")


def cache_key(root: Path | None = None) -> str:
    """SHA-256 of what the vocabulary is built from: its rule files, the project lexicons it defers to, the
    tabular list's file and the modules that build it."""
    import hashlib

    from anonpsy.icd10cm import tabular_path

    h = hashlib.sha256(f"v{BUILD_VERSION}".encode())
    base = root or rules_dir()
    for pattern in _SOURCES:
        for path in sorted(base.glob(pattern)):
            h.update(path.name.encode() + b"\0" + path.read_bytes())
    tab = tabular_path()
    h.update(tab.name.encode() + str(tab.stat().st_size).encode())
    import anonpsy.icd10cm

    h.update(Path(anonpsy.icd10cm.__file__).read_bytes())  # the code that builds it
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()


def cache_dir() -> Path:
    """``$ANONPSY_CACHE_DIR/twin``, else ``~/.cache/anonpsy/twin``."""
    import os

    base = os.environ.get("ANONPSY_CACHE_DIR")
    return (Path(base) if base else Path.home() / ".cache" / "anonpsy") / "twin"


def _to_json(v: Vocabulary) -> dict[str, Any]:
    return {"nodes": [[n.id, n.type, n.name, n.parent, n.level] for n in v.nodes],
            "entries": [[e.id, list(e.surfaces), list(e.abbreviations), list(e.surface_keys())] for e in v.entries],
            "project_class_groups": v.project_class_groups, "stats": v.stats}


def _from_json(d: dict[str, Any]) -> Vocabulary:
    return Vocabulary([Node(*n) for n in d["nodes"]],
                      [Entry(e[0], tuple(e[1]), tuple(e[2]), tuple(e[3])) for e in d["entries"]],
                      dict(d["project_class_groups"]), dict(d["stats"]))


def build_vocabulary(root: Path | None = None) -> Vocabulary:
    """The vocabulary of ``rules/twin``, built from the rule files (a few seconds)."""
    vocab = Vocabulary()
    _icd(read_doc("icd10cm", root), vocab)
    _medications(read_doc("medications", root), vocab, project_forms("medication"))
    _procedures(read_doc("procedures", root), vocab)
    _tests(read_doc("tests", root), vocab, project_forms("test"))
    vocab.entries = [Entry(e.id, e.surfaces, e.abbreviations, e.surface_keys()) for e in vocab.entries]
    return vocab


@lru_cache(maxsize=2)
def load_vocabulary(root: Path | None = None) -> Vocabulary:
    """The vocabulary of ``rules/twin`` (cached per process, and on disk under :func:`cache_dir` by
    :func:`cache_key`: a changed rule file or package data builds it again)."""
    import json

    from anonpsy.yamlio import write_atomic

    key = cache_key(root)
    path = cache_dir() / f"vocabulary-{key[:16]}.json"
    if path.is_file():
        try:
            return _from_json(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, KeyError, TypeError, IndexError):
            pass  # a damaged cache file is rebuilt
    vocab = build_vocabulary(root)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(_to_json(vocab), ensure_ascii=False))
    except OSError:
        pass  # a read-only home: build it again next time
    return vocab


# -------------------------------------------------------------------------------------------------------------
# Matching


# -------------------------------------------------------------------------------------------------------------
# Look-alikes

_BOUNDARY = re.compile(r"[.!?;]\s|\n")


@dataclass(frozen=True)
class Lookalike:
    """One look-alike rule (see ``rules/twin/lookalikes.yaml``)."""

    id: str
    concept: str
    forms: frozenset[str]
    written_as: frozenset[str] = frozenset()
    followed_by: re.Pattern[str] | None = None
    preceded_by: re.Pattern[str] | None = None
    in_sentence: re.Pattern[str] | None = None

    def other_sense(self, text: str, start: int, end: int) -> bool:
        """Is the mention ``text[start:end]`` of :attr:`concept` the other sense?"""
        surface = text[start:end]
        if self.written_as and surface not in self.written_as:
            return True
        lo, hi = sentence_window(text, start, end)
        if self.followed_by is not None and self.followed_by.match(text, end, hi):
            return True
        if self.preceded_by is not None and self.preceded_by.search(text[lo:start]):
            return True
        sentence = text[lo:start] + " " + text[end:hi]
        return self.in_sentence is not None and self.in_sentence.search(sentence) is not None


def sentence_window(text: str, start: int, end: int) -> tuple[int, int]:
    """The stretch of ``text`` around a mention up to the nearest sentence boundaries."""
    lo = 0
    for m in _BOUNDARY.finditer(text, 0, start):
        lo = m.end()
    m2 = _BOUNDARY.search(text, end)
    return lo, (m2.start() + 1 if m2 else len(text))


class Lookalikes:
    """The look-alike rules of one file, by concept."""

    def __init__(self, rules: Sequence[Lookalike]) -> None:
        self.by_concept: dict[str, list[Lookalike]] = {}
        for r in rules:
            self.by_concept.setdefault(r.concept, []).append(r)

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> Lookalikes:
        out: list[Lookalike] = []
        for r in doc.get("rules", []):
            flags = 0 if r.get("case_sensitive") else re.I

            def rx(key: str, flags: int = flags, r: dict[str, Any] = r) -> re.Pattern[str] | None:
                v = r.get(key)
                return re.compile(v, flags) if v else None

            out.append(Lookalike(r["id"], r["concept"], frozenset(f.casefold() for f in r.get("forms", [])),
                                 frozenset(r.get("written_as", []) or []), rx("followed_by"), rx("preceded_by"),
                                 rx("in_sentence")))
        return cls(out)

    def other_sense(self, text: str, start: int, end: int, concept: str) -> str | None:
        """The id of the rule that reads this mention in its other sense, or None."""
        for r in self.by_concept.get(concept, ()):
            if text[start:end].casefold() in r.forms and r.other_sense(text, start, end):
                return r.id
        return None


@lru_cache(maxsize=2)
def lookalikes(root: Path | None = None) -> Lookalikes:
    return Lookalikes.from_doc(read_doc("lookalikes", root))


@lru_cache(maxsize=2)
def phrase_matcher(root: Path | None = None) -> PhraseMatcher:
    return PhraseMatcher(load_vocabulary(root).entries)
