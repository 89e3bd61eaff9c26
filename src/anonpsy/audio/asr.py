"""Speech recognition with word timestamps.

The recognisers share one result type, a list of :class:`Word` (text, start and end in seconds of the
analysis signal):

* :class:`PocketSphinxRecognizer`, the light embedded one: CMU PocketSphinx with the US English acoustic model,
  dictionary and language model that ship in its PyPI wheel. Voiced regions are grouped into utterances of at
  most ``max_utterance_s`` and decoded one by one; filler tokens (``<sil>``, ``[NOISE]``, ``[SPEECH]``,
  ``++…++``) are not words, so the speech under them counts as unaccounted for.
* :class:`MoonshineRecognizer`, the default: Moonshine base from the moonshine-cpp wheel's model files, run by
  that wheel's library or by the ``onnxruntime`` package, its words placed in time by PocketSphinx alignment.
* :class:`CombinedRecognizer`: a primary recogniser and second readings of the same audio by others; the
  pipeline reads the primary's words and runs the rule detectors on every reading, muting what any marks
  (opt-in: PocketSphinx's own decoding as a second reading of Moonshine roughly triples the time on one core).
* :class:`ServerRecognizer`: an OpenAI-compatible ``/v1/audio/transcriptions`` server (whisper.cpp,
  faster-whisper servers) asked for ``verbose_json`` with word timestamps, through
  :class:`anonpsy.llm.client.TranscriptionClient`. Words come from the top-level ``words`` list or from
  ``segments[].words``; every word must have a start and an end inside the recording, or the reply is rejected
  (``A103``): a reply that cannot be placed in time cannot be used to mute anything.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from anonpsy.audio.signal import ANALYSIS_RATE, require, to_pcm16, wav_bytes
from anonpsy.audio.vad import Region
from anonpsy.errors import A103_TRANSCRIPTION, AnonpsyError

_VARIANT = re.compile(r"\(\d+\)$")


@dataclass(frozen=True)
class Word:
    """One recognised word: its text and its time span in seconds."""

    text: str
    start: float
    end: float
    probability: float | None = None


class Recognizer(Protocol):
    """Anything that turns the 16 kHz analysis signal into timed words."""

    name: str

    def transcribe(self, signal: npt.NDArray[np.float32], regions: Sequence[Region]) -> list[Word]:
        """Words of ``signal``; ``regions`` are its voiced regions (a recogniser may ignore them)."""
        ...


def utterances(regions: Sequence[Region], *, max_s: float = 20.0, join_s: float = 0.6) -> list[Region]:
    """Voiced regions grouped into utterances of at most ``max_s``: neighbours closer than ``join_s`` join.

    A run of joined regions longer than ``max_s`` is cut at its widest pause, and each side again until every
    piece fits: a recogniser decodes each utterance on its own, and a cut where the speaker barely paused (between
    the digit groups of a phone number, inside a name) leaves each side a fragment it cannot read in context. A
    single region longer than ``max_s`` stays whole.
    """
    runs: list[list[Region]] = []
    for a, b in regions:
        if runs and a - runs[-1][-1][1] < join_s:
            runs[-1].append((a, b))
        else:
            runs.append([(a, b)])
    out: list[Region] = []
    for run in runs:
        _cut_at_pauses(run, max_s, out)
    return out


def _cut_at_pauses(run: Sequence[Region], max_s: float, out: list[Region]) -> None:
    """Append ``run`` to ``out`` as one utterance, or cut at its widest pause (the earliest of equals) and recurse."""
    if len(run) == 1 or run[-1][1] - run[0][0] <= max_s:
        out.append((run[0][0], run[-1][1]))
        return
    cut = max(range(1, len(run)), key=lambda k: (run[k][0] - run[k - 1][1], -k))
    _cut_at_pauses(run[:cut], max_s, out)
    _cut_at_pauses(run[cut:], max_s, out)


def is_filler(token: str) -> bool:
    """PocketSphinx tokens that are not words: sentence marks, silence and noise models."""
    return token.startswith(("<", "[", "++")) or not token.strip()


class PocketSphinxRecognizer:
    """The embedded recogniser (PocketSphinx, model from the wheel)."""

    name = "pocketsphinx"

    def __init__(self, *, max_utterance_s: float = 20.0, pad_s: float = 0.15, **config: Any) -> None:
        ps = require("pocketsphinx")
        self.version = _package_version("pocketsphinx")
        self.max_utterance_s = max_utterance_s
        self.pad_s = pad_s
        options: dict[str, Any] = {"samprate": ANALYSIS_RATE, "loglevel": "FATAL"}
        options.update(config)
        self._decoder = ps.Decoder(**options)

    def transcribe(self, signal: npt.NDArray[np.float32], regions: Sequence[Region]) -> list[Word]:
        """Decode each utterance; word times are frame-accurate (10 ms)."""
        words: list[Word] = []
        total = len(signal) / ANALYSIS_RATE
        for a, b in utterances(regions, max_s=self.max_utterance_s):
            start = max(0.0, a - self.pad_s)
            end = min(total, b + self.pad_s)
            chunk = signal[int(start * ANALYSIS_RATE) : math.ceil(end * ANALYSIS_RATE)]
            if len(chunk) < ANALYSIS_RATE // 10:
                continue
            d = self._decoder
            d.start_utt()
            d.process_raw(to_pcm16(chunk), full_utt=True)
            d.end_utt()
            for seg in d.seg():
                token = _VARIANT.sub("", str(seg.word))
                if is_filler(token):
                    continue
                w0 = start + seg.start_frame / 100.0
                w1 = start + (seg.end_frame + 1) / 100.0
                words.append(Word(token, round(w0, 3), round(min(w1, total), 3)))
        return words


class MoonshineRecognizer:
    """Moonshine base (English) from the ``moonshine-cpp`` wheel, placed in time by PocketSphinx alignment.

    Each utterance (voiced regions grouped up to ``max_utterance_s``) is transcribed by Moonshine, an
    encoder-decoder recogniser trained on far more speech than PocketSphinx's model, and its written words are
    force-aligned to the same audio (:class:`anonpsy.audio.align.Aligner`). When the aligner finds no path
    (the text does not fit the audio), the utterance's words share its time in proportion to their spoken
    length, each widened over its neighbours' shares, and ``unaligned`` counts it; when only the grammar of
    spoken alternatives aligns it, each word also keeps that share (``loosely_aligned`` counts it). Voiced
    stretches of at least ``second_pass_s`` that no word accounts for (the recogniser stopped early or skipped a
    phrase) are transcribed and aligned once more on their own; ``second_pass`` counts them.

    ``runtime`` picks what runs the model files (:data:`RUNTIMES`); left out, :func:`moonshine_runtime` chooses:
    the wheel's own library where it runs on this CPU, else the ``onnxruntime`` package
    (:class:`anonpsy.audio.moonshine_onnx.MoonshineOnnx`). Where neither can run, ``A103``.
    """

    name = "moonshine"

    def __init__(
        self,
        *,
        max_utterance_s: float = 15.0,
        pad_s: float = 0.15,
        second_pass_s: float = 0.6,
        recycle_s: float = 20.0,
        runtime: str | None = None,
    ) -> None:
        require("moonshine_cpp")
        from anonpsy.audio.align import Aligner

        chosen = runtime if runtime is not None else moonshine_runtime()
        if chosen not in RUNTIMES:
            raise AnonpsyError(A103_TRANSCRIPTION, _NO_RUNTIME)
        self.runtime = chosen
        self.version = _package_version("moonshine-cpp")
        if chosen == "onnxruntime":
            self.version += f" (onnxruntime {_package_version('onnxruntime')})"
        self.max_utterance_s = max_utterance_s
        self.pad_s = pad_s
        self.recycle_s = recycle_s
        self._worker: _MoonshineWorker | None = None
        self._onnx: Any = None
        self._aligner = Aligner()
        self.second_pass_s = second_pass_s
        self.unaligned = 0
        self.loosely_aligned = 0
        self.second_pass = 0
        self.redecoded = 0
        self.worker_cpu_s = 0.0
        self.workers = 0

    def text(self, chunk: npt.NDArray[np.float32]) -> str:
        """Moonshine's transcript of a 16 kHz chunk.

        On the ``onnxruntime`` runtime the model runs in this process. On the ``cpp`` runtime it runs in a worker
        process: moonshine-cpp 0.1.4 keeps about 40 MB per second of audio it transcribes until its process ends
        (freeing the model does not return it), so the worker is replaced after ``recycle_s`` seconds of audio and
        memory stays bounded (about 1.5 GB) on recordings of any length.
        """
        if self.runtime == "onnxruntime":
            return self._onnx_text(chunk)
        seconds = len(chunk) / ANALYSIS_RATE
        if self._worker is not None and self._worker.seconds and self._worker.seconds + seconds > self.recycle_s:
            self._worker.close()
            self._worker = None
        if self._worker is None:
            self._worker = _MoonshineWorker()
            self.workers += 1
        text, cpu = self._worker.transcribe(chunk)
        self.worker_cpu_s += cpu
        return text

    def scored_text(self, chunk: npt.NDArray[np.float32]) -> list[tuple[str, float | None]]:
        """Moonshine's words of a 16 kHz chunk, each with the decoder's confidence: the lowest probability among
        its tokens on the ``onnxruntime`` runtime, ``None`` on the ``cpp`` runtime (its library reports text
        only)."""
        if self.runtime == "onnxruntime":
            return list(self._onnx_call(lambda m: m.transcribe_scored(chunk)))
        return [(w, None) for w in self.text(chunk).split()]

    def _onnx_text(self, chunk: npt.NDArray[np.float32]) -> str:
        return str(self._onnx_call(lambda m: m.transcribe(chunk)))

    def _onnx_call(self, call: Any) -> Any:
        try:
            if self._onnx is None:
                from anonpsy.audio.moonshine_onnx import MoonshineOnnx

                self._onnx = MoonshineOnnx()
            return call(self._onnx)
        except AnonpsyError:
            raise
        except Exception as exc:  # the runtime's own errors, reported by kind only (they may quote the input)
            raise AnonpsyError(
                A103_TRANSCRIPTION, f"the embedded recogniser failed on onnxruntime ({type(exc).__name__})"
            ) from None

    def close(self) -> None:
        """Stop the worker process."""
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def __enter__(self) -> MoonshineRecognizer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def _utterance(self, signal: npt.NDArray[np.float32], a: float, b: float) -> list[Word]:
        total = len(signal) / ANALYSIS_RATE
        start = max(0.0, a - self.pad_s)
        end = min(total, b + self.pad_s)
        chunk = signal[int(start * ANALYSIS_RATE) : math.ceil(end * ANALYSIS_RATE)]
        if len(chunk) < ANALYSIS_RATE // 10:
            return []
        scored = self.scored_text(chunk)
        tokens = [w for w, _ in scored]
        if not tokens:
            return []
        aligned = self._aligner.align(chunk, tokens)
        if aligned is None:
            self.unaligned += 1
            return _spread(tokens, start, end, [p for _, p in scored])
        words = [
            Word(tokens[al.index], round(start + al.start, 3), round(min(start + al.end, total), 3),
                 scored[al.index][1])
            for al in aligned
        ]
        if self._aligner.last_loose:
            # Found only on the grammar of spoken alternatives, with wide beams: each word is muted where it was
            # aligned and over its share of the utterance too, so it never covers less than without the grammar.
            self.loosely_aligned += 1
            return _widened(words, _spread(tokens, start, end, [p for _, p in scored]))
        return words

    def transcribe(self, signal: npt.NDArray[np.float32], regions: Sequence[Region]) -> list[Word]:
        """Transcribe and align each utterance; then once more each voiced stretch no word accounts for.

        An encoder-decoder recogniser now and then falls into a loop, writing one piece over and over in place of
        the rest of the utterance (:func:`looped`); such an utterance is transcribed again in the shorter pieces
        its pauses part it into, and ``redecoded`` counts it."""
        words: list[Word] = []
        for a, b in utterances(regions, max_s=self.max_utterance_s):
            got = self._utterance(signal, a, b)
            if looped([w.text for w in got]):
                inside = [(max(a, ra), min(b, rb)) for ra, rb in regions if rb > a and ra < b]
                pieces = utterances(inside, max_s=(b - a) / 2)
                if len(pieces) > 1:
                    self.redecoded += 1
                    got = [w for pa, pb in pieces for w in self._utterance(signal, pa, pb)]
            words.extend(got)
        # An encoder-decoder recogniser can stop early and leave a phrase out; what it left out is
        # transcribed again on its own.
        from anonpsy.audio.gaps import find_gaps

        for gap in find_gaps(regions, words, min_gap_s=self.second_pass_s):
            extra = [w for w in self._utterance(signal, gap.start, gap.end) if w.end > gap.start and w.start < gap.end]
            self.second_pass += 1
            words.extend(extra)
        words.sort(key=lambda w: (w.start, w.end))
        return words


class CombinedRecognizer:
    """A primary recogniser and second readings of the same audio by others.

    :meth:`transcribe` returns the primary's words (the transcript that gaps, the report's counts and the model
    detector read); every other recogniser's words are kept in ``alternatives``, and
    :func:`anonpsy.audio.pipeline.deidentify` runs the rule detectors on each of them too and mutes what any
    reading marks. Two recognisers rarely mishear the same word the same way: a cue word one of them wrote as a
    word that is no cue ("dogger" for "daughter") or a number tail it wrote as ordinary words is often heard by
    the other, whose timing then places the identifier.
    """

    def __init__(self, primary: Recognizer, *others: Recognizer) -> None:
        if not others:
            raise ValueError("a combined recogniser needs at least one second reading")
        self.primary = primary
        self.others = others
        self.name = "+".join([primary.name, *(o.name for o in others)])
        self.version = " + ".join(str(getattr(r, "version", "")) for r in (primary, *others))
        self.alternatives: list[list[Word]] = []

    def transcribe(self, signal: npt.NDArray[np.float32], regions: Sequence[Region]) -> list[Word]:
        """The primary's words; the others' in ``alternatives``, in the order the recognisers were given."""
        words = self.primary.transcribe(signal, regions)
        self.alternatives = [list(o.transcribe(signal, regions)) for o in self.others]
        return words

    @property
    def worker_cpu_s(self) -> float:
        """CPU seconds the recognisers spent in worker processes."""
        return sum(float(getattr(r, "worker_cpu_s", 0.0)) for r in (self.primary, *self.others))

    def close(self) -> None:
        """Close every recogniser that holds a process."""
        for r in (self.primary, *self.others):
            close = getattr(r, "close", None)
            if close is not None:
                close()

    def __enter__(self) -> CombinedRecognizer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _MoonshineWorker:
    """One Moonshine worker process (:mod:`anonpsy.audio.moonshine_worker`) and the audio it has heard."""

    def __init__(self) -> None:
        import subprocess
        import sys

        self._proc = subprocess.Popen(
            [sys.executable, "-m", "anonpsy.audio.moonshine_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.seconds = 0.0

    def transcribe(self, chunk: npt.NDArray[np.float32]) -> tuple[str, float]:
        from anonpsy.audio.moonshine_worker import REPLY, REQUEST, read_exact

        x = np.ascontiguousarray(chunk, dtype="<f4")
        assert self._proc.stdin is not None and self._proc.stdout is not None
        try:
            self._proc.stdin.write(REQUEST.pack(len(x)) + x.tobytes())
            self._proc.stdin.flush()
            head = read_exact(self._proc.stdout, REPLY.size)
            if len(head) < REPLY.size:
                raise EOFError
            status, cpu, n = REPLY.unpack(head)
            text = read_exact(self._proc.stdout, n).decode("utf-8", errors="replace")
        except (EOFError, OSError):
            raise AnonpsyError(A103_TRANSCRIPTION, _stopped(self._proc)) from None
        if status != 0:
            raise AnonpsyError(A103_TRANSCRIPTION, f"the embedded recogniser failed (status {status})")
        self.seconds += len(x) / ANALYSIS_RATE
        return text, float(cpu)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self._proc.stdin is not None:
                self._proc.stdin.write(bytes(4))  # a request of zero samples ends the worker
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=5)
        except Exception:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()


def _stopped(proc: Any) -> str:
    """Why the Moonshine worker is gone, in one line (a signal is named: SIGILL means this CPU lacks an instruction
    set the moonshine-cpp build was compiled for)."""
    import signal

    try:
        code = proc.wait(timeout=5)
    except Exception:
        code = proc.poll()
    if isinstance(code, int) and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = (" (this CPU lacks an instruction the moonshine-cpp build uses; with onnxruntime installed Moonshine "
                "runs without it)" if name == "SIGILL" else "")
        return f"the embedded recogniser was killed by {name}{hint}; use --asr pocketsphinx or --asr server"
    return f"the embedded recogniser stopped (exit code {code})"


#: Where Moonshine's model files run: the ``onnxruntime`` package in this process, or the moonshine-cpp wheel's
#: own library (built for AVX-512) in a worker process.
RUNTIMES = ("onnxruntime", "cpp")

_NO_RUNTIME = ("Moonshine cannot run here: onnxruntime is not installed (audio extra) and the moonshine-cpp "
               "library needs AVX-512; use --asr pocketsphinx or --asr server")


def onnxruntime_available() -> bool:
    """Can Moonshine's model files run on the ``onnxruntime`` package here (both installed)?"""
    import importlib.util

    from anonpsy.audio.moonshine_onnx import model_dir

    return importlib.util.find_spec("onnxruntime") is not None and model_dir() is not None


