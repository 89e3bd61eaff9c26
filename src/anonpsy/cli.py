"""The ``anonpsy`` command line.

Every command reports bad input as one line ``CODE location: message`` on stderr and exits with status 2, with no
traceback and no partial output file. Set ``ANONPSY_DEBUG=1`` to see tracebacks of internal errors (they may quote
input, so never in shared logs).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from anonpsy import __version__, errors
from anonpsy.cliutil import handle_errors
from anonpsy.errors import AnonpsyError


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="anonpsy")
def main() -> None:
    """De-identify psychiatric case narratives while keeping their clinical structure.

    \b
    Example:
      anonpsy deid fixtures/cases/01_adhd_child.txt --seed 7
    """


# ---------------------------------------------------------------------------------------------------------------
# rules


@main.group()
def rules() -> None:
    """Work with the declarative rules directory.

    \b
    Example:
      anonpsy rules check
    """


@rules.command("check")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@handle_errors
def rules_check(path: Path | None, as_json: bool) -> None:
    """Validate every rule file against its schema and run every pass/fail case.

    Reports every problem as `CODE file:line: message`; exits 0 only when all pass (cases marked `todo` are
    reported but do not fail; cases that need an optional extra which is not installed are counted as skipped,
    with the extra named).

    \b
    Example:
      anonpsy rules check rules/dsm
    """
    from anonpsy.rules.check import check_rules

    if path is not None and not path.exists():
        raise AnonpsyError(errors.E100_MISSING_FILE, "rules path not found", str(path))
    report = check_rules(path)
    if as_json:
        click.echo(json.dumps({
            "ok": report.ok, "files": report.files, "rules": report.rules, "cases": report.cases,
            "cases_passed": report.cases_passed, "todo": report.todo, "skipped": report.skipped,
            "per_kind": report.per_kind,
            "problems": [p.__dict__ for p in report.problems],
        }, indent=2))
    else:
        for p in report.problems:
            click.echo(p.one_line(), err=not p.todo)
        for reason, n in sorted(report.skipped.items()):
            click.echo(f"skipped {n} cases: {reason}", err=True)
        click.echo(f"{report.files} files, {report.rules} rules, {report.cases} cases "
                   f"({report.cases_passed} passed, {report.todo} todo, {sum(report.skipped.values())} skipped), "
                   f"{sum(1 for p in report.problems if not p.todo)} problems")
    sys.exit(0 if report.ok else 1)


# ---------------------------------------------------------------------------------------------------------------
# schema


@main.group()
def schema() -> None:
    """JSON Schemas generated from the models.

    \b
    Example:
      anonpsy schema export -o schemas/graph.v2.json
    """


@schema.command("export")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write here instead of stdout.")
@handle_errors
def schema_export(output: Path | None) -> None:
    """Export the JSON Schema of the semantic graph (schemas/graph.v2.json).

    \b
    Example:
      anonpsy schema export -o schemas/graph.v2.json
    """
    from anonpsy.graphio import graph_json_schema_text
    from anonpsy.yamlio import write_atomic

    text = graph_json_schema_text()
    if output is None:
        click.echo(text, nl=False)
    else:
        write_atomic(output, text)


# ---------------------------------------------------------------------------------------------------------------
# validate / perturb / check


def _print_violations(violations: list[Any]) -> None:
    for v in violations:
        click.echo(v.one_line(), err=True)


@main.command()
@click.argument("graph_path", metavar="GRAPH.yaml", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print violations as JSON.")
@handle_errors
def validate(graph_path: Path, as_json: bool) -> None:
    """Validate a case graph: references, edge pairs, intervals, known diagnoses, DSM-5-TR feasibility.

    Exits 0 when valid, 1 when there are violations, 2 on unreadable input.

    \b
    Example:
      anonpsy validate fixtures/graphs/01_adhd_child.yaml
    """
    from anonpsy.graphio import read_graph_checked
    from anonpsy.validate import unknown_diagnoses
    from anonpsy.validate import validate as run_validate

    graph = read_graph_checked(graph_path)
    unknown = unknown_diagnoses(graph)
    if unknown:
        v = unknown[0]
        raise AnonpsyError(errors.E104_UNKNOWN_DIAGNOSIS, f"{v.message} (node {v.node_ids[0]})", graph_path.name)
    violations = run_validate(graph)
    if as_json:
        click.echo(json.dumps([v.model_dump() for v in violations], indent=2))
    else:
        _print_violations(violations)
        click.echo(f"{len(violations)} violations")
    sys.exit(1 if violations else 0)


@main.command()
@click.argument("graph_path", metavar="GRAPH.yaml", type=click.Path(path_type=Path))
@click.option("--seed", type=int, default=0, show_default=True, help="Seed; the same seed gives the same output.")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write the perturbed graph here.")
@click.option("--audit", "audit_path", type=click.Path(path_type=Path), help="Write the audit (JSON) here.")
@click.option("--no-normalize", is_flag=True, help="Skip the temporal engine (graph already normalised).")
@handle_errors
def perturb(graph_path: Path, seed: int, output: Path | None, audit_path: Path | None, no_normalize: bool) -> None:
    """Perturb identifying attributes of a case graph under the clinical rules.

    Age, sex, ethnicity, occupation and test values change; ids, edges, durations, the visit scaffold and clinical
    content do not. Without -o the perturbed graph and the audit are printed.

    \b
    Example:
      anonpsy perturb fixtures/graphs/01_adhd_child.yaml --seed 7 -o out.yaml --audit audit.json
    """
    from anonpsy.graphio import dump_graph, read_graph_checked
    from anonpsy.perturb import perturb as run_perturb
    from anonpsy.temporal import normalize
    from anonpsy.validate import unknown_diagnoses
    from anonpsy.validate import validate as run_validate
    from anonpsy.yamlio import write_atomic

    graph = read_graph_checked(graph_path)
    unknown = unknown_diagnoses(graph)
    if unknown:
        v = unknown[0]
        raise AnonpsyError(errors.E104_UNKNOWN_DIAGNOSIS, f"{v.message} (node {v.node_ids[0]})", graph_path.name)
    if not no_normalize:
        graph = normalize(graph)
    structural = [v for v in run_validate(graph, clinical=False)]
    if structural:
        v = structural[0]
        raise AnonpsyError(errors.E103_SCHEMA, f"graph is not valid: {v.one_line()} "
                                               f"(run `anonpsy validate` for all {len(structural)})", graph_path.name)
    new, audit = run_perturb(graph, seed)
    audit_json = audit.model_dump_json(indent=2) + "\n"
    text = dump_graph(new)
    if output is None:
        click.echo(text, nl=False)
        if audit_path is None:
            click.echo("# audit")
            click.echo(audit_json, nl=False)
    else:
        write_atomic(output, text)
    if audit_path is not None:
        write_atomic(audit_path, audit_json)
    if audit.violations:
        click.echo(f"{len(audit.violations)} invariant violations after perturbation (see audit)", err=True)
        sys.exit(1)


@main.command("check")
@click.argument("original", metavar="ORIG.yaml", type=click.Path(path_type=Path))
@click.argument("perturbed", metavar="OUT.yaml", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print violations as JSON.")
@handle_errors
def check_cmd(original: Path, perturbed: Path, as_json: bool) -> None:
    """Check that a perturbed graph keeps the original's structure and satisfies every rule.

    Temporal relations of all node pairs, edges, ids, durations, clinical content, the visit scaffold, STEB field
    presence, sex constraints and DSM-5-TR feasibility of the new demographics. Exit 0 when faithful, 1 otherwise.

    \b
    Example:
      anonpsy check fixtures/graphs/01_adhd_child.yaml out.yaml
    """
    from anonpsy.graphio import read_graph_checked
    from anonpsy.perturb import check
    from anonpsy.temporal import normalize

    a = normalize(read_graph_checked(original))
    b = read_graph_checked(perturbed)
    violations = check(a, b)
    if as_json:
        click.echo(json.dumps([v.model_dump() for v in violations], indent=2))
    else:
        _print_violations(violations)
        click.echo(f"{len(violations)} violations")
    sys.exit(1 if violations else 0)


# Commands defined in their own modules attach themselves to ``main`` on import.
from anonpsy import cli_deid, cli_evaluate, cli_llm  # noqa: E402, F401
from anonpsy.phi import cli as _phi_cli  # noqa: E402

for _cmd in _phi_cli.COMMANDS:
    main.add_command(_cmd)

from anonpsy.tabular.cli import tabular as _tabular  # noqa: E402

main.add_command(_tabular)
from anonpsy.audio import cli as _audio_cli  # noqa: E402, F401
from anonpsy.twin import cli as _twin_cli  # noqa: E402, F401
