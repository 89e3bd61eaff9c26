"""Files of the anonymized table and of a synthetic corpus (formats, atomic writes, checked reads).

Anonymized directory (``anonpsy twin anonymize``): ``manifest.json``; ``anonymized.csv`` (``doc_id, item``: the
published set of every kept document); ``recoding.csv`` (``concept, item``: the frequency floor's global
recoding, empty item = deleted); ``outcomes.csv`` (``doc_id, concept, status, item, rule`` for every entity of
every document, the rule naming what allowed a generalisation or a deletion); ``loss.json`` (information loss
per type); ``verification.json`` (the after-the-fact check).

Synthetic directory (``anonpsy twin generate``): ``synthetic.jsonl`` (``{"id", "text"}``, shuffled, ids that say
nothing about the source) is what may be shared; ``links.jsonl`` (``{"id", "source"}``) is the private evaluation
key; ``summary.json`` (counts, and the source ids of the pool and of dropped documents: private too);
``manifest.json``; ``journal.jsonl`` while a run is incomplete (resumable; private: it holds source ids).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anonpsy.errors import AnonpsyError
from anonpsy.twin.anonymize import DELETED_FLOOR, DELETED_MATCHING, GENERALISED, Anonymized, Outcome
from anonpsy.twin.concepts import rule_source
from anonpsy.twin.errors import T102_BAD_TABLE, T109_BAD_SYNTH
from anonpsy.yamlio import write_atomic

ANON_FORMAT = "anonpsy.twin.anonymized"
SYNTH_FORMAT = "anonpsy.twin.synthetic"
VERSION = 1


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def read_csv(path: Path, header: Sequence[str], code: str = T102_BAD_TABLE) -> list[list[str]]:
    if not path.is_file():
        raise AnonpsyError(code, "missing file; rerun the step that writes it", path.name)
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    if not rows or rows[0] != list(header):
        raise AnonpsyError(code, f"unexpected header; expected {','.join(header)}", path.name)
    return rows[1:]


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_json(path: Path, fmt: str, code: str) -> dict[str, Any]:
    if not path.is_file():
        raise AnonpsyError(code, f"no {path.name}; not a {fmt} directory", path.parent.name)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        raise AnonpsyError(code, "not valid JSON", path.name) from None
    if not isinstance(data, dict) or data.get("format") != fmt or data.get("version") != VERSION:
        raise AnonpsyError(code, f"not a {fmt} v{VERSION} manifest", path.name)
    return data


# -------------------------------------------------------------------------------------------------------------
# Anonymized table


@dataclass
class AnonymizedTable:
    """An anonymized directory read back."""

    root: Path
    manifest: dict[str, Any]
    published: dict[str, frozenset[str]]
    recoding: dict[str, str | None]
    outcomes: dict[str, dict[str, tuple[str, str | None]]] = field(default_factory=dict)

    @property
    def k(self) -> int:
        return int(self.manifest["k"])


def write_anonymized(result: Anonymized, outdir: Path, *, table_root: Path, table_sha: str, loss: dict[str, Any],
                     verification: dict[str, Any]) -> dict[str, Any]:
    """Write every file of an anonymized directory (atomically, the manifest last)."""
    outdir.mkdir(parents=True, exist_ok=True)
    rows = [(d, item) for d, s in result.published.items() for item in sorted(s)]
    write_atomic(outdir / "anonymized.csv", csv_text(("doc_id", "item"), rows))
    write_atomic(outdir / "recoding.csv",
                 csv_text(("concept", "item"), sorted((c, i or "") for c, i in result.recoded.items())))
    outs = [(d, c, o.status, o.item or "", _why(o, result)) for d, oc in result.outcomes.items()
            for c, o in oc.items()]
    write_atomic(outdir / "outcomes.csv", csv_text(("doc_id", "concept", "status", "item", "rule"), outs))
    write_atomic(outdir / "loss.json", json.dumps(loss, indent=2) + "\n")
    write_atomic(outdir / "verification.json", json.dumps(verification, indent=2) + "\n")
    manifest = {
        "format": ANON_FORMAT, "version": VERSION, "k": result.k, "min_df": result.floor,
        "table": str(table_root.resolve()), "table_sha256": table_sha,
        "documents": len(result.published), "kept": len(result.kept_docs()), "groups": result.groups,
        "anonymized_sha256": sha256_file(outdir / "anonymized.csv"), "verified": bool(verification.get("ok")),
        **result.stats,
    }
    write_atomic(outdir / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    return manifest


def _why(o: Outcome, result: Anonymized) -> str:
    """Which rule allowed an outcome."""
    if o.status == GENERALISED and o.item is not None:
        return rule_source(o.item)
    if o.status == DELETED_FLOOR:
        return f"frequency floor: in fewer than {result.floor} documents, no generalisation reaches it"
    if o.status == DELETED_MATCHING:
        return f"{result.k}-anonymity: not shared by the documents of its group"
    return ""


def read_anonymized(root: Path) -> AnonymizedTable:
    """Read an anonymized directory (T102 on a missing or malformed file)."""
    man = read_json(root / "manifest.json", ANON_FORMAT, T102_BAD_TABLE)
    published: dict[str, set[str]] = {}
    for doc_id, item in read_csv(root / "anonymized.csv", ("doc_id", "item")):
        published.setdefault(doc_id, set()).add(item)
    recoding = {c: (i or None) for c, i in read_csv(root / "recoding.csv", ("concept", "item"))}
    outcomes: dict[str, dict[str, tuple[str, str | None]]] = {}
    for doc_id, c, status, item, _rule in read_csv(root / "outcomes.csv",
                                                   ("doc_id", "concept", "status", "item", "rule")):
        outcomes.setdefault(doc_id, {})[c] = (status, item or None)
    if sha256_file(root / "anonymized.csv") != man.get("anonymized_sha256"):
        raise AnonpsyError(T102_BAD_TABLE, "anonymized.csv does not match its manifest; rerun anonymize",
                           "anonymized.csv")
    return AnonymizedTable(root, man, {d: frozenset(s) for d, s in published.items()}, recoding, outcomes)


# -------------------------------------------------------------------------------------------------------------
# Synthetic corpus


@dataclass(frozen=True)
class SyntheticDoc:
    syn_id: str
    source: str
    text: str


def read_synthetic(root: Path) -> tuple[dict[str, Any], list[SyntheticDoc]]:
    """A finished synthetic directory: its manifest and documents joined with their sources."""
    man = read_json(root / "manifest.json", SYNTH_FORMAT, T109_BAD_SYNTH)
    texts: dict[str, str] = {}
    for name in ("synthetic.jsonl", "links.jsonl"):
        if not (root / name).is_file():
            raise AnonpsyError(T109_BAD_SYNTH, "missing file of a synthetic corpus", name)
    for lineno, line in enumerate((root / "synthetic.jsonl").read_text(encoding="utf-8").splitlines(), 1):
        try:
            rec = json.loads(line)
            texts[str(rec["id"])] = str(rec["text"])
        except (ValueError, KeyError, TypeError):
            raise AnonpsyError(T109_BAD_SYNTH, "malformed line", f"synthetic.jsonl:{lineno}") from None
    docs: list[SyntheticDoc] = []
    for lineno, line in enumerate((root / "links.jsonl").read_text(encoding="utf-8").splitlines(), 1):
        try:
            rec = json.loads(line)
            docs.append(SyntheticDoc(str(rec["id"]), str(rec["source"]), texts[str(rec["id"])]))
        except (ValueError, KeyError, TypeError):
            raise AnonpsyError(T109_BAD_SYNTH, "malformed line or unknown id", f"links.jsonl:{lineno}") from None
    if len(docs) != len(texts):
        raise AnonpsyError(T109_BAD_SYNTH, "synthetic.jsonl and links.jsonl list different documents", root.name)
    return man, docs
