"""prepare_process: a process prepared for a batch writes exactly what an unprepared one writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = """
import gc, json, sys
from pathlib import Path
from anonpsy.pipeline import deid_text, prepare_process
if sys.argv[1] == "prepared":
    prepare_process()
    assert gc.get_freeze_count() > 0
out = []
for path in sys.argv[2:]:
    r = deid_text(Path(path).read_text(encoding="utf-8"), seed=3, case_id="c")
    out.append([r.text, r.audit.model_dump_json(), r.leaks.model_dump_json(), r.perturbed.model_dump_json()])
print(json.dumps(out))
"""


def _run(mode: str, paths: list[str]) -> list[list[str]]:
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, mode, *paths], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_prepare_process_keeps_outputs() -> None:
    paths = [str(p) for p in sorted((ROOT / "fixtures" / "cases").glob("*.txt"))[:4]]
    plain = _run("plain", paths)
    prepared = _run("prepared", paths)
    assert len(plain) == len(paths)
    assert prepared == plain


def test_prepare_note_is_clean() -> None:
    """The note it reads passes every audit, so preparing never logs or raises about it."""
    from anonpsy.pipeline import _PREPARE_NOTE, deid_text

    result = deid_text(_PREPARE_NOTE, seed=0, case_id="prepare")
    assert result.ok()
    assert result.original.diagnoses and result.original.treatments
