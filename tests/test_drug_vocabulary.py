"""The fallback drug vocabulary (``fallback_vocabulary`` of the medication lexicon, :mod:`anonpsy.drug_vocabulary`)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from anonpsy import lexicon as lx
from anonpsy.drug_vocabulary import FallbackVocabulary, fallback_names, slug
from anonpsy.extract.mentions.treatments import medication_mentions

_CONFIG = lx.medication_lexicon().fallback_vocabulary
pytestmark = pytest.mark.skipif(_CONFIG is None or not fallback_names(_CONFIG),
                                reason="the drug dictionary package is not installed")

_CURATED = sorted({e.headword for e in lx.medication_lexicon().rules})
_FALLBACK = list(fallback_names(_CONFIG)) if _CONFIG is not None else []


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_CURATED))
@example("potassium chloride")
def test_fallback_never_shadows_a_curated_name(name: str) -> None:
    """A name the curated lexicon lists is read as its curated entry, never as a fallback name."""
    ids = {e.id for e in lx.medication_lexicon().rules if e.headword == name}
    hits = lx.find_terms(name, "medication")
    assert hits and hits[0].start == 0 and hits[0].id in ids


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(_FALLBACK or [("x", "x")]))
def test_fallback_names_are_no_common_or_person_words(pair: tuple[str, str]) -> None:
    """A fallback name is no English dictionary word (unless it is the substance's own name), no excluded word,
    and long enough; its id is its substance."""
    from anonpsy.drug_vocabulary import _english, _person_names

    assert _CONFIG is not None
    form, name = pair
    assert len(form) >= _CONFIG.min_chars and len(form.split()) <= _CONFIG.max_tokens
    assert (form not in _english(_CONFIG.english_words) or form == name) and form not in _person_names()
    assert form not in {e.lower() for e in _CONFIG.exclude} and name not in {e.lower() for e in _CONFIG.exclude}
    assert slug(name) and "," not in name


def test_fallback_reads_nothing_without_the_package() -> None:
    assert _CONFIG is not None
    missing = FallbackVocabulary(**{**_CONFIG.model_dump(), "package": "no_such_drug_dictionary_package"})
    assert fallback_names(missing) == ()


@pytest.mark.parametrize(("text", "want"), [
    ("Zuplenz 8 mg for nausea", ["ondansetron"]),
    ("iron deficiency anemia; oxygen saturation 97%; sodium 139", []),
    ("urine drug screen positive for cocaine", []),
])
def test_fallback_in_medication_mentions(text: str, want: list[str]) -> None:
    assert [m.id for m in medication_mentions(text)] == want


def _formulations() -> list[tuple[str, str]]:
    """(dictionary form, listed drug id) of the fallback forms that are a formulation of a listed drug."""
    listed = {lx._keys(e.headword): e.id for e in lx.medication_lexicon().rules}
    specs = [*lx.specs_for("medication", lx.load_doc("medications"), with_fallback=False),
             *lx.general_medicine_specs()]
    owned = {lx._keys(f) for sp in specs for surface in (*sp.surfaces, *sp.excludes) for f in lx.expand_phrase(surface)}
    out = []
    for form, name in _FALLBACK:
        key, sub = lx._keys(form), lx._keys(name)
        if {"and", "with", "plus"} & set(key) or key in owned:
            continue
        heads = [(head, drug) for head, drug in listed.items()
                 if len(head) < len(key) and any(key[a:a + len(head)] == head for a in range(len(key)))]
        runs = [key[a:b] for a in range(len(key)) for b in range(a + 1, len(key) + 1) if key[a:b] in owned]
        if len(heads) == 1 and len(runs) == 1 and sub[:len(heads[0][0])] == heads[0][0]:
            out.append((form, heads[0][1]))
    return out


_FORMULATIONS = _formulations()


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_FORMULATIONS or [("", "")]))
@example(("lidocaine patch", "lidocaine"))
def test_a_dictionary_formulation_of_a_listed_drug_keeps_the_listed_entry(pair: tuple[str, str]) -> None:
    """A longer dictionary form that is a formulation of a listed drug ("diclofenac patch") is read as the listed
    drug's entry, not as a substance of its own; the form itself is the surface."""
    form, drug = pair
    if not form:
        return
    hits = lx.find_terms(f"She uses {form} daily.", "medication")
    assert [h.id for h in hits] == [drug], (form, hits)


@pytest.mark.parametrize(("text", "want"), [
    ("lidocaine patch to the left knee", [("lidocaine patch", "lidocaine")]),
    ("diclofenac patch to the shoulder", [("diclofenac patch", "diclofenac")]),
    # a different substance that only contains the name, and a combination product, keep their own
    ("iron sucrose infusion", [("iron sucrose", "iron_sucrose")]),
    ("ampicillin and sulbactam IV", [("ampicillin and sulbactam", "ampicillin_and_sulbactam")]),
    # a drug's own name is read even where an old dictionary lists it as a word; a brand that is a word is not
    ("papaverine as needed for headache", [("papaverine", "papaverine")]),
    ("She will emend the form.", []),
])
def test_fallback_forms_of_listed_drugs_and_dictionary_words(text: str, want: list[tuple[str, str]]) -> None:
    assert [(m.surface, m.id) for m in lx.find_terms(text, "medication")] == want
