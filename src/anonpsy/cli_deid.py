"""`anonpsy deid`, `anonpsy deid-batch`, `anonpsy graph` and `anonpsy render`."""

from __future__ import annotations

import contextlib
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from anonpsy import errors
from anonpsy.cli import main
from anonpsy.cliutil import handle_errors
from anonpsy.corpusio import case_id_from, read_jsonl_records
from anonpsy.errors import AnonpsyError
from anonpsy.llm_backend.cli_options import (
    LLMServerArgs,
    llm_ablation_options,
    llm_server_options,
    strict_llm_option,
)
from anonpsy.yamlio import write_atomic

DEFAULT_MAX_BYTES = 1_000_000


def _read_case(path: str, max_bytes: int) -> tuple[str, str]:
    """(case_id, text) from a file or '-' (stdin), with one-line errors for bad input."""
    from anonpsy.graphio import decode_text, read_text_input

    if path == "-":
        raw = sys.stdin.buffer.read(max_bytes + 1)
        if len(raw) > max_bytes:
            raise AnonpsyError(errors.E107_TOO_LARGE, f"input is over the limit of {max_bytes} bytes; raise "
                                                      "--max-bytes or split the input", "stdin")
        return "stdin", decode_text(raw, "stdin")
    p = Path(path)
    return case_id_from(p.stem), read_text_input(p, max_bytes=max_bytes)


def _format_output(result: Any, fmt: str) -> str:
    from anonpsy.graphio import graph_to_data
    from anonpsy.yamlio import dump_yaml

    if fmt == "text":
        return str(result.text)
    payload = {"case_id": result.case_id, "text": result.text, "graph": graph_to_data(result.perturbed),
               "leaks": result.leaks.model_dump(), "violations": result.audit.violations}
    if fmt == "json":
        return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    return dump_yaml(payload)


def rejection(result: Any, *, allow_leaks: bool = False, quarantine: Path | None = None) -> AnonpsyError | None:
    """Why a result must not be written — E131 invariant violations, E130 leak audit (unless ``allow_leaks``) —
    or None. The message names codes and counts only, never text."""
    where = f"the rejected text is in {quarantine}" if quarantine is not None else \
        "the rejected text is written only with --quarantine DIR"
    violations = result.audit.violations
    if violations:
        codes = sorted({str(v.get("code", "?")) for v in violations})
        return AnonpsyError(errors.E131_INVARIANT, f"{len(violations)} invariant violation(s) ({', '.join(codes)}); "
                                                   f"the output is not written ({where}; audit in --emit DIR)",
                            result.case_id)
    if not result.leaks.clean and not allow_leaks:
        kinds = sorted({leak.kind for leak in result.leaks.leaks})
        return AnonpsyError(errors.E130_LEAK_AUDIT, f"leak audit found {len(result.leaks.leaks)} source "
                                                    f"identifier(s) in the output ({', '.join(kinds)}); the output "
                                                    f"is not written ({where} or with --allow-leaks; offsets in "
                                                    "leaks.json with --emit DIR)", result.case_id)
    return None


def _emit(result: Any, emit_dir: Path, *, accepted: bool = True) -> None:
    """The original graph, the audit and the leak audit; the perturbed graph only for an accepted result (a stale
    one from an earlier run is removed)."""
    from anonpsy.graphio import dump_graph

    emit_dir.mkdir(parents=True, exist_ok=True)
    cid = result.case_id
    write_atomic(emit_dir / f"{cid}.graph.yaml", dump_graph(result.original))
    if accepted:
        write_atomic(emit_dir / f"{cid}.perturbed.yaml", dump_graph(result.perturbed))
    else:
        (emit_dir / f"{cid}.perturbed.yaml").unlink(missing_ok=True)
    write_atomic(emit_dir / f"{cid}.audit.json", result.audit.model_dump_json(indent=2) + "\n")
    write_atomic(emit_dir / f"{cid}.leaks.json", result.leaks.model_dump_json(indent=2) + "\n")


