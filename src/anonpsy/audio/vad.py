"""Voice activity detection on the 16 kHz analysis signal (WebRTC VAD, ``webrtcvad-wheels``).

Frames of 30 ms are voiced when the WebRTC detector says so *and* their level is above ``floor_dbfs`` (the
detector alone calls faint steady noise speech). Voiced runs separated by less than ``fill_ms`` are joined and
runs shorter than ``min_voiced_ms`` are dropped. Regions are ``(start_s, end_s)`` pairs in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from anonpsy.audio.signal import ANALYSIS_RATE, require, to_pcm16

Region = tuple[float, float]


@dataclass(frozen=True)
class VadSettings:
    """Parameters of :func:`voiced_regions`."""

    aggressiveness: int = 2
    frame_ms: int = 30
    floor_dbfs: float = -55.0
    fill_ms: int = 150
    min_voiced_ms: int = 60

    def __post_init__(self) -> None:
        if self.aggressiveness not in (0, 1, 2, 3):
            raise ValueError("VAD aggressiveness must be 0, 1, 2 or 3")
        if self.frame_ms not in (10, 20, 30):
            raise ValueError("VAD frames must be 10, 20 or 30 ms")


def frame_levels(signal: npt.NDArray[np.float32], frame: int) -> npt.NDArray[np.float64]:
    """RMS level in dBFS of each whole ``frame``-sample frame."""
    n = len(signal) // frame
    if n == 0:
        return np.zeros(0)
    x = signal[: n * frame].astype(np.float64).reshape(n, frame)
    rms = np.sqrt(np.mean(x * x, axis=1))
    levels: npt.NDArray[np.float64] = 20.0 * np.log10(np.maximum(rms, 1e-10))
    return levels


def voiced_frames(signal: npt.NDArray[np.float32], settings: VadSettings) -> npt.NDArray[np.bool_]:
    """One boolean per frame of ``settings.frame_ms``: is it speech?"""
    webrtcvad = require("webrtcvad")
    vad = webrtcvad.Vad(settings.aggressiveness)
    frame = ANALYSIS_RATE * settings.frame_ms // 1000
    levels = frame_levels(signal, frame)
    pcm = to_pcm16(signal)
    width = frame * 2
    out = np.zeros(len(levels), dtype=bool)
    for i in range(len(levels)):
        if levels[i] < settings.floor_dbfs:
            continue
        out[i] = bool(vad.is_speech(pcm[i * width : (i + 1) * width], ANALYSIS_RATE))
    return out


def runs(flags: npt.NDArray[np.bool_]) -> list[tuple[int, int]]:
    """Half-open index runs ``[i, j)`` where ``flags`` is true."""
    if len(flags) == 0:
        return []
    padded = np.concatenate(([False], flags, [False])).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def voiced_regions(signal: npt.NDArray[np.float32], settings: VadSettings | None = None) -> list[Region]:
    """Voiced regions of the analysis signal, in seconds, sorted and disjoint."""
    s = settings or VadSettings()
    flags = voiced_frames(signal, s)
    step = s.frame_ms / 1000.0
    fill = s.fill_ms / 1000.0
    merged: list[list[float]] = []
    for a, b in runs(flags):
        start, end = a * step, b * step
        if merged and start - merged[-1][1] < fill:
            merged[-1][1] = end
        else:
            merged.append([start, end])
    minimum = s.min_voiced_ms / 1000.0
    return [(a, b) for a, b in merged if b - a >= minimum]


__all__ = ["Region", "VadSettings", "frame_levels", "runs", "voiced_frames", "voiced_regions"]
