"""Evaluation corpora: a directory of ``.txt`` case narratives or a JSONL file, with optional diagnoses.

* **Directory**: every ``*.txt`` file (sorted by name) is one case, its id the file stem. Ground-truth
  diagnoses, when known, sit beside it in ``<stem>.dx.yaml`` or ``<stem>.expected.yaml`` (the fixtures'
  expected-facts format) under the key ``diagnoses``: a list of DSM rule ids or labels (strings, or mappings
  with ``label``, ``rule_id`` or ``id``).
* **JSONL**: one object per line, ``{"id": ..., "text": ..., "diagnoses": [...]}``; the id may also be given as
  ``note_id`` (mtsamples) or ``case_id``; ``diagnoses`` is optional.

A case without diagnoses is scored against the diagnoses the rules extractor finds in its original text.
Errors are one line with a code and the file name (and line), never narrative text.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from anonpsy import errors
from anonpsy.corpusio import case_id_from, read_jsonl_records
from anonpsy.errors import AnonpsyError
from anonpsy.yamlio import load_yaml

DX_SUFFIXES = (".dx.yaml", ".expected.yaml")
DEFAULT_MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class Case:
    """One narrative of the corpus. ``diagnoses`` is None when the corpus gives no ground truth for it."""

    case_id: str
    text: str
    diagnoses: tuple[str, ...] | None = None

    @property
    def text_sha256(self) -> str:
        """SHA-256 of the UTF-8 text (the case's identity in the cache)."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def parse_diagnoses(value: Any, where: str) -> tuple[str, ...]:
    """Diagnosis labels from a ``diagnoses`` value: strings, or mappings with ``label``/``rule_id``/``id``."""
    if not isinstance(value, list):
        raise AnonpsyError(errors.E103_SCHEMA, "'diagnoses' must be a list of labels or rule ids", where)
    out: list[str] = []
    for item in value:
        label: Any = item
        if isinstance(item, dict):
            label = item.get("label") or item.get("rule_id") or item.get("id")
        if not isinstance(label, str) or not label.strip():
            raise AnonpsyError(
                errors.E103_SCHEMA, "each diagnosis must be a non-empty string or have a 'label' or 'id'", where
            )
        out.append(label.strip())
    return tuple(out)


def _dx_file(txt: Path) -> Path | None:
    stem = txt.name[: -len(".txt")]
    for suffix in DX_SUFFIXES:
        candidate = txt.with_name(stem + suffix)
        if candidate.is_file():
            return candidate
    return None


def _read_dx(path: Path) -> tuple[str, ...] | None:
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError):
        raise AnonpsyError(errors.E102_MALFORMED_YAML, "malformed diagnoses file; fix the YAML", path.name) from None
    if not isinstance(data, dict):
        raise AnonpsyError(errors.E103_SCHEMA, "a diagnoses file must be a YAML mapping", path.name)
    if "diagnoses" not in data:
        return None
    return parse_diagnoses(data["diagnoses"], path.name)


def _load_dir(root: Path, max_bytes: int) -> list[Case]:
    from anonpsy.graphio import read_text_input

    cases: list[Case] = []
    seen: set[str] = set()
    for txt in sorted(root.glob("*.txt")):
        cid = case_id_from(txt.stem)
        if cid in seen:
            raise AnonpsyError(errors.E103_SCHEMA, "two files give the same case id", txt.name)
        seen.add(cid)
        dx_path = _dx_file(txt)
        dx = _read_dx(dx_path) if dx_path is not None else None
        cases.append(Case(cid, read_text_input(txt, max_bytes=max_bytes), dx))
    return cases


def _load_jsonl(path: Path, max_bytes: int) -> list[Case]:
    cases: list[Case] = []
    for r in read_jsonl_records(path, what="case"):
        if not r.text.strip():
            raise AnonpsyError(errors.E101_EMPTY_INPUT, "the case text is empty", r.where)
        if len(r.text.encode("utf-8")) > max_bytes:
            raise AnonpsyError(errors.E107_TOO_LARGE, f"case is over {max_bytes} bytes; raise --max-bytes", r.where)
        diagnoses = r.fields.get("diagnoses")
        dx = parse_diagnoses(diagnoses, r.where) if diagnoses is not None else None
        cases.append(Case(r.record_id, r.text, dx))
    return cases


def load_corpus(path: Path, *, limit: int | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> list[Case]:
    """The cases of a corpus directory or JSONL file, in order, the first ``limit`` only when given.

    Raises AnonpsyError: E100 (not found), E101 (no cases), E102/E103 (bad diagnoses or records), E105-E107
    (unreadable text), E108 (malformed JSON line), E109 (bad ``limit``).
    """
    if limit is not None and limit < 1:
        raise AnonpsyError(errors.E109_BAD_OPTION, "--limit must be at least 1", "--limit")
    p = Path(path)
    if p.is_dir():
        cases = _load_dir(p, max_bytes)
        if not cases:
            raise AnonpsyError(errors.E101_EMPTY_INPUT, "the corpus directory has no .txt case files", p.name)
    elif p.is_file():
        cases = _load_jsonl(p, max_bytes)
        if not cases:
            raise AnonpsyError(errors.E101_EMPTY_INPUT, "the corpus file has no cases", p.name)
    else:
        raise AnonpsyError(
            errors.E100_MISSING_FILE, "corpus not found: give a directory of .txt files or a JSONL file", p.name
        )
    return cases[:limit] if limit is not None else cases
