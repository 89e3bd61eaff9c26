"""Reading, checking, resampling and writing audio.

:func:`read_audio` keeps the samples in the file's own integer or float width (``int16`` for 8- and 16-bit PCM
and the companded codecs, ``int32`` for 24- and 32-bit PCM, ``float32``/``float64`` for float files), so that
:func:`encode_audio` writes every sample that is not muted back bit for bit, in the same container, subtype,
byte order, sample rate, channel count and length. Analysis (voice activity, recognition) runs on a mono
16 kHz float copy made by :func:`analysis_signal`.

The audio libraries belong to the ``audio`` extra; :func:`require` turns a missing one into a one-line error
that says what to install.
"""

from __future__ import annotations

import hashlib
import importlib
import io
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from anonpsy.errors import (
    A100_NOT_AUDIO,
    A101_UNSUPPORTED_RATE,
    A102_AUDIO_EXTRA_MISSING,
    A104_AUDIO_FORMAT,
    E100_MISSING_FILE,
    E101_EMPTY_INPUT,
    AnonpsyError,
)

#: Sample rates accepted on input (Hz): telephone band to studio rates.
SUPPORTED_RATES: tuple[int, ...] = (8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000)
#: Rate of the analysis copy (the recogniser's acoustic model and the voice-activity detector use it).
ANALYSIS_RATE = 16000
INSTALL_HINT = "pip install 'anonpsy[audio]'"

_INT16_SUBTYPES = frozenset({"PCM_S8", "PCM_U8", "PCM_16", "ULAW", "ALAW", "IMA_ADPCM", "MS_ADPCM", "GSM610",
                             "G721_32", "G723_24", "G723_40", "DWVW_12", "DWVW_16", "VOX_ADPCM", "NMS_ADPCM_16",
                             "NMS_ADPCM_24", "NMS_ADPCM_32"})
_INT32_SUBTYPES = frozenset({"PCM_24", "PCM_32", "DWVW_24"})
_FLOAT64_SUBTYPES = frozenset({"DOUBLE"})


def require(module: str) -> ModuleType:
    """Import an audio dependency or fail with a one-line error naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise AnonpsyError(
            A102_AUDIO_EXTRA_MISSING,
            f"audio de-identification needs the Python package {module!r}, which is not installed; "
            f"install the audio extra: {INSTALL_HINT}",
        ) from None


@dataclass(frozen=True)
class Audio:
    """Samples ``(frames, channels)`` in the file's own sample width, with what is needed to write them back."""

    samples: npt.NDArray[Any]
    rate: int
    format: str
    subtype: str
    endian: str

    @property
    def frames(self) -> int:
        """Number of sample frames (samples per channel)."""
        return int(self.samples.shape[0])

    @property
    def channels(self) -> int:
        """Number of channels."""
        return int(self.samples.shape[1])

    @property
    def duration(self) -> float:
        """Length in seconds."""
        return self.frames / self.rate

    def with_samples(self, samples: npt.NDArray[Any]) -> Audio:
        """The same file description with other samples of the same shape and width."""
        if samples.shape != self.samples.shape or samples.dtype != self.samples.dtype:
            raise ValueError("samples must keep the shape and dtype of the original")
        return Audio(samples, self.rate, self.format, self.subtype, self.endian)


def _dtype_for(subtype: str) -> str:
    if subtype in _INT16_SUBTYPES:
        return "int16"
    if subtype in _INT32_SUBTYPES:
        return "int32"
    if subtype in _FLOAT64_SUBTYPES:
        return "float64"
    return "float32"


def decode_audio(data: bytes, where: str) -> Audio:
    """Decode an audio file's bytes; every problem is a one-line :class:`AnonpsyError` located at ``where``."""
    sf = require("soundfile")
    if not data:
        raise AnonpsyError(E101_EMPTY_INPUT, "the file is empty; give a recording with at least one sample", where)
    try:
        with sf.SoundFile(io.BytesIO(data)) as fh:
            info = (int(fh.samplerate), int(fh.channels), str(fh.format), str(fh.subtype), str(fh.endian))
            rate, channels, fmt, subtype, endian = info
            if rate not in SUPPORTED_RATES:
                raise AnonpsyError(
                    A101_UNSUPPORTED_RATE,
                    f"sample rate {rate} Hz is not supported; use one of "
                    f"{', '.join(str(r) for r in SUPPORTED_RATES)} Hz (resample first, e.g. with sox)",
                    where,
                )
            samples = fh.read(dtype=_dtype_for(subtype), always_2d=True)
    except sf.LibsndfileError:
        raise AnonpsyError(
            A100_NOT_AUDIO,
            "not a readable audio file (format not recognised or damaged); give a WAV, FLAC, AIFF or OGG "
            "recording",
            where,
        ) from None
    if samples.shape[0] == 0 or channels == 0:
        raise AnonpsyError(E101_EMPTY_INPUT, "the recording holds no samples", where)
    return Audio(samples, rate, fmt, subtype, endian)


