"""CPU instructions of the rules backend on six MTSamples psychiatry dev notes, counted by callgrind: a figure
that, unlike time, does not move with the load of a shared machine. The process is prepared and warmed up on
another dev note before instrumentation is switched on, so the count covers the six deid calls (and the
interpreter's exit).

Run: python tests/bench/callgrind_deid.py            (starts valgrind on itself, prints the count)
     python tests/bench/callgrind_deid.py --inner    (the measured work, without valgrind)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MTS = ROOT.parent / "shared" / "data" / "mtsamples-psych-dev" / "notes.jsonl"
N = 6


def inner() -> None:
    from anonpsy.pipeline import deid_text, prepare_process

    notes = [json.loads(x)["text"] for x in MTS.read_text(encoding="utf-8").splitlines() if x.strip()]
    prepare_process()
    deid_text(notes[-1], seed=3)  # warm-up on a note not measured
    if os.environ.get("CALLGRIND_ON"):
        subprocess.run(["callgrind_control", "--instr=on", str(os.getpid())], check=True,
                       stdout=subprocess.DEVNULL)
    for text in notes[:N]:
        deid_text(text, seed=0)


def main() -> int:
    if "--inner" in sys.argv:
        inner()
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        env = dict(os.environ, CALLGRIND_ON="1")
        subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
                        sys.executable, __file__, "--inner"], check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        m = re.search(r"^(?:summary|totals):\s*(\d+)", out.read_text(), re.M)
        print(f"instructions (Ir), {N} dev notes: {int(m.group(1)) if m else 'n/a':,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
