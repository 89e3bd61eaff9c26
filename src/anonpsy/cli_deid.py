"""`anonpsy deid`, `anonpsy deid-batch`, `anonpsy graph` and `anonpsy render`."""

from __future__ import annotations

import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import click

from anonpsy import errors
from anonpsy.cli import main
from anonpsy.cliutil import handle_errors
from anonpsy.errors import AnonpsyError
from anonpsy.llm_backend.cli_options import llm_ablation_options
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
    return _case_id(p.stem), read_text_input(p, max_bytes=max_bytes)


def _case_id(stem: str) -> str:
    import re

    cid = re.sub(r"[^A-Za-z0-9_.-]", "_", stem).strip("._-") or "case"
    return cid if cid[0].isalnum() else f"c{cid}"


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


def _emit(result: Any, emit_dir: Path) -> None:
    from anonpsy.graphio import dump_graph

    emit_dir.mkdir(parents=True, exist_ok=True)
    cid = result.case_id
    write_atomic(emit_dir / f"{cid}.graph.yaml", dump_graph(result.original))
    write_atomic(emit_dir / f"{cid}.perturbed.yaml", dump_graph(result.perturbed))
    write_atomic(emit_dir / f"{cid}.audit.json", result.audit.model_dump_json(indent=2) + "\n")
    write_atomic(emit_dir / f"{cid}.leaks.json", result.leaks.model_dump_json(indent=2) + "\n")


