"""Audio de-identification: recognise, find identifiers and unaccounted speech, mute with a margin.

:func:`deidentify` is the one entry point; it takes a decoded :class:`~anonpsy.audio.signal.Audio` and returns
the muted audio and the report (a dict that follows ``schemas/audio/report.v1.json``). Steps:

1. analysis copy (mono, 16 kHz) and voiced regions (WebRTC VAD);
2. words with timestamps (PocketSphinx by default, or a transcription server);
3. identifiers in the transcript (:func:`anonpsy.audio.detect.detect_words`: analyzer on the written form, cue
   spans, spoken numbers, and with the llm backend the chunked detector), and by the rules alone in every second
   reading a combined recogniser (:class:`anonpsy.audio.asr.CombinedRecognizer`) made of the same audio;
4. gaps — voiced speech no word accounts for — classified from their context (cue rules, and a gap right
   next to an identifier's words is part of it; with the llm backend also the ``audio_gap`` prompt; muted
   when either marks them, or all of them with ``mute_all_gaps``);
5. muting: every interval widened by ``margin_s`` (recognised identifier words by ``end_extra_s`` more at
   their end, names by ``name_end_extra_s`` more again), on exact samples of the original file; the margin of
   an identifier's words reaches at most ``sure_margin_s`` into a neighbouring word that no rule marks and that
   the recogniser was sure of (confidence at least ``sure_above``).

The report lists every muted interval with its reason (``phi`` with the identifier type, ``gap``, or
``unchecked``) and detector, plus counts; it never holds words or file names.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from anonpsy.audio.asr import Recognizer, Word
from anonpsy.audio.cues import CueSet, default_cues
from anonpsy.audio.detect import AnalyzeFn, WordHit, detect_words
from anonpsy.audio.gaps import GapVerdict, classify_llm, classify_rules, find_gaps
from anonpsy.audio.mute import Interval, apply, make_interval, merged
from anonpsy.audio.signal import ANALYSIS_RATE, Audio, analysis_signal, sha256_samples
from anonpsy.audio.vad import VadSettings, voiced_regions

REPORT_VERSION = 1
Backend = Literal["rules", "llm"]


@dataclass(frozen=True)
class Settings:
    """Everything that shapes the output."""

    margin_s: float = 0.2
    # Added to the margin after recognised identifier words: a name the recogniser heard as a shorter word
    # ("Haddad" as "Hahn") is aligned to less audio than was spoken, and the rest follows the word.
    end_extra_s: float = 0.05
    # Added after recognised name words on top of ``end_extra_s``: a name heard as a common word ("Becky" for
    # "Bhekizizwe", "let" for "Letellier") is the likeliest to be aligned to less audio than was spoken.
    name_end_extra_s: float = 0.05
    # A word beside an identifier that no rule marks and that the recogniser reported with at least this
    # confidence is ordinary speech it heard right: the margin, there for the aligner's error at the boundary,
    # reaches at most ``sure_margin_s`` into it (a confidence above 1 turns this off).
    sure_above: float = 0.95
    sure_margin_s: float = 0.1
    backend: Backend = "rules"
    vad: VadSettings = field(default_factory=VadSettings)
    min_gap_s: float = 0.15
    mute_all_gaps: bool = False
    on_llm_failure: Literal["error", "mute"] = "error"

    def __post_init__(self) -> None:
        if not 0.0 <= self.margin_s <= 5.0:
            raise ValueError("margin must be from 0 to 5000 ms")
        if not 0.0 <= self.end_extra_s <= 1.0:
            raise ValueError("the extra end margin must be from 0 to 1000 ms")
        if not 0.0 <= self.name_end_extra_s <= 1.0:
            raise ValueError("the extra end margin after names must be from 0 to 1000 ms")
        if not 0.0 <= self.sure_margin_s <= 5.0:
            raise ValueError("the margin into a sure neighbouring word must be from 0 to 5000 ms")
        if self.min_gap_s <= 0:
            raise ValueError("the minimum gap must be positive")


@dataclass
class Result:
    """Muted audio, the report, and (for tests and tools only) the words and verdicts behind it."""

    audio: Audio
    report: dict[str, Any]
    words: list[Word]
    hits: list[WordHit]
    gaps: list[GapVerdict]


def _word_intervals(
    words: list[Word],
    hits: list[WordHit],
    audio: Audio,
    margin: float,
    end_extra: float,
    name_end_extra: float = 0.0,
    source: str = "",
    sure_above: float = 2.0,
    sure_margin: float = 0.0,
) -> list[Interval]:
    marked = {k for h in hits for k in range(h.first, h.last + 1)}

    def sure(k: int) -> bool:
        if not 0 <= k < len(words) or k in marked:
            return False
        p = words[k].probability
        return p is not None and p >= sure_above

    out = []
    for h in hits:
        span = words[h.first : h.last + 1]
        if not span:
            continue
        first = min(w.start for w in span)
        last = max(w.end for w in span) + end_extra + (name_end_extra if h.type == "PERSON" else 0.0)
        start, end = first - margin, last + margin
        before, after = h.first - 1, h.last + 1
        if sure(before) and words[before].end <= span[0].start + 0.01:
            start = min(first, max(start, words[before].end - sure_margin))
        if sure(after) and words[after].start >= span[-1].end - 0.01:
            end = max(last, min(end, words[after].start + sure_margin))
        out.append(
            make_interval(
                start,
                end,
                margin=0.0,
                rate=audio.rate,
                frames=audio.frames,
                reason=h.reason,
                type=h.type,
                detector=source + h.detector,
                words=len(span),
            )
        )
    return out


def deidentify(
    audio: Audio,
    recognizer: Recognizer,
    settings: Settings | None = None,
    *,
    cues: CueSet | None = None,
    analyze: AnalyzeFn | None = None,
    llm_detector: Any = None,
    llm_client: Any = None,
) -> Result:
    """Mute every identifier and every likely-identifier gap of ``audio`` (see the module docstring)."""
    s = settings or Settings()
    cue_set = cues or default_cues()
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    signal = analysis_signal(audio)
    voiced = voiced_regions(signal, s.vad)
    timings["vad_s"] = time.perf_counter() - t0

    t1 = time.perf_counter()
    words = recognizer.transcribe(signal, voiced)
    # Second readings of the same audio by other recognisers (CombinedRecognizer): their words are read by the
    # rule detectors too, and what any reading marks is muted.
    alternatives = [list(a) for a in getattr(recognizer, "alternatives", ())]
    timings["asr_s"] = time.perf_counter() - t1

    t2 = time.perf_counter()
    llm = s.backend == "llm"
    _, hits = detect_words(
        words,
        cue_set,
        analyze=analyze,
        llm_detector=llm_detector if llm else None,
        on_llm_failure=s.on_llm_failure,
    )
    gaps = find_gaps(voiced, words, min_gap_s=s.min_gap_s)
    verdicts = classify_rules(gaps, words, cue_set, hits)
    if llm and llm_client is not None and gaps:
        by_model = classify_llm(gaps, words, llm_client, on_failure=s.on_llm_failure)
        verdicts = [r if r.phi else m for r, m in zip(verdicts, by_model, strict=True)]
    timings["detect_s"] = time.perf_counter() - t2

    intervals = _word_intervals(words, hits, audio, s.margin_s, s.end_extra_s, s.name_end_extra_s,
                                sure_above=s.sure_above, sure_margin=s.sure_margin_s)
    for alt in alternatives:
        _, alt_hits = detect_words(alt, cue_set, analyze=analyze)
        intervals += _word_intervals(
            alt, alt_hits, audio, s.margin_s, s.end_extra_s, s.name_end_extra_s, source="second-reading:"
        )
    for v in verdicts:
        if v.phi or s.mute_all_gaps:
            detector = v.detector if v.phi else "rules:mute-all-gaps"
            intervals.append(
                make_interval(
                    v.gap.start,
                    v.gap.end,
                    margin=s.margin_s,
                    rate=audio.rate,
                    frames=audio.frames,
                    reason=v.reason if v.phi else "gap",
                    type=v.type,
                    detector=detector,
                )
            )
    intervals.sort(key=lambda i: (i.start_sample, i.end_sample, i.reason, i.detector))
    ranges = merged(intervals)
    out = apply(audio, ranges)
    muted_samples = sum(b - a for a, b in ranges)
    timings["total_s"] = time.perf_counter() - t0
    voiced_s = sum(b - a for a, b in voiced)
    report: dict[str, Any] = {
        "version": REPORT_VERSION,
        "input": {
            "sample_rate": audio.rate,
            "channels": audio.channels,
            "frames": audio.frames,
            "duration_s": round(audio.duration, 4),
            "format": audio.format,
            "subtype": audio.subtype,
            "sha256": sha256_samples(audio),
        },
        "output": {"frames": out.frames, "sha256": sha256_samples(out)},
        "settings": {
            "margin_ms": round(s.margin_s * 1000),
            "end_extra_ms": round(s.end_extra_s * 1000),
            "name_end_extra_ms": round(s.name_end_extra_s * 1000),
            "backend": s.backend,
            "asr": recognizer.name,
            "vad_aggressiveness": s.vad.aggressiveness,
            "min_gap_ms": round(s.min_gap_s * 1000),
            "mute_all_gaps": s.mute_all_gaps,
            "analysis_rate": ANALYSIS_RATE,
        },
        "counts": {
            "words": len(words),
            "voiced_regions": len(voiced),
            "voiced_s": round(voiced_s, 3),
            "identifier_spans": len(hits),
            "gaps": len(verdicts),
            "gaps_muted": sum(1 for v in verdicts if v.phi or s.mute_all_gaps),
            "gaps_kept": sum(1 for v in verdicts if not (v.phi or s.mute_all_gaps)),
            "intervals": len(intervals),
        },
        "muted_s": round(muted_samples / audio.rate, 4),
        "muted_share": round(muted_samples / audio.frames, 6) if audio.frames else 0.0,
        "intervals": [
            {
                "start_s": iv.start,
                "end_s": iv.end,
                "start_sample": iv.start_sample,
                "end_sample": iv.end_sample,
                "reason": iv.reason,
                "type": iv.type,
                "detector": iv.detector,
                "words": iv.words,
            }
            for iv in intervals
        ],
        "timing": {k: round(v, 3) for k, v in timings.items()},
    }
    return Result(out, report, words, hits, verdicts)


__all__ = ["REPORT_VERSION", "Backend", "Result", "Settings", "deidentify"]
