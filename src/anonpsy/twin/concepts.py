"""Entity types, canonical concepts and the generalisation hierarchy of the document–entity table.

Every entity is a *concept* with a stable id, a type and a display name, all taken from the rule files:

==========  ==================================  ===========================================================
type        concept (level 0)                   generalisations, nearest first
==========  ==================================  ===========================================================
diagnosis   ``dx:<DSM rule id>`` (rules/dsm,    ``dx.chapter:<chapter>`` "unspecified <chapter> disorder"
            synonyms of rules/canonical)        (DSM-5-TR's own residual category), ``dx.root`` "unspecified
                                                mental disorder"
symptom     ``sx:<symptom id>``                 ``sx.domain:<domain>`` of rules/lexicon/symptoms.yaml
medication  ``rx:<drug id>``                    ``rx.class:<class>`` (rules/treatments/medication_classes),
            (rules/lexicon/medications.yaml)    ``rx.group:psychotropic`` / ``rx.group:other``
therapy     ``tx:<therapy id>``                 ``tx.type:<psychotherapy|procedure|psychosocial>``
test        ``test:<test>`` (rules/test_values)  ``test.category:<lab|vital|rating_scale|cognition>``
==========  ==================================  ===========================================================

Tests that share a written alias (systolic and diastolic pressure are both "BP") are one concept named by the
shared alias. A generalisation whose display name would itself be read as a specific concept (the lithium class
is named "lithium") is skipped: its children generalise straight to the next level.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from anonpsy import lexicon
from anonpsy.rules import dsm as dsm_rules
from anonpsy.rules import tables
from anonpsy.rules.test_values import alias_key, load_test_values
from anonpsy.yamlio import load_yaml

EntityType = Literal["diagnosis", "symptom", "medication", "therapy", "procedure", "test"]
ENTITY_TYPES: tuple[EntityType, ...] = ("diagnosis", "symptom", "medication", "therapy", "procedure", "test")
#: Overlapping mentions of different types: the longer wins; on equal length, the earlier type here.
TYPE_PRIORITY: dict[str, int] = {t: i for i, t in enumerate(("diagnosis", "medication", "therapy", "procedure",
                                                              "test", "symptom"))}
PREFIX: dict[str, str] = {"diagnosis": "dx", "symptom": "sx", "medication": "rx", "therapy": "tx",
                          "procedure": "px", "test": "test"}

SYMPTOM_DOMAIN_NAMES: dict[str, str] = {
    "mood": "mood symptom", "anxiety": "anxiety symptom", "obsessive_compulsive": "obsessive-compulsive symptom",
    "trauma": "trauma-related symptom", "dissociative": "dissociative symptom", "psychotic": "psychotic symptom",
    "cognitive": "cognitive symptom", "neurodevelopmental": "developmental symptom",
    "behavioural": "behavioural symptom", "personality": "personality trait", "sleep": "sleep complaint",
    "appetite_eating": "eating or appetite symptom", "substance": "substance-related problem",
    "somatic": "physical complaint", "adverse_effect": "medication side effect", "sexual": "sexual symptom",
    "elimination": "elimination symptom", "gender": "gender-related concern", "suicidality": "suicide-related concern",
    "violence": "violence-related concern",
}
THERAPY_TYPE_NAMES: dict[str, str] = {"psychotherapy": "unspecified psychotherapy",
                                      "procedure": "unspecified procedure",
                                      "psychosocial": "unspecified psychosocial intervention"}
TEST_CATEGORY_NAMES: dict[str, str] = {"lab": "laboratory test", "vital": "vital sign", "rating_scale": "rating scale",
                                       "cognition": "cognitive test"}
DX_ROOT = "dx.root"
DX_ROOT_NAME = "unspecified mental disorder"


@dataclass(frozen=True)
class Concept:
    """One node of the hierarchy. ``level`` 0 is a concept found in text; higher levels are generalisations."""

    id: str
    type: EntityType
    name: str
    parent: str | None
    level: int


@dataclass(frozen=True)
class TestGroup:
    """Tests written with the same aliases, as one concept."""

    __test__ = False  # not a pytest class

    id: str
    name: str
    category: str
    aliases: tuple[str, ...]


class Hierarchy:
    """Concepts by id with their ancestor chains (nearest first)."""

    def __init__(self, concepts: Iterable[Concept]) -> None:
        self.concepts: dict[str, Concept] = {c.id: c for c in concepts}
        for c in self.concepts.values():
            if c.parent is not None and c.parent not in self.concepts:
                raise ValueError(f"concept {c.id} names an unknown parent {c.parent}")
        self._anc: dict[str, tuple[str, ...]] = {}

    def __contains__(self, cid: object) -> bool:
        return cid in self.concepts

    def __getitem__(self, cid: str) -> Concept:
        return self.concepts[cid]

    def ancestors(self, cid: str) -> tuple[str, ...]:
        """Proper ancestors of ``cid``, nearest first (empty for an unknown id)."""
        got = self._anc.get(cid)
        if got is None:
            out: list[str] = []
            cur = self.concepts.get(cid)
            while cur is not None and cur.parent is not None:
                out.append(cur.parent)
                cur = self.concepts.get(cur.parent)
            got = self._anc[cid] = tuple(out)
        return got

    def lineage(self, cid: str) -> tuple[str, ...]:
        """``cid`` followed by its ancestors."""
        return (cid, *self.ancestors(cid))

    def name(self, cid: str) -> str:
        """Display name (the id itself for an unknown concept)."""
        c = self.concepts.get(cid)
        return c.name if c is not None else cid

    def type_of(self, cid: str) -> str:
        """Entity type of a concept id (from its prefix when the id is unknown)."""
        c = self.concepts.get(cid)
        if c is not None:
            return c.type
        prefix = cid.split(":", 1)[0].split(".", 1)[0]
        return next((t for t, p in PREFIX.items() if p == prefix), "unknown")

    def generalisations(self) -> list[Concept]:
        """Every node above level 0."""
        return [c for c in self.concepts.values() if c.level > 0]


_RULE_SOURCES = {
    "dx.chapter": "rules/dsm/{x}.yaml (DSM-5-TR chapter; its residual category)",
    "dx.root": "DSM-5-TR Unspecified Mental Disorder",
    "rx.class": "rules/lexicon/medications.yaml class in rules/treatments/medication_classes.yaml {x}",
    "rx.group": "rules/treatments/medication_classes.yaml psychotropic",
    "sx.domain": "rules/lexicon/symptoms.yaml domain {x}",
    "tx.type": "rules/lexicon/therapies.yaml type {x}",
    "test.category": "rules/test_values category {x}",
}


def rule_source(cid: str) -> str:
    """The rule file (and field) that places a concept under the generalisation ``cid``."""
    from anonpsy.twin.vocabulary import RULE_SOURCES

    kind, _, x = cid.partition(":")
    return (_RULE_SOURCES.get(kind) or RULE_SOURCES.get(kind, "")).format(x=x)


def concept_type(cid: str) -> str:
    """The entity type named by a concept id's prefix (``rx.class:ssri`` → ``medication``)."""
    prefix = cid.split(":", 1)[0].split(".", 1)[0]
    return next((t for t, p in PREFIX.items() if p == prefix), "unknown")


