"""Versioned prompt templates.

A template is ``adapters/prompts/<template_id>.v<N>.md``::

    ---
    id: echo
    version: 1
    operator: extraction
    reply_schema: echo.json          # path under schemas/llm/ (optional for free-text templates)
    description: "..."
    ---
    ---system---
    You answer in JSON.
    ---user---
    Repeat {{ text }}.

The body may be split into a system and a user part with ``---system---`` / ``---user---`` lines; without
them the whole body is the user message. ``{{ name }}`` placeholders are filled by a strict renderer: a
placeholder without a value, or a value without a placeholder, is an error. Values are inserted once (a
value that itself contains ``{{ x }}`` is not expanded again); non-string values are inserted as compact
JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from anonpsy.llm.config import Operator
from anonpsy.llm.errors import LLMTemplateError
from anonpsy.paths import adapters_dir, schemas_dir

TEMPLATE_ID = r"[a-z0-9][a-z0-9_-]*"
_FILE_RE = re.compile(rf"^(?P<id>{TEMPLATE_ID})\.v(?P<version>[1-9][0-9]*)\.md$")
_PLACEHOLDER_RE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_SECTION_RE = re.compile(r"^---(system|user)---[ \t]*$", re.MULTILINE)


class TemplateMeta(BaseModel):
    """The YAML front matter of a template file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=rf"^{TEMPLATE_ID}$")
    version: int = Field(ge=1)
    operator: Operator
    reply_schema: str | None = None
    description: str = ""


def prompts_dir() -> Path:
    """Directory holding the bundled prompt templates."""
    return adapters_dir() / "prompts"


def _placeholders(text: str) -> set[str]:
    return set(_PLACEHOLDER_RE.findall(text))


def _check_braces(text: str, template_id: str, part: str) -> None:
    stripped = _PLACEHOLDER_RE.sub("", text)
    if "{{" in stripped or "}}" in stripped:
        raise LLMTemplateError(
            f"malformed placeholder in the {part} part; use {{{{ name }}}} with a name of letters, digits, _",
            template_id=template_id,
        )


def _substitute(text: str, values: dict[str, str]) -> str:
    return _PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], text)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded template. :meth:`render` gives the chat messages."""

    id: str
    version: int
    operator: str
    description: str
    user: str
    system: str | None = None
    reply_schema_path: str | None = None
    reply_schema: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def placeholders(self) -> frozenset[str]:
        """Names of every placeholder in the system and user parts."""
        return frozenset(_placeholders(self.user) | _placeholders(self.system or ""))

    @property
    def ref(self) -> str:
        """``<id>@v<version>``, the template's identity in markers, caches and logs."""
        return f"{self.id}@v{self.version}"

    def render(self, **variables: Any) -> list[dict[str, str]]:
        """Fill the placeholders and return ``[system?, user]`` chat messages.

        Raises :class:`LLMTemplateError` naming missing or unknown placeholders (names only, never values).
        """
        wanted = self.placeholders
        missing = sorted(wanted - variables.keys())
        unknown = sorted(variables.keys() - wanted)
        if missing or unknown:
            parts = []
            if missing:
                parts.append(f"missing values for {', '.join(missing)}")
            if unknown:
                parts.append(f"unknown placeholders {', '.join(unknown)}")
            raise LLMTemplateError(f"cannot render {self.ref}: {'; '.join(parts)}", template_id=self.id)
        values = {k: _as_text(v) for k, v in variables.items()}
        messages: list[dict[str, str]] = []
        if self.system is not None:
            messages.append({"role": "system", "content": _substitute(self.system, values)})
        messages.append({"role": "user", "content": _substitute(self.user, values)})
        return messages


