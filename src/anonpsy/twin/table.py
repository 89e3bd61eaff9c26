"""The document–entity table: build it from a corpus, write it, read it back.

A table directory holds

* ``manifest.json`` -- the corpus (path and SHA-256), entity types, counts, the table format version;
* ``documents.csv`` -- ``doc_id, sentences, chars, entities, duplicates`` (``duplicates`` lists the ids of records
  with the same text, which are kept once: one patient's note filed twice is one individual, not two);
* ``table.csv`` -- the sparse table in long form: ``doc_id, concept, mentions`` (entity mentions only);
* ``vocabulary.csv`` -- ``concept, type, name, level, parent, df, mentions``: every concept found, with its
  document frequency, and every ancestor of one (df counting documents with a descendant);
* ``mentions.csv`` -- every mention with its place and assertion: ``doc_id, sentence, start, end, concept,
  assertion, section, rule`` (offsets, never text; ``rule`` is the id of what decided the assertion:
  ``context.<trigger>``, ``section.<name>`` or ``default``; needed to write the lines of entities and the REPLACE
  baseline).

Extraction runs in worker processes (``jobs``); the output does not depend on their number.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anonpsy.errors import AnonpsyError
from anonpsy.twin.concepts import ENTITY_TYPES, Hierarchy
from anonpsy.twin.corpus import Document, file_sha256
from anonpsy.twin.errors import T102_BAD_TABLE
from anonpsy.twin.mentions import DocumentMentions, Mention, default_hierarchy, matcher
from anonpsy.yamlio import write_atomic

FORMAT = "anonpsy.twin.table"
VERSION = 1
CHUNK = 64
MENTION_COLUMNS = ("doc_id", "sentence", "start", "end", "concept", "assertion", "section", "rule")


@dataclass(frozen=True)
class DocInfo:
    """One document of the table."""

    doc_id: str
    sentences: int
    chars: int
    duplicates: tuple[str, ...] = ()


@dataclass
class Table:
    """A document–entity table in memory."""

    docs: list[DocInfo]
    rows: dict[str, dict[str, int]]
    mentions: dict[str, list[Mention]]
    types: tuple[str, ...]
    manifest: dict[str, Any] = field(default_factory=dict)
    root: Path | None = None

    def sets(self) -> dict[str, frozenset[str]]:
        """Each document's entity concepts."""
        return {d.doc_id: frozenset(self.rows.get(d.doc_id, {})) for d in self.docs}

    def doc(self, doc_id: str) -> DocInfo:
        return self._index()[doc_id]

    def _index(self) -> dict[str, DocInfo]:
        idx = self.__dict__.get("_idx")
        if idx is None:
            idx = self.__dict__["_idx"] = {d.doc_id: d for d in self.docs}
        return idx


def text_key(text: str) -> str:
    """Duplicate key of a text: case-folded, white space collapsed."""
    return re.sub(r"\s+", " ", text).strip().casefold()


def dedupe(docs: Sequence[Document]) -> tuple[list[Document], dict[str, tuple[str, ...]]]:
    """Documents with distinct texts (first occurrence kept) and, per kept id, the ids of its duplicates."""
    first: dict[str, Document] = {}
    dups: dict[str, list[str]] = {}
    for d in docs:
        key = text_key(d.text)
        if key in first:
            dups[first[key].doc_id].append(d.doc_id)
        else:
            first[key] = d
            dups[d.doc_id] = []
    return list(first.values()), {k: tuple(v) for k, v in dups.items()}


def _extract_chunk(args: tuple[tuple[str, ...], list[str]]) -> list[DocumentMentions]:
    types, texts = args
    m = matcher(types)
    return [m.document(t) for t in texts]


def extract_all(docs: Sequence[Document], types: Sequence[str], jobs: int = 1,
                progress: Callable[[int], None] | None = None) -> list[DocumentMentions]:
    """Mentions of every document, in order (``jobs`` worker processes)."""
    tps = tuple(types)
    chunks = [(tps, [d.text for d in docs[i:i + CHUNK]]) for i in range(0, len(docs), CHUNK)]
    out: list[DocumentMentions] = []
    if jobs <= 1 or len(chunks) <= 1:
        for c in chunks:
            out += _extract_chunk(c)
            if progress:
                progress(len(c[1]))
        return out
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for c, res in zip(chunks, pool.map(_extract_chunk, chunks), strict=True):
            out += res
            if progress:
                progress(len(c[1]))
    return out


def build_table(docs: Sequence[Document], types: Sequence[str] = ENTITY_TYPES, *, jobs: int = 1,
                deduplicate: bool = True, progress: Callable[[int], None] | None = None) -> Table:
    """Extract every document's entities into a table."""
    kept, dups = dedupe(docs) if deduplicate else (list(docs), {d.doc_id: () for d in docs})
    found = extract_all(kept, types, jobs, progress)
    infos: list[DocInfo] = []
    rows: dict[str, dict[str, int]] = {}
    mentions: dict[str, list[Mention]] = {}
    for d, dm in zip(kept, found, strict=True):
        ents = dm.entities()
        infos.append(DocInfo(d.doc_id, dm.n_sentences, len(d.text), dups.get(d.doc_id, ())))
        rows[d.doc_id] = dict(sorted(ents.items()))
        mentions[d.doc_id] = list(dm.mentions)
    return Table(infos, rows, mentions, tuple(t for t in ENTITY_TYPES if t in set(types)))


