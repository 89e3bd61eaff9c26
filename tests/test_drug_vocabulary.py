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
    """A fallback name is no English dictionary word, no excluded word, and long enough; its id is its substance."""
    from anonpsy.drug_vocabulary import _english, _person_names

    assert _CONFIG is not None
    form, name = pair
    assert len(form) >= _CONFIG.min_chars and len(form.split()) <= _CONFIG.max_tokens
    assert form not in _english(_CONFIG.english_words) and form not in _person_names()
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
