"""Corpora for the RecordTwin commands: a JSONL file (optionally gzip-compressed) or a directory of ``.txt`` files.

JSONL: one object per line with a string ``text`` and an id in ``id``, ``note_id`` or ``case_id`` (else
``line<N>``); every other scalar field is kept as metadata (``medical_specialty`` of MTSamples is the label of
the utility task). Directory: every ``*.txt`` file, sorted by name, its id the file stem, no metadata.

Errors are one line with a code and the file name (and line), never text from a record.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from anonpsy import errors
from anonpsy.corpusio import ID_FIELDS, case_id_from, read_jsonl_records
from anonpsy.errors import AnonpsyError


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


def _from_jsonl(path: Path) -> list[Document]:
    docs: list[Document] = []
    for r in read_jsonl_records(path):
        if not r.text.strip():
            raise AnonpsyError(errors.E101_EMPTY_INPUT, "the record's text is empty", r.where)
        meta = {k: str(v) for k, v in r.fields.items()
                if k != "text" and k not in ID_FIELDS and isinstance(v, str | int | float | bool)}
        docs.append(Document(r.record_id, r.text, meta))
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
