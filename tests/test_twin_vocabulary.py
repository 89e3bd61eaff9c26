"""The general clinical vocabulary of RecordTwin tables (rules/twin): ICD-10-CM categories with their block and
chapter, drugs with class and ATC group, procedures with body system, tests with category, and its matcher."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("simple_icd_10_cm", reason="needs the twin extra: pip install 'anonpsy[twin]'")
from hypothesis import example, given
from tests.strategies import general_clinical_texts

from anonpsy import lexicon
from anonpsy.errors import AnonpsyError
from anonpsy.twin import vocabulary as v
from anonpsy.twin.icd10cm import paren_forms
from anonpsy.twin.mentions import default_hierarchy, matcher

H = default_hierarchy()


def _names(cid: str) -> list[tuple[str, str]]:
    return [(x, H.name(x)) for x in H.lineage(cid)]


def test_icd_category_generalises_to_block_then_chapter() -> None:
    assert _names("dx:E11") == [("dx:E11", "diabetes mellitus"),
                                ("dx.block:E08-E13", "unspecified diabetes mellitus"),
                                ("dx.icd:4", "unspecified endocrine, nutritional or metabolic disease")]
    assert [x for x, _ in _names("sx:R07")] == ["sx:R07", "sx.block:R00-R09", "sx.icd:18"]
    assert H.type_of("sx:R07") == "symptom" and H.type_of("dx:I10") == "diagnosis"


def test_drugs_procedures_and_tests_have_their_groups() -> None:
    assert [x for x, _ in _names("rx:propofol")] == ["rx:propofol", "rx.class:general_anaesthetic", "rx.atc:nervous",
                                                     "rx.group:other"]
    # a non-psychotropic class of the project's lexicon hangs under its ATC group; psychotropics keep theirs
    assert "rx.atc:cardiovascular" in H.lineage("rx:lisinopril")
    assert not any(x.startswith("rx.atc:") for x in H.lineage("rx:sertraline"))
    assert [x for x, _ in _names("px:cholecystectomy")] == ["px:cholecystectomy", "px.system:digestive", "px.root"]
    assert [x for x, _ in _names("test:mri")] == ["test:mri", "test.category:imaging"]


def test_mental_disorders_stay_with_the_dsm_rules() -> None:
    vocab = v.load_vocabulary()
    assert not any(n.id.startswith(("dx:F", "dx.icd:5", "dx.block:F")) for n in vocab.nodes)
    spans = {s.concept for s in matcher().spans("Major depressive disorder and type 2 diabetes mellitus.")}
    assert "dx:E11" in spans and not any(c.startswith("dx:F") for c in spans)


def test_general_medicine_note_is_read_in_capitals_and_shorthand() -> None:
    text = "PAST SURGICAL HISTORY: Lap chole. PMH: HTN, CAD s/p MI. CXR clear. Ancef 1 g IV."
    got = [(text[s.start:s.end], s.concept) for s in matcher().spans(text)]
    assert got == [("Lap chole", "px:cholecystectomy"), ("HTN", "dx:I10"), ("CAD", "dx:I25"), ("MI", "dx:I21"),
                   ("CXR", "test:chest_xray"), ("Ancef", "rx:cefazolin")]


def test_lookalike_is_not_the_lexicon_concept() -> None:
    text = "The scope was then withdrawn. She has become withdrawn and tearful."
    got = [(s.start, s.concept) for s in matcher().spans(text)]
    assert got == [(text.rindex("withdrawn"), "sx:social_withdrawal"), (text.index("tearful"), "sx:tearfulness")]


def test_nonessential_modifiers_and_generalisation_names() -> None:
    assert paren_forms("Essential (primary) hypertension") == ["Essential hypertension",
                                                               "Essential primary hypertension"]
    assert v.general_name("Hypertensive diseases") == "unspecified hypertensive disease"
    assert v.general_name("Endocrine, nutritional and metabolic diseases") == (
        "unspecified endocrine, nutritional or metabolic disease")


@given(general_clinical_texts())
@example("HISTORY OF HTN , CHEST PAIN")
@example("echo echogenic ECHO")
@example("(lap chole)")
def test_vocabulary_hits_are_token_aligned_and_disjoint(text: str) -> None:
    hits = v.phrase_matcher().find(text)
    starts = {t.start for t in lexicon.tokenize(text)}
    ends = {t.end for t in lexicon.tokenize(text)}
    for a, b in itertools.pairwise(hits):
        assert a.end <= b.start
    for h in hits:
        assert h.start in starts and h.end in ends and h.concept in H


def test_damaged_cache_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANONPSY_CACHE_DIR", str(tmp_path))
    path = v.cache_dir() / f"vocabulary-{v.cache_key()[:16]}.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    built = v.load_vocabulary.__wrapped__(None)
    assert len(built.entries) == len(v.load_vocabulary().entries) > 1000
    assert json.loads(path.read_text(encoding="utf-8"))["stats"] == built.stats


def test_missing_matcher_library_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ahocorasick", None)
    with pytest.raises(AnonpsyError) as err:
        v.PhraseMatcher([])
    # a core dependency: a broken install, not a missing extra
    assert err.value.code == "E100" and "pyahocorasick" in str(err.value) and "\n" not in str(err.value)


def test_vocabulary_concepts_are_named_with_a_form_read_as_themselves() -> None:
    """A name that a project lexicon reads first ("fatigue" for R53) would make a generated document name the
    project's concept; every vocabulary concept that text can name at all is named by a form read as itself."""
    m = matcher()
    forms = {e.id: (*e.surfaces, *e.abbreviations) for e in v.load_vocabulary().entries}
    reads = lambda s: [(x.start, x.end, x.concept) for x in m.spans(s)]  # noqa: E731
    for cid, fs in forms.items():
        if cid in H and any(reads(f) == [(0, len(f), cid)] for f in fs):
            assert reads(H.name(cid)) == [(0, len(H.name(cid)), cid)], cid
    assert H.name("sx:R53") != "fatigue" and reads(H.name("sx:R53")) == [(0, len(H.name("sx:R53")), "sx:R53")]
