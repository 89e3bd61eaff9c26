"""Draw the note ids of a new held-out annotated set, before any of their texts is read.

Data: ../shared/data/mtsamples-all/notes.jsonl.gz (MTSamples, CC0; see ../shared/data/LICENSES.md).

Candidates: notes filed under a narrative specialty (weight >= 1.5 in ``corpus_sweep.PRIORITY``) of
``corpus_sweep.MIN_WORDS``-``MAX_WORDS`` words that are not reserved (``RESERVED``, ``RESERVED_LATER``: every
annotated set), not of the dev set and not in the default sweep (``draw(180, 7)``). They are sorted by numeric id,
shuffled with the seed, and taken in that order, skipping any near-duplicate (Jaccard of word 5-grams >= 0.5) of an
excluded note or of one already taken. Only ids are printed; add them to ``RESERVED_LATER`` before annotating.

Run: python tests/bench/draw_held_out.py --seed 20261130 [--n 14]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus_sweep as cs


def draw_held_out(seed: int, n: int) -> list[str]:
    with gzip.open(cs.CORPUS, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    narrative = {s for s, w in cs.PRIORITY.items() if w >= 1.5}
    excluded = set(cs.RESERVED) | set(cs.RESERVED_LATER)
    for path in cs.EXCLUDED_SETS:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                excluded.add(str(json.loads(line)["note_id"]))
    excluded |= {str(r["note_id"]) for r in cs.draw(180, 7)}
    excluded_sh = [cs._shingles(r["text"]) for r in rows if str(r["note_id"]) in excluded and r.get("text")]
    candidates: dict[str, dict] = {}
    for r in rows:
        nid, text = str(r["note_id"]), r.get("text") or ""
        if (str(r.get("medical_specialty") or "").strip() in narrative and nid not in excluded
                and cs.MIN_WORDS <= len(text.split()) <= cs.MAX_WORDS):
            candidates.setdefault(nid, r)
    order = sorted(candidates, key=int)
    random.Random(seed).shuffle(order)
    picked: list[str] = []
    picked_sh: list[frozenset] = []
    for nid in order:
        sh = cs._shingles(candidates[nid]["text"])
        if any(cs._jaccard(sh, x) >= 0.5 for x in (*excluded_sh, *picked_sh)):
            continue
        picked.append(nid)
        picked_sh.append(sh)
        if len(picked) == n:
            break
    return picked


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--n", type=int, default=14)
    args = ap.parse_args()
    print(" ".join(draw_held_out(args.seed, args.n)))


if __name__ == "__main__":
    main()
