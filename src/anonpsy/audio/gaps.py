"""Voiced speech that no recognised word accounts for, and whether it likely holds an identifier.

:func:`find_gaps` subtracts the recognised words (each widened by ``word_pad_s``) from the voiced regions of
the voice-activity detector; what is left and lasts at least ``min_gap_s`` is a *gap*. Recognisers skip words
they cannot place, and names are what they most often cannot place.

Each gap is classified from the words around it:

* rules (:func:`classify_rules`): the cue rules of ``rules/audio/cues.yaml`` ("my name is [gap]",
  "doctor [gap]", "call me at [gap]", "I live in [gap]", "[gap] street");
* llm (:func:`classify_llm`): the ``audio_gap`` prompt template. The transcript around the gaps is sent with
  each gap as a numbered placeholder ``[GAP_1]``; the model answers, per placeholder, whether an identifier
  was most likely said there and of which type. Gaps are batched per window of transcript. A gap the model
  leaves out of its reply, or a window it could not answer, is muted as unchecked (or fails the recording,
  ``on_failure="error"``): a gap is never kept because the model did not speak about it.

The verdicts of both are combined by the pipeline: a gap is muted when either marks it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from anonpsy.audio.asr import Word
from anonpsy.audio.cues import CueSet
from anonpsy.audio.vad import Region
from anonpsy.errors import AnonpsyError
from anonpsy.phi.operators import M105_LLM_CHUNK_FAILED
from anonpsy.phi.types import EntityType

GAP_TEMPLATE = "audio_gap"
OnLLMFailure = Literal["error", "mute"]


@dataclass(frozen=True)
class Gap:
    """Voiced ``[start, end)`` seconds with no word; ``before`` / ``after`` index the neighbouring words."""

    start: float
    end: float
    before: int  # index of the last word ending before the gap, -1 when none
    after: int  # index of the first word starting after the gap, len(words) when none


@dataclass(frozen=True)
class GapVerdict:
    """What was decided about one gap."""

    gap: Gap
    phi: bool
    type: str | None
    detector: str
    reason: str = "gap"  # "gap" | "unchecked"


def find_gaps(
    voiced: Sequence[Region], words: Sequence[Word], *, min_gap_s: float = 0.15, word_pad_s: float = 0.04
) -> list[Gap]:
    """Pieces of voiced regions not covered by any word, at least ``min_gap_s`` long."""
    spans = sorted((w.start - word_pad_s, w.end + word_pad_s) for w in words)
    gaps: list[Gap] = []
    for a, b in voiced:
        pieces = [(a, b)]
        for s, e in spans:
            if e <= a or s >= b:
                continue
            nxt = []
            for p0, p1 in pieces:
                if e <= p0 or s >= p1:
                    nxt.append((p0, p1))
                    continue
                if s > p0:
                    nxt.append((p0, s))
                if e < p1:
                    nxt.append((e, p1))
            pieces = nxt
        for p0, p1 in pieces:
            if p1 - p0 >= min_gap_s:
                before = max((i for i, w in enumerate(words) if w.end <= p0 + word_pad_s), default=-1)
                after = min((i for i, w in enumerate(words) if w.start >= p1 - word_pad_s), default=len(words))
                gaps.append(Gap(round(p0, 3), round(p1, 3), before, after))
    return gaps


def context(words: Sequence[Word], gap: Gap, n: int = 6) -> tuple[list[str], list[str]]:
    """Up to ``n`` words before and after a gap."""
    before = [w.text for w in words[max(0, gap.before + 1 - n) : gap.before + 1]]
    after = [w.text for w in words[gap.after : gap.after + n]]
    return before, after


class IdentifierWords(Protocol):
    """What gap rules need of an identifier found in the transcript: its word range and type."""

    @property
    def first(self) -> int: ...
    @property
    def last(self) -> int: ...
    @property
    def type(self) -> str: ...


#: A gap next to an identifier is muted with it only up to this length.
ADJACENT_GAP_MAX_S = 2.0


def classify_rules(
    gaps: Sequence[Gap],
    words: Sequence[Word],
    cues: CueSet,
    identifiers: Sequence[IdentifierWords] = (),
) -> list[GapVerdict]:
    """Cue-rule verdicts (a gap with no matching cue is not PHI by the rules).

    A gap right before or after the words of an identifier (``identifiers``) is part of it: a recogniser
    writes a long name as a shorter word ("Majadahonda" as "Major") and leaves the rest of the voice
    unaccounted for. Such gaps up to :data:`ADJACENT_GAP_MAX_S` take the identifier's type.
    """
    out = []
    for g in gaps:
        before, after = context(words, g)
        rule = cues.classify_gap(before, after)
        if rule is not None:
            out.append(GapVerdict(g, True, rule.type, f"rules:{rule.id}"))
            continue
        near = None
        if g.end - g.start <= ADJACENT_GAP_MAX_S:
            near = next((h for h in identifiers if h.first <= g.before <= h.last or h.first <= g.after <= h.last),
                        None)
        if near is not None:
            out.append(GapVerdict(g, True, near.type, "rules:audio.gap-next-to-identifier"))
        else:
            out.append(GapVerdict(g, False, None, "rules:no-cue"))
    return out


class GapAnswer(BaseModel):
    """The model's verdict on one placeholder."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^GAP_[0-9]+$")
    phi: bool
    type: EntityType | None = None


