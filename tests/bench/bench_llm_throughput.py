"""Throughput of the ``llm`` backend against the scripted server with a fixed latency per request.

100 cases (the fixture narratives, cycled) run at concurrency 16 through one shared :class:`LLMClient` from a
thread pool. Every LLM call of a case is sequential, so the ideal wall time is
``sum over cases of calls(case) × latency / concurrency``; the script prints the achieved throughput as a fraction
of that ideal, and the LLM calls and tokens per case.

    python tests/bench/bench_llm_throughput.py [--cases 100] [--concurrency 16] [--latency 0.1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from anonpsy.llm import LLMClient  # noqa: E402
from anonpsy.llm_backend import deid_with_llm  # noqa: E402
from anonpsy.testing import ScriptedOpenAIServer  # noqa: E402
from llm_replies.harness import CASES, config  # noqa: E402
from llm_replies.responder import Responder, rules_graph  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.1)
    args = ap.parse_args()

    texts = [
        (f"{p.stem}_{i}", p.read_text(encoding="utf-8"))
        for i, p in ((i, CASES[i % len(CASES)]) for i in range(args.cases))
    ]
    os.environ.setdefault("ANONPSY_LLM_EMBEDDINGS", "0")  # orchestration, not the encoder, is measured
    for p in CASES:  # warm the responder's own rules extraction so it does not count as server time
        rules_graph(p.read_text(encoding="utf-8"))
    with (
        ScriptedOpenAIServer(responder=Responder(), latency=args.latency) as srv,
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
        with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
            results = list(pool.map(one, texts))
        wall = time.perf_counter() - t0
        peak = srv.max_in_flight
    calls = [r["calls"] for r in results]
    tokens = [r["tokens"] for r in results]
    ideal = sum(calls) * args.latency / args.concurrency
    print(
        f"cases={args.cases} concurrency={args.concurrency} latency={args.latency * 1000:.0f} ms "
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
