"""Retrieval over the user's own knowledge base: a directory of ``.md`` / ``.txt`` files (their DSM/ICD texts,
guidelines, teaching notes) that conditions the llm backend's simulated respondents.

Files are read as UTF-8 and cut into passages: paragraphs (blank-line separated) packed into windows of at most
:data:`PASSAGE_WORDS` words, never across files, each remembering its file (relative path) and line range.
:class:`KnowledgeBase` ranks passages for a query with

* ``bm25`` (default): Okapi BM25 from the ``bm25s`` library (lowercase word tokens, English stop words, Snowball
  English stems from PyStemmer so that "worrying" finds "worry"); passages sharing no stem with the query are
  never returned;
* ``embeddings``: cosine similarity of sentence embeddings from the offline encoder of the eval extra
  (:func:`anonpsy.evaluate.embeddings.load_encoder`).

Every hit carries its source and score so that a synthetic table can say which passages shaped which item.
``bm25s``, PyStemmer and numpy come with the ``tabular`` extra; without them the error names the extra.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from anonpsy import errors
from anonpsy.errors import AnonpsyError

PASSAGE_WORDS = 120
SUFFIXES = (".md", ".txt", ".markdown")
MAX_FILE_BYTES = 20_000_000
Retriever = Literal["bm25", "embeddings"]
TABULAR_EXTRA_HINT = 'pip install "anonpsy[tabular]"'


@dataclass(frozen=True)
class Passage:
    source: str
    start_line: int
    end_line: int
    text: str

    @property
    def ref(self) -> str:
        return f"{self.source}:{self.start_line}-{self.end_line}"


@dataclass(frozen=True)
class Hit:
    passage: Passage
    score: float
    rank: int

    def record(self) -> dict[str, Any]:
        """What a provenance file keeps of a hit: where it comes from and how it scored (not its text)."""
        p = self.passage
        return {"source": p.source, "lines": [p.start_line, p.end_line], "score": round(self.score, 6),
                "rank": self.rank}


def missing_tabular_extra(what: str) -> AnonpsyError:
    from anonpsy.evaluate.errors import V100_MISSING_EXTRA

    return AnonpsyError(V100_MISSING_EXTRA, f"{what} is not installed; it comes with the tabular extra: "
                                            f"{TABULAR_EXTRA_HINT}")


def split_passages(text: str, source: str, max_words: int = PASSAGE_WORDS) -> list[Passage]:
    """Paragraphs of ``text`` packed into passages of at most ``max_words`` words (a longer paragraph is cut)."""
    paragraphs: list[tuple[int, int, list[str]]] = []
    start: int | None = None
    words: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines, 1):
        if line.strip():
            if start is None:
                start = i
            words += line.split()
        elif start is not None:
            paragraphs.append((start, i - 1, words))
            start, words = None, []
    if start is not None:
        paragraphs.append((start, len(lines), words))
    out: list[Passage] = []
    cur: list[str] = []
    cur_start = cur_end = 0
    for p_start, p_end, p_words in paragraphs:
        if cur and len(cur) + len(p_words) > max_words:
            out.append(Passage(source, cur_start, cur_end, " ".join(cur)))
            cur = []
        if not cur:
            cur_start = p_start
        for j in range(0, max(len(p_words), 1), max_words):
            chunk = p_words[j:j + max_words]
            if cur and len(cur) + len(chunk) > max_words:
                out.append(Passage(source, cur_start, cur_end, " ".join(cur)))
                cur, cur_start = [], p_start
            cur += chunk
        cur_end = p_end
    if cur:
        out.append(Passage(source, cur_start, cur_end, " ".join(cur)))
    return out


def read_directory(directory: Path) -> tuple[list[Passage], dict[str, str]]:
    """Passages of every knowledge-base file under ``directory`` and each file's sha256."""
    if not directory.is_dir():
        raise AnonpsyError(errors.E100_MISSING_FILE, "knowledge-base directory not found", str(directory))
    files = sorted(p for p in directory.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
    passages: list[Passage] = []
    digests: dict[str, str] = {}
    for path in files:
        rel = path.relative_to(directory).as_posix()
        data = path.read_bytes()
        if len(data) > MAX_FILE_BYTES:
            raise AnonpsyError(errors.E107_TOO_LARGE, f"knowledge-base file over {MAX_FILE_BYTES} bytes", rel)
        if b"\x00" in data:
            raise AnonpsyError(errors.E106_BINARY, "knowledge-base file is binary, not text", rel)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise AnonpsyError(errors.E105_NOT_UTF8, "knowledge-base file is not UTF-8", rel) from None
        digests[rel] = hashlib.sha256(data).hexdigest()
        passages += split_passages(text, rel)
    if not passages:
        raise AnonpsyError(errors.E101_EMPTY_INPUT,
                           f"knowledge base holds no text in {', '.join(SUFFIXES)} files", str(directory))
    return passages, digests


_TOKEN = re.compile(r"(?u)\b\w\w+\b")


class KnowledgeBase:
    """Ranked retrieval over a set of passages (see the module docstring)."""

    def __init__(self, passages: Sequence[Passage], *, retriever: Retriever = "bm25",
                 digests: dict[str, str] | None = None, encoder: Any = None) -> None:
        if not passages:
            raise AnonpsyError(errors.E101_EMPTY_INPUT, "knowledge base holds no passages")
        self.passages = list(passages)
        self.retriever = retriever
        self.digests = dict(digests or {})
        self._bm25: Any = None
        self._stemmer: Any = None
        self._encoder: Any = None
        self._matrix: Any = None
        if retriever == "bm25":
            self._index_bm25()
        elif retriever == "embeddings":
            self._index_embeddings(encoder)
        else:
            raise AnonpsyError(errors.E109_BAD_OPTION, f"unknown retriever {retriever!r}; use bm25 or embeddings",
                               "--retriever")

    @classmethod
    def from_directory(cls, directory: Path, *, retriever: Retriever = "bm25", encoder: Any = None
                       ) -> KnowledgeBase:
        passages, digests = read_directory(Path(directory))
        return cls(passages, retriever=retriever, digests=digests, encoder=encoder)

    @property
    def model_name(self) -> str:
        return "bm25s" if self.retriever == "bm25" else str(getattr(self._encoder, "name", "encoder"))

    def _index_bm25(self) -> None:
        try:
            import bm25s
            import Stemmer
        except ImportError:
            raise missing_tabular_extra("bm25s or PyStemmer (BM25 retrieval)") from None
        self._stemmer = Stemmer.Stemmer("english")
        tokens = bm25s.tokenize([p.text for p in self.passages], stopwords="en", stemmer=self._stemmer,
                                show_progress=False)
        self._bm25 = bm25s.BM25()
        self._bm25.index(tokens, show_progress=False)

    def _index_embeddings(self, encoder: Any) -> None:
        try:
            import numpy as np
        except ImportError:
            raise missing_tabular_extra("numpy") from None
        if encoder is None:
            from anonpsy.evaluate.embeddings import load_encoder

            encoder = load_encoder()
        self._encoder = encoder
        self._matrix = np.asarray(encoder.encode([p.text for p in self.passages]), dtype=float)

    def search(self, query: str, k: int = 3) -> list[Hit]:
        """The ``k`` best passages for ``query``, best first (fewer when fewer match)."""
        if k <= 0 or not query.strip():
            return []
        k = min(k, len(self.passages))
        if self.retriever == "bm25":
            import bm25s

            q = bm25s.tokenize([query], stopwords="en", stemmer=self._stemmer, return_ids=False,
                               show_progress=False)
            if not q or not q[0]:
                return []
            docs, scores = self._bm25.retrieve(q, k=k, show_progress=False)
            pairs = [(int(d), float(s)) for d, s in zip(docs[0], scores[0], strict=True) if float(s) > 0.0]
        else:
            import numpy as np

            vec = np.asarray(self._encoder.encode([query])[0], dtype=float)
            sims = self._matrix @ vec
            order = np.argsort(-sims, kind="stable")[:k]
            pairs = [(int(i), float(sims[i])) for i in order]
        return [Hit(self.passages[i], s, rank) for rank, (i, s) in enumerate(pairs, 1)]
