"""Stable YAML I/O with line tracking.

``dump_yaml`` is byte-stable: the same data always gives the same bytes (insertion order kept, block style, no
line folding, unicode kept). ``load_yaml_lines`` returns the data together with a map from JSON-pointer-like paths
(``/cases/3/input``) to 1-based line numbers, so validators can report ``file:line``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml


class _Dumper(yaml.SafeDumper):
    pass


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str_representer)


def dump_yaml(data: Any) -> str:
    return yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=10_000,
        indent=2,
    )


#: libyaml's parser when PyYAML was built with it (it is on every supported platform's wheel): the same safe
#: constructors, a parser written in C. The pure-Python parser made loading the rules most of a cold start.
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` with libyaml's parser when it is available."""
    return yaml.load(text, Loader=_Loader)


def _walk(node: yaml.Node, path: str, lines: dict[str, int]) -> Any:
    lines[path or "/"] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = str(key_node.value)
            _walk(value_node, f"{path}/{key}", lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, f"{path}/{i}", lines)
    return None


def load_yaml_lines(text: str) -> tuple[Any, dict[str, int]]:
    """Parse YAML and return (data, path -> line). Raises yaml.YAMLError on malformed input."""
    data = load_yaml(text)
    lines: dict[str, int] = {}
    node = yaml.compose(text, Loader=_Loader)
    if node is not None:
        _walk(node, "", lines)
    return data, lines


def line_for(lines: dict[str, int], path: str) -> int:
    """Best line for a path: the path itself or its nearest ancestor."""
    p = path
    while p:
        if p in lines:
            return lines[p]
        p = p.rsplit("/", 1)[0]
    return lines.get("/", 1)


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write a file atomically: temp file in the same directory, fsync, rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
