"""Server profiles and the user's language-model configuration.

A *profile* (``adapters/profiles/<name>.yaml``, validated by ``schemas/llm/profile.json``) says how to talk
to one kind of server. The *configuration* (format in ``adapters/config.example.yaml``) picks a profile, may
override its endpoint and model, and sets timeouts, retries, concurrency, the reply cache and per-operator
temperatures.

Endpoints must be loopback addresses (127.0.0.0/8, ::1, ``localhost``) unless ``allow_remote`` is true: case
text goes to that server. API keys come only from the environment variable named by ``api_key_env``.

Commands find their configuration with :func:`resolve_config`: a configuration file when one is given (``--llm-url``
and ``--llm-model`` override its endpoint and model), otherwise the OpenAI conventions — ``--llm-url`` or
``OPENAI_BASE_URL``, ``--llm-model``, the key in ``OPENAI_API_KEY`` — with the ``openai-compatible`` profile.
``allow_remote`` can only be set in a configuration file, so an inherited ``OPENAI_BASE_URL`` never sends case text
off the machine.
"""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import jsonschema
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from anonpsy.llm.errors import LLMConfigError, LLMRemoteEndpointError
from anonpsy.paths import adapters_dir, schemas_dir

StructuredOutput = Literal["json_schema", "json_object_schema", "ollama_format", "json_object", "none"]
Operator = Literal[
    "extraction", "perturbation", "generation", "baseline_rewrite", "critique", "masking", "judge"
]
OPERATORS: tuple[str, ...] = (
    "extraction",
    "perturbation",
    "generation",
    "baseline_rewrite",
    "critique",
    "masking",
    "judge",
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Profile(_Model):
    """How to reach one server and ask it for structured output."""

    name: str
    description: str = ""
    base_url: str
    native_base_url: str | None = None
    model: str
    structured_output: StructuredOutput
    fallback: tuple[StructuredOutput, ...] = ()
    context_size: int = Field(ge=256)
    max_tokens: int = Field(ge=1)
    api_key_env: str | None = None
    merge_system: bool = False

    def mode_chain(self) -> tuple[StructuredOutput, ...]:
        """The requested structured-output form followed by its fallbacks, without repeats."""
        chain: list[StructuredOutput] = [self.structured_output]
        chain.extend(m for m in self.fallback if m not in chain)
        return tuple(chain)


class Timeouts(_Model):
    """Seconds for each phase of an HTTP exchange (all four are always set)."""

    connect: float = Field(default=5.0, gt=0)
    read: float = Field(default=180.0, gt=0)
    write: float = Field(default=30.0, gt=0)
    pool: float = Field(default=10.0, gt=0)


class Temperatures(_Model):
    """Sampling temperature per operator."""

    extraction: float = Field(default=0.1, ge=0, le=2)
    perturbation: float = Field(default=0.7, ge=0, le=2)
    generation: float = Field(default=0.1, ge=0, le=2)
    baseline_rewrite: float = Field(default=0.2, ge=0, le=2)
    critique: float = Field(default=0.0, ge=0, le=2)
    masking: float = Field(default=0.0, ge=0, le=2)
    judge: float = Field(default=0.0, ge=0, le=2)

    def for_operator(self, operator: str) -> float:
        """Temperature for ``operator``; unknown operators are a configuration error."""
        if operator not in OPERATORS:
            raise LLMConfigError(f"unknown operator {operator!r}; expected one of {', '.join(OPERATORS)}")
        value: float = getattr(self, operator)
        return value


class LLMConfig(_Model):
    """Everything the client needs. ``profile`` accepts a profile name, a path or a :class:`Profile`.

    ``base_url``, ``native_base_url``, ``model``, ``max_tokens`` and ``api_key_env`` override the profile's
    values (see :attr:`endpoint`).
    """

    profile: Profile
    base_url: str | None = None
    native_base_url: str | None = None
    model: str | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    api_key_env: str | None = None
    allow_remote: bool = False
    timeouts: Timeouts = Timeouts()
    retries: int = Field(default=2, ge=0, le=10)
    backoff_base: float = Field(default=0.5, ge=0)
    backoff_cap: float = Field(default=8.0, ge=0)
    retry_after_cap: float = Field(default=30.0, ge=0)
    concurrency: int = Field(default=2, ge=1, le=64)
    cache_path: str | None = None
    temperatures: Temperatures = Temperatures()
    seed: int | None = None

    @field_validator("profile", mode="before")
    @classmethod
    def _resolve_profile(cls, value: Any) -> Any:
        if isinstance(value, str | Path):
            return load_profile(value)
        return value

    @model_validator(mode="after")
    def _check_endpoints(self) -> LLMConfig:
        ensure_allowed_endpoint(self.endpoint.base_url, allow_remote=self.allow_remote)
        if self.endpoint.native_base_url:
            ensure_allowed_endpoint(self.endpoint.native_base_url, allow_remote=self.allow_remote)
        return self

    @property
    def endpoint(self) -> Profile:
        """The profile with this configuration's overrides applied."""
        updates: dict[str, Any] = {
            key: getattr(self, key)
            for key in ("base_url", "native_base_url", "model", "max_tokens", "api_key_env")
            if getattr(self, key) is not None
        }
        return self.profile.model_copy(update=updates) if updates else self.profile

    def api_key(self) -> str | None:
        """The API key from the environment variable the profile names, or None."""
        env = self.endpoint.api_key_env
        if not env:
            return None
        value = os.environ.get(env)
        return value or None


def host_class(url: str) -> str:
    """Classify the host of ``url``: ``loopback`` or the kind of host it is (never the host itself)."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return "malformed URL"
    if not host:
        return "URL without a host"
    host = host.rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return "loopback"
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return "host name other than localhost"
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    if addr.is_loopback:
        return "loopback"
    if addr.is_unspecified:
        return "unspecified address"
    if addr.is_link_local:
        return "link-local address"
    if addr.is_private:
        return "private-network address"
    return "public address"


def ensure_allowed_endpoint(url: str, *, allow_remote: bool) -> None:
    """Raise :class:`LLMRemoteEndpointError` unless ``url`` is loopback or remote endpoints are allowed."""
    scheme = urlsplit(url).scheme
    if scheme not in ("http", "https"):
        raise LLMConfigError(f"endpoint scheme {scheme!r} is not supported; use http or https")
    kind = host_class(url)
    if kind != "loopback" and not allow_remote:
        raise LLMRemoteEndpointError(kind)


@lru_cache(maxsize=4)
def _schema(name: str) -> dict[str, Any]:
    path = schemas_dir() / "llm" / name
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _schema_problems(data: Any, schema_name: str) -> list[str]:
    validator = jsonschema.Draft202012Validator(_schema(schema_name))
    problems = []
    for err in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path)):
        path = "/" + "/".join(str(p) for p in err.absolute_path)
        problems.append(f"[{path}] {err.message}")
    return problems


def _pydantic_problems(exc: ValidationError) -> list[str]:
    return [f"[{' -> '.join(str(p) for p in e['loc'])}] {e['msg']}" for e in exc.errors()]


def _read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LLMConfigError("file not found", location=str(path)) from None
    except UnicodeDecodeError:
        raise LLMConfigError("file is not UTF-8", location=str(path)) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        loc = f"{path}:{line + 1}" if line is not None else str(path)
        raise LLMConfigError("malformed YAML", location=loc) from None


def profiles_dir() -> Path:
    """Directory holding the bundled server profiles."""
    return adapters_dir() / "profiles"


def available_profiles() -> list[str]:
    """Names of the bundled profiles."""
    return sorted(p.stem for p in profiles_dir().glob("*.yaml"))


def load_profile(name_or_path: str | Path) -> Profile:
    """Load a profile by bundled name (``llama-server``) or by path to a YAML file."""
    return _load_profile(str(name_or_path))


@lru_cache(maxsize=32)
def _load_profile(name_or_path: str) -> Profile:
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") or candidate.is_file():
        path = candidate
    else:
        path = profiles_dir() / f"{name_or_path}.yaml"
        if not path.is_file():
            raise LLMConfigError(
                f"unknown profile {name_or_path!r}; available: {', '.join(available_profiles())}"
            )
    data = _read_yaml(path)
    problems = _schema_problems(data, "profile.json")
    if problems:
        raise LLMConfigError("; ".join(problems), location=str(path))
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        raise LLMConfigError("; ".join(_pydantic_problems(exc)), location=str(path)) from None


def load_config(path: str | Path | None = None) -> LLMConfig:
    """Load the user configuration file; ``None`` gives the defaults (profile ``llama-server``).

    A relative ``cache_path`` is resolved against the configuration file's directory.
    """
    if path is None:
        return LLMConfig(profile="llama-server")
    cfg_path = Path(path)
    data = _read_yaml(cfg_path)
    if data is None:
        data = {}
    problems = _schema_problems(data, "config.json")
    if problems:
        raise LLMConfigError("; ".join(problems), location=str(cfg_path))
    data = dict(data)
    data.setdefault("profile", "llama-server")
    profile_ref = str(data["profile"])
    if profile_ref.endswith((".yaml", ".yml")) and not Path(profile_ref).is_absolute():
        data["profile"] = str(cfg_path.parent / profile_ref)
    cache_path = data.get("cache_path")
    if isinstance(cache_path, str) and cache_path != ":memory:" and not Path(cache_path).is_absolute():
        data["cache_path"] = str(cfg_path.parent / cache_path)
    try:
        return LLMConfig.model_validate(data)
    except ValidationError as exc:
        raise LLMConfigError("; ".join(_pydantic_problems(exc)), location=str(cfg_path)) from None


#: Profile used when no configuration file is given (``--llm-url`` / ``OPENAI_BASE_URL``).
ENV_PROFILE = "openai-compatible"


def resolve_config(
    path: str | Path | None,
    *,
    base_url: str | None = None,
    model: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> LLMConfig:
    """The configuration of a command run.

    With a configuration file, ``base_url`` / ``model`` (``--llm-url`` / ``--llm-model``) override its endpoint and
    model and the environment is not read. Without one, the endpoint is ``base_url`` or ``OPENAI_BASE_URL``, the
    model ``model`` (else the profile's placeholder name), and the key ``OPENAI_API_KEY``; the loopback rule applies
    either way. Raises :class:`LLMConfigError` when no endpoint is given at all.
    """
    env = os.environ if environ is None else environ
    if path is not None:
        cfg = load_config(path)
        updates = {k: v.strip() for k, v in (("base_url", base_url), ("model", model)) if v}
        if not updates:
            return cfg
        problems = _schema_problems(updates, "config.json")
        if problems:
            raise LLMConfigError("; ".join(problems), location="--llm-url" if "base_url" in updates else "--llm-model")
        try:
            return LLMConfig.model_validate({**cfg.model_dump(exclude={"profile"}), "profile": cfg.profile, **updates})
        except ValidationError as exc:
            raise LLMConfigError("; ".join(_pydantic_problems(exc)), location="--llm-url") from None
    url = base_url or env.get("OPENAI_BASE_URL") or None
    if url is None:
        raise LLMConfigError(
            "no language-model server given: pass --llm-config PATH (see adapters/config.example.yaml), "
            "--llm-url URL, or set OPENAI_BASE_URL",
            location="--llm-url",
        )
    data: dict[str, Any] = {"profile": ENV_PROFILE, "base_url": url.strip()}
    if model:
        data["model"] = model
    problems = _schema_problems({k: v for k, v in data.items() if k != "profile"}, "config.json")
    if problems:
        raise LLMConfigError("; ".join(problems), location="--llm-url" if base_url else "OPENAI_BASE_URL")
    try:
        return LLMConfig.model_validate(data)
    except ValidationError as exc:
        raise LLMConfigError(
            "; ".join(_pydantic_problems(exc)), location="--llm-url" if base_url else "OPENAI_BASE_URL"
        ) from None
