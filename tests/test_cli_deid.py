"""`anonpsy deid`, `graph`, `render` and `deid-batch`: outputs, audits, bad input and resumable batches."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from anonpsy import pipeline
from anonpsy.cli import main

ROOT = Path(__file__).resolve().parents[1]
CASES = sorted((ROOT / "fixtures" / "cases").glob("*.txt"))
CASE = ROOT / "fixtures" / "cases" / "06_schizophrenia_ed.txt"


def run(*args: str, input: str | bytes | None = None) -> object:
    return CliRunner().invoke(main, list(args), input=input)


def test_deid_one_case_with_emit(tmp_path: Path) -> None:
    out, emit = tmp_path / "out.txt", tmp_path / "emit"
    result = run("deid", str(CASE), "--seed", "7", "-o", str(out), "--emit", str(emit))
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert len(text.split()) > 80
    stem = CASE.stem
    for suffix in ("graph.yaml", "perturbed.yaml", "audit.json", "leaks.json"):
        assert (emit / f"{stem}.{suffix}").is_file(), suffix
    audit = json.loads((emit / f"{stem}.audit.json").read_text(encoding="utf-8"))
    assert audit["changes"] and all(c["rule_id"] for c in audit["changes"])
    assert audit["violations"] == []
    assert json.loads((emit / f"{stem}.leaks.json").read_text(encoding="utf-8"))["leaks"] == []


def test_deid_is_deterministic_and_seed_dependent(tmp_path: Path) -> None:
    a = run("deid", str(CASE), "--seed", "3").output
    b = run("deid", str(CASE), "--seed", "3").output
    c = run("deid", str(CASE), "--seed", "4").output
    assert a == b
    assert a != c


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_deid_structured_formats(fmt: str) -> None:
    result = run("deid", str(CASE), "--format", fmt)
    assert result.exit_code == 0
    if fmt == "json":
        payload = json.loads(result.output)
        assert set(payload) >= {"case_id", "text", "graph", "leaks", "violations"}
    else:
        assert result.output.startswith("case_id:")


def test_deid_reads_stdin() -> None:
    result = run("deid", "-", input=CASE.read_text(encoding="utf-8"))
    assert result.exit_code == 0, result.output
    assert "year-old" in result.output


def test_identifiers_of_fixture_do_not_survive(tmp_path: Path) -> None:
    import yaml

    for case in CASES:
        expected = yaml.safe_load(case.with_suffix(".expected.yaml").read_text(encoding="utf-8"))
        result = pipeline.deid_text(case.read_text(encoding="utf-8"), seed=11, case_id=case.stem)
        assert result.audit.violations == [], case.stem
        low = result.text.lower()
        # Whole words: "Tempe" (a place) must not survive, "temperature" (a vital sign) may appear.
        survived = [i for i in expected["identifiers"]
                    if len(i) > 3 and re.search(rf"(?<!\w){re.escape(i.lower())}(?!\w)", low)]
        assert survived == [], f"{case.stem}: {len(survived)} identifiers survived"


def _leaky(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the leak audit report one PERSON leak in every output."""
    real = pipeline.leak_audit

    def leaky(source: str, output: str, **kw: object) -> pipeline.LeakAudit:
        report = real(source, output, **kw)  # type: ignore[arg-type]
        report.leaks.append(pipeline.Leak(kind="PERSON", source_start=0, source_end=1, output_start=0, output_end=1))
        return report

    monkeypatch.setattr(pipeline, "leak_audit", leaky)


def test_an_output_that_fails_the_leak_audit_is_never_written(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _leaky(monkeypatch)
    out, emit = tmp_path / "o.txt", tmp_path / "emit"
    result = run("deid", str(CASE), "-o", str(out), "--emit", str(emit))
    assert result.exit_code == 1
    assert result.stdout == "" and result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"E130 {CASE.stem}: leak audit found 1 source identifier(s) in the output (PERSON)")
    assert not out.exists()
    assert (emit / f"{CASE.stem}.leaks.json").is_file() and (emit / f"{CASE.stem}.audit.json").is_file()
    assert not (emit / f"{CASE.stem}.perturbed.yaml").exists(), "the de-identified graph is an output too"
    stdout_run = run("deid", str(CASE))
    assert stdout_run.exit_code == 1 and stdout_run.stdout == "", "nothing on stdout either"


