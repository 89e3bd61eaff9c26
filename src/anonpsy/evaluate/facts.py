"""Clinical fact annotations (``facts.v1``): what a faithful rewrite of a note must keep true.

A facts file is a YAML list with one item per note (format: ``schemas/facts.v1.json``; the shared data's
``FACTS.md`` explains how to annotate)::

    - note_id: 1234
      sex: female
      age: 33
      diagnoses:
        - {label: attention-deficit/hyperactivity disorder, mentions: [ADHD], status: ruled_out}
      medications:
        - {name: escitalopram, mentions: [Lexapro], status: past}
      denied: [suicidal ideation]
      key_findings: [depressed mood]

:func:`load_facts` validates the file against the JSON Schema and returns the notes keyed by case id (the
``note_id`` made safe the way the corpus loader makes record ids safe, so ``1234`` annotates the JSONL record
with ``"note_id": 1234``). Errors are one line with a code and ``file:line`` (or the entry number) and never
repeat a value from the file: annotations quote patient text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml

from anonpsy import errors
from anonpsy.errors import AnonpsyError

FACTS_FILENAME = "facts.yaml"
SCHEMA_NAME = "facts.v1.json"

DxStatus = Literal["affirmed", "possible", "ruled_out", "past", "family"]
MedStatus = Literal["current", "past", "planned", "refused"]
DX_STATUSES: tuple[DxStatus, ...] = ("affirmed", "possible", "ruled_out", "past", "family")
MED_STATUSES: tuple[MedStatus, ...] = ("current", "past", "planned", "refused")


@dataclass(frozen=True)
class DiagnosisFact:
    """One annotated diagnosis: its DSM-5-TR label, the note's surface forms and its status."""

    label: str
    mentions: tuple[str, ...]
    status: DxStatus


@dataclass(frozen=True)
class MedicationFact:
    """One annotated medication: generic name, the note's surface forms and its status."""

    name: str
    mentions: tuple[str, ...]
    status: MedStatus


@dataclass(frozen=True)
class FactsNote:
    """The annotation of one note."""

    note_id: str
    case_id: str
    diagnoses: tuple[DiagnosisFact, ...]
    medications: tuple[MedicationFact, ...]
    denied: tuple[str, ...]
    key_findings: tuple[str, ...] = ()
    sex: str = "unknown"
    age: int | None = None


@lru_cache(maxsize=1)
def facts_schema() -> dict[str, Any]:
    """The ``facts.v1`` JSON Schema."""
    from anonpsy.paths import schemas_dir

    data: dict[str, Any] = json.loads((schemas_dir() / SCHEMA_NAME).read_text(encoding="utf-8"))
    return data


def _describe(err: Any) -> str:
    """A schema error as words, never quoting the offending value (annotations hold patient text)."""
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in list(err.absolute_path)[1:])
    where = path.lstrip(".") or "entry"
    v = err.validator
    if v == "required":
        missing = [str(p) for p in err.validator_value if isinstance(err.instance, dict) and p not in err.instance]
        return f"{where}: missing required field(s) {', '.join(missing)}"
    if v == "additionalProperties":
        known = err.schema.get("properties", {})
        extra = sorted(str(k) for k in err.instance if k not in known) if isinstance(err.instance, dict) else []
        return f"{where}: unknown field(s) {', '.join(extra)}; allowed: {', '.join(known)}"
    if v == "enum":
        return f"{where}: must be one of {', '.join(str(x) for x in err.validator_value)}"
    if v == "type":
        want = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        return f"{where}: must be of type {' or '.join(str(w) for w in want)}"
    if v in ("minLength", "pattern"):
        return f"{where}: must be a non-empty string"
    if v == "maxItems":
        return f"{where}: at most {err.validator_value} items"
    if v in ("minimum", "maximum"):
        return f"{where}: out of range ({v} {err.validator_value})"
    return f"{where}: fails the schema ({v})"


def parse_facts(data: Any, where: str, lines: dict[str, int] | None = None) -> list[FactsNote]:
    """Annotated notes from parsed YAML/JSON data; raises AnonpsyError (E103) at the first schema problem."""
    import jsonschema

    from anonpsy.corpusio import case_id_from
    from anonpsy.yamlio import line_for

    validator = jsonschema.Draft202012Validator(facts_schema())
    problems = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    if problems:
        err = problems[0]
        path = list(err.absolute_path)
        loc = where
        if lines is not None:
            loc = f"{where}:{line_for(lines, '/' + '/'.join(str(p) for p in path))}"
        entry = f"entry {int(path[0]) + 1} " if path and isinstance(path[0], int) else ""
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        msg = f"{entry}{_describe(err)}{more}" if path else "a facts file must be a YAML list of notes (facts.v1)"
        raise AnonpsyError(errors.E103_SCHEMA, msg, loc)
    notes: list[FactsNote] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(data, 1):
        cid = case_id_from(str(item["note_id"]))
        if cid in seen:
            loc = f"{where}:{line_for(lines, f'/{i - 1}')}" if lines is not None else where
            raise AnonpsyError(errors.E103_SCHEMA, f"entry {i}: note_id repeats entry {seen[cid]}", loc)
        seen[cid] = i
        notes.append(FactsNote(
            note_id=str(item["note_id"]),
            case_id=cid,
            diagnoses=tuple(DiagnosisFact(d["label"].strip(), tuple(m.strip() for m in d.get("mentions") or ()),
                                          d["status"]) for d in item["diagnoses"]),
            medications=tuple(MedicationFact(m["name"].strip(), tuple(x.strip() for x in m.get("mentions") or ()),
                                             m["status"]) for m in item["medications"]),
            denied=tuple(x.strip() for x in item["denied"]),
            key_findings=tuple(x.strip() for x in item.get("key_findings") or ()),
            sex=str(item.get("sex") or "unknown"),
            age=item.get("age"),
        ))
    return notes


def load_facts(path: Path) -> dict[str, FactsNote]:
    """The annotated notes of a ``facts.v1`` YAML (or JSON) file, keyed by case id.

    Raises AnonpsyError: E100 (missing or unreadable), E105 (not UTF-8), E102 (malformed YAML), E103 (schema
    problem or a repeated note_id), each naming the file and line, never a value.
    """
    from anonpsy.yamlio import load_yaml_lines

    p = Path(path)
    if not p.is_file():
        raise AnonpsyError(errors.E100_MISSING_FILE, "facts file not found", p.name)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise AnonpsyError(errors.E105_NOT_UTF8, "facts file is not UTF-8 text", p.name) from None
    except OSError:
        raise AnonpsyError(errors.E100_MISSING_FILE, "facts file cannot be read", p.name) from None
    try:
        data, lines = load_yaml_lines(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        loc = f"{p.name}:{mark.line + 1}" if mark is not None else p.name
        raise AnonpsyError(errors.E102_MALFORMED_YAML, "malformed YAML in the facts file; fix the syntax",
                           loc) from None
    return {n.case_id: n for n in parse_facts(data, p.name, lines)}


def facts_beside(corpus: Path) -> Path | None:
    """``facts.yaml`` beside a corpus: inside a corpus directory, or next to a corpus file; None if absent."""
    p = Path(corpus)
    candidate = p / FACTS_FILENAME if p.is_dir() else p.parent / FACTS_FILENAME
    return candidate if candidate.is_file() else None


def annotated(notes: dict[str, FactsNote], case_ids: Sequence[str]) -> list[str]:
    """The case ids among ``case_ids`` that have an annotation, in order."""
    return [c for c in case_ids if c in notes]
