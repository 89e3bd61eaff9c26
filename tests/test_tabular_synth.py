"""anonpsy tabular synth: rules and llm backends for every shipped instrument, personas, knowledge base."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from anonpsy.cli import main
from anonpsy.llm import LLMClient, LLMConfig
from anonpsy.tabular.instruments import available_instruments, load_instrument
from anonpsy.tabular.personas import ATTRIBUTES, load_priors, sample_persona
from anonpsy.tabular.synth import synthesize
from anonpsy.tabular.table import parse_table
from anonpsy.testing.openai_server import Fault, ScriptedOpenAIServer, template_of
from anonpsy.yamlio import dump_yaml

INSTRUMENTS = sorted(available_instruments())
FAST = {"retries": 0, "cache_path": None, "timeouts": {"connect": 1, "read": 5, "write": 1, "pool": 1}}


def test_every_issue_instrument_ships() -> None:
    assert set(INSTRUMENTS) == {"dsm5_separation_anxiety", "dsm5_specific_phobia", "dsm5_social_anxiety",
                                "dsm5_panic", "dsm5_agoraphobia", "dsm5_generalized_anxiety", "phq9", "gad7"}
    for iid in INSTRUMENTS:
        inst = load_instrument(iid)
        if iid.startswith("dsm5_"):
            assert (inst.n_items, inst.values) == (10, (0, 1, 2, 3, 4))
        else:
            assert inst.values == (0, 1, 2, 3) and inst.n_items == {"phq9": 9, "gad7": 7}[iid]


def _valid_table(csv_text: str, iid: str, n: int) -> None:
    inst = load_instrument(iid)
    table = parse_table(csv_text, "out.csv")
    assert table.columns == ["sex", "age", *inst.columns]
    assert table.n_rows == n
    assert set(table.distinct("sex")) <= {"1", "2"}
    lo, hi = inst.age_range
    assert all(lo <= int(a) <= hi for a in table.values("age") if a is not None)
    for col in inst.columns:
        assert {int(v) for v in table.values(col) if v is not None} <= set(inst.values)
        assert table.missing(col) == 0


@pytest.mark.parametrize("iid", INSTRUMENTS)
def test_rules_backend_gives_a_valid_table_for_every_instrument(iid: str) -> None:
    result = synthesize(load_instrument(iid), 60, priors=load_priors(), seed=3)
    _valid_table(result.to_csv(), iid, 60)
    assert len({tuple(a) for a in result.answers}) > 20, "answers vary between personas"


def test_rules_backend_is_deterministic_and_rows_do_not_depend_on_n() -> None:
    inst, pr = load_instrument("gad7"), load_priors()
    a = synthesize(inst, 40, priors=pr, seed=5)
    b = synthesize(inst, 40, priors=pr, seed=5)
    c = synthesize(inst, 10, priors=pr, seed=5)
    assert a.to_csv() == b.to_csv()
    assert a.to_csv().splitlines()[:11] == c.to_csv().splitlines()
    assert synthesize(inst, 40, priors=pr, seed=6).to_csv() != a.to_csv()


def test_rules_backend_severity_orders_the_totals() -> None:
    """Higher prior severity gives higher mean totals (the latent model is monotone in severity)."""
    inst, pr = load_instrument("phq9"), load_priors()
    result = synthesize(inst, 400, priors=pr, seed=1)
    means = {}
    for level in ("none", "mild", "moderate", "severe"):
        totals = [sum(a) for p, a in zip(result.personas, result.answers, strict=True) if p.severity == level]
        means[level] = sum(totals) / len(totals)
    assert means["none"] < means["mild"] < means["moderate"] < means["severe"]


@settings(max_examples=20)
@given(st.integers(0, 10_000), st.integers(0, 500))
def test_sampled_personas_stay_within_the_priors(seed: int, row: int) -> None:
    pr = load_priors()
    inst = load_instrument("dsm5_panic")
    p = sample_persona(pr, seed, row, inst)
    assert pr.age.min <= p.age <= pr.age.max
    for attr in ATTRIBUTES:
        assert pr.attribute(attr).level(getattr(p, attr)) is not None


# ------------------------------------------------------------------------------------------------- llm backend


def _payload(body: dict[str, Any]) -> dict[str, Any]:
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    start = user.index("<<<\n") + 4
    return dict(json.loads(user[start:user.index("\n>>>", start)]))


def reply(body: dict[str, Any]) -> dict[str, Any]:
    """A scripted respondent: the answer follows the item number and the earlier answers it was shown."""
    template, _ = template_of(body)
    assert template == "tabular_item"
    payload = _payload(body)
    codes = [s["value"] for s in payload["questionnaire"]["response_scale"]]
    j = payload["current_item"]["number"]
    assert [a["number"] for a in payload["earlier_answers"]] == list(range(1, j)), "the loop carries its memory"
    return {"value": codes[(j + len(payload["earlier_answers"])) % len(codes)]}


def _client(srv: ScriptedOpenAIServer) -> LLMClient:
    return LLMClient(LLMConfig.model_validate({"profile": "scripted", "base_url": srv.base_url, **FAST}))


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(responder=reply) as srv:
        yield srv


@pytest.mark.parametrize("iid", INSTRUMENTS)
def test_llm_backend_gives_a_valid_table_for_every_instrument(iid: str, server: ScriptedOpenAIServer) -> None:
    inst = load_instrument(iid)
    with _client(server) as client:
        result = synthesize(inst, 3, priors=load_priors(), seed=2, backend="llm", client=client, workers=2)
    _valid_table(result.to_csv(), iid, 3)
    codes = inst.values
    assert result.answers[0] == [codes[(2 * j - 1) % len(codes)] for j in range(1, inst.n_items + 1)]
    body = next(r.body for r in reversed(server.requests_for("tabular_item")) if r.body)
    assert body is not None
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["value"]["enum"] == list(codes), "structured output allows exactly the codes"


def test_llm_backend_recovers_from_one_malformed_reply() -> None:
    faults = [Fault("malformed_json", at=1)]
    with ScriptedOpenAIServer(responder=reply, faults=faults) as srv, _client(srv) as client:
        result = synthesize(load_instrument("gad7"), 2, priors=load_priors(), seed=0, backend="llm", client=client)
        summary = client.metrics.summary()
        assert (summary["reasks"], summary["failures"], summary["calls"]) == (1, 0, 14)
        assert len(srv.chat_requests) == 15, "one extra request: the re-ask"
    _valid_table(result.to_csv(), "gad7", 2)


def _config(path: Path, srv: ScriptedOpenAIServer) -> Path:
    path.write_text(dump_yaml({"profile": "scripted", "base_url": srv.base_url, **FAST}), encoding="utf-8")
    return path


def test_llm_backend_fails_loudly_on_persistent_malformed_replies(tmp_path: Path) -> None:
    faults = [Fault("malformed_json", template="tabular_item", times=None)]
    out = tmp_path / "syn.csv"
    with ScriptedOpenAIServer(responder=reply, faults=faults) as srv:
        result = CliRunner().invoke(main, ["tabular", "synth", "phq9", "-n", "2", "--backend", "llm",
                                           "--llm-config", str(_config(tmp_path / "llm.yaml", srv)), "-o", str(out)])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("E125") and "row 1 item 1" in lines[0]
    assert not out.exists() and not (tmp_path / "syn.provenance.json").exists(), "nothing half-written"


def test_llm_backend_rejects_a_code_outside_the_scale(tmp_path: Path) -> None:
    """A reply whose value is not a code fails the schema (enum), is re-asked once, then fails the run."""
    with ScriptedOpenAIServer(responder=lambda body: {"value": 7}) as srv:
        result = CliRunner().invoke(main, ["tabular", "synth", "gad7", "-n", "1", "--backend", "llm",
                                           "--llm-config", str(_config(tmp_path / "llm.yaml", srv)),
                                           "-o", str(tmp_path / "x.csv")])
        assert len(srv.chat_requests) == 2
    assert result.exit_code == 2 and result.output.startswith("E125")


def test_cli_synth_llm_with_a_knowledge_base_records_sources(tmp_path: Path) -> None:
    pytest.importorskip("bm25s", reason="the tabular extra (bm25s) is not installed")
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "anxiety.md").write_text("# Worry\n\nExcessive worry about many everyday matters, hard to control.\n\n"
                                   "# Restlessness\n\nFeeling keyed up, restless or on edge; muscle tension.\n",
                                   encoding="utf-8")
    (kb / "mood.txt").write_text("Low mood and loss of interest most of the day.\n", encoding="utf-8")
    out = tmp_path / "syn.csv"
    with ScriptedOpenAIServer(responder=reply) as srv:
        result = CliRunner().invoke(main, ["tabular", "synth", "gad7", "-n", "2", "--backend", "llm", "--kb",
                                           str(kb), "--llm-config", str(_config(tmp_path / "llm.yaml", srv)),
                                           "-o", str(out), "-k", "2"])
        payload = _payload(srv.requests_for("tabular_item")[2].body or {})
    assert result.exit_code == 0, result.output
    _valid_table(out.read_text(encoding="utf-8"), "gad7", 2)
    prov = json.loads((tmp_path / "syn.provenance.json").read_text(encoding="utf-8"))
    assert prov["real_data_used"] is False and prov["backend"] == "llm"
    assert prov["knowledge_base"]["retriever"] == "bm25"
    assert set(prov["knowledge_base"]["files"]) == {"anxiety.md", "mood.txt"}
    hits = prov["retrieval"]["gad7_2"]
    assert hits and hits[0]["source"] == "anxiety.md" and hits[0]["lines"] == [1, 7]
    assert "text" not in hits[0], "provenance keeps sources and scores, not passage text"
    assert payload["clinical_background"], "the prompt carries the retrieved passages"


def test_cli_synth_rules_writes_table_and_provenance(tmp_path: Path) -> None:
    out = tmp_path / "t.csv"
    result = CliRunner().invoke(main, ["tabular", "synth", "dsm5_panic", "-n", "25", "--kb", "none", "-o", str(out),
                                       "--seed", "4"])
    assert result.exit_code == 0, result.output
    _valid_table(out.read_text(encoding="utf-8"), "dsm5_panic", 25)
    prov = json.loads((tmp_path / "t.provenance.json").read_text(encoding="utf-8"))
    assert prov["instrument"]["id"] == "dsm5_panic" and len(prov["personas"]) == 25
    assert prov["priors"]["sex_coding"] == {"female": 2, "male": 1}


@pytest.mark.parametrize("args,code", [
    (["nope", "-n", "3"], "E109"),
    (["gad7", "-n", "0"], "E109"),
    (["gad7", "-n", "3", "--backend", "llm", "--kb", "/no/such/dir"], "E100"),
])
def test_cli_synth_bad_input_is_one_line(args: list[str], code: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["tabular", "synth", *args, "-o", str(tmp_path / "x.csv")])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(code), result.output


def test_passages_keep_their_source_lines_and_word_limit() -> None:
    from anonpsy.tabular.kb import split_passages

    text = "one two three\nfour\n\nfive six\n\n\nseven eight nine ten eleven\n"
    got = [(p.start_line, p.end_line, p.text) for p in split_passages(text, "f.md", max_words=5)]
    assert got == [(1, 2, "one two three four"), (4, 4, "five six"), (7, 7, "seven eight nine ten eleven")]
    long = split_passages(" ".join(f"w{i}" for i in range(12)), "g.md", max_words=5)
    assert [len(p.text.split()) for p in long] == [5, 5, 2]


def test_bm25_ranks_by_stem_and_returns_only_matching_passages() -> None:
    pytest.importorskip("bm25s", reason="the tabular extra (bm25s) is not installed")
    from anonpsy.tabular.kb import KnowledgeBase, Passage

    kb = KnowledgeBase([Passage("a.md", 1, 1, "Panic attacks with a pounding heart and sweating."),
                        Passage("b.md", 1, 1, "Worry about work, health and money that is hard to control."),
                        Passage("c.md", 1, 1, "Fear of being judged in social situations.")])
    hits = kb.search("constant worrying about money", k=3)
    assert [h.passage.source for h in hits] == ["b.md"]
    assert kb.search("", k=3) == []


def test_embedding_retriever_ranks_by_cosine() -> None:
    pytest.importorskip("numpy", reason="the tabular extra (numpy) is not installed")
    from anonpsy.tabular.kb import KnowledgeBase, Passage

    class Words:
        """A toy encoder: one dimension per known word, unit length."""

        name = "toy-words"
        vocab = ("panic", "worry", "social", "money")

        def encode(self, texts: list[str]) -> list[list[float]]:
            out = []
            for t in texts:
                v = [float(w in t.lower()) for w in self.vocab]
                norm = sum(x * x for x in v) ** 0.5 or 1.0
                out.append([x / norm for x in v])
            return out

    kb = KnowledgeBase([Passage("a.md", 1, 1, "panic"), Passage("b.md", 1, 1, "worry about money"),
                        Passage("c.md", 1, 1, "social fear")], retriever="embeddings", encoder=Words())
    hits = kb.search("money worry", k=2)
    assert hits[0].passage.source == "b.md" and len(hits) == 2
    assert hits[0].score == pytest.approx(1.0) and kb.model_name == "toy-words"
