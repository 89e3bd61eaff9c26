"""Readers of annotated PHI corpora into one form: documents with gold spans typed as EntityType values.

Formats:

* ``jsonl`` — one object per line ``{"id", "text", "spans": [{"start", "end", "type"}]}`` (also what ``anonpsy
  mask --input-format jsonl`` writes, so predictions use it too);
* ``brat`` — a directory of ``<id>.txt`` + ``<id>.ann`` standoff files (``T1<TAB>TYPE start end[;start
  end]<TAB>text``; discontinuous entities become one span per fragment);
* ``asq`` — blocks ``===QUERY===`` text ``===PHI_TAGS===`` then one ``{"identifier_type", "value"}`` per line;
  values are located with ``str.find`` (successive occurrences for repeated values);
* ``presidio`` — presidio-research's JSON list of ``{"full_text", "spans": [{"entity_type", "entity_value",
  "start_position", "end_position"}]}``;
* ``physionet`` — the PhysioNet deid corpus: ``id.text`` with records ``START_OF_RECORD=<patient>||||<note>||||``
  + newline + body + ``||||END_OF_RECORD``, and ``id-phi.phrase`` with one span per line ``<patient> <note>
  <start> <end> <TYPE> <phrase>`` (0-based offsets into the body, end exclusive); document ids are
  ``<patient>-<note>``.

Dataset types are mapped to :class:`~anonpsy.phi.types.EntityType` by :data:`TYPE_MAP`; a type mapped to
``None`` is not PHI for evaluation (e.g. presidio's ``TITLE``, ``NRP``) and is dropped. Unknown dataset types
that are already EntityType values are kept; others are an ``M104`` error.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from anonpsy.errors import AnonpsyError
from anonpsy.phi.operators import M104_BAD_EVAL_INPUT
from anonpsy.phi.types import EntityType

Format = Literal["jsonl", "brat", "asq", "presidio", "physionet"]
FORMATS: tuple[str, ...] = ("jsonl", "brat", "asq", "presidio", "physionet")

E = EntityType

TYPE_MAP: dict[str, str | None] = {
    # asq-phi (HIPAA identifier names)
    "NAME": E.PERSON,
    "GEOGRAPHIC_LOCATION": E.LOCATION,
    "MEDICAL_RECORD_NUMBER": E.MEDICAL_RECORD_NUMBER,
    "HEALTH_PLAN_BENEFICIARY_NUMBER": E.HEALTH_PLAN_ID,
    "SOCIAL_SECURITY_NUMBER": E.SSN_OR_TAXPAYER,
    "PHONE_NUMBER": E.TELEPHONE_NUMBER,
    "EMAIL_ADDRESS": E.EMAIL,
    "CERTIFICATE_LICENSE_NUMBER": E.LICENSE_NUMBER,
    "UNIQUE_IDENTIFIER": E.OTHER_ID,
    # presidio-research
    "STREET_ADDRESS": E.ADDRESS,
    "GPE": E.LOCATION,
    "CREDIT_CARD": E.CREDIT_DEBIT_NUMBER,
    "DATE_TIME": E.DATE,
    "TITLE": None,
    "NRP": None,
    "DOMAIN_NAME": E.URL,
    "IBAN_CODE": E.IBAN,
    "US_SSN": E.SSN_OR_TAXPAYER,
    "US_DRIVER_LICENSE": E.DRIVER_ID_US,
    # i2b2 2014 / BRAT-style labels
    "PATIENT": E.PERSON,
    "DOCTOR": E.PERSON,
    "USERNAME": E.OTHER_ID,
    "HOSPITAL": E.ORGANIZATION,
    "CITY": E.LOCATION,
    "STATE": E.LOCATION,
    "COUNTRY": E.LOCATION,
    "STREET": E.ADDRESS,
    "ZIP": E.ZIP_CODE,
    "LOCATION-OTHER": E.LOCATION,
    "PROFESSION": E.OCCUPATION,
    "PHONE": E.TELEPHONE_NUMBER,
    "FAX": E.FAX_NUMBER,
    "MEDICALRECORD": E.MEDICAL_RECORD_NUMBER,
    "HEALTHPLAN": E.HEALTH_PLAN_ID,
    "IDNUM": E.OTHER_ID,
    "DEVICE": E.DEVICE_IDENTIFIER,
    "BIOID": E.OTHER_ID,
    "LICENSE": E.LICENSE_NUMBER,
    # PhysioNet deid gold standard (Neamatullah et al. 2008)
    "HCPName": E.PERSON,
    "PTName": E.PERSON,
    "PTNameInitial": E.PERSON,
    "RelativeProxyName": E.PERSON,
    "Date": E.DATE,
    "DateYear": E.DATE,
    "Location": E.LOCATION,
    "Phone": E.TELEPHONE_NUMBER,
    "Age": E.AGE,
    "Other": E.OTHER_ID,
    # wholesale-masked chunks the language model could not check (predictions only)
    "UNCHECKED": "UNCHECKED",
}


@dataclass(frozen=True)
class GoldSpan:
    """A labelled span (offsets into the document text) with its EntityType value.

    ``label`` keeps the data set's own label when it is finer than the EntityType (PhysioNet's ``HCPName`` and
    ``PTName`` are both ``PERSON``); empty otherwise.
    """

    start: int
    end: int
    type: str
    label: str = ""

    @property
    def kind(self) -> str:
        """The data set's label when known, else the EntityType value."""
        return self.label or self.type


