"""Second readings (CombinedRecognizer): the rule detectors read every recogniser's words, and what any reading
marks is muted; the primary reading alone still decides gaps, and the output keeps its length."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

np = pytest.importorskip("numpy", reason="needs the audio extra: pip install 'anonpsy[audio]'")

from anonpsy.audio.asr import CombinedRecognizer, Word  # noqa: E402
from anonpsy.audio.pipeline import Settings, deidentify  # noqa: E402
from anonpsy.audio.signal import Audio  # noqa: E402

RATE = 16000
SECONDS = 4.0
VOCABULARY = ["the", "patient", "daughter", "dogger", "called", "phone", "number", "is", "five", "seven", "two",
              "Zoramathan", "Okafor", "lives", "in", "Springfield", "and", "she", "reports", "sleep", "on", "March"]


class Fixed:
    """A recogniser that answers fixed words."""

    def __init__(self, name: str, words: Sequence[Word]) -> None:
        self.name = name
        self.words = list(words)

    def transcribe(self, signal: object, regions: object) -> list[Word]:
        return list(self.words)


def _audio() -> Audio:
    rng = np.random.default_rng(0)
    samples = (rng.standard_normal((int(SECONDS * RATE), 1)) * 3000).astype(np.int16)
    return Audio(samples, RATE, "WAV", "PCM_16", "FILE")


def _timed(texts: Sequence[str]) -> list[Word]:
    step = SECONDS / max(1, len(texts))
    return [Word(t, round(i * step, 3), round((i + 1) * step - 0.02, 3)) for i, t in enumerate(texts)]


def _mask(frames: int, intervals: Sequence[dict[str, object]]) -> np.ndarray:
    mask = np.zeros(frames, dtype=bool)
    for iv in intervals:
        mask[int(str(iv["start_sample"])) : int(str(iv["end_sample"]))] = True
    return mask


@st.composite
def readings(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """Two readings of one utterance: the same number of words, some of them heard otherwise."""
    first = draw(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=14))
    second = [draw(st.sampled_from(VOCABULARY)) if draw(st.booleans()) else w for w in first]
    return first, second


@settings(max_examples=20)  # three runs of the pipeline per example
@given(readings())
@example((["the", "dogger", "Okafor", "called"], ["the", "daughter", "Okafor", "called"]))
def test_a_second_reading_only_adds_muting(pair: tuple[list[str], list[str]]) -> None:
    """Property second_reading_only_adds_muting: with a second reading the output keeps its length, everything
    the primary reading alone mutes stays muted, and so does every identifier the second reading's words show."""
    first, second = pair
    audio = _audio()
    plain = Settings(margin_s=0.0, end_extra_s=0.0, name_end_extra_s=0.0)
    alone = deidentify(audio, Fixed("a", _timed(first)), plain)
    other = deidentify(audio, Fixed("b", _timed(second)), plain)
    both = deidentify(audio, CombinedRecognizer(Fixed("a", _timed(first)), Fixed("b", _timed(second))), plain)
    assert both.audio.samples.shape == audio.samples.shape
    assert both.report["settings"]["asr"] == "a+b"
    muted = _mask(audio.frames, both.report["intervals"])
    assert not (_mask(audio.frames, alone.report["intervals"]) & ~muted).any()
    heard_by_other = _mask(audio.frames, [iv for iv in other.report["intervals"] if iv["words"]])
    assert not (heard_by_other & ~muted).any()
    assert (both.audio.samples[muted] == 0).all()


def test_a_cue_word_heard_only_by_the_second_reading_mutes_the_name() -> None:
    audio = _audio()
    plain = Settings(margin_s=0.0, end_extra_s=0.0, name_end_extra_s=0.0)
    # A surname that is also an ordinary word: only the cue before it marks it.
    misheard = _timed(["the", "patient", "said", "his", "dogger", "brook", "visited", "him"])
    heard = _timed(["the", "patient", "said", "his", "daughter", "brook", "visited", "him"])
    name = misheard[5]
    alone = deidentify(audio, Fixed("a", misheard), plain)
    both = deidentify(audio, CombinedRecognizer(Fixed("a", misheard), Fixed("b", heard)), plain)
    mid = int((name.start + name.end) / 2 * RATE)
    assert alone.audio.samples[mid, 0] != 0
    assert both.audio.samples[mid, 0] == 0
    assert any(iv["detector"].startswith("second-reading:") for iv in both.report["intervals"])


def test_a_combined_recogniser_needs_a_second_reading() -> None:
    with pytest.raises(ValueError, match="at least one second reading"):
        CombinedRecognizer(Fixed("a", []))


def test_a_combined_recogniser_closes_and_counts_every_reading() -> None:
    class Worker(Fixed):
        closed = False
        worker_cpu_s = 1.5

        def close(self) -> None:
            self.closed = True

    a, b = Worker("a", []), Worker("b", [])
    with CombinedRecognizer(a, b, Fixed("c", [])) as rec:
        assert rec.name == "a+b+c" and rec.worker_cpu_s == 3.0
        assert rec.transcribe(np.zeros(10, dtype=np.float32), []) == [] and rec.alternatives == [[], []]
    assert a.closed and b.closed
