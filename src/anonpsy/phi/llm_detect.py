"""Chunked multi-pass detection of identifiers by a language model (RedactOR-style).

The text is cut into chunks of ``chunk_words`` words overlapping by ``overlap`` words. Each chunk goes through
up to ``passes`` passes of the ``phi_detect`` template; before every pass, what is already known in the chunk
(rule detections and earlier finds) is masked by type (``[PERSON]``), so later passes look only for what is
left. The model returns each identifier with a few words of context; both are aligned back to exact offsets of
the original text: exact occurrences first (the one nearest the context when there are several), then
rapidfuzz partial alignment inside the context window. Types are checked against
:class:`~anonpsy.phi.types.EntityType` by the reply schema and the reply model; a region that falls on a mask
placeholder is discarded.

A chunk whose reply cannot be obtained or validated (any :class:`~anonpsy.llm.errors.LLMError` after the
client's retries and re-ask) fails closed: with ``on_failure="error"`` the document fails with ``M105``; with
``"mask_chunk"`` the chunk is returned in :attr:`LLMDetection.failed` so the caller masks it wholesale. It is
never passed through unchecked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz import fuzz

from anonpsy.errors import AnonpsyError
from anonpsy.llm.errors import LLMError
from anonpsy.llm.prompts import PromptTemplate, load_template
from anonpsy.phi.operators import M105_LLM_CHUNK_FAILED
from anonpsy.phi.spans import Span
from anonpsy.phi.types import EntityType

OnFailure = Literal["error", "mask_chunk"]
TEMPLATE_ID = "phi_detect"
_WORD = re.compile(r"\S+")
_PLACEHOLDER = re.compile(r"\[[A-Z_]+\]")
_TRIM = " \t\r\n.,;:!?\"'()[]{}"


class PhiEntity(BaseModel):
    """One identifier the model reports."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=300)
    type: EntityType
    context: str = Field(default="", max_length=400)


class PhiDetectReply(BaseModel):
    """The reply of the ``phi_detect`` template."""

    model_config = ConfigDict(extra="forbid")

    entities: list[PhiEntity] = Field(max_length=200)


class JSONCompleter(Protocol):
    """What the detector needs from :class:`anonpsy.llm.LLMClient`."""

    def complete_json(
        self,
        template: PromptTemplate,
        variables: dict[str, Any],
        *,
        operator: str,
        model_cls: Any = None,
        seed: int | None = None,
        case_id: str | None = None,
    ) -> Any: ...


@dataclass(frozen=True)
class Chunk:
    """Characters ``[start, end)`` of the text, the ``index``-th chunk."""

    index: int
    start: int
    end: int


@dataclass(frozen=True)
class LLMDetection:
    """Spans found by the model (original offsets), chunks that failed closed and counters."""

    spans: tuple[Span, ...]
    failed: tuple[Chunk, ...] = ()
    stats: dict[str, int] = field(default_factory=dict)


def chunk_text(text: str, chunk_words: int = 150, overlap: int = 30) -> list[Chunk]:
    """Chunks of ``chunk_words`` whitespace-separated words, consecutive chunks sharing ``overlap`` words."""
    if chunk_words < 1:
        raise ValueError("chunk_words must be at least 1")
    if not 0 <= overlap < chunk_words:
        raise ValueError("overlap must be at least 0 and smaller than chunk_words")
    words = [m.span() for m in _WORD.finditer(text)]
    if not words:
        return []
    step = chunk_words - overlap
    chunks: list[Chunk] = []
    i = 0
    while True:
        part = words[i : i + chunk_words]
        chunks.append(Chunk(len(chunks), part[0][0], part[-1][1]))
        if i + chunk_words >= len(words):
            break
        i += step
    return chunks


