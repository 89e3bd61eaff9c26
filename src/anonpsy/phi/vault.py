"""A persisted surrogate vault: the same entity gets the same surrogate across documents and runs.

The vault is an sqlite file holding, for each entity cluster, its type and its surrogate (invented values),
and for each known variant of the entity an opaque key ``HMAC-SHA256(key, type + "\\x1f" + normalized
value)``. Raw values are never stored: a variant can be looked up by someone holding the key and the value,
but the file alone reveals neither. A key check value in the ``meta`` table makes opening a vault with a
different key an error instead of a silent second set of surrogates.

Tables::

    meta(name PRIMARY KEY, value)
    clusters(cluster_id PRIMARY KEY, type, surrogate JSON, seq)
    variants(vkey, cluster_id, PRIMARY KEY (vkey, cluster_id))
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from anonpsy.errors import AnonpsyError
from anonpsy.phi.operators import M101_VAULT_KEY_MISMATCH, M102_VAULT_UNREADABLE

VAULT_FORMAT = "1"
_CHECK_LABEL = b"anonpsy-surrogate-vault-v1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS clusters (
    cluster_id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    surrogate TEXT NOT NULL,
    seq INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS variants (
    vkey TEXT NOT NULL,
    cluster_id TEXT NOT NULL,
    PRIMARY KEY (vkey, cluster_id)
);
"""

Surrogate = dict[str, str]


def keyed_digest(key: bytes, label: str, value: str) -> bytes:
    """HMAC-SHA256 of ``label + "\\x1f" + value`` under ``key``."""
    return hmac.new(key, label.encode("utf-8") + b"\x1f" + value.encode("utf-8"), hashlib.sha256).digest()


class SurrogateVault:
    """Store of entity clusters and their surrogates, keyed by HMAC of normalized values.

    ``path`` may be ``":memory:"`` for a vault that lives only as long as the object (consistent within a
    run). Changes are committed by :meth:`commit` and on a clean ``close``/context exit.
    """

    def __init__(self, key: bytes, path: str | Path = ":memory:") -> None:
        if not key:
            raise ValueError("vault key must not be empty")
        self._key = key
        self.path = str(path)
        try:
            self._db = sqlite3.connect(self.path)
            self._db.executescript(_SCHEMA)
            check = hmac.new(key, _CHECK_LABEL, hashlib.sha256).hexdigest()
            row = self._db.execute("SELECT value FROM meta WHERE name = 'key_check'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise AnonpsyError(
                M102_VAULT_UNREADABLE,
                "the surrogate vault is not a readable sqlite database; give a new path or the right file",
                location="vault",
            ) from exc
        if row is None:
            self._db.execute("INSERT INTO meta (name, value) VALUES ('key_check', ?)", (check,))
            self._db.execute("INSERT INTO meta (name, value) VALUES ('format', ?)", (VAULT_FORMAT,))
            self._db.commit()
        elif not hmac.compare_digest(str(row[0]), check):
            self._db.close()
            raise AnonpsyError(
                M101_VAULT_KEY_MISMATCH,
                "the surrogate vault was created with a different key; "
                "use the same ANONPSY_HMAC_KEY or a new vault",
                location="vault",
            )
        seq_row = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM clusters").fetchone()
        self._seq = int(seq_row[0])
        self._cache: dict[str, list[str]] = {}
        self._surrogates: dict[str, Surrogate] = {}

    # -- keys -----------------------------------------------------------------------------------------------

    def variant_key(self, entity_type: str, normalized: str) -> str:
        """Opaque lookup key of one normalized variant of an entity of ``entity_type``."""
        return keyed_digest(self._key, entity_type, normalized).hex()

    def seed_for(self, vkey: str, attempt: int = 0) -> int:
        """A 64-bit seed derived from a variant key (for seeding surrogate generation)."""
        digest = keyed_digest(self._key, "seed", f"{vkey}:{attempt}")
        return int.from_bytes(digest[:8], "big")

    # -- reads ----------------------------------------------------------------------------------------------

    def lookup(self, vkey: str) -> list[str]:
        """Cluster ids holding this variant, oldest first."""
        cached = self._cache.get(vkey)
        if cached is not None:
            return list(cached)
        rows = self._db.execute(
            "SELECT v.cluster_id FROM variants v JOIN clusters c ON c.cluster_id = v.cluster_id "
            "WHERE v.vkey = ? ORDER BY c.seq",
            (vkey,),
        ).fetchall()
        ids = [str(r[0]) for r in rows]
        self._cache[vkey] = ids
        return list(ids)

    def surrogate(self, cluster_id: str) -> Surrogate:
        """The stored surrogate parts of a cluster."""
        cached = self._surrogates.get(cluster_id)
        if cached is not None:
            return dict(cached)
        row = self._db.execute(
            "SELECT surrogate FROM clusters WHERE cluster_id = ?", (cluster_id,)
        ).fetchone()
        if row is None:
            raise KeyError(cluster_id)
        value: Surrogate = json.loads(row[0])
        self._surrogates[cluster_id] = value
        return dict(value)

    def clusters(self) -> Iterator[tuple[str, str, Surrogate]]:
        """All clusters as ``(cluster_id, type, surrogate)``, oldest first."""
        for cid, etype, sur in self._db.execute(
            "SELECT cluster_id, type, surrogate FROM clusters ORDER BY seq"
        ):
            yield str(cid), str(etype), json.loads(sur)

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM clusters").fetchone()[0])

    # -- writes ---------------------------------------------------------------------------------------------

    def create_cluster(self, entity_type: str, surrogate: Surrogate, vkeys: list[str]) -> str:
        """Create a cluster with its surrogate and register its variant keys; returns the cluster id."""
        if not vkeys:
            raise ValueError("a cluster needs at least one variant key")
        base = keyed_digest(self._key, "cluster", vkeys[0]).hex()[:16]
        cluster_id = f"c{base}"
        n = 1
        while self._db.execute("SELECT 1 FROM clusters WHERE cluster_id = ?", (cluster_id,)).fetchone():
            n += 1
            cluster_id = f"c{base}-{n}"
        self._seq += 1
        self._db.execute(
            "INSERT INTO clusters (cluster_id, type, surrogate, seq) VALUES (?, ?, ?, ?)",
            (cluster_id, entity_type, json.dumps(surrogate, sort_keys=True), self._seq),
        )
        self._surrogates[cluster_id] = dict(surrogate)
        self.add_variants(cluster_id, vkeys)
        return cluster_id

    def add_variants(self, cluster_id: str, vkeys: list[str]) -> None:
        """Register more variant keys for an existing cluster."""
        for vkey in vkeys:
            self._db.execute(
                "INSERT OR IGNORE INTO variants (vkey, cluster_id) VALUES (?, ?)", (vkey, cluster_id)
            )
            ids = self._cache.get(vkey)
            if ids is not None and cluster_id not in ids:
                ids.append(cluster_id)

    def commit(self) -> None:
        """Persist pending changes."""
        self._db.commit()

    def close(self, *, commit: bool = True) -> None:
        """Commit (unless told not to) and close the database."""
        if commit:
            self._db.commit()
        self._db.close()

    def __enter__(self) -> SurrogateVault:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close(commit=exc_type is None)
