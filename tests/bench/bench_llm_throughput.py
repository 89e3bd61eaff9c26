"""Throughput of the ``llm`` backend against the scripted server with a fixed latency per request.

100 cases (the fixture narratives, cycled) run at concurrency 16 through one shared :class:`LLMClient` from a
thread pool. Every LLM call of a case is sequential, so the ideal wall time is
``sum over cases of calls(case) × latency / concurrency``; the script prints the achieved throughput as a fraction
of that ideal, and the LLM calls and tokens per case.

The scripted replies are computed once per distinct request in a warm-up pass and then served from memory, so the
timed run measures the client side (orchestration, validation, the deterministic checks) against a server whose
only cost is its fixed latency — as a real model server's CPU would not compete with the client for this machine's
cores. ``--no-memo`` times the server's reply construction too.

    python tests/bench/bench_llm_throughput.py [--cases 100] [--concurrency 16] [--latency 0.1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--no-memo", action="store_true", help="compute every scripted reply during the timed run")
    ap.add_argument("--processes", type=int, default=1,
                    help="worker processes, each with concurrency/processes threads and its own client (the "
                         "shape of `deid-batch --jobs N --backend llm`)")
    args = ap.parse_args()

    texts = [
        (f"{p.stem}_{i}", p.read_text(encoding="utf-8"))
        for i, p in ((i, CASES[i % len(CASES)]) for i in range(args.cases))
    ]
    os.environ.setdefault("ANONPSY_LLM_EMBEDDINGS", "0")  # orchestration, not the encoder, is measured
    for p in CASES:  # warm the responder's own rules extraction so it does not count as server time
        rules_graph(p.read_text(encoding="utf-8"))
    responder = Responder() if args.no_memo else MemoResponder(Responder())
    if not args.no_memo:  # warm-up: one untimed pass at zero latency fills the reply memo
        with (
            ScriptedOpenAIServer(responder=responder, latency=0.0) as warm,
            LLMClient(config(warm, concurrency=args.concurrency, timeouts={"read": 30.0})) as warm_client,
            ThreadPoolExecutor(max_workers=args.concurrency) as pool,
        ):
            list(pool.map(lambda it: deid_with_llm(it[1], seed=1, case_id=it[0], llm=warm_client), texts))
    with (
        ScriptedOpenAIServer(responder=responder, latency=args.latency) as srv,
        LLMClient(config(srv, concurrency=args.concurrency, timeouts={"read": 30.0})) as client,
    ):

        def one(item: tuple[str, str]) -> dict[str, Any]:
            cid, text = item
            r = deid_with_llm(text, seed=1, case_id=cid, llm=client)
            return {
                "calls": r.stats["requests"],
                "tokens": r.stats["prompt_tokens"] + r.stats["completion_tokens"],
                "ok": not r.audit.violations,
            }

        t0 = time.perf_counter()
        if args.processes > 1:
            per = max(1, args.concurrency // args.processes)
            cfg = config_data(srv, concurrency=per, timeouts={"read": 30.0})
            shares = [texts[i::args.processes] for i in range(args.processes)]
            with ProcessPoolExecutor(max_workers=args.processes) as ppool:
                results = [r for part in ppool.map(_worker, [(cfg, share, per) for share in shares]) for r in part]
        else:
            with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
                results = list(pool.map(one, texts))
        wall = time.perf_counter() - t0
        peak = srv.max_in_flight
    calls = [r["calls"] for r in results]
    tokens = [r["tokens"] for r in results]
    ideal = sum(calls) * args.latency / args.concurrency
    print(
        f"cases={args.cases} concurrency={args.concurrency} processes={args.processes} "
        f"latency={args.latency * 1000:.0f} ms "
        f"violations={sum(not r['ok'] for r in results)}"
    )
    print(
        f"wall={wall:.2f} s ideal={ideal:.2f} s throughput={args.cases / wall:.2f} cases/s "
        f"fraction_of_ideal={ideal / wall:.2f} peak_in_flight={peak}"
    )
    print(
        f"llm calls/case: mean={statistics.mean(calls):.1f} min={min(calls)} max={max(calls)}; "
        f"tokens/case: mean={statistics.mean(tokens):.0f} (scripted server counts words)"
    )


if __name__ == "__main__":
    main()
