"""Where the project's data directories live (source checkout or installed wheel)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

_PKG = Path(__file__).resolve().parent


def _data_dir(name: str, env: str) -> Path:
    return _resolve_data_dir(name, os.environ.get(env) or None)


@lru_cache(maxsize=32)
def _resolve_data_dir(name: str, override: str | None) -> Path:
    if override:
        return Path(override)
    bundled = _PKG / "_data" / name
    if bundled.is_dir():
        return bundled
    return _PKG.parents[1] / name


def rules_dir() -> Path:
    return _data_dir("rules", "ANONPSY_RULES")


def schemas_dir() -> Path:
    return _data_dir("schemas", "ANONPSY_SCHEMAS")


def adapters_dir() -> Path:
    return _data_dir("adapters", "ANONPSY_ADAPTERS")
