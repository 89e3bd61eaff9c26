"""Versioned prompt templates and the strict placeholder renderer."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.llm import LLMTemplateError, list_templates, load_template
from anonpsy.llm.prompts import parse_template

HEADER = "---\nid: demo\nversion: {v}\noperator: generation\ndescription: demo\n---\n"


def write(folder: Path, version: int, body: str) -> None:
    (folder / f"demo.v{version}.md").write_text(HEADER.format(v=version) + body)


def test_echo_template_loads() -> None:
    t = load_template("echo")
    assert (t.id, t.version, t.operator, t.reply_schema_path) == ("echo", 1, "extraction", "echo.json")
    assert t.reply_schema is not None and t.reply_schema["required"] == ["echo", "count"]
    assert t.placeholders == {"text", "schema"}
    assert "echo" in list_templates()


def test_render_gives_system_and_user() -> None:
    messages = load_template("echo").render(text="a b", schema={"type": "object"})
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"].endswith('{"type":"object"}')
    assert messages[1]["content"].endswith("Text:\na b")


def test_missing_and_unknown_placeholders_are_errors() -> None:
    t = load_template("echo")
    with pytest.raises(LLMTemplateError, match="missing values for schema") as info:
        t.render(text="secret words")
    assert "secret words" not in str(info.value) and info.value.code == "E122"
    with pytest.raises(LLMTemplateError, match="unknown placeholders extra"):
        t.render(text="x", schema="y", extra="z")


def test_latest_version_by_default(tmp_path: Path) -> None:
    write(tmp_path, 1, "one {{ x }}")
    write(tmp_path, 10, "ten {{ x }}")
    write(tmp_path, 2, "two {{ x }}")
    assert load_template("demo", directory=tmp_path).version == 10
    assert load_template("demo", 2, directory=tmp_path).render(x="!") == [
        {"role": "user", "content": "two !"}
    ]
    with pytest.raises(LLMTemplateError, match="available: \\[1, 2, 10\\]"):
        load_template("demo", 3, directory=tmp_path)
    with pytest.raises(LLMTemplateError, match="no template"):
        load_template("other", directory=tmp_path)


def test_front_matter_must_match_file_name(tmp_path: Path) -> None:
    (tmp_path / "demo.v2.md").write_text(HEADER.format(v=1) + "body")
    with pytest.raises(LLMTemplateError, match="file name says demo@v2"):
        load_template("demo", 2, directory=tmp_path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no front matter", "front matter"),
        ("---\nid: demo\nversion: 1\n", "not closed"),
        ("---\nid: demo\nversion: 1\noperator: dance\n---\nx", "operator"),
        ("---\nid: demo\nversion: 1\noperator: judge\nextra: 1\n---\nx", "extra"),
        ("---\nid: demo\nversion: 1\noperator: judge\n---\n   \n", "empty"),
        ("---\nid: demo\nversion: 1\noperator: judge\n---\nhello {{ bad-name }}", "malformed placeholder"),
        ("---\nid: demo\nversion: 1\noperator: judge\n---\nhello {{ x", "malformed placeholder"),
        ("---\nid: demo\nversion: 1\noperator: judge\n---\n---system---\nonly system", "---user---"),
        ("---\nid: demo\nversion: 1\noperator: judge\n---\nlead\n---user---\nx", "before the first"),
        (
            "---\nid: demo\nversion: 1\noperator: judge\nreply_schema: ../rules/x.json\n---\nx",
            "under schemas/llm",
        ),
        ("---\nid: demo\nversion: 1\noperator: judge\nreply_schema: nope.json\n---\nx", "not found"),
    ],
)
def test_malformed_templates(text: str, message: str) -> None:
    with pytest.raises(LLMTemplateError, match=message):
        parse_template(text)


def test_values_are_not_expanded_twice() -> None:
    t = parse_template(HEADER.format(v=1) + "---system---\nS {{ a }}\n---user---\nU {{ b }} {{a}}")
    messages = t.render(a="{{ b }}", b=[1, "x"])
    assert messages == [
        {"role": "system", "content": "S {{ b }}"},
        {"role": "user", "content": 'U [1,"x"] {{ b }}'},
    ]


@given(st.text())
@example("{{ x }}")
@example("\\1 \\g<0>")
def test_render_inserts_values_verbatim(value: str) -> None:
    t = parse_template(HEADER.format(v=1) + "before {{ x }} after")
    assert t.render(x=value) == [{"role": "user", "content": f"before {value} after"}]
