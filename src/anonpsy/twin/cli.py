"""``anonpsy twin``: k-anonymous synthetic corpora from anonymized entities (table, anonymize, generate, evaluate)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from anonpsy.cli import main
from anonpsy.cliutil import handle_errors
from anonpsy.errors import AnonpsyError
from anonpsy.twin.errors import T101_BAD_CORPUS, T103_BAD_OPTION, T105_VERIFY_FAILED

DEFAULT_TYPES = "diagnosis,symptom,medication,therapy,procedure,test"


class _Advance:
    """``advance(n)`` of a rich task, with ``total(n)`` to set its size once it is known."""

    def __init__(self, progress: Any, task: Any) -> None:
        self._progress, self._task = progress, task

    def __call__(self, n: int) -> None:
        self._progress.advance(self._task, n)

    def total(self, n: int) -> None:
        self._progress.update(self._task, total=n)


@contextlib.contextmanager
def _bar(label: str, total: int | None, enabled: bool) -> Iterator[_Advance]:
    """A rich progress bar on stderr (transient); yields ``advance(n)``."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), disable=not enabled, transient=True) as progress:
        yield _Advance(progress, progress.add_task(label, total=total))


def _jobs(jobs: int | None) -> int:
    n = jobs if jobs is not None else min(2, os.cpu_count() or 1)
    if n < 1:
        raise AnonpsyError(T103_BAD_OPTION, "--jobs must be at least 1", "--jobs")
    return n


@click.group("twin")
def twin() -> None:
    """RecordTwin: share a corpus as synthetic documents written from k-anonymized entity sets.

    A corpus becomes a document–entity table (table), the table is k-anonymized (anonymize), each kept
    document gets a synthetic twin written only from its anonymized entities and a few separately anonymized
    style examples (generate, also the REPLACE, ORGE and ORGD baselines), and the synthetic corpora are
    measured against the sources (evaluate).

    \b
    Example:
      anonpsy twin table ../shared/data/mtsamples-all/notes.jsonl.gz -o out/twin
      anonpsy twin anonymize out/twin -k 5
      anonpsy twin generate out/twin/k5 --examples 2 -o out/twin/k5/recordtwin
      anonpsy twin evaluate out/twin out/twin/k5/recordtwin -o out/twin/report
    """


main.add_command(twin)


@twin.command("table")
@click.argument("corpus", metavar="CORPUS", type=click.Path(path_type=Path))
@click.option("-o", "--output", "outdir", required=True, type=click.Path(path_type=Path), help="Table directory.")
@click.option("--types", default=DEFAULT_TYPES, show_default=True, help="Entity types, comma-separated.")
@click.option("--jobs", type=int, default=None, help="Worker processes (default: up to 2).")
@click.option("--limit", type=int, default=None, help="Only the first N records.")
@click.option("--keep-duplicates", is_flag=True, help="Keep records whose text repeats another's (default: once).")
@click.option("--no-progress", is_flag=True, help="Do not show progress bars.")
@handle_errors
def table_cmd(corpus: Path, outdir: Path, types: str, jobs: int | None, limit: int | None, keep_duplicates: bool,
              no_progress: bool) -> None:
    """Extract every document's entities into a sparse document–entity table.

    CORPUS is a JSONL file (.jsonl or .jsonl.gz; {"id" or "note_id", "text", ...}) or a directory of .txt files.
    Entities are diagnoses (DSM names, aliases and canonical synonyms), symptoms, medications, therapies and
    tests found by the project's lexicons, kept only when asserted for the patient (not negated, hypothetical
    or a relative's). Records with the same text are one document. Writes manifest.json, documents.csv,
    table.csv, vocabulary.csv and mentions.csv to DIR.

    \b
    Example:
      anonpsy twin table ../shared/data/mtsamples-all/notes.jsonl.gz -o out/twin
    """
    from anonpsy.twin.concepts import parse_types
    from anonpsy.twin.corpus import load_documents
    from anonpsy.twin.table import build_table, write_table

    try:
        tps = parse_types(types)
    except ValueError as exc:
        raise AnonpsyError(T103_BAD_OPTION, str(exc), "--types") from None
    t0 = time.perf_counter()
    docs = load_documents(corpus, limit=limit)
    from anonpsy.twin.table import dedupe

    n = len(docs) if keep_duplicates else len(dedupe(docs)[0])
    with _bar("table", n, not no_progress) as advance:
        table = build_table(docs, tps, jobs=_jobs(jobs), deduplicate=not keep_duplicates, progress=advance)
    man = write_table(table, outdir, corpus)
    click.echo(f"{man['documents']} documents ({man['duplicates_collapsed']} duplicate records collapsed), "
               f"{man['documents_with_entities']} with entities; {man['entities']} entities "
               f"({', '.join(f'{t} {n}' for t, n in man['per_type'].items())}); {man['entity_occurrences']} "
               f"document-entity pairs; {time.perf_counter() - t0:.1f}s; table in {outdir}")


