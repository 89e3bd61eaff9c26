"""Failure semantics of the ``llm`` backend: every fault recovers or ends the case loudly with no output file."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from anonpsy import pipeline
from anonpsy.cli import main
from anonpsy.llm import LLMClient
from anonpsy.llm_backend.perturb_llm import embedding_similarity
from anonpsy.testing import Fault, ScriptedOpenAIServer
from llm_replies.harness import CASES, config, write_config
from llm_replies.responder import Responder, extract_symptoms


@pytest.fixture(autouse=True)
def _no_embedding_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The sentence-embedding filter is exercised in the unit tests with a fake encoder, not loaded here."""
    monkeypatch.setenv("ANONPSY_LLM_EMBEDDINGS", "0")
    embedding_similarity.cache_clear()
    yield
    embedding_similarity.cache_clear()


CASE = next(p for p in CASES if p.stem == "06_schizophrenia_ed")
IDENTIFIERS = ("Okonkwo", "Renee Banks", "77102934", "Tacoma")
INVENTED = "The patient was seen skydiving over the lake with a parrot."


def _invent_once(inp: dict[str, Any], feedback: str, n: int) -> dict[str, Any]:
    reply = extract_symptoms(inp)
    if n == 0:
        reply["symptoms"][0]["evidence_text"] = INVENTED
    return reply


def _invent_always(inp: dict[str, Any], feedback: str, n: int) -> dict[str, Any]:
    reply = extract_symptoms(inp)
    reply["symptoms"][0]["evidence_text"] = INVENTED
    return reply


def _deid(tmp_path: Path, srv: ScriptedOpenAIServer, *extra: str) -> tuple[Any, Path]:
    cfg = write_config(tmp_path / "llm.yaml", srv)
    out = tmp_path / "out.txt"
    res = CliRunner().invoke(
        main,
        [
            "deid",
            str(CASE),
            "--backend",
            "llm",
            "--llm-config",
            str(cfg),
            "--seed",
            "9",
            "-o",
            str(out),
            "--emit",
            str(tmp_path / "emit"),
            *extra,
        ],
    )
    return res, out


RECOVERABLE = {
    "http_500": [Fault("http_500", template="extract_symptoms", times=1)],
    "rate_limit": [Fault("rate_limit", template="extract_case", times=2, retry_after="0")],
    "read_timeout": [Fault("timeout", template="extract_visit", times=1, delay=1.0)],
    "malformed_json": [Fault("malformed_json", template="generate_lead", times=1)],
    "schema_violation": [Fault("schema_violation", template="extract_diagnoses", times=1)],
    "empty_content": [Fault("empty", template="generate_block", times=1)],
    "p_step_invalid_twice": [Fault("schema_violation", template="perturb_steb", times=None)],
}


@pytest.mark.parametrize("name", sorted(RECOVERABLE))
def test_recoverable_faults_recover(tmp_path: Path, name: str) -> None:
    faults = RECOVERABLE[name]
    with ScriptedOpenAIServer(responder=Responder(), faults=faults) as srv:
        res, out = _deid(tmp_path, srv)
    for _ in range(50):  # a timed-out request is logged once the server's delay is cut short
        if any(r.fault for r in srv.chat_requests):
            break
        time.sleep(0.02)
    assert any(r.fault for r in srv.chat_requests), "the fault was never served"
    assert res.exit_code in (0, 1), res.output
    assert out.is_file() and out.read_text(encoding="utf-8").strip()
    audit = json.loads((tmp_path / "emit" / f"{CASE.stem}.audit.json").read_text(encoding="utf-8"))
    assert audit["violations"] == []
    if name == "p_step_invalid_twice":
        assert any(n.startswith("P_STEB_FALLBACK") for n in audit["notes"]) and audit["generalized"]


