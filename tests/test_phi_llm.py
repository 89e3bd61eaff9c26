"""Chunked multi-pass LLM detection against the scripted server; faults fail closed."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

import pytest

from anonpsy.errors import AnonpsyError
from anonpsy.llm import LLMClient, LLMConfig
from anonpsy.phi.llm_detect import LLMDetector, align_entity, chunk_text, mask_chunk
from anonpsy.phi.pipeline import mask_text
from anonpsy.phi.spans import Span
from anonpsy.testing import Fault, ScriptedOpenAIServer

NAMES = ("Harriet Vossberg", "Emil Sarkissian", "Pinecrest Clinic")
TYPES = {"Harriet Vossberg": "PERSON", "Emil Sarkissian": "PERSON", "Pinecrest Clinic": "ORGANIZATION"}
TEXT = (
    "Harriet Vossberg was seen at Pinecrest Clinic for low mood and poor sleep over six weeks. "
    "She was referred by Emil Sarkissian after a fall. Call 614-555-0173 with questions. "
    "Harriet Vossberg denies suicidal ideation; Emil Sarkissian will review labs next week."
)


def _chunk_of(body: dict[str, Any]) -> str:
    user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    m = re.search(r"<<<\n(.*)\n>>>", user, re.S)
    assert m is not None
    return m.group(1)


def responder(body: dict[str, Any]) -> dict[str, Any]:
    """Reports the first unmasked known name in the chunk per pass (so later passes find the rest)."""
    chunk = _chunk_of(body)
    for name in NAMES:
        i = chunk.find(name)
        if i >= 0:
            ctx = chunk[max(0, i - 15) : i + len(name) + 15]
            return {"entities": [{"text": name, "type": TYPES[name], "context": ctx}]}
    return {"entities": []}


def _config(srv: ScriptedOpenAIServer, **overrides: Any) -> LLMConfig:
    settings: dict[str, Any] = {
        "profile": "scripted",
        "base_url": srv.base_url,
        "native_base_url": srv.native_base_url,
        "timeouts": {"connect": 1.0, "read": 2.0, "write": 1.0, "pool": 1.0},
        "retries": 0,
        "backoff_base": 0.0,
        "backoff_cap": 0.0,
    }
    settings.update(overrides)
    return LLMConfig.model_validate(settings)


@pytest.fixture()
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(responder=responder) as srv:
        yield srv


def _no_rules(text: str) -> list[Span]:
    return []


def test_chunks_overlap_and_cover_the_text() -> None:
    text = " ".join(f"w{i}" for i in range(100))
    chunks = chunk_text(text, 30, 10)
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    for a, b in itertools.pairwise(chunks):
        assert b.start < a.end  # overlap
        assert len(text[b.start : a.end].split()) == 10
    assert chunk_text("", 10, 2) == []
    with pytest.raises(ValueError):
        chunk_text(text, 10, 10)


def test_mask_chunk_maps_back_to_original_offsets() -> None:
    text = "Call Adam Wilson today"
    chunk = chunk_text(text, 10, 0)[0]
    masked = mask_chunk(text, chunk, [Span(5, 16, "PERSON")])
    assert masked.text == "Call [PERSON] today"
    i = masked.text.index("today")
    assert masked.to_original(i, i + 5) == (17, 22)
    assert masked.to_original(5, 13) is None


def test_align_exact_context_and_fuzzy() -> None:
    hay = "Jo met Ann. Later Ann left with Jo."
    assert align_entity("Ann", "Later Ann left", hay) == [(18, 21)]
    fuzzy = "Seen by Dr. Emil Sarkissian today."
    # a misspelt report is aligned by rapidfuzz inside the context window
    assert align_entity("Emil Sarkisian", "by Dr. Emil Sarkisian today", fuzzy) == [(12, 27)]
    assert align_entity("Harriet Vossberg", "", "Harriet Vossberg and Harriet Vossberg") == [
        (0, 16),
        (21, 37),
    ]
    assert align_entity("Zebulon", "", hay) == []


def test_multi_pass_detection_masks_earlier_finds(server: ScriptedOpenAIServer) -> None:
    with LLMClient(_config(server)) as client:
        det = LLMDetector(client, chunk_words=200, overlap=20, passes=3).detect(TEXT)
    found = {TEXT[s.start : s.end] for s in det.spans}
    assert found == set(NAMES)
    assert all(s.source == "llm" and s.recognizer == "phi_detect@v1" for s in det.spans)
    bodies = [_chunk_of(r.body) for r in server.chat_requests if r.body]
    assert "[PERSON]" in bodies[1] and "Harriet Vossberg" not in bodies[1]
    assert det.failed == ()


def test_llm_spans_union_with_rule_spans(server: ScriptedOpenAIServer) -> None:
    def rules(text: str) -> list[Span]:
        i = text.index("614-555-0173")
        return [Span(i, i + 12, "TELEPHONE_NUMBER")]

    with LLMClient(_config(server)) as client:
        det = LLMDetector(client, chunk_words=20, overlap=5, passes=3)
        res = mask_text(TEXT, operator="mask", analyzer=rules, llm=det)
    for name in (*NAMES, "614-555-0173"):
        assert name not in res.text
    assert {s.source for s in res.spans} == {"rule", "llm"}


@pytest.mark.parametrize("kind", ["http_500", "malformed_json", "schema_violation"])
def test_failed_chunk_errors_by_default(kind: str) -> None:
    with (
        ScriptedOpenAIServer(responder=responder, faults=[Fault(kind, times=None)]) as srv,
        LLMClient(_config(srv)) as client,
        pytest.raises(AnonpsyError) as err,
    ):
        mask_text(TEXT, operator="mask", analyzer=_no_rules, llm=LLMDetector(client), document_id="doc-7")
    assert err.value.code == "M105"
    assert "Harriet" not in err.value.one_line()


def test_failed_chunk_is_masked_wholesale_when_configured() -> None:
    # The second chat request fails for good: every pass of the second chunk fails.
    with (
        ScriptedOpenAIServer(
            responder=responder, faults=[Fault("http_500", at=i) for i in range(1, 40)]
        ) as srv,
        LLMClient(_config(srv)) as client,
    ):
        det = LLMDetector(client, chunk_words=20, overlap=5, passes=1)
        res = mask_text(TEXT, operator="mask", analyzer=_no_rules, llm=det, on_llm_failure="mask_chunk")
    assert "[UNCHECKED]" in res.text
    assert res.stats["llm"]["failed"] >= 1
    unchecked = [s for s in res.spans if s.type == "UNCHECKED"]
    assert unchecked and all(s.source == "llm_failure" for s in unchecked)
    # Only the first chunk was checked; everything after it is masked wholesale, never passed through.
    assert "Sarkissian" not in res.text and "614-555-0173" not in res.text
    assert res.text.startswith("[PERSON] was seen at")


def test_unknown_type_in_reply_fails_closed() -> None:
    bad = {"entities": [{"text": "Harriet Vossberg", "type": "CELEBRITY", "context": ""}]}
    with (
        ScriptedOpenAIServer(script={"phi_detect": bad}) as srv,
        LLMClient(_config(srv)) as client,
        pytest.raises(AnonpsyError) as err,
    ):
        LLMDetector(client).detect(TEXT)
    assert err.value.code == "M105"


def test_bad_detector_parameters() -> None:
    with pytest.raises(ValueError):
        LLMDetector(object(), passes=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        LLMDetector(object(), chunk_words=10, overlap=10)  # type: ignore[arg-type]


def test_reply_schema_enum_matches_entity_types() -> None:
    import json

    from anonpsy.paths import schemas_dir
    from anonpsy.phi.types import EntityType

    schema = json.loads((schemas_dir() / "llm" / "phi_detect.json").read_text())
    enum = schema["properties"]["entities"]["items"]["properties"]["type"]["enum"]
    assert enum == [t.value for t in EntityType]
