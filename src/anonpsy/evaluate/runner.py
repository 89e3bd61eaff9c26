"""The evaluation protocol end to end: methods on a corpus, metrics, judge tasks, statistics and report.

:func:`evaluate` runs every method on every case (through the content-addressed :class:`EvalCache`, so a rerun
computes only what changed), then per case × method:

=================  ==========================================================================================
column             meaning
=================  ==========================================================================================
``cosine``         cosine similarity of original and output embeddings (model name recorded in the report)
``roundtrip_dx_f1`` round trip, judged by the project's own extractor: diagnosis soft-F1 of the diagnoses the
                   rules extractor finds in the output, against the case's ground-truth diagnoses, else those
                   it finds in the original (extractor against extractor: not an independent judge)
``rouge_l``        ROUGE-L F of output against original
``leak_count``     source identifiers found verbatim in the output (:func:`anonpsy.pipeline.leak_audit`)
``reid_hit``       nearest-document Jaccard re-identification credit (1, 0 or 1/k for a k-way tie); the
                   corpus-level accuracy is ``reid_accuracy``
``structure_f1``   round trip: the output re-extracted with the rules extractor against the graph it was
                   generated from (micro-F1 over diagnoses, symptoms, current symptoms, treatments and edges);
                   for methods without a graph, against the graph of the original
``affirmed_dx_recall``  facts annotations (``--facts``): independent scorer (:mod:`~anonpsy.evaluate.fidelity`),
                   share of the affirmed diagnoses still asserted; ``current_med_recall`` likewise for
                   current medications; ``contradictions`` contradicted facts; ``excess_contradictions`` those
                   the original itself does not show; ``longest_copied_run`` / ``max_sentence_copied_run``
                   words copied verbatim from the source (doses excepted)
``judge_soft_f1``  judge: soft-F1 of the diagnoses the judge predicts from the output alone (``--judge``)
``dx_acceptable``  judge: 1 when the reference diagnoses are acceptable for the output, else 0
``reid_score``     judge: mean insider re-identification rubric score (1–5) over the A/B comparisons
=================  ==========================================================================================

A case that fails for a method, or a judge task that fails for a case, is recorded in
:attr:`Evaluation.failures` with its one-line error (never narrative text) and leaves its values missing;
nothing is dropped silently. :func:`write_evaluation` writes the report (``report.md``, ``report.json``,
figures, via :mod:`anonpsy.evaluate.report`), ``results.csv`` and ``evaluation.json`` (timing, cache
statistics, judge records with A/B orders and seeds, failures).
"""

from __future__ import annotations

import csv
import io
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from anonpsy import errors
from anonpsy.errors import AnonpsyError
from anonpsy.evaluate import judge as judge_tasks
from anonpsy.evaluate.cache import EvalCache, KindStats, digest
from anonpsy.evaluate.corpus import Case
from anonpsy.evaluate.embeddings import Encoder
from anonpsy.evaluate.methods import METHODS, MethodOutput, method_config, rules_digest, run_method
from anonpsy.graph import CaseGraph
from anonpsy.yamlio import write_atomic

EVALUATION_VERSION = 2
METRICS_VERSION = 2
BASE_METRICS: tuple[str, ...] = ("cosine", "roundtrip_dx_f1", "rouge_l", "leak_count", "reid_hit", "structure_f1")
FIDELITY_METRICS: tuple[str, ...] = ("affirmed_dx_recall", "current_med_recall", "contradictions",
                                     "excess_contradictions", "longest_copied_run", "max_sentence_copied_run")
ORIGINAL = "original"
JUDGE_METRICS: tuple[str, ...] = ("judge_soft_f1", "dx_acceptable", "reid_score")

Progress = Callable[[str], None]
T = TypeVar("T")


@dataclass(frozen=True)
class Failure:
    """One case that could not be completed at one stage (``method``, ``metrics`` or ``judge``)."""

    stage: str
    method: str
    case_id: str
    error: str
    task: str | None = None


@dataclass
class MethodTiming:
    """Per method: cases computed in this run, taken from the cache, failed; seconds spent in this run, and
    the seconds of every case's original computation (recorded in the cache)."""

    method: str
    computed: int = 0
    cached: int = 0
    failed: int = 0
    seconds: float = 0.0
    case_seconds: float = 0.0

    @property
    def mean_case_seconds(self) -> float:
        """Mean compute seconds per case (cached cases count with their recorded time)."""
        n = self.computed + self.cached
        return self.case_seconds / n if n else math.nan