@main.command()
@click.argument("case", metavar="CASE.txt", default="-")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write the result here (default stdout).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed; the same seed gives the same output.")
@click.option("--backend", type=click.Choice(["rules", "llm"]), default="rules", show_default=True,
              help="rules: deterministic, no model; llm: an OpenAI-compatible server (see --llm-config).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "yaml"]), default="text", show_default=True)
@click.option("--emit", "emit_dir", type=click.Path(path_type=Path),
              help="Also write the original graph, perturbed graph, audit and leak audit to this directory.")
@click.option("--allow-leaks", is_flag=True, help="Exit 0 even when the leak audit is not empty.")
@click.option("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, show_default=True, help="Input size limit.")
@click.option("--llm-config", type=click.Path(path_type=Path), help="LLM config file (llm backend).")
@click.option("--mask-first", is_flag=True,
              help="Mask direct identifiers before any other step (surrogates when ANONPSY_HMAC_KEY is set, "
                   "else type labels).")
@click.option("--diagnoses", help="Comma-separated diagnosis labels or rules/dsm ids known from metadata (llm).")
@llm_ablation_options
@handle_errors
def deid(case: str, output: Path | None, seed: int, backend: str, fmt: str, emit_dir: Path | None,
         allow_leaks: bool, max_bytes: int, llm_config: Path | None, mask_first: bool, diagnoses: str | None,
         llm_options: dict[str, Any]) -> None:
    """De-identify one psychiatric case narrative (a file, or stdin with '-').

    Text → semantic graph → perturbed graph (clinical rules) → regenerated narrative. Exits 1 when an invariant
    is violated or the leak audit finds source identifiers in the output (unless --allow-leaks), 2 on bad input.

    \b
    Example:
      anonpsy deid fixtures/cases/01_adhd_child.txt --seed 7 --emit out/
    """
    from anonpsy.pipeline import deid_text

    case_id, text = _read_case(case, max_bytes)
    if backend == "llm" and llm_config is None:
        raise AnonpsyError(errors.E109_BAD_OPTION, "--backend llm needs --llm-config PATH (see "
                                                   "adapters/config.example.yaml)", "--llm-config")
    options = dict(llm_options)
    if diagnoses:
        options["diagnoses"] = [d.strip() for d in diagnoses.split(",") if d.strip()]
    if mask_first:
        text = _mask_first(text)
    llm = _llm_from_config(llm_config) if backend == "llm" else None
    try:
        result = deid_text(text, seed=seed, backend=backend, case_id=case_id, llm=llm, options=options)
    finally:
        if llm is not None:
            llm.close()
    rendered = _format_output(result, fmt)
    if emit_dir is not None:
        _emit(result, emit_dir)
    if output is None:
        click.echo(rendered, nl=False)
    else:
        write_atomic(output, rendered)
    if result.audit.violations:
        click.echo(f"{len(result.audit.violations)} invariant violations (see the audit)", err=True)
        sys.exit(1)
    if not result.leaks.clean:
        kinds = sorted({leak.kind for leak in result.leaks.leaks})
        click.echo(f"leak audit: {len(result.leaks.leaks)} source identifiers found in the output "
                   f"({', '.join(kinds)}); see --emit leaks.json", err=True)
        if not allow_leaks:
            sys.exit(1)


def _mask_first(text: str) -> str:
    """Replace direct identifiers before extraction: consistent surrogates when an HMAC key is configured
    (ANONPSY_HMAC_KEY or ANONPSY_HMAC_KEY_FILE), otherwise type labels such as [PERSON]."""
    import os

    from anonpsy.phi.pipeline import mask_text

    has_key = bool(os.environ.get("ANONPSY_HMAC_KEY") or os.environ.get("ANONPSY_HMAC_KEY_FILE"))
    return str(mask_text(text, operator="surrogate" if has_key else "mask").text)


def _llm_from_config(path: Path | None) -> Any:
    from anonpsy.llm.client import LLMClient
    from anonpsy.llm.config import load_config

    return LLMClient(load_config(path))


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
        return [(_case_id(p.stem), str(p), None) for p in sorted(src.glob("*.txt"))]
    if not src.is_file():
        raise AnonpsyError(errors.E100_MISSING_FILE, "batch input not found", src.name)
    out: list[tuple[str, str | None, str | None]] = []
    seen: set[str] = set()
    for lineno, line in enumerate(src.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            raise AnonpsyError(errors.E108_MALFORMED_JSON, "malformed JSON line", f"{src.name}:{lineno}") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
            raise AnonpsyError(errors.E103_SCHEMA, "each line needs a string field 'text'", f"{src.name}:{lineno}")
        raw_id = rec.get("id", rec.get("note_id", rec.get("case_id", f"line{lineno}")))
        cid = _case_id(str(raw_id))
        if cid in seen:
            raise AnonpsyError(errors.E103_SCHEMA, "duplicate case id", f"{src.name}:{lineno}")
        seen.add(cid)
        out.append((cid, None, rec["text"]))
    return out


BatchArgs = tuple[str, str | None, str | None, Path, int, int, str, str | None, dict[str, Any]]
_WORKER_LLM: dict[str, Any] = {}


def _worker_llm(config_path: str) -> Any:
    """One LLM client per worker process (clients hold connections and cannot be pickled)."""
    if config_path not in _WORKER_LLM:
        _WORKER_LLM[config_path] = _llm_from_config(Path(config_path))
    return _WORKER_LLM[config_path]


def _run_one(args: BatchArgs) -> dict[str, Any]:
    """Run one case; never raises (a failure is returned as data without narrative text)."""
    case_id, path, inline, outdir, seed, max_bytes, backend, llm_config, options = args
    from anonpsy.graphio import decode_text, read_text_input
    from anonpsy.pipeline import deid_text

    t0 = time.perf_counter()
    try:
        if path is not None:
            text = read_text_input(Path(path), max_bytes=max_bytes)
        else:
            raw = (inline or "").encode("utf-8")
            if len(raw) > max_bytes:
                raise AnonpsyError(errors.E107_TOO_LARGE, f"case is over {max_bytes} bytes", case_id)
            text = decode_text(raw, case_id)
        llm = _worker_llm(llm_config) if backend == "llm" and llm_config else None
        result = deid_text(text, seed=seed, case_id=case_id, backend=backend, llm=llm, options=options)
        case_dir = outdir / "cases"
        _emit(result, outdir / "emit")
        write_atomic(case_dir / f"{case_id}.txt", result.text)  # written last: its presence marks "done"
        return {"case_id": case_id, "status": "ok" if result.ok() else "flagged",
                "violations": len(result.audit.violations), "leaks": len(result.leaks.leaks),
                "seconds": round(time.perf_counter() - t0, 4)}
    except AnonpsyError as exc:
        return {"case_id": case_id, "status": "failed", "error": exc.one_line()}
    except Exception as exc:  # one bad case never aborts the batch
        return {"case_id": case_id, "status": "failed", "error": f"E999 internal error ({type(exc).__name__})"}


@main.command("deid-batch")
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.option("-o", "--output", "outdir", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--jobs", type=int, default=1, show_default=True, help="Worker processes.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, show_default=True, help="Per-case size limit.")
@click.option("--no-progress", is_flag=True, help="Do not show the progress bar.")
@click.option("--backend", type=click.Choice(["rules", "llm"]), default="rules", show_default=True)
@click.option("--llm-config", type=click.Path(path_type=Path), help="LLM config file (llm backend).")
@llm_ablation_options
@handle_errors
def deid_batch(input_path: Path, outdir: Path, jobs: int, seed: int, max_bytes: int, no_progress: bool,
               backend: str, llm_config: Path | None, llm_options: dict[str, Any]) -> None:
    """De-identify a directory of .txt cases or a JSONL file ({"id", "text"} per line).

    Each case is written atomically to OUTDIR/cases/<id>.txt with graphs and audits in OUTDIR/emit/; cases already
    done are skipped (resumable); a failing case never aborts the batch; OUTDIR/summary.json lists every case.
    Exit 1 when any case failed or was flagged.

    \b
    Example:
      anonpsy deid-batch fixtures/cases -o out/batch --jobs 2
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if jobs < 1:
        raise AnonpsyError(errors.E109_BAD_OPTION, "--jobs must be at least 1", "--jobs")
    if backend == "llm" and llm_config is None:
        raise AnonpsyError(errors.E109_BAD_OPTION, "--backend llm needs --llm-config PATH", "--llm-config")
    if llm_config is not None:
        from anonpsy.llm.config import load_config

        load_config(llm_config)  # fail early with the config's own one-line error
    items = _batch_inputs(input_path)
    outdir.mkdir(parents=True, exist_ok=True)
    summary_path = outdir / "summary.json"
    previous: dict[str, dict[str, Any]] = {}
    if summary_path.is_file():
        try:
            previous = {r["case_id"]: r for r in json.loads(summary_path.read_text(encoding="utf-8"))["cases"]}
        except (ValueError, KeyError, TypeError):
            previous = {}
    cfg = str(llm_config) if llm_config is not None else None
    todo: list[BatchArgs] = [(cid, p, t, outdir, seed, max_bytes, backend, cfg, dict(llm_options))
                             for cid, p, t in items if not (outdir / "cases" / f"{cid}.txt").is_file()]
    results: dict[str, dict[str, Any]] = {cid: previous.get(cid, {"case_id": cid, "status": "ok", "resumed": True})
                                          for cid, _, _ in items}
    t0 = time.perf_counter()
    with Progress(TextColumn("deid"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  disable=no_progress, transient=True) as progress:
        task = progress.add_task("cases", total=len(todo))
        if jobs == 1:
            for args in todo:
                r = _run_one(args)
                results[r["case_id"]] = r
                progress.advance(task)
        else:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                futures = [pool.submit(_run_one, a) for a in todo]
                for fut in as_completed(futures):
                    r = fut.result()
                    results[r["case_id"]] = r
                    progress.advance(task)
    elapsed = time.perf_counter() - t0
    rows = [results[cid] for cid, _, _ in items]
    counts = {s: sum(1 for r in rows if r.get("status") == s) for s in ("ok", "flagged", "failed")}
    summary = {"total": len(rows), "processed": len(todo), "skipped": len(items) - len(todo),
               "seconds": round(elapsed, 3), **counts, "cases": rows}
    write_atomic(summary_path, json.dumps(summary, indent=2) + "\n")
    click.echo(f"{len(rows)} cases: {counts['ok']} ok, {counts['flagged']} flagged, {counts['failed']} failed, "
               f"{len(items) - len(todo)} skipped; {elapsed:.2f}s; summary in {summary_path}")
    sys.exit(0 if counts["failed"] == 0 and counts["flagged"] == 0 else 1)
