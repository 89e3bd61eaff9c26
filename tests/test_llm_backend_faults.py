"""Failure semantics of the ``llm`` backend: a fault is retried, re-asked, or the rules backend does the failed step
(recorded in the audit); with --strict-llm, or when the server itself is unusable, the case ends loudly with no
output file."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from anonpsy import pipeline
from anonpsy.cli import main
from anonpsy.llm import LLMClient
from anonpsy.testing import Fault, ScriptedOpenAIServer
from llm_replies.harness import CASES, config, write_config
from llm_replies.responder import Responder, extract_symptoms, rules_graph

pytestmark = pytest.mark.usefixtures("no_embedding_model")


CASE = next(p for p in CASES if p.stem == "06_schizophrenia_ed")


@pytest.fixture(autouse=True, scope="module")
def _warm_scripted_model() -> None:
    """The scripted model computes its replies from the rules extraction of the case, once per text: done here,
    so that a busy machine never turns a first reply into an accidental read timeout (timeouts are tested on
    purpose with the server's delay fault)."""
    for p in CASES:
        if p == CASE or p.stem in STEMS:
            rules_graph(p.read_text(encoding="utf-8"))
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


def _audit(tmp_path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tmp_path / "emit" / f"{CASE.stem}.audit.json").read_text(encoding="utf-8"))
    return data


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
    assert res.exit_code == 0, res.output
    assert out.is_file() and out.read_text(encoding="utf-8").strip()
    audit = _audit(tmp_path)
    assert audit["violations"] == []
    if name == "p_step_invalid_twice":
        steps = {f["step"] for f in audit["fallbacks"]}
        assert steps and all(s.startswith("perturb_steb:sx_") for s in steps)
        assert {(f["backend"], f["code"], f["template_id"]) for f in audit["fallbacks"]} == {
            ("rules-fallback", "E125", "perturb_steb")
        }
        assert any(n.startswith("P_STEB_FALLBACK") for n in audit["notes"])
        # The rules backend's context perturbation did those fields; each one is accounted for in the audit.
        ruled = [c for c in audit["changes"] + audit["generalized"] + audit["kept"]
                 if "rules backend" in (c["detail"] or "")]
        assert ruled and {c["path"].split(".contexts")[0] for c in ruled} == {
            f"symptoms[{s.split(':')[1]}]" for s in steps
        }
    else:
        assert audit["fallbacks"] == [], "retries and the re-ask absorb a single fault"


def test_strict_llm_keeps_the_invalid_reply_behaviour_of_p_steps(tmp_path: Path) -> None:
    faults = [Fault("schema_violation", template="perturb_steb", times=None)]
    with ScriptedOpenAIServer(responder=Responder(), faults=faults) as srv:
        res, out = _deid(tmp_path, srv, "--strict-llm")
    assert res.exit_code == 0, res.output
    assert out.is_file()
    audit = _audit(tmp_path)
    assert audit["fallbacks"] == [] and audit["generalized"]
    assert any(n.startswith("P_STEB_FALLBACK") for n in audit["notes"])


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


STEP_FAULTS = {
    "http_500": ([Fault("http_500", template="extract_symptoms", times=None)], "E124"),
    "rate_limit": ([Fault("rate_limit", times=None, retry_after="0")], "E124"),
    "read_timeout": ([Fault("timeout", template="extract_case", times=None, delay=1.0)], "E123"),
    "malformed_json": ([Fault("malformed_json", template="extract_treatments", times=None)], "E125"),
    "schema_violation": ([Fault("schema_violation", template="generate_closing", times=None)], "E125"),
    "empty_content": ([Fault("empty", template="extract_visit", times=None)], "E125"),
}


STEP_OF = {
    "http_500": "extract_symptoms",
    "rate_limit": "extract_case",
    "read_timeout": "extract_case",
    "malformed_json": "extract_treatments",
    "schema_violation": "generate_closing",
    "empty_content": "extract_visit",
}


@pytest.mark.parametrize("name", sorted(STEP_FAULTS))
def test_a_step_that_keeps_failing_is_done_by_the_rules_backend(tmp_path: Path, name: str) -> None:
    faults, code = STEP_FAULTS[name]
    with ScriptedOpenAIServer(responder=Responder(), faults=faults) as srv:
        res, out = _deid(tmp_path, srv)
    assert res.exit_code == 0, res.output
    assert out.is_file() and not any(i in out.read_text(encoding="utf-8") for i in IDENTIFIERS)
    audit = _audit(tmp_path)
    assert audit["violations"] == []
    fallbacks = audit["fallbacks"]
    if name == "rate_limit":  # every request of the case is rate limited: every step falls back
        assert {f["stage"] for f in fallbacks} == {"extraction", "perturbation", "generation"}
    else:
        assert [(f["step"], f["code"]) for f in fallbacks] == [(STEP_OF[name], code)]
    assert all(f["backend"] == "rules-fallback" and f["error"].startswith(f["code"]) for f in fallbacks)
    assert not any(i in json.dumps(fallbacks) for i in IDENTIFIERS)
    assert "rules backend" in res.stderr and res.stderr.count("\n") == 1


