"""LLM-only baseline and LLM-judge tasks against the scripted OpenAI-compatible server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

pytest.importorskip("scipy", exc_type=ImportError, reason="needs the eval extra: run .ci/eval.sh")
pytest.importorskip("rouge_score", exc_type=ImportError, reason="needs the eval extra: run .ci/eval.sh")
pytest.importorskip("statsmodels", exc_type=ImportError, reason="needs the eval extra: run .ci/eval.sh")

from anonpsy.evaluate import judge as judge_mod
from anonpsy.evaluate.cache import EvalCache
from anonpsy.evaluate.corpus import Case, load_corpus
from anonpsy.evaluate.methods import CritiqueReply, RewriteReply, run_method
from anonpsy.evaluate.runner import Evaluation, evaluate, write_evaluation
from anonpsy.llm import LLMClient, LLMConfig, load_template
from anonpsy.testing import ScriptedOpenAIServer
from anonpsy.testing.openai_server import Fault, template_of
from test_eval_runner import THREE, HashEncoder, copy_cases

GENERIC = "A generic case history of a patient whose particulars were all replaced."
DRAFT = "DRAFT rewrite that still names the hospital."
METHODS3 = ["anonpsy-rules", "phi-mask", "llm-only"]
FAST: dict[str, Any] = {
    "timeouts": {"connect": 1.0, "read": 2.0, "write": 1.0, "pool": 1.0},
    "retries": 0,
    "backoff_base": 0.0,
    "backoff_cap": 0.0,
    "cache_path": None,
}


def _user(body: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in body["messages"] if m["role"] == "user")


def reply(body: dict[str, Any]) -> dict[str, Any]:
    """Scripted model: a fixed rewrite, an ADHD diagnosis, acceptance, and an insider who never recognizes the
    generic rewrite (score 1) but does recognize every other output (4; 3 each when neither is generic)."""
    template, _ = template_of(body)
    if template == "llm_only_rewrite":
        return {"text": DRAFT}
    if template == "llm_only_critique":
        return {"issues": [{"category": "institution", "action": "removed"},
                           {"category": "temporal", "action": "repaired"}], "text": GENERIC}
    if template == "judge_diagnosis":
        return {"diagnoses": ["attention-deficit/hyperactivity disorder, combined presentation"]}
    if template == "judge_acceptability":
        return {"acceptable": True, "problems": []}
    if template == "judge_reident":
        user = _user(body)
        a_part = user[user.index("VERSION A:"): user.index("VERSION B:")]
        b_part = user[user.index("VERSION B:"):]
        a_generic, b_generic = GENERIC in a_part, GENERIC in b_part
        if a_generic == b_generic:
            return {"score_a": 3, "score_b": 3, "more_recallable": "tie", "cues_a": ["none"], "cues_b": ["none"]}
        sa, sb = (1, 4) if a_generic else (4, 1)
        return {"score_a": sa, "score_b": sb, "more_recallable": "B" if a_generic else "A",
                "cues_a": ["none"] if a_generic else ["name"], "cues_b": ["name"] if a_generic else ["none"]}
    raise AssertionError(f"unexpected template {template}")


def client_for(srv: ScriptedOpenAIServer, **overrides: Any) -> LLMClient:
    return LLMClient(LLMConfig.model_validate({"profile": "scripted", "base_url": srv.base_url,
                                              "native_base_url": srv.native_base_url, **FAST, **overrides}))


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(responder=reply) as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server: ScriptedOpenAIServer) -> Iterator[LLMClient]:
    with client_for(server) as c:
        yield c


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> list[Case]:
    return load_corpus(copy_cases(tmp_path_factory.mktemp("corpus")))


@pytest.fixture(scope="module")
def judged(cases: list[Case], client: LLMClient) -> Evaluation:
    return evaluate(cases, METHODS3, encoder=HashEncoder(), llm=client, judge=True, seed=0)


# ----------------------------------------------------------------------------------------------------
# llm-only


def test_llm_only_rewrites_then_critiques_the_draft(server: ScriptedOpenAIServer, client: LLMClient,
                                                    cases: list[Case]) -> None:
    before = len(server.chat_requests)
    out = run_method("llm-only", cases[0].text, seed=2, case_id="c1", llm=client)
    reqs = server.chat_requests[before:]
    assert [r.template_id for r in reqs] == ["llm_only_rewrite", "llm_only_critique"]
    assert all(r.response_format == "json_schema" and r.body is not None for r in reqs)
    rewrite_body, critique_body = reqs[0].body, reqs[1].body
    assert rewrite_body is not None and critique_body is not None
    assert cases[0].text.strip()[:60] in _user(rewrite_body)
    assert DRAFT in _user(critique_body) and cases[0].text.strip()[:60] in _user(critique_body)
    assert rewrite_body["seed"] == 2 and rewrite_body["temperature"] == pytest.approx(0.2)
    assert critique_body["temperature"] == pytest.approx(0.0)
    assert out.text == GENERIC and out.graph is None
    assert out.stats == {"critique_issues": 2, "critique.removed:institution": 1, "critique.repaired:temporal": 1}


def test_an_invalid_rewrite_fails_that_case_only(cases: list[Case]) -> None:
    faults = [Fault("schema_violation", template="llm_only_rewrite", times=2)]
    with ScriptedOpenAIServer(responder=reply, faults=faults) as srv, client_for(srv) as c:
        ev = evaluate(cases, ["llm-only"], encoder=HashEncoder(), llm=c, workers=1)
    assert [(f.stage, f.method, f.case_id) for f in ev.failures] == [("method", "llm-only", THREE[0])]
    assert ev.failures[0].error.startswith("E125")
    assert [r["case_id"] for r in ev.rows] == list(THREE[1:])


# ----------------------------------------------------------------------------------------------------
# judge tasks


def test_judge_scores_every_case_and_method(judged: Evaluation) -> None:
    assert judged.failures == [] and judged.judged
    assert judged.metrics()[-3:] == ["judge_soft_f1", "dx_acceptable", "reid_score"]
    by = {(r["case_id"], r["method"]): r for r in judged.rows}
    for m in METHODS3:
        assert by[(THREE[0], m)]["judge_soft_f1"] == pytest.approx(1.0)  # the ADHD case
        assert by[(THREE[1], m)]["judge_soft_f1"] == pytest.approx(0.0)  # PMDD: the judge said ADHD
        assert all(by[(c, m)]["dx_acceptable"] == 1.0 for c in THREE)
    for c in THREE:
        # The insider never recognizes the generic rewrite, whichever position it was shown in.
        assert by[(c, "llm-only")]["reid_score"] == pytest.approx(1.0)
        assert by[(c, "anonpsy-rules")]["reid_score"] == pytest.approx(3.5)
    assert judged.corpus["llm-only"]["judge_recallable_rate"] == pytest.approx(0.0)
    assert judged.corpus["phi-mask"]["judge_recallable_rate"] == pytest.approx(0.75)
    assert judged.corpus["phi-mask"]["judge_comparisons"] == 6


def test_judge_records_orders_and_seeds(judged: Evaluation, server: ScriptedOpenAIServer) -> None:
    recs = judged.judge_records
    assert len(recs) == 3 * (3 + 3 + 3)
    assert all(r["status"] == "ok" and isinstance(r["seed"], int) for r in recs)
    reident = [r for r in recs if r["task"] == "reident"]
    assert len(reident) == 9
    with_llm_only = [r for r in reident if "llm-only" in r["order"]]
    assert {r["order"][0] == "llm-only" for r in with_llm_only} == {True, False}  # both positions occur
    for r in reident:
        plan = next(p for p in judge_mod.plan_pairs(METHODS3, r["case_id"], 0) if set(p.methods) == set(r["order"]))
        assert (list(plan.methods), plan.order_seed, plan.swapped, plan.llm_seed) == (
            r["order"], r["order_seed"], r["swapped"], r["seed"])
        assert r["consistent"] is True
    assert any("position-bias" in n for n in judged.notes)
    sent = {r.body["seed"] for r in server.requests_for("judge_reident") if r.body is not None}
    assert {r["seed"] for r in reident} <= sent


def test_judge_report_sections(judged: Evaluation, tmp_path: Path) -> None:
    write_evaluation(judged, tmp_path, figures=False, n_resamples=99)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "### Judge tasks" in md and "| reident | 9 | 0 | 0 |" in md
    data = json.loads((tmp_path / "evaluation.json").read_text(encoding="utf-8"))
    assert len(data["judge_records"]) == 27 and data["judged"] is True
    assert "judge_recallable_rate" in json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["corpus"][
        "phi-mask"]


def test_a_failing_judge_task_is_recorded_per_case(cases: list[Case]) -> None:
    faults = [Fault("schema_violation", template="judge_acceptability", times=2)]
    with ScriptedOpenAIServer(responder=reply, faults=faults) as srv, client_for(srv) as c:
        ev = evaluate(cases[:2], ["phi-mask"], encoder=HashEncoder(), llm=c, judge=True, workers=1)
    assert [(f.stage, f.task, f.method, f.case_id) for f in ev.failures] == [
        ("judge", "acceptability", "phi-mask", THREE[0])]
    assert ev.failures[0].error.startswith("E125")
    failed = [r for r in ev.judge_records if r["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["task"] == "acceptability" and "reply" not in failed[0]
    first, second = ev.rows
    assert "dx_acceptable" not in first and second["dx_acceptable"] == 1.0
    assert "judge_soft_f1" in first
    assert any("at least two methods" in n for n in ev.notes)


def test_judge_replies_come_from_the_cache_on_a_rerun(cases: list[Case], tmp_path: Path) -> None:
    with ScriptedOpenAIServer(responder=reply) as srv, client_for(srv) as c:
        first = evaluate(cases[:2], ["phi-mask", "llm-only"], encoder=HashEncoder(), llm=c, judge=True,
                         cache=EvalCache(tmp_path))
        n = len(srv.chat_requests)
        enc = HashEncoder()
        second = evaluate(cases[:2], ["phi-mask", "llm-only"], encoder=enc, llm=c, judge=True,
                          cache=EvalCache(tmp_path))
        assert len(srv.chat_requests) == n
    assert first.cache["judge"].misses == 2 * (2 + 2 + 1)
    assert not second.computed_anything() and enc.calls == 0
    assert second.cache["judge"].hits == 10 and all(r["cached"] for r in second.judge_records)
    assert second.rows == first.rows


def test_a_new_model_is_asked_again(cases: list[Case], tmp_path: Path) -> None:
    with ScriptedOpenAIServer(responder=reply) as srv:
        with client_for(srv) as c:
            evaluate(cases[:1], ["phi-mask"], encoder=HashEncoder(), llm=c, judge=True, cache=EvalCache(tmp_path))
        with client_for(srv, model="another-model") as c2:
            ev = evaluate(cases[:1], ["phi-mask"], encoder=HashEncoder(), llm=c2, judge=True,
                          cache=EvalCache(tmp_path))
    assert ev.cache["output"].hits == 1 and ev.cache["judge"].misses == 2


# ----------------------------------------------------------------------------------------------------
# plans, templates, schemas


_METHOD = st.sampled_from(["anonpsy-rules", "phi-mask", "anonpsy-llm", "llm-only", "anonpsy-nosteb"])


@given(st.integers(0, 2**31), st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True),
       st.lists(_METHOD, min_size=2, max_size=5, unique=True))
@example(0, "case", ["phi-mask", "anonpsy-rules"])
def test_pair_order_depends_only_on_seed_case_and_pair(seed: int, case_id: str, methods: list[str]) -> None:
    plans = judge_mod.plan_pairs(methods, case_id, seed)
    assert len(plans) == len(methods) * (len(methods) - 1) // 2
    assert all(p.method_a != p.method_b for p in plans)
    assert len({frozenset(p.methods) for p in plans}) == len(plans)
    for p in plans:
        alone = judge_mod.plan_pairs(list(reversed(p.methods)), case_id, seed)[0]
        assert alone == p


def test_pair_orders_vary_across_cases() -> None:
    swapped = [judge_mod.plan_pairs(["a", "b"], f"case{i}", 7)[0].swapped for i in range(60)]
    assert 15 < sum(swapped) < 45
    assert swapped == [judge_mod.plan_pairs(["a", "b"], f"case{i}", 7)[0].swapped for i in range(60)]


PLACEHOLDERS: dict[str, set[str]] = {
    "llm_only_rewrite": {"schema", "text"},
    "llm_only_critique": {"schema", "original", "draft"},
    "judge_diagnosis": {"schema", "text"},
    "judge_acceptability": {"schema", "text", "diagnoses"},
    "judge_reident": {"schema", "original", "text_a", "text_b"},
}
SAMPLES: dict[str, tuple[dict[str, Any], type[Any]]] = {
    "llm_only_rewrite": ({"text": "x"}, RewriteReply),
    "llm_only_critique": ({"issues": [{"category": "quote", "action": "changed"}], "text": "x"}, CritiqueReply),
    "judge_diagnosis": ({"diagnoses": ["panic disorder"]}, judge_mod.DiagnosisReply),
    "judge_acceptability": ({"acceptable": False, "problems": ["duration_not_met"]}, judge_mod.AcceptabilityReply),
    "judge_reident": ({"score_a": 2, "score_b": 5, "more_recallable": "B", "cues_a": [], "cues_b": ["date"]},
                      judge_mod.ReidentReply),
}


@pytest.mark.parametrize("template_id", sorted(SAMPLES))
def test_templates_schemas_and_models_agree(template_id: str) -> None:
    t = load_template(template_id)
    assert t.version == 1 and t.reply_schema is not None and "schema" in t.placeholders
    sample, model = SAMPLES[template_id]
    jsonschema.validate(sample, t.reply_schema)
    model.model_validate(sample)
    schema_props = set(t.reply_schema["properties"])
    assert schema_props == set(model.model_fields) == set(t.reply_schema["required"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**sample, "extra": 1}, t.reply_schema)
    assert t.placeholders == PLACEHOLDERS[template_id]


def test_reident_consistency_and_winner() -> None:
    plan = judge_mod.PairPlan("c", "x", "y", 1, 2, False)
    r = judge_mod.ReidentReply(score_a=2, score_b=4, more_recallable="A", cues_a=[], cues_b=[])
    assert not judge_mod.consistent(r) and judge_mod.picked_method(plan, r) == "x"
    assert judge_mod.method_scores(plan, r) == {"x": 2, "y": 4}
    tie = judge_mod.ReidentReply(score_a=3, score_b=3, more_recallable="tie", cues_a=[], cues_b=[])
    assert judge_mod.consistent(tie) and judge_mod.picked_method(plan, tie) is None
