"""CLI: validate / perturb / check / schema export, bad input as one-line errors, and --help examples."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from anonpsy.cli import main

ROOT = Path(__file__).resolve().parents[1]
GRAPH = ROOT / "fixtures" / "graphs" / "01_adhd_child.yaml"


def run(*args: str, input: str | bytes | None = None) -> click.testing.Result:
    return CliRunner().invoke(main, list(args), input=input)


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    out: list[tuple[tuple[str, ...], click.Command]] = []
    for name, cmd in sorted(group.commands.items()):
        out.append(((*prefix, name), cmd))
        if isinstance(cmd, click.Group):
            out += _commands(cmd, (*prefix, name))
    return out


@pytest.mark.parametrize("path,cmd", _commands(main), ids=lambda x: " ".join(x) if isinstance(x, tuple) else "")
def test_every_command_help_has_an_example(path: tuple[str, ...], cmd: click.Command) -> None:
    result = run(*path, "--help")
    assert result.exit_code == 0
    assert "Example" in result.output, f"`anonpsy {' '.join(path)} --help` needs an example"


def test_validate_fixture_ok() -> None:
    result = run("validate", str(GRAPH))
    assert result.exit_code == 0, result.output
    assert "0 violations" in result.output


def test_perturb_writes_graph_and_audit(tmp_path: Path) -> None:
    out, audit = tmp_path / "out.yaml", tmp_path / "audit.json"
    result = run("perturb", str(GRAPH), "--seed", "7", "-o", str(out), "--audit", str(audit))
    assert result.exit_code == 0, result.output
    assert out.is_file() and audit.is_file()
    again = tmp_path / "again.yaml"
    run("perturb", str(GRAPH), "--seed", "7", "-o", str(again))
    assert again.read_bytes() == out.read_bytes(), "same seed, same bytes"
    check = run("check", str(GRAPH), str(out))
    assert check.exit_code == 0, check.output


def test_perturb_prints_result_and_audit_without_output() -> None:
    result = run("perturb", str(GRAPH), "--seed", "1")
    assert result.exit_code == 0
    assert "case_id:" in result.output and "# audit" in result.output


def test_check_detects_a_tampered_graph(tmp_path: Path) -> None:
    out = tmp_path / "out.yaml"
    run("perturb", str(GRAPH), "--seed", "2", "-o", str(out))
    text = out.read_text(encoding="utf-8").replace("legal_status: voluntary", "legal_status: involuntary")
    text = text.replace("setting: outpatient", "setting: inpatient")
    out.write_text(text, encoding="utf-8")
    result = run("check", str(GRAPH), str(out))
    assert result.exit_code == 1
    assert "CHECK_SCAFFOLD" in result.output


BAD_INPUTS = {
    "missing": None,
    "empty": b"",
    "whitespace": b"   \n\t\n",
    "malformed": b"case_id: [unclosed\n",
    "schema": b"case_id: c1\nsymptoms:\n  - id: sx_1\n    headword: insomnia\n    severity: 3\n",
    "binary": b"\x00\x01\x02\x03",
    "latin1": "case_id: caf\xe9\n".encode("latin-1"),
    "unknown_dx": b"case_id: c1\ndiagnoses:\n  - id: dx_1\n    label: zorbic humour imbalance\n",
}
EXPECTED_CODE = {"missing": "E100", "empty": "E101", "whitespace": "E101", "malformed": "E102", "schema": "E103",
                 "binary": "E106", "latin1": "E105", "unknown_dx": "E104"}


@pytest.mark.parametrize("kind", sorted(BAD_INPUTS))
@pytest.mark.parametrize("command", ["validate", "perturb"])
def test_bad_input_is_one_line_exit_2_no_output(tmp_path: Path, kind: str, command: str) -> None:
    path = tmp_path / "in.yaml"
    content = BAD_INPUTS[kind]
    if content is not None:
        path.write_bytes(content)
    out = tmp_path / "out.yaml"
    args = [command, str(path)] + (["-o", str(out)] if command == "perturb" else [])
    result = run(*args)
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith(EXPECTED_CODE[kind])
    assert "Traceback" not in result.output
    assert not out.exists(), "no partial output file"
    assert list(tmp_path.glob(".out.yaml.*")) == [], "no temp file left behind"


def test_schema_error_names_line(tmp_path: Path) -> None:
    path = tmp_path / "g.yaml"
    path.write_bytes(BAD_INPUTS["schema"])
    result = run("validate", str(path))
    assert "g.yaml:5" in result.output


def test_schema_export_matches_file(tmp_path: Path) -> None:
    out = tmp_path / "graph.json"
    assert run("schema", "export", "-o", str(out)).exit_code == 0
    assert out.read_text(encoding="utf-8") == (ROOT / "schemas" / "graph.v2.json").read_text(encoding="utf-8")