@twin.command("anonymize")
@click.argument("table_dir", metavar="DIR", type=click.Path(path_type=Path))
@click.option("-k", "k", type=int, required=True, help="Every published entity set is shared by at least K documents.")
@click.option("--min-df", type=int, default=None, help="Frequency floor (default K): rarer entities are generalised "
              "or deleted.")
@click.option("-o", "--output", "outdir", type=click.Path(path_type=Path), default=None,
              help="Output directory (default DIR/kK).")
@click.option("--no-progress", is_flag=True, help="Do not show progress bars.")
@handle_errors
def anonymize_cmd(table_dir: Path, k: int, min_df: int | None, outdir: Path | None, no_progress: bool) -> None:
    """k-anonymize a document–entity table and verify the result.

    Rare entities are generalised up the hierarchy (diagnosis → DSM chapter, drug → class, test → test family)
    where the generalisation itself survives the frequency floor, else deleted; documents are then grouped with
    their nearest neighbours (cosine over binary rows, scikit-learn) and keep what their group shares. The
    result is verified from the written files; exit 1 when verification fails. Writes anonymized.csv,
    recoding.csv, outcomes.csv, loss.json (information loss per type), verification.json and manifest.json.

    \b
    Example:
      anonpsy twin anonymize out/twin -k 5
    """
    from anonpsy.twin.anonymize import anonymize, information_loss, verify
    from anonpsy.twin.mentions import default_hierarchy
    from anonpsy.twin.store import read_anonymized, sha256_file, write_anonymized
    from anonpsy.twin.table import read_table

    if k < 1:
        raise AnonpsyError(T103_BAD_OPTION, "-k must be at least 1", "-k")
    table = read_table(table_dir)
    h = default_hierarchy()
    sets = table.sets()
    t0 = time.perf_counter()
    with _bar(f"anonymize k={k}", sum(1 for s in sets.values() if s), not no_progress) as advance:
        result = anonymize(sets, h, k, min_df, progress=advance)
    out = outdir or table_dir / f"k{k}"
    loss = information_loss(sets, result, h)
    provisional = verify(sets, result.published, h, k)
    write_anonymized(result, out, table_root=table_dir, table_sha=sha256_file(table_dir / "table.csv"), loss=loss,
                     verification=provisional)
    # After the fact: read the files back and verify again from scratch.
    back = read_anonymized(out)
    check = verify(sets, back.published, h, k)
    from anonpsy.yamlio import write_atomic

    write_atomic(out / "verification.json", json.dumps(check, indent=2) + "\n")
    docs = loss["documents"]
    click.echo(f"k={k}, floor {result.floor}: {docs['kept']} of {docs['total']} documents kept "
               f"({docs['kept_share']:.1%}; {docs['kept_share_of_documents_with_entities']:.1%} of those with "
               f"entities) in {check['classes']} classes; information retained {loss['all']['information_retained']}; "
               f"{time.perf_counter() - t0:.1f}s; in {out}")
    for t, row in loss["per_type"].items():
        click.echo(f"  {t:<10} {row['occurrences']:>6} entities: kept {row['kept_share']:.1%}, generalised "
                   f"{row['generalised_share']:.1%}, deleted {row['deleted_share']:.1%}; distinct "
                   f"{row['distinct_before']} -> {row['distinct_after']}; information retained "
                   f"{row['information_retained']}")
    if not check["ok"]:
        click.echo(f"{T105_VERIFY_FAILED} {out.name}: verification failed: {'; '.join(check['problems'])}", err=True)
        sys.exit(1)
    if not check["published_documents"]:
        click.echo(f"verified: nothing is published (no entity set can be shared by {k} documents)")
        return
    click.echo(f"verified: every published entity set is shared by at least {k} documents (smallest class "
               f"{check['smallest_class']}) and names only concepts of its document or their generalisations")


