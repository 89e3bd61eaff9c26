"""The content-addressed SQLite reply cache and the metrics recorder."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from anonpsy.llm import CallRecord, Metrics, ResponseCache, cache_key
from anonpsy.llm.cache import MISS

BASE: dict[str, Any] = {
    "model": "m",
    "template_id": "echo",
    "template_version": 1,
    "messages": [{"role": "user", "content": "x"}],
    "params": {"temperature": 0.1, "max_tokens": 10, "response_format": ["json_schema"]},
    "seed": 1,
}


def test_get_put_and_miss(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "c.sqlite"
    with ResponseCache(path) as cache:
        assert cache.get("k") is MISS
        cache.put("k", None, template_id="t", template_version=1, model="m")
        cache.put("j", {"a": [1, "é"]}, template_id="t", template_version=1, model="m")
        assert cache.get("k") is None and cache.get("j") == {"a": [1, "é"]}
        assert len(cache) == 2
    with ResponseCache(path) as again:
        assert again.get("j") == {"a": [1, "é"]}
        again.clear()
        assert len(again) == 0


def test_cache_file_is_private_and_wal(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        cache.put("k", 1, template_id="t", template_version=1, model="m")
        mode = cache._db.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_key_is_stable() -> None:
    assert cache_key(**BASE) == cache_key(**dict(BASE, params=dict(reversed(list(BASE["params"].items())))))
    assert len(cache_key(**BASE)) == 64


@given(
    field=st.sampled_from(["model", "template_id", "template_version", "messages", "params", "seed"]),
    salt=st.integers(min_value=2, max_value=10_000),
)
def test_key_changes_with_every_component(field: str, salt: int) -> None:
    changed = {
        "model": f"m{salt}",
        "template_id": f"t{salt}",
        "template_version": salt,
        "messages": [{"role": "user", "content": f"x{salt}"}],
        "params": dict(BASE["params"], temperature=salt / 10_000 + 0.5),
        "seed": salt,
    }[field]
    assert cache_key(**BASE) != cache_key(**dict(BASE, **{field: changed}))


def test_threads_share_one_cache() -> None:
    cache = ResponseCache(":memory:")

    def work(i: int) -> None:
        for j in range(50):
            cache.put(f"{i}-{j}", {"i": i, "j": j}, template_id="t", template_version=1, model="m")
            assert cache.get(f"{i}-{j}") == {"i": i, "j": j}

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 400


def test_metrics_summary_per_case() -> None:
    m = Metrics()
    m.record(
        CallRecord(
            "echo",
            1,
            "extraction",
            "a",
            False,
            requests=2,
            retries=1,
            prompt_tokens=10,
            completion_tokens=4,
            latency_s=0.5,
        )
    )
    m.record(CallRecord("echo", 1, "extraction", "a", True))
    m.record(CallRecord("other", 2, "judge", "b", False, requests=1, reasks=1, latency_s=0.1, ok=False))
    a = m.summary("a")
    assert (a["calls"], a["cache_hits"], a["requests"], a["retries"]) == (2, 1, 2, 1)
    assert (a["prompt_tokens"], a["completion_tokens"], a["latency_s_max"]) == (10, 4, 0.5)
    assert a["by_template"] == {"echo@v1": {"calls": 2, "cache_hits": 1, "failures": 0}}
    total = m.summary()
    assert total["calls"] == 3 and total["failures"] == 1 and total["reasks"] == 1
    assert m.case_ids() == ["a", "b"] and len(m.as_list("b")) == 1