def parse_template(
    text: str, *, source: str = "<string>", expect_id: str | None = None, expect_version: int | None = None
) -> PromptTemplate:
    """Parse a template file's text. ``source`` is used in error locations only."""
    if not text.startswith("---\n"):
        raise LLMTemplateError("template must start with a '---' front matter line", location=source)
    end = text.find("\n---\n", 3)
    if end < 0:
        raise LLMTemplateError("front matter is not closed by a '---' line", location=source)
    try:
        front = yaml.safe_load(text[4:end])
    except yaml.YAMLError:
        raise LLMTemplateError("front matter is not valid YAML", location=source) from None
    try:
        meta = TemplateMeta.model_validate(front)
    except ValidationError as exc:
        detail = "; ".join(f"[{' -> '.join(str(p) for p in e['loc'])}] {e['msg']}" for e in exc.errors())
        raise LLMTemplateError(f"front matter: {detail}", location=source) from None
    if expect_id is not None and (meta.id != expect_id or meta.version != expect_version):
        raise LLMTemplateError(
            f"front matter says {meta.id}@v{meta.version} but the file name says "
            f"{expect_id}@v{expect_version}",
            location=source,
        )
    body = text[end + len("\n---\n") :]
    system, user = _split_body(body, meta.id, source)
    _check_braces(user, meta.id, "user")
    if system is not None:
        _check_braces(system, meta.id, "system")
    schema = _load_reply_schema(meta.reply_schema, meta.id, source) if meta.reply_schema else None
    return PromptTemplate(
        id=meta.id,
        version=meta.version,
        operator=meta.operator,
        description=meta.description,
        user=user,
        system=system,
        reply_schema_path=meta.reply_schema,
        reply_schema=schema,
    )


def _split_body(body: str, template_id: str, source: str) -> tuple[str | None, str]:
    marks = list(_SECTION_RE.finditer(body))
    if not marks:
        user = body.strip("\n")
        if not user.strip():
            raise LLMTemplateError("template body is empty", template_id=template_id, location=source)
        return None, user
    if body[: marks[0].start()].strip():
        raise LLMTemplateError("text before the first ---system---/---user--- line", location=source)
    sections: dict[str, str] = {}
    for i, mark in enumerate(marks):
        name = mark.group(1)
        if name in sections:
            raise LLMTemplateError(f"---{name}--- appears twice", location=source)
        stop = marks[i + 1].start() if i + 1 < len(marks) else len(body)
        sections[name] = body[mark.end() : stop].strip("\n")
    if not sections.get("user", "").strip():
        raise LLMTemplateError("the ---user--- part is missing or empty", location=source)
    return sections.get("system"), sections["user"]


def _load_reply_schema(rel: str, template_id: str, source: str) -> dict[str, Any]:
    base = (schemas_dir() / "llm").resolve()
    path = (base / rel).resolve()
    if base not in path.parents:
        raise LLMTemplateError("reply_schema must be a path under schemas/llm/", location=source)
    try:
        schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LLMTemplateError(f"reply_schema {rel} not found under schemas/llm/", location=source) from None
    except json.JSONDecodeError:
        raise LLMTemplateError(f"reply_schema {rel} is not valid JSON", location=source) from None
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise LLMTemplateError(
            f"reply_schema {rel} is not a valid JSON Schema: {exc.message}", template_id=template_id
        ) from None
    return schema


def template_versions(template_id: str, directory: Path | None = None) -> list[int]:
    """Available versions of ``template_id``, ascending."""
    folder = directory or prompts_dir()
    versions = []
    for path in folder.glob(f"{template_id}.v*.md"):
        m = _FILE_RE.match(path.name)
        if m and m.group("id") == template_id:
            versions.append(int(m.group("version")))
    return sorted(versions)


def list_templates(directory: Path | None = None) -> dict[str, list[int]]:
    """Every template id in the directory with its versions."""
    folder = directory or prompts_dir()
    found: dict[str, list[int]] = {}
    for path in folder.glob("*.md"):
        m = _FILE_RE.match(path.name)
        if m:
            found.setdefault(m.group("id"), []).append(int(m.group("version")))
    return {k: sorted(v) for k, v in sorted(found.items())}


def load_template(
    template_id: str, version: int | None = None, *, directory: Path | None = None
) -> PromptTemplate:
    """Load ``<template_id>.v<version>.md`` (the latest version when ``version`` is None)."""
    return _load_template(template_id, version, str(directory or prompts_dir()))


@lru_cache(maxsize=256)
def _load_template(template_id: str, version: int | None, directory: str) -> PromptTemplate:
    folder = Path(directory)
    if not re.fullmatch(TEMPLATE_ID, template_id):
        raise LLMTemplateError(f"bad template id {template_id!r}; use lowercase letters, digits, _ and -")
    if version is None:
        versions = template_versions(template_id, folder)
        if not versions:
            raise LLMTemplateError(f"no template {template_id!r} in {folder}", template_id=template_id)
        version = versions[-1]
    path = folder / f"{template_id}.v{version}.md"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LLMTemplateError(
            f"no version {version} of template {template_id!r}; "
            f"available: {template_versions(template_id, folder)}",
            template_id=template_id,
        ) from None
    return parse_template(text, source=str(path), expect_id=template_id, expect_version=version)
