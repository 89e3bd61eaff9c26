"""The text path of masking: detect identifiers, resolve overlaps, apply one operator.

:func:`mask_text` runs the rule analyzer (or the one given), optionally the chunked LLM detector, takes the
union with overlaps resolved by length and :data:`~anonpsy.phi.types.TYPE_PRIORITY`, and replaces every span
with the operator's output. The result carries each span's offsets in the input and in the output text.

When the LLM detector could not check a chunk and ``on_llm_failure="mask_chunk"``, the whole chunk is replaced
by ``[UNCHECKED]`` (a span of pseudo-type ``UNCHECKED``, source ``llm_failure``) whatever the operator.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from anonpsy.phi.llm_detect import JSONCompleter, LLMDetector, OnFailure
from anonpsy.phi.operators import MaskContext, Operator, build_operator, load_key
from anonpsy.phi.spans import Span, resolve_overlaps
from anonpsy.phi.types import TYPE_PRIORITY
from anonpsy.phi.vault import SurrogateVault

Analyzer = Callable[[str], Sequence[Span]]
UNCHECKED_TYPE = "UNCHECKED"
UNCHECKED_TEXT = "[UNCHECKED]"


@dataclass(frozen=True)
class MaskedSpan:
    """A replaced span: input offsets ``start``/``end`` and output offsets ``out_start``/``out_end``."""

    start: int
    end: int
    type: str
    source: str
    out_start: int
    out_end: int
    score: float = 1.0
    recognizer: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (offsets, type and source; never the value)."""
        return {
            "start": self.start,
            "end": self.end,
            "type": self.type,
            "source": self.source,
            "out_start": self.out_start,
            "out_end": self.out_end,
        }


@dataclass(frozen=True)
class MaskResult:
    """Masked text, the replaced spans and counters."""

    text: str
    spans: tuple[MaskedSpan, ...]
    stats: dict[str, Any] = field(default_factory=dict)


def default_analyzer(text: str) -> list[Span]:
    """The rule analyzer with its defaults."""
    from anonpsy.phi.analyzer import analyze

    return list(analyze(text))


