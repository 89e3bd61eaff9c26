"""A fallback vocabulary of drug names for drugs that the curated medication lexicon does not list.

The curated lexicon (``rules/lexicon/medications.yaml``) and the general-medicine drugs of
``rules/twin/medications.yaml`` name a few hundred drugs; a note may name any of thousands. The offline dictionary
of the ``drug-named-entity-recognition`` package (MIT; DrugBank open data CC0, MedlinePlus, NHS, MeSH) names
generic and brand names of about 20,000 substances. Only its data file is read, never its code (which reads a
cache in the home folder and may call web services): nothing here touches the network.

The ``fallback_vocabulary`` section of the medication lexicon says which of its names are read, because most are
not drug names in a clinical note: laboratory analytes and enzymes ("SGOT", "plasmin"), elements ("einsteinium"),
common words ("iron", "lead", "sodium", "oxygen") and substances of abuse. A name is read only when

* its substance is a clinical drug: the dictionary cites it to one of the ``sources`` (a MedlinePlus drug page or
  an NHS medicines page; DrugBank or MeSH alone also list research compounds and analytes);
* it has at most ``max_tokens`` words and at least ``min_chars`` characters;
* it is not an English word of the ``english_words`` lists (a brand or trivial name that is a dictionary word,
  "emend", "luminal", "copal", is too ambiguous to read without the curated lexicon) unless it is the substance's
  own name (an old dictionary also lists "papaverine" and "quinidine", and an excluded word is excluded anyway),
  nor a first or last name, nor one of ``exclude``; and its substance's name is none of ``exclude`` either;
* no curated or general-medicine drug already owns it (those are read first and keep their class).

A name that passes is indexed under the substance's name (its id the name in snake case), so a brand the curated
lexicon lacks but whose generic it lists ("Zuplenz" for ondansetron) takes the curated entry's id and class.
"""

from __future__ import annotations

import bz2
import pickle
import re
from collections.abc import Iterable
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: The data file of the package, next to its modules.
_DATA_FILE = "drug_ner_dictionary.pkl.bz2"

#: A substance name that renders as one drug: letters, digits, spaces, hyphens, slashes (no list punctuation).
_PLAIN_NAME = re.compile(r"^[a-z0-9][a-z0-9 /-]*[a-z0-9]$")


class FallbackVocabulary(BaseModel):
    """The ``fallback_vocabulary`` section of the medication lexicon."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    package: str = Field(pattern=r"^[a-z_][a-z0-9_]*$")
    source: str | None = None
    sources: tuple[str, ...] = Field(min_length=1)
    min_chars: int = Field(ge=3)
    max_tokens: int = Field(ge=1, le=4)
    english_words: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    note: str | None = None


@lru_cache(maxsize=2)
def _dictionary(package: str) -> dict[str, Any] | None:
    """The package's dictionary, or None where it is not installed (the fallback then reads nothing)."""
    try:
        spec = find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / _DATA_FILE
    if not path.is_file():
        return None
    with bz2.open(path, "rb") as fh:
        # the installed package's own data file, loaded as its own code loads it
        data = pickle.load(fh)
    return data if isinstance(data, dict) else None


@lru_cache(maxsize=2)
def _english(lists: tuple[str, ...]) -> frozenset[str]:
    if not lists:
        return frozenset()
    from english_words import get_english_words_set

    return frozenset(get_english_words_set(list(lists), lower=True))


@lru_cache(maxsize=1)
def _person_names() -> frozenset[str]:
    from anonpsy.phi.recognizers import faker_names

    first, last = faker_names(("en_US", "en_GB"))
    return first | last


def slug(name: str) -> str:
    """The id of a substance name ("potassium chloride" -> ``potassium_chloride``)."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


@lru_cache(maxsize=2)
def fallback_names(config: FallbackVocabulary) -> tuple[tuple[str, str], ...]:
    """(written form, substance name) pairs the fallback reads, in a stable order; empty without the package."""
    data = _dictionary(config.package)
    if data is None:
        return ()
    variants: dict[str, list[str]] = data.get("drug_variant_to_canonical") or {}
    canon: dict[str, dict[str, Any]] = data.get("drug_canonical_to_data") or {}
    english = _english(config.english_words)
    people = _person_names()
    excluded = {e.lower() for e in config.exclude}
    out: list[tuple[str, str]] = []
    for variant in sorted(variants):
        form = " ".join(variant.split())
        if len(form) < config.min_chars or len(form.split()) > config.max_tokens:
            continue
        if not re.fullmatch(r"[a-z][a-z0-9 -]*[a-z0-9]", form) or form in excluded \
                or any(t.isdigit() for t in re.split(r"[ -]", form)):
            continue
        if form in people:
            continue
        names = sorted(c for c in variants[variant]
                       if any(canon.get(c, {}).get(s) for s in config.sources) and _PLAIN_NAME.match(c)
                       and c not in excluded)
        if form in english and form not in names:
            continue
        if names:
            out.append((form, names[0]))
    return tuple(out)


def fallback_specs(config: FallbackVocabulary, taken: Iterable[tuple[str, ...]],
                   keys: Any) -> list[tuple[str, str, str]]:
    """(id, headword, written form) of the fallback names whose token keys (``keys(form)``) are not ``taken``."""
    owned = set(taken)
    out: list[tuple[str, str, str]] = []
    for form, name in fallback_names(config):
        key = keys(form)
        if not key or key in owned:
            continue
        owned.add(key)
        out.append((slug(name), name, form))
    return out