@dataclass
class Evaluation:
    """Everything one evaluation run produced (values per case, timing, cache statistics, judge records)."""

    case_ids: list[str]
    methods: list[str]
    skipped: list[tuple[str, str]]
    reference: str | None
    model: str
    seed: int
    judged: bool
    rows: list[dict[str, Any]]
    corpus: dict[str, dict[str, float]]
    timing: dict[str, MethodTiming]
    cache: dict[str, KindStats]
    failures: list[Failure]
    judge_records: list[dict[str, Any]]
    dx_sources: dict[str, str]
    seconds: float
    metrics_seconds: float = 0.0
    judge_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    fidelity: dict[str, dict[str, Any]] = field(default_factory=dict)
    facts_source: str | None = None

    def metrics(self) -> list[str]:
        """Metric columns with at least one value, in table order."""
        out: list[str] = []
        for m in (*BASE_METRICS, *FIDELITY_METRICS, *JUDGE_METRICS):
            if any(isinstance(r.get(m), float | int) and not math.isnan(float(r[m])) for r in self.rows):
                out.append(m)
        return out

    def mean(self, method: str, metric: str) -> float:
        """Mean of a metric over the cases of a method (NaN when none)."""
        xs = [float(r[metric]) for r in self.rows if r["method"] == method and r.get(metric) is not None
              and not math.isnan(float(r[metric]))]
        return math.fsum(xs) / len(xs) if xs else math.nan

    def computed_anything(self) -> bool:
        """Whether this run computed any method output, metric or judge reply (False: all from the cache)."""
        return any(s.misses for s in self.cache.values())


def _error_line(exc: BaseException) -> str:
    if isinstance(exc, AnonpsyError):
        return exc.one_line()
    return f"E999 internal error ({type(exc).__name__})"


def _micro_f1(counts: Mapping[str, Any]) -> float:
    tp = int(sum(c.tp for c in counts.values()))
    fp = int(sum(c.fp for c in counts.values()))
    fn = int(sum(c.fn for c in counts.values()))
    if tp + fp + fn == 0:
        return 1.0
    return 2 * tp / (2 * tp + fp + fn)


def _dx_labels(graph: CaseGraph) -> list[str]:
    """The diagnoses a graph asserts (a diagnosis ruled out or to be ruled out is not one of the case's)."""
    return [d.rule_id or d.label for d in graph.diagnoses if d.asserted]


def _parallel(items: Sequence[T], fn: Callable[[T], Any], workers: int) -> list[Any]:
    """``fn`` over ``items`` (threads when ``workers > 1``), results in item order."""
    if workers <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))


@dataclass(frozen=True)
class _JudgeJob:
    """One judge call: its task, case, methods (A then B for ``reident``), cache-key parts and output texts."""

    task: str
    case: Case
    methods: tuple[str, ...]
    parts: dict[str, Any]
    texts: tuple[str, ...]
    ref: tuple[str, ...] = ()


