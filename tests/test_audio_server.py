"""The transcription-server adapter and the llm backend against the scripted OpenAI-compatible server."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy", reason="needs the audio extra: pip install 'anonpsy[audio]'")
pytest.importorskip("soundfile", reason="needs the audio extra: pip install 'anonpsy[audio]'")

from anonpsy.audio.asr import ServerRecognizer, Word, words_from_verbose_json  # noqa: E402
from anonpsy.audio.gaps import Gap, classify_llm  # noqa: E402
from anonpsy.errors import AnonpsyError  # noqa: E402
from anonpsy.llm import LLMClient, LLMConfig  # noqa: E402
from anonpsy.llm.client import TranscriptionClient  # noqa: E402
from anonpsy.llm.errors import LLMRemoteEndpointError  # noqa: E402
from anonpsy.testing.openai_server import Fault, ScriptedOpenAIServer  # noqa: E402

REPLY = {
    "task": "transcribe",
    "language": "english",
    "duration": 2.0,
    "text": "my name is Maria Lopez",
    "words": [
        {"word": "my", "start": 0.1, "end": 0.25},
        {"word": "name", "start": 0.25, "end": 0.5},
        {"word": "is", "start": 0.5, "end": 0.6},
        {"word": "Maria", "start": 0.7, "end": 1.1},
        {"word": "Lopez", "start": 1.1, "end": 1.6},
    ],
}
SIGNAL = np.zeros(32000, dtype=np.float32)  # 2 s at 16 kHz


def _transcribe(srv: ScriptedOpenAIServer, **kw: object) -> list[Word]:
    with TranscriptionClient(srv.base_url, backoff_base=0.01, backoff_cap=0.05, **kw) as tc:  # type: ignore[arg-type]
        return ServerRecognizer(tc).transcribe(SIGNAL, [])


def test_words_and_upload_fields() -> None:
    with ScriptedOpenAIServer(transcriptions=REPLY) as srv:
        words = _transcribe(srv, model="whisper-small")
        upload = srv.uploads[0]
    assert [w.text for w in words] == ["my", "name", "is", "Maria", "Lopez"]
    assert words[3].start == pytest.approx(0.7)
    assert upload.fields["response_format"] == ["verbose_json"]
    assert "word" in upload.fields["timestamp_granularities[]"]
    assert upload.fields["model"] == ["whisper-small"]
    assert upload.data[:4] == b"RIFF" and upload.content_type == "audio/wav"


def test_words_nested_in_segments_are_read() -> None:
    reply = {"text": "x", "segments": [{"id": 0, "words": REPLY["words"][:2]}, {"id": 1, "words": REPLY["words"][2:]}]}
    with ScriptedOpenAIServer(transcriptions=reply) as srv:
        assert len(_transcribe(srv)) == 5


def test_retries_server_errors_and_rate_limits() -> None:
    faults = [Fault("http_500", at=0), Fault("rate_limit", at=1, retry_after="0")]
    with ScriptedOpenAIServer(transcriptions=REPLY, transcription_faults=faults) as srv:
        assert len(_transcribe(srv)) == 5
        assert [r.status for r in srv.transcription_requests] == [500, 429, 200]


@pytest.mark.parametrize(
    ("fault", "needle"),
    [
        (Fault("http_500", times=None), "HTTP 500 after 3 attempt"),
        (Fault("http_error", status=404), "HTTP 404"),
        (Fault("malformed_json"), "not JSON"),
        (Fault("content", content='{"text": "hello"}'), "no word timestamps"),
        (Fault("content", content='{"words": [{"word": "x", "start": 0.5, "end": 0.2}]}'), "precedes its start"),
        (Fault("content", content='{"words": [{"word": "x", "start": 9.0, "end": 9.5}]}'), "after the end"),
        (Fault("content", content='{"words": [{"word": "x"}]}'), "verbose_json"),
        (Fault("content", content='[1, 2]'), "not a JSON object"),
    ],
)
def test_bad_replies_are_one_line_errors(fault: Fault, needle: str) -> None:
    with ScriptedOpenAIServer(transcriptions=REPLY, transcription_faults=[fault]) as srv, \
            pytest.raises(AnonpsyError) as e:
        _transcribe(srv)
    assert e.value.code == "A103"
    assert needle in e.value.one_line()
    assert "Maria" not in e.value.one_line()


def test_timeout_is_reported_after_retries() -> None:
    from anonpsy.llm import Timeouts

    with ScriptedOpenAIServer(transcriptions=REPLY, transcription_faults=[Fault("timeout", times=None, delay=2)]) \
            as srv, pytest.raises(AnonpsyError) as e:
        _transcribe(srv, retries=1, timeouts=Timeouts(read=0.2))
    assert "read timeout" in e.value.one_line() and "2 attempt" in e.value.one_line()


def test_remote_server_is_refused_unless_allowed() -> None:
    with pytest.raises(LLMRemoteEndpointError):
        TranscriptionClient("http://203.0.113.5:8080/v1")
    TranscriptionClient("http://203.0.113.5:8080/v1", allow_remote=True).close()


def test_empty_transcription_is_no_words() -> None:
    assert words_from_verbose_json({"text": "  "}, 2.0) == []


def _gap_words() -> tuple[list[Word], list[Gap]]:
    words = [Word(w, i * 0.3, i * 0.3 + 0.25) for i, w in enumerate(["my", "name", "is", "and", "I", "feel", "low"])]
    return words, [Gap(0.95, 1.4, 2, 3), Gap(1.9, 2.05, 5, 6)]


def test_gap_prompt_verdicts_and_missing_answers_fail_closed() -> None:
    words, gaps = _gap_words()
    reply = {"gaps": [{"id": "GAP_1", "phi": True, "type": "PERSON"}]}  # GAP_2 left out
    with ScriptedOpenAIServer(script={"audio_gap": reply}) as srv:
        with LLMClient(LLMConfig(profile="scripted", base_url=srv.base_url)) as client:
            verdicts = classify_llm(gaps, words, client)
        body = srv.requests_for("audio_gap")[0].body
    assert [(v.phi, v.type, v.reason) for v in verdicts] == [(True, "PERSON", "gap"), (True, None, "unchecked")]
    assert body is not None and "[GAP_1]" in body["messages"][-1]["content"]


def test_gap_prompt_failure_mutes_or_errors() -> None:
    words, gaps = _gap_words()
    faults = [Fault("http_500", times=None)]
    with ScriptedOpenAIServer(script={"audio_gap": {"gaps": []}}, faults=faults) as srv:
        config = LLMConfig(profile="scripted", base_url=srv.base_url, retries=0)
        with LLMClient(config) as client:
            verdicts = classify_llm(gaps, words, client, on_failure="mute")
            assert all(v.phi and v.reason == "unchecked" for v in verdicts)
            with pytest.raises(AnonpsyError) as e:
                classify_llm(gaps, words, client, on_failure="error")
    assert e.value.code == "M105"