# -------------------------------------------------------------------------------------------------------------
# Building blocks from the rule files


@lru_cache(maxsize=4)
def chapter_titles(root: Path | None = None) -> dict[str, str]:
    """DSM chapter id → chapter title, from the first sentence of each ``rules/dsm/<chapter>.yaml`` description."""
    out: dict[str, str] = {}
    for path in dsm_rules.rule_files(root):
        doc = load_yaml(path.read_text(encoding="utf-8")) or {}
        chapter, desc = doc.get("chapter"), doc.get("description")
        if isinstance(chapter, str) and isinstance(desc, str) and desc.strip():
            out[chapter] = desc.strip().split(". ")[0].rstrip(".").strip()
    return out


def residual_category(title: str) -> str:
    """DSM-5-TR's residual category of a chapter: "Anxiety Disorders" → "unspecified anxiety disorder"."""
    singular = re.sub(r"\bDisorders\b", "Disorder", title)
    singular = re.sub(r"\bDysfunctions\b", "Dysfunction", singular)
    return f"unspecified {singular.lower()}"


@lru_cache(maxsize=1)
def residual_rules() -> dict[str, str]:
    """DSM rule id → concept id of its chapter, for the rules that are their chapter's residual category
    ("Unspecified Anxiety Disorder"): such a rule is the chapter's generalisation, not a leaf beside it."""
    titles = chapter_titles()
    return {r.id: f"dx.chapter:{r.chapter}" for r in dsm_rules.load_dsm().values()
            if r.chapter in titles and r.name.lower() == residual_category(titles[r.chapter])}