class GapReply(BaseModel):
    """The reply of the ``audio_gap`` template."""

    model_config = ConfigDict(extra="forbid")

    gaps: list[GapAnswer] = Field(max_length=200)


def _windows(gaps: Sequence[Gap], span_words: int, max_gaps: int) -> list[list[int]]:
    groups: list[list[int]] = []
    for i, g in enumerate(gaps):
        if groups:
            first = gaps[groups[-1][0]]
            if g.before - first.before <= span_words and len(groups[-1]) < max_gaps:
                groups[-1].append(i)
                continue
        groups.append([i])
    return groups


def gap_transcript(words: Sequence[Word], gaps: Sequence[Gap], ids: Sequence[int], n: int) -> str:
    """The words around gaps ``ids`` with ``[GAP_k]`` placeholders (k counts from 1 within the window)."""
    lo = max(0, gaps[ids[0]].before + 1 - n)
    hi = min(len(words), gaps[ids[-1]].after + n)
    marks: dict[int, list[str]] = {}
    for k, i in enumerate(ids, start=1):
        marks.setdefault(gaps[i].after, []).append(f"[GAP_{k}]")
    parts: list[str] = []
    for idx in range(lo, hi + 1):
        parts.extend(marks.get(idx, []))
        if idx < hi:
            parts.append(words[idx].text)
    return " ".join(parts)


def classify_llm(
    gaps: Sequence[Gap],
    words: Sequence[Word],
    client: Any,
    *,
    on_failure: OnLLMFailure = "error",
    context_words: int = 30,
    max_gaps: int = 8,
    seed: int | None = 0,
    template: Any = None,
) -> list[GapVerdict]:
    """Model verdicts for every gap (see the module docstring)."""
    from anonpsy.llm.errors import LLMError
    from anonpsy.llm.prompts import load_template

    tpl = template or load_template(GAP_TEMPLATE)
    detector = f"llm:{tpl.ref}"
    types = ", ".join(t.value for t in EntityType)
    out: list[GapVerdict] = []
    for w_index, ids in enumerate(_windows(gaps, context_words, max_gaps)):
        text = gap_transcript(words, gaps, ids, context_words)
        try:
            reply = client.complete_json(
                tpl,
                {"transcript": text, "count": len(ids), "types": types},
                operator="masking",
                model_cls=GapReply,
                seed=None if seed is None else seed + w_index,
            )
            if not isinstance(reply, GapReply):
                reply = GapReply.model_validate(reply)
        except LLMError as exc:
            if on_failure == "error":
                raise AnonpsyError(
                    M105_LLM_CHUNK_FAILED,
                    f"{len(ids)} untranscribed region(s) could not be checked by the model ({exc.code}); the "
                    "recording is not written. Retry, use another profile, or --on-llm-failure mute",
                ) from None
            out.extend(GapVerdict(gaps[i], True, None, detector, "unchecked") for i in ids)
            continue
        answers = {a.id: a for a in reply.gaps}
        for k, i in enumerate(ids, start=1):
            a = answers.get(f"GAP_{k}")
            if a is None:
                out.append(GapVerdict(gaps[i], True, None, detector, "unchecked"))
            elif a.phi:
                out.append(GapVerdict(gaps[i], True, a.type.value if a.type else "OTHER_ID", detector))
            else:
                out.append(GapVerdict(gaps[i], False, None, detector))
    return out


__all__ = [
    "ADJACENT_GAP_MAX_S",
    "GAP_TEMPLATE",
    "Gap",
    "GapAnswer",
    "GapReply",
    "GapVerdict",
    "IdentifierWords",
    "classify_llm",
    "classify_rules",
    "context",
    "find_gaps",
    "gap_transcript",
]
