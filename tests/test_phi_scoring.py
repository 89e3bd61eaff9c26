"""Coverage scoring and the PhysioNet reader, pinned on small hand-made examples.

The PhysioNet-style records below are written for this test (look-alike ICU nursing lines with invented names);
the shared dev half of the PhysioNet deid corpus (GPL-2.0, ../shared/data/physionet-deid-dev) is read only at
test time and skipped when absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import example, given
from hypothesis import strategies as st
from tests.strategies import span_sets

from anonpsy.errors import AnonpsyError
from anonpsy.phi import readers
from anonpsy.phi.cli import mask_eval
from anonpsy.phi.readers import Document, GoldSpan
from anonpsy.phi.scoring import covered_chars, deid_stat, score_coverage

ROOT = Path(__file__).resolve().parents[1]
PHYSIONET = ROOT.parent / "shared" / "data" / "physionet-deid-dev"

TEXT = (
    "START_OF_RECORD=7||||1||||\n"
    "PT SEEN BY DR ORLOWSKI 7/22. TO WESTBROOK HOSPITAL.\n"
    "||||END_OF_RECORD\n"
    "START_OF_RECORD=7||||2||||\n"
    "son mika called, dr abernathy aware.\n"
    "||||END_OF_RECORD\n"
    "START_OF_RECORD=9||||1||||\n"
    "no events overnoc.\n"
    "||||END_OF_RECORD\n"
)
PHRASES = (
    "7 1 14 22 HCPName ORLOWSKI\n"
    "7 1 23 27 Date 7/22\n"
    "7 1 32 41 Location WESTBROOK\n"
    "7 2 4 8 RelativeProxyName mika\n"
    "7 2 20 29 HCPName abernathy\n"
)


def _docs() -> list[Document]:
    return readers.parse_physionet(TEXT, PHRASES)


def _pred(doc: Document, *spans: tuple[int, int]) -> Document:
    return Document(doc.id, doc.text, tuple(GoldSpan(a, b, "X") for a, b in spans))


def test_physionet_reader_keeps_offsets_labels_and_empty_notes() -> None:
    docs = _docs()
    assert [d.id for d in docs] == ["7-1", "7-2", "9-1"]
    first = docs[0]
    assert [first.text[s.start : s.end] for s in first.spans] == ["ORLOWSKI", "7/22", "WESTBROOK"]
    assert [(s.type, s.label) for s in first.spans] == [
        ("PERSON", "HCPName"),
        ("DATE", "Date"),
        ("LOCATION", "Location"),
    ]
    assert docs[2].spans == ()


def test_physionet_reader_refuses_a_phrase_that_does_not_match() -> None:
    with pytest.raises(AnonpsyError, match="M104") as err:
        readers.parse_physionet(TEXT, "7 1 14 22 HCPName ORLOWSKY\n")
    assert "ORLOWSK" not in str(err.value)  # the error names the line, never the identifier


def test_deid_stat_pm_scoring_pinned() -> None:
    """Sensitivity and PPV as stat.pm prints them, with its closed-interval overlap.

    Gold: 5 spans. Predictions: ORLOWSKI exactly (tp), "7/2" inside 7/22 (tp), a span that ends where
    WESTBROOK starts (stat.pm counts a touch as overlap: tp), nothing on "mika" (fn), "abernathy aware"
    (tp), plus "PT" and "events" overlapping nothing (fp). Sensitivity 4/5 = 0.8, PPV 4/6 = 0.667 (half up).
    """
    d1, d2, d3 = _docs()
    preds = [
        _pred(d1, (14, 22), (23, 26), (29, 32), (0, 2)),
        _pred(d2, (20, 35)),
        _pred(d3, (3, 9)),
    ]
    stat = deid_stat([d1, d2, d3], preds)
    assert (stat.true_positives, stat.false_positives, stat.false_negatives) == (4, 2, 1)
    assert stat.sensitivity == 0.8
    assert stat.ppv == 0.667
    # The coverage scorer is stricter where it should be: the touching span hides nothing of WESTBROOK.
    cov = score_coverage([d1, d2, d3], preds)
    assert cov.overlapped == 3 and cov.detected == 3 and cov.strict == 2
    assert cov.predicted_correct == 3 and cov.predicted == 6
    assert cov.documents_with_gold == 2 and cov.documents_clean == 0
    assert cov.documents_without_gold_masked == 1
    assert cov.leaking_by_label() == {"Location": ["7-1"], "RelativeProxyName": ["7-2"]}


def test_coverage_half_of_the_characters_is_the_line() -> None:
    d1 = _docs()[0]
    text = d1.text
    assert covered_chars(text, 14, 22, [(14, 18)]) == 4  # ORLO of ORLOWSKI: 4 of 8
    half = score_coverage([d1], [_pred(d1, (14, 18), (23, 27), (32, 41))])
    less = score_coverage([d1], [_pred(d1, (14, 17), (23, 27), (32, 41))])
    assert half.detected == 3 and half.strict == 2 and half.all_or_nothing == 1.0
    assert less.detected == 2 and less.all_or_nothing == 0.0
    assert less.leaks[0].label == "HCPName" and less.leaks[0].coverage == 0.375
    d = half.as_dict()
    assert d["char_recall"] == round(17 / 21, 4)  # 8 + 4 + 9 gold characters, 4 of ORLOWSKI missing
    assert d["char_precision"] == 1.0


def test_a_longer_masked_phrase_still_counts_for_its_gold_word() -> None:
    """The gold marks WESTBROOK; masking WESTBROOK HOSPITAL covers it fully and is one correct prediction."""
    d1 = _docs()[0]
    cov = score_coverage([d1], [_pred(d1, (32, 50))])
    assert cov.strict == 1 and cov.predicted_correct == 1
    assert cov.as_dict()["char_precision"] == round(9 / 17, 4)


def test_mask_eval_physionet_end_to_end(tmp_path: Path) -> None:
    (tmp_path / "id.text").write_text(TEXT, encoding="utf-8")
    (tmp_path / "id-phi.phrase").write_text(PHRASES, encoding="utf-8")
    result = CliRunner().invoke(mask_eval, [str(tmp_path), "--format", "physionet", "--json", "-"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["gold"] == 5 and data["documents"] == 3
    assert set(data["per_label"]) == {"HCPName", "Date", "Location", "RelativeProxyName"}
    assert "deid_stat" in data and 0.0 <= data["recall"] <= 1.0
    assert all(set(leak) == {"document", "label", "start", "end", "coverage"} for leak in data["leaks"])


def test_mask_eval_physionet_missing_span_file(tmp_path: Path) -> None:
    (tmp_path / "id.text").write_text(TEXT, encoding="utf-8")
    result = CliRunner().invoke(mask_eval, [str(tmp_path), "--format", "physionet"])
    assert result.exit_code == 2
    assert result.output.startswith("M104") or "M104" in result.output


@pytest.mark.skipif(not PHYSIONET.is_dir(), reason=f"PhysioNet deid dev half absent at {PHYSIONET}")
def test_shared_physionet_dev_half_reads() -> None:
    docs = readers.read_physionet(PHYSIONET)
    assert len(docs) == 1450
    assert sum(len(d.spans) for d in docs) == 999


@st.composite
def _scored(draw: st.DrawFn) -> tuple[Document, Document]:
    text = draw(st.text(alphabet="ab .\n", min_size=1, max_size=40))
    gold = draw(span_sets(len(text)))
    pred = draw(span_sets(len(text)))
    return (
        Document("d", text, tuple(GoldSpan(a, b, "X") for a, b in gold)),
        Document("d", text, tuple(GoldSpan(a, b, "X") for a, b in pred)),
    )


@given(_scored())
@example((Document("d", "ab ab", (GoldSpan(0, 2, "X"),)), Document("d", "ab ab", (GoldSpan(2, 4, "X"),))))
@example((Document("d", " ", (GoldSpan(0, 1, "X"),)), Document("d", " ", ())))  # a gold span of blanks only
def test_coverage_grades_are_nested(pair: tuple[Document, Document]) -> None:
    """Fully covered implies detected implies overlapped; stat.pm's recall is never below the overlap recall."""
    gold, pred = pair
    cov = score_coverage([gold], [pred])
    assert cov.strict <= cov.detected <= cov.overlapped <= cov.gold
    assert cov.chars_gold_covered <= cov.chars_gold and cov.chars_predicted_in_gold <= cov.chars_predicted
    assert deid_stat([gold], [pred]).true_positives >= cov.overlapped
    assert 0.0 <= cov.all_or_nothing <= 1.0


@pytest.mark.skipif(not PHYSIONET.is_dir(), reason=f"PhysioNet deid dev half absent at {PHYSIONET}")
def test_physionet_dev_half_floor() -> None:
    """Rules only, default policy, on the dev half: a floor under today's figures so regressions show."""
    from anonpsy.phi.cli import _predict

    docs = readers.read_physionet(PHYSIONET)
    preds = _predict(docs, None, "error", 150, 30, 2)
    cov = score_coverage(docs, preds)
    print(
        f"\n  PhysioNet dev half: recall {cov.recall:.4f}, strict {cov.strict_recall:.4f}, "
        f"precision {cov.precision:.4f}, all-or-nothing {cov.all_or_nothing:.4f}"
    )
    assert cov.recall >= 0.975
    assert cov.precision >= 0.88
    assert cov.all_or_nothing >= 0.95