def _bare(name: str) -> str:
    """A class name without its parenthetical remark: "HMG-CoA reductase inhibitor (statin)" → "HMG-CoA reductase
    inhibitor"."""
    return re.sub(r"\s+", " ", re.sub(r"\s*\([^()]*\)", "", name)).strip() or name


def _group_tests() -> list[TestGroup]:
    """Tests of rules/test_values grouped when they share an alias (union-find over alias keys)."""
    defs = list(load_test_values().values())
    parent = list(range(len(defs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for i, d in enumerate(defs):
        for a in d.aliases:
            k = alias_key(a)
            if k in owner:
                parent[find(i)] = find(owner[k])
            else:
                owner[k] = i
    groups: dict[int, list[int]] = {}
    for i in range(len(defs)):
        groups.setdefault(find(i), []).append(i)
    out: list[TestGroup] = []
    for members in groups.values():
        ds = [defs[i] for i in members]
        aliases = tuple(dict.fromkeys(a for d in ds for a in d.aliases))
        if len(ds) == 1:
            gid, name = ds[0].id, ds[0].name.lower() if not ds[0].name.isupper() else ds[0].name
        else:
            shared = [a for a in ds[0].aliases if all(alias_key(a) in {alias_key(x) for x in d.aliases} for d in ds)]
            name = next((a for a in shared if len(a) > 3), shared[0]).lower()
            gid = re.sub(r"[^a-z0-9]+", "_", name).strip("_")
        out.append(TestGroup(gid, name, ds[0].category, aliases))
    return out


@lru_cache(maxsize=1)
def test_groups() -> tuple[TestGroup, ...]:
    """The test concepts (cached)."""
    return tuple(_group_tests())


def build_hierarchy(collides: Callable[[str], bool] | None = None, *, general_vocabulary: bool = True,
                    reads_as: Callable[[str], str | None] | None = None) -> Hierarchy:
    """The hierarchy from the project's rules and, with ``general_vocabulary``, the general clinical vocabulary of
    ``rules/twin`` (:mod:`~anonpsy.twin.vocabulary`). ``collides(name)`` tells whether a generalisation's display
    name would be read as a specific concept; such a node is left out and its children attach to the next level.
    ``reads_as(name)`` tells which concept a whole name is read as: a vocabulary concept is named by the first of
    its forms that reads as itself (a form that a project lexicon reads first, such as "fatigue", would make a
    generated document name the project's concept instead)."""
    nodes: list[Concept] = []
    titles = chapter_titles()
    skipped: dict[str, str | None] = {}  # generalisation left out -> where its children go

    def general(cid: str, etype: EntityType, name: str, parent: str | None, level: int) -> str | None:
        """Add a generalisation unless its name collides; returns the id children should point to."""
        if collides is not None and collides(name):
            skipped[cid] = parent
            return parent
        nodes.append(Concept(cid, etype, name, parent, level))
        return cid

    vocab = None
    if general_vocabulary:
        from anonpsy.twin.vocabulary import load_vocabulary

        vocab = load_vocabulary()
    # diagnoses
    dx_root = general(DX_ROOT, "diagnosis", DX_ROOT_NAME, None, 2)
    chapter_ids: dict[str, str | None] = {}
    residual = residual_rules()
    for chapter in dsm_rules.CHAPTERS:
        if chapter == "other" or chapter not in titles:
            chapter_ids[chapter] = dx_root
            continue
        cid, name = f"dx.chapter:{chapter}", residual_category(titles[chapter])
        if cid in residual.values():  # the chapter's residual category is a DSM rule: its name reads as this node
            nodes.append(Concept(cid, "diagnosis", name, dx_root, 1))
            chapter_ids[chapter] = cid
            continue
        chapter_ids[chapter] = general(cid, "diagnosis", name, dx_root, 1)
    for rule in dsm_rules.load_dsm().values():
        if rule.id in residual:
            continue
        nodes.append(Concept(f"dx:{rule.id}", "diagnosis", rule.name, chapter_ids.get(rule.chapter, dx_root), 0))
    # symptoms
    domain_ids: dict[str, str | None] = {}
    for entry in lexicon.symptom_lexicon().rules:
        if entry.domain not in domain_ids:
            name = SYMPTOM_DOMAIN_NAMES.get(entry.domain, entry.domain.replace("_", " ") + " symptom")
            domain_ids[entry.domain] = general(f"sx.domain:{entry.domain}", "symptom", name, None, 1)
        nodes.append(Concept(f"sx:{entry.id}", "symptom", entry.headword, domain_ids[entry.domain], 0))
    # medications
    other_level = 3 if vocab is not None else 2
    groups = {True: general("rx.group:psychotropic", "medication", "psychotropic medication", None, 2),
              False: general("rx.group:other", "medication", "non-psychotropic medication", None, other_level)}
    atc: dict[str, str | None] = {}
    if vocab is not None:
        for n in vocab.nodes:
            if n.id.startswith("rx.atc:"):
                atc[n.id] = general(n.id, "medication", n.name, groups[False], n.level)
    class_ids: dict[str, str | None] = {}
    for med in lexicon.medication_lexicon().rules:
        cls = med.class_id
        if cls not in class_ids:
            info = tables.medication_class(cls)
            psych = bool(info.psychotropic) if info is not None else False
            group = groups[psych]
            if not psych and vocab is not None and cls in vocab.project_class_groups:
                group = atc.get(vocab.project_class_groups[cls], group)
            name = _bare(info.name) if info is not None else cls.replace("_", " ")
            class_ids[cls] = general(f"rx.class:{cls}", "medication", name, group, 1)
        nodes.append(Concept(f"rx:{med.id}", "medication", med.headword, class_ids[cls], 0))
    # therapies
    type_ids: dict[str, str | None] = {}
    for th in lexicon.therapy_lexicon().rules:
        if th.type not in type_ids:
            type_ids[th.type] = general(f"tx.type:{th.type}", "therapy", THERAPY_TYPE_NAMES[th.type], None, 1)
        nodes.append(Concept(f"tx:{th.id}", "therapy", th.headword, type_ids[th.type], 0))
    # tests
    cat_ids: dict[str, str | None] = {}
    for g in test_groups():
        if g.category not in cat_ids:
            cat_ids[g.category] = general(f"test.category:{g.category}", "test",
                                          TEST_CATEGORY_NAMES.get(g.category, g.category), None, 1)
        nodes.append(Concept(f"test:{g.id}", "test", g.name, cat_ids[g.category], 0))
    # the general clinical vocabulary: generalisations first (parents before children), then its concepts
    if vocab is not None:
        have = {c.id for c in nodes}

        def parent_of(pid: str | None) -> str | None:
            """The nearest kept node at or above ``pid`` (a left-out generalisation passes its children up)."""
            while pid is not None and pid not in have:
                pid = skipped.get(pid)
            return pid

        for n in sorted((n for n in vocab.nodes if n.level > 0 and n.id not in have and n.id not in atc),
                        key=lambda n: -n.level):
            got = general(n.id, n.type, n.name, parent_of(n.parent), n.level)  # type: ignore[arg-type]
            if got is not None:
                have.add(got)
        forms = {e.id: (*e.surfaces, *e.abbreviations) for e in vocab.entries}
        for n in vocab.nodes:
            if n.level == 0 and n.id not in have:
                name = n.name
                if reads_as is not None and reads_as(name) != n.id:
                    name = next((f for f in forms.get(n.id, ()) if reads_as(f) == n.id), name)
                nodes.append(Concept(n.id, n.type, name, parent_of(n.parent), 0))  # type: ignore[arg-type]
                have.add(n.id)
    return Hierarchy(nodes)


def restrict(h: Hierarchy, types: Iterable[str]) -> Hierarchy:
    """The part of ``h`` with the given entity types."""
    keep = set(types)
    return Hierarchy(c for c in h.concepts.values() if c.type in keep)


def parse_types(value: str | Iterable[str]) -> tuple[EntityType, ...]:
    """Entity types from ``"diagnosis,symptom"`` (or an iterable), in canonical order; ValueError on unknown."""
    items = [v.strip() for v in (value.split(",") if isinstance(value, str) else value) if v.strip()]
    unknown = sorted(set(items) - set(ENTITY_TYPES))
    if unknown:
        raise ValueError(f"unknown entity type(s) {', '.join(unknown)}; choose from {', '.join(ENTITY_TYPES)}")
    if not items:
        raise ValueError("at least one entity type is needed")
    return tuple(t for t in ENTITY_TYPES if t in set(items))


def names_by_id(h: Hierarchy) -> Mapping[str, str]:
    """Display names of every concept."""
    return {cid: c.name for cid, c in h.concepts.items()}
