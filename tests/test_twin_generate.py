"""Generation of RecordTwin corpora: lines of entities, the rules writer, the leak check, the baselines, the llm
backend against the scripted OpenAI-compatible server, resumption and determinism."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("sklearn", exc_type=ImportError, reason="needs the twin extra: pip install -e '.[twin]'")

from anonpsy.llm import LLMClient
from anonpsy.testing import ScriptedOpenAIServer
from anonpsy.twin.anonymize import anonymize, information_loss, verify
from anonpsy.twin.corpus import load_documents
from anonpsy.twin.generate import Corpus, LeakError, Settings, check_text, run, targets
from anonpsy.twin.lines import Line, Slot
from anonpsy.twin.mentions import default_hierarchy, matcher
from anonpsy.twin.store import read_anonymized, read_synthetic, sha256_file, write_anonymized
from anonpsy.twin.table import build_table, read_table, write_table
from anonpsy.twin.writers import _CLAUSES, LLMWriter, Request, RulesWriter, line_sentence
from llm_replies.harness import config
from llm_replies.responder import request_input
from strategies import TWIN_CONCEPTS
from twin_corpus import write_corpus

H = default_hierarchy()
K = 3


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    root = tmp_path_factory.mktemp("twin")
    path = write_corpus(root / "corpus.jsonl", n=60, seed=3)
    docs = load_documents(path)
    table = build_table(docs)
    write_table(table, root / "table", path)
    table = read_table(root / "table")
    sets = table.sets()
    result = anonymize(sets, H, K)
    write_anonymized(result, root / "table" / f"k{K}", table_root=root / "table",
                     table_sha=sha256_file(root / "table" / "table.csv"), loss=information_loss(sets, result, H),
                     verification=verify(sets, result.published, H, K))
    texts = {d.doc_id: d.text for d in docs}
    return Corpus(table, texts, read_anonymized(root / "table" / f"k{K}"), H, matcher())


def _deleted(c: Corpus, d: str) -> list[str]:
    """Concepts of ``d`` that its published set neither keeps nor generalises (by outcome)."""
    assert c.anon is not None
    return sorted(x for x, (status, _) in c.anon.outcomes.get(d, {}).items() if status.startswith("deleted"))


def test_lines_show_generalisations_and_blank_deleted_entities(corpus: Corpus) -> None:
    from anonpsy.twin.lines import entity_lines

    seen_blank = seen_general = False
    for d in targets(corpus, Settings()):
        lines = entity_lines(corpus.table.mentions[d], H, corpus.item(d))
        pub = corpus.published(d)
        for ln in lines:
            for s in ln.slots:
                if s.concept is None:
                    seen_blank = True
                    assert s.render() == "___"
                else:
                    assert s.concept in pub
                    seen_general |= s.general
    assert seen_blank and seen_general


def test_rules_corpus_names_no_deleted_entity(corpus: Corpus, tmp_path: Path) -> None:
    _, res = run(corpus, Settings(), RulesWriter(), tmp_path / "rt")
    assert res.generated == len(targets(corpus, Settings())) and not res.dropped
    _, docs = read_synthetic(tmp_path / "rt")
    for doc in docs:
        assert check_text(corpus, doc.source, doc.text).violations == ()
    summary = json.loads((tmp_path / "rt" / "summary.json").read_text())
    assert summary["violations_this_run"] == {} and summary["attempts"] == {"1": len(docs)}
    # the shared file says nothing about the sources: shuffled, opaque ids, links apart
    ids = [json.loads(x)["id"] for x in (tmp_path / "rt" / "synthetic.jsonl").read_text().splitlines()]
    assert all(re.fullmatch(r"syn-\d{5}", i) for i in ids)
    assert [d.source for d in docs] != sorted(d.source for d in docs)
    assert not (tmp_path / "rt" / "journal.jsonl").exists()


def test_check_catches_deleted_not_generalised_and_rare_concepts(corpus: Corpus) -> None:
    d = next(x for x in targets(corpus, Settings()) if _deleted(corpus, x))
    gone = _deleted(corpus, d)[0]
    chk = check_text(corpus, d, f"The patient reports {H.name(gone)}.")
    assert ("deleted", gone) in chk.violations
    general = next((x for x in corpus.published(d) if H[x].level > 0), None)
    if general is not None:
        member = next(c for c in H.concepts if H[c].level == 0 and general in H.ancestors(c))
        if member not in corpus.original(d):
            assert check_text(corpus, d, f"Given {H.name(member)}.").violations == (("not_generalised", member),)
    allowed = " ".join(H.name(x) + "." for x in sorted(corpus.published(d)))
    assert check_text(corpus, d, allowed).violations == ()


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(st.lists(st.lists(st.sampled_from([*TWIN_CONCEPTS, None]), min_size=1, max_size=4), max_size=6),
       st.integers(0, 10_000))
def test_generated_documents_name_no_deleted_entity(corpus: Corpus, raw: list[list[str | None]], seed: int) -> None:
    """Any lines (published concepts, generalisations, blanks) give a rules document naming only them."""
    lines = []
    allowed: set[str] = set()
    for i, row in enumerate(raw):
        slots = []
        for c in row:
            if c is None:
                slots.append(Slot(None, None, "symptom"))
                continue
            item = H.ancestors(c)[0] if seed % 2 and H.ancestors(c) else c
            allowed.add(item)
            slots.append(Slot(item, H.name(item), H.type_of(item), H[item].level > 0))
        lines.append(Line(i * 2, tuple(slots)))
    req = Request("x", tuple(lines), 2 * len(lines) + 3, (), seed)
    text = RulesWriter().write(req)
    found = {s.concept for s in matcher().spans(text)}
    implied = {a for x in allowed for a in H.lineage(x)}
    assert found <= implied
    assert RulesWriter().write(req) == text


def test_template_words_never_read_as_a_concept() -> None:
    for etype, templates in _CLAUSES.items():
        for tpl in templates:
            words = tpl.format(x="", was="was", **{"is": "is"})
            assert matcher().spans(words) == [], (etype, tpl)
    assert line_sentence(Line(0, (Slot(None, None, "symptom"),)), __import__("random").Random(0)) is None


def test_every_entity_type_is_written() -> None:
    """A line naming only one type still gives a sentence naming it, for every type the table reads."""
    import random

    from anonpsy.twin.concepts import ENTITY_TYPES

    assert set(_CLAUSES) == set(ENTITY_TYPES)
    for etype in ENTITY_TYPES:
        got = line_sentence(Line(0, (Slot("x:y", "total knee arthroplasty", etype),)), random.Random(0))
        assert got is not None and "total knee arthroplasty" in got.lower() and got[0].isupper(), etype


@settings(max_examples=8, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(st.integers(0, 2**31), st.sampled_from(["recordtwin", "orge", "orgd", "replace"]))
def test_generation_is_deterministic_given_a_seed(corpus: Corpus, seed: int, method: str) -> None:
    """Three runs per example (a second of work each): eight examples in every profile; the process-hash-seed
    side is tested in test_cli_twin.py."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = [Path(tmp) / x for x in "abc"]
        for o, s in zip(out, (seed, seed, seed + 1), strict=True):
            run(corpus, Settings(method=method, seed=s, limit=12), RulesWriter(), o)
        a = (out[0] / "synthetic.jsonl").read_bytes()
        assert a == (out[1] / "synthetic.jsonl").read_bytes()
        assert (out[0] / "links.jsonl").read_bytes() == (out[1] / "links.jsonl").read_bytes()
        assert a != (out[2] / "synthetic.jsonl").read_bytes()  # another seed: another order at least