def _merge_regions(chunks: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(chunks):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _cover(regions: list[tuple[int, int]], spans: Sequence[Span]) -> list[tuple[int, int]]:
    """Grow failed regions until no span straddles an edge (so no part of a span is left unmasked)."""
    out = list(regions)
    changed = True
    while changed:
        changed = False
        for s in spans:
            for j, (b, e) in enumerate(out):
                if s.start < e and b < s.end and (s.start < b or s.end > e):
                    out[j] = (min(b, s.start), max(e, s.end))
                    changed = True
        out = _merge_regions(out)
    return out


def apply_operator(text: str, spans: Sequence[Span], operator: Operator, ctx: MaskContext | None = None) -> MaskResult:
    """Replace disjoint ``spans`` of ``text`` with ``operator`` (``UNCHECKED`` spans: ``[UNCHECKED]``)."""
    ordered = sorted(spans, key=lambda s: (s.start, s.end))
    for a, b in itertools.pairwise(ordered):
        if b.start < a.end:
            raise ValueError("spans given to apply_operator must not overlap")
    context = ctx or MaskContext()
    regular = [s for s in ordered if s.type != UNCHECKED_TYPE]
    reps = iter(operator.replacements(text, regular, context))
    pieces: list[str] = []
    out: list[MaskedSpan] = []
    pos = 0
    length = 0
    for s in ordered:
        rep = UNCHECKED_TEXT if s.type == UNCHECKED_TYPE else next(reps)
        gap = text[pos : s.start]
        pieces.append(gap)
        length += len(gap)
        pieces.append(rep)
        out.append(MaskedSpan(s.start, s.end, s.type, s.source, length, length + len(rep), s.score, s.recognizer))
        length += len(rep)
        pos = s.end
    pieces.append(text[pos:])
    by_type = Counter(s.type for s in ordered)
    by_source = Counter(s.source for s in ordered)
    stats: dict[str, Any] = {
        "spans": len(ordered),
        "by_type": dict(sorted(by_type.items())),
        "by_source": dict(sorted(by_source.items())),
        "operator": operator.name,
    }
    return MaskResult("".join(pieces), tuple(out), stats)


Policy = Literal["all", "identifiers", "safe-harbor"]
POLICIES: tuple[str, ...] = ("identifiers", "safe-harbor", "all")
#: Institution names are not one of the 18 Safe Harbor identifiers by type, but they name a place of care below
#: state level, which is.
_INSTITUTION_TYPES = frozenset({"ORGANIZATION", "PHARMACY"})


def _safe_harbor_keep(span: Span, text: str) -> bool:
    from anonpsy.phi.analyzer import safe_harbor_category

    return span.type in _INSTITUTION_TYPES or safe_harbor_category(span, text) is not None


def _identifier_keep(span: Span, text: str) -> bool:
    """Direct identifiers at every granularity (years, states and countries too) and institutions; ages only
    over 89; no quasi-identifier (occupation, race, ethnicity, marital status, parenthood)."""
    from anonpsy.phi.recognizers import age_over_limit
    from anonpsy.phi.types import AGE_SAFE_HARBOR_LIMIT, QUASI_IDENTIFIER_TYPES

    if span.type == "AGE":
        return age_over_limit(text[span.start : span.end], AGE_SAFE_HARBOR_LIMIT)
    return span.type in _INSTITUTION_TYPES or span.type not in QUASI_IDENTIFIER_TYPES


def keep_for_policy(spans: Sequence[Span], text: str, policy: Policy) -> list[Span]:
    """The spans a policy replaces (see :func:`mask_text`); an unknown policy is a ValueError."""
    if policy == "all":
        return list(spans)
    if policy == "identifiers":
        return [s for s in spans if _identifier_keep(s, text)]
    if policy == "safe-harbor":
        return [s for s in spans if _safe_harbor_keep(s, text)]
    raise ValueError(f"policy must be one of {', '.join(POLICIES)}")


def mask_text(
    text: str,
    *,
    operator: Operator | str = "mask",
    vault: SurrogateVault | None = None,
    patient_id: str | None = None,
    llm: LLMDetector | JSONCompleter | None = None,
    analyzer: Analyzer | None = None,
    on_llm_failure: OnFailure = "error",
    document_id: str | None = None,
    key: bytes | None = None,
    policy: Policy = "all",
) -> MaskResult:
    """Detect and replace the identifiers of one text.

    ``policy`` chooses what is replaced: ``"all"`` every detected span (quasi-identifiers such as ages up to 89,
    occupations, race and ethnicity included); ``"identifiers"`` every direct identifier at every granularity
    (dates down to a bare year, places up to states and countries, institutions, ages over 89), as the
    PhysioNet and i2b2 de-identification standards annotate them, without quasi-identifiers;
    ``"safe-harbor"`` only HIPAA Safe Harbor identifiers, judged by value (ages over 89, dates more specific
    than a year, places below state level, …) plus institution names, which reveal a place of care below
    state level.

    ``operator`` is an :class:`~anonpsy.phi.operators.Operator` or its name (keyed operators then take
    ``key``, or the key from the environment). ``llm`` is an :class:`~anonpsy.phi.llm_detect.LLMDetector` or a
    client (wrapped in a detector with default settings). ``on_llm_failure`` decides what happens to a chunk
    the model could not check: ``"error"`` fails the document (``M105``), ``"mask_chunk"`` masks the chunk
    wholesale.
    """
    if on_llm_failure not in ("error", "mask_chunk"):
        raise ValueError("on_llm_failure must be 'error' or 'mask_chunk'")
    if isinstance(operator, str):
        needs_key = operator in ("hash", "dateshift", "surrogate")
        operator = build_operator(
            operator, key=key if key is not None or not needs_key else load_key(purpose=operator), vault=vault
        )
    found = list((analyzer or default_analyzer)(text))
    rule_count = len(found)
    llm_stats: dict[str, int] = {}
    failed: list[tuple[int, int]] = []
    if llm is not None:
        detector = llm if isinstance(llm, LLMDetector) else LLMDetector(llm)
        detection = detector.detect(text, found, case_id=document_id, on_failure=on_llm_failure)
        found.extend(detection.spans)
        failed = _merge_regions([(c.start, c.end) for c in detection.failed])
        llm_stats = dict(detection.stats)
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}")
    spans = keep_for_policy(resolve_overlaps(found, TYPE_PRIORITY), text, policy)
    if failed:
        failed = _cover(failed, spans)
        spans = [s for s in spans if not any(s.start < e and b < s.end for b, e in failed)]
        spans.extend(Span(b, e, UNCHECKED_TYPE, "llm_failure", 1.0, "fail_closed") for b, e in failed)
    result = apply_operator(text, spans, operator, MaskContext(patient_id=patient_id, document_id=document_id))
    result.stats["detected"] = {"rule": rule_count, "llm": len(found) - rule_count}
    if llm_stats:
        result.stats["llm"] = llm_stats
    return result