def _quarantine(result: Any, qdir: Path, rendered: str, ext: str, err: AnonpsyError) -> None:
    """A rejected result, kept apart for review: the text, the perturbed graph and why it was rejected."""
    from anonpsy.graphio import dump_graph

    qdir.mkdir(parents=True, exist_ok=True)
    cid = result.case_id
    write_atomic(qdir / f"{cid}.{ext}", rendered)
    write_atomic(qdir / f"{cid}.perturbed.yaml", dump_graph(result.perturbed))
    reason = {"case_id": cid, "code": err.code, "error": err.one_line(), "violations": result.audit.violations,
              "leaks": result.leaks.model_dump()}
    write_atomic(qdir / f"{cid}.rejected.json", json.dumps(reason, indent=2) + "\n")


_EXT = {"text": "txt", "json": "json", "yaml": "yaml"}


def _fallback_note(result: Any) -> str | None:
    steps = [f"{f.step} ({f.code})" for f in result.audit.fallbacks]
    if not steps:
        return None
    shown = ", ".join(steps[:4]) + (f", … {len(steps) - 4} more" if len(steps) > 4 else "")
    return f"note: {len(steps)} step(s) done by the rules backend after model failures: {shown}; see the audit"


@main.command()
@click.argument("case", metavar="CASE.txt", default="-")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write the result here (default stdout).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed; the same seed gives the same output.")
@click.option("--backend", type=click.Choice(["rules", "llm"]), default="rules", show_default=True,
              help="rules: deterministic, no model; llm: an OpenAI-compatible server (--llm-config or --llm-url).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "yaml"]), default="text", show_default=True)
@click.option("--emit", "emit_dir", type=click.Path(path_type=Path),
              help="Also write the original graph, perturbed graph, audit and leak audit to this directory.")
@click.option("--allow-leaks", is_flag=True,
              help="Write the output and exit 0 even when the leak audit is not empty (a warning is printed).")
@click.option("--quarantine", "quarantine", type=click.Path(path_type=Path), metavar="DIR",
              help="Write a rejected output (leak audit or invariant failed) here, apart from the outputs.")
@click.option("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, show_default=True, help="Input size limit.")
@llm_server_options
@click.option("--mask-first", is_flag=True,
              help="Mask direct identifiers before any other step (surrogates when ANONPSY_HMAC_KEY is set, "
                   "else type labels).")
@click.option("--diagnoses", help="Comma-separated diagnosis labels or rules/dsm ids known from metadata (llm).")
@llm_ablation_options
@strict_llm_option
@handle_errors
def deid(case: str, output: Path | None, seed: int, backend: str, fmt: str, emit_dir: Path | None,
         allow_leaks: bool, quarantine: Path | None, max_bytes: int, llm_server: LLMServerArgs, mask_first: bool,
         diagnoses: str | None, llm_options: dict[str, Any]) -> None:
    """De-identify one psychiatric case narrative (a file, or stdin with '-').

    Text → semantic graph → perturbed graph (clinical rules) → regenerated narrative. An output that violates an
    invariant (E131) or in which the leak audit finds a source identifier (E130) is never written — not to -o, not
    to stdout: the command exits 1 with one line, and the rejected text goes only to --quarantine DIR (or, for
    leaks, to the output with --allow-leaks). 2 on bad input or an unusable language-model server.

    With --backend llm, a step whose model call still fails after its retries is done by the rules backend for
    that step alone and recorded in the audit (fallbacks); --strict-llm ends the case instead. The server comes
    from --llm-config, or --llm-url / OPENAI_BASE_URL (key in OPENAI_API_KEY).

    \b
    Example:
      anonpsy deid fixtures/cases/01_adhd_child.txt --seed 7 --emit out/
    """
    from anonpsy.pipeline import deid_text

    case_id, text = _read_case(case, max_bytes)
    options = dict(llm_options)
    if diagnoses:
        options["diagnoses"] = [d.strip() for d in diagnoses.split(",") if d.strip()]
    config = llm_server.resolve() if backend == "llm" else None
    if mask_first:
        text = _mask_first(text)
    llm = _llm_client(config) if config is not None else None
    try:
        result = deid_text(text, seed=seed, backend=backend, case_id=case_id, llm=llm, options=options)
    finally:
        if llm is not None:
            llm.close()
    rendered = _format_output(result, fmt)
    refused = rejection(result, allow_leaks=allow_leaks, quarantine=quarantine)
    if emit_dir is not None:
        _emit(result, emit_dir, accepted=refused is None)
    note = _fallback_note(result)
    if refused is not None:
        if quarantine is not None:
            _quarantine(result, quarantine, rendered, _EXT[fmt], refused)
        if note:
            click.echo(note, err=True)
        click.echo(refused.one_line(), err=True)
        sys.exit(1)
    if output is None:
        click.echo(rendered, nl=False)
    else:
        write_atomic(output, rendered)
    if note:
        click.echo(note, err=True)
    if not result.leaks.clean:
        kinds = sorted({leak.kind for leak in result.leaks.leaks})
        click.echo(f"warning: leak audit found {len(result.leaks.leaks)} source identifier(s) in the output "
                   f"({', '.join(kinds)}); written because of --allow-leaks", err=True)


def _mask_first(text: str) -> str:
    """Replace direct identifiers before extraction: consistent surrogates when an HMAC key is configured
    (ANONPSY_HMAC_KEY or ANONPSY_HMAC_KEY_FILE), otherwise type labels such as [PERSON]."""
    import os

    from anonpsy.phi.pipeline import mask_text

    has_key = bool(os.environ.get("ANONPSY_HMAC_KEY") or os.environ.get("ANONPSY_HMAC_KEY_FILE"))
    return str(mask_text(text, operator="surrogate" if has_key else "mask").text)


def _llm_client(config: Any) -> Any:
    from anonpsy.llm.client import LLMClient

    return LLMClient(config)


@main.command("graph")
@click.argument("case", metavar="CASE.txt", default="-")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write the graph here (default stdout).")
@click.option("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, show_default=True, help="Input size limit.")
@handle_errors
def graph_cmd(case: str, output: Path | None, max_bytes: int) -> None:
    """Extract the semantic graph of a narrative (rules backend) and print it as YAML.

    \b
    Example:
      anonpsy graph fixtures/cases/01_adhd_child.txt -o case.yaml
    """
    from anonpsy.extract import extract
    from anonpsy.graphio import dump_graph
    from anonpsy.temporal import normalize

    case_id, text = _read_case(case, max_bytes)
    text_out = dump_graph(normalize(extract(text, case_id=case_id)))
    if output is None:
        click.echo(text_out, nl=False)
    else:
        write_atomic(output, text_out)


@main.command("render")
@click.argument("graph_path", metavar="GRAPH.yaml", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write the text here (default stdout).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for the choice of phrasings.")
@handle_errors
def render_cmd(graph_path: Path, output: Path | None, seed: int) -> None:
    """Render a case graph as a clinical case history (deterministic templates).

    \b
    Example:
      anonpsy render fixtures/graphs/01_adhd_child.yaml --seed 3
    """
    from anonpsy.generate import render
    from anonpsy.graphio import read_graph_checked
    from anonpsy.temporal import normalize

    text = render(normalize(read_graph_checked(graph_path)), seed=seed)
    if output is None:
        click.echo(text, nl=False)
    else:
        write_atomic(output, text)


# ---------------------------------------------------------------------------------------------------------------
# batch


def _batch_inputs(src: Path) -> list[tuple[str, str | None, str | None]]:
    """(case_id, path or None, inline text or None) for a directory of .txt files or a JSONL file."""
    if src.is_dir():
        return [(case_id_from(p.stem), str(p), None) for p in sorted(src.glob("*.txt"))]
    if not src.is_file():
        raise AnonpsyError(errors.E100_MISSING_FILE, "batch input not found", src.name)
    return [(r.record_id, None, r.text) for r in read_jsonl_records(src, what="case")]


@dataclass(frozen=True)
class _Job:
    """One case of a batch, as sent to a worker process (no client: clients cannot be pickled)."""

    case_id: str
    path: str | None
    inline: str | None
    outdir: Path
    seed: int
    max_bytes: int
    backend: str
    llm_config: Any
    options: dict[str, Any]
    allow_leaks: bool = False
    quarantine: Path | None = None


_WORKER_LLM: dict[str, Any] = {}


def _worker_llm(config: Any) -> Any:
    """One LLM client per worker process and configuration (clients hold connections)."""
    key = config.model_dump_json()
    if key not in _WORKER_LLM:
        _WORKER_LLM[key] = _llm_client(config)
    return _WORKER_LLM[key]


def _prepare_worker() -> None:
    """Load the rules backend's tables once per worker, out of the garbage collector's way (never fails: a worker
    that cannot prepare still runs its cases, which report their own errors)."""
    from anonpsy.pipeline import prepare_process

    with contextlib.suppress(Exception):  # a broken table fails every case, each with its own error code
        prepare_process()


def _run_one(job: _Job) -> dict[str, Any]:
    """Run one case; never raises (a failure is returned as data without narrative text).

    ``ok``: cases/<id>.txt written (last: its presence marks the case done); ``rejected``: leak audit or invariant
    failed, nothing written to cases/ (the rejected text only to the quarantine directory); ``failed``: an error.
    """
    from anonpsy.graphio import decode_text, read_text_input
    from anonpsy.pipeline import deid_text

    case_id = job.case_id
    t0 = time.perf_counter()
    try:
        if job.path is not None:
            text = read_text_input(Path(job.path), max_bytes=job.max_bytes)
        else:
            raw = (job.inline or "").encode("utf-8")
            if len(raw) > job.max_bytes:
                raise AnonpsyError(errors.E107_TOO_LARGE, f"case is over {job.max_bytes} bytes", case_id)
            text = decode_text(raw, case_id)
        llm = _worker_llm(job.llm_config) if job.backend == "llm" and job.llm_config is not None else None
        result = deid_text(text, seed=job.seed, case_id=case_id, backend=job.backend, llm=llm, options=job.options)
        refused = rejection(result, allow_leaks=job.allow_leaks, quarantine=job.quarantine)
        _emit(result, job.outdir / "emit", accepted=refused is None)
        row: dict[str, Any] = {"case_id": case_id, "violations": len(result.audit.violations),
                               "leaks": len(result.leaks.leaks), "seconds": round(time.perf_counter() - t0, 4)}
        if job.backend == "llm":
            row.update({"llm_calls": result.stats.get("llm_calls", 0), "fallbacks": len(result.audit.fallbacks)})
        if refused is not None:
            if job.quarantine is not None:
                _quarantine(result, job.quarantine, result.text, "txt", refused)
            return {**row, "status": "rejected", "code": refused.code, "error": refused.one_line()}
        write_atomic(job.outdir / "cases" / f"{case_id}.txt", result.text)
        return {**row, "status": "ok"}
    except AnonpsyError as exc:
        return {"case_id": case_id, "status": "failed", "code": exc.code, "error": exc.one_line()}
    except Exception as exc:  # one bad case never aborts the batch
        return {"case_id": case_id, "status": "failed", "code": "E999",
                "error": f"E999 internal error ({type(exc).__name__})"}


STATUSES = ("ok", "rejected", "failed")


def _progress(no_progress: bool, llm: bool) -> Any:
    """A progress bar on stderr, shown only when stderr is a terminal (never in logs or pipes)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    columns: list[Any] = [TextColumn("deid"), BarColumn(), MofNCompleteColumn(),
                          TextColumn("{task.fields[failed]} failed · {task.fields[rejected]} rejected")]
    if llm:
        columns.append(TextColumn("· {task.fields[fallbacks]} fallbacks · {task.fields[calls]} calls/case"))
    columns.append(TimeElapsedColumn())
    return Progress(*columns, console=console, disable=no_progress or not console.is_terminal, transient=True)


@main.command("deid-batch")
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.option("-o", "--output", "outdir", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--jobs", type=int, default=1, show_default=True, help="Worker processes.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, show_default=True, help="Per-case size limit.")
@click.option("--no-progress", is_flag=True, help="Do not show the progress bar (it is shown only on a terminal).")
@click.option("--backend", type=click.Choice(["rules", "llm"]), default="rules", show_default=True)
@click.option("--allow-leaks", is_flag=True,
              help="Write outputs whose leak audit is not empty (the summary keeps their leak counts).")
@click.option("--quarantine", type=click.Path(path_type=Path), metavar="DIR",
              help="Write rejected outputs (leak audit or invariant failed) here, apart from OUTDIR/cases.")
@llm_server_options
@llm_ablation_options
@strict_llm_option
@handle_errors
def deid_batch(input_path: Path, outdir: Path, jobs: int, seed: int, max_bytes: int, no_progress: bool,
               backend: str, allow_leaks: bool, quarantine: Path | None, llm_server: LLMServerArgs,
               llm_options: dict[str, Any]) -> None:
    """De-identify a directory of .txt cases or a JSONL file ({"id", "text"} per line).

    Each case is written atomically to OUTDIR/cases/<id>.txt with graphs and audits in OUTDIR/emit/; cases already
    done are skipped (resumable); a failing case never aborts the batch; OUTDIR/summary.json lists every case as
    ok, rejected (leak audit E130 or invariant E131: nothing written to cases/, so a rerun processes it again) or
    failed, with its error code. A progress bar (cases done, failed, rejected; with --backend llm, rules
    fallbacks and model calls per case) is shown when stderr is a terminal. Exit 1 when any case was rejected or
    failed.

    \b
    Example:
      anonpsy deid-batch fixtures/cases -o out/batch --jobs 2
    """
    if jobs < 1:
        raise AnonpsyError(errors.E109_BAD_OPTION, "--jobs must be at least 1", "--jobs")
    config = llm_server.resolve() if backend == "llm" else None  # fails early with its one-line error
    items = _batch_inputs(input_path)
    outdir.mkdir(parents=True, exist_ok=True)
    summary_path = outdir / "summary.json"
    previous: dict[str, dict[str, Any]] = {}
    if summary_path.is_file():
        try:
            previous = {r["case_id"]: r for r in json.loads(summary_path.read_text(encoding="utf-8"))["cases"]}
        except (ValueError, KeyError, TypeError):
            previous = {}
    todo = [_Job(cid, p, t, outdir, seed, max_bytes, backend, config, dict(llm_options), allow_leaks, quarantine)
            for cid, p, t in items if not (outdir / "cases" / f"{cid}.txt").is_file()]
    results: dict[str, dict[str, Any]] = {}
    for cid, _, _ in items:
        old = previous.get(cid)
        results[cid] = old if old is not None and old.get("status") == "ok" else \
            {"case_id": cid, "status": "ok", "resumed": True}
    done = {s: 0 for s in STATUSES}
    fallbacks = calls = 0
    t0 = time.perf_counter()
    with _progress(no_progress, backend == "llm") as progress:
        task = progress.add_task("cases", total=len(todo), failed=0, rejected=0, fallbacks=0, calls="–")

        def record(r: dict[str, Any]) -> None:
            nonlocal fallbacks, calls
            results[r["case_id"]] = r
            done[r["status"]] += 1
            fallbacks += int(r.get("fallbacks", 0))
            calls += int(r.get("llm_calls", 0))
            finished = sum(done.values())
            progress.update(task, advance=1, failed=done["failed"], rejected=done["rejected"], fallbacks=fallbacks,
                            calls=f"{calls / finished:.1f}")

        if jobs == 1:
            if todo:
                _prepare_worker()
            for job in todo:
                record(_run_one(job))
        else:
            with ProcessPoolExecutor(max_workers=jobs, initializer=_prepare_worker) as pool:
                for fut in as_completed([pool.submit(_run_one, job) for job in todo]):
                    record(fut.result())
    elapsed = time.perf_counter() - t0
    rows = [results[cid] for cid, _, _ in items]
    counts = {s: sum(1 for r in rows if r.get("status") == s) for s in STATUSES}
    summary: dict[str, Any] = {"total": len(rows), "processed": len(todo), "skipped": len(items) - len(todo),
                               "seconds": round(elapsed, 3), **counts}
    tail = ""
    if backend == "llm":
        summary.update({"fallbacks": fallbacks, "llm_calls_per_case": round(calls / len(todo), 2) if todo else 0.0})
        tail = f"; {fallbacks} rules fallbacks, {summary['llm_calls_per_case']} model calls/case"
    summary["cases"] = rows
    write_atomic(summary_path, json.dumps(summary, indent=2) + "\n")
    click.echo(f"{len(rows)} cases: {counts['ok']} ok, {counts['rejected']} rejected, {counts['failed']} failed, "
               f"{len(items) - len(todo)} skipped; {elapsed:.2f}s{tail}; summary in {summary_path}")
    sys.exit(0 if counts["failed"] == 0 and counts["rejected"] == 0 else 1)
