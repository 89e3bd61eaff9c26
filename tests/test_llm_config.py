"""Server profiles, the user configuration file and the loopback rule."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.llm import LLMConfig, LLMConfigError, LLMRemoteEndpointError, load_config, load_profile
from anonpsy.llm.config import available_profiles, ensure_allowed_endpoint, host_class, resolve_config
from anonpsy.paths import adapters_dir, schemas_dir

PROFILES = ["llama-server", "llama-cpp-python", "vllm", "ollama", "lmstudio", "scripted", "openai-compatible"]


def test_bundled_profiles_are_pinned() -> None:
    assert sorted(available_profiles()) == sorted(PROFILES)


@pytest.mark.parametrize("name", PROFILES)
def test_profile_validates_and_loads(name: str) -> None:
    path = adapters_dir() / "profiles" / f"{name}.yaml"
    schema = json.loads((schemas_dir() / "llm" / "profile.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(yaml.safe_load(path.read_text()), schema)
    profile = load_profile(name)
    assert profile.name == name
    assert host_class(profile.base_url) == "loopback"
    chain = profile.mode_chain()
    assert chain[0] == profile.structured_output and len(set(chain)) == len(chain)


@pytest.mark.parametrize(
    ("name", "url", "mode"),
    [
        ("llama-server", "http://127.0.0.1:8080/v1", "json_schema"),
        ("llama-cpp-python", "http://127.0.0.1:8000/v1", "json_object_schema"),
        ("vllm", "http://127.0.0.1:8000/v1", "json_schema"),
        ("ollama", "http://127.0.0.1:11434/v1", "ollama_format"),
        ("lmstudio", "http://127.0.0.1:1234/v1", "json_schema"),
    ],
)
def test_profile_defaults(name: str, url: str, mode: str) -> None:
    profile = load_profile(name)
    assert (profile.base_url, profile.structured_output) == (url, mode)


def test_profile_by_path_and_errors(tmp_path: Path) -> None:
    good = dict(yaml.safe_load((adapters_dir() / "profiles" / "vllm.yaml").read_text()), name="mine")
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(good))
    assert load_profile(tmp_path / "mine.yaml").name == "mine"
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(dict(good, structured_output="grammar")))
    with pytest.raises(LLMConfigError) as info:
        load_profile(tmp_path / "bad.yaml")
    assert info.value.code == "E121" and "structured_output" in str(info.value)
    with pytest.raises(LLMConfigError, match="unknown profile"):
        load_profile("no-such-server")


def test_example_config_loads() -> None:
    cfg = load_config(adapters_dir() / "config.example.yaml")
    assert cfg.profile.name == "llama-server" and cfg.allow_remote is False
    assert cfg.temperatures.for_operator("perturbation") == 0.7
    assert cfg.temperatures.for_operator("critique") == 0.0
    assert cfg.timeouts.read == 180 and cfg.retries == 2 and cfg.seed == 1234
    assert cfg.cache_path is not None and Path(cfg.cache_path).is_absolute()


def test_config_schema_accepts_example() -> None:
    schema = json.loads((schemas_dir() / "llm" / "config.json").read_text())
    jsonschema.validate(yaml.safe_load((adapters_dir() / "config.example.yaml").read_text()), schema)


def test_default_config() -> None:
    cfg = load_config(None)
    assert cfg.endpoint.base_url == "http://127.0.0.1:8080/v1" and cfg.retries == 2


def test_overrides_apply_to_endpoint(tmp_path: Path) -> None:
    path = tmp_path / "llm.yaml"
    path.write_text("profile: ollama\nbase_url: http://localhost:9999/v1\nmodel: tiny\ncache_path: null\n")
    cfg = load_config(path)
    assert cfg.endpoint.base_url == "http://localhost:9999/v1" and cfg.endpoint.model == "tiny"
    assert cfg.profile.base_url == "http://127.0.0.1:11434/v1"


def test_config_errors_name_the_field(tmp_path: Path) -> None:
    path = tmp_path / "llm.yaml"
    path.write_text("profile: vllm\nretries: -1\n")
    with pytest.raises(LLMConfigError) as info:
        load_config(path)
    assert "/retries" in str(info.value) and str(path) in str(info.value)
    path.write_text("profile: [unclosed\n")
    with pytest.raises(LLMConfigError, match="malformed YAML"):
        load_config(path)
    with pytest.raises(LLMConfigError, match="not found"):
        load_config(tmp_path / "absent.yaml")


def test_remote_endpoint_in_config_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "llm.yaml"
    path.write_text("profile: vllm\nbase_url: https://llm.example.org/v1\n")
    with pytest.raises(LLMRemoteEndpointError) as info:
        load_config(path)
    assert "example.org" not in str(info.value) and "host name" in str(info.value)
    path.write_text("profile: vllm\nbase_url: https://llm.example.org/v1\nallow_remote: true\n")
    assert load_config(path).allow_remote


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://127.0.0.1:8080/v1", "loopback"),
        ("http://127.9.8.7/v1", "loopback"),
        ("http://[::1]:8000/v1", "loopback"),
        ("http://[::ffff:127.0.0.1]:8000/v1", "loopback"),
        ("http://localhost:8000/v1", "loopback"),
        ("http://LOCALHOST.:8000/v1", "loopback"),
        ("http://0.0.0.0:8000/v1", "unspecified address"),
        ("http://192.168.1.20:8000/v1", "private-network address"),
        ("http://10.0.0.1/v1", "private-network address"),
        ("http://169.254.1.1/v1", "link-local address"),
        ("http://8.8.8.8/v1", "public address"),
        ("http://[2001:4860::8888]/v1", "public address"),
        ("http://localhost.evil.example/v1", "host name other than localhost"),
        ("http://127.0.0.1.nip.io/v1", "host name other than localhost"),
    ],
)
def test_host_class(url: str, kind: str) -> None:
    assert host_class(url) == kind


def test_non_http_scheme_is_refused() -> None:
    with pytest.raises(LLMConfigError, match="scheme"):
        ensure_allowed_endpoint("file:///etc/passwd", allow_remote=True)


@given(st.ip_addresses(v=4))
@example(__import__("ipaddress").IPv4Address("128.0.0.1"))
def test_only_127_slash_8_is_loopback_among_ipv4(addr: object) -> None:
    url = f"http://{addr}:8000/v1"
    assert (host_class(url) == "loopback") == str(addr).startswith("127.")


def test_api_key_comes_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANONPSY_LLM_API_KEY", raising=False)
    cfg = LLMConfig(profile="vllm")
    assert cfg.api_key() is None
    monkeypatch.setenv("ANONPSY_LLM_API_KEY", "sk-synthetic")
    assert cfg.api_key() == "sk-synthetic"
    assert "sk-synthetic" not in repr(cfg)


def test_unknown_operator_temperature() -> None:
    with pytest.raises(LLMConfigError, match="unknown operator"):
        LLMConfig(profile="vllm").temperatures.for_operator("summarise")


# -- resolve_config: configuration file, or the OpenAI conventions --------------------------------------------------


def test_without_a_file_the_openai_environment_is_read() -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9001/v1"}
    cfg = resolve_config(None, environ=env)
    assert (cfg.endpoint.name, cfg.endpoint.base_url, cfg.endpoint.api_key_env) == (
        "openai-compatible", "http://127.0.0.1:9001/v1", "OPENAI_API_KEY"
    )
    flagged = resolve_config(None, base_url="http://localhost:9002/v1", model="qwen", environ=env)
    assert (flagged.endpoint.base_url, flagged.endpoint.model) == ("http://localhost:9002/v1", "qwen")


def test_with_a_file_the_flags_override_it_and_the_environment_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "llm.yaml"
    path.write_text("profile: vllm\nmodel: served\ntimeouts: {read: 9}\n")
    env = {"OPENAI_BASE_URL": "https://api.example.org/v1"}  # would be refused if it were read
    cfg = resolve_config(path, environ=env)
    assert (cfg.endpoint.name, cfg.endpoint.base_url, cfg.endpoint.model) == (
        "vllm", "http://127.0.0.1:8000/v1", "served"
    )
    over = resolve_config(path, base_url="http://127.0.0.1:8123/v1", model="other", environ=env)
    assert (over.endpoint.base_url, over.endpoint.model, over.timeouts.read) == (
        "http://127.0.0.1:8123/v1", "other", 9
    )


def test_no_endpoint_at_all_is_one_clear_error() -> None:
    with pytest.raises(LLMConfigError) as info:
        resolve_config(None, environ={})
    assert info.value.code == "E121" and "--llm-url" in str(info.value) and "OPENAI_BASE_URL" in str(info.value)
    with pytest.raises(LLMConfigError, match="base_url"):
        resolve_config(None, base_url="not a url", environ={})


@given(st.sampled_from(["OPENAI_BASE_URL", "--llm-url"]), st.ip_addresses(v=4) | st.ip_addresses(v=6))
@example("OPENAI_BASE_URL", __import__("ipaddress").IPv4Address("10.0.0.1"))
def test_remote_endpoints_from_flags_or_environment_are_always_refused(source: str, addr: object) -> None:
    host = f"[{addr}]" if ":" in str(addr) else str(addr)
    url = f"http://{host}:8000/v1"
    env = {"OPENAI_BASE_URL": url} if source == "OPENAI_BASE_URL" else {}
    flag = url if source == "--llm-url" else None
    if host_class(url) == "loopback":
        assert resolve_config(None, base_url=flag, environ=env).endpoint.base_url == url
    else:
        with pytest.raises(LLMRemoteEndpointError):
            resolve_config(None, base_url=flag, environ=env)


def test_allow_remote_comes_only_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "llm.yaml"
    path.write_text("profile: vllm\nallow_remote: true\n")
    cfg = resolve_config(path, base_url="https://llm.example.org/v1", environ={})
    assert cfg.allow_remote and cfg.endpoint.base_url == "https://llm.example.org/v1"
