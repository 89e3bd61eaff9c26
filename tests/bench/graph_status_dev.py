"""Graph-level status check on the 25 MTSamples psychiatry dev notes: does the graph extracted from a note state
every annotated fact with the status the note supports?

Data: ../shared/data/mtsamples-psych-dev/notes.jsonl and facts.yaml (MTSamples, CC0; annotations CC0; see
../shared/data/LICENSES.md). Unlike ``fidelity_dev.py`` this scores the extracted graph G itself (the rules
backend, temporally normalised, as ``deid`` builds it), before perturbation and generation. Graph nodes are matched
to the annotation with the independent scorer's vocabulary (:mod:`anonpsy.evaluate.fidelity`: canonical
diagnosis keys and DSM chapters, the medication forms of each annotated drug, the patterns of each denied item),
never with the extractor's own matching.

Status of an annotated fact in the graph:

* diagnosis -- from the patient's nodes that name it (same canonical diagnosis; else, when one side is generic,
  the same DSM chapter): ``Diagnosis`` confirmed+current -> affirmed, confirmed+past -> past,
  provisional/rule_out -> possible, ruled_out -> ruled_out; ``PastHistory`` active/chronic -> affirmed,
  remitted/resolved -> past, pre-existing/unknown -> "history" (accepted for affirmed and for past: the graph
  says the patient has a history of it without saying whether it remitted); ``family_history`` -> family.
  A fact is right when the set of statuses the graph gives it is exactly its annotated status (a family fact
  also needs no patient node); "missing" when nothing names it.
  A diagnosis the annotation names by a symptom-like word ("insomnia", "catatonia", "seizures") is also stated
  by a present ``Symptom`` of that name when no diagnosis node names it.
* medication -- ``Treatment`` current, past, planned, refused as written; prn (as needed, or one dose such as an
  emergency injection) is accepted for current and for past.
* denied item -- a ``Symptom`` absent or a ``Diagnosis`` ruled out that the item names (by the symptom's headword
  or a phrasing of it in the symptom lexicon) -> denied; a symptom
  present or possible, or an asserted diagnosis, that it names -> present (a contradiction); a historical
  symptom -> historical, accepted unless the item denies a lifetime history ("prior psychiatric
  hospitalization"): "had suicidal thoughts in the past, not now" keeps a denial of current ideation.

Printed for the dev part, the held-out part (the notes whose id is divisible by 4, kept aside while developing
the rules) and all notes: per category the number annotated, recall (right / annotated), precision (right /
facts the graph gives that status, plus graph nodes with that status that match no annotated fact, for
psychiatric diagnoses and medications) and the confusion counts; with ``--details`` every fact that is not right
(annotation labels and statuses only, no note text) and the graph's unannotated diagnoses and medications.
With ``--time`` also extraction time per ~1,000 words (median of ``--repeats`` runs per note; wall clock on a
possibly shared machine).

Run: python tests/bench/graph_status_dev.py [--part dev|held|all] [--details] [--time] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "mtsamples-psych-dev"
CATEGORIES = ("dx_affirmed", "dx_possible", "dx_ruled_out", "dx_past", "dx_family",
              "med_current", "med_past", "med_planned", "med_refused", "denied")


def held_out(note_id: str) -> bool:
    """The held-out part: notes whose id is divisible by 4."""
    return note_id.isdigit() and int(note_id) % 4 == 0


@dataclass
class FactResult:
    category: str
    label: str
    gold: str
    predicted: list[str]
    right: bool


@dataclass
class NoteResult:
    note_id: str
    facts: list[FactResult] = field(default_factory=list)
    extra_dx: list[tuple[str, str]] = field(default_factory=list)  # (label, status) of unannotated patient dx
    extra_med: list[tuple[str, str]] = field(default_factory=list)
    extract_ms_per_kw: float | None = None


def _dx_status(d: Any) -> str:
    c, t = d.certainty.value, d.temporality.value
    if c == "ruled_out":
        return "ruled_out"
    if c in ("provisional", "rule_out"):
        return "possible"
    return "past" if t == "past" else "affirmed"


def _ph_status(p: Any) -> str:
    s = p.status.value
    if s in ("active", "chronic"):
        return "affirmed"
    if s in ("remitted", "resolved"):
        return "past"
    return "history"


def _matches(status: str, gold: str) -> bool:
    return (status == gold or (status == "history" and gold in ("affirmed", "past"))
            or (status == "prn" and gold in ("current", "past")))


def _surface_match(condition: str, surfaces: set[str]) -> bool:
    from anonpsy.evaluate.fidelity import normalize

    c = normalize(condition)
    return any(s and (s == c or re.search(rf"\b{re.escape(s)}\b", c) or re.search(rf"\b{re.escape(c)}\b", s))
               for s in surfaces)


def score_note(graph: Any, note: Any) -> NoteResult:
    from anonpsy.evaluate.fidelity import (
        SYMPTOM_LIKE_DX,
        NoteScorer,
        denied_concept,
        dx_term,
        medication_forms,
        normalize,
    )

    scorer = NoteScorer(note)
    res = NoteResult(note.case_id)
    dx = list(note.diagnoses)
    surfaces = [{normalize(x) for x in (d.label, *d.mentions)} for d in dx]

    def facts_for(label: str, family: bool, status: str | None) -> list[int]:
        exact, generic, _related = scorer.tiers(label)
        exact = sorted(set(exact) | {i for i in range(len(dx)) if _surface_match(label, surfaces[i])})
        for tier in (exact, generic):
            pool = [i for i in tier if (dx[i].status == "family") == family]
            if not pool and not family:
                pool = [i for i in tier if dx[i].status == "family"]  # a relative's condition given to the patient
            if not pool:
                continue
            if len(pool) > 1 and status is not None:
                same = [i for i in pool if _matches(status, dx[i].status)]
                pool = same or pool
            return pool
        return []

    pred: dict[int, list[str]] = {i: [] for i in range(len(dx))}
    for d in graph.diagnoses:
        st = _dx_status(d)
        idx = facts_for(d.label, False, st)
        for i in idx:
            pred[i].append(st)
        if not idx and dx_term(d.label).inventable:
            res.extra_dx.append((d.label, st))
    for p in graph.past_history:
        st = _ph_status(p)
        for i in facts_for(p.condition, False, st):
            pred[i].append(st)
    for f in graph.family_history:
        for i in facts_for(f.condition, True, "family"):
            pred[i].append("family")
    for i, d in enumerate(dx):
        words = {normalize(x) for x in d.mentions} & SYMPTOM_LIKE_DX | {
            normalize(x) for x in d.mentions if normalize(x).rstrip("s") in {w.rstrip("s") for w in SYMPTOM_LIKE_DX}}
        if not pred[i] and words and d.status != "family":
            for sx in graph.symptoms:
                head = normalize(sx.headword)
                if sx.assertion.value == "present" and any(head.rstrip("s") == w.rstrip("s") for w in words):
                    pred[i].append("affirmed")
    for i, d in enumerate(dx):
        got = sorted(set(pred[i]))
        right = bool(got) and all(_matches(s, d.status) for s in got)
        res.facts.append(FactResult(f"dx_{d.status}", d.label, d.status, got or ["missing"], right))

    forms = [{normalize(x) for x in medication_forms(m)} for m in note.medications]
    mpred: dict[int, list[str]] = {i: [] for i in range(len(forms))}
    for t in graph.treatments:
        if t.type.value != "medication":
            continue
        name = normalize(t.name)
        st = t.status.value
        hit = [i for i, fs in enumerate(forms) if name in fs]
        if not hit:
            hit = [i for i, fs in enumerate(forms) if any(re.search(rf"\b{re.escape(f)}\b", name) for f in fs if f)]
        for i in hit:
            mpred[i].append(st)
        if not hit:
            res.extra_med.append((t.name, st))
    for i, m in enumerate(note.medications):
        got = sorted(set(mpred[i]))
        res.facts.append(FactResult(f"med_{m.status}", m.name, m.status, got or ["missing"],
                                    bool(got) and all(_matches(x, m.status) for x in got)))

    for item in note.denied:
        concept = denied_concept(item)
        rx = re.compile(r"(?<![\w])(?:" + "|".join(f"(?:{p})" for p in concept.patterns) + r")(?![\w])", re.I)
        got: set[str] = set()

        def names(label: str, rx: re.Pattern[str] = rx) -> bool:
            return bool(rx.search(normalize(label)))

        for s in graph.symptoms:
            if names(s.headword) or any(names(x) for x in _synonyms().get(s.headword, ())):
                a = s.assertion.value
                got.add("denied" if a == "absent" else a if a in ("hypothetical", "historical") else "present")
        for d in graph.diagnoses:
            if names(d.label):
                got.add("denied" if d.certainty.value == "ruled_out" else
                        "present" if d.certainty.is_asserted() else "possible")
        got.discard("hypothetical")
        ok = {"denied"} if concept.lifetime else {"denied", "historical"}
        res.facts.append(FactResult("denied", item, "denied", sorted(got) or ["missing"], bool(got) and got <= ok))
    return res


@lru_cache(maxsize=1)
def _synonyms() -> dict[str, tuple[str, ...]]:
    """Symptom headword -> its surface forms in the symptom lexicon (data shared with the extractor: a denied
    "thought disorder" is stated by an absent "disorganized speech", whose lexicon entry names it)."""
    from anonpsy.lexicon import expand_phrase, symptom_lexicon

    return {e.headword: tuple(f for syn in e.synonyms for f in expand_phrase(syn)) for e in symptom_lexicon().rules}


def _table(title: str, results: list[NoteResult]) -> dict[str, Any]:
    facts = [f for r in results for f in r.facts]
    print(f"\n## {title}: {len(results)} notes, {len(facts)} annotated facts")
    print(f"{'category':<13} {'n':>4} {'right':>5} {'recall':>7} {'precision':>9}   predicted (count)")
    out: dict[str, Any] = {}
    for cat in CATEGORIES:
        kind, _, status = cat.partition("_")
        mine = [f for f in facts if f.category == cat]
        right = sum(f.right for f in mine)
        if cat == "denied":
            claimed = [f for f in facts if f.category == "denied" and "denied" in f.predicted]
        else:
            claimed = [f for f in facts if f.category.startswith(kind + "_")
                       and any(_matches(p, status) for p in f.predicted)]
            extras = [s for r in results for _, s in (r.extra_dx if kind == "dx" else r.extra_med)
                      if _matches(s, status)]
            claimed = claimed + [None] * len(extras)  # type: ignore[list-item]
        prec_right = sum(1 for f in claimed if f is not None and f.right and f.category == cat)
        recall = right / len(mine) if mine else float("nan")
        precision = prec_right / len(claimed) if claimed else float("nan")
        dist = Counter("+".join(f.predicted) for f in mine)
        if not mine and not claimed:
            continue
        print(f"{cat:<13} {len(mine):>4} {right:>5} {recall:>7.3f} {precision:>9.3f}   "
              + ", ".join(f"{k} {v}" for k, v in dist.most_common()))
        out[cat] = {"n": len(mine), "right": right, "recall": recall, "precision": precision,
                    "claimed": len(claimed), "predicted": dict(dist)}
    n = len(facts)
    r = sum(f.right for f in facts)
    extra_dx = sum(len(x.extra_dx) for x in results)
    extra_asserted = sum(1 for x in results for _, s in x.extra_dx if s in ("affirmed", "past", "history"))
    print(f"all facts right: {r}/{n} ({r / n:.3f}); unannotated psychiatric diagnoses in the graphs: {extra_dx} "
          f"({extra_asserted} asserted); unannotated medications: {sum(len(x.extra_med) for x in results)}")
    out["all"] = {"n": n, "right": r}
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=Path, default=DATA / "notes.jsonl")
    ap.add_argument("--facts", type=Path, default=DATA / "facts.yaml")
    ap.add_argument("--part", choices=("dev", "held", "all"), default="all",
                    help="which notes to list in --details (the tables always show both parts)")
    ap.add_argument("--details", action="store_true", help="list every fact that is not right")
    ap.add_argument("--time", action="store_true", help="time extraction alone per ~1,000 words")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", type=Path, help="write the figures to this JSON file")
    args = ap.parse_args(argv)
    if not args.notes.is_file() or not args.facts.is_file():
        print("E100 mtsamples-psych-dev: ../shared/data is not present", file=sys.stderr)
        sys.exit(2)
    from anonpsy.evaluate.corpus import load_corpus
    from anonpsy.evaluate.facts import load_facts
    from anonpsy.extract import extract
    from anonpsy.temporal import normalize

    facts = load_facts(args.facts)
    results: list[NoteResult] = []
    extract("warm up: a 30-year-old man with depression.", case_id="warmup")
    for case in load_corpus(args.notes):
        graph = normalize(extract(case.text, case_id=case.case_id))
        r = score_note(graph, facts[case.case_id])
        if args.time:
            runs = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                normalize(extract(case.text, case_id=case.case_id))
                runs.append((time.perf_counter() - t0) * 1000)
            r.extract_ms_per_kw = statistics.median(runs) * 1000 / max(len(case.text.split()), 1)
        results.append(r)
    dev = [r for r in results if not held_out(r.note_id)]
    held = [r for r in results if held_out(r.note_id)]
    print(f"# graph statuses against facts.yaml: dev part {len(dev)} notes, held-out part {len(held)} notes "
          f"(ids divisible by 4: {', '.join(r.note_id for r in held)})")
    figures = {"dev": _table("dev part", dev), "held_out": _table("held-out part", held),
               "all": _table("all notes", results)}
    if args.details:
        pick = {"dev": dev, "held": held, "all": results}[args.part]
        print("\n## facts not right (note, category, annotated label: predicted)")
        for r in pick:
            for f in r.facts:
                if not f.right:
                    print(f"  {r.note_id} {f.category:<12} {f.label}: {'+'.join(f.predicted)}")
            for label, st in r.extra_dx:
                print(f"  {r.note_id} extra dx     {label}: {st}")
            for label, st in r.extra_med:
                print(f"  {r.note_id} extra med    {label}: {st}")
    if args.time:
        times = sorted(r.extract_ms_per_kw for r in results if r.extract_ms_per_kw is not None)
        print(f"\nextraction (extract + temporal normalisation) per ~1,000 words: median "
              f"{statistics.median(times):.1f} ms, max {times[-1]:.1f} ms (median of {args.repeats} runs per note; "
              f"wall clock on a possibly shared machine)")
        figures["extract_ms_per_kw"] = times
    if args.json:
        from anonpsy.yamlio import write_atomic

        write_atomic(args.json, json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
