"""Muted intervals: from word and gap times to exact sample ranges, and silencing them.

An interval is widened by ``margin`` on both sides (recogniser word boundaries are approximate to a few
frames, and the start and end of a name carry it too), clipped to the recording, and converted to samples at
the file's own rate: ``floor(start·rate)`` to ``ceil(end·rate)``. Overlapping intervals stay separate in the
report (each keeps its reason) and are merged for muting. Muting sets every channel's samples to exact zero;
all other samples are left bit for bit as they were, and the length does not change.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from anonpsy.audio.signal import Audio


@dataclass(frozen=True)
class Interval:
    """One muted stretch: seconds and samples (half-open), why, and which detector asked for it."""

    start: float
    end: float
    start_sample: int
    end_sample: int
    reason: str  # "phi" | "gap" | "unchecked"
    type: str | None
    detector: str
    words: int = 0  # number of recognised words inside (the words themselves are never kept)


def to_samples(start: float, end: float, rate: int, frames: int) -> tuple[int, int]:
    """Sample range ``[a, b)`` covering seconds ``[start, end)``, clipped to the recording."""
    a = max(0, min(frames, math.floor(start * rate)))
    b = max(a, min(frames, math.ceil(end * rate)))
    return a, b


def make_interval(
    start: float,
    end: float,
    *,
    margin: float,
    rate: int,
    frames: int,
    reason: str,
    type: str | None,
    detector: str,
    words: int = 0,
) -> Interval:
    """An interval widened by ``margin`` seconds and placed on samples."""
    duration = frames / rate
    s = max(0.0, start - margin)
    e = min(duration, end + margin)
    a, b = to_samples(s, e, rate, frames)
    return Interval(round(a / rate, 4), round(b / rate, 4), a, b, reason, type, detector, words)


def merged(intervals: Sequence[Interval]) -> list[tuple[int, int]]:
    """Disjoint sample ranges covering every interval."""
    out: list[list[int]] = []
    for iv in sorted(intervals, key=lambda i: (i.start_sample, i.end_sample)):
        if iv.end_sample <= iv.start_sample:
            continue
        if out and iv.start_sample <= out[-1][1]:
            out[-1][1] = max(out[-1][1], iv.end_sample)
        else:
            out.append([iv.start_sample, iv.end_sample])
    return [(a, b) for a, b in out]


def apply(audio: Audio, ranges: Sequence[tuple[int, int]]) -> Audio:
    """A copy of ``audio`` with every sample in ``ranges`` set to zero on all channels."""
    samples = np.array(audio.samples, copy=True)
    for a, b in ranges:
        samples[a:b, :] = 0
    return audio.with_samples(samples)


__all__ = ["Interval", "apply", "make_interval", "merged", "to_samples"]