def _load_for_generation(d: Path, k: int | None, corpus: Path | None) -> tuple[Any, Any, dict[str, str], Path]:
    from anonpsy.twin.store import read_anonymized
    from anonpsy.twin.table import read_manifest, read_table

    adir = d
    if not (d / "anonymized.csv").is_file():
        if k is not None and (d / f"k{k}" / "anonymized.csv").is_file():
            adir = d / f"k{k}"
        else:
            subs = sorted(p for p in d.glob("k*") if (p / "anonymized.csv").is_file())
            if len(subs) != 1:
                raise AnonpsyError(T103_BAD_OPTION, "give an anonymized directory (written by `anonpsy twin "
                                   "anonymize`), or a table directory with -k K", d.name)
            adir = subs[0]
    anon = read_anonymized(adir)
    table_root = Path(anon.manifest["table"])
    read_manifest(table_root)
    table = read_table(table_root)
    texts = _texts(table, corpus)
    return table, anon, texts, adir


def _texts(table: Any, corpus: Path | None) -> dict[str, str]:
    from anonpsy.twin.corpus import file_sha256, load_documents

    path = corpus or Path(table.manifest["corpus"])
    if not path.exists():
        raise AnonpsyError(T101_BAD_CORPUS, "the table's corpus is not where it was; give --corpus PATH", path.name)
    if file_sha256(path) != table.manifest.get("corpus_sha256"):
        raise AnonpsyError(T101_BAD_CORPUS, "the corpus is not the one the table was built from (SHA-256 differs)",
                           path.name)
    docs = {d.doc_id: d for d in load_documents(path)}
    missing = [d.doc_id for d in table.docs if d.doc_id not in docs]
    if missing:
        raise AnonpsyError(T101_BAD_CORPUS, f"{len(missing)} table documents are not in the corpus", path.name)
    return {d.doc_id: docs[d.doc_id].text for d in table.docs}


