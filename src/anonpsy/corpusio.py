"""Reading corpora of case narratives: safe case ids and JSONL records, shared by every command that takes one.

A JSONL corpus has one object per line with a string ``text`` and an id in ``id``, ``note_id`` (MTSamples) or
``case_id`` (the first that is present and not null; else ``line<N>``). A file whose name ends in ``.gz`` is read
through gzip. Blank lines are skipped. Errors are one line with a code and ``file:line``, never record text.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anonpsy import errors
from anonpsy.errors import AnonpsyError

ID_FIELDS = ("id", "note_id", "case_id")


def case_id_from(raw: str) -> str:
    """A safe case id (letters, digits, ``_ . -``; starts with a letter or digit) from a stem or record id."""
    cid = re.sub(r"[^A-Za-z0-9_.-]", "_", raw).strip("._-") or "case"
    return cid if cid[0].isalnum() else f"c{cid}"


@dataclass(frozen=True)
class JsonlRecord:
    """One line of a JSONL corpus: where it is (``file:line``), its safe id, its text and the whole object."""

    where: str
    record_id: str
    text: str
    fields: dict[str, Any]


def read_jsonl_records(path: Path, *, what: str = "record") -> list[JsonlRecord]:
    """Every record of a JSONL corpus, in order, with unique safe ids.

    Raises AnonpsyError: E100 (unreadable, or not valid gzip), E105/E106 (not UTF-8 text, binary), E108 (a
    malformed JSON line), E103 (a line without a string ``text``, or a duplicate id; ``what`` names the record in
    that message: "case", "record").
    """
    from anonpsy.graphio import decode_text

    gz = path.name.endswith(".gz")
    try:
        raw = gzip.decompress(path.read_bytes()) if gz else path.read_bytes()
    except OSError:
        msg = "corpus file cannot be read (or is not valid gzip)" if gz else "corpus file cannot be read"
        raise AnonpsyError(errors.E100_MISSING_FILE, msg, path.name) from None
    out: list[JsonlRecord] = []
    seen: set[str] = set()
    for lineno, line in enumerate(decode_text(raw, path.name).splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path.name}:{lineno}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            raise AnonpsyError(errors.E108_MALFORMED_JSON, "malformed JSON line", where) from None
        if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
            raise AnonpsyError(errors.E103_SCHEMA, "each line needs a string field 'text'", where)
        raw_id = next((rec[k] for k in ID_FIELDS if rec.get(k) is not None), f"line{lineno}")
        rid = case_id_from(str(raw_id))
        if rid in seen:
            raise AnonpsyError(errors.E103_SCHEMA, f"duplicate {what} id", where)
        seen.add(rid)
        out.append(JsonlRecord(where, rid, rec["text"], rec))
    return out
