"""Byte-identity digest of the rules backend: every output of ``deid`` (text, original and perturbed graph,
audit, leak audit, as ``anonpsy deid --emit`` writes them) for the MTSamples psychiatry dev notes and the fixture
cases at the given seeds, one sha256 per file and one over all. A change meant only to make deid faster must leave
every digest as it was.

Run: python tests/bench/deid_digest.py [--seeds 0,1] [--out FILE] [--check FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MTS = ROOT.parent / "shared" / "data" / "mtsamples-psych-dev" / "notes.jsonl"


def cases() -> list[tuple[str, str]]:
    out = [(p.stem, p.read_text(encoding="utf-8")) for p in sorted((ROOT / "fixtures" / "cases").glob("*.txt"))]
    if MTS.is_file():
        for line in MTS.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                out.append((f"mts{r['note_id']}", r["text"]))
    return out


def digests(seeds: list[int]) -> dict[str, str]:
    from anonpsy.graphio import dump_graph
    from anonpsy.pipeline import deid_text

    out: dict[str, str] = {}
    for seed in seeds:
        for cid, text in cases():
            r = deid_text(text, seed=seed, case_id=cid)
            files = {
                "txt": r.text,
                "graph.yaml": dump_graph(r.original),
                "perturbed.yaml": dump_graph(r.perturbed),
                "audit.json": r.audit.model_dump_json(indent=2) + "\n",
                "leaks.json": r.leaks.model_dump_json(indent=2) + "\n",
            }
            for ext, body in files.items():
                out[f"{seed}/{cid}.{ext}"] = hashlib.sha256(body.encode("utf-8")).hexdigest()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--out", type=Path, help="write the digests (JSON) here")
    ap.add_argument("--check", type=Path, help="compare with digests written earlier; exit 1 on any difference")
    a = ap.parse_args()
    d = digests([int(s) for s in a.seeds.split(",")])
    total = hashlib.sha256("".join(f"{k} {v}\n" for k, v in sorted(d.items())).encode()).hexdigest()
    print(f"{len(d)} files, digest {total}")
    if a.out:
        a.out.write_text(json.dumps(d, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if a.check:
        ref = json.loads(a.check.read_text(encoding="utf-8"))
        diff = sorted(k for k in set(ref) | set(d) if ref.get(k) != d.get(k))
        print(f"identical {len(d) - len(diff)}/{len(ref)}")
        for k in diff:
            print("  differs:", k)
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
