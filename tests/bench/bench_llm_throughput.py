"""Throughput of the ``llm`` backend against the scripted server with a fixed latency per request.

100 cases (the fixture narratives, cycled) run at concurrency 16 through one shared :class:`LLMClient` from a
thread pool. The ideal wall time is ``sum over cases of calls(case) × latency / concurrency`` (every slot busy all
the time); the script prints the achieved throughput as a fraction of that ideal, and the LLM calls and tokens per
case. It also prints the schedule bound: the wall time the same cases would take, dealt to the workers in the same
order, if each case made its calls one after another and the client spent no time at all between them (the last
cases finish alone, so such a client stays above the ideal even at zero cost). The generation sections of a case
are independent and sent together, so the client can beat that bound.

The scripted server runs in its own process (``--in-process-server``: in this one, as the tests run it), as a real
model server would: its request parsing and reply encoding do not compete with the client for this process's
interpreter. Its replies are computed once per distinct request in a warm-up pass and then served from memory, so
the timed run measures the client side (orchestration, validation, the deterministic checks) against a server
whose only cost is its fixed latency. ``--no-memo`` times the server's reply construction too.

    python tests/bench/bench_llm_throughput.py [--cases 100] [--concurrency 16] [--latency 0.1] [--processes 2]
"""

from __future__ import annotations

import argparse
import heapq
import json
import multiprocessing
import os
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from anonpsy.llm import LLMClient  # noqa: E402
from anonpsy.llm_backend import deid_with_llm  # noqa: E402
from anonpsy.testing import ScriptedOpenAIServer  # noqa: E402
from llm_replies.harness import CASES, config, config_data  # noqa: E402
from llm_replies.responder import Responder, rules_graph  # noqa: E402


def _worker(job: tuple[dict[str, Any], list[tuple[str, str]], int]) -> list[dict[str, Any]]:
    """One worker process: its own client, ``threads`` cases in flight."""
    from anonpsy.llm import LLMConfig

    cfg, share, threads = job
    os.environ.setdefault("ANONPSY_LLM_EMBEDDINGS", "0")
    with LLMClient(LLMConfig.model_validate(cfg)) as client:

        def one(item: tuple[str, str]) -> dict[str, Any]:
            r = deid_with_llm(item[1], seed=1, case_id=item[0], llm=client)
            return {"calls": r.stats["requests"], "tokens": r.stats["prompt_tokens"] + r.stats["completion_tokens"],
                    "ok": not r.audit.violations}

        with ThreadPoolExecutor(max_workers=threads) as pool:
            return list(pool.map(one, share))