@dataclass(frozen=True)
class Document:
    """One evaluated text with its spans."""

    id: str
    text: str
    spans: tuple[GoldSpan, ...]


def map_type(label: str, type_map: dict[str, str | None] | None = None) -> str | None:
    """EntityType value for a dataset label; None when the label is not PHI for evaluation."""
    tm = TYPE_MAP if type_map is None else type_map
    if label in tm:
        value = tm[label]
        return None if value is None else str(value)
    if label in EntityType.__members__ or label in {t.value for t in EntityType}:
        return str(EntityType(label))
    raise AnonpsyError(M104_BAD_EVAL_INPUT, f"unknown entity label {label!r}; add it to the type map", "types")


def _bad(message: str, where: str) -> AnonpsyError:
    return AnonpsyError(M104_BAD_EVAL_INPUT, message, location=where)


def _check_span(start: Any, end: Any, text: str, where: str) -> tuple[int, int]:
    if not isinstance(start, int) or not isinstance(end, int) or not 0 <= start < end <= len(text):
        raise _bad("span offsets must be integers with 0 <= start < end <= len(text)", where)
    return start, end


def parse_span_jsonl(text: str, *, source: str = "jsonl", check_bounds: bool = True) -> list[Document]:
    """Documents from span JSONL.

    ``check_bounds=False`` reads predictions written by ``anonpsy mask``, whose ``text`` is the masked output
    while ``start``/``end`` are offsets in the input; :func:`anonpsy.phi.evaluate.evaluate` checks them
    against the gold text.
    """
    docs: list[Document] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{source}:{n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            raise _bad("line is not valid JSON", where) from None
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
            raise _bad('each line needs "text" (a string) and "spans"', where)
        doc_id = str(obj.get("id", f"doc-{n:05d}"))
        spans = []
        for sp in obj.get("spans", []):
            if not isinstance(sp, dict):
                raise _bad("spans must be objects", where)
            start, end = sp.get("start"), sp.get("end")
            if check_bounds:
                start, end = _check_span(start, end, obj["text"], where)
            elif not isinstance(start, int) or not isinstance(end, int) or not 0 <= start < end:
                raise _bad("span offsets must be integers with 0 <= start < end", where)
            t = map_type(str(sp.get("type", "")))
            if t is not None:
                spans.append(GoldSpan(start, end, t))
        docs.append(Document(doc_id, obj["text"], tuple(sorted(spans, key=lambda s: (s.start, s.end)))))
    return docs


_ANN_RE = re.compile(r"^(T\d+)\t(\S+) ([\d ;]+)\t?(.*)$")


def parse_brat(text: str, ann: str, doc_id: str) -> Document:
    """One document from BRAT standoff text and annotations (text-bound ``T`` lines only)."""
    spans = []
    for n, line in enumerate(ann.splitlines(), 1):
        if not line.startswith("T"):
            continue
        m = _ANN_RE.match(line)
        if m is None:
            raise _bad("malformed text-bound annotation", f"{doc_id}.ann:{n}")
        t = map_type(m.group(2))
        for frag in m.group(3).split(";"):
            parts = frag.split()
            if len(parts) != 2:
                raise _bad("malformed offsets", f"{doc_id}.ann:{n}")
            start, end = _check_span(int(parts[0]), int(parts[1]), text, f"{doc_id}.ann:{n}")
            if t is not None:
                spans.append(GoldSpan(start, end, t))
    return Document(doc_id, text, tuple(sorted(spans, key=lambda s: (s.start, s.end))))


def read_brat_dir(directory: Path) -> list[Document]:
    """All ``*.txt`` + ``*.ann`` pairs of a directory, sorted by name (I/O)."""
    docs = []
    for txt in sorted(directory.glob("*.txt")):
        ann = txt.with_suffix(".ann")
        ann_text = ann.read_text(encoding="utf-8") if ann.is_file() else ""
        docs.append(parse_brat(txt.read_text(encoding="utf-8"), ann_text, txt.stem))
    if not docs:
        raise _bad("no .txt files in the BRAT directory", str(directory))
    return docs


def parse_asq(text: str, *, source: str = "asq") -> list[Document]:
    """Documents from the asq-phi value-list format; ids ``asq-00001``…"""
    docs: list[Document] = []
    blocks = text.split("===QUERY===")[1:]
    if not blocks:
        raise _bad("no ===QUERY=== blocks", source)
    for i, block in enumerate(blocks, 1):
        query, sep, tags = block.partition("===PHI_TAGS===")
        if not sep:
            raise _bad("block without ===PHI_TAGS===", f"{source} block {i}")
        body = query.strip("\n")
        spans: list[GoldSpan] = []
        cursor: dict[str, int] = {}
        for line in tags.splitlines():
            if not line.strip():
                continue
            try:
                tag = json.loads(line)
                label, value = str(tag["identifier_type"]), str(tag["value"])
            except (json.JSONDecodeError, KeyError, TypeError):
                raise _bad("PHI tag line is not {identifier_type, value} JSON", f"{source} block {i}") from None
            t = map_type(label)
            start = body.find(value, cursor.get(value, 0))
            if start < 0:
                start = body.find(value)
            if start < 0 or not value:
                continue  # a value the text does not contain cannot be scored by position
            cursor[value] = start + len(value)
            if t is not None:
                spans.append(GoldSpan(start, start + len(value), t))
        unique = sorted(set(spans), key=lambda s: (s.start, s.end))
        docs.append(Document(f"asq-{i:05d}", body, tuple(unique)))
    return docs


def parse_presidio(text: str, *, source: str = "presidio") -> list[Document]:
    """Documents from presidio-research JSON; ids ``presidio-00001``…"""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise _bad("not valid JSON", source) from None
    if not isinstance(data, list):
        raise _bad("expected a JSON list of samples", source)
    docs: list[Document] = []
    for i, item in enumerate(data, 1):
        where = f"{source} sample {i}"
        if not isinstance(item, dict) or not isinstance(item.get("full_text"), str):
            raise _bad("sample needs full_text", where)
        full = item["full_text"]
        spans = []
        for sp in item.get("spans") or []:
            start, end = _check_span(sp.get("start_position"), sp.get("end_position"), full, where)
            t = map_type(str(sp.get("entity_type", "")))
            if t is not None:
                spans.append(GoldSpan(start, end, t))
        docs.append(Document(f"presidio-{i:05d}", full, tuple(sorted(spans, key=lambda s: (s.start, s.end)))))
    return docs


_PHYSIONET_RECORD = re.compile(r"START_OF_RECORD=(\d+)\|\|\|\|(\d+)\|\|\|\|\n(.*?)\|\|\|\|END_OF_RECORD", re.DOTALL)


def parse_physionet(text: str, phrases: str, *, source: str = "id.text") -> list[Document]:
    """Documents from the PhysioNet deid format: record text and its ``-phi.phrase`` span list.

    Each span's phrase must equal the body characters at its offsets: a mismatch means the text and the
    span list do not belong together, and is an ``M104`` error naming the line.
    """
    bodies: dict[str, str] = {}
    order: list[str] = []
    for m in _PHYSIONET_RECORD.finditer(text):
        doc_id = f"{m.group(1)}-{m.group(2)}"
        if doc_id in bodies:
            raise _bad(f"record {doc_id} appears twice", source)
        bodies[doc_id] = m.group(3)
        order.append(doc_id)
    if not order:
        raise _bad("no START_OF_RECORD=<patient>||||<note>|||| records", source)
    spans: dict[str, list[GoldSpan]] = {d: [] for d in order}
    phrase_source = source.removesuffix(".text") + "-phi.phrase"
    for n, line in enumerate(phrases.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{phrase_source}:{n}"
        parts = line.split(" ", 5)
        if len(parts) < 5 or not all(p.isdigit() for p in parts[:4]):
            raise _bad("expected '<patient> <note> <start> <end> <TYPE> <phrase>'", where)
        doc_id = f"{parts[0]}-{parts[1]}"
        body = bodies.get(doc_id)
        if body is None:
            raise _bad(f"span for record {doc_id}, which the text does not hold", where)
        start, end = _check_span(int(parts[2]), int(parts[3]), body, where)
        phrase = parts[5] if len(parts) > 5 else ""
        if phrase and body[start:end] != phrase:
            raise _bad("the phrase does not match the record text at these offsets", where)
        t = map_type(parts[4])
        if t is not None:
            spans[doc_id].append(GoldSpan(start, end, t, parts[4]))
    return [Document(d, bodies[d], tuple(sorted(spans[d], key=lambda s: (s.start, s.end)))) for d in order]


def physionet_paths(path: Path) -> tuple[Path, Path]:
    """``(text file, phrase file)`` for a PhysioNet corpus given as its directory or its ``.text`` file."""
    if path.is_dir():
        texts = sorted(path.glob("*.text"))
        if len(texts) != 1:
            raise _bad("a PhysioNet directory must hold exactly one .text file", str(path))
        path = texts[0]
    phrase = path.with_name(path.name.removesuffix(".text") + "-phi.phrase")
    if not path.is_file():
        raise _bad("PhysioNet record file not found", str(path))
    if not phrase.is_file():
        raise _bad(f"no span file {phrase.name} beside the records", str(path))
    return path, phrase


def read_physionet(path: Path) -> list[Document]:
    """A PhysioNet corpus (directory with ``id.text`` and ``id-phi.phrase``, or the ``.text`` file) (I/O)."""
    text_path, phrase_path = physionet_paths(path)
    return parse_physionet(
        text_path.read_text(encoding="utf-8"), phrase_path.read_text(encoding="utf-8"), source=text_path.name
    )


def read_documents(path: Path, fmt: Format) -> list[Document]:
    """Read a gold or prediction corpus in ``fmt`` (I/O)."""
    if fmt == "brat":
        if not path.is_dir():
            raise _bad("BRAT input must be a directory of .txt/.ann files", str(path))
        return read_brat_dir(path)
    if fmt == "physionet":
        return read_physionet(path)
    text = path.read_text(encoding="utf-8")
    if fmt == "jsonl":
        return parse_span_jsonl(text, source=path.name)
    if fmt == "asq":
        return parse_asq(text, source=path.name)
    if fmt == "presidio":
        return parse_presidio(text, source=path.name)
    raise _bad(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}", "--format")


def to_span_jsonl(docs: list[Document]) -> str:
    """Documents as span JSONL (to feed ``anonpsy mask --input-format jsonl``)."""
    lines = []
    for d in docs:
        spans = [{"start": s.start, "end": s.end, "type": s.type} for s in d.spans]
        lines.append(json.dumps({"id": d.id, "text": d.text, "spans": spans}, ensure_ascii=False))
    return "\n".join(lines) + ("\n" if lines else "")
