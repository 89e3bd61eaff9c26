"""``anonpsy tabular``: zero-shot synthetic questionnaire tables and their evaluation."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from anonpsy import errors
from anonpsy.cliutil import handle_errors
from anonpsy.errors import AnonpsyError


@click.group()
def tabular() -> None:
    """Synthetic item-level questionnaire tables: generate without real data, audit, evaluate, compare.

    \b
    Example:
      anonpsy tabular synth gad7 -n 200 --kb none --backend rules -o syn.csv
    """


@tabular.command("instruments")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@handle_errors
def instruments_cmd(as_json: bool) -> None:
    """List the bundled instruments: items, response codes, scoring and cut-off.

    \b
    Example:
      anonpsy tabular instruments
    """
    from anonpsy.tabular.instruments import available_instruments, load_instrument

    rows = []
    for iid in available_instruments():
        inst = load_instrument(iid)
        rows.append({"id": iid, "short_name": inst.short_name, "items": inst.n_items,
                     "codes": f"{inst.values[0]}-{inst.values[-1]}", "score": inst.scoring.score,
                     "cutoff": inst.cutoff.min, "construct": inst.construct_name})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        click.echo(f"{r['id']:26} {r['short_name']:12} {r['items']:3} items, codes {r['codes']}, "
                   f"{r['score']} score, cut-off >= {r['cutoff']}  ({r['construct']})")


def _llm_client(path: Path | None) -> Any:
    from anonpsy.llm import LLMClient, load_config

    return LLMClient(load_config(path))


@tabular.command("synth")
@click.argument("instrument")
@click.option("-n", "n_rows", type=int, required=True, help="Number of rows (respondents).")
@click.option("--kb", "kb", default="none", show_default=True,
              help="Knowledge-base directory of .md/.txt files (llm backend), or 'none'.")
@click.option("--backend", type=click.Choice(["rules", "llm"]), default="rules", show_default=True,
              help="rules: latent-severity response model (no model needed); llm: item loop on an LLM server.")
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Write the table (CSV) here.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed; the same seed gives the same table.")
@click.option("--priors", type=click.Path(path_type=Path), help="Persona priors YAML (default: bundled).")
@click.option("--retriever", type=click.Choice(["bm25", "embeddings"]), default="bm25", show_default=True,
              help="Knowledge-base ranking; embeddings need the eval extra.")
@click.option("-k", "top_k", type=int, default=3, show_default=True, help="Passages retrieved per item.")
@click.option("--llm-config", type=click.Path(path_type=Path), help="LLM config file (llm backend).")
@click.option("--workers", type=int, default=0, help="Rows in parallel (llm; default: the config's concurrency).")
@handle_errors
def synth_cmd(instrument: str, n_rows: int, kb: str, backend: str, output: Path, seed: int, priors: Path | None,
              retriever: str, top_k: int, llm_config: Path | None, workers: int) -> None:
    """Generate a synthetic questionnaire table without any real respondent's data.

    Each row is a persona drawn from the priors (sex, age, severity, response style, symptom awareness,
    communication style, consistency); its answers come from the rules backend's latent-severity model or, with
    --backend llm, from an item-by-item dialogue with the configured server that remembers earlier answers and is
    grounded in passages retrieved from --kb. Columns: sex, age, item_1 ... item_n in the instrument's codes. A
    provenance file (OUT.provenance.json) records the personas, versions and retrieved passage sources.

    \b
    Example:
      anonpsy tabular synth dsm5_social_anxiety -n 564 --kb none --backend rules -o syn.csv --seed 1
    """
    from anonpsy.tabular.instruments import load_instrument
    from anonpsy.tabular.kb import KnowledgeBase
    from anonpsy.tabular.personas import load_priors
    from anonpsy.tabular.synth import provenance, summary_line, synthesize
    from anonpsy.yamlio import write_atomic

    if n_rows < 1:
        raise AnonpsyError(errors.E109_BAD_OPTION, "must be at least 1", "-n")
    if top_k < 0:
        raise AnonpsyError(errors.E109_BAD_OPTION, "must be 0 or more", "-k")
    inst = load_instrument(instrument)
    pr = load_priors(priors)
    knowledge = None
    if kb.lower() != "none":
        if backend == "rules":
            click.echo("note: the rules backend does not read the knowledge base; --kb is ignored", err=True)
        else:
            knowledge = KnowledgeBase.from_directory(Path(kb), retriever=retriever)  # type: ignore[arg-type]
    client = _llm_client(llm_config) if backend == "llm" else None
    try:
        n_workers = workers or (client.config.concurrency if client is not None else 1)
        result = synthesize(inst, n_rows, priors=pr, seed=seed, backend=backend,  # type: ignore[arg-type]
                            kb=knowledge, k=top_k, client=client, workers=n_workers)
    finally:
        if client is not None:
            client.close()
    prov = provenance(result, out_name=output.name)
    write_atomic(output, result.to_csv())
    write_atomic(output.with_name(output.stem + ".provenance.json"), json.dumps(prov, indent=2) + "\n")
    click.echo(summary_line(result, str(output)), err=True)


def _read_all(real: Path, syn: tuple[Path, ...], recode: tuple[str, ...]) -> tuple[Any, list[Any]]:
    from anonpsy.tabular.table import apply_recodes, parse_recode, read_table

    recodes = [parse_recode(r) for r in recode]
    for rc in recodes:
        if rc.target.startswith("syn") and rc.target != "syn" and int(rc.target[3:]) > len(syn):
            raise AnonpsyError(errors.T102_BAD_RECODE, f"there is no synthetic table {rc.target[3:]}", "--recode")
    r = apply_recodes(read_table(real), recodes, "real")
    s = [apply_recodes(read_table(p), recodes, "syn", i) for i, p in enumerate(syn, 1)]
    names = [r.name, *(t.name for t in s)]
    if len(set(names)) != len(names):
        for i, t in enumerate(s, 1):
            t.name = f"syn{i}:{t.name}"
    return r, s


def _audit_lines(report: Any, verbose: bool) -> list[str]:
    return [f.one_line() for f in report.findings if verbose or f.level != "note"]


@tabular.command("audit")
@click.argument("real", metavar="REAL.csv", type=click.Path(path_type=Path))
@click.argument("syn", metavar="SYN.csv...", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--instrument", help="Instrument whose codes the item columns must use.")
@click.option("--recode", multiple=True, metavar="[real:|syn:|synN:]COL=OLD:NEW,...",
              help="Map codes explicitly before comparing (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@handle_errors
def audit_cmd(real: Path, syn: tuple[Path, ...], instrument: str | None, recode: tuple[str, ...],
              as_json: bool) -> None:
    """Compare the coding of the tables column by column (the check evaluate runs first).

    Exits 0 when the codings agree, 1 on a mismatch (0/1 vs 1/2, 1-5 vs 0-4, F/M vs female/male, missing
    columns, text vs numbers), 2 on unreadable input.

    \b
    Example:
      anonpsy tabular audit real.csv syn.csv --instrument gad7 --recode syn:sex=0:1,1:2
    """
    from anonpsy.tabular.audit import audit_tables
    from anonpsy.tabular.instruments import load_instrument

    inst = load_instrument(instrument) if instrument else None
    r, s = _read_all(real, syn, recode)
    report = audit_tables(r, s, instrument=inst)
    if as_json:
        click.echo(json.dumps({"ok": report.ok, "recodes": report.recodes, "findings": [
            {"code": f.code, "level": f.level, "table": f.table, "column": f.column, "message": f.message,
             "hint": f.hint} for f in report.findings]}, indent=2))
    else:
        for line in _audit_lines(report, True):
            click.echo(line, err=line.startswith("ERROR"))
        click.echo(f"{len(report.errors)} mismatches, "
                   f"{sum(1 for f in report.findings if f.level == 'warning')} warnings")
    sys.exit(0 if report.ok else 1)


@tabular.command("evaluate")
@click.argument("real", metavar="REAL.csv", type=click.Path(path_type=Path))
@click.argument("syn", metavar="SYN.csv...", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--qi", default="sex,age", show_default=True, help="Quasi-identifier columns for the k-map risk "
              "('' for none).")
@click.option("--instrument", help="Instrument of the item columns (codes, scoring and cut-off).")
@click.option("--recode", multiple=True, metavar="[real:|syn:|synN:]COL=OLD:NEW,...",
              help="Map codes explicitly before the audit (repeatable).")
@click.option("--alpha", type=float, default=0.0, show_default=True, help="Dirichlet smoothing of the JSD.")
@click.option("--bootstrap", "n_boot", type=int, default=1000, show_default=True, help="Bootstrap replicates.")
@click.option("--level", type=float, default=0.95, show_default=True, help="Confidence level.")
@click.option("--interval", type=click.Choice(["percentile", "basic"]), default="percentile", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option("--report", "report_dir", type=click.Path(path_type=Path),
              help="Write report.md, report.json and figures/*.png here.")
@click.option("--no-figures", is_flag=True, help="Skip the PNG figures.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@handle_errors
def evaluate_cmd(real: Path, syn: tuple[Path, ...], qi: str, instrument: str | None, recode: tuple[str, ...],
                 alpha: float, n_boot: int, level: float, interval: str, seed: int, report_dir: Path | None,
                 no_figures: bool, as_json: bool) -> None:
    """Fidelity, privacy and psychometrics of synthetic tables against a real one, with bootstrap CIs.

    The schema audit runs first and stops on any coding mismatch unless --recode maps it. Fidelity: mean
    per-column Jensen-Shannon divergence, MAE of bias-corrected Cramer's V over column pairs, squared energy
    distance (normalised Hamming). Privacy: exact overlap, nearest-neighbour Hamming distance (5th percentile,
    share <= 1/p), average k-map risk on --qi. Psychometrics: Cronbach's alpha, McDonald's omega, corrected
    item-total r, share at or above the cut-off. With two or more synthetic tables, paired deltas too.

    \b
    Example:
      anonpsy tabular evaluate real.csv syn.csv random.csv --instrument gad7 --bootstrap 5000 --report out/
    """
    from anonpsy.tabular.audit import audit_tables
    from anonpsy.tabular.instruments import load_instrument

    if n_boot < 0:
        raise AnonpsyError(errors.E109_BAD_OPTION, "must be 0 or more", "--bootstrap")
    inst = load_instrument(instrument) if instrument else None
    r, s = _read_all(real, syn, recode)
    audit = audit_tables(r, s, instrument=inst)
    if not audit.ok:
        for f in audit.errors[1:]:
            click.echo(f.one_line(), err=True)
        first = audit.errors[0]
        hint = f"; {first.hint}" if first.hint else ""
        raise AnonpsyError(errors.T100_SCHEMA_MISMATCH, f"schema audit: {first.code} column {first.column!r}: "
                                                         f"{first.message}{hint}", first.table)
    from anonpsy.tabular.evaluate import evaluate_tables
    from anonpsy.tabular.report import render_markdown, result_dict, write_report

    qi_cols = [c.strip() for c in qi.split(",") if c.strip()]
    result = evaluate_tables(r, s, audit, instrument=inst, qi=qi_cols, alpha=alpha, n_boot=n_boot, level=level,
                             method=interval, seed=seed)  # type: ignore[arg-type]
    if report_dir is not None:
        written = write_report(result, report_dir, figures=not no_figures)
        click.echo(f"report: {', '.join(str(p) for p in written)}", err=True)
    if as_json:
        click.echo(json.dumps(result_dict(result), indent=2, ensure_ascii=False))
    else:
        click.echo(render_markdown(result), nl=False)


@tabular.command("baseline")
@click.argument("method", type=click.Choice(["random", "ctgan", "tvae"]))
@click.argument("real", metavar="REAL.csv", type=click.Path(path_type=Path))
@click.option("-n", "n_rows", type=int, help="Rows to generate (default: as many as REAL).")
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Write the table here.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--instrument", help="Instrument whose codes the item columns take (random).")
@click.option("--epochs", default="100,300", show_default=True, help="Epoch grid (ctgan/tvae).")
@click.option("--seeds", default="0,1,2", show_default=True, help="Seed grid (ctgan/tvae).")
@click.option("--max-overlap", type=float, help="Admissible exact overlap (default: held-out real rows').")
@click.option("--max-near-share", type=float, help="Admissible share within 1/p (default: held-out real rows').")
@handle_errors
def baseline_cmd(method: str, real: Path, n_rows: int | None, output: Path, seed: int, instrument: str | None,
                 epochs: str, seeds: str, max_overlap: float | None, max_near_share: float | None) -> None:
    """Baseline synthetic tables: uniform random, or CTGAN/TVAE (anonpsy[synth]) with privacy-aware selection.

    random draws every column uniformly over its domain. ctgan/tvae split REAL 70/30, train one candidate per
    epochs x seed on the 70%, keep candidates whose exact overlap and near-copy share with the training rows do
    not exceed those of the held-out real rows, and write the one with the lowest JSD to the held-out rows; the
    selection log goes to OUT.selection.json.

    \b
    Example:
      anonpsy tabular baseline random real.csv -o random.csv --instrument gad7 --seed 3
    """
    from anonpsy.tabular.baselines import SDVSynthesizer, privacy_aware_selection, random_table
    from anonpsy.tabular.instruments import load_instrument
    from anonpsy.tabular.synth import rows_as_text
    from anonpsy.tabular.table import read_table
    from anonpsy.yamlio import write_atomic

    inst = load_instrument(instrument) if instrument else None
    table = read_table(real)
    n = n_rows if n_rows is not None else table.n_rows
    if method == "random":
        out = random_table(table, n, seed=seed, instrument=inst, name=output.name)
    else:
        try:
            grid_e = [int(x) for x in epochs.split(",") if x.strip()]
            grid_s = [int(x) for x in seeds.split(",") if x.strip()]
        except ValueError:
            raise AnonpsyError(errors.E109_BAD_OPTION, "expected comma-separated integers", "--epochs/--seeds"
                               ) from None
        if not grid_e or not grid_s or min(grid_e) < 1:
            raise AnonpsyError(errors.E109_BAD_OPTION, "give at least one epoch count >= 1 and one seed",
                               "--epochs/--seeds")
        SDVSynthesizer(method, epochs=1, seed=0)  # fails early, with the install hint, when SDV is missing
        sel = privacy_aware_selection(
            table, lambda e, s: SDVSynthesizer(method, epochs=e, seed=s, instrument=inst), n=n, epochs=grid_e,
            seeds=grid_s, split_seed=seed, max_overlap=max_overlap, max_near_share=max_near_share)
        out = sel.table
        write_atomic(output.with_name(output.stem + ".selection.json"),
                     json.dumps({"method": method, **sel.log()}, indent=2) + "\n")
    rows = [[out.values(c)[i] or "" for c in out.columns] for i in range(out.n_rows)]
    write_atomic(output, rows_as_text(out.columns, rows))
    click.echo(f"{out.n_rows} rows x {len(out.columns)} columns -> {output} ({method} baseline)", err=True)


COMMANDS = [tabular]