def moonshine_runtime() -> str | None:
    """The runtime Moonshine uses here: ``cpp`` where the moonshine-cpp library runs on this CPU
    (:func:`moonshine_runs`), else ``onnxruntime`` where that package and the model files are installed, else
    ``None``. Both run the same model files on ONNX Runtime 1.22.1 with greedy decoding."""
    if moonshine_runs():
        return "cpp"
    if onnxruntime_available():
        return "onnxruntime"
    return None


@functools.cache
def moonshine_runs() -> bool:
    """Can Moonshine run here? Its wheel may be installed on a CPU that lacks an instruction set the library was
    built for, and then its process dies on the first transcription. Tried once per process, on a quarter of a
    second of silence, in a worker process of its own."""
    import importlib.util

    if importlib.util.find_spec("moonshine_cpp") is None:
        return False
    worker = _MoonshineWorker()
    try:
        worker.transcribe(np.zeros(ANALYSIS_RATE // 4, dtype=np.float32))
    except AnonpsyError:
        return False
    finally:
        worker.close()
    return True


#: A loop: a piece of one to six characters written six times or more in a row inside a word ("ques-a-a-a-a-a-a"),
#: or one to three words written four times or more in a row that are no number ("I need to, I need to, ...").
_LOOPED_PIECE = re.compile(r"(.{1,6}?)(?:-?\1){5,}")
_LOOP_WORDS = 4


def looped(texts: Sequence[str]) -> bool:
    """Do these recognised words hold a loop, the decoder writing the same piece over and over in place of what
    was said? Numbers said digit by digit repeat on purpose ("five five five five") and do not count."""
    from anonpsy.audio.cues import is_number_word

    cores = [t.strip(".,;:!?\"'").lower() for t in texts]
    if any(_LOOPED_PIECE.search(c) and not is_number_word(c) for c in cores):
        return True
    for n in (1, 2, 3):
        for i in range(len(cores) - n * _LOOP_WORDS + 1):
            piece = cores[i : i + n]
            if all(is_number_word(c) for c in piece):
                continue
            if all(cores[i + k * n : i + (k + 1) * n] == piece for k in range(1, _LOOP_WORDS)):
                return True
    return False


def _widened(aligned: Sequence[Word], shares: Sequence[Word]) -> list[Word]:
    """Each aligned word over its own span and its share's (both lists hold the tokens that say something, in
    order)."""
    if len(aligned) != len(shares):
        return list(shares)
    return [
        Word(a.text, min(a.start, s.start), max(a.end, s.end), a.probability)
        for a, s in zip(aligned, shares, strict=True)
    ]


def _spread(
    tokens: Sequence[str], start: float, end: float, probabilities: Sequence[float | None] | None = None
) -> list[Word]:
    """Words of an utterance that could not be aligned: each gets its share of the time by spoken length,
    widened to also cover its neighbours' shares, since the true position is unknown. Each keeps its
    confidence from ``probabilities`` where given."""
    from anonpsy.audio.align import spoken_words

    weights = [sum(len(w) for w in spoken_words(t)) for t in tokens]
    whole = sum(weights) or 1
    bounds = [start]
    for k in weights:
        bounds.append(bounds[-1] + (end - start) * k / whole)
    out = []
    for i, (tok, k) in enumerate(zip(tokens, weights, strict=True)):
        if k:
            p = probabilities[i] if probabilities is not None else None
            out.append(Word(tok, round(bounds[max(0, i - 1)], 3), round(bounds[min(len(tokens), i + 2)], 3), p))
    return out


class _ServerWord(BaseModel):
    model_config = ConfigDict(extra="allow")

    word: str
    start: float = Field(ge=0)
    end: float = Field(ge=0)
    probability: float | None = None


class _ServerSegment(BaseModel):
    model_config = ConfigDict(extra="allow")

    words: list[_ServerWord] | None = None


class _ServerReply(BaseModel):
    model_config = ConfigDict(extra="allow")

    text: str | None = None
    words: list[_ServerWord] | None = None
    segments: list[_ServerSegment] | None = None


def words_from_verbose_json(payload: dict[str, Any], duration: float, *, tolerance: float = 0.5) -> list[Word]:
    """Timed words of a ``verbose_json`` transcription; raises ``A103`` when they are missing or misplaced."""
    try:
        reply = _ServerReply.model_validate(payload)
    except ValidationError as exc:
        where = sorted({"/".join(str(p) for p in e["loc"] if not isinstance(p, int)) or "/" for e in exc.errors()})
        raise AnonpsyError(
            A103_TRANSCRIPTION,
            f"transcription reply does not follow verbose_json (problem at {', '.join(where[:4])})",
        ) from None
    raw = reply.words
    if raw is None and reply.segments is not None:
        raw = [w for seg in reply.segments for w in (seg.words or [])]
    if raw is None:
        if reply.text is not None and not reply.text.strip():
            return []
        raise AnonpsyError(
            A103_TRANSCRIPTION,
            "transcription reply has no word timestamps; start the server with word timestamps enabled "
            "(whisper.cpp: word-level timestamps; faster-whisper: timestamp_granularities word)",
        )
    words: list[Word] = []
    for w in raw:
        if not (math.isfinite(w.start) and math.isfinite(w.end)) or w.end < w.start:
            raise AnonpsyError(A103_TRANSCRIPTION, "transcription reply has a word whose end precedes its start")
        if w.end > duration + tolerance:
            raise AnonpsyError(
                A103_TRANSCRIPTION,
                f"transcription reply places a word at {w.end:.2f} s, after the end of the "
                f"{duration:.2f} s recording",
            )
        text = w.word.strip()
        if text:
            words.append(Word(text, min(w.start, duration), min(w.end, duration), w.probability))
    words.sort(key=lambda x: (x.start, x.end))
    return words


class ServerRecognizer:
    """An OpenAI-compatible transcription server (through :class:`anonpsy.llm.client.TranscriptionClient`)."""

    name = "server"

    def __init__(self, client: Any) -> None:
        self.client = client

    def transcribe(self, signal: npt.NDArray[np.float32], regions: Sequence[Region]) -> list[Word]:
        """Send the analysis signal as one 16 kHz WAV file and read the word timestamps back."""
        payload = self.client.transcribe(wav_bytes(signal), filename="audio.wav")
        return words_from_verbose_json(payload, len(signal) / ANALYSIS_RATE)


def _package_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


__all__ = [
    "CombinedRecognizer",
    "MoonshineRecognizer",
    "PocketSphinxRecognizer",
    "Recognizer",
    "ServerRecognizer",
    "Word",
    "is_filler",
    "utterances",
    "words_from_verbose_json",
]
