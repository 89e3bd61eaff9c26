"""``anonpsy deid --backend llm`` end to end against a real llama-cpp-python server (Gemma 3 270M).

Run with ``bash .ci/llama.sh install && bash .ci/llama.sh start`` and ``ANONPSY_LLAMA_URL=http://127.0.0.1:8000/v1``.
Asserts the protocol, schema validity, invariants, the leak audit and loud failure; never content quality.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from anonpsy.cli import main
from anonpsy.graph import CaseGraph
from anonpsy.llm import LLMClient, LLMConfig, load_template
from anonpsy.validate import structural_violations
from anonpsy.yamlio import dump_yaml
from llm_replies.harness import CASES

URL = os.environ.get("ANONPSY_LLAMA_URL", "")


def _server_up() -> bool:
    if not URL:
        return False
    try:
        return httpx.get(f"{URL}/models", timeout=2, trust_env=False).status_code == 200
    except httpx.HTTPError:
        return False


pytestmark = [
    pytest.mark.usefixtures("no_embedding_model"),
    pytest.mark.llama,
    pytest.mark.skipif(
        not _server_up(), reason="ANONPSY_LLAMA_URL is not set or no llama.cpp server answers"
    ),
]

SHORTEST = sorted(CASES, key=lambda p: len(p.read_text(encoding="utf-8").split()))[:3]
SETTINGS = {
    "profile": "llama-cpp-python",
    "base_url": URL,
    "max_tokens": 256,
    "retries": 1,
    "seed": 7,
    "cache_path": None,
    "timeouts": {"connect": 5, "read": 300, "write": 30, "pool": 10},
}


def test_protocol_and_schema_on_an_extraction_template() -> None:
    template = load_template("extract_case")
    text = SHORTEST[0].read_text(encoding="utf-8")
    with LLMClient(LLMConfig.model_validate(SETTINGS)) as client:
        try:
            reply = client.complete_json(
                template,
                {"input": json.dumps({"text": text}), "feedback": ""},
                operator="extraction",
                case_id="proto",
            )
        except Exception as exc:  # a loud, typed failure is acceptable; a silent one is not
            assert re.match(r"^E12\d ", str(exc)), str(exc)
            return
        assert client.structured_output == "json_object_schema"
        summary = client.metrics.summary("proto")
    import jsonschema

    assert template.reply_schema is not None
    jsonschema.Draft202012Validator(template.reply_schema).validate(reply)
    assert summary["prompt_tokens"] > 0 and summary["completion_tokens"] > 0


@pytest.mark.parametrize("path", SHORTEST, ids=[p.stem for p in SHORTEST])
def test_deid_llm_end_to_end(tmp_path: Path, path: Path) -> None:
    """--strict-llm: the first step the tiny model cannot do ends the case (a run with fallbacks would retry every
    step of the case against a CPU-bound model; the fallback path is covered against the scripted server)."""
    cfg = tmp_path / "llm.yaml"
    cfg.write_text(dump_yaml(SETTINGS), encoding="utf-8")
    out = tmp_path / "out.json"
    t0 = time.perf_counter()
    res = CliRunner().invoke(
        main,
        [
            "deid",
            str(path),
            "--backend",
            "llm",
            "--llm-config",
            str(cfg),
            "--seed",
            "3",
            "--format",
            "json",
            "-o",
            str(out),
            "--emit",
            str(tmp_path / "emit"),
            "--strict-llm",
        ],
    )
    elapsed = time.perf_counter() - t0
    last = res.stderr.strip().splitlines()[-1] if res.stderr.strip() else ""
    print(f"[llama] {path.stem}: exit {res.exit_code} in {elapsed:.1f} s {last[:160]}")
    if res.exit_code == 2:
        assert re.match(r"^E12\d ", last) and res.stderr.count("\n") == 1, res.output
        assert not out.exists() and not (tmp_path / "emit").exists()
        return
    if res.exit_code == 1:  # the leak audit or an invariant refused the output: nothing is written
        assert re.match(r"^E13[01] ", last) and res.stderr.count("\n") == 1, res.output
        assert not out.exists() and not (tmp_path / "emit" / f"{path.stem}.perturbed.yaml").exists()
        return
    assert res.exit_code == 0, res.output
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert payload["violations"] == [] and payload["leaks"]["leaks"] == []
    graph = CaseGraph.model_validate(payload["graph"])
    assert structural_violations(graph) == []


def test_llm_check_against_the_real_server() -> None:
    res = CliRunner().invoke(main, ["llm", "check", "--llm-url", URL, "--json"])
    print(f"[llama] llm check: exit {res.exit_code} {res.stderr.strip()[:160]}")
    assert res.exit_code in (0, 1), res.output
    report = json.loads(res.stdout)
    assert report["models"] and report["host"] == "loopback" and report["round_trip_ms"] > 0
    if res.exit_code == 0:
        # llama-cpp-python rejects the json_schema response_format and takes the schema inside json_object.
        assert report["structured_output"] == "json_object_schema"
    else:
        assert re.match(r"^E125 ", res.stderr)