def test_a_rejected_output_goes_only_to_the_quarantine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _leaky(monkeypatch)
    out, q = tmp_path / "o.json", tmp_path / "quarantine"
    result = run("deid", str(CASE), "-o", str(out), "--quarantine", str(q), "--format", "json")
    assert result.exit_code == 1 and not out.exists()
    assert str(q) in result.stderr and result.stderr.count("\n") == 1
    assert json.loads((q / f"{CASE.stem}.json").read_text(encoding="utf-8"))["text"].strip()
    assert (q / f"{CASE.stem}.perturbed.yaml").is_file()
    reason = json.loads((q / f"{CASE.stem}.rejected.json").read_text(encoding="utf-8"))
    assert reason["code"] == "E130" and reason["leaks"]["leaks"]


def test_allow_leaks_writes_with_a_warning(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _leaky(monkeypatch)
    out = tmp_path / "o.txt"
    result = run("deid", str(CASE), "-o", str(out), "--allow-leaks")
    assert result.exit_code == 0 and out.is_file()
    assert result.stderr.startswith("warning: leak audit found 1 source identifier(s)")


def test_an_output_that_violates_an_invariant_is_never_written(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import anonpsy.perturb
    from anonpsy.validate import Violation

    monkeypatch.setattr(anonpsy.perturb, "check", lambda a, b: [Violation(code="V999", message="synthetic")])
    out, q = tmp_path / "o.txt", tmp_path / "q"
    result = run("deid", str(CASE), "-o", str(out), "--allow-leaks", "--quarantine", str(q))
    assert result.exit_code == 1 and not out.exists(), "--allow-leaks does not cover invariants"
    assert result.stderr.startswith(f"E131 {CASE.stem}: 1 invariant violation(s) (V999)")
    assert (q / f"{CASE.stem}.txt").is_file()


def test_batch_lists_a_rejected_case_and_a_rerun_does_it_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    src = tmp_path / "in"
    src.mkdir()
    for case in CASES[:2]:
        (src / case.name).write_bytes(case.read_bytes())
    out, q = tmp_path / "out", tmp_path / "q"
    real = pipeline.leak_audit
    leaky_stem = CASES[1].stem

    def leaky(source: str, output: str, **kw: object) -> pipeline.LeakAudit:
        report = real(source, output, **kw)  # type: ignore[arg-type]
        if source == CASES[1].read_text(encoding="utf-8"):
            report.leaks.append(pipeline.Leak(kind="DATE", source_start=0, source_end=1, output_start=0,
                                              output_end=1))
        return report

    monkeypatch.setattr(pipeline, "leak_audit", leaky)
    first = run("deid-batch", str(src), "-o", str(out), "--no-progress", "--quarantine", str(q))
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert first.exit_code == 1 and summary["ok"] == 1 and summary["rejected"] == 1
    row = next(c for c in summary["cases"] if c["case_id"] == leaky_stem)
    assert row["status"] == "rejected" and row["code"] == "E130" and row["error"].startswith("E130")
    assert not (out / "cases" / f"{leaky_stem}.txt").exists() and (q / f"{leaky_stem}.txt").is_file()
    assert "1 rejected" in first.stdout
    second = run("deid-batch", str(src), "-o", str(out), "--no-progress")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert second.exit_code == 1, "a rejected case is not done: the rerun processes it again"
    assert summary["processed"] == 1 and summary["skipped"] == 1 and summary["rejected"] == 1
    monkeypatch.setattr(pipeline, "leak_audit", real)
    third = run("deid-batch", str(src), "-o", str(out), "--no-progress")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert third.exit_code == 0 and summary["processed"] == 1 and summary["ok"] == 2


def test_batch_progress_stays_off_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / CASES[0].name).write_bytes(CASES[0].read_bytes())
    result = run("deid-batch", str(src), "-o", str(tmp_path / "out"))
    assert result.exit_code == 0 and result.stderr == ""


@pytest.mark.parametrize(
    ("content", "code"),
    [(b"", "E101"), (b"  \n\t ", "E101"), (b"\x00\x01binary", "E106"), ("caf\xe9".encode("latin-1"), "E105")],
)
def test_deid_bad_input(tmp_path: Path, content: bytes, code: str) -> None:
    src, out = tmp_path / "case.txt", tmp_path / "out.txt"
    src.write_bytes(content)
    result = run("deid", str(src), "-o", str(out))
    assert result.exit_code == 2
    assert result.output.strip().startswith(code) and "\n" not in result.output.strip()
    assert not out.exists()


def test_deid_too_large_and_missing(tmp_path: Path) -> None:
    result = run("deid", str(CASE), "--max-bytes", "100")
    assert result.exit_code == 2 and result.output.startswith("E107")
    result = run("deid", str(tmp_path / "nope.txt"))
    assert result.exit_code == 2 and result.output.startswith("E100")


def test_graph_and_render_commands(tmp_path: Path) -> None:
    g = tmp_path / "g.yaml"
    assert run("graph", str(CASE), "-o", str(g)).exit_code == 0
    assert run("validate", str(g)).exit_code in (0, 1)
    result = run("render", str(g), "--seed", "2")
    assert result.exit_code == 0
    assert "The patient is" in result.output


def test_deid_batch_resumes_and_isolates_failures(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    for case in CASES[:4]:
        (src / case.name).write_bytes(case.read_bytes())
    (src / "zz_broken.txt").write_bytes(b"\x00\x00not text")
    out = tmp_path / "out"
    first = run("deid-batch", str(src), "-o", str(out), "--jobs", "2", "--no-progress")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["total"] == 5 and summary["failed"] == 1 and summary["ok"] == 4
    assert first.exit_code == 1
    failed = [c for c in summary["cases"] if c["status"] == "failed"]
    assert failed[0]["case_id"] == "zz_broken" and failed[0]["error"].startswith("E106")
    assert len(list((out / "cases").glob("*.txt"))) == 4
    (src / "zz_broken.txt").write_text(CASES[5].read_text(encoding="utf-8"), encoding="utf-8")
    second = run("deid-batch", str(src), "-o", str(out), "--no-progress")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["skipped"] == 4 and summary["processed"] == 1 and summary["failed"] == 0
    assert second.exit_code == 0, second.output


def test_deid_batch_jsonl(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    lines = [json.dumps({"id": f"n{i}", "text": c.read_text(encoding="utf-8")}) for i, c in enumerate(CASES[:3])]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    result = run("deid-batch", str(src), "-o", str(out), "--no-progress")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (out / "cases").glob("*.txt")) == ["n0.txt", "n1.txt", "n2.txt"]


def test_deid_batch_bad_jsonl_is_one_line(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text('{"id": "a", "text": "x"}\nnot json\n', encoding="utf-8")
    result = run("deid-batch", str(src), "-o", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert result.output.startswith("E108") and "in.jsonl:2" in result.output


def test_mask_first_removes_direct_identifiers_before_extraction(tmp_path: Path) -> None:
    emit = tmp_path / "emit"
    result = run("deid", str(CASE), "--mask-first", "--emit", str(emit), "--seed", "5")
    assert result.exit_code == 0, result.output
    graph = (emit / f"{CASE.stem}.graph.yaml").read_text(encoding="utf-8")
    for ident in ("Okonkwo-Banks", "(253) 555-0127", "77102934", "Renee Banks"):
        assert ident not in graph, "direct identifiers are gone before any other step"


_RESULT: list[pipeline.DeidResult] = []


def _prepared() -> pipeline.DeidResult:
    if not _RESULT:
        _RESULT.append(pipeline.deid_text(CASE.read_text(encoding="utf-8"), seed=7, case_id=CASE.stem))
    return _RESULT[0]


@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(leaks=st.integers(0, 2), violations=st.integers(0, 2), allow_leaks=st.booleans(), quarantine=st.booleans(),
       fmt=st.sampled_from(["text", "json", "yaml"]), to_stdout=st.booleans())
@example(leaks=1, violations=0, allow_leaks=False, quarantine=False, fmt="text", to_stdout=True)
def test_an_output_is_written_only_when_it_passed_the_audits(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory, leaks: int, violations: int,
    allow_leaks: bool, quarantine: bool, fmt: str, to_stdout: bool,
) -> None:
    base = _prepared()
    leak = pipeline.Leak(kind="LOCATION", source_start=0, source_end=1, output_start=0, output_end=1)
    result = pipeline.DeidResult(
        case_id=base.case_id, original=base.original, perturbed=base.perturbed, text=base.text,
        audit=base.audit.model_copy(update={"violations": [{"code": "V9", "message": "m"}] * violations}),
        leaks=pipeline.LeakAudit(checked=5, leaks=[leak] * leaks),
    )
    monkeypatch.setattr(pipeline, "deid_text", lambda *a, **k: result)
    tmp = tmp_path_factory.mktemp("w")
    out, q = tmp / "out", tmp / "q"
    args = ["deid", str(CASE), "--format", fmt, *([] if to_stdout else ["-o", str(out)])]
    args += ["--allow-leaks"] * allow_leaks + ["--quarantine", str(q)] * quarantine
    res = run(*args)
    accepted = violations == 0 and (leaks == 0 or allow_leaks)
    assert res.exit_code == (0 if accepted else 1)
    assert out.exists() == (accepted and not to_stdout)
    assert bool(res.stdout) == (accepted and to_stdout)
    assert q.exists() == (quarantine and not accepted)
    if not accepted:
        code = "E131" if violations else "E130"
        assert res.stderr.startswith(f"{code} {CASE.stem}: ") and res.stderr.count("\n") == 1