def test_invented_evidence_is_reasked_once(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(responder=Responder({"extract_symptoms": _invent_once})) as srv:
        res, out = _deid(tmp_path, srv)
        asks = len(srv.requests_for("extract_symptoms"))
    assert res.exit_code in (0, 1) and out.is_file()
    assert asks == 2
    audit = json.loads((tmp_path / "emit" / f"{CASE.stem}.audit.json").read_text(encoding="utf-8"))
    assert not any(n.startswith("E_EVIDENCE_DROPPED") for n in audit["notes"])


def test_persistently_invented_evidence_drops_the_item_with_a_note(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(responder=Responder({"extract_symptoms": _invent_always})) as srv:
        res, out = _deid(tmp_path, srv)
    assert res.exit_code in (0, 1) and out.is_file()
    audit = json.loads((tmp_path / "emit" / f"{CASE.stem}.audit.json").read_text(encoding="utf-8"))
    dropped = [n for n in audit["notes"] if n.startswith("E_EVIDENCE_DROPPED extract_symptoms symptoms[0]")]
    assert dropped and INVENTED not in json.dumps(audit["notes"])


FATAL = {
    "http_500": ([Fault("http_500", template="extract_symptoms", times=None)], "E124"),
    "rate_limit": ([Fault("rate_limit", times=None, retry_after="0")], "E124"),
    "read_timeout": ([Fault("timeout", template="extract_case", times=None, delay=1.0)], "E123"),
    "malformed_json": ([Fault("malformed_json", template="extract_treatments", times=2)], "E125"),
    "schema_violation": ([Fault("schema_violation", template="generate_closing", times=None)], "E125"),
    "empty_content": ([Fault("empty", template="extract_visit", times=None)], "E125"),
}


@pytest.mark.parametrize("name", sorted(FATAL))
def test_unrecoverable_faults_end_the_case_loudly_without_output(tmp_path: Path, name: str) -> None:
    faults, code = FATAL[name]
    with ScriptedOpenAIServer(responder=Responder(), faults=faults) as srv:
        res, out = _deid(tmp_path, srv)
    assert res.exit_code == 2, res.output
    line = res.output.strip().splitlines()[-1]
    assert line.startswith(code)
    assert not any(i in res.output for i in IDENTIFIERS)
    assert not out.exists()
    assert not (tmp_path / "emit").exists()


# -- batch -----------------------------------------------------------------------------------------------------------


def _jsonl(tmp_path: Path, stems: tuple[str, ...]) -> Path:
    src = tmp_path / "cases.jsonl"
    lines = [
        json.dumps({"id": s, "text": next(p for p in CASES if p.stem == s).read_text(encoding="utf-8")})
        for s in stems
    ]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return src


STEMS = ("03_pmdd", "05_erectile_disorder", "06_schizophrenia_ed")


def test_batch_with_faults_resumes_to_completion(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = _jsonl(tmp_path, STEMS)
    outdir = tmp_path / "batch"
    # Two cases exhaust the retries on their first call; the third case goes through.
    faults = [Fault("http_500", template="extract_case", times=6)]
    with ScriptedOpenAIServer(responder=Responder(), faults=faults) as srv, LLMClient(config(srv)) as client:
        real = pipeline.deid_text

        def llm_deid(text: str, **kw: Any) -> Any:
            return real(text, **{**kw, "backend": "llm", "llm": client})

        monkeypatch.setattr(pipeline, "deid_text", llm_deid)
        runner = CliRunner()
        first = runner.invoke(main, ["deid-batch", str(src), "-o", str(outdir), "--no-progress"])
        summary = json.loads((outdir / "summary.json").read_text(encoding="utf-8"))
        assert first.exit_code == 1
        assert summary["failed"] == 2
        failed = [c["case_id"] for c in summary["cases"] if c["status"] == "failed"]
        assert all(c["error"].startswith("E124") for c in summary["cases"] if c["status"] == "failed")
        assert not any((outdir / "cases" / f"{cid}.txt").exists() for cid in failed)
        second = runner.invoke(main, ["deid-batch", str(src), "-o", str(outdir), "--no-progress"])
        summary = json.loads((outdir / "summary.json").read_text(encoding="utf-8"))
    assert summary["processed"] == 2 and summary["skipped"] == 1 and summary["failed"] == 0
    assert all((outdir / "cases" / f"{s}.txt").is_file() for s in STEMS)
    assert second.exit_code in (0, 1)


def test_batch_llm_options_when_available(tmp_path: Path) -> None:
    params = {p.name for p in main.commands["deid-batch"].params}
    if not {"backend", "llm_config"} <= params:
        pytest.skip("deid-batch has no --backend/--llm-config options yet")
    src = _jsonl(tmp_path, STEMS[:2])
    outdir = tmp_path / "batch"
    faults = [Fault("http_500", template="extract_case", times=3)]
    with ScriptedOpenAIServer(responder=Responder(), faults=faults) as srv:
        cfg = write_config(tmp_path / "llm.yaml", srv)
        args = [
            "deid-batch",
            str(src),
            "-o",
            str(outdir),
            "--no-progress",
            "--backend",
            "llm",
            "--llm-config",
            str(cfg),
        ]
        CliRunner().invoke(main, args)
        CliRunner().invoke(main, args)
    summary = json.loads((outdir / "summary.json").read_text(encoding="utf-8"))
    assert summary["failed"] == 0 and all((outdir / "cases" / f"{s}.txt").is_file() for s in STEMS[:2])
