"""Moonshine on the onnxruntime package: the tokenizer file, greedy decoding, the recogniser's failures.

The model tests speak short dictations with espeak-ng and need the audio extra (moonshine-cpp for the model files,
onnxruntime to run them); they skip cleanly on a dev-only install.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

np = pytest.importorskip("numpy", reason="needs the audio extra: pip install 'anonpsy[audio]'")

from anonpsy.audio.moonshine_onnx import (  # noqa: E402
    EOS,
    detokenize,
    max_tokens,
    read_vocabulary,
    scored_words,
    token_probability,
)
from anonpsy.errors import AnonpsyError  # noqa: E402


def _encode(pieces: list[bytes]) -> bytes:
    out = bytearray()
    for p in pieces:
        n = len(p)
        out += bytes([n]) if n < 128 else bytes([0x80 | (n & 0x7F), n >> 7])
        out += p
    return bytes(out)


@given(st.lists(st.binary(max_size=300), max_size=40))
def test_vocabulary_file_reads_back_every_piece(pieces: list[bytes]) -> None:
    assert read_vocabulary(_encode(pieces)) == pieces


@given(st.lists(st.binary(min_size=1, max_size=300), min_size=1, max_size=10), st.data())
def test_cut_vocabulary_file_is_refused_not_misread(pieces: list[bytes], data: Any) -> None:
    """A file cut anywhere inside its last token is an error, never a shorter vocabulary read as whole."""
    whole = _encode(pieces)
    last = len(_encode(pieces[:-1]))
    cut = data.draw(st.integers(last + 1, len(whole) - 1)) if len(whole) - last > 1 else None
    if cut is None:
        return
    with pytest.raises(ValueError):
        read_vocabulary(whole[:cut])


@given(st.lists(st.sampled_from(["\u2581the", "\u2581pat", "ient", ",", "\u2581555", "-", "0127"]), max_size=12))
def test_detokenized_text_is_the_pieces_with_spaces(pieces: list[str]) -> None:
    vocab = [b"<unk>", b"<s>", b"</s>"] + [p.encode() for p in sorted(set(pieces))]
    ids = [vocab.index(p.encode()) for p in pieces]
    assert detokenize(vocab, [1, *ids, EOS, 0]) == "".join(pieces).replace("\u2581", " ").strip()


@given(st.integers(0, 16000 * 60))
def test_decoder_limit_grows_with_the_audio(samples: int) -> None:
    assert 1 <= max_tokens(samples) <= max(1, samples * 6 // 16000) + 1
    assert max_tokens(samples + 16000) >= max_tokens(samples) + 5


@pytest.fixture(scope="module")
def model() -> Any:
    pytest.importorskip("onnxruntime", reason="needs onnxruntime (audio extra)")
    from anonpsy.audio.moonshine_onnx import MoonshineOnnx, model_dir

    if model_dir() is None:
        pytest.skip("needs the Moonshine model files (moonshine-cpp, audio extra on Linux x86-64)")
    return MoonshineOnnx()


def _speak(text: str, voice: str = "en-us") -> Any:
    """``text`` spoken by espeak-ng, at 16 kHz."""
    from anonpsy.audio.signal import resample
    from anonpsy.testing.dictation import RATE, Segment, espeak_available, synthesize

    if not espeak_available():
        pytest.skip("needs espeak-ng (apt-get install espeak-ng)")
    d = synthesize([[Segment(text)]], voice, 150, 50, seed=3)
    return resample(d.samples.astype(np.float32) / 32768.0, RATE)


def test_short_dictation_is_transcribed(model: Any) -> None:
    x = _speak("She reports low mood and poor sleep.")
    words = [w.strip(".,").lower() for w in model.transcribe(x).split()]
    assert {"reports", "low", "mood", "poor", "sleep"} <= set(words), words


@settings(deadline=None, max_examples=3)
@given(st.sampled_from(["Her phone number is five five five, zero one two seven.", "He lives in Boston."]))
def test_decoding_is_deterministic(model: Any, text: str) -> None:
    x = _speak(text)
    assert model.generate(x) == model.generate(x.copy())


@settings(deadline=None, max_examples=4)
@given(st.integers(1600, 16000), st.integers(0, 2**31 - 1))
def test_decoder_never_writes_past_its_limit(model: Any, n: int, seed: int) -> None:
    """Noise has no end the model is sure of: the token limit still stops it."""
    x = (np.random.default_rng(seed).standard_normal(n) * 0.1).astype(np.float32)
    ids = model.generate(x)
    assert len(ids) <= max_tokens(n) and EOS not in ids


def test_runtime_failure_is_one_line_without_its_message(monkeypatch: pytest.MonkeyPatch) -> None:
    """An error inside onnxruntime is reported by kind in one line; its message (which may quote input) is not."""
    pytest.importorskip("pocketsphinx", reason="needs the audio extra: pip install 'anonpsy[audio]'")
    pytest.importorskip("moonshine_cpp", reason="needs moonshine-cpp (audio extra, Linux x86-64)")
    from anonpsy.audio import asr, moonshine_onnx

    class Broken:
        def __init__(self, *a: Any, **k: Any) -> None:
            pass

        def transcribe(self, x: Any) -> str:
            raise RuntimeError("secret Smith\nsecond line")

    monkeypatch.setattr(moonshine_onnx, "MoonshineOnnx", Broken)
    rec = asr.MoonshineRecognizer(runtime="onnxruntime")
    with pytest.raises(AnonpsyError) as exc:
        rec.text(np.zeros(8000, dtype=np.float32))
    line = str(exc.value)
    assert exc.value.code == "A103" and "\n" not in line and "Smith" not in line and "RuntimeError" in line


def test_no_runtime_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pocketsphinx", reason="needs the audio extra: pip install 'anonpsy[audio]'")
    pytest.importorskip("moonshine_cpp", reason="needs moonshine-cpp (audio extra, Linux x86-64)")
    from anonpsy.audio import asr

    monkeypatch.setattr(asr, "moonshine_runs", lambda: False)
    monkeypatch.setattr(asr, "onnxruntime_available", lambda: False)
    with pytest.raises(AnonpsyError) as exc:
        asr.MoonshineRecognizer()
    assert exc.value.code == "A103" and "\n" not in str(exc.value) and "--asr pocketsphinx" in str(exc.value)


_SP = "\u2581".encode()


def test_scored_words_take_the_least_likely_letter_piece() -> None:
    """A word's confidence is its least likely piece that writes letters; a comma's doubt is not the word's."""
    vocab = [b"<unk>", b"<s>", b"</s>", _SP + b"Nqo", b"bi", b"zitha", b",", _SP + b"called", _SP + b"the"]
    scored = [(3, 0.2), (4, 0.9), (5, 0.95), (6, 0.1), (7, 0.99), (8, 0.97)]
    assert scored_words(vocab, scored) == [("Nqobizitha,", 0.2), ("called", 0.99), ("the", 0.97)]