class _Flaky(RulesWriter):
    """Stops the run (like an interruption) after ``stop`` documents."""

    def __init__(self, stop: int) -> None:
        self.n, self.stop = 0, stop

    def write(self, req: Request, feedback: str = "") -> str:
        self.n += 1
        if self.n > self.stop:
            raise KeyboardInterrupt
        return super().write(req, feedback)


def test_an_interrupted_run_resumes_to_the_same_bytes(corpus: Corpus, tmp_path: Path) -> None:
    run(corpus, Settings(seed=2), RulesWriter(), tmp_path / "whole")
    with pytest.raises(KeyboardInterrupt):
        run(corpus, Settings(seed=2), _Flaky(5), tmp_path / "cut")
    journal = (tmp_path / "cut" / "journal.jsonl").read_text().splitlines()
    assert len(journal) == 6 and not (tmp_path / "cut" / "synthetic.jsonl").exists()
    with (tmp_path / "cut" / "journal.jsonl").open("a") as fh:
        fh.write('{"source": "trunc')  # a line cut short
    _, res = run(corpus, Settings(seed=2), RulesWriter(), tmp_path / "cut")
    assert res.resumed == 5
    for name in ("synthetic.jsonl", "links.jsonl"):
        assert (tmp_path / "cut" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()
    from anonpsy.errors import AnonpsyError

    with pytest.raises(AnonpsyError, match="T106"):
        run(corpus, Settings(seed=9), RulesWriter(), tmp_path / "cut")


def test_replace_keeps_text_and_rewrites_only_mentions(corpus: Corpus, tmp_path: Path) -> None:
    run(corpus, Settings(method="replace"), RulesWriter(), tmp_path / "rep")
    _, docs = read_synthetic(tmp_path / "rep")
    for doc in docs:
        for gone in _deleted(corpus, doc.source):
            assert gone not in {s.concept for s in matcher().spans(doc.text)}
    changed = [d for d in docs if d.text != corpus.texts[d.source]]
    assert changed and all("___" in d.text or d.text != corpus.texts[d.source] for d in changed)


@pytest.mark.parametrize("method", ["orge", "orgd"])
def test_baselines_write_from_the_original_entities(corpus: Corpus, tmp_path: Path, method: str) -> None:
    run(corpus, Settings(method=method), RulesWriter(), tmp_path / method)
    _, docs = read_synthetic(tmp_path / method)
    assert len(docs) == len(targets(corpus, Settings()))
    leaked = sum(1 for d in docs if check_text(corpus, d.source, d.text).violations)
    assert leaked > 0  # what RecordTwin exists to prevent


# -------------------------------------------------------------------------------------------------------------
# llm backend against the scripted server


def _clean_reply(inp: dict[str, Any]) -> str:
    names = []
    for line in inp["target"]["lines"]:
        for part in line.split("; "):
            if part != "___":
                names.append(part.replace(" (general)", ""))
    return "HISTORY:\n" + " ".join(f"The record mentions {n}." for n in names) + "\n"


class Scripted:
    """Writes the target's names; on a first attempt also names ``inject[i]`` for the i-th target."""

    def __init__(self, inject: list[str | None], always: bool = False) -> None:
        self.inject, self.always = inject, always
        self.first = 0
        self.feedback: list[str] = []

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        inp, feedback = request_input(body)
        text = _clean_reply(inp)
        if feedback:
            self.feedback.append(feedback)
            extra = self.inject[min(self.first - 1, len(self.inject) - 1)] if self.always else None
        else:
            extra = self.inject[self.first] if self.first < len(self.inject) else None
            self.first += 1
        if extra:
            text += f"She was also treated with {extra} before.\n"
        return {"text": text}


@pytest.fixture
def leaky_target(corpus: Corpus) -> tuple[int, str, str]:
    """(index of the first target with a deleted entity, its id, the deleted concept's name)."""
    ts = targets(corpus, Settings())
    i = next(j for j, d in enumerate(ts) if _deleted(corpus, d))
    d = ts[i]
    return i, d, H.name(_deleted(corpus, d)[0])


def test_llm_reply_reintroducing_a_deleted_entity_is_caught_and_rewritten(
        corpus: Corpus, tmp_path: Path, leaky_target: tuple[int, str, str]) -> None:
    i, d, name = leaky_target
    inject: list[str | None] = [None] * i + [name]
    responder = Scripted(inject)
    with ScriptedOpenAIServer(responder=responder) as srv, LLMClient(config(srv, concurrency=1)) as client:
        _, res = run(corpus, Settings(backend="llm", limit=i + 1), LLMWriter(client), tmp_path / "llm")
        reqs = srv.chat_requests
    assert res.violations["deleted"] >= 1 and not res.dropped
    assert {r.template_id for r in reqs} == {"twin_generate"}
    assert len(reqs) == i + 2  # one re-ask, for the leaking document only
    assert len(responder.feedback) == 1 and name in responder.feedback[0]
    assert corpus.texts[d][:40] not in responder.feedback[0]
    summary = json.loads((tmp_path / "llm" / "summary.json").read_text())
    assert summary["attempts"].get("2") == 1
    _, docs = read_synthetic(tmp_path / "llm")
    twin = next(x for x in docs if x.source == d)
    assert name not in twin.text and check_text(corpus, d, twin.text).violations == ()
    # the prompt carries the lines of entities, the sentence count and separately anonymized examples only
    inp, _ = request_input(reqs[i].body or {})
    assert set(inp) == {"examples", "target"} and len(inp["examples"]) == 2
    assert name not in json.dumps(inp["target"])


def test_llm_run_fails_loudly_when_every_reply_leaks(corpus: Corpus, tmp_path: Path,
                                                     leaky_target: tuple[int, str, str]) -> None:
    i, d, name = leaky_target
    inject: list[str | None] = [None] * i + [name]
    with ScriptedOpenAIServer(responder=Scripted(inject, always=True)) as srv, \
            LLMClient(config(srv, concurrency=1)) as client:
        with pytest.raises(LeakError) as info:
            run(corpus, Settings(backend="llm", limit=i + 1, max_attempts=3), LLMWriter(client), tmp_path / "f")
        assert len(srv.chat_requests) == i + 3
    assert info.value.code == "T107" and d in info.value.one_line() and name not in info.value.one_line()
    assert not (tmp_path / "f" / "synthetic.jsonl").exists()
    with ScriptedOpenAIServer(responder=Scripted(inject, always=True)) as srv, \
            LLMClient(config(srv, concurrency=1)) as client:
        _, res = run(corpus, Settings(backend="llm", limit=i + 1, on_violation="drop"), LLMWriter(client),
                     tmp_path / "d")
    assert res.dropped == [d]
    assert d not in {x.source for x in read_synthetic(tmp_path / "d")[1]}


def test_llm_orgd_shows_the_source_document(corpus: Corpus, tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    def responder(body: dict[str, Any]) -> dict[str, Any]:
        inp, _ = request_input(body)
        seen.append(inp)
        return {"text": "HISTORY:\nThe patient was seen in clinic.\n"}

    with ScriptedOpenAIServer(responder=responder) as srv, LLMClient(config(srv, concurrency=1)) as client:
        run(corpus, Settings(method="orgd", backend="llm", limit=2), LLMWriter(client), tmp_path / "o")
        assert {r.template_id for r in srv.chat_requests} == {"twin_orgd"}
    first = targets(corpus, Settings())[0]
    assert seen[0]["document"] == corpus.texts[first] and seen[0]["sentences"] > 0


def test_llm_requests_in_parallel_give_the_same_corpus(corpus: Corpus, tmp_path: Path) -> None:
    def responder(body: dict[str, Any]) -> dict[str, Any]:
        return {"text": _clean_reply(request_input(body)[0])}

    outs = []
    for workers in (1, 4):
        with ScriptedOpenAIServer(responder=responder, latency=0.01) as srv, \
                LLMClient(config(srv, concurrency=workers)) as client:
            writer = LLMWriter(client)
            assert writer.workers == workers
            run(corpus, Settings(backend="llm", limit=16), writer, tmp_path / str(workers))
            if workers > 1:
                assert srv.max_in_flight > 1
        outs.append((tmp_path / str(workers) / "synthetic.jsonl").read_bytes())
    assert outs[0] == outs[1]


def test_boilerplate_reuses_only_shared_statements_and_headings_that_name_nothing() -> None:
    from anonpsy.twin.textops import Boilerplate

    texts = [f"RESPIRATIONS:\nThere are no carotid bruits.\n\nPLAN:\nThe patient will return in two weeks. "
             f"Prostate cancer. The patient reports insomnia.\n\nNOTE {i}:\nThe patient was seen by doctor {i}.\n"
             for i in range(6)]
    bp = Boilerplate.build(texts, matcher(), floor=5)
    assert not bp.heading_ok("RESPIRATIONS")  # names the respiratory-rate test: a twin must not carry it
    assert bp.heading_ok("PLAN")
    assert bp.is_common("The patient will return in two weeks.")
    assert not bp.is_common("Prostate cancer.")  # a verbless list value is content, not style
    assert not bp.is_common("The patient reports insomnia.")  # names a concept
    assert not bp.is_common("The patient was seen by doctor 3.")  # in one document only
