"""The whole ``llm`` backend against the scripted OpenAI-compatible server, on every fixture case."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from anonpsy.cli import main
from anonpsy.errors import AnonpsyError
from anonpsy.graph import CaseGraph
from anonpsy.llm import LLMClient, load_template
from anonpsy.llm_backend import deid_with_llm
from anonpsy.perturb import check, perturb
from anonpsy.pipeline import DeidResult, deid_text
from anonpsy.rules import tables
from anonpsy.testing import ScriptedOpenAIServer
from anonpsy.validate import structural_violations
from llm_replies.harness import CASES, config, write_config
from llm_replies.responder import Responder, request_input

pytestmark = pytest.mark.usefixtures("no_embedding_model")


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(responder=Responder()) as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server: ScriptedOpenAIServer) -> Iterator[LLMClient]:
    # No timeout is tested here: a busy machine must not turn the scripted model's first reply into a fault.
    with LLMClient(config(server, timeouts={"read": 60.0})) as c:
        yield c


def _run(path: Path, llm: Any, seed: int = 5, **options: Any) -> DeidResult:
    return deid_with_llm(
        path.read_text(encoding="utf-8"), seed=seed, case_id=path.stem, llm=llm, options=options
    )


def _case(stem: str) -> Path:
    return next(p for p in CASES if p.stem == stem)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_llm_backend_keeps_every_invariant_on_every_fixture(path: Path, client: LLMClient) -> None:
    r = _run(path, client)
    assert r.audit.backend == "llm"
    assert structural_violations(r.original) == []
    assert structural_violations(r.perturbed) == []
    assert r.audit.violations == [] and check(r.original, r.perturbed) == []
    assert r.text.strip() and r.text.endswith("\n")
    assert not any(n.startswith("D_ROUNDTRIP_MISSING") for n in r.audit.notes)
    assert r.stats["llm_calls"] >= 8 and r.stats["prompt_tokens"] > 0
    assert r.leaks.checked > 0 and r.leaks.clean
    assert r.audit.fallbacks == [] and r.stats["fallbacks"] == 0, "no fault, no fallback"
    assert not any(n.startswith(("RULES_FALLBACK", "P_STEB_FALLBACK", "P_VISIT_FALLBACK")) for n in r.audit.notes)


def test_every_request_names_its_template_and_asks_for_schema_output(
    server: ScriptedOpenAIServer, client: LLMClient
) -> None:
    before = len(server.chat_requests)
    _run(_case("06_schizophrenia_ed"), client)
    reqs = server.chat_requests[before:]
    assert reqs and all(r.template_id and r.template_version == load_template(r.template_id).version for r in reqs)
    assert {r.response_format for r in reqs} == {"json_schema"}
    assert {r.template_id for r in reqs} >= {
        "extract_case",
        "extract_symptoms",
        "extract_timeline",
        "perturb_steb",
        "generate_lead",
        "generate_block",
    }


def test_pipeline_entry_point_dispatches_to_the_llm_backend(client: LLMClient) -> None:
    text = _case("05_erectile_disorder").read_text(encoding="utf-8")
    a = deid_text(text, seed=2, backend="llm", case_id="c05", llm=client)
    b = deid_text(text, seed=2, backend="llm", case_id="c05", llm=client)
    assert a.audit.backend == "llm" and a.text == b.text


def test_missing_client_is_a_configuration_error() -> None:
    with pytest.raises(AnonpsyError, match="E121"):
        deid_with_llm("A 30-year-old man with insomnia.", llm=None)


def test_given_diagnoses_replace_the_diagnosis_call(server: ScriptedOpenAIServer, client: LLMClient) -> None:
    before = len(server.chat_requests)
    r = _run(_case("06_schizophrenia_ed"), client, diagnoses=["Schizophrenia", "cannabis use disorder"])
    assert {d.rule_id for d in r.original.diagnoses} == {"schizophrenia", "cannabis_use_disorder"}
    assert not [q for q in server.chat_requests[before:] if q.template_id == "extract_diagnoses"]
    assert r.audit.violations == []
    with pytest.raises(AnonpsyError, match="E104"):
        _run(_case("06_schizophrenia_ed"), client, diagnoses=["not a diagnosis at all"])


def test_no_steb_keeps_one_episode_sentence_per_symptom(client: LLMClient) -> None:
    r = _run(_case("11_ptsd_assault"), client, no_steb=True)
    framed = [s for s in r.original.symptoms if s.contexts]
    assert framed
    for s in r.original.symptoms:
        assert len(s.contexts) <= 1 and all(c.present_fields() == ("situation",) for c in s.contexts)
    assert r.audit.violations == []


def _steb_order(server: ScriptedOpenAIServer, start: int) -> list[str]:
    return [
        request_input(q.body or {})[0]["symptom"]
        for q in server.chat_requests[start:]
        if q.template_id == "perturb_steb"
    ]


def test_contexts_are_rewritten_retrograde_unless_no_retro(
    server: ScriptedOpenAIServer, client: LLMClient
) -> None:
    path = _case("11_ptsd_assault")
    n0 = len(server.chat_requests)
    retro = _run(path, client)
    order_retro = _steb_order(server, n0)
    n1 = len(server.chat_requests)
    chrono = _run(path, client, no_retro=True)
    order_chrono = _steb_order(server, n1)
    assert len(order_retro) >= 2
    assert order_retro == list(reversed(order_chrono))
    assert retro.audit.violations == [] and chrono.audit.violations == []


def test_steb_rewrites_keep_only_the_fields_present_before(client: LLMClient) -> None:
    r = _run(_case("11_ptsd_assault"), client)
    for a, b in zip(r.original.symptoms, r.perturbed.symptoms, strict=True):
        assert [c.present_fields() for c in a.contexts] == [c.present_fields() for c in b.contexts]
    assert any(c.rule_id == "llm.perturb_steb@v1" for c in r.audit.changes)


def _with(overrides: dict[str, Any], path: Path, **options: Any) -> tuple[DeidResult, ScriptedOpenAIServer]:
    responder = Responder(overrides)
    with ScriptedOpenAIServer(responder=responder) as srv, LLMClient(config(srv)) as c:
        return _run(path, c, **options), srv


def test_demographic_suggestions_are_validated_by_the_core_pools(client: LLMClient) -> None:
    path = _case("14_borderline_self_harm")
    accepted = _run(path, client)
    occ = accepted.perturbed.demographics.occupation
    assert occ and occ != accepted.original.demographics.occupation
    assert accepted.perturbed.demographics.age is not None
    assert tables.occupation_allowed(accepted.perturbed.demographics.age, occ) == []
    bad, _ = _with(
        {"perturb_demographics": lambda i, f, n: {"ethnicity": "Martian", "occupation": "astronaut king"}},
        path,
    )
    assert any(n.startswith("P_SUGGESTION_REJECTED occupation") for n in bad.audit.notes)
    draw, _ = perturb(bad.original, 5)
    assert bad.perturbed.demographics.occupation == draw.demographics.occupation
    assert bad.audit.violations == []


def test_occupation_options_are_the_candidates_the_rules_backend_draws_from() -> None:
    """The model is offered only the rules backend's candidates (kind, skill level, age band), never an empty list
    where the rules draw, and a suggestion outside them is rejected; the change keeps the rules backend's rule id.
    (The child fixture no longer has an occupation: its father's job is his father's.)"""
    from anonpsy.perturb.demographics import occupation_candidates, support_level

    def first_option(inp: dict[str, Any], feedback: str, n: int) -> dict[str, Any]:
        opts = inp["occupation_options"]
        return {"ethnicity": None, "occupation": opts[-1] if opts else None}

    for stem in ("02_antisocial_personality", "14_borderline_self_harm"):
        r, srv = _with({"perturb_demographics": first_option}, _case(stem))
        age, old = r.perturbed.demographics.age, r.original.demographics.occupation
        assert age is not None and old
        pool, rule_id = occupation_candidates(old, age, support_level(r.original))
        names = {o.name for o in pool}
        (req,) = srv.requests_for("perturb_demographics")
        offered = request_input(req.body or {})[0]["occupation_options"]
        assert offered and set(offered) <= names
        assert len(offered) == min(len(names), 30)
        assert r.perturbed.demographics.occupation == offered[-1]
        assert [c.rule_id for c in r.audit.changes if c.path == "demographics.occupation"] == [rule_id]
        assert r.audit.violations == []
    outside, _ = _with({"perturb_demographics": lambda i, f, n: {"ethnicity": None, "occupation": "nurse"}},
                       _case("14_borderline_self_harm"))
    assert outside.perturbed.demographics.occupation != "nurse"
    assert any(n.startswith("P_SUGGESTION_REJECTED occupation") for n in outside.audit.notes)


def test_rewrites_that_stay_too_close_are_retried_then_generalised() -> None:
    def echo(inp: dict[str, Any], feedback: str, n: int) -> dict[str, Any]:
        return {
            "frames": [
                {f: fr.get(f) for f in ("situation", "thought", "emotion", "behavior")}
                for fr in inp["frames"]
            ]
        }

    r, srv = _with({"perturb_steb": echo}, _case("11_ptsd_assault"))
    framed = [
        s for s in r.original.symptoms if any(f != "emotion" for c in s.contexts for f in c.present_fields())
    ]
    only_emotion = [s for s in r.original.symptoms if s.contexts and s not in framed]
    assert len(srv.requests_for("perturb_steb")) == 3 * len(framed) + len(only_emotion)
    assert framed and r.audit.generalized
    assert r.audit.violations == []


def test_visit_rewrite_that_changes_the_scaffold_is_rejected() -> None:
    def moved(inp: dict[str, Any], feedback: str, n: int) -> dict[str, Any]:
        return {
            **inp["scaffold"],
            "setting": "telehealth",
            "reason_for_visit": "a routine check",
            "visit_episode": "A quiet arrival." if inp.get("visit_episode") else None,
        }

    r, _ = _with({"perturb_visit": moved}, _case("06_schizophrenia_ed"))
    assert any(n.startswith("P_VISIT_SCAFFOLD_CHANGED") for n in r.audit.notes)
    assert r.perturbed.visit_event.setting == r.original.visit_event.setting
    assert r.audit.violations == []


def test_structured_mental_status_is_kept_as_extracted() -> None:
    r, _ = _with({}, _case("06_schizophrenia_ed"))
    assert r.original.mental_status.present_fields()
    assert r.perturbed.mental_status == r.original.mental_status
    assert r.audit.violations == []


def test_meta_text_is_stripped_from_generated_sections() -> None:
    with ScriptedOpenAIServer(responder=Responder(chatty=True)) as srv, LLMClient(config(srv)) as c:
        r = _run(_case("08_ocd"), c)
    assert "Sure" not in r.text and "**" not in r.text and "Let me know" not in r.text


def test_blocks_missing_a_term_are_regenerated_or_reported() -> None:
    from llm_replies.responder import generate_block

    def forgetful(inp: dict[str, Any], feedback: str, n: int) -> dict[str, Any]:
        if "did not name" in feedback:
            return generate_block(inp)
        return {"text": "The patient had a difficult period."}

    r, srv = _with({"generate_block": forgetful}, _case("06_schizophrenia_ed"))
    assert not any(n.startswith("D_ROUNDTRIP_MISSING") for n in r.audit.notes)
    assert len(srv.requests_for("generate_block")) > len([q for q in srv.requests_for("generate_lead")])

    r2, _ = _with(
        {"generate_block": lambda i, f, n: {"text": "The patient had a difficult period."}},
        _case("06_schizophrenia_ed"),
    )
    missing = [n for n in r2.audit.notes if n.startswith("D_ROUNDTRIP_MISSING")]
    assert missing and all("symptom" in n or "diagnosis" in n for n in missing)


def test_cli_deid_with_the_llm_backend(tmp_path: Path, server: ScriptedOpenAIServer) -> None:
    cfg = write_config(tmp_path / "llm.yaml", server)
    runner = CliRunner()
    for stem in ("03_pmdd", "06_schizophrenia_ed", "01_adhd_child"):
        out = tmp_path / f"{stem}.json"
        res = runner.invoke(
            main,
            [
                "deid",
                str(_case(stem)),
                "--backend",
                "llm",
                "--llm-config",
                str(cfg),
                "--seed",
                "4",
                "--format",
                "json",
                "-o",
                str(out),
            ],
        )
        assert res.exit_code in (0, 1), res.output
        payload = json.loads(out.read_text(encoding="utf-8"))
        assert payload["violations"] == []
        CaseGraph.model_validate(payload["graph"])
        if res.exit_code == 1:
            assert "leak audit" in res.output and payload["leaks"]["leaks"]
        else:
            assert payload["leaks"]["leaks"] == []


def test_timeline_items_beyond_the_reply_cap_are_asked_in_batches(
    server: ScriptedOpenAIServer, client: LLMClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A note may hold more nodes than one extract_timeline reply may list (its schema's maxItems): they are asked
    about in batches of that size, with the same episodes as one request, and no fallback."""
    import copy

    import anonpsy.llm_backend.extract_llm as extract_llm

    path = _case("12_bipolar_mania_lithium")
    whole = _run(path, client)
    real = load_template("extract_timeline")
    small = copy.copy(real)
    schema = copy.deepcopy(real.reply_schema)
    assert schema is not None
    schema["properties"]["items"]["maxItems"] = 2
    object.__setattr__(small, "reply_schema", schema)
    monkeypatch.setattr(extract_llm, "load_template", lambda tid: small if tid == "extract_timeline" else real)
    before = len(server.chat_requests)
    batched = _run(path, client)
    assert sum(r.template_id == "extract_timeline" for r in server.chat_requests[before:]) > 1
    assert batched.audit.fallbacks == []
    assert batched.original.durations == whole.original.durations
    assert [(n.id, n.duration_ids) for n in batched.original.temporal_nodes()] == \
        [(n.id, n.duration_ids) for n in whole.original.temporal_nodes()]


def test_independent_steps_are_sent_together_and_handled_in_order() -> None:
    """ask_all: the asks wait on the server at once (up to the client's concurrency), and each reply, or the
    fault of its ask, comes back in the order asked, whatever order the replies arrive in."""
    import re

    from anonpsy.llm.errors import LLMReplyError
    from anonpsy.llm_backend.steps import Ask, StepContext

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        k = int(re.findall(r'"k": (\d+)', " ".join(m["content"] for m in body["messages"]))[0])
        return {"text": f"section {k}"} if k != 2 else {"wrong": 1}

    with ScriptedOpenAIServer(responder=reply, latency=0.05) as srv, \
            LLMClient(config(srv, concurrency=4, timeouts={"read": 60.0})) as c:
        ctx = StepContext(llm=c, case_id="c", seed=1)
        out = ctx.ask_all([Ask("generate_lead", {"k": k}, "generation") for k in range(5)])
        assert srv.max_in_flight > 1
    assert ctx.calls == 5
    assert [o if isinstance(o, dict) else type(o) for o in out] == [
        {"text": "section 0"}, {"text": "section 1"}, LLMReplyError, {"text": "section 3"}, {"text": "section 4"}]
