"""anonpsy tabular audit / evaluate / baseline: schema audit, recodes, the report, baselines and selection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from anonpsy.cli import main
from anonpsy.tabular.audit import audit_tables
from anonpsy.tabular.baselines import Candidate, privacy_aware_selection, random_table, split_rows
from anonpsy.tabular.instruments import load_instrument
from anonpsy.tabular.personas import load_priors
from anonpsy.tabular.synth import synthesize
from anonpsy.tabular.table import Table, apply_recodes, parse_recode, parse_table

pytest.importorskip("numpy", reason="the tabular extra (numpy) is not installed")


def _synth(iid: str, n: int, seed: int, name: str) -> Table:
    return parse_table(synthesize(load_instrument(iid), n, priors=load_priors(), seed=seed).to_csv(), name)


def _write(t: Table, path: Path) -> Path:
    rows = [",".join(t.columns)] + [",".join(t.values(c)[i] or "" for c in t.columns) for i in range(t.n_rows)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _recoded_sex(t: Table, mapping: dict[str, str], name: str) -> Table:
    cells = dict(t.cells)
    cells["sex"] = [mapping[v] if v is not None else None for v in t.values("sex")]
    return Table(name, list(t.columns), cells)


# ---------------------------------------------------------------------------------------------------- audit


def test_audit_catches_a_0_1_vs_1_2_sex_coding() -> None:
    real = _synth("gad7", 80, 1, "real.csv")  # sex coded 1/2 (male/female)
    syn = _recoded_sex(_synth("gad7", 80, 2, "syn.csv"), {"1": "0", "2": "1"}, "syn.csv")  # coded 0/1
    report = audit_tables(real, [syn])
    assert not report.ok
    err = report.errors[0]
    assert (err.code, err.column) == ("CODING_SHIFT", "sex")
    assert "--recode syn:sex=0:1,1:2" in err.hint
    fixed = apply_recodes(syn, [parse_recode("syn:sex=0:1,1:2")], "syn", 1)
    assert audit_tables(real, [fixed]).ok


def test_audit_catches_an_item_on_1_to_5_against_0_to_4() -> None:
    real = _synth("dsm5_panic", 80, 1, "real.csv")
    syn = _synth("dsm5_panic", 80, 2, "syn.csv")
    cells = dict(syn.cells)
    cells["item_3"] = [str(int(v) + 1) for v in syn.values("item_3") if v is not None]
    shifted = Table("syn.csv", list(syn.columns), cells)
    assert any(f.code == "CODING_SHIFT" and f.column == "item_3" for f in audit_tables(real, [shifted]).errors) or \
        any(f.code == "DOMAIN" for f in audit_tables(real, [shifted], instrument=load_instrument("dsm5_panic")).errors)
    codes = {f.code for f in audit_tables(real, [shifted], instrument=load_instrument("dsm5_panic")).errors}
    assert codes == {"DOMAIN"}


def test_audit_catches_labels_columns_and_types() -> None:
    real = parse_table("sex,score\nF,1\nM,2\nF,3\n", "r.csv")
    relabelled = parse_table("sex,score\nfemale,1\nmale,2\nfemale,2\n", "s.csv")
    assert [f.code for f in audit_tables(real, [relabelled]).errors] == ["LABELS"]
    assert [f.code for f in audit_tables(real, [parse_table("sex\nF\n", "s.csv")]).errors] == ["COLUMNS"]
    assert [f.code for f in audit_tables(real, [parse_table("sex,score\nF,a\nM,b\n", "s.csv")]).errors] == ["TYPE"]
    ages = parse_table("age\n" + "\n".join(str(20 + i) for i in range(30)) + "\n", "r.csv")
    scaled = parse_table("age\n" + "\n".join(str(i / 30) for i in range(30)) + "\n", "s.csv")
    assert [f.code for f in audit_tables(ages, [scaled]).errors] == ["RANGE"]


def test_audit_accepts_a_sparse_but_compatible_table() -> None:
    real = parse_table("item_1\n0\n1\n2\n3\n", "r.csv")
    syn = parse_table("item_1\n1\n2\n2\n1\n", "s.csv")
    report = audit_tables(real, [syn])
    assert report.ok and [f.code for f in report.findings] == ["UNSEEN"]


@pytest.mark.parametrize("spec", ["sex", "sex=", "sex=0", "other:sex=0:1", "syn0:sex=0:1", "sex=0:1,0:2"])
def test_bad_recode_specs_are_rejected(spec: str) -> None:
    from anonpsy.errors import AnonpsyError

    with pytest.raises(AnonpsyError) as exc:
        parse_recode(spec)
    assert exc.value.code == "T102"


def test_recode_is_simultaneous_and_must_match_values() -> None:
    from anonpsy.errors import AnonpsyError

    t = parse_table("x\n0\n1\n", "t.csv")
    assert apply_recodes(t, [parse_recode("x=0:1,1:2")], "syn", 1).values("x") == ["1", "2"]
    with pytest.raises(AnonpsyError):
        apply_recodes(t, [parse_recode("x=5:1")], "syn", 1)


# ------------------------------------------------------------------------------------------- evaluate (CLI)


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("tables")
    real = _synth("gad7", 150, 1, "real.csv")
    return {"real": _write(real, d / "real.csv"), "syn": _write(_synth("gad7", 150, 2, "syn.csv"), d / "syn.csv"),
            "random": _write(random_table(real, 150, seed=1, instrument=load_instrument("gad7")), d / "random.csv"),
            "syn01": _write(_recoded_sex(_synth("gad7", 150, 3, "s"), {"1": "0", "2": "1"}, "s"), d / "syn01.csv")}


def test_cli_evaluate_stops_on_a_coding_mismatch_unless_recoded(tables: dict[str, Path]) -> None:
    stats = pytest.importorskip("scipy")  # noqa: F841
    bad = CliRunner().invoke(main, ["tabular", "evaluate", str(tables["real"]), str(tables["syn01"]),
                                    "--bootstrap", "0"])
    assert bad.exit_code == 2
    lines = [ln for ln in bad.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("T100 syn01.csv:") and "CODING_SHIFT column 'sex'" in lines[0]
    ok = CliRunner().invoke(main, ["tabular", "evaluate", str(tables["real"]), str(tables["syn01"]), "--bootstrap",
                                   "50", "--recode", "syn:sex=0:1,1:2", "--json"])
    assert ok.exit_code == 0, ok.output
    doc = json.loads(ok.output[ok.output.index("{"):])
    assert doc["audit"]["recodes"] == ["syn:sex=0:1,1:2"]


def test_cli_audit_exit_codes(tables: dict[str, Path]) -> None:
    assert CliRunner().invoke(main, ["tabular", "audit", str(tables["real"]), str(tables["syn"])]).exit_code == 0
    assert CliRunner().invoke(main, ["tabular", "audit", str(tables["real"]), str(tables["syn01"])]).exit_code == 1
    missing = CliRunner().invoke(main, ["tabular", "audit", str(tables["real"]), "/no/such.csv"])
    assert missing.exit_code == 2 and missing.output.startswith("E100")


def test_cli_evaluate_writes_the_report_and_ranks_the_baseline_last(tables: dict[str, Path], tmp_path: Path
                                                                     ) -> None:
    pytest.importorskip("scipy")
    out = tmp_path / "rep"
    result = CliRunner().invoke(main, ["tabular", "evaluate", str(tables["real"]), str(tables["syn"]),
                                       str(tables["random"]), "--instrument", "gad7", "--bootstrap", "200",
                                       "--report", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    syn, rnd = doc["synthetic"]
    for key in ("jsd", "cramers_v_mae", "energy"):
        assert syn["metrics"][key]["estimate"] < rnd["metrics"][key]["estimate"]
        lo, hi = syn["metrics"][key]["low"], syn["metrics"][key]["high"]
        assert lo is not None and hi is not None and lo <= hi
    delta = doc["paired_deltas"]["random.csv - syn.csv"]["jsd"]
    assert delta["low"] > 0, "random is worse than the model-based table, and the paired CI says so"
    assert rnd["metrics"]["exact_overlap"]["estimate"] <= syn["metrics"]["exact_overlap"]["estimate"]
    assert abs(syn["psychometrics"]["alpha"]["estimate"] - doc["real_psychometrics"]["alpha"]["estimate"]) < 0.1
    assert rnd["psychometrics"]["alpha"]["estimate"] < 0.5
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "Cramér's V" in md and "figures/items.png" in md
    if pytest.importorskip("matplotlib"):
        assert (out / "figures" / "items.png").read_bytes()[:4] == b"\x89PNG"
        assert (out / "figures" / "cramers_v_diff_2.png").is_file()


def test_evaluate_a_table_against_itself_is_identity(tables: dict[str, Path]) -> None:
    pytest.importorskip("scipy")
    from anonpsy.tabular.evaluate import evaluate_tables
    from anonpsy.tabular.table import read_table

    real = read_table(tables["real"])
    res = evaluate_tables(real, [real], audit_tables(real, [real]), n_boot=20)
    m = res.synthetic[0].metrics
    assert m["jsd"].value == 0 and m["cramers_v_mae"].value == 0 and m["energy"].value == 0
    assert m["exact_overlap"].value == 1 and m["nn_share_1p"].value == 1


def test_evaluate_same_seed_same_intervals(tables: dict[str, Path]) -> None:
    pytest.importorskip("scipy")
    args = ["tabular", "evaluate", str(tables["real"]), str(tables["syn"]), "--bootstrap", "100", "--json",
            "--seed", "9"]
    a, b = CliRunner().invoke(main, args), CliRunner().invoke(main, args)
    assert a.exit_code == 0 and a.output == b.output


# ---------------------------------------------------------------------------------------------- baselines


def test_random_baseline_is_uniform_over_the_domain(tables: dict[str, Path]) -> None:
    from anonpsy.tabular.table import read_table

    real = read_table(tables["real"])
    rnd = random_table(real, 4000, seed=2, instrument=load_instrument("gad7"))
    shares = [rnd.values("item_1").count(str(v)) / 4000 for v in range(4)]
    assert all(abs(s - 0.25) < 0.03 for s in shares)
    ages = [int(a) for a in rnd.values("age") if a is not None]
    real_ages = [int(a) for a in real.values("age") if a is not None]
    assert min(ages) >= min(real_ages) and max(ages) <= max(real_ages)
    assert random_table(real, 10, seed=2).cells == random_table(real, 10, seed=2).cells


class _CopyingSynth:
    """A fake synthesizer: with many epochs it memorises the training rows, with few it shuffles columns."""

    def __init__(self, epochs: int, seed: int) -> None:
        self.epochs, self.seed = epochs, seed
        self.train: Table | None = None

    def fit(self, table: Table) -> None:
        self.train = table

    def sample(self, n: int) -> Table:
        import random

        assert self.train is not None
        t = self.train
        rng = random.Random(self.seed)
        idx = [rng.randrange(t.n_rows) for _ in range(n)]
        if self.epochs >= 300:
            return Table("copy", list(t.columns), {c: [t.values(c)[i] for i in idx] for c in t.columns})
        return Table("shuffle", list(t.columns),
                     {c: [t.values(c)[rng.randrange(t.n_rows)] for _ in range(n)] for c in t.columns})


def test_privacy_aware_selection_rejects_memorising_candidates(tables: dict[str, Path]) -> None:
    from anonpsy.tabular.table import read_table

    real = read_table(tables["real"])
    train, holdout = split_rows(real, 0.7, 0)
    assert (train.n_rows, holdout.n_rows) == (105, 45)
    sel = privacy_aware_selection(real, _CopyingSynth, n=100, epochs=(100, 300), seeds=(0, 1))
    chosen: Candidate = sel.chosen
    assert chosen.epochs == 100 and chosen.admissible
    copying = [c for c in sel.candidates if c.epochs == 300]
    assert all(not c.admissible and c.exact_overlap == 1.0 for c in copying)
    assert chosen.jsd == min(c.jsd for c in sel.candidates if c.admissible)
    assert sel.log()["split"] == {"train": 105, "holdout": 45, "seed": 0}


def test_ctgan_and_tvae_train_through_sdv(tables: dict[str, Path], tmp_path: Path) -> None:
    pytest.importorskip("sdv", reason="SDV is not installed (extra anonpsy[synth]; not installed in CI)")
    out = tmp_path / "ctgan.csv"
    result = CliRunner().invoke(main, ["tabular", "baseline", "ctgan", str(tables["real"]), "-o", str(out),
                                       "--epochs", "2", "--seeds", "0", "--instrument", "gad7",
                                       "--max-overlap", "1", "--max-near-share", "1"])
    assert result.exit_code == 0, result.output
    assert audit_tables(parse_table(tables["real"].read_text(), "r"), [parse_table(out.read_text(), "s")],
                        instrument=load_instrument("gad7")).ok


def test_sdv_missing_is_a_clear_one_line_error(tables: dict[str, Path], tmp_path: Path) -> None:
    try:
        import sdv  # noqa: F401
        pytest.skip("SDV is installed")
    except ImportError:
        pass
    result = CliRunner().invoke(main, ["tabular", "baseline", "tvae", str(tables["real"]), "-o",
                                       str(tmp_path / "t.csv")])
    assert result.exit_code == 2
    assert result.output.startswith("V100") and "anonpsy[synth]" in result.output