class MemoResponder:
    """A responder that answers each distinct request body once and then from memory."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.memo: dict[str, Any] = {}
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        key = json.dumps(body.get("messages"), sort_keys=True)
        with self.lock:
            if key in self.memo:
                return self.memo[key]
        reply = self.inner(body)
        with self.lock:
            self.memo[key] = reply
        return reply


def make_responder(memo: bool) -> Any:
    """The scripted model, its own rules extraction of every fixture warmed so it does not count as server time."""
    for p in CASES:
        rules_graph(p.read_text(encoding="utf-8"))
    return MemoResponder(Responder()) if memo else Responder()


@dataclass
class ServerHandle:
    """What a client needs of a scripted server (URLs), and its controls (latency, peak requests in flight)."""

    base_url: str
    native_base_url: str
    _set_latency: Any
    _peak: Any

    def set_latency(self, seconds: float) -> None:
        self._set_latency(seconds)

    @property
    def max_in_flight(self) -> int:
        return int(self._peak())


def _serve(conn: Connection, memo: bool) -> None:
    """Child process: serve the scripted model until told to stop; commands arrive on ``conn``."""
    with ScriptedOpenAIServer(responder=make_responder(memo), latency=0.0) as srv:
        conn.send((srv.base_url, srv.native_base_url))
        while True:
            cmd, arg = conn.recv()
            if cmd == "latency":
                srv.latency = float(arg)
                srv.max_in_flight = 0
                conn.send(None)
            elif cmd == "peak":
                conn.send(srv.max_in_flight)
            else:
                conn.send(None)
                return


@contextmanager
def scripted_server(*, memo: bool, separate: bool) -> Iterator[ServerHandle]:
    """The scripted server in its own process (``separate``) or in a thread of this one."""
    if not separate:
        with ScriptedOpenAIServer(responder=make_responder(memo), latency=0.0) as srv:

            def set_latency(seconds: float) -> None:
                srv.latency = seconds
                srv.max_in_flight = 0

            yield ServerHandle(srv.base_url, srv.native_base_url, set_latency, lambda: srv.max_in_flight)
        return
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_serve, args=(child, memo), name="scripted-openai-server", daemon=True)
    proc.start()
    lock = threading.Lock()

    def ask(cmd: str, arg: Any = None) -> Any:
        with lock:
            parent.send((cmd, arg))
            return parent.recv()

    try:
        base_url, native_base_url = parent.recv()
        yield ServerHandle(base_url, native_base_url, lambda s: ask("latency", s), lambda: ask("peak"))
    finally:
        if proc.is_alive():
            ask("stop")
        proc.join(timeout=10)


def schedule_bound(calls: list[int], workers: int, latency: float, processes: int) -> float:
    """Wall time of the cases dealt in order to ``workers`` threads (per process) when each call costs exactly
    ``latency`` and the client nothing: greedy list scheduling, as ``ThreadPoolExecutor.map`` hands them out."""

    def makespan(share: list[int], n: int) -> float:
        free = [0.0] * max(1, n)
        for c in share:
            heapq.heapreplace(free, free[0] + c * latency)
        return max(free)

    if processes > 1:
        return max(makespan(calls[i::processes], workers // processes) for i in range(processes))
    return makespan(calls, workers)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--no-memo", action="store_true", help="compute every scripted reply during the timed run")
    ap.add_argument("--processes", type=int, default=1,
                    help="worker processes, each with concurrency/processes threads and its own client (the "
                         "shape of `deid-batch --jobs N --backend llm`)")
    ap.add_argument("--in-process-server", action="store_true",
                    help="serve the scripted model from a thread of this process (its CPU then competes with the "
                         "client's) instead of its own process")
    args = ap.parse_args()

    texts = [
        (f"{p.stem}_{i}", p.read_text(encoding="utf-8"))
        for i, p in ((i, CASES[i % len(CASES)]) for i in range(args.cases))
    ]
    os.environ.setdefault("ANONPSY_LLM_EMBEDDINGS", "0")  # orchestration, not the encoder, is measured
    with scripted_server(memo=not args.no_memo, separate=not args.in_process_server) as srv:
        if not args.no_memo:  # warm-up: one untimed pass at zero latency fills the reply memo
            with (
                LLMClient(config(srv, concurrency=args.concurrency, timeouts={"read": 30.0})) as warm_client,
                ThreadPoolExecutor(max_workers=args.concurrency) as pool,
            ):
                list(pool.map(lambda it: deid_with_llm(it[1], seed=1, case_id=it[0], llm=warm_client), texts))
        srv.set_latency(args.latency)
        with LLMClient(config(srv, concurrency=args.concurrency, timeouts={"read": 30.0})) as client:

            def one(item: tuple[str, str]) -> dict[str, Any]:
                cid, text = item
                r = deid_with_llm(text, seed=1, case_id=cid, llm=client)
                return {
                    "calls": r.stats["requests"],
                    "tokens": r.stats["prompt_tokens"] + r.stats["completion_tokens"],
                    "ok": not r.audit.violations,
                }

            cpu0 = time.process_time()
            t0 = time.perf_counter()
            if args.processes > 1:
                per = max(1, args.concurrency // args.processes)
                cfg = config_data(srv, concurrency=per, timeouts={"read": 30.0})
                shares = [texts[i::args.processes] for i in range(args.processes)]
                with ProcessPoolExecutor(max_workers=args.processes) as ppool:
                    parts = list(ppool.map(_worker, [(cfg, share, per) for share in shares]))
                # Back in the cases' order, so the schedule bound deals them as the workers did.
                results = [parts[i % args.processes][i // args.processes] for i in range(len(texts))]
            else:
                with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
                    results = list(pool.map(one, texts))
            wall = time.perf_counter() - t0
            cpu = time.process_time() - cpu0
        peak = srv.max_in_flight
    calls = [r["calls"] for r in results]
    tokens = [r["tokens"] for r in results]
    ideal = sum(calls) * args.latency / args.concurrency
    bound = schedule_bound(calls, args.concurrency, args.latency, args.processes)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"cases={args.cases} concurrency={args.concurrency} processes={args.processes} "
        f"latency={args.latency * 1000:.0f} ms "
        f"server={'in this process' if args.in_process_server else 'own process'} "
        f"violations={sum(not r['ok'] for r in results)} load_avg={load}"
    )
    print(
        f"wall={wall:.2f} s ideal={ideal:.2f} s throughput={args.cases / wall:.2f} cases/s "
        f"fraction_of_ideal={ideal / wall:.2f} peak_in_flight={peak}"
    )
    cpu_note = (f"cpu/case={cpu / args.cases * 1000:.0f} ms (this process"
                + (", server included)" if args.in_process_server else ", the client only)")
                if args.processes == 1 else "")
    print(f"schedule_bound={bound:.2f} s fraction_of_schedule_bound={bound / wall:.2f} {cpu_note}")
    print(
        f"llm calls/case: mean={statistics.mean(calls):.1f} min={min(calls)} max={max(calls)}; "
        f"tokens/case: mean={statistics.mean(tokens):.0f} (scripted server counts words)"
    )


if __name__ == "__main__":
    main()
