"""The scripted OpenAI-compatible test server on its own (plain httpx, no LLMClient)."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from anonpsy.testing import MIXED_FAULTS, Fault, FaultMix, ScriptedOpenAIServer
from anonpsy.testing.openai_server import response_format_type, template_of


def chat(srv: ScriptedOpenAIServer, template: str | None = "echo", **extra: Any) -> httpx.Response:
    system = f"[template:{template}@v2]\nsystem" if template else "system"
    body = {
        "model": "m",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": "a b c"}],
    }
    body.update(extra)
    return httpx.post(f"{srv.base_url}/chat/completions", json=body, timeout=5, trust_env=False)


def content(resp: httpx.Response) -> str:
    text: str = resp.json()["choices"][0]["message"]["content"]
    return text


def test_models_endpoint_and_loopback_port() -> None:
    with ScriptedOpenAIServer(model="tiny") as srv:
        assert srv.base_url.startswith("http://127.0.0.1:") and srv.port > 0
        resp = httpx.get(f"{srv.base_url}/models", timeout=5, trust_env=False)
        assert resp.status_code == 200 and resp.json()["data"][0]["id"] == "tiny"
        assert srv.requests[0].method == "GET" and srv.chat_requests == []


def test_script_by_template_with_sequences_and_default() -> None:
    script: dict[str, Any] = {"echo": ["one", {"k": 2}], "*": "fallback"}
    with ScriptedOpenAIServer(script=script) as srv:
        replies = [content(chat(srv)) for _ in range(3)]
        assert replies == ["one", '{"k": 2}', '{"k": 2}']
        assert content(chat(srv, template="other")) == "fallback"
        log = srv.requests_for("echo")
        assert len(log) == 3 and log[0].template_version == 2


def test_unscripted_template_is_404() -> None:
    with ScriptedOpenAIServer(script={"echo": "x"}) as srv:
        assert chat(srv, template="missing").status_code == 404


def test_usage_counts_words() -> None:
    with ScriptedOpenAIServer(script={"echo": "four words right here"}) as srv:
        usage = chat(srv).json()["usage"]
    assert usage["completion_tokens"] == 4 and usage["prompt_tokens"] == 5
    assert usage["total_tokens"] == 9


def test_responder_callable_sees_request() -> None:
    seen: list[dict[str, Any]] = []

    def responder(body: dict[str, Any]) -> dict[str, Any]:
        seen.append(body)
        return {"n": len(body["messages"])}

    with ScriptedOpenAIServer(responder=responder) as srv:
        assert json.loads(content(chat(srv))) == {"n": 2}
    assert seen[0]["model"] == "m"


@pytest.mark.parametrize(
    ("fault", "status", "reply"),
    [
        (Fault("http_500"), 500, None),
        (Fault("http_error", status=503), 503, None),
        (Fault("malformed_json"), 200, '{"echo": "unterminated'),
        (Fault("schema_violation"), 200, "{}"),
        (Fault("empty"), 200, ""),
        (Fault("content", content="free text"), 200, "free text"),
    ],
)
def test_faults_fire_once_then_script_resumes(fault: Fault, status: int, reply: str | None) -> None:
    with ScriptedOpenAIServer(script={"echo": "ok"}, faults=[fault]) as srv:
        first = chat(srv)
        assert first.status_code == status
        if reply is not None:
            assert content(first) == reply
        assert content(chat(srv)) == "ok"
        assert [r.fault for r in srv.chat_requests] == [fault.kind, None]


def test_rate_limit_sends_retry_after() -> None:
    with ScriptedOpenAIServer(script={"echo": "ok"}, faults=[Fault("rate_limit", retry_after="2")]) as srv:
        resp = chat(srv)
    assert resp.status_code == 429 and resp.headers["retry-after"] == "2"


def test_fault_by_index_and_template() -> None:
    faults = [Fault("http_500", at=1), Fault("empty", template="other", times=None)]
    with ScriptedOpenAIServer(script={"*": "ok"}, faults=faults) as srv:
        statuses = [chat(srv).status_code for _ in range(3)]
        assert statuses == [200, 500, 200]
        assert content(chat(srv, template="other")) == ""
        assert content(chat(srv, template="other")) == ""


def _mixed_run(mix: FaultMix, order: list[int]) -> dict[tuple[int, int], str | None]:
    """Faults met by 3 sends of each of 40 distinct requests, sent in the given order of request numbers."""
    seen: dict[tuple[int, int], str | None] = {}
    count: dict[int, int] = {}
    with ScriptedOpenAIServer(script={"*": "ok"}, fault_mix=mix) as srv:
        for n in order:
            k = count.get(n, 0)
            count[n] = k + 1
            chat(srv, template="echo", messages=[{"role": "system", "content": "[template:echo@v1]"},
                                                 {"role": "user", "content": f"request {n}"}])
            seen[(n, k)] = srv.chat_requests[-1].fault
    return seen


def test_fault_mix_is_seeded_and_independent_of_arrival_order() -> None:
    mix = FaultMix(0.3, seed=4, retry_after="0")
    forward = [n for n in range(40) for _ in range(3)]
    backward = [n for _ in range(3) for n in reversed(range(40))]
    a, b = _mixed_run(mix, forward), _mixed_run(mix, backward)
    assert a == b, "the same request meets the same fault whatever the order"
    kinds = [f for f in a.values() if f is not None]
    assert 0.15 < len(kinds) / len(a) < 0.45 and set(kinds) <= set(MIXED_FAULTS)
    assert any(a[(n, 0)] != a[(n, 1)] for n in range(40)), "a resend draws again"
    assert _mixed_run(FaultMix(0.3, seed=5), forward) != a
    assert all(f is None for f in _mixed_run(FaultMix(0.0), forward[:30]).values())


def test_fault_mix_rejects_bad_settings() -> None:
    with pytest.raises(ValueError):
        FaultMix(1.5)
    with pytest.raises(ValueError):
        FaultMix(0.1, kinds=("reject_format",))


def test_reject_format_only_for_listed_types() -> None:
    fault = Fault("reject_format", formats=("json_schema",), times=None)
    with ScriptedOpenAIServer(script={"echo": "{}"}, faults=[fault]) as srv:
        rejected = chat(
            srv, response_format={"type": "json_schema", "json_schema": {"name": "e", "schema": {}}}
        )
        accepted = chat(srv, response_format={"type": "json_object", "schema": {}})
        plain = chat(srv)
        assert rejected.status_code == 400 and "response_format" in rejected.text
        assert accepted.status_code == 200 and plain.status_code == 200
        assert [r.response_format for r in srv.chat_requests] == ["json_schema", "json_object+schema", None]


def test_timeout_fault_delays_the_answer() -> None:
    with ScriptedOpenAIServer(script={"echo": "ok"}, faults=[Fault("timeout", delay=0.3)]) as srv:
        started = time.perf_counter()
        assert content(chat(srv)) == "ok"
        assert time.perf_counter() - started >= 0.3


def test_latency_option() -> None:
    with ScriptedOpenAIServer(script={"echo": "ok"}, latency=0.2) as srv:
        started = time.perf_counter()
        chat(srv)
        assert time.perf_counter() - started >= 0.2


def test_api_key_required_when_set() -> None:
    with ScriptedOpenAIServer(script={"echo": "ok"}, api_key="k1") as srv:
        assert chat(srv).status_code == 401
        ok = httpx.post(
            f"{srv.base_url}/chat/completions",
            json={"messages": [{"role": "user", "content": "[template:echo@v1] x"}]},
            headers={"Authorization": "Bearer k1"},
            timeout=5,
            trust_env=False,
        )
        assert ok.status_code == 200 and srv.chat_requests[-1].authorization == "Bearer k1"


def test_native_ollama_chat() -> None:
    with ScriptedOpenAIServer(script={"echo": "ok"}) as srv:
        body = {
            "model": "m",
            "messages": [{"role": "user", "content": "[template:echo@v1] hi"}],
            "format": {},
        }
        resp = httpx.post(f"{srv.native_base_url}/chat", json=body, timeout=5, trust_env=False)
        assert resp.json()["message"]["content"] == "ok" and resp.json()["done"] is True
        assert srv.chat_requests[0].response_format == "ollama_format"


def test_helpers() -> None:
    assert response_format_type({"response_format": {"type": "json_object"}}) == "json_object"
    assert response_format_type({"format": "json"}) == "ollama_format"
    assert response_format_type({}) is None
    assert template_of({"messages": [{"role": "user", "content": "x [template:a-b_c@v12] y"}]}) == (
        "a-b_c",
        12,
    )
    assert template_of({"messages": []}) == (None, None)


def test_bad_paths_and_bodies() -> None:
    with ScriptedOpenAIServer(script={"*": "ok"}) as srv:
        assert httpx.post(f"{srv.base_url}/nope", json={}, timeout=5, trust_env=False).status_code == 404
        bad = httpx.post(f"{srv.base_url}/chat/completions", content=b"[1", timeout=5, trust_env=False)
        assert bad.status_code == 400
        assert httpx.get(f"{srv.base_url}/other", timeout=5, trust_env=False).status_code == 404
