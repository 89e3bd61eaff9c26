"""Content-addressed cache of evaluation work (method outputs, metrics, judge replies).

An entry's key is the SHA-256 of the canonical JSON of everything its value depends on -- for a method
output: the method name and version, the seed, the SHA-256 of the case text and the method's configuration
(rules and prompt digests, model settings) -- so a rerun finds exactly the work whose inputs did not change,
and anything that changed is computed again. Entries are JSON files ``<root>/<kind>/<kk>/<key>.json``, each
written atomically; an unreadable entry counts as a miss and is overwritten.

The cache holds de-identified outputs derived from the cases: it is as sensitive as the corpus and belongs
with it. With ``root=None`` the cache lives in memory only.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anonpsy.yamlio import write_atomic

CACHE_VERSION = 1


def canonical(obj: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, non-ASCII kept."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def digest(obj: Any) -> str:
    """SHA-256 hex digest of the canonical JSON of ``obj`` (strings are hashed as their UTF-8 bytes)."""
    data = obj if isinstance(obj, str) else canonical(obj)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def files_digest(paths: list[Path], base: Path) -> str:
    """SHA-256 over the relative names and bytes of ``paths`` (sorted), e.g. a rules or prompts directory."""
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(str(p.relative_to(base)).encode("utf-8"))
        h.update(b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


@dataclass
class KindStats:
    """Counters of one kind of entry."""

    hits: int = 0
    misses: int = 0
    writes: int = 0
    unreadable: int = 0


class EvalCache:
    """A directory (or in-memory) store of JSON values under content keys, with hit/miss counters per kind."""

    def __init__(self, root: Path | None) -> None:
        self.root = Path(root) if root is not None else None
        self._memory: dict[tuple[str, str], dict[str, Any]] = {}
        self._stats: dict[str, KindStats] = {}
        self._lock = threading.Lock()

    @staticmethod
    def key(kind: str, parts: Mapping[str, Any]) -> str:
        """The content key of an entry of ``kind`` whose value depends on ``parts``."""
        return digest({"cache_version": CACHE_VERSION, "kind": kind, **parts})

    def _path(self, kind: str, key: str) -> Path:
        assert self.root is not None
        return self.root / kind / key[:2] / f"{key}.json"

    def _kind(self, kind: str) -> KindStats:
        return self._stats.setdefault(kind, KindStats())

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        """The stored value, or None (a miss; an unreadable file is a miss too)."""
        value: dict[str, Any] | None = None
        unreadable = False
        if self.root is None:
            value = self._memory.get((kind, key))
        else:
            path = self._path(kind, key)
            if path.is_file():
                try:
                    loaded = json.loads(path.read_text(encoding="utf-8"))
                    if isinstance(loaded, dict) and loaded.get("key") == key and isinstance(loaded.get("value"), dict):
                        value = loaded["value"]
                    else:
                        unreadable = True
                except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                    unreadable = True
        with self._lock:
            stats = self._kind(kind)
            if value is None:
                stats.misses += 1
                stats.unreadable += unreadable
            else:
                stats.hits += 1
        return value

    def put(self, kind: str, key: str, value: Mapping[str, Any]) -> None:
        """Store ``value`` (JSON-serializable) under ``key``."""
        data = dict(value)
        if self.root is None:
            self._memory[(kind, key)] = json.loads(canonical(data))
        else:
            text = json.dumps({"key": key, "kind": kind, "value": data}, ensure_ascii=False, sort_keys=True,
                              default=str)
            write_atomic(self._path(kind, key), text + "\n")
        with self._lock:
            self._kind(kind).writes += 1

    def stats(self) -> dict[str, KindStats]:
        """Counters per kind, in first-use order."""
        return dict(self._stats)

    def total(self) -> KindStats:
        """Counters summed over all kinds."""
        out = KindStats()
        for s in self._stats.values():
            out.hits += s.hits
            out.misses += s.misses
            out.writes += s.writes
            out.unreadable += s.unreadable
        return out
