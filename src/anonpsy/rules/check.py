"""``anonpsy rules check``: validate every rule file against its schema and run every case.

Every problem is collected (never stop at the first) and reported as ``CODE path:line: message``. The check is
pure with respect to the rules directory: it reads files and returns problems as data.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from anonpsy import errors
from anonpsy.paths import rules_dir, schemas_dir
from anonpsy.rules.registry import REGISTRY, CaseSkipped, RuleKind, load_all_kinds
from anonpsy.yamlio import line_for, load_yaml_lines

ID_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


@dataclass(frozen=True)
class Problem:
    code: str
    path: str
    line: int
    message: str
    todo: bool = False

    def one_line(self) -> str:
        tag = " (todo)" if self.todo else ""
        return f"{self.code} {self.path}:{self.line}:{tag} {self.message}"


@dataclass
class CheckReport:
    files: int = 0
    rules: int = 0
    cases: int = 0
    cases_passed: int = 0
    todo: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> cases not run for it
    per_kind: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(not p.todo for p in self.problems)


@lru_cache(maxsize=64)
def _schema(path: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return data


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root.parent))
    except ValueError:
        return str(path)


def _schema_problems(
    data: Any, schema: dict[str, Any], lines: dict[str, int], rel: str, code: str
) -> list[Problem]:
    validator = jsonschema.Draft202012Validator(schema)
    out = []
    for err in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        ptr = "/" + "/".join(str(p) for p in err.absolute_path)
        where = ptr if ptr != "/" else "(top level)"
        out.append(Problem(code, rel, line_for(lines, ptr), f"{where}: {err.message}"))
    return out


def rule_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.yaml") if not p.name.endswith(".cases.yaml"))


def check_rules(root: Path | None = None, schemas: Path | None = None) -> CheckReport:
    """Validate every rule file under ``root`` (default: the project's rules directory) and run its cases."""
    load_all_kinds()
    root = Path(root) if root is not None else rules_dir()
    schemas = Path(schemas) if schemas is not None else schemas_dir()
    report = CheckReport()
    if root.is_file():
        files = [root]
        root = root.parent
    else:
        files = rule_files(root)
    seen_ids: dict[tuple[str, str], str] = {}
    kind_counts: Counter[str] = Counter()
    cases_schema = _schema(str(schemas / "rules" / "cases.json"))
    for path in files:
        report.files += 1
        rel = _rel(path, root)
        try:
            doc, lines = load_yaml_lines(path.read_text(encoding="utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else 1
            report.problems.append(Problem(errors.R101_RULE_YAML, rel, line, "malformed YAML; fix the syntax"))
            continue
        if not isinstance(doc, dict) or "kind" not in doc:
            report.problems.append(
                Problem(errors.R108_UNKNOWN_KIND, rel, 1, "rule file must be a mapping starting with 'kind:'")
            )
            continue
        kind_name = str(doc["kind"])
        kind = REGISTRY.get(kind_name)
        if kind is None:
            known = ", ".join(sorted(REGISTRY))
            report.problems.append(
                Problem(errors.R108_UNKNOWN_KIND, rel, line_for(lines, "/kind"),
                        f"unknown rule kind {kind_name!r}; known kinds: {known}")
            )
            continue
        schema_path = schemas / "rules" / kind.schema_file
        if not schema_path.is_file():
            report.problems.append(
                Problem(errors.R100_RULE_SCHEMA, rel, 1, f"no schema for kind {kind_name!r} at schemas/rules/")
            )
            continue
        schema_problems = _schema_problems(doc, _schema(str(schema_path)), lines, rel, errors.R100_RULE_SCHEMA)
        report.problems += schema_problems
        if schema_problems:
            continue
        report.problems += _entry_problems(kind, doc, lines, rel, seen_ids, kind_counts)
        report.rules += len(kind.entries(doc))
        report.problems += _run_cases(kind, doc, path, root, cases_schema, report)
    report.per_kind = dict(sorted(kind_counts.items()))
    return report


def _entry_problems(
    kind: RuleKind,
    doc: dict[str, Any],
    lines: dict[str, int],
    rel: str,
    seen_ids: dict[tuple[str, str], str],
    kind_counts: Counter[str],
) -> list[Problem]:
    out: list[Problem] = []
    file_source = doc.get("source")
    entries = kind.entries(doc)
    pointers = _entry_pointers(doc)
    for i, entry in enumerate(entries):
        ptr = pointers.get(id(entry), "/")
        line = line_for(lines, ptr)
        rid = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(rid, str) or not ID_RE.match(rid):
            out.append(Problem(errors.R105_BAD_ID, rel, line, f"entry {i}: id must match {ID_RE.pattern}"))
            continue
        prev = seen_ids.get((kind.name, rid))
        if prev is not None:
            out.append(Problem(errors.R104_DUPLICATE_ID, rel, line, f"id {rid!r} already defined in {prev}"))
        seen_ids[(kind.name, rid)] = rel
        if not (entry.get("source") or file_source):
            out.append(
                Problem(errors.R106_MISSING_SOURCE, rel, line, f"rule {rid!r} cites no source; add 'source:'")
            )
        kind_counts[kind.name] += 1
    return out


def _entry_pointers(doc: Any, prefix: str = "", depth: int = 0) -> dict[int, str]:
    """Map the identity of every mapping nested in lists of the document to its JSON pointer."""
    out: dict[int, str] = {}
    if depth > 4:
        return out
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.update(_entry_pointers(v, f"{prefix}/{k}", depth + 1))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            if isinstance(v, dict):
                out[id(v)] = f"{prefix}/{i}"
            out.update(_entry_pointers(v, f"{prefix}/{i}", depth + 1))
    return out


def _run_cases(
    kind: RuleKind,
    doc: dict[str, Any],
    path: Path,
    root: Path,
    cases_schema: dict[str, Any],
    report: CheckReport,
) -> list[Problem]:
    cases_path = path.with_name(path.name[: -len(".yaml")] + ".cases.yaml")
    rel = _rel(cases_path, root)
    if not cases_path.is_file():
        return [Problem(errors.R103_MISSING_CASES, _rel(path, root), 1, f"no cases file {cases_path.name}")]
    try:
        cdoc, lines = load_yaml_lines(cases_path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        return [Problem(errors.R101_RULE_YAML, rel, mark.line + 1 if mark else 1, "malformed YAML; fix the syntax")]
    out = _schema_problems(cdoc, cases_schema, lines, rel, errors.R100_RULE_SCHEMA)
    if out:
        return out
    cases: list[dict[str, Any]] = cdoc["cases"]
    ids = {e.get("id") for e in kind.entries(doc)}
    case_ids: Counter[str] = Counter(c["id"] for c in cases)
    for i, case in enumerate(cases):
        line = line_for(lines, f"/cases/{i}")
        report.cases += 1
        todo = bool(case.get("todo", False))
        if case_ids[case["id"]] > 1:
            out.append(Problem(errors.R104_DUPLICATE_ID, rel, line, f"case id {case['id']!r} is not unique"))
        if "rule" in case and case["rule"] not in ids:
            out.append(Problem(errors.R109_UNKNOWN_RULE, rel, line, f"case {case['id']!r}: unknown rule"
                                                                      f" {case['rule']!r}"))
            continue
        try:
            problems = kind.run_case(doc, case)
        except CaseSkipped as exc:
            report.skipped[str(exc)] = report.skipped.get(str(exc), 0) + 1
            continue
        except Exception as exc:  # a broken case must be reported, not crash the whole check
            problems = [f"raised {type(exc).__name__}"]
        if problems:
            if todo:
                report.todo += 1
            for msg in problems:
                out.append(Problem(errors.R102_CASE_FAILED, rel, line, f"case {case['id']!r}: {msg}", todo=todo))
        else:
            report.cases_passed += 1
    for msg in kind.coverage(doc, cases):
        out.append(Problem(errors.R107_COVERAGE, rel, 1, msg))
    return out


def cases_by_rule(cases: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Group cases by the rule id they exercise (helper for coverage functions)."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in cases:
        if "rule" in c:
            out[str(c["rule"])].append(c)
    return out


def expectation_problems(case: dict[str, Any], found: list[str]) -> list[str]:
    """Compare found violation codes with a case's expectation (shared by kinds)."""
    found_set = sorted(set(found))
    if case["expect"] == "pass":
        return [] if not found_set else [f"expected pass, got violations {found_set}"]
    want = sorted(set(case.get("violations", [])))
    if found_set == want:
        return []
    return [f"expected violations {want}, got {found_set or 'none'}"]
