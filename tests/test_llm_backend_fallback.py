"""Step-level fallback of the ``llm`` backend to the rules backend, and the whole fixture set under mixed faults.

The mixed-fault run is the acceptance measure of the fallback design: 22 fixture cases through `anonpsy deid
--backend llm` against a server that fails 30 % of its requests (seeded, so the run is the same every time).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from anonpsy import cli_deid
from anonpsy.audit import Fallback
from anonpsy.cli import main
from anonpsy.extract import extract
from anonpsy.extract.assembly.build import withhold_identified
from anonpsy.graph import Certainty
from anonpsy.graphio import read_graph_checked
from anonpsy.llm import LLMClient
from anonpsy.llm.errors import (
    LLMConfigError,
    LLMConnectionError,
    LLMHTTPError,
    LLMRemoteEndpointError,
    LLMReplyError,
    LLMTemplateError,
)
from anonpsy.llm_backend import LLMBackendError, deid_with_llm
from anonpsy.llm_backend import extract_llm as extract_llm_module
from anonpsy.llm_backend.steps import StepContext, is_step_fault, run_step
from anonpsy.perturb import check
from anonpsy.perturb.contexts import SourceIdentifiers
from anonpsy.pipeline import DeidResult, leak_audit
from anonpsy.temporal import normalize
from anonpsy.testing import Fault, FaultMix, ScriptedOpenAIServer
from anonpsy.validate import Violation
from llm_replies.harness import CASES, config, write_config
from llm_replies.responder import Responder, rules_graph

pytestmark = pytest.mark.usefixtures("no_embedding_model")

CASE = next(p for p in CASES if p.stem == "12_bipolar_mania_lithium")
P_CASE = next(p for p in CASES if p.stem == "04_mdd_peripartum")  # calls every perturbation template
SHORT = min(CASES, key=lambda p: len(p.read_text(encoding="utf-8")))
STEP_CODES = {"E123", "E124", "E125", "E127"}


@pytest.fixture(autouse=True, scope="module")
def _warm_scripted_model() -> None:
    """The scripted model's replies come from the rules extraction of each case, computed once here so that a busy
    machine never turns a slow first reply into an accidental timeout."""
    for p in CASES:
        rules_graph(p.read_text(encoding="utf-8"))


def _run(faults: list[Fault], path: Path = CASE, **options: Any) -> DeidResult:
    with ScriptedOpenAIServer(responder=Responder(), faults=faults) as srv, LLMClient(
        config(srv, timeouts={"read": 60.0})
    ) as client:
        return deid_with_llm(path.read_text(encoding="utf-8"), seed=3, case_id=path.stem, llm=client,
                             options=options)


@pytest.fixture(scope="module")
def clean() -> DeidResult:
    with ScriptedOpenAIServer(responder=Responder()) as srv, LLMClient(config(srv, timeouts={"read": 60.0})) as c:
        return deid_with_llm(CASE.read_text(encoding="utf-8"), seed=3, case_id=CASE.stem, llm=c)


def _ids(r: DeidResult) -> set[str]:
    """Ids of the asserted nodes (the scripted model, like the model's stages, reports no denied symptom or excluded
    diagnosis; the rules backend keeps those pertinent negatives), with the episode suffix the temporal engine gives
    a symptom it splits (sx_x_e2) removed."""
    g = r.original
    negatives = {s.id for s in g.symptoms if not s.asserted}
    negatives |= {d.id for d in g.diagnoses if d.certainty == Certainty.ruled_out}
    return {re.sub(r"_e\d+$", "", i) for i, _ in g.iter_nodes() if i not in negatives}


# -- what counts as a step fault ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "step_fault"),
    [
        (LLMReplyError("t", 2, ["/: reply is empty"]), True),
        (LLMBackendError("graph cannot hold the reply"), True),
        (LLMHTTPError(500, template_id="t", attempts=3), True),
        (LLMHTTPError(503, template_id="t", attempts=3), True),
        (LLMHTTPError(429, template_id="t", attempts=3), True),
        (LLMHTTPError(400, template_id="t", attempts=1), True),
        (LLMHTTPError(200, template_id="t", attempts=1, reason="response is not a chat completion"), True),
        (LLMConnectionError("read timeout", template_id="t", attempts=3), True),
        (LLMHTTPError(401, template_id="t", attempts=1), False),
        (LLMHTTPError(403, template_id="t", attempts=1), False),
        (LLMHTTPError(404, template_id="t", attempts=1), False),
        (LLMConnectionError("connection refused or unreachable", template_id="t", attempts=3), False),
        (LLMConnectionError("connect timeout", template_id="t", attempts=3), False),
        (LLMConfigError("bad"), False),
        (LLMTemplateError("bad"), False),
        (LLMRemoteEndpointError("public address"), False),
        (ValueError("a bug is not a model fault"), False),
    ],
)
def test_only_faults_of_one_step_may_fall_back(exc: Exception, step_fault: bool) -> None:
    assert is_step_fault(exc) is step_fault


def test_fall_back_records_codes_only_and_strict_raises() -> None:
    ctx = StepContext(llm=None, case_id="c", seed=1)  # type: ignore[arg-type]
    exc = LLMHTTPError(502, template_id="extract_visit", attempts=3)
    ctx.fall_back(exc, stage="extraction", step="extract_visit")
    assert ctx.fallbacks == [Fallback(stage="extraction", step="extract_visit", code="E124",
                                      template_id="extract_visit", attempts=3, error=exc.one_line())]
    assert ctx.notes == ["RULES_FALLBACK extract_visit: E124; the rules backend did this step"]
    with pytest.raises(LLMHTTPError):
        StepContext(llm=None, case_id="c", seed=1, strict=True).fall_back(  # type: ignore[arg-type]
            exc, stage="extraction", step="extract_visit"
        )
    with pytest.raises(LLMConnectionError):
        ctx.fall_back(LLMConnectionError("connection refused or unreachable", template_id=None, attempts=3),
                      stage="extraction", step="extract_case")


def test_a_reply_the_graph_model_rejects_falls_back_as_e127() -> None:
    class Age(BaseModel):
        age: int

    def bad() -> str:
        try:
            Age.model_validate({"age": "old"})
        except ValidationError:
            raise
        return "unreachable"

    ctx = StepContext(llm=None, case_id="c", seed=1)  # type: ignore[arg-type]
    assert run_step(ctx, stage="extraction", step="extract_case", template_id="extract_case", llm=bad,
                    rules=lambda: "rules") == "rules"
    assert [(f.code, f.step) for f in ctx.fallbacks] == [("E127", "extract_case")]
    strict = StepContext(llm=None, case_id="c", seed=1, strict=True)  # type: ignore[arg-type]
    with pytest.raises(LLMBackendError):
        run_step(strict, stage="extraction", step="extract_case", template_id="extract_case", llm=bad,
                 rules=lambda: "rules")


# -- each step falls back alone -----------------------------------------------------------------------------------

EXTRACTION = ("extract_case", "extract_diagnoses", "extract_symptoms", "extract_treatments", "extract_visit",
              "extract_history", "extract_timeline", "extract_causal")


@pytest.mark.parametrize("template_id", EXTRACTION)
def test_an_extraction_stage_falls_back_to_the_rules_findings(template_id: str, clean: DeidResult) -> None:
    r = _run([Fault("http_500", template=template_id, times=None)])
    assert [(f.stage, f.step, f.code) for f in r.audit.fallbacks] == [("extraction", template_id, "E124")]
    assert r.audit.violations == [] and r.leaks.clean
    # The scripted model answers with the rules findings, so the fallback must find the same nodes.
    assert _ids(r) == _ids(clean)
    assert r.original.demographics == clean.original.demographics
    assert r.original.visit_event.setting == clean.original.visit_event.setting
    if template_id == "extract_timeline":
        assert r.original.durations and any(s.duration_ids for s in r.original.symptoms)


def test_an_invalid_graph_is_replaced_by_the_rules_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    real = extract_llm_module.structural_violations
    calls = {"n": 0}

    def once(graph: Any) -> list[Violation]:
        calls["n"] += 1
        return [Violation(code="S999", message="synthetic")] if calls["n"] == 1 else real(graph)

    monkeypatch.setattr(extract_llm_module, "structural_violations", once)
    r = _run([])
    assert [(f.step, f.code) for f in r.audit.fallbacks] == [("extract_graph", "E127")]
    text = CASE.read_text(encoding="utf-8")
    rules = withhold_identified(extract(text, case_id=CASE.stem), SourceIdentifiers(text).find)
    assert r.original == normalize(rules), "the rules backend's own graph"
    calls["n"] = 0
    with pytest.raises(LLMBackendError):
        _run([], strict_llm=True)


@pytest.mark.parametrize(
    ("template_id", "note"),
    [("perturb_demographics", "P_SUGGESTION_FALLBACK"), ("perturb_visit", "P_VISIT_FALLBACK")],
)
def test_a_perturbation_field_falls_back(template_id: str, note: str) -> None:
    r = _run([Fault("http_500", template=template_id, times=None)], P_CASE)
    assert [(f.stage, f.step, f.code) for f in r.audit.fallbacks] == [("perturbation", template_id, "E124")]
    assert any(n.startswith(note) for n in r.audit.notes)
    assert r.audit.violations == [] and r.leaks.clean
    if template_id == "perturb_visit":
        scrubbed = [c for c in r.audit.generalized if c.path.startswith("visit_event.")]
        assert scrubbed and all("rules backend" in (c.detail or "") for c in scrubbed)


def test_every_generation_block_falls_back_on_its_own(clean: DeidResult) -> None:
    r = _run([Fault("schema_violation", template="generate_block", times=None)])
    steps = [f.step for f in r.audit.fallbacks]
    assert steps and len(set(steps)) == len(steps) and all(re.fullmatch(r"generate_block:\d+", s) for s in steps)
    assert {f.code for f in r.audit.fallbacks} == {"E125"}
    assert not any(n.startswith("D_ROUNDTRIP_MISSING") for n in r.audit.notes)
    assert r.text.startswith(clean.text.split("\n\n")[0]), "the lead still comes from the model"
    assert r.audit.violations == [] and r.leaks.clean


def test_the_lead_falls_back_to_the_template_renderer() -> None:
    r = _run([Fault("empty", template="generate_lead", times=None)])
    assert [(f.step, f.code) for f in r.audit.fallbacks] == [("generate_lead", "E125")]
    assert r.text.startswith("The patient is a") and r.leaks.clean


# -- the acceptance run: 22 fixture cases, 30 % mixed faults -------------------------------------------------------

RATE, SEED = 0.30, 20240611
ONE_LINE = re.compile(r"^[A-Z]\d{3} [^\n]+\n$")


def test_fixture_cases_finish_under_thirty_percent_mixed_faults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clients: dict[str, LLMClient] = {}
    real_client = cli_deid._llm_client

    def recorded(cfg: Any) -> Any:
        client = real_client(cfg)
        clients[f"c{len(clients)}"] = client
        return client

    monkeypatch.setattr(cli_deid, "_llm_client", recorded)
    mix = FaultMix(RATE, seed=SEED, retry_after="1")  # 500, 429 + Retry-After, bad JSON, schema, empty
    rows: list[dict[str, Any]] = []
    with ScriptedOpenAIServer(responder=Responder(), fault_mix=mix) as srv:
        cfg = write_config(tmp_path / "llm.yaml", srv, timeouts={"read": 60.0}, retry_after_cap=0.01)
        for case in CASES:
            out, emit = tmp_path / "out" / f"{case.stem}.txt", tmp_path / "emit"
            res = CliRunner().invoke(main, ["deid", str(case), "--backend", "llm", "--llm-config", str(cfg),
                                            "--seed", "7", "-o", str(out), "--emit", str(emit)])
            failures = list(clients.values())[-1].metrics.summary(case.stem)["failures"]
            rows.append({"case": case, "res": res, "out": out, "emit": emit, "failures": failures})
        faults = sum(1 for r in srv.chat_requests if r.fault)
        kinds = {r.fault for r in srv.chat_requests if r.fault}
    assert kinds == {"http_500", "rate_limit", "malformed_json", "schema_violation", "empty"}
    assert 0.2 < faults / len(srv.chat_requests) < 0.4
    ok = [r for r in rows if r["res"].exit_code == 0]
    assert len(ok) >= math.ceil(0.95 * len(CASES)), [r["res"].stderr for r in rows if r["res"].exit_code]
    total_fallbacks = 0
    for r in rows:
        res, out, case = r["res"], r["out"], r["case"]
        assert res.exception is None or isinstance(res.exception, SystemExit), "no traceback"
        assert "Traceback" not in res.output
        if res.exit_code != 0:
            assert ONE_LINE.match(res.stderr.splitlines(keepends=True)[-1]) and not out.exists()
            continue
        text = out.read_text(encoding="utf-8")
        original = normalize(read_graph_checked(r["emit"] / f"{case.stem}.graph.yaml"))
        perturbed = read_graph_checked(r["emit"] / f"{case.stem}.perturbed.yaml")
        age0, age1 = original.demographics.age, perturbed.demographics.age
        shift = age1 - age0 if age0 is not None and age1 is not None else 0
        assert leak_audit(case.read_text(encoding="utf-8"), text, patient_age=age0, age_shift=shift).clean
        assert check(original, perturbed) == []
        audit = json.loads((r["emit"] / f"{case.stem}.audit.json").read_text(encoding="utf-8"))
        fallbacks = [Fallback.model_validate(f) for f in audit["fallbacks"]]
        assert all(f.backend == "rules-fallback" and f.code in STEP_CODES for f in fallbacks)
        # Every model call that failed for good is a fallback in the audit (extract_graph has no failed call).
        assert len([f for f in fallbacks if f.step != "extract_graph"]) == r["failures"], case.stem
        total_fallbacks += len(fallbacks)
    assert total_fallbacks > 0, "30 % faults must exercise the fallback"


def test_the_mixed_fault_run_is_reproducible() -> None:
    mix = FaultMix(RATE, seed=SEED, retry_after="0")

    def once() -> tuple[str, list[tuple[str, str]]]:
        with ScriptedOpenAIServer(responder=Responder(), fault_mix=mix) as srv, LLMClient(
            config(srv, timeouts={"read": 60.0}, retry_after_cap=0.0)
        ) as client:
            r = deid_with_llm(CASE.read_text(encoding="utf-8"), seed=3, case_id=CASE.stem, llm=client)
        return r.text, [(f.step, f.code) for f in r.audit.fallbacks]

    assert once() == once()


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), rate=st.sampled_from([0.1, 0.3, 0.5]))
@example(seed=0, rate=0.5)
def test_every_failed_model_step_is_a_recorded_fallback(seed: int, rate: float) -> None:
    mix = FaultMix(rate, seed=seed, retry_after="0")
    with ScriptedOpenAIServer(responder=Responder(), fault_mix=mix) as srv, LLMClient(
        config(srv, timeouts={"read": 60.0}, retry_after_cap=0.0)
    ) as client:
        r = deid_with_llm(SHORT.read_text(encoding="utf-8"), seed=seed, case_id=SHORT.stem, llm=client)
        failures = client.metrics.summary(SHORT.stem)["failures"]
    assert len([f for f in r.audit.fallbacks if f.step != "extract_graph"]) == failures
    assert all(f.backend == "rules-fallback" and f.code in STEP_CODES for f in r.audit.fallbacks)
    assert r.stats["fallbacks"] == len(r.audit.fallbacks)
    assert r.audit.violations == [] and check(r.original, r.perturbed) == []
