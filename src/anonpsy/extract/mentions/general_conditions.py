"""The fallback condition vocabulary: ICD-10-CM categories the curated lexicon and the DSM rules do not name.

The curated lexicon (``rules/lexicon/conditions.yaml``) lists the comorbidities psychiatric notes name most; a
neurological work-up names many more (an encephalitis, a myelitis, a headache syndrome, a dementia type) that it
would otherwise drop. ``rules/lexicon/general_conditions.yaml`` says which ICD-10-CM blocks are read, with what
system, course and scope; their forms are built by :mod:`anonpsy.icd10cm` from the tabular list and matched by
:class:`anonpsy.phrases.PhraseMatcher` (token-aligned, leftmost-longest).

A fallback mention (:func:`find_general_conditions`) is only read

* in a section its block's scope allows (``any`` clinical section but the review of systems, the examinations and
  the medication lists; ``listed``: a diagnosis list, the assessment or the past history),
* where no curated condition, DSM diagnosis, symptom, medication or therapy of the project covers any of it
  (those are read first and keep their words), except a curated condition or a symptom word that is the head of
  a longer, more specific name ("post-traumatic headaches"),
* when it is not a test's name ("HIV antibody", "hepatitis panel") nor a procedure's ("inguinal hernia
  repair"), and not an excluded form.

It is then treated as a curated condition is (:func:`anonpsy.extract.assembly.nodes.add_conditions`): the same
ConText status, family history, results-section rule and past-history item.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from anonpsy import lexicon
from anonpsy.paths import rules_dir
from anonpsy.yamlio import load_yaml

#: Id prefix of a fallback condition (``icd.g04``): never an id of the curated lexicon.
ID_PREFIX = "icd."
#: Bump when the way the vocabulary is built changes (the disk cache key includes it).
BUILD_VERSION = 2

#: A condition's name used as the name of a test ("HIV antibody", "hepatitis C panel", "Lyme titers").
TEST_AFTER = re.compile(r"^[ -]*(?:antibod(?:y|ies)|antigen|panel|tests?|testing|screen(?:ing)?|titers?|titres?|"
                        r"levels?|serolog(?:y|ies)|PCR|viral load|protocol|workup|work-up|precautions?|"
                        r"prophylaxis|vaccines?|vaccination|immuni[sz]ation)\b", re.I)


#: A condition's name used as the name of a procedure on it ("inguinal hernia repair", "cataract extraction").
PROCEDURE_AFTER = re.compile(r"^[ -]*(?:repairs?|surgery|surgeries|resections?|removal|excisions?|extractions?|"
                             r"operations?|procedures?|release|decompression|clipping|coiling|shunt|"
                             r"\w+(?:ectomy|otomy|ostomy|plasty|pexy)\b)", re.I)


#: A condition's name as an item of a list of tests that a plural test noun closes ("HIV, ANA, TSH and B12 studies
#: were unremarkable"): no verb of its own between the name and the noun.
_TEST_LIST_AFTER = re.compile(r"^\s*,(?:(?!\b(?:was|were|is|are|has|had|have|with|who|which|but)\b)[^.;:]){0,120}?"
                              r"\b(?:studies|tests|labs|levels|titers|titres|serologies|screens|panels|work-?ups)\s+"
                              r"(?:were|was|are|is|all|came back|returned|showed|revealed)\b", re.I)


def names_a_test(text: str, end: int) -> bool:
    """Is the condition name ending at ``end`` the name of a test for it ("HIV testing", "hepatitis panel", "DVT
    prophylaxis", "HIV, ANA and B12 studies were unremarkable") or of a procedure on it ("hernia repair")? A
    test's result, a prevention or a procedure is no statement that the patient has or lacks the condition."""
    after = text[end:end + 150]
    return bool(TEST_AFTER.match(after) or PROCEDURE_AFTER.match(after) or _TEST_LIST_AFTER.match(after))


@dataclass(frozen=True)
class GeneralCondition:
    """One fallback condition: a form of an ICD-10-CM category (``name``, its token key) with the system, course
    and scope of the category's block."""

    id: str
    code: str
    name: str
    system: str
    course: str
    scope: str


@dataclass(frozen=True)
class _Forms:
    """A category's forms as the phrase matcher wants them."""

    id: str
    keys: tuple[str, ...]
    abbreviations: tuple[str, ...] = ()

    def surface_keys(self) -> tuple[str, ...]:
        return self.keys


@dataclass(frozen=True)
class GeneralHit:
    start: int
    end: int
    condition: GeneralCondition
    surface: str


def read_doc(root: Path | None = None) -> dict[str, Any]:
    path = (root or rules_dir()) / "lexicon" / "general_conditions.yaml"
    data = load_yaml(path.read_text(encoding="utf-8")) or {}
    return data if isinstance(data, dict) else {}


def _key(form: str) -> str:
    return " ".join(t.key for t in lexicon.tokenize(form))


_NO_PLURAL = re.compile(r"(?:s|x|z|ch|sh|ia|itis|osis|emia|ism|ness|ity|ion|ing|ed|al|ic|ous|y)$")


def plural_key(key: str) -> str:
    """The key with its last word in the plural, when it is a count noun a note may write so ("post-traumatic
    headaches", "complex partial seizures"); else the key itself. Only the regular English plural in -s."""
    words = key.split()
    last = words[-1] if words else ""
    if not last.isalpha() or len(last) < 4 or _NO_PLURAL.search(last):
        return key
    return " ".join([*words[:-1], last + "s"])


def _slug(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", key).strip("_") or "x"


def _in_range(code: str, rng: str) -> bool:
    lo, _, hi = rng.partition("-")
    return lo <= code[:3] <= (hi or lo)


def build(doc: dict[str, Any]) -> tuple[list[GeneralCondition], list[_Forms]]:
    """The fallback conditions of ``doc`` and their forms (from the ICD-10-CM tabular list)."""
    from anonpsy import icd10cm

    tab = icd10cm.load_tabular()
    blocks = list(doc.get("blocks", []))
    chosen: dict[str, dict[str, Any]] = {}
    for code in tab.categories:
        for b in blocks:
            if _in_range(code, str(b["range"])):
                chosen[code] = b
                break
    rules = icd10cm.SurfaceRules.from_doc(doc)
    synonyms: dict[str, tuple[list[str], list[str]]] = {
        str(r["id"]).upper(): (list(r.get("surfaces", []) or []), []) for r in doc.get("synonyms", []) or []}
    built = icd10cm.build_surfaces(tab, list(chosen), rules, synonyms)
    excluded = {_key(f) for f in doc.get("exclude_forms", []) or []}
    last_words = {str(w).lower() for w in doc.get("exclude_last_words", []) or []}

    def kept(key: str) -> bool:
        words = key.split()
        return (bool(words) and key not in excluded and key not in rules.stop_surfaces
                and words[0] not in rules.drop_words and words[-1] not in last_words)
    conds: list[GeneralCondition] = []
    forms: list[_Forms] = []
    for code in sorted(chosen):
        b = chosen[code]
        # one concept per form (singular and plural together): two conditions of one category ("limbic
        # encephalitis", "myelitis") are two conditions of the note, each with its own status and name
        for key in dict.fromkeys(k for f in built.surfaces.get(code, []) if kept(k := _key(f))):
            cid = f"{ID_PREFIX}{code.lower()}.{_slug(key)}"
            conds.append(GeneralCondition(cid, code, key, str(b["system"]), str(b["course"]), str(b["scope"])))
            forms.append(_Forms(cid, tuple(dict.fromkeys((key, plural_key(key))))))
    return conds, forms


def _cache_path(doc_bytes: bytes) -> Path:
    from anonpsy import icd10cm

    h = hashlib.sha256(f"v{BUILD_VERSION}".encode() + doc_bytes)
    tab = icd10cm.tabular_path()
    h.update(tab.name.encode() + str(tab.stat().st_size).encode())
    for mod in (icd10cm.__file__, __file__):
        h.update(Path(mod).read_bytes())
    base = os.environ.get("ANONPSY_CACHE_DIR")
    root = Path(base) if base else Path.home() / ".cache" / "anonpsy"
    return root / "conditions" / f"general-{h.hexdigest()[:16]}.json"


class GeneralVocabulary:
    """The fallback conditions and their matcher."""

    def __init__(self, conds: list[GeneralCondition], forms: list[_Forms], doc: dict[str, Any]) -> None:
        from anonpsy.phrases import PhraseMatcher

        self.by_id = {c.id: c for c in conds}
        self.matcher = PhraseMatcher(forms)
        self.listed_sections = frozenset(doc.get("listed_sections", []) or [])
        self.excluded_sections = frozenset(doc.get("excluded_sections", []) or [])

    def allowed(self, cond: GeneralCondition, section: str | None) -> bool:
        if section in self.excluded_sections:
            return False
        return cond.scope == "any" or section in self.listed_sections


def vocabulary_of(doc: dict[str, Any]) -> GeneralVocabulary:
    conds, forms = build(doc)
    return GeneralVocabulary(conds, forms, doc)


@lru_cache(maxsize=1)
def general_vocabulary() -> GeneralVocabulary:
    """The vocabulary of ``rules/lexicon/general_conditions.yaml`` (cached per process, and on disk: a changed
    rule file, tabular list or builder builds it again)."""
    from anonpsy.yamlio import write_atomic

    path = (rules_dir()) / "lexicon" / "general_conditions.yaml"
    raw = path.read_bytes()
    doc = read_doc()
    cache = _cache_path(raw)
    if cache.is_file():
        try:
            d = json.loads(cache.read_text(encoding="utf-8"))
            conds = [GeneralCondition(*c) for c in d["conditions"]]
            forms = [_Forms(f[0], tuple(f[1])) for f in d["forms"]]
            return GeneralVocabulary(conds, forms, doc)
        except (ValueError, KeyError, TypeError, IndexError):
            pass  # a damaged cache file is rebuilt
    conds, forms = build(doc)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(cache, json.dumps({"conditions": [[c.id, c.code, c.name, c.system, c.course, c.scope]
                                                       for c in conds],
                                        "forms": [[f.id, list(f.keys)] for f in forms]}))
    except OSError:
        pass  # a read-only home: build it again next time
    return GeneralVocabulary(conds, forms, doc)


def condition_by_id(cid: str) -> GeneralCondition | None:
    return general_vocabulary().by_id.get(cid) if cid.startswith(ID_PREFIX) else None


def _covered(text: str, section: str | None) -> list[tuple[int, int, bool]]:
    """Spans the project's own vocabularies read, each with whether a longer fallback name may hold it: a curated
    condition or a symptom word inside a more specific ICD-10-CM name ("post-traumatic headache", "chronic
    inflammatory demyelinating polyneuropathy") is that name's head; a DSM diagnosis, a medication or a therapy
    always keeps its words."""
    from anonpsy.extract.mentions.diagnoses import find_diagnoses

    spans = [(m.start, m.end, kind in ("condition", "symptom")) for kind in ("condition", "symptom", "medication",
                                                                             "therapy")
             for m in lexicon.find_terms(text, kind)]
    spans += [(a, b, False) for a, b, _r in find_diagnoses(text, section)]
    return spans


def find_general_conditions(text: str, section: str | None = None,
                            vocab: GeneralVocabulary | None = None) -> list[GeneralHit]:
    """Fallback conditions named in ``text`` of ``section`` (module docstring).

    >>> [h.condition.code for h in find_general_conditions("IMPRESSION: Acute transverse myelitis.", "assessment")]
    ['G37']
    >>> find_general_conditions("HIV antibody was negative.", "past_medical")
    []
    """
    if vocab is None:
        return list(_find_default(text, section))
    return _find(text, section, vocab)


@lru_cache(maxsize=4096)
def _find_default(text: str, section: str | None) -> tuple[GeneralHit, ...]:
    # every read of a text asks again about the sentences it shares with an earlier read (a repair round, the
    # final round trip, a probe's lead); the hits are frozen
    return tuple(_find(text, section, general_vocabulary()))


def _find(text: str, section: str | None, v: GeneralVocabulary) -> list[GeneralHit]:
    hits = v.matcher.find(text)
    if not hits:
        return []
    covered = _covered(text, section)
    out: list[GeneralHit] = []
    for h in hits:
        cond = v.by_id.get(h.concept)
        if cond is None or not v.allowed(cond, section):
            continue
        if any(a < h.end and h.start < b and not (held and h.start <= a and b <= h.end and b - a < h.end - h.start)
               for a, b, held in covered):
            continue
        if names_a_test(text, h.end):
            continue
        out.append(GeneralHit(h.start, h.end, cond, text[h.start:h.end]))
    return out