@dataclass
class _Masked:
    """A chunk with known spans replaced by placeholders, and the map back to original offsets."""

    text: str
    # (masked_start, masked_end, original_start) of every unmasked stretch
    pieces: list[tuple[int, int, int]]

    def to_original(self, start: int, end: int) -> tuple[int, int] | None:
        """Original offsets of a masked-text region lying inside one unmasked stretch (else None)."""
        for ms, me, os_ in self.pieces:
            if ms <= start and end <= me:
                return os_ + (start - ms), os_ + (end - ms)
        return None


def mask_chunk(text: str, chunk: Chunk, known: Iterable[Span]) -> _Masked:
    """The chunk's text with every known span fully inside it replaced by ``[TYPE]``."""
    inside = sorted(
        (s for s in known if s.start >= chunk.start and s.end <= chunk.end), key=lambda s: s.start
    )
    out: list[str] = []
    pieces: list[tuple[int, int, int]] = []
    pos = chunk.start
    length = 0
    for s in inside:
        if s.start < pos:
            continue
        seg = text[pos : s.start]
        pieces.append((length, length + len(seg), pos))
        out.append(seg)
        length += len(seg)
        ph = f"[{s.type}]"
        out.append(ph)
        length += len(ph)
        pos = s.end
    seg = text[pos : chunk.end]
    pieces.append((length, length + len(seg), pos))
    out.append(seg)
    return _Masked("".join(out), pieces)


def _word_bounded(hay: str, start: int, end: int) -> bool:
    before = hay[start - 1] if start > 0 else " "
    after = hay[end] if end < len(hay) else " "
    return not (before.isalnum() and hay[start].isalnum()) and not (
        after.isalnum() and hay[end - 1].isalnum()
    )


def _occurrences(needle: str, hay: str) -> list[int]:
    found = [m.start() for m in re.finditer(re.escape(needle), hay)]
    if not found:
        found = [m.start() for m in re.finditer(re.escape(needle), hay, re.I)]
    return [s for s in found if _word_bounded(hay, s, s + len(needle))]


def _context_window(context: str, hay: str, min_score: float) -> tuple[int, int] | None:
    if not context.strip():
        return None
    i = hay.find(context)
    if i >= 0:
        return i, i + len(context)
    al = fuzz.partial_ratio_alignment(context, hay, score_cutoff=min_score)
    if al is None:
        return None
    return al.dest_start, al.dest_end


def align_entity(
    entity_text: str, context: str, hay: str, *, min_score: float = 85.0
) -> list[tuple[int, int]]:
    """Exact regions of ``hay`` for one reported identifier.

    Exact occurrences win: the one inside or nearest the context window, plus every other word-bounded
    occurrence when the identifier is at least four characters long (a name reported once is masked everywhere
    in the chunk). Without an exact occurrence, rapidfuzz partial alignment inside the context window (or the
    whole chunk) with a score of at least ``min_score``.
    """
    needle = entity_text.strip(_TRIM) or entity_text.strip()
    if not needle:
        return []
    window = _context_window(context, hay, min_score)
    occ = _occurrences(needle, hay)
    if occ:
        if window is not None:
            centre = (window[0] + window[1]) / 2
            best = min(
                occ, key=lambda s: (not (window[0] <= s < window[1]), abs(s + len(needle) / 2 - centre))
            )
        else:
            best = occ[0]
        chosen = occ if len(needle) >= 4 else [best]
        return [(s, s + len(needle)) for s in chosen]
    lo, hi = window if window is not None else (0, len(hay))
    sub = hay[lo:hi]
    al = fuzz.partial_ratio_alignment(needle, sub, score_cutoff=min_score)
    if al is None:
        return []
    start, end = lo + al.dest_start, lo + al.dest_end
    # Extend to whole words, then trim punctuation and spaces the fuzzy region may have swallowed.
    while start > 0 and hay[start - 1].isalnum() and hay[start].isalnum():
        start -= 1
    while end < len(hay) and hay[end].isalnum() and hay[end - 1].isalnum():
        end += 1
    while start < end and hay[start] in _TRIM:
        start += 1
    while end > start and hay[end - 1] in _TRIM:
        end -= 1
    return [(start, end)] if end > start else []


