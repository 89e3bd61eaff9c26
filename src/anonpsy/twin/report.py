"""``anonpsy twin evaluate``: every metric of :mod:`~anonpsy.twin.evaluate` for one or more synthetic corpora of the
same source table, written as ``report.json``, ``report.md`` and ``rouge_kde.png``."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anonpsy.twin import evaluate as ev
from anonpsy.twin.concepts import Hierarchy
from anonpsy.twin.mentions import matcher
from anonpsy.twin.store import SyntheticDoc
from anonpsy.twin.table import Table
from anonpsy.yamlio import write_atomic


@dataclass
class SynthCorpus:
    """One synthetic corpus to evaluate."""

    name: str
    manifest: dict[str, Any]
    docs: list[SyntheticDoc]


def _concepts_chunk(args: tuple[tuple[str, ...], list[str]]) -> list[frozenset[str]]:
    types, texts = args
    m = matcher(types)
    return [frozenset(sp.concept for sp in m.spans(t)) for t in texts]


def named_concepts(texts: Sequence[str], types: Sequence[str], jobs: int = 1,
                   progress: Callable[[int], None] | None = None) -> list[frozenset[str]]:
    """Concepts (specific and generalised) named anywhere in each text."""
    chunks = [(tuple(types), list(texts[i:i + 128])) for i in range(0, len(texts), 128)]
    out: list[frozenset[str]] = []
    if jobs <= 1 or len(chunks) <= 1:
        for c in chunks:
            out += _concepts_chunk(c)
            if progress:
                progress(len(c[1]))
        return out
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for c, res in zip(chunks, pool.map(_concepts_chunk, chunks), strict=True):
            out += res
            if progress:
                progress(len(c[1]))
    return out


def evaluate_corpora(table: Table, texts: Mapping[str, str], labels: Mapping[str, str] | None,
                     synths: Sequence[SynthCorpus], h: Hierarchy, *, test_size: float = 0.2, seed: int = 0,
                     jobs: int = 1, use_stemmer: bool = False, label_name: str | None = None,
                     progress: Callable[[str, int, int], None] | None = None) -> tuple[dict[str, Any], bytes]:
    """The report (a JSON-ready dict) and the ROUGE-L KDE plot (PNG bytes)."""
    ids = [d.doc_id for d in table.docs]
    orig_tokens = ev.token_sets([texts[d] for d in ids])
    orig_entities = ev.expand([frozenset(table.rows.get(d, {})) for d in ids], h)
    report: dict[str, Any] = {"documents": len(ids), "types": list(table.types), "methods": {}}
    utility: dict[str, Any] | None = None
    train: list[str] = []
    test: list[str] = []
    if labels:
        lab_ids = [d for d in ids if labels.get(d)]
        train, test = ev.split(lab_ids, [labels[d] for d in lab_ids], test_size, seed)
        trtr = ev.classify([texts[d] for d in train], [labels[d] for d in train], [texts[d] for d in test],
                           [labels[d] for d in test], seed)
        utility = {"label": label_name, "classes": len({labels[d] for d in lab_ids}), "train": len(train),
                   "test": len(test), "trtr": trtr,
                   "majority": ev.majority([labels[d] for d in train], [labels[d] for d in test])}
        report["utility"] = utility
    rouge_series: dict[str, list[float]] = {}
    for sc in synths:
        index = {d.source: i for i, d in enumerate(sc.docs)}
        own = [index.get(d) for d in ids]
        stexts = [d.text for d in sc.docs]

        def tick(n: int, _name: str = sc.name, _total: int = len(stexts)) -> None:
            if progress:
                progress(_name, n, _total)

        synth_concepts = named_concepts(stexts, table.types, jobs, tick)
        reid_tok = ev.jaccard_attack(orig_tokens, ev.token_sets(stexts), own, "tokens")
        reid_ent = ev.jaccard_attack(orig_entities, ev.expand(synth_concepts, h), own, "entities")
        pairs = [(texts[d.source], d.text) for d in sc.docs]
        rouge = ev.rouge_batch(pairs, use_stemmer, jobs)
        rouge_series[sc.name] = rouge
        sources = [frozenset(table.rows.get(d.source, {})) for d in sc.docs]
        row: dict[str, Any] = {
            "method": sc.manifest.get("method"), "backend": sc.manifest.get("backend"), "k": sc.manifest.get("k"),
            "documents": len(sc.docs), "reid_tokens": reid_tok.as_dict(), "reid_entities": reid_ent.as_dict(),
            "rouge_l": ev.summarize(rouge), "diversity": ev.diversity(sources, synth_concepts, h),
        }
        if utility is not None and labels:
            tr = [d for d in train if d in index]
            row["tstr"] = ev.classify([sc.docs[index[d]].text for d in tr], [labels[d] for d in tr],
                                      [texts[d] for d in test], [labels[d] for d in test], seed)
        report["methods"][sc.name] = row
    png = ev.kde_png(rouge_series) if rouge_series else b""
    return report, png


def _f(x: Any) -> str:
    if x is None:
        return "–"
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def markdown(report: Mapping[str, Any]) -> str:
    """The report as a Markdown page."""
    out = ["# RecordTwin evaluation", "",
           f"Source documents: {report['documents']}; entity types: {', '.join(report['types'])}.", ""]
    out += ["| corpus | docs | re-id tokens | chosen J | re-id entities | ROUGE-L mean | ROUGE-L max | TSTR macro-F1 |",
            "|---|---|---|---|---|---|---|---|"]
    for name, m in report["methods"].items():
        out.append(f"| {name} | {m['documents']} | {_f(m['reid_tokens']['accuracy'])} | "
                   f"{_f(m['reid_tokens']['mean_chosen_jaccard'])} | {_f(m['reid_entities']['accuracy'])} | "
                   f"{_f(m['rouge_l']['mean'])} | {_f(m['rouge_l']['max'])} | "
                   f"{_f(m.get('tstr', {}).get('macro_f1'))} |")
    u = report.get("utility")
    if u:
        out += ["", f"Utility: classifier of `{u['label']}` ({u['classes']} labels), {u['train']} training and "
                f"{u['test']} held-out source documents. TRTR macro-F1 {_f(u['trtr']['macro_f1'])} (weighted "
                f"{_f(u['trtr']['weighted_f1'])}); majority class macro-F1 {_f(u['majority']['macro_f1'])}."]
    out += ["", "Re-identification: share of attacks (an original picks its most Jaccard-similar synthetic "
            "document) that find their own twin, ties credited 1/t; chance is 1 / number of synthetic documents.",
            "", "![ROUGE-L](rouge_kde.png)", ""]
    for name, m in report["methods"].items():
        out += [f"## {name}", "", "| type | source distinct | synthetic distinct (generalised) | source kept |",
                "|---|---|---|---|"]
        for t, d in m["diversity"].items():
            out.append(f"| {t} | {d['source_distinct']} | {d['synthetic_distinct']} ({d['synthetic_generalised']}) | "
                       f"{_f(d['source_kept_share'])} |")
        out.append("")
    return "\n".join(out)


def write_report(outdir: Path, report: Mapping[str, Any], png: bytes) -> None:
    """Write the report files atomically (JSON last)."""
    outdir.mkdir(parents=True, exist_ok=True)
    if png:
        write_atomic(outdir / "rouge_kde.png", png)
    write_atomic(outdir / "report.md", markdown(report))
    write_atomic(outdir / "report.json", json.dumps(report, indent=2) + "\n")
