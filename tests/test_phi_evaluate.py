"""Evaluation metrics and corpus readers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anonpsy.errors import AnonpsyError
from anonpsy.phi import readers
from anonpsy.phi.evaluate import evaluate, match_lenient, render_table, token_coverage
from anonpsy.phi.readers import Document, GoldSpan

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures" / "phi"
SHARED = ROOT.parent / "shared" / "data"

TEXT = "Adam Wilson met Beth at Methodist Hospital on March 5, 2021."


def _doc(spans: list[tuple[int, int, str]], doc_id: str = "d1", text: str = TEXT) -> Document:
    return Document(doc_id, text, tuple(GoldSpan(*s) for s in spans))


GOLD = [(0, 11, "PERSON"), (16, 20, "PERSON"), (24, 42, "ORGANIZATION"), (46, 59, "DATE")]


def test_perfect_prediction() -> None:
    rep = evaluate([_doc(GOLD)], [_doc(GOLD)])
    d = rep.as_dict()
    for key in ("lenient", "lenient_typed", "strict", "strict_typed"):
        assert d[key]["f1"] == 1.0
    assert d["token_recall"] == 1.0 and d["all_or_nothing_recall"] == 1.0


def test_lenient_vs_strict_and_typed() -> None:
    pred = [(5, 11, "PERSON"), (16, 20, "LOCATION"), (24, 33, "ORGANIZATION")]
    rep = evaluate([_doc(GOLD)], [_doc(pred)])
    # "Wilson" vs "Adam Wilson": similarity 6/11 < 0.6 → no lenient match; "Beth" matches untyped only;
    # "Methodist" vs "Methodist Hospital": 0.5 → no match.
    assert rep.lenient.tp_gold == 1 and rep.lenient_typed.tp_gold == 0
    assert rep.strict.tp_gold == 1 and rep.strict_typed.tp_gold == 0
    assert rep.lenient.precision == pytest.approx(1 / 3)
    assert rep.all_or_nothing_recall == 0.0


def test_similarity_threshold() -> None:
    gold = [GoldSpan(0, 11, "PERSON")]
    assert match_lenient(TEXT, gold, [GoldSpan(0, 9, "PERSON")], type_aware=True) == [(0, 0)]  # 9/11
    assert match_lenient(TEXT, gold, [GoldSpan(0, 4, "PERSON")], type_aware=True) == []  # 4/11


def test_token_recall_and_per_type_all_or_nothing() -> None:
    pred = [(0, 11, "PERSON"), (24, 42, "ORGANIZATION")]
    rep = evaluate([_doc(GOLD)], [_doc(pred)])
    assert token_coverage(TEXT, [GoldSpan(*g) for g in GOLD], [GoldSpan(*p) for p in pred]) == (4, 8)
    assert rep.token_recall == 0.5
    d = rep.as_dict()["all_or_nothing_recall_per_type"]
    assert d == {"DATE": 0.0, "ORGANIZATION": 1.0, "PERSON": 0.0}


def test_overmasking_of_documents_without_phi() -> None:
    rep = evaluate([_doc([], "d2")], [_doc([(0, 4, "PERSON")], "d2")])
    assert rep.docs_without_gold == 1 and rep.docs_overmasked == 1
    assert rep.docs_overmasked_safe_harbor == 1


def test_a_masked_year_or_young_age_is_over_masking_but_no_safe_harbor_identifier() -> None:
    text = "Guidance for a 55-year-old diagnosed in 2021, seen on March 5, 2021."
    year = (text.index("2021"), text.index("2021") + 4, "DATE")
    age = (text.index("55"), text.index("55") + 2, "AGE")
    full = (text.index("March"), text.index("March") + 13, "DATE")
    rep = evaluate([_doc([], "a", text), _doc([], "b", text)], [_doc([year, age], "a", text), _doc([full], "b", text)])
    assert rep.docs_overmasked == 2 and rep.docs_overmasked_safe_harbor == 1
    assert rep.as_dict()["documents_overmasked_safe_harbor"] == 1


def test_missing_prediction_and_out_of_bounds() -> None:
    with pytest.raises(AnonpsyError) as err:
        evaluate([_doc(GOLD)], [])
    assert err.value.code == "M104"
    with pytest.raises(AnonpsyError):
        evaluate([_doc(GOLD)], [_doc([(0, 999, "PERSON")])])


def test_table_renders() -> None:
    from rich.console import Console

    console = Console(record=True, width=110)
    console.print(render_table(evaluate([_doc(GOLD)], [_doc(GOLD)])))
    assert "lenient (type-agnostic)" in console.export_text()


def test_read_jsonl_and_brat_fixtures() -> None:
    docs = readers.read_documents(FIX / "gold.jsonl", "jsonl")
    assert [d.id for d in docs] == ["note-001", "note-002", "note-003"]
    brat = readers.read_documents(FIX / "brat", "brat")
    assert brat[0].text == docs[0].text
    assert brat[0].spans == docs[0].spans  # i2b2-style labels map onto the same types
    assert readers.parse_span_jsonl(readers.to_span_jsonl(docs)) == docs


def test_read_asq_inline() -> None:
    text = (
        "===QUERY===\nIs Anna S. seen at Methodist Hospital on April 12, 2023? Anna S. agreed.\n"
        "===PHI_TAGS===\n"
        '{"identifier_type": "NAME", "value": "Anna S."}\n'
        '{"identifier_type": "NAME", "value": "Anna S."}\n'
        '{"identifier_type": "GEOGRAPHIC_LOCATION", "value": "Methodist Hospital"}\n\n'
        "===QUERY===\nNo PHI here.\n===PHI_TAGS===\n\n"
    )
    docs = readers.parse_asq(text)
    assert len(docs) == 2 and docs[1].spans == ()
    spans = docs[0].spans
    assert [(docs[0].text[s.start : s.end], s.type) for s in spans] == [
        ("Anna S.", "PERSON"),
        ("Methodist Hospital", "LOCATION"),
        ("Anna S.", "PERSON"),
    ]


def test_read_presidio_inline() -> None:
    data = [
        {
            "full_text": "Call Jo at 555-0100",
            "spans": [
                {"entity_type": "PERSON", "entity_value": "Jo", "start_position": 5, "end_position": 7},
                {"entity_type": "TITLE", "entity_value": "x", "start_position": 0, "end_position": 4},
            ],
        }
    ]
    docs = readers.parse_presidio(json.dumps(data))
    assert docs[0].spans == (GoldSpan(5, 7, "PERSON"),)


def test_unknown_label_is_an_error() -> None:
    with pytest.raises(AnonpsyError) as err:
        readers.map_type("WHATEVER")
    assert err.value.code == "M104"


@pytest.mark.skipif(
    not (SHARED / "asq-phi-dev" / "queries.txt").is_file(), reason="shared asq-phi data absent"
)
def test_shared_asq_corpus_reads() -> None:
    docs = readers.read_documents(SHARED / "asq-phi-dev" / "queries.txt", "asq")
    assert len(docs) == 526
    assert sum(len(d.spans) for d in docs) > 1000
    assert sum(1 for d in docs if not d.spans) > 0


@pytest.mark.skipif(not (SHARED / "presidio-synth").is_dir(), reason="shared presidio data absent")
def test_shared_presidio_corpus_reads() -> None:
    docs = readers.read_documents(SHARED / "presidio-synth" / "synth_dataset_v2.json", "presidio")
    assert len(docs) == 1500
    for d in docs[:200]:
        for s in d.spans:
            assert 0 <= s.start < s.end <= len(d.text)