def read_audio(path: Path) -> Audio:
    """Read and check an audio file (see :func:`decode_audio`); a missing file is ``E100``."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise AnonpsyError(E100_MISSING_FILE, "file not found", Path(path).name) from None
    except IsADirectoryError:
        raise AnonpsyError(E100_MISSING_FILE, "is a directory, not an audio file", Path(path).name) from None
    return decode_audio(data, Path(path).name)


def encode_audio(audio: Audio) -> bytes:
    """The bytes of ``audio`` in its own container, subtype and byte order."""
    sf = require("soundfile")
    buf = io.BytesIO()
    try:
        sf.write(buf, audio.samples, audio.rate, subtype=audio.subtype, endian=audio.endian, format=audio.format)
    except (sf.LibsndfileError, ValueError, TypeError):
        raise AnonpsyError(
            A104_AUDIO_FORMAT,
            f"cannot write {audio.format}/{audio.subtype} audio back; convert the input to WAV first",
        ) from None
    return buf.getvalue()


def output_format_problem(audio: Audio, output: Path) -> str | None:
    """Why ``output``'s extension does not fit the input's container, or None."""
    sf = require("soundfile")
    ext = output.suffix.lstrip(".").upper()
    if not ext:
        return None
    known = {k.upper() for k in sf.available_formats()} | {"WAVE", "AIF", "OGA", "OPUS"}
    aliases = {"WAVE": "WAV", "AIF": "AIFF", "OGA": "OGG", "OPUS": "OGG", "WAVEX": "WAV", "RF64": "WAV"}
    if ext not in known:
        return None
    fmt = aliases.get(audio.format, audio.format)
    if aliases.get(ext, ext) != fmt:
        return f"the output name ends in .{ext.lower()} but the input is {audio.format}; the output keeps " \
               f"the input's format, so name it .{fmt.lower()}"
    return None


def to_mono_float(audio: Audio) -> npt.NDArray[np.float32]:
    """Channel mean as float32 in [-1, 1]."""
    x = audio.samples
    if x.dtype == np.int16:
        f = x.astype(np.float32) / 32768.0
    elif x.dtype == np.int32:
        f = (x.astype(np.float64) / 2147483648.0).astype(np.float32)
    else:
        f = x.astype(np.float32)
    mono: npt.NDArray[np.float32] = f.mean(axis=1, dtype=np.float32) if f.shape[1] > 1 else f[:, 0]
    return mono


def resample(signal: npt.NDArray[np.float32], rate: int, target: int = ANALYSIS_RATE) -> npt.NDArray[np.float32]:
    """``signal`` resampled from ``rate`` to ``target`` Hz (soxr, high quality)."""
    if rate == target:
        return np.ascontiguousarray(signal, dtype=np.float32)
    soxr = require("soxr")
    out: npt.NDArray[np.float32] = np.asarray(soxr.resample(signal, rate, target), dtype=np.float32)
    return out


def analysis_signal(audio: Audio) -> npt.NDArray[np.float32]:
    """The mono 16 kHz float copy used for voice activity detection and recognition."""
    return resample(to_mono_float(audio), audio.rate, ANALYSIS_RATE)


def to_pcm16(signal: npt.NDArray[np.float32]) -> bytes:
    """Little-endian 16-bit PCM bytes of a float signal (clipped to [-1, 1])."""
    return (np.clip(signal, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()


def wav_bytes(signal: npt.NDArray[np.float32], rate: int = ANALYSIS_RATE) -> bytes:
    """A mono 16-bit WAV file of ``signal``."""
    sf = require("soundfile")
    buf = io.BytesIO()
    sf.write(buf, np.clip(signal, -1.0, 1.0), rate, subtype="PCM_16", format="WAV")
    return buf.getvalue()


def sha256_samples(audio: Audio) -> str:
    """SHA-256 of the raw sample array (identifies a recording's content without revealing it)."""
    return hashlib.sha256(np.ascontiguousarray(audio.samples).tobytes()).hexdigest()


__all__ = [
    "ANALYSIS_RATE",
    "INSTALL_HINT",
    "SUPPORTED_RATES",
    "Audio",
    "analysis_signal",
    "decode_audio",
    "encode_audio",
    "output_format_problem",
    "read_audio",
    "require",
    "resample",
    "sha256_samples",
    "to_mono_float",
    "to_pcm16",
    "wav_bytes",
]
