"""`anonpsy audio-deid`: bad input is one line with exit 2 and nothing written; formats are kept."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from anonpsy.cli import main
from anonpsy.errors import AnonpsyError

np = pytest.importorskip("numpy", reason="needs the audio extra: pip install 'anonpsy[audio]'")
sf = pytest.importorskip("soundfile", reason="needs the audio extra: pip install 'anonpsy[audio]'")
pytest.importorskip("pocketsphinx", reason="needs the audio extra: pip install 'anonpsy[audio]'")


def _wav(samples: np.ndarray, rate: int, subtype: str = "PCM_16", fmt: str = "WAV") -> bytes:
    buf = io.BytesIO()
    sf.write(buf, samples, rate, subtype=subtype, format=fmt)
    return buf.getvalue()


def _tone(rate: int, seconds: float = 1.0, channels: int = 1) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    x = 0.3 * np.sin(2 * np.pi * 220 * t) * (np.sin(2 * np.pi * 3 * t) > 0)
    return np.repeat(x[:, None], channels, axis=1)


BAD = {
    "missing": (None, "E100"),
    "empty": (b"", "E101"),
    "text": (b"Patient Maria Lopez, DOB 03/14/1982\n" * 10, "A100"),
    "header_only": (_wav(np.zeros((0, 1)), 16000), "E101"),
    "rate_7000": (_wav(np.zeros((7000, 1)), 7000), "A101"),
    "rate_96000": (_wav(np.zeros((9600, 1)), 96000), "A101"),
    "truncated": (_wav(_tone(16000), 16000)[:30], "A100"),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path: Path, kind: str) -> None:
    content, code = BAD[kind]
    src = tmp_path / "in.wav"
    if content is not None:
        src.write_bytes(content)
    out, rep = tmp_path / "out.wav", tmp_path / "r.json"
    result = CliRunner().invoke(main, ["audio-deid", str(src), "-o", str(out), "--report", str(rep)])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(code), result.output
    assert "Maria" not in result.output and "Traceback" not in result.output
    assert not out.exists() and not rep.exists()
    assert [p.name for p in tmp_path.iterdir()] == (["in.wav"] if content is not None else [])


@pytest.mark.parametrize(
    ("args", "code"),
    [(["--backend", "llm"], "E109"), (["-o", "OUT.flac"], "E109"), (["--margin-ms", "-5"], "Usage")],
)
def test_bad_options(tmp_path: Path, args: list[str], code: str) -> None:
    src = tmp_path / "in.wav"
    src.write_bytes(_wav(_tone(16000), 16000))
    argv = ["audio-deid", str(src)]
    if "-o" not in args:
        argv += ["-o", str(tmp_path / "out.wav")]
    argv += [a.replace("OUT", str(tmp_path / "out")) for a in args]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2
    assert code in result.output
    assert not (tmp_path / "out.wav").exists() and not (tmp_path / "out.flac").exists()


@pytest.mark.parametrize(
    ("rate", "channels", "subtype", "fmt", "suffix"),
    [(8000, 1, "PCM_16", "WAV", "wav"), (44100, 2, "PCM_24", "WAV", "wav"), (48000, 1, "FLOAT", "WAV", "wav"),
     (22050, 2, "PCM_16", "FLAC", "flac")],
)
def test_output_keeps_format_rate_channels_and_length(
    tmp_path: Path, rate: int, channels: int, subtype: str, fmt: str, suffix: str
) -> None:
    src, out, rep = tmp_path / f"in.{suffix}", tmp_path / f"out.{suffix}", tmp_path / "r.json"
    src.write_bytes(_wav(_tone(rate, 1.5, channels), rate, subtype, fmt))
    result = CliRunner().invoke(main, ["audio-deid", str(src), "-o", str(out), "--report", str(rep),
                                       "--mute-all-gaps", "--margin-ms", "0", "--asr", "pocketsphinx"])
    assert result.exit_code == 0, result.output
    a, b = sf.info(str(src)), sf.info(str(out))
    assert (a.frames, a.samplerate, a.channels, a.format, a.subtype) == (
        b.frames, b.samplerate, b.channels, b.format, b.subtype)
    report = json.loads(rep.read_text())
    assert report["input"]["frames"] == report["output"]["frames"] == a.frames
    assert str(src) not in rep.read_text() and "in." not in rep.read_text()


def test_a_recogniser_killed_by_a_signal_is_named_in_one_line() -> None:
    """An embedded recogniser whose build needs an instruction set this CPU lacks dies by SIGILL: the error says
    so and names the recognisers that still work."""
    import signal
    import subprocess
    import sys

    from anonpsy.audio.asr import _stopped

    proc = subprocess.Popen([sys.executable, "-c", f"import os; os.kill(os.getpid(), {int(signal.SIGILL)})"])
    line = _stopped(proc)
    assert "SIGILL" in line and "--asr pocketsphinx" in line and "\n" not in line


def test_auto_refuses_pocketsphinx_alone_when_moonshine_cannot_run(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """PocketSphinx alone leaves most identifiers audible: ``auto`` never falls back to it silently; it stops
    with one line naming the choices, and nothing is written."""
    pytest.importorskip("moonshine_cpp", reason="needs moonshine-cpp (audio extra, Linux x86-64)")
    from anonpsy.audio import asr
    from anonpsy.audio.cli import resolve_asr

    monkeypatch.setattr(asr, "moonshine_runs", lambda: False)
    monkeypatch.setattr(asr, "onnxruntime_available", lambda: False)
    with pytest.raises(AnonpsyError) as exc:
        resolve_asr("auto")
    assert exc.value.code == "E109" and "--asr pocketsphinx" in str(exc.value) and "--asr server" in str(exc.value)
    assert resolve_asr("pocketsphinx") == "pocketsphinx"
    src, out, rep = tmp_path / "in.wav", tmp_path / "out.wav", tmp_path / "r.json"
    src.write_bytes(_wav(_tone(16000), 16000))
    result = CliRunner().invoke(main, ["audio-deid", str(src), "-o", str(out), "--report", str(rep)])
    assert result.exit_code == 2
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("E109 --asr:") and "AVX-512" in lines[0], result.output
    assert not out.exists() and not rep.exists()
    monkeypatch.setattr(asr, "moonshine_runs", lambda: True)
    assert resolve_asr("auto") == "moonshine" and asr.moonshine_runtime() == "cpp"
    assert resolve_asr("moonshine") == "moonshine"
    monkeypatch.setattr(asr, "moonshine_runs", lambda: False)
    monkeypatch.setattr(asr, "onnxruntime_available", lambda: True)
    assert resolve_asr("auto") == "moonshine" and asr.moonshine_runtime() == "onnxruntime"


def test_auto_refuses_when_moonshine_is_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from anonpsy.audio.cli import resolve_asr

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "moonshine_cpp" else real(name, *a))
    with pytest.raises(AnonpsyError) as exc:
        resolve_asr("auto")
    assert "not installed" in str(exc.value) and "--asr pocketsphinx" in str(exc.value)
