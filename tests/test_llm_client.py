"""LLMClient / AsyncLLMClient against the scripted OpenAI-compatible server (real HTTP on loopback)."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, field_validator

from anonpsy.llm import (
    AsyncLLMClient,
    LLMClient,
    LLMConfig,
    LLMConnectionError,
    LLMHTTPError,
    LLMRemoteEndpointError,
    LLMReplyError,
    LLMTemplateError,
    PromptTemplate,
    ResponseCache,
    load_template,
)
from anonpsy.llm.prompts import parse_template
from anonpsy.testing import Fault, ScriptedOpenAIServer

GOOD = {"echo": "a synthetic sentence", "count": 3}
SECRET = "Synthetic-Narrative-Token-7Q"


class Echo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    echo: str
    count: int


@pytest.fixture()
def template() -> PromptTemplate:
    return load_template("echo")


def config(srv: ScriptedOpenAIServer, **overrides: Any) -> LLMConfig:
    settings: dict[str, Any] = {
        "profile": "scripted",
        "base_url": srv.base_url,
        "native_base_url": srv.native_base_url,
        "timeouts": {"connect": 1.0, "read": 2.0, "write": 1.0, "pool": 1.0},
        "backoff_base": 0.01,
        "backoff_cap": 0.05,
        "retry_after_cap": 2.0,
    }
    settings.update(overrides)
    return LLMConfig.model_validate(settings)


@pytest.fixture()
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(script={"echo": GOOD}) as srv:
        yield srv


def ask(client: LLMClient, template: PromptTemplate, **kwargs: Any) -> Any:
    return client.complete_json(template, {"text": SECRET}, operator="extraction", **kwargs)


def test_success_returns_validated_json(server: ScriptedOpenAIServer, template: PromptTemplate) -> None:
    with LLMClient(config(server)) as client:
        assert ask(client, template) == GOOD
    (req,) = server.chat_requests
    assert req.template_id == "echo" and req.template_version == 1
    assert req.response_format == "json_schema"
    assert req.body is not None
    system = req.body["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("[template:echo@v1]\n")
    assert req.body["temperature"] == 0.1 and req.body["max_tokens"] == 512
    assert req.body["response_format"]["json_schema"]["schema"] == template.reply_schema


def test_pydantic_model_is_returned(server: ScriptedOpenAIServer, template: PromptTemplate) -> None:
    with LLMClient(config(server)) as client:
        reply = ask(client, template, model_cls=Echo)
    assert isinstance(reply, Echo) and reply.count == 3


def test_temperature_and_seed_follow_operator_and_config(
    server: ScriptedOpenAIServer, template: PromptTemplate
) -> None:
    with LLMClient(config(server, seed=99, temperatures={"perturbation": 0.9})) as client:
        client.complete_json(template, {"text": "x"}, operator="perturbation")
        client.complete_json(template, {"text": "y"}, operator="critique", seed=5)
    first, second = (r.body for r in server.chat_requests)
    assert first is not None and second is not None
    assert (first["temperature"], first["seed"]) == (0.9, 99)
    assert (second["temperature"], second["seed"]) == (0.0, 5)


def test_500_then_success(template: PromptTemplate) -> None:
    with ScriptedOpenAIServer(script={"echo": GOOD}, faults=[Fault("http_500", at=0)]) as srv:
        with LLMClient(config(srv)) as client:
            assert ask(client, template, case_id="c") == GOOD
            summary = client.metrics.summary("c")
        assert [r.status for r in srv.chat_requests] == [500, 200]
    assert summary["retries"] == 1 and summary["requests"] == 2


def test_429_retry_after_is_honoured(template: PromptTemplate) -> None:
    faults = [Fault("rate_limit", at=0, retry_after="1")]
    with ScriptedOpenAIServer(script={"echo": GOOD}, faults=faults) as srv:
        with LLMClient(config(srv)) as client:
            started = time.perf_counter()
            assert ask(client, template) == GOOD
            elapsed = time.perf_counter() - started
        assert [r.status for r in srv.chat_requests] == [429, 200]
    assert elapsed >= 0.95  # the 1 s Retry-After, not the 10 ms backoff


def test_retry_after_is_capped(template: PromptTemplate) -> None:
    faults = [Fault("rate_limit", at=0, retry_after="3600")]
    with (
        ScriptedOpenAIServer(script={"echo": GOOD}, faults=faults) as srv,
        LLMClient(config(srv, retry_after_cap=0.1)) as client,
    ):
        started = time.perf_counter()
        assert ask(client, template) == GOOD
        assert time.perf_counter() - started < 1.0


def test_read_timeout_then_success(template: PromptTemplate) -> None:
    faults = [Fault("timeout", at=0, delay=1.0)]
    with ScriptedOpenAIServer(script={"echo": GOOD}, faults=faults) as srv:
        cfg = config(srv, timeouts={"connect": 1.0, "read": 0.3, "write": 1.0, "pool": 1.0})
        with LLMClient(cfg, metrics=None) as client:
            assert ask(client, template, case_id="t") == GOOD
            assert client.metrics.summary("t")["retries"] == 1


def test_retries_exhausted_raise_http_error(template: PromptTemplate) -> None:
    faults = [Fault("http_500", times=None)]
    with ScriptedOpenAIServer(script={"echo": GOOD}, faults=faults) as srv:
        with LLMClient(config(srv, retries=2)) as client, pytest.raises(LLMHTTPError) as info:
            ask(client, template, case_id="x")
        assert len(srv.chat_requests) == 3
    assert info.value.status == 500 and info.value.attempts == 3
    assert info.value.code == "E124" and info.value.template_id == "echo"


def test_non_retryable_status_fails_at_once(template: PromptTemplate) -> None:
    faults = [Fault("http_error", status=404, times=None)]
    with ScriptedOpenAIServer(script={"echo": GOOD}, faults=faults) as srv:
        with LLMClient(config(srv)) as client, pytest.raises(LLMHTTPError) as info:
            ask(client, template)
        assert len(srv.chat_requests) == 1
    assert info.value.status == 404 and info.value.attempts == 1


def test_connection_refused_raises_connection_error(template: PromptTemplate) -> None:
    with ScriptedOpenAIServer() as srv:
        cfg = config(srv, retries=1)
    with LLMClient(cfg) as client, pytest.raises(LLMConnectionError) as info:
        ask(client, template)
    assert info.value.attempts == 2 and info.value.code == "E123"


def test_malformed_json_is_retried_before_the_reask(template: PromptTemplate) -> None:
    faults = [Fault("malformed_json", at=0)]
    with ScriptedOpenAIServer(script={"echo": GOOD}, faults=faults) as srv:
        with LLMClient(config(srv, seed=5)) as client:
            assert ask(client, template, case_id="m") == GOOD
            summary = client.metrics.summary("m")
            assert summary["reasks"] == 0 and summary["retries"] == 1
        first, second = srv.chat_requests
    assert first.body is not None and second.body is not None
    # The same conversation again (no re-ask spent), with the next seed so a seeded sampler does not repeat itself.
    assert second.body["messages"] == first.body["messages"]
    assert (first.body["seed"], second.body["seed"]) == (5, 6)


def test_malformed_json_after_its_retries_spends_the_reask(template: PromptTemplate) -> None:
    faults = [Fault("malformed_json", times=3)]
    with ScriptedOpenAIServer(script={"echo": GOOD}, faults=faults) as srv:
        with LLMClient(config(srv, retries=2)) as client:
            assert ask(client, template, case_id="m") == GOOD
            summary = client.metrics.summary("m")
            assert summary["reasks"] == 1 and summary["retries"] == 2
        last = srv.chat_requests[-1]
    assert len(srv.chat_requests) == 4 and last.body is not None
    messages = last.body["messages"]
    assert messages[-2] == {"role": "assistant", "content": '{"echo": "unterminated'}
    assert messages[-1]["role"] == "user" and "not valid JSON" in messages[-1]["content"]


def test_a_reply_cut_at_max_tokens_is_reasked_at_once_with_a_hint(template: PromptTemplate) -> None:
    with ScriptedOpenAIServer(script={"echo": GOOD}, faults=[Fault("truncated")]) as srv:
        with LLMClient(config(srv)) as client:
            assert ask(client, template, case_id="t") == GOOD
            summary = client.metrics.summary("t")
        reask = srv.chat_requests[-1].body
    assert summary["retries"] == 0 and summary["reasks"] == 1, "asking again unchanged would be cut the same way"
    assert reask is not None and "answer more briefly" in reask["messages"][-1]["content"]


def test_http_faults_and_reply_faults_share_one_retry_budget(template: PromptTemplate) -> None:
    faults = [Fault("http_500", at=0), Fault("empty", at=1), Fault("http_500", at=2)]
    with (
        ScriptedOpenAIServer(script={"echo": GOOD}, faults=faults) as srv,
        LLMClient(config(srv, retries=2)) as client,
        pytest.raises(LLMHTTPError) as info,
    ):
        ask(client, template)
    assert [r.status for r in srv.chat_requests] == [500, 200, 500]
    assert info.value.attempts == 3, "the error counts every request of the ask"


def test_schema_violation_is_not_retried_but_reasked(template: PromptTemplate) -> None:
    with (
        ScriptedOpenAIServer(script={"echo": GOOD}, faults=[Fault("schema_violation")]) as srv,
        LLMClient(config(srv)) as client,
    ):
        assert ask(client, template, case_id="s") == GOOD
        assert client.metrics.summary("s")["reasks"] == 1
        assert client.metrics.summary("s")["retries"] == 0


def test_schema_violation_twice_raises_reply_error(template: PromptTemplate) -> None:
    faults = [Fault("schema_violation", times=2)]
    with ScriptedOpenAIServer(script={"echo": GOOD}, faults=faults) as srv:
        with LLMClient(config(srv)) as client, pytest.raises(LLMReplyError) as info:
            ask(client, template, case_id="s")
        assert len(srv.chat_requests) == 2
        assert client.metrics.summary("s")["failures"] == 1
    err = info.value
    assert err.attempts == 2 and err.template_id == "echo" and err.code == "E125"
    assert err.errors == ["/: missing required count", "/: missing required echo"]
    reask = srv.chat_requests[1].body
    assert reask is not None and "'echo' is a required property" in reask["messages"][-1]["content"]


def test_reply_error_never_contains_reply_values(template: PromptTemplate) -> None:
    bad = {"echo": SECRET, "count": f"{SECRET}-count", SECRET: 1}
    with (
        ScriptedOpenAIServer(script={"echo": [bad, bad]}) as srv,
        LLMClient(config(srv)) as client,
        pytest.raises(LLMReplyError) as info,
    ):
        ask(client, template)
    assert SECRET not in str(info.value) and all(SECRET not in e for e in info.value.errors)
    assert "/count: expected type integer" in info.value.errors


def test_reply_keys_not_in_schema_are_masked_in_errors() -> None:
    text = "---\nid: tags\nversion: 1\noperator: extraction\n---\nTag {{ x }}.\n"
    tags = parse_template(text)

    class Tags(BaseModel):
        tags: dict[str, int]

    bad = {"tags": {SECRET: "not a number"}}
    with (
        ScriptedOpenAIServer(script={"tags": [bad, bad]}) as srv,
        LLMClient(config(srv)) as client,
        pytest.raises(LLMReplyError) as info,
    ):
        client.complete_json(tags, {"x": "y"}, operator="extraction", model_cls=Tags)
    assert info.value.errors == ["/tags/*: expected type integer"]
    assert SECRET not in str(info.value)


def test_pydantic_failure_also_reasks(template: PromptTemplate) -> None:
    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid")
        echo: str
        count: int

        @field_validator("count")
        @classmethod
        def _small(cls, value: int) -> int:
            if value > 100:
                raise ValueError("count too large")
            return value

    replies: list[Any] = [{"echo": "x", "count": 1000}, {"echo": "x", "count": 4}]
    with ScriptedOpenAIServer(script={"echo": replies}) as srv:
        with LLMClient(config(srv)) as client:
            reply = ask(client, template, model_cls=Strict)
        assert len(srv.chat_requests) == 2
    assert reply.count == 4


def test_empty_content_is_retried_then_reasked_then_fails(template: PromptTemplate) -> None:
    with (
        ScriptedOpenAIServer(script={"echo": GOOD}, faults=[Fault("empty", times=None)]) as srv,
        LLMClient(config(srv, retries=1)) as client,
        pytest.raises(LLMReplyError) as info,
    ):
        ask(client, template)
    assert info.value.errors == ["/: reply is empty"] and info.value.attempts == 2
    assert len(srv.chat_requests) == 4  # (1 + 1 retry) per ask, two asks


def test_code_fences_are_stripped(template: PromptTemplate) -> None:
    fenced = '```json\n{"echo": "x", "count": 1}\n```'
    with ScriptedOpenAIServer(script={"echo": fenced}) as srv, LLMClient(config(srv)) as client:
        assert ask(client, template) == {"echo": "x", "count": 1}


def test_response_format_fallback_after_400(template: PromptTemplate) -> None:
    faults = [Fault("reject_format", formats=("json_schema", "json_object+schema"), times=None)]
    with ScriptedOpenAIServer(script={"echo": GOOD}, faults=faults) as srv:
        with LLMClient(config(srv)) as client:
            assert ask(client, template) == GOOD
            assert client.structured_output == "json_object"
            assert ask(client, template, seed=2) == GOOD  # the working form is remembered
        kinds = [(r.response_format, r.status) for r in srv.chat_requests]
    assert kinds == [
        ("json_schema", 400),
        ("json_object+schema", 400),
        ("json_object", 200),
        ("json_object", 200),
    ]


def test_fallback_on_500_naming_response_format(template: PromptTemplate) -> None:
    """llama-cpp-python answers an unsupported response_format type with HTTP 500."""
    faults = [Fault("reject_format", status=500, formats=("json_schema",), times=None)]
    with ScriptedOpenAIServer(script={"echo": GOOD}, faults=faults) as srv:
        with LLMClient(config(srv)) as client:
            assert ask(client, template) == GOOD
        assert [r.response_format for r in srv.chat_requests] == ["json_schema", "json_object+schema"]


def test_fallback_chain_exhausted_raises(template: PromptTemplate) -> None:
    faults = [
        Fault("reject_format", formats=("json_schema", "json_object+schema", "json_object"), times=None)
    ]
    with ScriptedOpenAIServer(script={"echo": GOOD}, faults=faults) as srv:
        with LLMClient(config(srv)) as client:
            assert ask(client, template) == GOOD  # the last form, none, sends no response_format
        assert srv.chat_requests[-1].response_format is None


def test_ollama_native_format(template: PromptTemplate) -> None:
    with ScriptedOpenAIServer(script={"echo": GOOD}) as srv:
        cfg = config(srv, profile="ollama")
        with LLMClient(cfg) as client:
            assert ask(client, template, case_id="o") == GOOD
            assert client.metrics.summary("o")["completion_tokens"] > 0
        (req,) = srv.chat_requests
    assert req.path == "/api/chat" and req.response_format == "ollama_format"
    assert req.body is not None and req.body["format"] == template.reply_schema
    assert req.body["options"]["temperature"] == 0.1 and req.body["stream"] is False


def test_cache_hit_avoids_second_request(template: PromptTemplate, tmp_path: Any) -> None:
    with ScriptedOpenAIServer(script={"echo": GOOD}) as srv:
        cfg = config(srv, cache_path=str(tmp_path / "cache.sqlite"))
        with LLMClient(cfg) as client:
            assert ask(client, template, case_id="k") == GOOD
            assert ask(client, template, case_id="k", model_cls=Echo) == Echo(**GOOD)
            summary = client.metrics.summary("k")
        assert len(srv.chat_requests) == 1
        with LLMClient(cfg) as again:  # persisted on disk
            assert ask(again, template) == GOOD
        assert len(srv.chat_requests) == 1
        with LLMClient(cfg) as other:  # another seed is another key
            ask(other, template, seed=7)
        assert len(srv.chat_requests) == 2
    assert summary["calls"] == 2 and summary["cache_hits"] == 1 and summary["requests"] == 1


def test_failed_replies_are_not_cached(template: PromptTemplate) -> None:
    cache = ResponseCache(":memory:")
    faults = [Fault("schema_violation", times=2)]
    with (
        ScriptedOpenAIServer(script={"echo": GOOD}, faults=faults) as srv,
        LLMClient(config(srv), cache=cache) as client,
    ):
        with pytest.raises(LLMReplyError):
            ask(client, template)
        assert len(cache) == 0
        assert ask(client, template) == GOOD
    assert len(cache) == 1


def test_remote_endpoint_refused_without_allow_remote() -> None:
    with pytest.raises(LLMRemoteEndpointError) as info:
        LLMConfig(profile="scripted", base_url="http://10.1.2.3:8080/v1")
    assert info.value.code == "E120" and "10.1.2.3" not in str(info.value)
    cfg = LLMConfig(profile="scripted", base_url="http://10.1.2.3:8080/v1", allow_remote=True)
    assert cfg.endpoint.base_url == "http://10.1.2.3:8080/v1"


def test_api_key_read_from_env_and_sent_as_bearer(
    template: PromptTemplate, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANONPSY_TEST_KEY", "sk-synthetic-123")
    with ScriptedOpenAIServer(script={"echo": GOOD}, api_key="sk-synthetic-123") as srv:
        with LLMClient(config(srv, api_key_env="ANONPSY_TEST_KEY")) as client:
            assert ask(client, template) == GOOD
        assert srv.chat_requests[0].authorization == "Bearer sk-synthetic-123"
        monkeypatch.delenv("ANONPSY_TEST_KEY")
        with (
            LLMClient(config(srv, api_key_env="ANONPSY_TEST_KEY")) as client,
            pytest.raises(LLMHTTPError) as info,
        ):
            ask(client, template)
        assert info.value.status == 401


def test_template_without_schema_needs_model(tmp_path: Any) -> None:
    text = "---\nid: free\nversion: 1\noperator: generation\n---\nSay {{ what }}.\n"
    free = parse_template(text)
    with ScriptedOpenAIServer(script={"free": "a sentence"}) as srv, LLMClient(config(srv)) as client:
        with pytest.raises(LLMTemplateError):
            client.complete_json(free, {"what": "x"}, operator="generation")
        assert client.complete_text(free, {"what": "x"}, operator="generation") == "a sentence"
        (req,) = srv.chat_requests
        assert req.response_format is None and req.template_id == "free"


def test_complete_text_reasks_on_empty(tmp_path: Any) -> None:
    free = parse_template("---\nid: free\nversion: 1\noperator: generation\n---\nSay {{ what }}.\n")
    with ScriptedOpenAIServer(script={"free": ["", "text"]}) as srv, LLMClient(config(srv)) as client:
        assert client.complete_text(free, {"what": "x"}, operator="generation") == "text"


def test_unknown_operator_is_an_error(server: ScriptedOpenAIServer, template: PromptTemplate) -> None:
    from anonpsy.llm import LLMConfigError

    with LLMClient(config(server)) as client, pytest.raises(LLMConfigError):
        client.complete_json(template, {"text": "x"}, operator="summarise")


def test_sync_client_concurrency_limit(template: PromptTemplate) -> None:
    with ScriptedOpenAIServer(script={"echo": GOOD}, latency=0.15) as srv:
        with LLMClient(config(srv, concurrency=2)) as client, ThreadPoolExecutor(max_workers=6) as pool:
            results = list(pool.map(lambda i: ask(client, template, seed=i), range(6)))
        assert results == [GOOD] * 6
        assert srv.max_in_flight == 2


def test_async_client_concurrency_limit(template: PromptTemplate) -> None:
    async def run(srv: ScriptedOpenAIServer) -> list[Any]:
        async with AsyncLLMClient(config(srv, concurrency=3)) as client:
            jobs = [
                client.complete_json(template, {"text": f"t{i}"}, operator="extraction", case_id="a")
                for i in range(9)
            ]
            results = await asyncio.gather(*jobs)
            assert client.metrics.summary("a")["calls"] == 9
            return list(results)

    with ScriptedOpenAIServer(script={"echo": GOOD}, latency=0.1) as srv:
        assert asyncio.run(run(srv)) == [GOOD] * 9
        assert 1 < srv.max_in_flight <= 3


def test_async_client_retries_and_reasks(template: PromptTemplate) -> None:
    faults = [Fault("http_500", at=0), Fault("malformed_json", at=1)]

    async def run(srv: ScriptedOpenAIServer) -> Any:
        async with AsyncLLMClient(config(srv)) as client:
            return await client.complete_json(template, {"text": "x"}, operator="extraction", model_cls=Echo)

    with ScriptedOpenAIServer(script={"echo": GOOD}, faults=faults) as srv:
        assert asyncio.run(run(srv)) == Echo(**GOOD)
        assert [r.status for r in srv.chat_requests] == [500, 200, 200]


def test_no_prompt_or_reply_text_in_logs(caplog: pytest.LogCaptureFixture, template: PromptTemplate) -> None:
    bad = {"echo": SECRET, "count": SECRET}
    faults = [Fault("http_500", at=0)]
    caplog.set_level(logging.DEBUG)
    script: dict[str, Any] = {"echo": [bad, {"echo": SECRET, "count": 2}]}
    with ScriptedOpenAIServer(script=script, faults=faults) as srv, LLMClient(config(srv)) as client:
        assert ask(client, template)["echo"] == SECRET
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "template=echo@v1" in text
    assert SECRET not in text
    assert "repeat the following text" not in text.lower()


def test_client_is_thread_safe_with_shared_cache(template: PromptTemplate) -> None:
    cache = ResponseCache(":memory:")
    errors: list[BaseException] = []
    with ScriptedOpenAIServer(script={"echo": GOOD}) as srv, LLMClient(config(srv), cache=cache) as client:

        def work(i: int) -> None:
            try:
                ask(client, template, seed=i % 3)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors and len(cache) == 3
