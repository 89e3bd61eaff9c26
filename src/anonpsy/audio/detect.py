"""Identifiers in a timed transcript: which words to mute, and why.

Three rule sources, and a model with ``backend="llm"``:

* the masking analyzer (:func:`anonpsy.phi.analyzer.analyze`) on the written form of the transcript
  (:func:`anonpsy.audio.spoken.normalize`), its character spans mapped back to words; ages of 89 or less are
  not Safe Harbor identifiers (:func:`anonpsy.phi.analyzer.safe_harbor_category`) and stay audible;
* cue spans (:meth:`anonpsy.audio.cues.CueSet.spans`): words right after "my name is", "doctor", "call me at";
* spoken numbers (:meth:`anonpsy.audio.cues.CueSet.number_spans`): digit-by-digit and paired numbers;
* with the llm backend, the chunked detector (:class:`anonpsy.phi.llm_detect.LLMDetector`) on the same written
  form; a chunk the model could not check is muted whole (``on_llm_failure="mute"``) or fails the recording.

Every result names its word range, its identifier type and the detector (``rules:<rule id>`` or
``llm:<template>@v<N>``); never the words.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from anonpsy.audio.asr import Word
from anonpsy.audio.cues import CueSet
from anonpsy.audio.spoken import Normalized, normalize
from anonpsy.phi.spans import Span

AnalyzeFn = Callable[[str], Sequence[Span]]
OnLLMFailure = Literal["error", "mute"]


@dataclass(frozen=True)
class WordHit:
    """Words ``[first, last]`` of the transcript hold an identifier of ``type`` found by ``detector``."""

    first: int
    last: int
    type: str
    reason: str  # "phi" | "unchecked"
    detector: str


def _default_analyze(text: str) -> Sequence[Span]:
    from anonpsy.phi.analyzer import analyze

    return analyze(text)


def _age_within_limit(span: Span, text: str) -> bool:
    """An age of 89 or less: not a Safe Harbor identifier, and clinically needed."""
    if span.type != "AGE":
        return False
    from anonpsy.phi.analyzer import safe_harbor_category

    return safe_harbor_category(span, text) is None


def analyzer_hits(norm: Normalized, analyze: AnalyzeFn) -> list[WordHit]:
    """Analyzer spans on the written form, as word ranges (ages of 89 or less are kept audible)."""
    hits = []
    for span in analyze(norm.text):
        if _age_within_limit(span, norm.text):
            continue
        rng = norm.words_of(span.start, span.end)
        if rng is not None:
            hits.append(WordHit(rng[0], rng[1], span.type, "phi", f"rules:{span.recognizer or 'analyzer'}"))
    return hits


def cue_hits(words: Sequence[Word], cues: CueSet) -> list[WordHit]:
    """Cue spans and spoken numbers."""
    out = [WordHit(m.first, m.last, m.rule.type, "phi", f"rules:{m.rule.id}") for m in cues.spans(words)]
    out += [
        WordHit(m.first, m.last, m.rule.type, "phi", f"rules:{m.rule.id}")
        for m in cues.number_spans([w.text for w in words])
    ]
    return out


def llm_hits(
    norm: Normalized, rule_hits: Sequence[WordHit], detector: Any, on_failure: OnLLMFailure
) -> list[WordHit]:
    """The chunked LLM detector on the written form; failed chunks become ``unchecked`` hits when muting."""
    known = []
    for h in rule_hits:
        toks = [t for t in norm.tokens if h.first <= t.first and t.last <= h.last]
        if toks:
            known.append(Span(toks[0].start, toks[-1].end, h.type))
    result = detector.detect(
        norm.text, known, case_id=None, on_failure="error" if on_failure == "error" else "mask_chunk"
    )
    hits = []
    for span in result.spans:
        rng = norm.words_of(span.start, span.end)
        if rng is not None:
            hits.append(WordHit(rng[0], rng[1], span.type, "phi", f"llm:{span.recognizer}"))
    for chunk in result.failed:
        rng = norm.words_of(chunk.start, chunk.end)
        if rng is not None:
            hits.append(WordHit(rng[0], rng[1], "UNCHECKED", "unchecked", "llm:unchecked-chunk"))
    return hits


def detect_words(
    words: Sequence[Word],
    cues: CueSet,
    *,
    analyze: AnalyzeFn | None = None,
    llm_detector: Any = None,
    on_llm_failure: OnLLMFailure = "error",
) -> tuple[Normalized, list[WordHit]]:
    """The written form of the transcript and every word range to mute."""
    norm = normalize([w.text for w in words])
    hits = analyzer_hits(norm, analyze or _default_analyze) if words else []
    hits += cue_hits(words, cues)
    if llm_detector is not None and words:
        hits += llm_hits(norm, hits, llm_detector, on_llm_failure)
    hits.sort(key=lambda h: (h.first, h.last, h.type, h.detector))
    return norm, hits


__all__ = ["AnalyzeFn", "OnLLMFailure", "WordHit", "analyzer_hits", "cue_hits", "detect_words", "llm_hits"]
