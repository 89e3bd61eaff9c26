"""`anonpsy llm check` and the OpenAI conventions (--llm-url, --llm-model, OPENAI_BASE_URL, OPENAI_API_KEY)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from anonpsy.cli import main
from anonpsy.llm_backend.perturb_llm import embedding_similarity
from anonpsy.testing import Fault, ScriptedOpenAIServer
from llm_replies.harness import CASES, write_config
from llm_replies.responder import Responder, rules_graph

GOOD = {"echo": "The synthetic patient slept well last night.", "count": 7}
CASE = next(p for p in CASES if p.stem == "05_erectile_disorder")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ANONPSY_LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANONPSY_LLM_EMBEDDINGS", "0")
    embedding_similarity.cache_clear()
    yield
    embedding_similarity.cache_clear()


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_check_reports_models_form_and_latency() -> None:
    with ScriptedOpenAIServer(script={"echo": GOOD}, model="tiny-model") as srv:
        result = run("llm", "check", "--llm-url", srv.base_url, "--llm-model", "tiny-model")
        sent = srv.chat_requests
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"{srv.base_url} (loopback, profile openai-compatible)" in out
    assert "1 listed: tiny-model" in out and "structured output  json_schema" in out
    assert "round trip" in out and " ms, 1 request(s)" in out and out.rstrip().endswith("ok")
    assert len(sent) == 1 and sent[0].body is not None and sent[0].body["model"] == "tiny-model"
    assert GOOD["echo"] in json.dumps(sent[0].body), "only the synthetic probe text is sent"


def test_check_finds_the_structured_output_form_the_server_accepts() -> None:
    faults = [Fault("reject_format", formats=("json_schema",), times=None)]
    with ScriptedOpenAIServer(script={"echo": GOOD}, faults=faults) as srv:
        result = run("llm", "check", "--llm-url", srv.base_url, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["structured_output"] == "json_object_schema" and report["requests"] == 2
    assert report["models"] == ["scripted-model"] and report["ok"] is True
    assert report["structured_output_chain"][0] == "json_schema"


def test_check_of_an_unreachable_server_is_one_line_exit_2() -> None:
    with ScriptedOpenAIServer() as srv:
        url = srv.base_url
    result = run("llm", "check", "--llm-url", url)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"E123 {url}: ")
    assert "connection refused" in result.stderr


def test_check_of_a_server_with_unusable_replies_exits_1() -> None:
    with ScriptedOpenAIServer(script={"echo": "not json"}) as srv:
        result = run("llm", "check", "--llm-url", srv.base_url)
    assert result.exit_code == 1
    assert "FAILED" in result.stdout and "none of the forms" in result.stdout
    assert result.stderr.startswith("E125") and result.stderr.count("\n") == 1


def test_check_sends_the_openai_key_and_reports_a_refused_one(monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedOpenAIServer(script={"echo": GOOD}, api_key="sk-synthetic") as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        refused = run("llm", "check")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-synthetic")
        accepted = run("llm", "check")
        auth = {r.authorization for r in srv.requests}
    assert refused.exit_code == 2 and refused.stderr.startswith("E124") and "401" in refused.stderr
    assert accepted.exit_code == 0 and "from OPENAI_API_KEY" in accepted.stdout
    assert "Bearer sk-synthetic" in auth
    assert "sk-synthetic" not in accepted.output + refused.output


def test_check_without_any_server_names_the_three_ways_to_give_one() -> None:
    result = run("llm", "check")
    assert result.exit_code == 2
    assert result.stderr.startswith("E121") and "--llm-config" in result.stderr and "OPENAI_BASE_URL" in result.stderr


def test_check_help_ends_with_an_example() -> None:
    text = run("llm", "check", "--help").output.rstrip()
    assert text.splitlines()[-1].strip() != "" and "Example:\n    anonpsy llm check --llm-url" in text


def test_deid_reads_the_server_from_flags_or_the_openai_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules_graph(CASE.read_text(encoding="utf-8"))
    with ScriptedOpenAIServer(responder=Responder(), model="served") as srv:
        by_flag = run("deid", str(CASE), "--backend", "llm", "--llm-url", srv.base_url, "--llm-model", "served",
                      "-o", str(tmp_path / "a.txt"))
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        by_env = run("deid", str(CASE), "--backend", "llm", "-o", str(tmp_path / "b.txt"))
        models = {r.body["model"] for r in srv.chat_requests if r.body is not None}
    assert by_flag.exit_code == 0, by_flag.output
    assert by_env.exit_code == 0, by_env.output
    assert models == {"served", "default"}
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == (tmp_path / "b.txt").read_text(encoding="utf-8")


def test_llm_url_overrides_the_configuration_file(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(script={"echo": GOOD}) as live, ScriptedOpenAIServer() as other:
        cfg = write_config(tmp_path / "llm.yaml", other)
        result = run("llm", "check", "--llm-config", str(cfg), "--llm-url", live.base_url)
        assert other.requests == [] and live.chat_requests
    assert result.exit_code == 0, result.output


def test_a_remote_url_is_refused_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.example.org/v1")
    result = run("deid", str(CASE), "--backend", "llm")
    assert result.exit_code == 2 and result.stderr.startswith("E120") and result.stdout == ""
    assert "example.org" not in result.stderr
