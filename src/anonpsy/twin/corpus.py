"""Corpora for the RecordTwin commands: a JSONL file (optionally gzip-compressed) or a directory of ``.txt`` files.

JSONL: one object per line with a string ``text`` and an id in ``id``, ``note_id`` or ``case_id`` (else
``line<N>``); every other scalar field is kept as metadata (``medical_specialty`` of MTSamples is the label of
the utility task). Directory: every ``*.txt`` file, sorted by name, its id the file stem, no metadata.

Errors are one line with a code and the file name (and line), never text from a record.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from anonpsy import errors
from anonpsy.errors import AnonpsyError
from anonpsy.evaluate.corpus import case_id_from
from anonpsy.graphio import decode_text

ID_FIELDS = ("id", "note_id", "case_id")


@dataclass(frozen=True)
class Document:
    """One record of a corpus: its id, its text and its other scalar fields as strings."""

    doc_id: str
    text: str
    meta: dict[str, str] = field(default_factory=dict)


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes (a directory: of its sorted ``.txt`` names and contents)."""
    h = hashlib.sha256()
    if path.is_dir():
        for p in sorted(path.glob("*.txt")):
            h.update(p.name.encode("utf-8") + b"\0" + p.read_bytes() + b"\0")
    else:
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        raw = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    except OSError:
        raise AnonpsyError(errors.E100_MISSING_FILE, "corpus file cannot be read (or is not valid gzip)",
                           path.name) from None
    text = decode_text(raw, path.name)
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.strip():
            yield lineno, line


def _from_jsonl(path: Path) -> list[Document]:
    docs: list[Document] = []
    seen: set[str] = set()
    for lineno, line in _lines(path):
        where = f"{path.name}:{lineno}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            raise AnonpsyError(errors.E108_MALFORMED_JSON, "malformed JSON line", where) from None
        if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
            raise AnonpsyError(errors.E103_SCHEMA, "each line needs a string field 'text'", where)
        if not rec["text"].strip():
            raise AnonpsyError(errors.E101_EMPTY_INPUT, "the record's text is empty", where)
        raw_id = next((rec[k] for k in ID_FIELDS if rec.get(k) is not None), f"line{lineno}")
        doc_id = case_id_from(str(raw_id))
        if doc_id in seen:
            raise AnonpsyError(errors.E103_SCHEMA, "duplicate record id", where)
        seen.add(doc_id)
        meta = {k: str(v) for k, v in rec.items()
                if k != "text" and k not in ID_FIELDS and isinstance(v, str | int | float | bool)}
        docs.append(Document(doc_id, rec["text"], meta))
    return docs


def _from_dir(root: Path) -> list[Document]:
    from anonpsy.graphio import read_text_input

    docs: list[Document] = []
    seen: set[str] = set()
    for p in sorted(root.glob("*.txt")):
        doc_id = case_id_from(p.stem)
        if doc_id in seen:
            raise AnonpsyError(errors.E103_SCHEMA, "two files give the same document id", p.name)
        seen.add(doc_id)
        docs.append(Document(doc_id, read_text_input(p)))
    return docs


def load_documents(path: Path, *, limit: int | None = None) -> list[Document]:
    """The documents of a corpus, in order (the first ``limit`` only when given)."""
    if limit is not None and limit < 1:
        raise AnonpsyError(errors.E109_BAD_OPTION, "--limit must be at least 1", "--limit")
    p = Path(path)
    if p.is_dir():
        docs = _from_dir(p)
    elif p.is_file():
        docs = _from_jsonl(p)
    else:
        raise AnonpsyError(errors.E100_MISSING_FILE,
                           "corpus not found: give a JSONL file (.jsonl or .jsonl.gz) or a directory of .txt files",
                           p.name)
    if not docs:
        raise AnonpsyError(errors.E101_EMPTY_INPUT, "the corpus has no documents", p.name)
    return docs[:limit] if limit is not None else docs
