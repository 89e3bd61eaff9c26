"""Reading, checking, muting and writing audio: sample-accurate, same format, nothing written on bad input."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import example, given

np = pytest.importorskip("numpy", reason="needs the audio extra: pip install 'anonpsy[audio]'")
sf = pytest.importorskip("soundfile", reason="needs the audio extra: pip install 'anonpsy[audio]'")

from tests.strategies import mute_plans  # noqa: E402

from anonpsy.audio.mute import apply, make_interval, merged, to_samples  # noqa: E402
from anonpsy.audio.signal import Audio, decode_audio, encode_audio, require  # noqa: E402
from anonpsy.errors import AnonpsyError  # noqa: E402


def _wav(samples: np.ndarray, rate: int, subtype: str = "PCM_16", fmt: str = "WAV") -> bytes:
    buf = io.BytesIO()
    sf.write(buf, samples, rate, subtype=subtype, format=fmt)
    return buf.getvalue()


@given(mute_plans())
@example((8000, 1, 1, [(0.0, 5.0)]))
def test_muting_keeps_length_and_every_unmuted_sample(plan: tuple[int, int, int, list[tuple[float, float]]]) -> None:
    rate, frames, channels, spans = plan
    rng = np.random.default_rng(frames)
    samples = rng.integers(-30000, 30000, size=(frames, channels), dtype=np.int16)
    audio = Audio(samples, rate, "WAV", "PCM_16", "FILE")
    ivs = [make_interval(a, b, margin=0.2, rate=rate, frames=frames, reason="phi", type="PERSON",
                         detector="rules:x") for a, b in spans]
    ranges = merged(ivs)
    out = apply(audio, ranges)
    assert out.samples.shape == samples.shape
    mask = np.zeros(frames, dtype=bool)
    for a, b in ranges:
        mask[a:b] = True
    assert np.all(out.samples[mask] == 0)
    assert np.array_equal(out.samples[~mask], samples[~mask])
    for iv in ivs:
        assert 0 <= iv.start_sample <= iv.end_sample <= frames


def test_interval_is_sample_accurate_with_margin() -> None:
    iv = make_interval(1.0, 1.5, margin=0.2, rate=22050, frames=22050 * 3, reason="phi", type="PERSON",
                       detector="rules:x")
    assert (iv.start_sample, iv.end_sample) == (int(0.8 * 22050), int(np.ceil(1.7 * 22050)))
    assert to_samples(2.9, 9.0, 1000, 3000) == (2900, 3000)


@pytest.mark.parametrize(
    ("subtype", "fmt", "channels", "rate"),
    [("PCM_16", "WAV", 1, 16000), ("PCM_24", "WAV", 2, 48000), ("FLOAT", "WAV", 1, 44100),
     ("PCM_16", "FLAC", 2, 22050), ("PCM_U8", "WAV", 1, 8000), ("ULAW", "WAV", 1, 8000)],
)
def test_round_trip_keeps_format_and_unmuted_bits(subtype: str, fmt: str, channels: int, rate: int) -> None:
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((rate // 2, channels)) * 0.2).clip(-1, 1)
    data = _wav(x, rate, subtype, fmt)
    audio = decode_audio(data, "in")
    muted = apply(audio, [(100, 900)])
    back = decode_audio(encode_audio(muted), "out")
    assert (back.rate, back.channels, back.frames, back.format, back.subtype) == (
        rate, channels, audio.frames, audio.format, audio.subtype)
    assert np.array_equal(back.samples[900:], audio.samples[900:])
    assert np.all(back.samples[100:900] == 0)


def test_bad_input_codes() -> None:
    with pytest.raises(AnonpsyError) as e:
        decode_audio(b"", "x.wav")
    assert e.value.code == "E101"
    with pytest.raises(AnonpsyError) as e:
        decode_audio(b"this is a note, not audio " * 20, "x.wav")
    assert e.value.code == "A100"
    with pytest.raises(AnonpsyError) as e:
        decode_audio(_wav(np.zeros((100, 1)), 7000), "x.wav")
    assert e.value.code == "A101"
    with pytest.raises(AnonpsyError) as e:
        decode_audio(_wav(np.zeros((0, 1)), 16000), "x.wav")
    assert e.value.code == "E101"


def test_missing_dependency_names_the_extra() -> None:
    with pytest.raises(AnonpsyError) as e:
        require("anonpsy_no_such_audio_module")
    assert e.value.code == "A102"
    assert "anonpsy[audio]" in e.value.one_line()


def test_report_schema_is_valid_json_schema(root: Path) -> None:
    import jsonschema

    schema = json.loads((root / "schemas" / "audio" / "report.v1.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
