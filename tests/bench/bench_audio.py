"""Audio de-identification on synthetic espeak-ng dictations: muted share, kept share, real-time factor.

    python tests/bench/bench_audio.py --dictations 60          # the corpus figures, embedded default recogniser
    python tests/bench/bench_audio.py --asr pocketsphinx       # ... PocketSphinx alone
    python tests/bench/bench_audio.py --asr server --seed 3    # words as a transcription server reports them
    python tests/bench/bench_audio.py --asr server --skip PERSON,LOCATION   # ... leaving names out (gaps)
    python tests/bench/bench_audio.py --asr server --presidio ../shared/data/presidio-synth/synth_dataset_v2.json
    python tests/bench/bench_audio.py --rtf --repeat 3          # real-time factor of a 60 s dictation
    python tests/bench/bench_audio.py --rtf --asr pocketsphinx  # ... with PocketSphinx alone

The corpus is written by us (anonpsy.testing.dictation): invented names, numbers and places spoken by
espeak-ng's English voices at varying speeds. The real-time factor is processing time over audio duration
on one core (OMP/BLAS threads pinned to 1); on a shared machine repeat it and read the spread.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _run_corpus(n: int, seed: int, margin_ms: int, asr: str, skip: frozenset[str], presidio: str | None) -> int:
    from anonpsy.audio.pipeline import Settings, deidentify
    from anonpsy.audio.signal import decode_audio
    from anonpsy.testing.dictation import (
        Measure,
        corpus,
        measure,
        presidio_corpus,
        through_transcription_server,
    )

    rec = None if asr == "server" else _recognizer(asr)
    print(f"recogniser: {getattr(rec, 'name', asr)}" + (f" (words of types {sorted(skip)} left out)" if skip else ""))
    total = Measure()
    per_voice: dict[str, Measure] = {}
    audio_s = proc_s = 0.0
    types: Counter[str] = Counter()
    started = time.perf_counter()
    dictations = presidio_corpus(presidio, n, seed=seed) if presidio else corpus(n, seed=seed)
    print("text: " + (f"presidio-research synthetic sentences ({presidio})" if presidio else "anonpsy templates"))
    for d in dictations:
        audio = decode_audio(d.wav_bytes(), "dictation")
        t = time.process_time()
        settings = Settings(margin_s=margin_ms / 1000)
        if rec is None:
            result = through_transcription_server(d, skip=skip, settings=settings)
        else:
            result = deidentify(audio, rec, settings)
        proc_s += time.process_time() - t
        audio_s += d.duration
        m = measure(d, result.audio.samples[:, 0])
        total.add(m)
        per_voice.setdefault(d.voice, Measure()).add(m)
        types.update(s.phi for s, _, _ in d.segments if s.phi and not s.ignore)
    print(f"dictations: {n}  audio: {audio_s:.1f} s  identifier spans: {total.phi_spans}  ({dict(types)})")
    print(f"identifier spans fully muted: {total.phi_muted}/{total.phi_spans} = {total.muted_share:.1%}")
    print(f"non-identifier speech kept: {total.kept_s:.1f}/{total.speech_s:.1f} s = {total.kept_share:.1%}")
    print(f"output length equal to input: {total.length_equal}")
    proc_s += getattr(rec, "worker_cpu_s", 0.0)  # Moonshine runs in a worker process
    print(f"cpu time / audio time: {proc_s / audio_s:.3f}")
    print(f"wall time: {time.perf_counter() - started:.0f} s (shared machine: read with the load average "
          f"{os.getloadavg()[0]:.2f})")
    missed = Counter(t for _, t in total.missed)
    print(f"missed by type: {dict(missed)}")
    for kind, count in sorted(types.items()):
        muted = count - missed[kind]
        print(f"  {kind:24s} muted {muted:3d}/{count:3d} = {muted / count:6.1%}")
    if rec is not None and hasattr(rec, "unaligned"):
        print(f"utterances not aligned: {rec.unaligned}; stretches transcribed a second time: {rec.second_pass}")
    for voice, m in sorted(per_voice.items()):
        print(f"  {voice:16s} muted {m.phi_muted:3d}/{m.phi_spans:3d} = {m.muted_share:6.1%}  kept {m.kept_share:6.1%}")
    return 0


def _recognizer(asr: str) -> object:
    from anonpsy.audio.asr import MoonshineRecognizer, PocketSphinxRecognizer
    from anonpsy.audio.cli import resolve_asr

    return MoonshineRecognizer() if resolve_asr(asr) == "moonshine" else PocketSphinxRecognizer()


def _rtf(repeat: int, seed: int, asr: str) -> int:
    import numpy as np

    from anonpsy.audio.pipeline import deidentify
    from anonpsy.audio.signal import decode_audio
    from anonpsy.testing.dictation import RATE, Dictation, corpus

    # Concatenate dictations up to 60 s.
    parts = []
    length = 0
    for d in corpus(12, seed=seed, sentences=6):
        parts.append(d.samples)
        length += len(d.samples)
        if length >= 60 * RATE:
            break
    samples = np.concatenate(parts)[: 60 * RATE]
    d = Dictation("mixed", 0, samples)
    audio = decode_audio(d.wav_bytes(), "dictation")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    rec: Any = _recognizer(asr)
    print(f"recogniser: {rec.name}")
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    walls, cpus = [], []
    for _ in range(repeat):
        w, c, cw = time.perf_counter(), time.process_time(), getattr(rec, "worker_cpu_s", 0.0)
        deidentify(audio, rec)
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c + getattr(rec, "worker_cpu_s", 0.0) - cw)
    dur = audio.duration
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"audio: {dur:.1f} s, one core, {repeat} runs, 1-min load average {load_before:.2f} before, "
          f"{load:.2f} after (on {os.cpu_count()} cores)")
    print("wall RTF: " + ", ".join(f"{w / dur:.3f}" for w in walls) + f"  (min {min(walls) / dur:.3f})")
    print("cpu  RTF: " + ", ".join(f"{c / dur:.3f}" for c in cpus) + f"  (min {min(cpus) / dur:.3f})")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dictations", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--margin-ms", type=int, default=200)
    ap.add_argument("--asr", choices=["auto", "moonshine", "pocketsphinx", "server"], default="auto",
                    help="auto: the command's default (Moonshine where installed, else PocketSphinx); server: the "
                         "scripted transcription server answering with the script's timed words")
    ap.add_argument("--skip", default="", help="with --asr server: identifier types left out of the transcript")
    ap.add_argument("--presidio", metavar="JSON", help="speak presidio-research's synth_dataset_v2.json instead")
    ap.add_argument("--rtf", action="store_true", help="measure the real-time factor of a 60 s dictation")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    if args.rtf:
        return _rtf(args.repeat, args.seed, args.asr)
    skip = frozenset(t for t in args.skip.split(",") if t)
    return _run_corpus(args.dictations, args.seed, args.margin_ms, args.asr, skip, args.presidio)


if __name__ == "__main__":
    sys.exit(main())