# -------------------------------------------------------------------------------------------------------------
# Files


def _csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def vocabulary_rows(table: Table, h: Hierarchy) -> list[tuple[Any, ...]]:
    """Rows of ``vocabulary.csv``: found concepts and their ancestors with document frequency and mentions."""
    df: Counter[str] = Counter()
    mentions: Counter[str] = Counter()
    for row in table.rows.values():
        df.update({a for c in row for a in h.lineage(c)})
        for c, n in row.items():
            for a in h.lineage(c):
                mentions[a] += n
    out = []
    for cid in sorted(df, key=lambda c: (h.type_of(c), h[c].level if c in h else 0, c)):
        node = h.concepts.get(cid)
        out.append((cid, h.type_of(cid), node.name if node else cid, node.level if node else 0,
                    (node.parent or "") if node else "", df[cid], mentions[cid]))
    return out


def write_table(table: Table, outdir: Path, corpus: Path, h: Hierarchy | None = None) -> dict[str, Any]:
    """Write the table files (each atomically, the manifest last) and return the manifest."""
    hier = h or default_hierarchy()
    outdir.mkdir(parents=True, exist_ok=True)
    docs = [(d.doc_id, d.sentences, d.chars, len(table.rows.get(d.doc_id, {})), " ".join(d.duplicates))
            for d in table.docs]
    write_atomic(outdir / "documents.csv", _csv(("doc_id", "sentences", "chars", "entities", "duplicates"), docs))
    long = [(d.doc_id, c, n) for d in table.docs for c, n in table.rows.get(d.doc_id, {}).items()]
    write_atomic(outdir / "table.csv", _csv(("doc_id", "concept", "mentions"), long))
    vocab = vocabulary_rows(table, hier)
    write_atomic(outdir / "vocabulary.csv",
                 _csv(("concept", "type", "name", "level", "parent", "df", "mentions"), vocab))
    ments = [(d.doc_id, m.sentence, m.start, m.end, m.concept, m.assertion, m.section, m.rule)
             for d in table.docs for m in table.mentions.get(d.doc_id, [])]
    write_atomic(outdir / "mentions.csv", _csv(MENTION_COLUMNS, ments))
    level0 = [v for v in vocab if v[3] == 0]
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "corpus": str(corpus.resolve()),
        "corpus_sha256": file_sha256(corpus),
        "types": list(table.types),
        "documents": len(table.docs),
        "duplicates_collapsed": sum(len(d.duplicates) for d in table.docs),
        "documents_with_entities": sum(1 for r in table.rows.values() if r),
        "entities": len(level0),
        "entity_occurrences": len(long),
        "mentions": len(ments),
        "entity_mentions": sum(n for _, _, n in long),
        "per_type": {t: sum(1 for v in level0 if v[1] == t) for t in table.types},
    }
    write_atomic(outdir / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    return manifest


def _read_csv(path: Path, header: Sequence[str]) -> list[list[str]]:
    if not path.is_file():
        raise AnonpsyError(T102_BAD_TABLE, "missing table file; run `anonpsy twin table` first", path.name)
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    if not rows or rows[0] != list(header):
        raise AnonpsyError(T102_BAD_TABLE, f"unexpected header; expected {','.join(header)}", path.name)
    return rows[1:]


def read_manifest(root: Path) -> dict[str, Any]:
    """The table manifest of a directory (T102 when missing or of another format)."""
    path = root / "manifest.json"
    if not path.is_file():
        raise AnonpsyError(T102_BAD_TABLE, "not a table directory (no manifest.json); run `anonpsy twin table`",
                           root.name)
    try:
        man = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        raise AnonpsyError(T102_BAD_TABLE, "manifest.json is not valid JSON", "manifest.json") from None
    if not isinstance(man, dict) or man.get("format") != FORMAT or man.get("version") != VERSION:
        raise AnonpsyError(T102_BAD_TABLE, f"manifest.json is not a {FORMAT} v{VERSION} manifest", "manifest.json")
    return man


def read_table(root: Path) -> Table:
    """Read a table directory written by :func:`write_table`."""
    man = read_manifest(root)
    try:
        docs = [DocInfo(r[0], int(r[1]), int(r[2]), tuple(r[4].split()) if r[4] else ())
                for r in _read_csv(root / "documents.csv", ("doc_id", "sentences", "chars", "entities", "duplicates"))]
        rows: dict[str, dict[str, int]] = {d.doc_id: {} for d in docs}
        for doc_id, concept, n in _read_csv(root / "table.csv", ("doc_id", "concept", "mentions")):
            rows[doc_id][concept] = int(n)
        mentions: dict[str, list[Mention]] = {d.doc_id: [] for d in docs}
        for r in _read_csv(root / "mentions.csv", MENTION_COLUMNS):
            mentions[r[0]].append(Mention(int(r[1]), int(r[2]), int(r[3]), r[4], r[5], r[6], r[7]))
    except (ValueError, IndexError, KeyError):
        raise AnonpsyError(T102_BAD_TABLE, "a table file has a malformed row; rebuild the table", root.name) from None
    return Table(docs, rows, mentions, tuple(man.get("types", ENTITY_TYPES)), man, root)