class _Run:
    """State of one evaluation run."""

    def __init__(self, cases: Sequence[Case], cache: EvalCache, encoder: Encoder, seed: int, llm: Any,
                 workers: int, progress: Progress | None) -> None:
        self.cases = list(cases)
        self.cache = cache
        self.encoder = encoder
        self.seed = seed
        self.llm = llm
        self.workers = workers
        self.progress = progress or (lambda _msg: None)
        self.failures: list[Failure] = []
        self.outputs: dict[str, dict[str, MethodOutput]] = {}
        self.values: dict[tuple[str, str], dict[str, float]] = {}
        self.timing: dict[str, MethodTiming] = {}
        self.judge_records: list[dict[str, Any]] = []
        self._orig_graphs: dict[str, CaseGraph] = {}
        self.position_a_rate: float | None = None
        self.metrics_seconds = 0.0
        self._emb: dict[str, list[float]] = {}

    # -- originals -------------------------------------------------------------------------------------

    def original_graph(self, case: Case) -> CaseGraph:
        from anonpsy.extract import extract

        if case.case_id not in self._orig_graphs:
            self._orig_graphs[case.case_id] = extract(case.text, case_id=case.case_id)
        return self._orig_graphs[case.case_id]

    def reference_dx(self, case: Case) -> list[str]:
        if case.diagnoses is not None:
            return list(case.diagnoses)
        return _dx_labels(self.original_graph(case))

    # -- methods ---------------------------------------------------------------------------------------

    def run_methods(self, methods: Sequence[str]) -> None:
        for method in methods:
            spec = METHODS[method]
            cfg = method_config(method, self.llm)
            timing = self.timing.setdefault(method, MethodTiming(method))
            done: dict[str, MethodOutput] = {}
            todo: list[tuple[Case, str]] = []
            for case in self.cases:
                key = self.cache.key("output", {"method": method, "version": spec.version, "seed": self.seed,
                                                "text": case.text_sha256, "config": cfg})
                hit = self.cache.get("output", key)
                if hit is not None:
                    done[case.case_id] = MethodOutput(hit["text"], hit.get("graph"), dict(hit.get("stats", {})))
                    timing.cached += 1
                    timing.case_seconds += float(hit.get("seconds", 0.0))
                else:
                    todo.append((case, key))

            def one(item: tuple[Case, str], method: str = method) -> tuple[MethodOutput | None, str | None, float]:
                case, _ = item
                t0 = time.perf_counter()
                try:
                    out = run_method(method, case.text, seed=self.seed, case_id=case.case_id, llm=self.llm)
                except Exception as exc:  # a failing case is recorded, never aborts the run
                    return None, _error_line(exc), time.perf_counter() - t0
                return out, None, time.perf_counter() - t0

            t0 = time.perf_counter()
            results = _parallel(todo, one, self.workers if spec.needs_llm else 1)
            timing.seconds += time.perf_counter() - t0
            for (case, key), (out, err, secs) in zip(todo, results, strict=True):
                if out is None:
                    timing.failed += 1
                    self.failures.append(Failure("method", method, case.case_id, str(err)))
                    continue
                self.cache.put("output", key, {"text": out.text, "graph": out.graph, "stats": out.stats,
                                               "seconds": round(secs, 6)})
                done[case.case_id] = out
                timing.computed += 1
                timing.case_seconds += secs
            self.outputs[method] = {c.case_id: done[c.case_id] for c in self.cases if c.case_id in done}
            self.progress(f"{method}: {timing.computed} computed, {timing.cached} cached, {timing.failed} failed")

    # -- metrics ---------------------------------------------------------------------------------------

    def _metric_key(self, case: Case, out: MethodOutput) -> str:
        return self.cache.key("metrics", {
            "version": METRICS_VERSION, "encoder": self.encoder.name, "original": case.text_sha256,
            "output": digest(out.text), "graph": digest(out.graph) if out.graph is not None else None,
            "dx": list(case.diagnoses) if case.diagnoses is not None else None, "rules": rules_digest(),
        })

    def _case_metrics(self, case: Case, out: MethodOutput, cos: float) -> dict[str, float]:
        from anonpsy.evaluate.diagnosis import diagnosis_soft_f1
        from anonpsy.evaluate.lexical import rouge_l_f
        from anonpsy.extract import extract
        from anonpsy.extract.scoring import score_graphs
        from anonpsy.graphio import graph_from_data
        from anonpsy.pipeline import leak_audit

        pred = extract(out.text, case_id=case.case_id)
        gold = graph_from_data(out.graph) if out.graph is not None else self.original_graph(case)
        return {
            "cosine": cos,
            "roundtrip_dx_f1": diagnosis_soft_f1(self.reference_dx(case), _dx_labels(pred), encoder=self.encoder).f1,
            "rouge_l": rouge_l_f(case.text, out.text),
            "leak_count": float(len(leak_audit(case.text, out.text).leaks)),
            "structure_f1": _micro_f1(score_graphs(pred, gold)),
        }

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embeddings of ``texts``, each distinct text encoded once per run (originals serve every method)."""
        new = list(dict.fromkeys(digest(t) for t in texts if digest(t) not in self._emb))
        if new:
            by_digest = {digest(t): t for t in texts}
            vecs = self.encoder.encode([by_digest[d] for d in new])
            self._emb.update(zip(new, vecs, strict=True))
        return [self._emb[digest(t)] for t in texts]

    def compute_metrics(self, methods: Sequence[str]) -> None:
        from anonpsy.evaluate.similarity import cosine

        by_id = {c.case_id: c for c in self.cases}
        t0 = time.perf_counter()
        for method in methods:
            outs = self.outputs.get(method, {})
            missing: list[tuple[Case, MethodOutput, str]] = []
            for cid, out in outs.items():
                key = self._metric_key(by_id[cid], out)
                hit = self.cache.get("metrics", key)
                if hit is not None:
                    self.values[(cid, method)] = {k: float(v) for k, v in hit.items()}
                else:
                    missing.append((by_id[cid], out, key))
            cosines: list[float] = []
            if missing:
                try:
                    vecs = self.embed([*(c.text for c, _, _ in missing), *(o.text for _, o, _ in missing)])
                    n = len(missing)
                    cosines = [cosine(vecs[i], vecs[n + i]) for i in range(n)]
                except Exception as exc:
                    if isinstance(exc, AnonpsyError) and exc.code == "V100":
                        raise
                    cosines = [math.nan] * len(missing)
                    for case, _, _ in missing:
                        self.failures.append(Failure("metrics", method, case.case_id, _error_line(exc), "cosine"))
            for (case, out, key), cos in zip(missing, cosines, strict=True):
                try:
                    vals = self._case_metrics(case, out, cos)
                except Exception as exc:
                    if isinstance(exc, AnonpsyError) and exc.code == "V100":
                        raise
                    self.failures.append(Failure("metrics", method, case.case_id, _error_line(exc)))
                    continue
                if not math.isnan(cos):
                    self.cache.put("metrics", key, vals)
                self.values[(case.case_id, method)] = vals
        self.metrics_seconds += time.perf_counter() - t0

    def fidelity(self, methods: Sequence[str], facts: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """Independent fidelity scores per method and case (and of the originals, method ``original``) for the
        cases with an annotation; adds the per-case values to the result rows."""
        from anonpsy.evaluate.fidelity import NoteScorer, excess

        t0 = time.perf_counter()
        out: dict[str, dict[str, Any]] = {ORIGINAL: {}}
        for case in self.cases:
            note = facts.get(case.case_id)
            if note is None:
                continue
            scorer = NoteScorer(note)
            orig = scorer.score(case.text, case_id=case.case_id)
            out[ORIGINAL][case.case_id] = orig
            for method in methods:
                output = self.outputs.get(method, {}).get(case.case_id)
                if output is None:
                    continue
                sc = scorer.score(output.text, source=case.text, case_id=case.case_id)
                sc.excess = excess(sc, orig)
                out.setdefault(method, {})[case.case_id] = sc
                assert sc.copy is not None
                self.values.setdefault((case.case_id, method), {}).update({
                    "affirmed_dx_recall": sc.dx_recall, "current_med_recall": sc.med_recall,
                    "contradictions": float(len(sc.contradictions)), "excess_contradictions": float(len(sc.excess)),
                    "longest_copied_run": float(sc.copy.longest_run),
                    "max_sentence_copied_run": float(sc.copy.max_sentence_run),
                })
        self.metrics_seconds += time.perf_counter() - t0
        return out

    def corpus_reid(self, methods: Sequence[str]) -> dict[str, dict[str, float]]:
        from anonpsy.evaluate.reident import nearest_document_reid

        corpus: dict[str, dict[str, float]] = {}
        for method in methods:
            outs = self.outputs.get(method, {})
            cases = [c for c in self.cases if c.case_id in outs]
            if not cases:
                continue
            res = nearest_document_reid([c.text for c in cases], [outs[c.case_id].text for c in cases])
            for c, credit in zip(cases, res.credit, strict=True):
                self.values.setdefault((c.case_id, method), {})["reid_hit"] = credit
            corpus[method] = {"reid_accuracy": res.accuracy, "reid_chance": res.chance, "reid_n": float(res.n)}
        return corpus

    # -- judge -----------------------------------------------------------------------------------------

    def _judge_call(self, job: _JudgeJob) -> tuple[dict[str, Any], bool]:
        """(reply data, from cache) for one judge call; raises what the client raises."""
        key = self.cache.key("judge", {"task": job.task, "config": judge_tasks.judge_config(self.llm), **job.parts})
        hit = self.cache.get("judge", key)
        if hit is not None:
            return hit, True
        cid = job.case.case_id
        seed = int(job.parts["seed"])
        reply: Any
        if job.task == "diagnosis":
            reply = judge_tasks.predict_diagnoses(self.llm, job.texts[0], seed=seed, case_id=cid)
        elif job.task == "acceptability":
            reply = judge_tasks.judge_acceptability(self.llm, job.texts[0], job.ref, seed=seed, case_id=cid)
        else:
            reply = judge_tasks.judge_reident(self.llm, job.case.text, job.texts[0], job.texts[1], seed=seed,
                                              case_id=cid)
        data: dict[str, Any] = reply.model_dump(mode="json")
        self.cache.put("judge", key, data)
        return data, False

    def _judge_jobs(self, methods: Sequence[str]) -> list[_JudgeJob]:
        jobs: list[_JudgeJob] = []
        for case in self.cases:
            ref = tuple(self.reference_dx(case))
            for method in methods:
                out = self.outputs.get(method, {}).get(case.case_id)
                if out is None:
                    continue
                s1 = judge_tasks.derive_seed(self.seed, judge_tasks.DIAGNOSIS_TEMPLATE, case.case_id, method)
                jobs.append(_JudgeJob("diagnosis", case, (method,), {"seed": s1, "output": digest(out.text)},
                                      (out.text,)))
                if ref:
                    s2 = judge_tasks.derive_seed(self.seed, judge_tasks.ACCEPTABILITY_TEMPLATE, case.case_id, method)
                    jobs.append(_JudgeJob("acceptability", case, (method,),
                                          {"seed": s2, "output": digest(out.text), "dx": list(ref)}, (out.text,), ref))
            present = [m for m in methods if case.case_id in self.outputs.get(m, {})]
            for plan in judge_tasks.plan_pairs(present, case.case_id, self.seed):
                ta = self.outputs[plan.method_a][case.case_id].text
                tb = self.outputs[plan.method_b][case.case_id].text
                parts = {"seed": plan.llm_seed, "original": case.text_sha256, "a": digest(ta), "b": digest(tb),
                         "order_seed": plan.order_seed, "swapped": plan.swapped}
                jobs.append(_JudgeJob("reident", case, plan.methods, parts, (ta, tb)))
        return jobs

    def run_judge(self, methods: Sequence[str]) -> dict[str, dict[str, float]]:
        from anonpsy.evaluate.diagnosis import diagnosis_soft_f1

        jobs = self._judge_jobs(methods)

        def one(job: _JudgeJob) -> tuple[tuple[dict[str, Any], bool] | None, str | None]:
            try:
                return self._judge_call(job), None
            except Exception as exc:  # recorded per case below, never dropped
                return None, _error_line(exc)

        results = _parallel(jobs, one, self.workers)
        reid_scores: dict[tuple[str, str], list[int]] = {}
        picks: dict[str, list[float]] = {m: [] for m in methods}
        a_picks: list[float] = []
        for job, (res, err) in zip(jobs, results, strict=True):
            cid = job.case.case_id
            record: dict[str, Any] = {"task": job.task, "case_id": cid, "methods": list(job.methods),
                                      "seed": job.parts["seed"]}
            if job.task == "reident":
                record.update({"order": list(job.methods), "order_seed": job.parts["order_seed"],
                               "swapped": job.parts["swapped"]})
            if res is None:
                record.update({"status": "failed", "error": err})
                self.judge_records.append(record)
                for m in job.methods:
                    self.failures.append(Failure("judge", m, cid, str(err), job.task))
                continue
            reply, cached = res
            record.update({"status": "ok", "cached": cached, "reply": reply})
            self.judge_records.append(record)
            if job.task == "diagnosis":
                key = self.cache.key("judge_metrics", {"version": METRICS_VERSION, "encoder": self.encoder.name,
                                                       "reply": reply, "reference": list(self.reference_dx(job.case))})
                hit = self.cache.get("judge_metrics", key)
                if hit is None:
                    f1 = diagnosis_soft_f1(self.reference_dx(job.case), list(reply["diagnoses"]),
                                           encoder=self.encoder).f1
                    hit = {"judge_soft_f1": f1}
                    self.cache.put("judge_metrics", key, hit)
                self.values.setdefault((cid, job.methods[0]), {})["judge_soft_f1"] = float(hit["judge_soft_f1"])
            elif job.task == "acceptability":
                self.values.setdefault((cid, job.methods[0]), {})["dx_acceptable"] = float(reply["acceptable"])
            else:
                parsed = judge_tasks.ReidentReply.model_validate(reply)
                plan = judge_tasks.PairPlan(cid, job.methods[0], job.methods[1], int(job.parts["order_seed"]),
                                            int(job.parts["seed"]), bool(job.parts["swapped"]))
                record["consistent"] = judge_tasks.consistent(parsed)
                for m, score in judge_tasks.method_scores(plan, parsed).items():
                    reid_scores.setdefault((cid, m), []).append(score)
                winner = judge_tasks.picked_method(plan, parsed)
                for m in job.methods:
                    picks[m].append(0.5 if winner is None else float(winner == m))
                a_picks.append(0.5 if winner is None else float(winner == plan.method_a))
        for (cid, m), scores in reid_scores.items():
            self.values.setdefault((cid, m), {})["reid_score"] = math.fsum(scores) / len(scores)
        corpus: dict[str, dict[str, float]] = {}
        for m, xs in picks.items():
            if xs:
                corpus[m] = {"judge_recallable_rate": math.fsum(xs) / len(xs), "judge_comparisons": float(len(xs))}
        if a_picks:
            self.position_a_rate = math.fsum(a_picks) / len(a_picks)
        return corpus


def evaluate(
    cases: Sequence[Case],
    methods: Sequence[str],
    *,
    encoder: Encoder,
    cache: EvalCache | None = None,
    seed: int = 0,
    llm: Any = None,
    judge: bool = False,
    skipped: Sequence[tuple[str, str]] = (),
    reference: str | None = None,
    workers: int | None = None,
    progress: Progress | None = None,
    facts: Mapping[str, Any] | None = None,
    facts_source: str | None = None,
) -> Evaluation:
    """Run ``methods`` on ``cases`` and compute every metric (and the judge tasks when ``judge``).

    ``encoder`` embeds texts for the cosine and the diagnosis soft-F1; ``cache`` (default: in memory) keeps
    outputs, metrics and judge replies; ``llm`` is the client for the LLM methods and the judge; ``skipped``
    lists methods left out with their reason (reported); ``reference`` is the method the statistical tests
    compare against (default: the first method with results); ``workers`` bounds concurrent language-model
    calls (default: the client's ``concurrency``); ``facts`` maps case ids to their ``facts.v1`` annotation
    (:func:`anonpsy.evaluate.facts.load_facts`) for the independent fidelity scores, ``facts_source`` names
    the file in the report. Raises AnonpsyError (E109) for an unknown method, an LLM
    method or the judge without ``llm``, or a ``reference`` that is not evaluated.
    """
    for m in methods:
        if m not in METHODS:
            raise AnonpsyError(errors.E109_BAD_OPTION, f"unknown method {m!r}", "--methods")
        if METHODS[m].needs_llm and llm is None:
            raise AnonpsyError(errors.E109_BAD_OPTION, f"method {m} needs a language-model server; give "
                                                       "--llm-config", "--llm-config")
    if judge and llm is None:
        raise AnonpsyError(errors.E109_BAD_OPTION, "the judge tasks need a language-model server; give "
                                                   "--llm-config or use --no-judge", "--judge")
    if reference is not None and reference not in methods:
        raise AnonpsyError(errors.E109_BAD_OPTION, f"reference method {reference!r} is not among --methods",
                           "--reference")
    cache = cache if cache is not None else EvalCache(None)
    if workers is None:
        workers = int(getattr(getattr(llm, "config", None), "concurrency", 1) or 1)
    t0 = time.perf_counter()
    run = _Run(cases, cache, encoder, seed, llm, max(1, workers), progress)
    run.run_methods(methods)
    run.compute_metrics(methods)
    fidelity = run.fidelity(methods, facts) if facts else {}
    corpus = run.corpus_reid(methods)
    judge_seconds = 0.0
    notes: list[str] = []
    if judge:
        tj = time.perf_counter()
        judged = run.run_judge(methods)
        judge_seconds = time.perf_counter() - tj
        for m, jvals in judged.items():
            corpus.setdefault(m, {}).update(jvals)
        if len([m for m in methods if run.outputs.get(m)]) < 2:
            notes.append("insider re-identification needs at least two methods with outputs; none compared")
        rate = run.position_a_rate
        if rate is not None:
            notes.append(f"judge picked version A in {rate:.1%} of A/B comparisons (position-bias check; 50% = none)")
    rows: list[dict[str, Any]] = []
    for method in methods:
        for case in cases:
            row_vals = run.values.get((case.case_id, method))
            if row_vals is None or case.case_id not in run.outputs.get(method, {}):
                continue
            rows.append({"case_id": case.case_id, "method": method, **row_vals})
    with_rows = [m for m in methods if any(r["method"] == m for r in rows)]
    ref = reference if reference is not None else (with_rows[0] if with_rows else None)
    dx_sources = {c.case_id: "ground_truth" if c.diagnoses is not None else "extractor" for c in cases}
    return Evaluation(
        case_ids=[c.case_id for c in cases], methods=list(methods), skipped=list(skipped), reference=ref,
        model=encoder.name, seed=seed, judged=judge, rows=rows, corpus=corpus, timing=run.timing,
        cache=cache.stats(), failures=run.failures, judge_records=run.judge_records, dx_sources=dx_sources,
        seconds=time.perf_counter() - t0, metrics_seconds=run.metrics_seconds, judge_seconds=judge_seconds,
        notes=notes, fidelity=fidelity, facts_source=facts_source,
    )


# ----------------------------------------------------------------------------------------------------
# Output


def _fmt(x: float, digits: int = 3) -> str:
    return "–" if x is None or math.isnan(x) else f"{x:.{digits}f}"


def render_run_markdown(ev: Evaluation) -> str:
    """The run sections appended to ``report.md``: setup, timing, cache, judge, failures (no narrative text)."""
    n_gt = sum(1 for s in ev.dx_sources.values() if s == "ground_truth")
    lines = ["", "## Run", ""]
    lines.append(f"- cases: {len(ev.case_ids)} ({n_gt} with ground-truth diagnoses; the others are scored against "
                 "the diagnoses the rules extractor finds in the original)")
    lines.append(f"- methods: {', '.join(ev.methods)}; seed {ev.seed}; embedding model {ev.model}")
    lines.append(f"- judge tasks: {'on' if ev.judged else 'off'}")
    for method, reason in ev.skipped:
        lines.append(f"- skipped {method}: {reason}")
    for note in ev.notes:
        lines.append(f"- {note}")
    lines.append(f"- wall time: {ev.seconds:.2f} s (metrics {ev.metrics_seconds:.2f} s, "
                 f"judge {ev.judge_seconds:.2f} s)")
    lines += ["", "### Timing per method", ""]
    lines.append("| method | computed | cached | failed | seconds this run | mean seconds per case |")
    lines.append("|---|---:|---:|---:|---:|---:|")
    for m in ev.methods:
        t = ev.timing.get(m, MethodTiming(m))
        lines.append(f"| {m} | {t.computed} | {t.cached} | {t.failed} | {t.seconds:.2f} | "
                     f"{_fmt(t.mean_case_seconds, 3)} |")
    lines += ["", "### Cache", ""]
    lines.append("| kind | hits | misses | writes |")
    lines.append("|---|---:|---:|---:|")
    for kind, s in ev.cache.items():
        lines.append(f"| {kind} | {s.hits} | {s.misses} | {s.writes} |")
    if ev.judged:
        lines += ["", "### Judge tasks", ""]
        lines.append("| task | ok | failed | from cache |")
        lines.append("|---|---:|---:|---:|")
        for task in judge_tasks.TASKS:
            recs = [r for r in ev.judge_records if r["task"] == task]
            ok = sum(1 for r in recs if r["status"] == "ok")
            hits = sum(1 for r in recs if r.get("cached"))
            lines.append(f"| {task} | {ok} | {len(recs) - ok} | {hits} |")
        lines.append("")
        lines.append("A/B orders and seeds of every comparison are in evaluation.json (`judge_records`).")
    lines += render_fidelity_markdown(ev)
    if ev.failures:
        lines += ["", "### Failures", ""]
        lines.append("| stage | task | method | case | error |")
        lines.append("|---|---|---|---|---|")
        for f in ev.failures:
            lines.append(f"| {f.stage} | {f.task or ''} | {f.method} | {f.case_id} | {f.error} |")
    return "\n".join(lines) + "\n"


def _kinds_cell(counts: Mapping[str, int]) -> str:
    from anonpsy.evaluate.fidelity import KIND_LABELS

    return ", ".join(f"{KIND_LABELS[k]} ×{n}" for k, n in counts.items() if n) or "–"


def _frac(found: int, total: int) -> str:
    return f"{found}/{total}" if total else "–"


def render_fidelity_markdown(ev: Evaluation) -> list[str]:
    """The clinical-fidelity section: per method (the originals first: the scorer's noise floor), then per case.

    Facts labels, kinds and sentence indices only; never text from a case.
    """
    from anonpsy.evaluate.fidelity import CONTRADICTION_KINDS, KIND_LABELS, summarize

    if not ev.fidelity:
        return []
    annotated = len(ev.fidelity.get(ORIGINAL, {}))
    lines = ["", "## Clinical fidelity (facts annotations, independent scorer)", ""]
    lines.append(f"- annotations: {ev.facts_source or 'given'}; {annotated} of {len(ev.case_ids)} cases annotated")
    lines.append("- judged sentence by sentence by `anonpsy.evaluate.fidelity` (own sentence splitter and cue "
                 "lexicon; no use of the project's extractor). `original` scores the source notes themselves: "
                 "the scorer's noise floor. *Excess* counts contradicted facts the original does not show. "
                 "*Unsupported symptom* needs no annotation: a loaded symptom (a delusion, hallucinations, "
                 "suicidal ideation, tardive dyskinesia, ...) asserted in the output that the source note never "
                 "mentions (`anonpsy.evaluate.support`); an original is its own source, so it shows none.")
    lines.append("- the round-trip diagnosis soft-F1 above (`roundtrip_dx_f1`) is the project's extractor judging "
                 "its own output: a consistency check, not a fidelity measure")
    lines += ["", "| method | cases | affirmed dx recall | current med recall | "
              + " | ".join(KIND_LABELS[k] for k in CONTRADICTION_KINDS)
              + " | cases with contradiction | cases with excess | longest copied run (max) "
              "| cases ≤ 12 per sentence |"]
    lines.append("|---|---:|---:|---:|" + "---:|" * len(CONTRADICTION_KINDS) + "---:|---:|---:|---:|")
    for method in [ORIGINAL, *[m for m in ev.methods if m in ev.fidelity]]:
        s = summarize(method, ev.fidelity[method].values())
        kinds = " | ".join(str(s.contradictions[k]) if method == ORIGINAL else
                           f"{s.contradictions[k]} ({s.excess[k]})" for k in CONTRADICTION_KINDS)
        lines.append(
            f"| {method} | {s.cases} | {_fmt(s.dx_recall)} ({_frac(s.affirmed_dx_found, s.affirmed_dx_total)}) | "
            f"{_fmt(s.med_recall)} ({_frac(s.current_meds_found, s.current_meds_total)}) | {kinds} | "
            f"{s.cases_with_contradiction} | {'–' if method == ORIGINAL else s.cases_with_excess} | "
            f"{'–' if s.longest_run_max is None else s.longest_run_max} | "
            f"{'–' if s.cases_within_copy_limit is None else s.cases_within_copy_limit} |")
    lines += ["", "Contradiction cells: contradicted facts (of which excess over the original).", "",
              "### Fidelity per case", "",
              "| case | method | affirmed dx | current meds | contradictions | excess (fact: sentence) | "
              "longest copied run (in one sentence) |", "|---|---|---:|---:|---|---|---:|"]
    for cid in ev.case_ids:
        for method in [ORIGINAL, *ev.methods]:
            sc = ev.fidelity.get(method, {}).get(cid)
            if sc is None:
                continue
            dx = _frac(sum(h.found for h in sc.affirmed_dx), len(sc.affirmed_dx))
            meds = _frac(sum(h.found for h in sc.current_meds), len(sc.current_meds))
            ex = "; ".join(f"{KIND_LABELS[c.kind]}: {c.fact} (s{','.join(str(i) for i in c.sentences)})"
                           for c in sc.excess) or "–"
            run = "–" if sc.copy is None else f"{sc.copy.longest_run} ({sc.copy.max_sentence_run})"
            lines.append(f"| {cid} | {method} | {dx} | {meds} | {_kinds_cell(sc.by_kind())} | "
                         f"{'–' if method == ORIGINAL else ex} | {run} |")
    return lines


def fidelity_dict(ev: Evaluation) -> dict[str, Any]:
    """The fidelity scores as JSON data: per method a pooled summary and the per-case scores."""
    from dataclasses import asdict as _asdict

    from anonpsy.evaluate.fidelity import SCORER_VERSION, summarize

    if not ev.fidelity:
        return {}
    out: dict[str, Any] = {"scorer_version": SCORER_VERSION, "facts": ev.facts_source, "methods": {}}
    for method, cases in ev.fidelity.items():
        s = summarize(method, cases.values())
        out["methods"][method] = {"summary": {**_asdict(s), "affirmed_dx_recall": s.dx_recall,
                                              "current_med_recall": s.med_recall},
                                  "cases": {cid: sc.as_dict() for cid, sc in cases.items()}}
    return out


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    return obj


def evaluation_dict(ev: Evaluation) -> dict[str, Any]:
    """``evaluation.json`` content (NaN as null)."""
    data: dict[str, Any] = _jsonable({
        "evaluation_version": EVALUATION_VERSION,
        "seed": ev.seed,
        "model": ev.model,
        "methods": ev.methods,
        "skipped": [{"method": m, "reason": r} for m, r in ev.skipped],
        "reference": ev.reference,
        "judged": ev.judged,
        "case_ids": ev.case_ids,
        "diagnosis_sources": ev.dx_sources,
        "seconds": round(ev.seconds, 3),
        "metrics_seconds": round(ev.metrics_seconds, 3),
        "judge_seconds": round(ev.judge_seconds, 3),
        "timing": {m: {**asdict(t), "mean_case_seconds": t.mean_case_seconds} for m, t in ev.timing.items()},
        "cache": {k: asdict(v) for k, v in ev.cache.items()},
        "corpus": ev.corpus,
        "notes": ev.notes,
        "failures": [asdict(f) for f in ev.failures],
        "judge_records": ev.judge_records,
        "rows": ev.rows,
        "fidelity": fidelity_dict(ev),
    })
    return data


def results_csv(ev: Evaluation) -> str:
    """The per case × method table as CSV (readable by :func:`anonpsy.evaluate.report.parse_results_csv`)."""
    cols = ["case_id", "method", *ev.metrics()]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in ev.rows:
        w.writerow({k: ("" if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()})
    return buf.getvalue()


def write_evaluation(
    ev: Evaluation, out_dir: Path, *, figures: bool = True, n_resamples: int = 9999
) -> list[Path]:
    """Write the report (``report.md``/``report.json``/figures), ``results.csv`` and ``evaluation.json``.

    Without any result row only ``evaluation.json`` is written.
    """
    from anonpsy.evaluate import report as report_mod

    out_dir = Path(out_dir)
    written: list[Path] = []
    if ev.rows and ev.reference is not None:
        rep = report_mod.build_report(ev.rows, reference=ev.reference, metrics=ev.metrics(), model=ev.model,
                                      seed=ev.seed, n_resamples=n_resamples, corpus=ev.corpus)
        written = report_mod.write_report(rep, out_dir, figures=figures)
        md = out_dir / "report.md"
        write_atomic(md, md.read_text(encoding="utf-8") + render_run_markdown(ev))
        csv_path = out_dir / "results.csv"
        write_atomic(csv_path, results_csv(ev))
        written.append(csv_path)
    js = out_dir / "evaluation.json"
    write_atomic(js, json.dumps(evaluation_dict(ev), indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    written.append(js)
    return written
