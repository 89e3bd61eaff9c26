"""Shared test configuration: Hypothesis profiles chosen by HYPOTHESIS_PROFILE (dev, ci, nightly)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=25, deadline=None)
settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile(
    "nightly", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return SHARED / "data"


@pytest.fixture
def no_embedding_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The llm backend's sentence-embedding filter off (it is exercised in the unit tests with a fake encoder, not
    loaded in the end-to-end tests), with its cache cleared before and after."""
    from anonpsy.llm_backend.perturb_llm import embedding_similarity

    monkeypatch.setenv("ANONPSY_LLM_EMBEDDINGS", "0")
    embedding_similarity.cache_clear()
    yield
    embedding_similarity.cache_clear()