class LLMDetector:
    """Runs the chunked multi-pass detection with one client."""

    def __init__(
        self,
        client: JSONCompleter,
        *,
        chunk_words: int = 150,
        overlap: int = 30,
        passes: int = 2,
        template: PromptTemplate | None = None,
        seed: int | None = 0,
        min_align: float = 85.0,
    ) -> None:
        if passes < 1 or passes > 5:
            raise ValueError("passes must be from 1 to 5")
        if not 0 < min_align <= 100:
            raise ValueError("min_align must be in (0, 100]")
        chunk_text("x", chunk_words, overlap)  # validates the chunk parameters
        self.client = client
        self.chunk_words = chunk_words
        self.overlap = overlap
        self.passes = passes
        self.template = template or load_template(TEMPLATE_ID)
        self.seed = seed
        self.min_align = min_align
        self._types = ", ".join(t.value for t in EntityType)

    def _ask(self, masked: str, case_id: str | None, chunk: Chunk, pass_no: int) -> PhiDetectReply:
        seed = None if self.seed is None else self.seed + 1000 * chunk.index + pass_no
        reply = self.client.complete_json(
            self.template,
            {"text": masked, "types": self._types},
            operator="masking",
            model_cls=PhiDetectReply,
            seed=seed,
            case_id=case_id,
        )
        if not isinstance(reply, PhiDetectReply):
            reply = PhiDetectReply.model_validate(reply)
        return reply

    def detect(
        self,
        text: str,
        rule_spans: Sequence[Span] = (),
        *,
        case_id: str | None = None,
        on_failure: OnFailure = "error",
    ) -> LLMDetection:
        """Find identifiers in ``text``; ``rule_spans`` are masked before the first pass."""
        if on_failure not in ("error", "mask_chunk"):
            raise ValueError("on_failure must be 'error' or 'mask_chunk'")
        chunks = chunk_text(text, self.chunk_words, self.overlap)
        found: list[Span] = []
        failed: list[Chunk] = []
        stats = {"chunks": len(chunks), "calls": 0, "reported": 0, "aligned": 0, "unaligned": 0, "failed": 0}
        recognizer = self.template.ref
        for chunk in chunks:
            local: list[Span] = []
            try:
                for pass_no in range(self.passes):
                    known = [*rule_spans, *found, *local]
                    masked = mask_chunk(text, chunk, known)
                    stats["calls"] += 1
                    reply = self._ask(masked.text, case_id, chunk, pass_no)
                    new = 0
                    for ent in reply.entities:
                        stats["reported"] += 1
                        regions = align_entity(ent.text, ent.context, masked.text, min_score=self.min_align)
                        placed = False
                        for ms, me in regions:
                            if _PLACEHOLDER.search(masked.text[ms:me]):
                                continue
                            orig = masked.to_original(ms, me)
                            if orig is None:
                                continue
                            span = Span(orig[0], orig[1], ent.type.value, "llm", 0.9, recognizer)
                            if span not in local:
                                local.append(span)
                                new += 1
                            placed = True
                        stats["aligned" if placed else "unaligned"] += 1
                    if new == 0:
                        break
            except LLMError as exc:
                stats["failed"] += 1
                if on_failure == "error":
                    raise AnonpsyError(
                        M105_LLM_CHUNK_FAILED,
                        f"chunk {chunk.index + 1} of {len(chunks)} could not be checked by the model "
                        f"({exc.code}); the document is not masked. Retry, use another profile, or use "
                        "--on-llm-failure mask_chunk to mask unchecked chunks wholesale",
                        location=case_id,
                    ) from None
                failed.append(chunk)
                continue
            found.extend(local)
        return LLMDetection(tuple(sorted(set(found))), tuple(failed), stats)
