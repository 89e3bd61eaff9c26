"""The README's first lines are the two commands that work on a fresh machine; keep them true."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from anonpsy.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _first_block() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0].startswith("# anonpsy")
    start = next(i for i, ln in enumerate(lines) if ln.startswith("```"))
    assert start <= 3, "the commands come first"
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))
    return [ln for ln in lines[start + 1:end] if ln.strip()]


def test_readme_starts_with_exactly_two_commands() -> None:
    block = _first_block()
    assert len(block) == 2
    assert block[0].startswith("pip install -e . && anonpsy deid ")
    assert block[1] == 'pip install -e ".[dev]" && just test'


def test_readme_main_job_runs(tmp_path: Path, monkeypatch: object) -> None:
    cmd = _first_block()[0].split("&&", 1)[1].strip()
    args = shlex.split(cmd)[1:]
    args = [str(tmp_path / "out") if a == "out/" else str(ROOT / a) if a.startswith("fixtures/") else a
            for a in args]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "The patient is" in result.output
    assert any((tmp_path / "out").glob("*.audit.json"))


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "\njust test" in ci
    just = (ROOT / "Justfile").read_text(encoding="utf-8")
    for recipe in ("test", "lint", "rules-check", "schemas", "bench"):
        assert f"\n{recipe}" in "\n" + just, recipe


def test_readme_real_note_example_is_current() -> None:
    """The before/after example on a real MTSamples note (CC0) quotes what deid writes today."""
    import json
    import re

    from anonpsy.pipeline import deid_text

    notes = ROOT.parent / "shared" / "data" / "mtsamples-psych-dev" / "notes.jsonl"
    if not notes.is_file():
        pytest.skip("shared MTSamples dev notes not available (../shared/data/mtsamples-psych-dev)")
    text = next(json.loads(x)["text"] for x in notes.read_text(encoding="utf-8").splitlines()
                if json.loads(x)["note_id"] == "1771")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### On a real note", 1)[1].split("Output (", 1)[1].split("\n\n", 2)[1]
    quoted = " ".join(line[2:] for line in section.splitlines() if line.startswith("> "))
    out = " ".join(deid_text(text, seed=0, case_id="1771").text.split())
    for fragment in (f.strip() for f in quoted.split("…")):
        assert re.sub(r"\s+", " ", fragment) in out