@given(st.lists(st.tuples(st.integers(0, 12), st.floats(0.0, 1.0)), max_size=30))
def test_scored_words_are_the_detokenized_words(scored: list[tuple[int, float]]) -> None:
    """Whatever the ids, the scored words are the words :func:`detokenize` writes, each scored at most 1."""
    vocab = [b"<unk>", b"<s>", b"</s>", _SP + b"a", b"b", b".", _SP, b"c" + _SP + b"d", _SP + b"e,", b" ", b"f", b"",
             _SP + b"9"]
    words = scored_words(vocab, scored)
    assert [w for w, _ in words] == detokenize(vocab, [t for t, _ in scored]).split()
    assert all(0.0 <= p <= 1.0 for _, p in words)


def test_token_probability_is_the_softmax_of_the_chosen_logit() -> None:
    logits = np.array([0.0, np.log(3.0), 1000.0 - 1000.0], dtype=np.float64)
    assert token_probability(logits, 1) == pytest.approx(0.6, abs=1e-4)
    assert token_probability(np.array([1e4, 0.0]), 0) == 1.0


def test_recogniser_words_carry_the_decoders_confidence(model: Any) -> None:
    """Moonshine's words on onnxruntime come with confidences in (0, 1] that match the plain transcript."""
    x = _speak("She reports low mood and poor sleep.")
    scored = model.transcribe_scored(x)
    assert [w for w, _ in scored] == model.transcribe(x).split()
    assert scored and all(0.0 < p <= 1.0 for _, p in scored)
