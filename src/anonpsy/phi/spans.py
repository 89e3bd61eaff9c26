"""Character spans of detected identifiers.

A :class:`Span` holds offsets into the analysed text and the entity type, never the matched text itself: the
text is derivable (``text[span.start:span.end]``) and keeping it out of the object keeps identifiers out of
reprs and logs.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace


@dataclass(frozen=True, order=True)
class Span:
    """A half-open character interval ``[start, end)`` of the analysed text holding one identifier."""

    start: int
    end: int
    type: str  # an EntityType value
    source: str = "rule"  # "rule" | "llm"
    score: float = 1.0
    recognizer: str = ""  # rule id that found it

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"invalid span offsets [{self.start}, {self.end})")

    @property
    def length(self) -> int:
        """Number of characters covered."""
        return self.end - self.start

    def overlaps(self, other: Span) -> bool:
        """True when the two half-open intervals share at least one character."""
        return self.start < other.end and other.start < self.end


def _rank(span: Span, priority: Mapping[str, int]) -> tuple[int, int, float, int, str, str, str]:
    """Sort key, best first: longer, higher type priority, higher score, earlier, then stable tie-breakers."""
    return (
        -span.length,
        -priority.get(span.type, 0),
        -span.score,
        span.start,
        span.type,
        span.recognizer,
        span.source,
    )


def resolve_overlaps(spans: Iterable[Span], priority: Mapping[str, int]) -> list[Span]:
    """Keep a set of non-overlapping spans, sorted by position.

    Candidates are taken greedily, best first: the longest span wins; between equally long spans the type with
    the higher ``priority`` wins, then the higher score, then the earlier start; remaining ties are broken by
    type, recognizer and source names so the result never depends on input order. Empty spans are dropped.
    """
    ordered = sorted((s for s in spans if s.end > s.start), key=lambda s: _rank(s, priority))
    kept: list[Span] = []
    # Kept spans are disjoint, so sorted starts and ends stay aligned and bisect finds the neighbours.
    starts: list[int] = []
    ends: list[int] = []
    for span in ordered:
        i = bisect.bisect_left(starts, span.start)
        # The neighbour before may reach into this span; the neighbour at i may start inside it.
        if i > 0 and ends[i - 1] > span.start:
            continue
        if i < len(starts) and starts[i] < span.end:
            continue
        starts.insert(i, span.start)
        ends.insert(i, span.end)
        kept.append(span)
    kept.sort(key=lambda s: (s.start, s.end))
    return kept


def merge_adjacent(spans: Iterable[Span], text: str | None = None, *, max_gap: int = 1) -> list[Span]:
    """Merge spans of the same type that touch or are separated by at most ``max_gap`` gap characters.

    When ``text`` is given, the gap must consist of whitespace, commas, hyphens or periods only (so "John" and
    "Smith" in "John Smith" merge, but not across a word). The merged span keeps the source and recognizer of
    its first part and the maximum score. Input may be unsorted; output is sorted by position.
    """
    out: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, s.end, s.type)):
        if out:
            last = out[-1]
            gap = span.start - last.end
            if last.type == span.type and gap <= max_gap:
                gap_ok = True
                if text is not None and gap > 0:
                    gap_ok = all(c.isspace() or c in ",-." for c in text[last.end : span.start])
                if gap_ok:
                    out[-1] = replace(last, end=max(last.end, span.end), score=max(last.score, span.score))
                    continue
        out.append(span)
    return out


def span_text(text: str, span: Span) -> str:
    """The characters of ``text`` that ``span`` covers."""
    return text[span.start : span.end]


__all__ = ["Span", "merge_adjacent", "resolve_overlaps", "span_text"]
