"""Registry of rule kinds.

Every rule file under ``rules/`` starts with ``kind: <name>`` and ``version: <int>``; it is validated against
``schemas/rules/<name>.json`` and its same-stem ``<stem>.cases.yaml`` is run through the kind's ``run_case``.

A kind module registers itself with :func:`register` and provides:

* ``entries(doc)`` -> the rule entries of a file (dicts with at least ``id``; ``source`` unless the file has a
  file-level ``source``). Entry ids must be unique across the whole rules directory within a kind.
* ``run_case(doc, case)`` -> list of problems (strings; empty means the case behaved as expected). ``case`` is one
  item of the cases file: ``{id, rule?, input, expect: pass|fail, violations?: [...], todo?: bool}``.
* ``coverage(doc, cases)`` (optional) -> list of problems about missing cases (e.g. threshold boundaries).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Doc = dict[str, Any]
Case = dict[str, Any]


def _no_coverage(doc: Doc, cases: list[Case]) -> list[str]:
    return []


def _entries_from_key(key: str) -> Callable[[Doc], list[dict[str, Any]]]:
    def entries(doc: Doc) -> list[dict[str, Any]]:
        value = doc.get(key, [])
        return list(value) if isinstance(value, list) else []

    return entries


_RULES_ENTRIES = _entries_from_key("rules")


class CaseSkipped(Exception):
    """Raised by a kind's ``run_case`` when the case needs an optional extra that is not installed.

    The message names the extra (never rule text). A skipped case is counted and reported, not failed: a rule
    author without the extra still learns that those cases did not run.
    """


@dataclass(frozen=True)
class RuleKind:
    name: str
    run_case: Callable[[Doc, Case], list[str]]
    entries: Callable[[Doc], list[dict[str, Any]]] = _RULES_ENTRIES
    coverage: Callable[[Doc, list[Case]], list[str]] = _no_coverage
    description: str = ""

    @property
    def schema_file(self) -> str:
        return f"{self.name}.json"


REGISTRY: dict[str, RuleKind] = {}


def register(kind: RuleKind) -> RuleKind:
    if kind.name in REGISTRY:
        raise ValueError(f"rule kind {kind.name!r} registered twice")
    REGISTRY[kind.name] = kind
    return kind


def entries_from(key: str) -> Callable[[Doc], list[dict[str, Any]]]:
    """Helper for kinds whose entries live under a top-level list ``key``."""
    return _entries_from_key(key)


def load_all_kinds() -> dict[str, RuleKind]:
    """Import every kind module so that they register themselves."""
    from anonpsy.rules import kinds  # noqa: F401  (import side effect: registration)

    return REGISTRY
