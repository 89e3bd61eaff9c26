"""`anonpsy audio-deid`: mute identifiers in a recording."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import click

from anonpsy import errors
from anonpsy.cli import main
from anonpsy.cliutil import handle_errors
from anonpsy.errors import AnonpsyError

AUDIO_MODULES = ("numpy", "soundfile", "soxr", "webrtcvad")


def _check_installed(asr: str) -> None:
    from anonpsy.audio.signal import require

    extra = {"pocketsphinx": ("pocketsphinx",), "moonshine": ("pocketsphinx", "moonshine_cpp")}.get(asr, ())
    for module in AUDIO_MODULES + extra:
        require(module)


#: Why ``auto`` never falls back to PocketSphinx alone: on the synthetic dictations of ``tests/bench/bench_audio.py``
#: it fully mutes under one identifier span in ten (Moonshine with PocketSphinx alignment: about 85 %).
_POCKETSPHINX_ALONE = ("PocketSphinx alone leaves about 9 in 10 identifiers audible on the dictation benchmark: "
                       "pass --asr pocketsphinx to accept that, or --asr server for a transcription server")


def resolve_asr(asr: str) -> str:
    """The recogniser ``auto`` stands for: Moonshine where its extra is installed and one of its runtimes runs here
    (the moonshine-cpp library on CPUs with AVX-512, else the onnxruntime package).

    Elsewhere ``auto`` stops with a one-line error rather than falling back to PocketSphinx alone, which would
    leave most identifiers audible in an output that looks de-identified; ``--asr pocketsphinx`` asks for it
    knowingly."""
    if asr != "auto":
        return asr
    if importlib.util.find_spec("moonshine_cpp") is None:
        raise AnonpsyError(errors.E109_BAD_OPTION, "the default recogniser Moonshine (moonshine-cpp, audio extra on "
                           f"Linux x86-64) is not installed; {_POCKETSPHINX_ALONE}", "--asr")
    from anonpsy.audio.asr import moonshine_runtime

    if moonshine_runtime() is not None:
        return "moonshine"
    raise AnonpsyError(errors.E109_BAD_OPTION, "the default recogniser Moonshine cannot run here (onnxruntime, audio "
                       f"extra, is not installed and the moonshine-cpp library needs AVX-512); {_POCKETSPHINX_ALONE}",
                       "--asr")


@main.command("audio-deid")
@click.argument("input_path", metavar="IN.wav", type=click.Path(path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path),
              help="Write the muted recording here (same format, rate, channels and length as IN).")
@click.option("--report", "report_path", type=click.Path(path_type=Path),
              help="Write the report (JSON): every muted interval with its reason; never the words.")
@click.option("--margin-ms", type=click.IntRange(0, 5000), default=200, show_default=True,
              help="Silence added on both sides of every muted interval.")
@click.option("--end-extra-ms", type=click.IntRange(0, 1000), default=50, show_default=True,
              help="Further silence after recognised identifier words (a misheard, shorter name ends early).")
@click.option("--name-end-extra-ms", type=click.IntRange(0, 1000), default=50, show_default=True,
              help="Further silence again after recognised name words (names are the likeliest to be misheard "
                   "as shorter common words).")
@click.option("--backend", type=click.Choice(["rules", "llm"]), default="rules", show_default=True,
              help="rules: analyzer, cue rules and spoken numbers; llm: also the chunked model detector and "
                   "the gap prompt (needs --llm).")
@click.option("--llm", "llm_profile", metavar="PROFILE",
              help="With --backend llm: profile name, profile file or configuration file of the model server.")
@click.option("--on-llm-failure", type=click.Choice(["error", "mute"]), default="error", show_default=True,
              help="What the model could not check: fail the recording, or mute it.")
@click.option("--chunk-words", type=int, default=150, show_default=True, help="Words per LLM chunk.")
@click.option("--overlap", type=int, default=30, show_default=True, help="Words shared by consecutive chunks.")
@click.option("--passes", type=int, default=2, show_default=True, help="LLM passes per chunk.")
@click.option("--asr", type=click.Choice(["auto", "pocketsphinx", "moonshine", "server"]), default="auto",
              show_default=True,
              help="auto: moonshine, and a one-line error where it is not installed (Linux x86-64) or cannot "
                   "run; moonshine: embedded Moonshine base (the moonshine-cpp library on AVX-512 CPUs, else "
                   "onnxruntime) with PocketSphinx word timing; pocketsphinx: embedded, light, but it "
                   "misses most identifiers; server: an OpenAI-compatible "
                   "/v1/audio/transcriptions server (whisper.cpp, faster-whisper) with word timestamps.")
@click.option("--asr-url", metavar="URL", default="http://127.0.0.1:8178/v1", show_default=True,
              help="Base URL of the transcription server (with --asr server).")
@click.option("--asr-model", default="whisper-1", show_default=True, help="Model name sent to the server.")
@click.option("--allow-remote", is_flag=True,
              help="Allow a transcription server that is not on this machine (the recording is sent to it).")
@click.option("--vad-aggressiveness", type=click.IntRange(0, 3), default=2, show_default=True,
              help="WebRTC VAD mode: 0 keeps the most speech as voiced, 3 the least.")
@click.option("--min-gap-ms", type=click.IntRange(20, 5000), default=150, show_default=True,
              help="Shortest voiced stretch with no word that counts as a gap.")
@click.option("--mute-all-gaps", is_flag=True,
              help="Mute every gap, not only those whose context suggests an identifier.")
@handle_errors
def audio_deid(
    input_path: Path,
    output: Path,
    report_path: Path | None,
    margin_ms: int,
    end_extra_ms: int,
    name_end_extra_ms: int,
    backend: str,
    llm_profile: str | None,
    on_llm_failure: str,
    chunk_words: int,
    overlap: int,
    passes: int,
    asr: str,
    asr_url: str,
    asr_model: str,
    allow_remote: bool,
    vad_aggressiveness: int,
    min_gap_ms: int,
    mute_all_gaps: bool,
) -> None:
    """Mute identifiers in a clinical recording (dictation, session) and write a report.

    Words are recognised with timestamps (embedded: Moonshine placed in time by PocketSphinx alignment, or
    PocketSphinx alone; or a local transcription server), spoken
    forms are written out ("two five three ..." -> 253-...), identifiers are found with the masking rules (and a
    model with --backend llm), voiced stretches no word accounts for are judged from the words around them
    ("my name is ...", "call me at ..."), and every identifier is silenced with a margin on exact samples.
    The output keeps the input's format, sample rate, channels and length; nothing is written on bad input.
    Needs the audio extra: pip install 'anonpsy[audio]'.

    \b
    Example:
      anonpsy audio-deid dictation.wav -o dictation.deid.wav --report dictation.report.json
    """
    from anonpsy.yamlio import write_atomic

    if backend == "llm" and not llm_profile:
        raise AnonpsyError(errors.E109_BAD_OPTION, "--backend llm needs --llm PROFILE (a model server profile)",
                           "--llm")
    if output.resolve() == input_path.resolve():
        raise AnonpsyError(errors.E109_BAD_OPTION, "the output must not overwrite the input", "-o")
    _check_installed(asr)

    from anonpsy.audio.asr import MoonshineRecognizer, PocketSphinxRecognizer, Recognizer, ServerRecognizer
    from anonpsy.audio.pipeline import Settings, deidentify
    from anonpsy.audio.signal import encode_audio, output_format_problem, read_audio
    from anonpsy.audio.vad import VadSettings

    audio = read_audio(input_path)
    problem = output_format_problem(audio, output)
    if problem:
        raise AnonpsyError(errors.E109_BAD_OPTION, problem, "-o")
    asr = resolve_asr(asr)  # after the input is known good: trying whether Moonshine runs takes a second
    _check_installed(asr)
    settings = Settings(
        margin_s=margin_ms / 1000.0,
        end_extra_s=end_extra_ms / 1000.0,
        name_end_extra_s=name_end_extra_ms / 1000.0,
        backend="llm" if backend == "llm" else "rules",
        vad=VadSettings(aggressiveness=vad_aggressiveness),
        min_gap_s=min_gap_ms / 1000.0,
        mute_all_gaps=mute_all_gaps,
        on_llm_failure="mute" if on_llm_failure == "mute" else "error",
    )
    closers: list[Any] = []
    try:
        recognizer: Recognizer
        if asr == "server":
            from anonpsy.llm.client import TranscriptionClient

            ts = TranscriptionClient(asr_url, model=asr_model, allow_remote=allow_remote)
            closers.append(ts)
            recognizer = ServerRecognizer(ts)
        elif asr == "moonshine":
            ms = MoonshineRecognizer()
            closers.append(ms)
            recognizer = ms
        else:
            if importlib.util.find_spec("moonshine_cpp") is None:
                click.echo(
                    "note: PocketSphinx alone recognises too few words to find most identifiers; the embedded "
                    "Moonshine recogniser (pip install moonshine-cpp, Linux x86-64) or --asr server finds them",
                    err=True,
                )
            recognizer = PocketSphinxRecognizer()
        client = detector = None
        if backend == "llm" and llm_profile:
            from anonpsy.phi.cli import _build_llm

            client, detector = _build_llm(llm_profile, chunk_words, overlap, passes)
            closers.append(client)
        result = deidentify(audio, recognizer, settings, llm_detector=detector, llm_client=client)
    finally:
        for c in closers:
            c.close()
    data = encode_audio(result.audio)
    report_text = json.dumps(result.report, indent=2) + "\n"
    write_atomic(output, data)
    if report_path is not None:
        write_atomic(report_path, report_text)
    counts = result.report["counts"]
    click.echo(
        f"{len(result.report['intervals'])} intervals muted ({result.report['muted_s']:.2f} s of "
        f"{audio.duration:.2f} s); {counts['words']} words, {counts['gaps']} gaps ({counts['gaps_muted']} muted)",
        err=True,
    )
