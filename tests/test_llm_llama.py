"""Integration with a real llama-cpp-python server (`.ci/llama.sh install && .ci/llama.sh start`).

Skipped unless a server answers at ``ANONPSY_LLAMA_URL`` (default ``http://127.0.0.1:8000/v1``).
"""

from __future__ import annotations

import os

import httpx
import pytest

from anonpsy.llm import LLMClient, LLMConfig, load_template

URL = os.environ.get("ANONPSY_LLAMA_URL", "http://127.0.0.1:8000/v1")


def _server_up() -> bool:
    try:
        return httpx.get(f"{URL}/models", timeout=2, trust_env=False).status_code == 200
    except httpx.HTTPError:
        return False


pytestmark = [
    pytest.mark.llama,
    pytest.mark.skipif(not _server_up(), reason=f"no llama.cpp server at {URL}"),
]


def test_json_object_schema_reply_validates() -> None:
    cfg = LLMConfig(profile="llama-cpp-python", base_url=URL, max_tokens=128, seed=7)
    with LLMClient(cfg) as client:
        reply = client.complete_json(load_template("echo"), {"text": "the cat sat"}, operator="critique")
        summary = client.metrics.summary()
    assert isinstance(reply["echo"], str) and isinstance(reply["count"], int)
    assert summary["prompt_tokens"] > 0 and summary["completion_tokens"] > 0


def test_json_schema_form_falls_back_on_llama_cpp_python() -> None:
    cfg = LLMConfig(profile="llama-server", base_url=URL, max_tokens=128, seed=7)
    with LLMClient(cfg) as client:
        reply = client.complete_json(load_template("echo"), {"text": "a b"}, operator="critique")
        assert client.structured_output == "json_object_schema"
    assert set(reply) == {"echo", "count"}
