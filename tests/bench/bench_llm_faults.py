"""`anonpsy deid --backend llm` on the 22 fixture cases (or ``--notes`` JSONL) against a server that fails a share of
its requests.

The scripted OpenAI-compatible server (``anonpsy.testing.openai_server``, replies from ``tests/llm_replies``) runs
in this process; each case is one real ``anonpsy deid`` subprocess, as a user would run it. Faults are seeded
(:class:`anonpsy.testing.FaultMix`): HTTP 500, 429 with ``Retry-After``, malformed JSON, schema-violating JSON
and empty replies, mixed evenly. For every case the script records:

* ``ok``: exit 0, an output file, and the output passes an independent leak audit of the source against the
  written text and ``anonpsy check`` of the emitted original graph against the emitted perturbed graph;
* ``failed``: a non-zero exit; its stderr must be one line ``CODE location: message`` without a traceback, and
  no output file may exist;
* the fallbacks the audit records (``fallbacks``), the model calls and the requests the server answered.

Target (README): at 30 % faults, at least 95 % of the cases ``ok``, every failure clean, no output file for a case
that failed the leak audit, every fallback in the audit; at 0 % faults no fallback.

    python tests/bench/bench_llm_faults.py [--rate 0.3] [--seed 0] [--retry-after 1] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from anonpsy.testing import FaultMix, ScriptedOpenAIServer  # noqa: E402
from llm_replies.harness import CASES, write_config  # noqa: E402
from llm_replies.responder import Responder, rules_graph  # noqa: E402

ONE_LINE = re.compile(r"^[A-Z]\d{3} \S")


def _audit_check(case: Path, out: Path, emit: Path) -> list[str]:
    """Problems of a written output: independent leak audit and the structural check of the graphs."""
    from anonpsy.graphio import read_graph_checked
    from anonpsy.perturb import check
    from anonpsy.pipeline import leak_audit
    from anonpsy.temporal import normalize

    problems: list[str] = []
    text = out.read_text(encoding="utf-8")
    if not text.strip():
        problems.append("empty output")
    orig = normalize(read_graph_checked(emit / f"{case.stem}.graph.yaml"))
    pert = read_graph_checked(emit / f"{case.stem}.perturbed.yaml")
    age0, age1 = orig.demographics.age, pert.demographics.age
    shift = age1 - age0 if age0 is not None and age1 is not None else 0
    # The same audit the rules backend applies to its own output (ages that moved with the patient are not leaks).
    leaks = leak_audit(case.read_text(encoding="utf-8"), text, patient_age=age0, age_shift=shift)
    if leaks.leaks:
        problems.append(f"leak audit: {len(leaks.leaks)} ({', '.join(sorted({lk.kind for lk in leaks.leaks}))})")
    violations = check(orig, pert)
    if violations:
        problems.append(f"check: {len(violations)} violations ({', '.join(sorted({v.code for v in violations}))})")
    return problems


def _cases(source: Path | None, tmp: Path) -> list[Path]:
    """The fixture cases, or the notes of a JSONL file ({"id", "text"} per line) written out as .txt files."""
    if source is None:
        return list(CASES)
    out = []
    (tmp / "notes").mkdir()
    for n, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            rec = json.loads(line)
            rid = rec.get("id", rec.get("note_id", rec.get("case_id", f"line{n}")))  # as deid-batch reads them
            path = tmp / "notes" / f"n{re.sub(r'[^A-Za-z0-9_.-]', '_', str(rid))}.txt"
            path.write_text(rec["text"], encoding="utf-8")
            out.append(path)
    return out


def run(rate: float, seed: int, retry_after: str, extra: list[str], verbose: bool,
        source: Path | None = None) -> dict[str, Any]:
    mix = FaultMix(rate, seed=seed, retry_after=retry_after) if rate > 0 else None
    rows: list[dict[str, Any]] = []
    env = {**os.environ, "ANONPSY_LLM_EMBEDDINGS": "0"}
    env.pop("ANONPSY_DEBUG", None)
    with tempfile.TemporaryDirectory() as tmp, ScriptedOpenAIServer(responder=Responder(), fault_mix=mix) as srv:
        work = Path(tmp)
        cases = _cases(source, work)
        for case in cases:  # the scripted model's own rules extraction, once per text, outside the timed runs
            rules_graph(case.read_text(encoding="utf-8"))
        # Short backoff keeps the run short; Retry-After is honoured (up to retry_after_cap). The read timeout is
        # generous: a timeout here would come from this machine's load, not from the injected faults.
        cfg = write_config(work / "llm.yaml", srv, timeouts={"read": 60.0}, retry_after_cap=5.0, backoff_base=0.05,
                           backoff_cap=0.5)
        for case in cases:
            out = work / "out" / f"{case.stem}.txt"
            emit = work / "emit"
            before = len(srv.chat_requests)
            t0 = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "anonpsy", "deid", str(case), "--backend", "llm", "--llm-config", str(cfg),
                 "--seed", "7", "-o", str(out), "--emit", str(emit), *extra],
                capture_output=True, text=True, env=env, check=False,
            )
            seconds = time.perf_counter() - t0
            served = srv.chat_requests[before:]
            stderr = proc.stderr.strip().splitlines()
            row: dict[str, Any] = {
                "case": case.stem, "exit": proc.returncode, "seconds": round(seconds, 2),
                "requests": len(served), "faults": sum(1 for r in served if r.fault),
                "traceback": "Traceback" in proc.stderr, "output": out.is_file(),
            }
            audit_path = emit / f"{case.stem}.audit.json"
            if proc.returncode == 0 and out.is_file():
                row["problems"] = _audit_check(case, out, emit)
                audit = json.loads(audit_path.read_text(encoding="utf-8"))
                row["fallbacks"] = [f"{f['step']}:{f['code']}" for f in audit.get("fallbacks", [])]
                row["retries_faults_absorbed"] = row["faults"] - len(row["fallbacks"])
                row["status"] = "ok" if not row["problems"] else "bad-output"
            else:
                row["error"] = stderr[-1] if stderr else ""
                row["clean"] = (len(stderr) == 1 and bool(ONE_LINE.match(stderr[0])) and not row["traceback"])
                row["status"] = "failed" if row["clean"] and not out.exists() else "unclean-failure"
            rows.append(row)
            if verbose:
                print(json.dumps(row), flush=True)
            if out.exists():
                out.unlink()
    n = len(rows)
    ok = [r for r in rows if r["status"] == "ok"]
    fallbacks = [len(r.get("fallbacks", [])) for r in ok]
    steps: dict[str, int] = {}
    for r in ok:
        for f in r.get("fallbacks", []):
            step = f.split(":")[0]
            steps[step] = steps.get(step, 0) + 1
    return {
        "rate": rate, "seed": seed, "cases": n, "ok": len(ok),
        "failed_clean": sum(r["status"] == "failed" for r in rows),
        "unclean": sum(r["status"] in ("unclean-failure", "bad-output") for r in rows),
        "success_rate": round(len(ok) / n, 4) if n else 0.0,
        "fallbacks_per_case": round(statistics.mean(fallbacks), 2) if fallbacks else 0.0,
        "cases_with_fallback": sum(1 for f in fallbacks if f),
        "requests_per_case": round(statistics.mean(r["requests"] for r in rows), 1),
        "faults_served": sum(r["faults"] for r in rows),
        "fallback_steps": dict(sorted(steps.items())),
        "rows": rows,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rate", type=float, default=0.3, help="share of requests that fail (default 0.3)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the fault draws")
    ap.add_argument("--retry-after", default="1", help="Retry-After header of the 429 faults (seconds)")
    ap.add_argument("--json", type=Path, help="also write the per-case rows here")
    ap.add_argument("--notes", type=Path, help='a JSONL file of notes ({"id" or "note_id", "text"}) instead of the '
                    "fixture cases, e.g. ../shared/data/mtsamples-psych-dev/notes.jsonl")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each case as it finishes")
    ap.add_argument("extra", nargs="*", help="extra `anonpsy deid` options after --, e.g. -- --strict-llm")
    args = ap.parse_args()
    t0 = time.perf_counter()
    res = run(args.rate, args.seed, args.retry_after, args.extra, args.verbose, args.notes)
    wall = time.perf_counter() - t0
    print(f"rate={res['rate']:.2f} seed={res['seed']} cases={res['cases']} wall={wall:.1f} s")
    print(f"ok={res['ok']} failed_clean={res['failed_clean']} unclean={res['unclean']} "
          f"success_rate={res['success_rate']:.2%}")
    print(f"fallbacks/case={res['fallbacks_per_case']:.2f} cases_with_fallback={res['cases_with_fallback']} "
          f"requests/case={res['requests_per_case']} faults_served={res['faults_served']}")
    if res["fallback_steps"]:
        print("fallback steps: " + ", ".join(f"{k}={v}" for k, v in res["fallback_steps"].items()))
    for r in res["rows"]:
        if r["status"] != "ok":
            print(f"  {r['case']}: {r['status']} exit={r['exit']} {r.get('error') or r.get('problems')}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
