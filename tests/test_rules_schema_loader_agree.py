"""Property: every schema-valid rule file loads with its typed loader (schema and loader agree).

Files are drawn from the real rules directory and varied the way authors vary them: a subset of the entries, in
another order, with optional keys removed. Whatever the JSON Schema accepts, the typed loader must accept too —
otherwise a rule author could write a file that passes `anonpsy rules check`'s schema step and then breaks
the pipeline.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from anonpsy.paths import rules_dir, schemas_dir
from anonpsy.rules import tables
from anonpsy.rules.dsm import parse_rules
from anonpsy.rules.test_values import defs_from_doc

ROOT = rules_dir()


def _files() -> list[tuple[str, Path]]:
    out = [("dsm", p) for p in sorted((ROOT / "dsm").glob("*.yaml")) if not p.name.endswith(".cases.yaml")]
    out += [("test_values", p) for p in sorted((ROOT / "test_values").glob("*.yaml"))
            if not p.name.endswith(".cases.yaml")]
    out += [(kind, ROOT / rel) for kind, rel in tables.FILES.items()]
    return out


FILES = _files()
#: Kinds whose entries must tile a range or reference one another (age bands, occupation pools referenced by
#: support levels): only optional keys vary, never the set of entries.
TILED = {"age_offsets", "occupations"}
DOCS = {p: yaml.safe_load(p.read_text(encoding="utf-8")) for _, p in FILES}
SCHEMAS = {k: json.loads((schemas_dir() / "rules" / f"{k}.json").read_text(encoding="utf-8")) for k, _ in FILES}


def _load(kind: str, doc: dict[str, Any]) -> None:
    if kind == "dsm":
        parse_rules(doc)
    elif kind == "test_values":
        defs_from_doc(doc)
    else:
        tables.MODELS[kind].model_validate(doc)


@st.composite
def varied_rule_files(draw: Any) -> tuple[str, dict[str, Any]]:
    """A real rule file with a random non-empty subset of its entries, shuffled, some optional keys dropped."""
    kind, path = draw(st.sampled_from(FILES))
    doc = copy.deepcopy(DOCS[path])
    entries = doc.get("rules")
    if isinstance(entries, list) and entries and kind not in TILED:
        idx = draw(st.lists(st.integers(0, len(entries) - 1), min_size=1, max_size=min(8, len(entries)),
                            unique=True))
        doc["rules"] = [entries[i] for i in idx]
    if isinstance(doc.get("rules"), list):
        for e in doc["rules"]:
            if isinstance(e, dict) and len(e) > 2:
                for key in draw(st.lists(st.sampled_from(sorted(e)), max_size=2, unique=True)):
                    if key not in ("id",):
                        e.pop(key, None)
    return kind, doc


@settings(suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(varied_rule_files())
def test_every_schema_valid_rule_file_loads(item: tuple[str, dict[str, Any]]) -> None:
    kind, doc = item
    assume(jsonschema.Draft202012Validator(SCHEMAS[kind]).is_valid(doc))
    _load(kind, doc)


def test_every_real_rule_file_loads() -> None:
    for kind, path in FILES:
        jsonschema.Draft202012Validator(SCHEMAS[kind]).validate(DOCS[path])
        _load(kind, DOCS[path])
