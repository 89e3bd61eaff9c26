"""Assertion engines compared on the MTSamples dev annotations: the in-house ConText engine against medspaCy.

Data: ../shared/data/mtsamples-psych-dev/notes.jsonl and facts.yaml (MTSamples, CC0; annotations CC0).

Every annotated diagnosis and medication mention (the annotation's own surface forms, plus the lexicon's brand
and generic names of each drug) and every denied item (its phrase and symptom synonyms, as the fidelity scorer
finds them) is located in its note; each occurrence is one instance whose gold status is the note-level status
of its fact. Occurrences whose surface belongs to two facts of one category with different statuses are left
out (no single gold). Each engine classifies the mention within the same sentence (the fidelity scorer's
splitter); its ConText flags are mapped to the facts statuses:

* diagnoses: family/other experiencer -> family; negated -> ruled_out; uncertain or hypothetical -> possible;
  historical -> past; otherwise affirmed;
* medications: historical or negated -> past; hypothetical or uncertain -> planned; otherwise current
  (refused is never predicted; a relative's drug counts as not the patient's: family);
* denied items: negated -> denied; anything else -> not denied.

Engines: ``inhouse`` (the project's engine, ``rules/lexicon/context.yaml``), ``medspacy`` (medspaCy ConText with
its default rules on the sentence), ``medspacy+sections`` (the same, plus medspaCy's Sectionizer on the whole
note: a family-history section makes the mention family, a past-history section historical, an allergy
section not taken). Printed per category and engine: accuracy, per-status precision and recall, the confusion
matrix; then the instances where the two engines disagree, counted by (gold, in-house, medspaCy) without text.

A note-level gold status is a strict yardstick for a single mention ("history of bipolar disorder" may be
judged past in its sentence while the note affirms it): both engines face the same instances.

Needs medspaCy (optional extra ``assertion-bench``: ``pip install -e ".[assertion-bench]"``; it pins spaCy 3.7
and numpy < 2, so use a separate virtual environment from the eval extra).
Run: python tests/bench/assertion_engines.py [--disagreements N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "mtsamples-psych-dev"
STATUSES = {
    "dx": ("affirmed", "possible", "ruled_out", "past", "family"),
    "med": ("current", "past", "planned", "refused", "family"),
    "denied": ("denied", "not denied"),
}


@dataclass(frozen=True)
class Instance:
    note: str
    category: str
    sentence: str
    start: int
    end: int
    gold: str
    note_text_offset: int


def _inhouse() -> Any:
    from anonpsy.extract.assertion.context import classify

    return classify


def instances() -> list[Instance]:
    from anonpsy.evaluate.facts import load_facts
    from anonpsy.evaluate.fidelity import denied_concept, medication_forms, surface_pattern
    from anonpsy.evaluate.sentences import split_sentences

    facts = load_facts(DATA / "facts.yaml")
    out: list[Instance] = []
    for line in (DATA / "notes.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        cid = str(rec["note_id"])
        note = facts[cid]
        groups: list[tuple[str, list[tuple[str, str]]]] = [
            ("dx", [(surface_pattern(s), d.status) for d in note.diagnoses for s in (d.label, *d.mentions)]),
            ("med", [(surface_pattern(s), m.status) for m in note.medications for s in medication_forms(m)]),
            ("denied", [(p, "denied") for x in note.denied for p in denied_concept(x).patterns]),
        ]
        for sent in split_sentences(rec["text"]):
            if sent.header:
                continue
            for category, pats in groups:
                spans: dict[tuple[int, int], set[str]] = {}
                for pat, status in pats:
                    if not pat:
                        continue
                    flags = re.I if category == "denied" else 0
                    for m in re.finditer(rf"(?<![\w])(?:{pat})(?![\w])", sent.text, flags):
                        spans.setdefault((m.start(), m.end()), set()).add(status)
                taken: list[tuple[int, int]] = []
                for (a, b), sts in sorted(spans.items(), key=lambda kv: (kv[0][0], -(kv[0][1] - kv[0][0]))):
                    if any(a < y and x < b for x, y in taken):
                        continue
                    taken.append((a, b))
                    if len(sts) == 1:
                        out.append(Instance(cid, category, sent.text, a, b, next(iter(sts)), sent.start))
    return out


def map_flags(category: str, negated: bool, uncertain: bool, hypothetical: bool, historical: bool,
              other: bool) -> str:
    """ConText flags to a facts status (see the module docstring)."""
    if category == "denied":
        return "denied" if negated else "not denied"
    if category == "dx":
        if other:
            return "family"
        if negated:
            return "ruled_out"
        if uncertain or hypothetical:
            return "possible"
        return "past" if historical else "affirmed"
    if other:
        return "family"
    if historical or negated:
        return "past"
    return "planned" if hypothetical or uncertain else "current"


def run_inhouse(items: list[Instance]) -> list[str]:
    classify = _inhouse()
    out = []
    for it in items:
        r = classify(it.sentence, it.start, it.end)
        out.append(map_flags(it.category, r.negated, r.uncertain, r.hypothetical, r.historical,
                             r.experiencer != "patient"))
    return out


_SECTION_FLAGS = {"family_history": "family", "past_medical_history": "historical",
                  "past_surgical_history": "historical", "allergies": "allergy"}


def run_medspacy(items: list[Instance], texts: dict[str, str], sections: bool) -> list[str]:
    os.environ.setdefault("LOGURU_LEVEL", "WARNING")
    from loguru import logger

    logger.remove()
    import medspacy

    nlp = medspacy.load(medspacy_enable=["medspacy_pyrush", "medspacy_context", "medspacy_sectionizer"])
    context = nlp.get_pipe("medspacy_context")
    sectionizer = nlp.get_pipe("medspacy_sectionizer")
    note_docs = {}
    if sections:
        for cid, text in texts.items():
            doc = nlp.get_pipe("medspacy_pyrush")(nlp.make_doc(text))
            note_docs[cid] = sectionizer(doc)
    out = []
    for it in items:
        doc = nlp.make_doc(it.sentence)
        span = doc.char_span(it.start, it.end, label="TARGET", alignment_mode="expand")
        doc.ents = [span] if span is not None else []
        for tok in doc:
            tok.is_sent_start = tok.i == 0
        doc = context(doc)
        if not doc.ents:
            out.append("unmatched")
            continue
        ent = doc.ents[0]
        negated, uncertain = bool(ent._.is_negated), bool(ent._.is_uncertain)
        hypothetical, historical, other = bool(ent._.is_hypothetical), bool(ent._.is_historical), bool(ent._.is_family)
        if sections:
            full = note_docs[it.note]
            fspan = full.char_span(it.note_text_offset + it.start, it.note_text_offset + it.end,
                                   alignment_mode="expand")
            cat = fspan._.section_category if fspan is not None else None
            flag = _SECTION_FLAGS.get(str(cat)) if cat else None
            if flag == "family":
                other = True
            elif flag == "historical":
                historical = True
            elif flag == "allergy" and it.category == "med":
                negated = True
        out.append(map_flags(it.category, negated, uncertain, hypothetical, historical, other))
    return out


def table(category: str, engine: str, gold: list[str], pred: list[str]) -> None:
    labels = list(STATUSES[category])
    for p in pred:
        if p not in labels:
            labels.append(p)
    n = len(gold)
    acc = sum(g == p for g, p in zip(gold, pred, strict=True)) / n if n else float("nan")
    print(f"\n### {category} — {engine}: accuracy {acc:.3f} ({sum(g == p for g, p in zip(gold, pred, strict=True))}"
          f"/{n})")
    print(f"{'status':<11} {'n gold':>6} {'precision':>9} {'recall':>7}")
    for lab in labels:
        tp = sum(g == lab and p == lab for g, p in zip(gold, pred, strict=True))
        ng = sum(g == lab for g in gold)
        npred = sum(p == lab for p in pred)
        prec = f"{tp / npred:.3f}" if npred else "–"
        rec = f"{tp / ng:.3f}" if ng else "–"
        if ng or npred:
            print(f"{lab:<11} {ng:>6} {prec:>9} {rec:>7}")
    print("confusion (rows gold, columns predicted): " + " | ".join(labels))
    for g in labels:
        row = [sum(x == g and y == p for x, y in zip(gold, pred, strict=True)) for p in labels]
        if sum(row):
            print(f"  {g:<11} " + " ".join(f"{v:>5}" for v in row))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--disagreements", type=int, default=12, help="how many disagreement patterns to list")
    args = ap.parse_args(argv)
    if not (DATA / "facts.yaml").is_file():
        print("E100 mtsamples-psych-dev: ../shared/data is not present", file=sys.stderr)
        sys.exit(2)
    try:
        import medspacy  # noqa: F401
    except ImportError:
        print('E100 medspacy: not installed; pip install -e ".[assertion-bench]" in a separate venv', file=sys.stderr)
        sys.exit(2)
    items = instances()
    texts = {str(json.loads(x)["note_id"]): json.loads(x)["text"]
             for x in (DATA / "notes.jsonl").read_text(encoding="utf-8").splitlines()}
    preds = {"inhouse": run_inhouse(items), "medspacy": run_medspacy(items, texts, sections=False),
             "medspacy+sections": run_medspacy(items, texts, sections=True)}
    print(f"# assertion engines on {len(texts)} MTSamples dev notes: {len(items)} located mentions "
          f"({', '.join(f'{c} {sum(i.category == c for i in items)}' for c in STATUSES)})")
    for category in STATUSES:
        idx = [k for k, it in enumerate(items) if it.category == category]
        gold = [items[k].gold for k in idx]
        for engine, pred in preds.items():
            table(category, engine, gold, [pred[k] for k in idx])
    print("\n## overall accuracy")
    for engine, pred in preds.items():
        ok = sum(items[k].gold == pred[k] for k in range(len(items)))
        print(f"  {engine:<18} {ok / len(items):.3f} ({ok}/{len(items)})")
    print("\n## where in-house and medspaCy (sentence) disagree: (category, gold, in-house, medspacy) × count")
    diff = Counter((it.category, it.gold, preds["inhouse"][k], preds["medspacy"][k])
                   for k, it in enumerate(items) if preds["inhouse"][k] != preds["medspacy"][k])
    right = Counter("inhouse" if g == a else "medspacy" if g == b else "neither" for (_, g, a, b), n in diff.items()
                    for _ in range(n))
    print(f"  {sum(diff.values())} disagreements; right: in-house {right['inhouse']}, medspaCy {right['medspacy']}, "
          f"neither {right['neither']}")
    for key, n in diff.most_common(args.disagreements):
        print(f"  {key} × {n}")


if __name__ == "__main__":
    main()
