"""`anonpsy evaluate` through the command line (fake encoder; scripted server for the LLM parts)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("scipy", exc_type=ImportError, reason="needs the eval extra: run .ci/eval.sh")
pytest.importorskip("rouge_score", exc_type=ImportError, reason="needs the eval extra: run .ci/eval.sh")
pytest.importorskip("statsmodels", exc_type=ImportError, reason="needs the eval extra: run .ci/eval.sh")

import anonpsy.cli_evaluate  # noqa: F401  (attaches the command to the group)
from anonpsy.cli import main
from anonpsy.testing import ScriptedOpenAIServer
from anonpsy.yamlio import dump_yaml
from test_eval_judge import reply
from test_eval_runner import HashEncoder, copy_cases


@pytest.fixture(autouse=True)
def fake_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    import anonpsy.evaluate.embeddings as emb

    monkeypatch.setattr(emb, "load_encoder", lambda *a, **k: HashEncoder())


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_cases(tmp_path_factory.mktemp("corpus"), ("01_adhd_child", "05_erectile_disorder"))


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(responder=reply) as srv:
        yield srv


def _config(path: Path, srv: ScriptedOpenAIServer) -> Path:
    path.write_text(dump_yaml({"profile": "scripted", "base_url": srv.base_url, "retries": 0, "cache_path": None,
                               "timeouts": {"connect": 1, "read": 2, "write": 1, "pool": 1}}), encoding="utf-8")
    return path


def _one_line_error(stderr: str, code: str) -> None:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(code), stderr


def test_help_documents_the_command_with_an_example() -> None:
    result = CliRunner().invoke(main, ["evaluate", "--help"])
    assert result.exit_code == 0
    for word in ("CORPUS", "--methods", "--llm-config", "--judge / --no-judge", "--encoder", "--limit", "Example:"):
        assert word in result.output


def test_rules_methods_then_a_cached_rerun(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    args = ["evaluate", str(corpus), "--methods", "anonpsy-rules,phi-mask", "-o", str(out), "--seed", "5",
            "--no-figures"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    assert "2 cases × 2 methods: 4 outputs computed, 0 from cache; 0 failures" in first.stdout
    assert "anonpsy-rules: cosine" in first.stdout and "phi-mask: cosine" in first.stdout
    assert {"report.md", "report.json", "results.csv", "evaluation.json", "cache"} <= {p.name for p in out.iterdir()}
    second = CliRunner().invoke(main, args)
    assert second.exit_code == 0
    assert "4 outputs computed" not in second.stdout and "0 outputs computed, 4 from cache" in second.stdout
    data = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))
    assert all(v["misses"] == 0 for v in data["cache"].values()) and data["seed"] == 5
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "| output | 4 | 0 | 0 |" in md


def test_default_methods_skip_the_llm_ones_without_a_server(corpus: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["evaluate", str(corpus), "-o", str(tmp_path), "--limit", "1",
                                       "--no-figures", "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "skipped anonpsy-llm: needs a language-model server (no --llm-config)" in result.stderr
    assert "skipped llm-only" in result.stderr
    data = json.loads((tmp_path / "evaluation.json").read_text(encoding="utf-8"))
    assert data["methods"] == ["anonpsy-rules", "phi-mask"] and data["case_ids"] == ["01_adhd_child"]
    assert [s["method"] for s in data["skipped"]] == ["anonpsy-llm", "llm-only"]
    assert not (tmp_path / "cache").exists()
    assert "skipped anonpsy-llm" in (tmp_path / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--methods", "llm-only"], "E109"),
        (["--methods", "anonpsy-rules", "--judge"], "E109"),
        (["--methods", "anonpsy-rules,bogus"], "E109"),
        (["--methods", "anonpsy-rules", "--reference", "phi-mask"], "E109"),
        (["--methods", "anonpsy-rules", "--limit", "0"], "E109"),
    ],
)
def test_bad_options_are_one_line_errors(corpus: Path, tmp_path: Path, args: list[str], code: str) -> None:
    result = CliRunner().invoke(main, ["evaluate", str(corpus), "-o", str(tmp_path / "r"), *args])
    assert result.exit_code == 2
    _one_line_error(result.stderr, code)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (lambda d: d / "missing", "E100"),
        (lambda d: d, "E101"),
        (lambda d: _write(d / "c.jsonl", "{not json\n"), "E108"),
        (lambda d: _write(d / "c.jsonl", '{"id": 1}\n'), "E103"),
    ],
)
def test_bad_corpus_is_a_one_line_error_exit_2(tmp_path: Path, make: object, code: str) -> None:
    src = tmp_path / "in"
    src.mkdir()
    path = make(src)  # type: ignore[operator]
    result = CliRunner().invoke(main, ["evaluate", str(path), "--methods", "phi-mask", "-o", str(tmp_path / "r")])
    assert result.exit_code == 2
    _one_line_error(result.stderr, code)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_llm_only_and_judge_through_a_config_file(corpus: Path, tmp_path: Path,
                                                  server: ScriptedOpenAIServer) -> None:
    cfg = _config(tmp_path / "llm.yaml", server)
    out = tmp_path / "report"
    result = CliRunner().invoke(main, ["evaluate", str(corpus), "--methods", "phi-mask,llm-only", "--judge",
                                       "--llm-config", str(cfg), "-o", str(out), "--no-figures"])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))
    assert data["judged"] is True and data["failures"] == []
    assert {r["task"] for r in data["judge_records"]} == {"diagnosis", "acceptability", "reident"}
    assert {"judge_soft_f1", "dx_acceptable", "reid_score"} <= set(data["rows"][0])


def test_failures_give_exit_1_and_are_listed(corpus: Path, tmp_path: Path) -> None:
    from anonpsy.testing.openai_server import Fault

    faults = [Fault("schema_violation", template="judge_diagnosis", times=2)]
    with ScriptedOpenAIServer(responder=reply, faults=faults) as srv:
        cfg = _config(tmp_path / "llm.yaml", srv)
        result = CliRunner().invoke(main, ["evaluate", str(corpus), "--methods", "phi-mask", "--judge", "--limit",
                                           "1", "--llm-config", str(cfg), "-o", str(tmp_path / "r"), "--no-figures"])
    assert result.exit_code == 1
    assert "1 failures" in result.stdout
    md = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert "### Failures" in md and "| judge | diagnosis | phi-mask | 01_adhd_child | E125" in md


FACTS = """\
- note_id: 01_adhd_child
  diagnoses:
    - {label: attention-deficit/hyperactivity disorder, mentions: [ADHD], status: affirmed}
  medications: []
  denied: [suicidal ideation]