@pytest.mark.parametrize("name", sorted(STEP_FAULTS))
def test_strict_llm_ends_the_case_loudly_without_output(tmp_path: Path, name: str) -> None:
    faults, code = STEP_FAULTS[name]
    with ScriptedOpenAIServer(responder=Responder(), faults=faults) as srv:
        res, out = _deid(tmp_path, srv, "--strict-llm")
    assert res.exit_code == 2, res.output
    assert res.stderr.count("\n") == 1 and res.stderr.startswith(code)
    assert not any(i in res.output for i in IDENTIFIERS)
    assert not out.exists()
    assert not (tmp_path / "emit").exists()


def test_an_unreachable_server_ends_the_case_without_fallback(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(responder=Responder()) as srv:
        cfg = write_config(tmp_path / "llm.yaml", srv)
    out = tmp_path / "out.txt"  # the server is gone: connections are refused
    res = CliRunner().invoke(
        main, ["deid", str(CASE), "--backend", "llm", "--llm-config", str(cfg), "-o", str(out)]
    )
    assert res.exit_code == 2 and res.stderr.startswith("E123") and res.stderr.count("\n") == 1
    assert not out.exists()


def test_a_refused_api_key_ends_the_case_without_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANONPSY_LLM_API_KEY", "wrong-key")
    with ScriptedOpenAIServer(responder=Responder(), api_key="right-key") as srv:
        res, out = _deid(tmp_path, srv)
        assert len(srv.chat_requests) == 1, "a 401 is not retried and no later step is tried"
    assert res.exit_code == 2 and res.stderr.startswith("E124") and "401" in res.stderr
    assert not out.exists()


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


def test_strict_batch_with_faults_resumes_to_completion(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
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
        args = ["deid-batch", str(src), "-o", str(outdir), "--no-progress", "--strict-llm"]
        first = runner.invoke(main, args)
        summary = json.loads((outdir / "summary.json").read_text(encoding="utf-8"))
        assert first.exit_code == 1
        assert summary["failed"] == 2
        failed = [c["case_id"] for c in summary["cases"] if c["status"] == "failed"]
        assert all(c["error"].startswith("E124") and c["code"] == "E124"
                   for c in summary["cases"] if c["status"] == "failed")
        assert not any((outdir / "cases" / f"{cid}.txt").exists() for cid in failed)
        second = runner.invoke(main, args)
        summary = json.loads((outdir / "summary.json").read_text(encoding="utf-8"))
    assert summary["processed"] == 2 and summary["skipped"] == 1 and summary["failed"] == 0
    assert all((outdir / "cases" / f"{s}.txt").is_file() for s in STEMS)
    assert second.exit_code == 0, second.output


def test_batch_llm_counts_fallbacks_and_calls(tmp_path: Path) -> None:
    src = _jsonl(tmp_path, STEMS[:2])
    outdir = tmp_path / "batch"
    faults = [Fault("http_500", template="extract_case", times=3)]  # the first case's extract_case falls back
    with ScriptedOpenAIServer(responder=Responder(), faults=faults) as srv:
        cfg = write_config(tmp_path / "llm.yaml", srv)
        args = ["deid-batch", str(src), "-o", str(outdir), "--no-progress", "--backend", "llm", "--llm-config",
                str(cfg)]
        res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    summary = json.loads((outdir / "summary.json").read_text(encoding="utf-8"))
    assert summary["ok"] == 2 and summary["fallbacks"] == 1 and summary["llm_calls_per_case"] > 8
    assert [c["fallbacks"] for c in summary["cases"]] == [1, 0]
    assert "1 rules fallbacks" in res.stdout
    audit = json.loads((outdir / "emit" / f"{STEMS[0]}.audit.json").read_text(encoding="utf-8"))
    assert [(f["step"], f["code"]) for f in audit["fallbacks"]] == [("extract_case", "E124")]


def test_batch_progress_bar_shows_failed_fallbacks_and_calls_per_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal the bar counts cases done of the total, failed, rejected, rules fallbacks and model calls per
    case; it never reaches stdout, where the one-line summary goes."""
    src = _jsonl(tmp_path, STEMS[:2])
    outdir = tmp_path / "batch"
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # rich treats the captured stderr as a terminal
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.delenv("NO_COLOR", raising=False)
    faults = [Fault("http_500", template="extract_case", times=3)]
    with ScriptedOpenAIServer(responder=Responder(), faults=faults) as srv:
        cfg = write_config(tmp_path / "llm.yaml", srv)
        res = CliRunner().invoke(main, ["deid-batch", str(src), "-o", str(outdir), "--backend", "llm",
                                        "--llm-config", str(cfg)])
    assert res.exit_code == 0, res.output
    summary = json.loads((outdir / "summary.json").read_text(encoding="utf-8"))
    bar = res.stderr
    assert "2/2" in bar and "0 failed" in bar and "0 rejected" in bar and "1 fallbacks" in bar, bar
    assert f"{summary['llm_calls_per_case']:.1f} calls/case" in bar, bar
    assert "·" not in res.stdout and res.stdout.startswith("2 cases: 2 ok")
    quiet = CliRunner().invoke(main, ["deid-batch", str(src), "-o", str(tmp_path / "again"), "--no-progress"])
    assert quiet.exit_code == 0 and quiet.stderr == "", "--no-progress silences the bar on a terminal too"
