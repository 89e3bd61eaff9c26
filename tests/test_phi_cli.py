"""The mask, mask-record and mask-eval commands (CliRunner on the command objects)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from anonpsy.phi import cli as phi_cli
from anonpsy.phi import pipeline
from anonpsy.phi.dateshift import find_dates
from anonpsy.phi.spans import Span

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures"
KEY = "0123456789abcdef-cli-test-key"
NAMES = (
    "Harriet Vossberg",
    "Emil Sarkissian",
    "Vossberg",
    "Harriet",
    "Marguerite Okafor",
    "Ines Okafor",
    "Okafor",
    "Lindqvist",
    "Ines",
)
_PHONE = re.compile(r"\(?\b\d{3}\)?[ .-]\d{3}-\d{4}\b")


def _analyzer(text: str) -> list[Span]:
    spans = [Span(m.start(), m.end(), "TELEPHONE_NUMBER") for m in _PHONE.finditer(text)]
    spans += [Span(a, b, "DATE") for a, b in find_dates(text)]
    for name in NAMES:
        spans += [Span(m.start(), m.end(), "PERSON") for m in re.finditer(rf"\b{re.escape(name)}\b", text)]
    return spans


@pytest.fixture(autouse=True)
def _stub_analyzer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "default_analyzer", _analyzer)
    monkeypatch.delenv("ANONPSY_HMAC_KEY", raising=False)
    monkeypatch.delenv("ANONPSY_HMAC_KEY_FILE", raising=False)


def run(
    cmd: click.Command,
    args: list[str],
    *,
    key: bool = False,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
) -> Result:
    e = dict(env or {})
    if key:
        e["ANONPSY_HMAC_KEY"] = KEY
    return CliRunner().invoke(cmd, args, input=stdin, env=e)


def _error_line(result: Result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert len(lines) == 1
    return lines[0]


def test_mask_text_file_to_stdout_and_file(tmp_path: Path) -> None:
    r = run(phi_cli.mask, [str(FIX / "phi" / "note.txt")])
    assert r.exit_code == 0, r.output
    assert "Vossberg" not in r.output and "[PERSON]" in r.output and "[TELEPHONE_NUMBER]" in r.output
    out = tmp_path / "out.txt"
    r = run(phi_cli.mask, [str(FIX / "phi" / "note.txt"), "-o", str(out)])
    assert r.exit_code == 0 and "[PERSON]" in out.read_text()


def test_mask_stdin() -> None:
    r = run(phi_cli.mask, ["-"], stdin=b"Harriet called 614-555-0173.")
    assert r.exit_code == 0 and r.output == "[PERSON] called [TELEPHONE_NUMBER]."


def test_mask_jsonl_streams_records(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(
        json.dumps({"id": "a", "text": "Harriet Vossberg seen 2019-03-12.", "patient_id": "p1"})
        + "\n\n"
        + json.dumps({"id": "b", "text": "Vossberg seen 2019-03-19.", "patient_id": "p1"})
        + "\n"
    )
    out = tmp_path / "out.jsonl"
    r = run(
        phi_cli.mask,
        [str(src), "--input-format", "jsonl", "--operator", "surrogate", "-o", str(out)],
        key=True,
    )
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [row["id"] for row in rows] == ["a", "b"]
    assert set(rows[0]["spans"][0]) == {"start", "end", "type", "source", "out_start", "out_end"}
    surname_a = rows[0]["text"].split()[1]
    assert rows[1]["text"].split()[0] == surname_a
    d1 = re.search(r"\d{4}-\d{2}-\d{2}", rows[0]["text"])
    d2 = re.search(r"\d{4}-\d{2}-\d{2}", rows[1]["text"])
    assert d1 and d2
    import datetime as dt

    assert (dt.date.fromisoformat(d2.group(0)) - dt.date.fromisoformat(d1.group(0))).days == 7


def test_surrogates_persist_in_a_vault_across_runs(tmp_path: Path) -> None:
    vault = tmp_path / "vault.sqlite"
    args = ["-", "--operator", "surrogate", "--vault", str(vault)]
    a = run(phi_cli.mask, args, key=True, stdin=b"Harriet Vossberg called.")
    b = run(phi_cli.mask, args, key=True, stdin=b"Vossberg called again.")
    assert a.exit_code == 0 and b.exit_code == 0
    assert a.output.split()[1] == b.output.split()[0]
    assert b"Vossberg" not in vault.read_bytes()


def test_report_and_key_map(tmp_path: Path) -> None:
    rep = tmp_path / "report.json"
    r = run(
        phi_cli.mask,
        ["-", "--operator", "surrogate", "--report", str(rep)],
        key=True,
        stdin=b"Harriet Vossberg and Vossberg.",
    )
    assert r.exit_code == 0
    data = json.loads(rep.read_text())
    assert data["clusters"] == 1 and data["entities"] == 2 and "Vossberg" not in rep.read_text()
    r = run(
        phi_cli.mask,
        ["-", "--operator", "surrogate", "--report", str(rep), "--key-map"],
        key=True,
        stdin=b"Harriet Vossberg and Vossberg.",
    )
    assert "Vossberg" in rep.read_text()


def test_hash_without_key_is_one_line_error(tmp_path: Path) -> None:
    out = tmp_path / "o.txt"
    line = _error_line(run(phi_cli.mask, [str(FIX / "phi" / "note.txt"), "--operator", "hash", "-o", str(out)]))
    assert line.startswith("M100")
    assert not out.exists()


@pytest.mark.parametrize(
    ("content", "code"),
    [(b"", "E101"), (b"   \n", "E101"), (b"ab\x00cd", "E106"), (b"caf\xe9 au lait", "E105")],
)
def test_bad_inputs(tmp_path: Path, content: bytes, code: str) -> None:
    f = tmp_path / "in.txt"
    f.write_bytes(content)
    assert _error_line(run(phi_cli.mask, [str(f)])).startswith(code)


def test_missing_and_too_large(tmp_path: Path) -> None:
    assert _error_line(run(phi_cli.mask, [str(tmp_path / "nope.txt")])).startswith("E100")
    f = tmp_path / "big.txt"
    f.write_text("Harriet " * 100)
    assert _error_line(run(phi_cli.mask, [str(f)], env={"ANONPSY_MAX_INPUT_BYTES": "100"})).startswith("E107")


def test_jobs_keep_input_order_and_surrogates(tmp_path: Path) -> None:
    """Detection in worker processes changes nothing in the output: same order, same consistent surrogates."""
    src = tmp_path / "in.jsonl"
    lines = []
    for i in range(60):
        name = NAMES[i % len(NAMES)]
        lines.append(json.dumps({"id": i, "text": f"{name} called (555) 201-{1000 + i} on 2019-03-{1 + i % 28:02d}."}))
    src.write_text("\n".join(lines) + "\n")
    outs = []
    for jobs in ("1", "2", "3"):
        out = tmp_path / f"out{jobs}.jsonl"
        args = [str(src), "--input-format", "jsonl", "--operator", "surrogate", "--jobs", jobs, "-o", str(out)]
        r = run(phi_cli.mask, args, key=True)
        assert r.exit_code == 0, r.output
        outs.append(out.read_text())
    assert outs[0] == outs[1] == outs[2]
    assert [json.loads(x)["id"] for x in outs[1].splitlines()] == list(range(60))


def test_jobs_report_a_bad_line_by_number_and_leave_no_output(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    good = [json.dumps({"id": i, "text": "Harriet Vossberg"}) for i in range(20)]
    src.write_text("\n".join([*good, '{"id": 21, "no_text": 1}', *good]) + "\n")
    out = tmp_path / "out.jsonl"
    line = _error_line(run(phi_cli.mask, [str(src), "--input-format", "jsonl", "--jobs", "2", "-o", str(out)]))
    assert line.startswith("E108") and "in.jsonl:21" in line
    assert not out.exists()


def test_bad_jsonl_line_leaves_no_output(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": 1, "text": "Harriet"}) + "\n{broken\n")
    out = tmp_path / "out.jsonl"
    line = _error_line(run(phi_cli.mask, [str(src), "--input-format", "jsonl", "-o", str(out)]))
    assert line.startswith("E108") and "in.jsonl:2" in line
    assert not out.exists() and list(tmp_path.iterdir()) == [src]


def test_vault_needs_surrogate_operator() -> None:
    assert _error_line(run(phi_cli.mask, ["-", "--vault", "v.sqlite"], stdin=b"x")).startswith("E109")


def test_mask_record_json(tmp_path: Path) -> None:
    out = tmp_path / "enc.json"
    r = run(
        phi_cli.mask_record,
        [str(FIX / "records" / "psych_encounter.json"), "--schema", "psych_encounter", "-o", str(out)],
        key=True,
    )
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    assert data["patient"]["name"] == "[PERSON]"
    text = out.read_text()
    for value in ("Okafor", "Lindqvist", "216-555-0199", "3/26/2019"):
        assert value not in text
    from anonpsy.phi.records import load_record_schema, validate_record

    validate_record(data, load_record_schema("psych_encounter"), stage="output")


def test_mask_record_csv_and_jsonl() -> None:
    r = run(
        phi_cli.mask_record,
        [str(FIX / "records" / "questionnaire_response.csv"), "--schema", "questionnaire_response"],
        key=True,
    )
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0].startswith("dataType,response_id") and "Okafor" not in r.output
    r = run(
        phi_cli.mask_record,
        [str(FIX / "records" / "medication_order.jsonl"), "--schema", "medication_order"],
        key=True,
    )
    assert r.exit_code == 0 and len(r.output.splitlines()) == 2


def test_mask_record_errors(tmp_path: Path) -> None:
    rec = FIX / "records" / "psych_encounter.json"
    assert _error_line(run(phi_cli.mask_record, [str(rec), "--schema", "nope"], key=True)).startswith("M107")
    assert _error_line(run(phi_cli.mask_record, [str(rec), "--schema", "psych_encounter"])).startswith("M100")
    data = json.loads(rec.read_text())
    data["patient"]["pet_name"] = "Biscuit-secret"
    f = tmp_path / "r.json"
    f.write_text(json.dumps(data))
    line = _error_line(run(phi_cli.mask_record, [str(f), "--schema", "psych_encounter"], key=True))
    assert line.startswith("M103") and "/patient/pet_name" in line and "Biscuit" not in line


def test_mask_eval_gold_against_itself_and_json(tmp_path: Path) -> None:
    gold = FIX / "phi" / "gold.jsonl"
    out = tmp_path / "m.json"
    r = run(phi_cli.mask_eval, [str(gold), str(gold), "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert "lenient (type-agnostic)" in r.output
    assert json.loads(out.read_text())["strict_typed"]["f1"] == 1.0
    r = run(
        phi_cli.mask_eval,
        [str(FIX / "phi" / "brat"), str(FIX / "phi" / "brat"), "--format", "brat", "--json", "-"],
    )
    assert r.exit_code == 0 and json.loads(r.output)["lenient"]["recall"] == 1.0


def test_mask_eval_reads_mask_output_as_predictions(tmp_path: Path) -> None:
    gold = FIX / "phi" / "gold.jsonl"
    pred = tmp_path / "pred.jsonl"
    assert run(phi_cli.mask, [str(gold), "--input-format", "jsonl", "-o", str(pred)]).exit_code == 0
    r = run(phi_cli.mask_eval, [str(gold), str(pred), "--json", "-"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["per_type"]["TELEPHONE_NUMBER"]["recall"] == 1.0
    # without PRED the analyzer runs in process and gives the same numbers
    r2 = run(phi_cli.mask_eval, [str(gold), "--json", "-"])
    assert json.loads(r2.output) == data


def test_mask_eval_bad_gold(tmp_path: Path) -> None:
    f = tmp_path / "g.jsonl"
    f.write_text('{"id": "x", "text": "abc", "spans": [{"start": 0, "end": 9, "type": "PERSON"}]}\n')
    assert _error_line(run(phi_cli.mask_eval, [str(f), str(f)])).startswith("M104")


@pytest.mark.parametrize("cmd", phi_cli.COMMANDS, ids=lambda c: c.name)
def test_every_command_help_ends_with_an_example(cmd: click.Command) -> None:
    r = CliRunner().invoke(cmd, ["--help"])
    assert r.exit_code == 0
    assert "Example:" in r.output
    assert (cmd.help or "").rstrip().splitlines()[-1].strip().startswith(("anonpsy", "--", "ANONPSY"))
