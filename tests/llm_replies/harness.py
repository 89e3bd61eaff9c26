"""Helpers shared by the LLM-backend tests: client configuration for a scripted server and a config file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from anonpsy.llm import LLMConfig
from anonpsy.testing import ScriptedOpenAIServer
from anonpsy.yamlio import dump_yaml

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted((ROOT / "fixtures" / "cases").glob("*.txt"))

FAST: dict[str, Any] = {
    "timeouts": {"connect": 1.0, "read": 0.5, "write": 1.0, "pool": 1.0},
    "retries": 2,
    "backoff_base": 0.0,
    "backoff_cap": 0.0,
    "retry_after_cap": 0.2,
    "cache_path": None,
}


def config_data(srv: ScriptedOpenAIServer, **overrides: Any) -> dict[str, Any]:
    """Configuration mapping for the scripted server, with short timeouts and no backoff."""
    return {
        "profile": "scripted",
        "base_url": srv.base_url,
        "native_base_url": srv.native_base_url,
        **FAST,
        **overrides,
    }


def config(srv: ScriptedOpenAIServer, **overrides: Any) -> LLMConfig:
    return LLMConfig.model_validate(config_data(srv, **overrides))


def write_config(path: Path, srv: ScriptedOpenAIServer, **overrides: Any) -> Path:
    """A ``--llm-config`` file for the scripted server."""
    path.write_text(dump_yaml(config_data(srv, **overrides)), encoding="utf-8")
    return path