@twin.command("generate")
@click.argument("anon_dir", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--examples", type=int, default=2, show_default=True, help="Style examples per document.")
@click.option("-o", "--output", "outdir", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--method", type=click.Choice(["recordtwin", "replace", "orge", "orgd"]), default="recordtwin",
              show_default=True, help="RecordTwin or one of the paper's baselines.")
@click.option("--backend", type=click.Choice(["rules", "llm"]), default="rules", show_default=True)
@click.option("--llm-config", type=click.Path(path_type=Path), help="LLM config file (llm backend).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--pool-size", type=int, default=20, show_default=True, help="Documents in the example pool.")
@click.option("--word-floor", type=int, default=None, help="Pool words and reused sentences must occur in this many "
              "documents (default max(K, 5)).")
@click.option("--docs", type=click.Choice(["kept", "all"]), default="kept", show_default=True,
              help="Baselines: the documents RecordTwin keeps, or every document.")
@click.option("--strict", is_flag=True, help="Also reject documents naming concepts their twin source lacks.")
@click.option("--max-attempts", type=int, default=3, show_default=True, help="llm backend: writes per document.")
@click.option("--on-violation", type=click.Choice(["fail", "drop"]), default="fail", show_default=True,
              help="A document that still leaks: stop the run, or leave it out (exit 1 at the end).")
@click.option("--limit", type=int, default=None, help="Only the first N target documents (a trial run).")
@click.option("-k", "k", type=int, default=None, help="With a table directory: use its kK anonymization.")
@click.option("--corpus", type=click.Path(path_type=Path), default=None, help="The table's corpus, if it moved.")
@click.option("--restart", is_flag=True, help="Discard an unfinished or finished run in the output directory.")
@click.option("--no-progress", is_flag=True, help="Do not show progress bars.")
@handle_errors
def generate_cmd(anon_dir: Path, examples: int, outdir: Path, method: str, backend: str, llm_config: Path | None,
                 seed: int, pool_size: int, word_floor: int | None, docs: str, strict: bool, max_attempts: int,
                 on_violation: str, limit: int | None, k: int | None, corpus: Path | None, restart: bool,
                 no_progress: bool) -> None:
    """Write one synthetic document per kept document (resumable; outputs written atomically).

    RecordTwin writes each document from its anonymized lines of entities (generalised names, blanks for
    deleted entities), its sentence count and N style examples from a separately anonymized pool; every
    generated document is checked for deleted or non-generalised entities and written again (llm backend) or
    the run fails (exit 1). --method replace|orge|orgd writes the paper's baselines. OUT/synthetic.jsonl is
    shuffled and may be shared; OUT/links.jsonl links it to the sources and must stay private.

    \b
    Example:
      anonpsy twin generate out/twin/k5 --examples 2 -o out/twin/k5/recordtwin
    """
    from anonpsy.twin.generate import Corpus, LeakError, Settings, run
    from anonpsy.twin.mentions import default_hierarchy, matcher

    if backend == "llm" and llm_config is None:
        raise AnonpsyError(T103_BAD_OPTION, "--backend llm needs --llm-config PATH (see adapters/config.example.yaml)",
                           "--llm-config")
    settings = Settings(method=method, backend=backend, examples=examples, pool_size=pool_size,
                        word_floor=word_floor, seed=seed, docs=docs, strict=strict, max_attempts=max_attempts,
                        on_violation=on_violation, limit=limit)
    settings.validate()
    table, anon, texts, adir = _load_for_generation(anon_dir, k, corpus)
    c = Corpus(table, texts, anon, default_hierarchy(), matcher(table.types))
    client: Any = None
    writer: Any
    if backend == "llm":
        from anonpsy.llm.client import LLMClient
        from anonpsy.llm.config import load_config
        from anonpsy.twin.writers import LLMWriter

        client = LLMClient(load_config(llm_config))
        writer = LLMWriter(client)
    else:
        from anonpsy.twin.writers import RulesWriter

        writer = RulesWriter()
    extra = {"k": anon.k, "table": anon.manifest["table"], "anonymized": str(adir.resolve()),
             "anonymized_sha256": anon.manifest["anonymized_sha256"],
             "prompt": "twin_orgd@v1" if method == "orgd" else "twin_generate@v1"}
    if backend == "llm" and client is not None:
        extra["model"] = client.config.endpoint.model if hasattr(client, "config") else None
    t0 = time.perf_counter()
    try:
        with _bar(f"generate {method}", None, not no_progress) as advance:
            manifest, res = run(c, settings, writer, outdir, extra=extra, restart=restart, progress=advance,
                                on_start=advance.total)
    except LeakError as exc:
        click.echo(exc.one_line(), err=True)
        sys.exit(1)
    finally:
        if client is not None:
            client.close()
    click.echo(f"{method} ({backend}): {manifest['documents']} synthetic documents of {res.total} targets "
               f"({res.resumed} resumed, {len(res.dropped)} dropped); {time.perf_counter() - t0:.1f}s; in {outdir}")
    if res.dropped:
        click.echo(f"{len(res.dropped)} documents still named a concept they may not name and were left out "
                   "(see summary.json)", err=True)
        sys.exit(1)


@twin.command("evaluate")
@click.argument("orig", metavar="ORIG", type=click.Path(path_type=Path))
@click.argument("synth", metavar="SYNTH...", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", "outdir", required=True, type=click.Path(path_type=Path), help="Report directory.")
@click.option("--label", default=None, help="Corpus field to classify (default medical_specialty when present).")
@click.option("--no-utility", is_flag=True, help="Skip the TSTR / TRTR classifiers.")
@click.option("--test-size", type=float, default=0.2, show_default=True, help="Held-out share of the sources.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--jobs", type=int, default=None, help="Worker processes (default: up to 2).")
@click.option("--stemmer", is_flag=True, help="ROUGE-L with Porter stemming.")
@click.option("--corpus", type=click.Path(path_type=Path), default=None, help="The table's corpus, if it moved.")
@click.option("--no-progress", is_flag=True, help="Do not show progress bars.")
@handle_errors
def evaluate_cmd(orig: Path, synth: tuple[Path, ...], outdir: Path, label: str | None, no_utility: bool,
                 test_size: float, seed: int, jobs: int | None, stemmer: bool, corpus: Path | None,
                 no_progress: bool) -> None:
    """Measure synthetic corpora against their sources and write REPORT/report.{json,md} and rouge_kde.png.

    ORIG is the table directory the synthetic corpora come from; each SYNTH is a directory written by
    `anonpsy twin generate`. Metrics: nearest-document Jaccard re-identification (tokens and entities) with the
    mean Jaccard of the chosen pairs, ROUGE-L against the source (mean, max, KDE plot), entity diversity per
    type, and train-on-synthetic / test-on-real F1 of a document-label classifier next to train-on-real.

    \b
    Example:
      anonpsy twin evaluate out/twin out/twin/k5/recordtwin out/twin/k5/replace -o out/twin/report
    """
    from anonpsy.twin.corpus import load_documents
    from anonpsy.twin.mentions import default_hierarchy
    from anonpsy.twin.report import SynthCorpus, _f, evaluate_corpora, write_report
    from anonpsy.twin.store import read_synthetic
    from anonpsy.twin.table import read_table

    if not 0 < test_size < 1:
        raise AnonpsyError(T103_BAD_OPTION, "--test-size must be between 0 and 1", "--test-size")
    table = read_table(orig)
    texts = _texts(table, corpus)
    synths: list[SynthCorpus] = []
    for p in synth:
        man, docs = read_synthetic(p)
        if Path(str(man.get("table", ""))).resolve() != orig.resolve():
            raise AnonpsyError(T103_BAD_OPTION, "this synthetic corpus was not made from ORIG's table", p.name)
        unknown = [d.source for d in docs if d.source not in texts]
        if unknown:
            raise AnonpsyError(T103_BAD_OPTION, f"{len(unknown)} synthetic documents name sources not in ORIG", p.name)
        name = f"{man.get('method')} k={man.get('k')}" if man.get("k") else str(man.get("method"))
        if man.get("backend") == "llm":
            name += " (llm)"
        while name in {s.name for s in synths}:
            name += "'"
        synths.append(SynthCorpus(name, man, docs))
    labels: dict[str, str] | None = None
    field = label
    if not no_utility:
        path = corpus or Path(table.manifest["corpus"])
        meta = {d.doc_id: d.meta for d in load_documents(path)}
        field = label or ("medical_specialty" if any("medical_specialty" in m for m in meta.values()) else None)
        if field is None:
            raise AnonpsyError(T103_BAD_OPTION, "the corpus has no medical_specialty field; give --label FIELD or "
                               "--no-utility", "--label")
        labels = {d.doc_id: meta.get(d.doc_id, {}).get(field, "").strip() for d in table.docs}
        if sum(1 for v in labels.values() if v) < 10:
            raise AnonpsyError(T103_BAD_OPTION, f"fewer than 10 documents have a {field!r} label", "--label")
    t0 = time.perf_counter()
    total = sum(len(s.docs) for s in synths)
    with _bar("evaluate", total, not no_progress) as advance:
        report, png = evaluate_corpora(table, texts, labels, synths, default_hierarchy(), test_size=test_size,
                                       seed=seed, jobs=_jobs(jobs), use_stemmer=stemmer, label_name=field,
                                       progress=lambda _n, k, _t: advance(k))
    report["seconds"] = round(time.perf_counter() - t0, 1)
    write_report(outdir, report, png)
    for name, m in report["methods"].items():
        t = m.get("tstr", {}).get("macro_f1")
        click.echo(f"{name}: {m['documents']} docs; re-id tokens {_f(m['reid_tokens']['accuracy'])} (chosen J "
                   f"{_f(m['reid_tokens']['mean_chosen_jaccard'])}), entities {_f(m['reid_entities']['accuracy'])}; "
                   f"ROUGE-L mean {_f(m['rouge_l']['mean'])}, max {_f(m['rouge_l']['max'])}"
                   + (f"; TSTR macro-F1 {_f(t)}" if t is not None else ""))
    u = report.get("utility")
    if u:
        click.echo(f"TRTR macro-F1 {u['trtr']['macro_f1']} (weighted {u['trtr']['weighted_f1']}), majority "
                   f"{u['majority']['macro_f1']}; label {u['label']}, {u['classes']} classes, {u['train']} train / "
                   f"{u['test']} test")
    click.echo(f"report in {outdir} ({report['seconds']}s)")
