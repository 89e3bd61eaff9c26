"""Treatment status through the LLM backend: a stopped, planned, refused or one-time treatment keeps its status.

Run against the scripted OpenAI-compatible server (``anonpsy.testing.openai_server``). Real notes: MTSamples
(CC0, ``/work/shared/data/LICENSES.md``), read at test time from ``<repo>/../shared/data``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from anonpsy.graph import CaseGraph, TreatmentStatus
from anonpsy.llm import LLMClient
from anonpsy.llm_backend import deid_with_llm
from anonpsy.testing import ScriptedOpenAIServer
from llm_replies.harness import CASES, config
from llm_replies.responder import Responder, extract_treatments

pytestmark = pytest.mark.usefixtures("no_embedding_model")

ROOT = Path(__file__).resolve().parents[1]
NOTES = ROOT.parent / "shared" / "data" / "mtsamples-psych-dev" / "notes.jsonl"
REPLIES = Path(__file__).parent / "llm_replies"

#: A synthetic note: one drug stopped for a stated reason, one taken, one to start, one declined, one given once.
NOTE = (
    "HISTORY OF PRESENT ILLNESS: Ms. Q is a 52-year-old woman with major depressive disorder, recurrent. She was "
    "previously on sertraline, which was discontinued because of nausea. She takes lithium 300 mg twice daily. "
    "She received lorazepam 1 mg once in the emergency department.\n\n"
    "ASSESSMENT: Major depressive disorder, recurrent, moderate.\n\n"
    "PLAN: Recommend a trial of bupropion 150 mg daily. Continue lithium 300 mg twice daily. She declined "
    "electroconvulsive therapy.\n"
)
#: Read from the note above by a person, not by the extractor.
EXPECTED = {
    "tx_sertraline": TreatmentStatus.past,
    "tx_lithium": TreatmentStatus.current,
    "tx_bupropion": TreatmentStatus.planned,
    "tx_lorazepam": TreatmentStatus.prn,
    "tx_ect": TreatmentStatus.refused,
}


def _without_status(inp: dict[str, Any], feedback: str, attempt: int) -> dict[str, Any]:
    """A reply in the format of version 1 of the template: no status, no stop reason."""
    reply = extract_treatments(inp)
    for t in reply["treatments"]:
        t.pop("status"), t.pop("stop_reason")
    return reply


def _extracted(text: str, responder: Responder) -> tuple[CaseGraph, list[str]]:
    with ScriptedOpenAIServer(responder=responder) as srv, LLMClient(config(srv, timeouts={"read": 60.0})) as c:
        r = deid_with_llm(text, seed=3, case_id="status", llm=c)
    assert r.audit.fallbacks == []
    return r.original, r.audit.notes


def _statuses(g: CaseGraph) -> dict[str, TreatmentStatus]:
    return {t.id: t.status for t in g.treatments}


def test_llm_backend_keeps_past_planned_refused_and_one_time_treatments() -> None:
    g, notes = _extracted(NOTE, Responder())
    got = _statuses(g)
    assert {k: got.get(k) for k in EXPECTED} == EXPECTED
    tx = {t.id: t for t in g.treatments}
    assert tx["tx_sertraline"].discontinued_reason == "side effects (nausea)"
    assert all(t.discontinued_reason is None for t in g.treatments if t.status != TreatmentStatus.past)
    assert {tx[k].status_evidence.rule_id for k in EXPECTED if tx[k].status_evidence} == {"llm.extract_treatments"}
    assert not any(n.startswith("E_TREATMENT_STATUS_RULES") for n in notes)


def test_reply_without_status_takes_the_rules_status_of_its_evidence() -> None:
    g, notes = _extracted(NOTE, Responder({"extract_treatments": _without_status}))
    got = _statuses(g)
    assert {k: got.get(k) for k in EXPECTED} == EXPECTED
    assert next(t for t in g.treatments if t.id == "tx_sertraline").discontinued_reason == "side effects (nausea)"
    assert any(n.startswith("E_TREATMENT_STATUS_RULES") for n in notes)


def test_recorded_version_1_reply_keeps_the_status_the_text_gives() -> None:
    doc = json.loads((REPLIES / "extract_treatments.json").read_text(encoding="utf-8"))
    text = next(p for p in CASES if p.stem == doc["fixture"]).read_text(encoding="utf-8")
    v1 = {"treatments": [{k: v for k, v in t.items() if k not in ("status", "stop_reason")}
                         for t in doc["reply"]["treatments"]]}
    g, _ = _extracted(text, Responder({"extract_treatments": lambda inp, fb, n: v1}))
    got = _statuses(g)
    # risperidone stopped three months ago and resumed in the plan; olanzapine one IM dose in the ED
    assert got["tx_risperidone"] == TreatmentStatus.current
    assert got["tx_olanzapine"] == TreatmentStatus.prn


def test_evidence_sentences_alone_give_the_rules_status_and_stop_reason() -> None:
    def reply(inp: dict[str, Any], feedback: str, attempt: int) -> dict[str, Any]:
        out = _without_status(inp, feedback, attempt)
        out["treatments"] = [t for t in out["treatments"] if t["name"] != "sertraline"]
        out["treatments"].append({"name": "sertraline", "type": "medication", "dose": None, "route": None,
                                  "frequency": None, "outcome": None,
                                  "evidence_text": "She was previously on sertraline, which was discontinued "
                                                   "because of nausea."})
        return out

    from anonpsy.extract.assembly.accumulator import Accumulator
    from anonpsy.extract.sections import sentences
    from anonpsy.graph import Demographics, TestResults, VisitEvent
    from anonpsy.llm_backend.evidence import SourceText
    from anonpsy.llm_backend.extract_llm import _Parts, rules_treatment_status

    sents = sentences(NOTE)
    parts = _Parts(acc=Accumulator(), demographics=Demographics(), tests=TestResults(), visit=VisitEvent(),
                   sentence_starts=[s.start for s in sents], sentences=sents)
    found = rules_treatment_status(SourceText(NOTE), parts, "tx_sertraline",
                                   "previously on sertraline, which was discontinued because of nausea", 52)
    assert found is not None and found[0] == TreatmentStatus.past and found[2] == "side effects (nausea)"
    assert rules_treatment_status(SourceText(NOTE), parts, "tx_sertraline", "She takes lithium 300 mg", 52) is None
    g, _ = _extracted(NOTE, Responder({"extract_treatments": reply}))
    assert _statuses(g)["tx_sertraline"] == TreatmentStatus.past


@pytest.mark.skipif(not NOTES.exists(), reason="shared MTSamples notes not present at ../shared/data")
def test_real_note_keeps_a_stopped_and_a_recommended_drug() -> None:
    note = next(json.loads(x) for x in NOTES.read_text(encoding="utf-8").splitlines()
                if json.loads(x)["note_id"] == "1766")
    got = _statuses(_extracted(note["text"], Responder())[0])
    # "citalopram ... made her mood worse" / recommended fluoxetine and pramipexole (read from the note)
    assert got["tx_citalopram"] == TreatmentStatus.past
    assert got["tx_fluoxetine"] == TreatmentStatus.planned
    assert got["tx_pramipexole"] == TreatmentStatus.planned