"""


def test_facts_beside_the_corpus_add_the_independent_fidelity_scores(tmp_path: Path) -> None:
    corpus = copy_cases(tmp_path / "corpus", ("01_adhd_child", "05_erectile_disorder"))
    (corpus / "facts.yaml").write_text(FACTS, encoding="utf-8")
    out = tmp_path / "report"
    result = CliRunner().invoke(main, ["evaluate", str(corpus), "--methods", "anonpsy-rules,phi-mask", "-o",
                                       str(out), "--no-figures", "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "fidelity original: affirmed dx recall" in result.stdout and "fidelity phi-mask:" in result.stdout
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "## Clinical fidelity (facts annotations, independent scorer)" in md and "1 of 2 cases annotated" in md
    assert "| 01_adhd_child | original |" in md and "| 01_adhd_child | anonpsy-rules |" in md
    assert "Round-trip diagnosis soft-F1" in md
    data = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))
    fid = data["fidelity"]["methods"]
    assert set(fid) == {"original", "anonpsy-rules", "phi-mask"}
    assert fid["original"]["cases"]["01_adhd_child"]["affirmed_dx_recall"] == 1.0
    row = next(r for r in data["rows"] if r["case_id"] == "01_adhd_child" and r["method"] == "phi-mask")
    assert {"affirmed_dx_recall", "contradictions", "longest_copied_run", "roundtrip_dx_f1"} <= set(row)


def test_bad_facts_file_is_a_one_line_error(corpus: Path, tmp_path: Path) -> None:
    bad = tmp_path / "facts.yaml"
    bad.write_text(FACTS.replace("status: affirmed", "status: certain"), encoding="utf-8")
    result = CliRunner().invoke(main, ["evaluate", str(corpus), "--methods", "anonpsy-rules", "-o",
                                       str(tmp_path / "r"), "--facts", str(bad)])
    assert result.exit_code == 2
    _one_line_error(result.stderr, "E103 facts.yaml:3:")
    assert "certain" not in result.stderr and not (tmp_path / "r").exists()
