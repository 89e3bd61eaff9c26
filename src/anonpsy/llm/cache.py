"""Content-addressed cache of validated model replies (SQLite, WAL, thread-safe).

The key is the SHA-256 of everything that shapes a reply: model, template id and version, the hash of the
rendered messages, the sampling parameters (temperature, max_tokens, requested response format, reply
schema) and the seed. A hit returns the stored, already validated JSON reply and skips the network.

**Sensitivity.** The cache stores replies, and replies are derived from the case narrative: the cache file
is as sensitive as the input itself. It is created with owner-only permissions; keep it on the user's
machine (never in a shared or synced folder), and delete it together with the case data. Pass ``cache_path:
null`` to disable it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Final

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    template_id TEXT NOT NULL,
    template_version INTEGER NOT NULL,
    model TEXT NOT NULL,
    created REAL NOT NULL,
    value TEXT NOT NULL
)
"""


class _Miss:
    def __repr__(self) -> str:
        return "MISS"


MISS: Final = _Miss()
"""Returned by :meth:`ResponseCache.get` when the key is absent (``None`` is a valid cached JSON value)."""


def canonical_json(value: Any) -> str:
    """Deterministic compact JSON used for hashing."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def sha256_text(text: str) -> str:
    """Hex SHA-256 of UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_key(
    *,
    model: str,
    template_id: str,
    template_version: int,
    messages: list[dict[str, str]],
    params: dict[str, Any],
    seed: int | None,
) -> str:
    """The cache key of one request (hex SHA-256)."""
    return sha256_text(
        canonical_json(
            {
                "model": model,
                "template_id": template_id,
                "template_version": template_version,
                "prompt_sha256": sha256_text(canonical_json(messages)),
                "params": params,
                "seed": seed,
            }
        )
    )


class ResponseCache:
    """SQLite reply cache. ``path`` may be ``":memory:"``. Safe to share between threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            file = Path(self.path)
            file.parent.mkdir(parents=True, exist_ok=True)
            if not file.exists():
                fd = os.open(file, os.O_CREAT | os.O_WRONLY, 0o600)
                os.close(fd)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0, isolation_level=None)
        with self._lock:
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)

    def get(self, key: str) -> Any:
        """The cached value for ``key``, or :data:`MISS`."""
        with self._lock:
            row = self._db.execute("SELECT value FROM replies WHERE key = ?", (key,)).fetchone()
        if row is None:
            return MISS
        return json.loads(row[0])

    def put(self, key: str, value: Any, *, template_id: str, template_version: int, model: str) -> None:
        """Store a validated reply (JSON-serialisable)."""
        text = canonical_json(value)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO replies (key, template_id, template_version, model, created, value) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (key, template_id, template_version, model, time.time(), text),
            )

    def __len__(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT COUNT(*) FROM replies").fetchone()
        return int(row[0])

    def clear(self) -> None:
        """Delete every cached reply."""
        with self._lock:
            self._db.execute("DELETE FROM replies")

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
