"""The one module that talks HTTP to a language-model server (OpenAI-compatible chat completions).

:class:`TranscriptionClient` (at the end) speaks the same protocol's ``/audio/transcriptions`` endpoint for
speech-recognition servers, under the same endpoint, timeout and retry rules.

:class:`LLMClient` (threads) and :class:`AsyncLLMClient` (asyncio) share one request/validation state
machine (:meth:`_Core._call`, a generator that yields "send this request" / "sleep this long" steps); the
two classes only differ in how they perform those steps.

Behaviour:

* explicit ``httpx.Timeout(connect, read, write, pool)``; proxies from the environment are ignored
  (``trust_env=False``) so case text cannot be routed off the machine by an inherited ``HTTP_PROXY``;
* at most ``retries`` extra attempts (default 2) per ask on transient faults — 408, 409, 429, 5xx,
  connection errors / timeouts, and replies that are empty or not JSON at all — with exponential backoff and
  full jitter capped at ``backoff_cap``, honouring ``Retry-After`` (seconds or HTTP date, capped at
  ``retry_after_cap``) and ``retry-after-ms``; a transient reply fault is asked again unchanged (with the next
  seed, so a seeded sampler does not repeat itself) before the re-ask is spent;
* structured output requested in the profile's form; when the server rejects that form (HTTP 400/422, or 500
  naming ``response_format``) the next form of the profile's ``fallback`` chain is used from then on;
* the reply is parsed as JSON (```` ```json ```` fences stripped), validated against the template's JSON
  Schema, then by a pydantic model if given; on a schema failure (or a transient reply fault that outlived its
  retries) the client re-asks ONCE, appending its reply and the list of problems; a second failure raises
  :class:`LLMReplyError` with ``attempts=2``;
* a system-message marker ``[template:<id>@v<N>]`` names the template for servers and logs;
* logs carry only template id, attempt, mode, HTTP status, latency and token counts — never prompt or reply
  text.

Error mapping (all subclasses of :class:`anonpsy.llm.errors.LLMError`)::

    httpx.TimeoutException / httpx.TransportError  -> LLMConnectionError  (after retries)
    HTTP 408/409/429/5xx                           -> LLMHTTPError(status) (after retries)
    other HTTP 4xx, malformed response envelope    -> LLMHTTPError(status)
    unparsable / invalid reply after retries and one re-ask -> LLMReplyError(template_id, attempts, errors)
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import os
import random
import re
import threading
import time
from collections.abc import Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from types import TracebackType
from typing import Any, TypeVar, overload

import httpx
import jsonschema
from pydantic import BaseModel, ValidationError

from anonpsy.errors import A103_TRANSCRIPTION, AnonpsyError
from anonpsy.llm.cache import MISS, ResponseCache, cache_key, canonical_json, sha256_text
from anonpsy.llm.config import LLMConfig, StructuredOutput, Timeouts, ensure_allowed_endpoint
from anonpsy.llm.errors import LLMConnectionError, LLMError, LLMHTTPError, LLMReplyError, LLMTemplateError
from anonpsy.llm.metrics import CallRecord, Metrics
from anonpsy.llm.prompts import PromptTemplate
from anonpsy.llm.schema_fast import Check, compile_check

log = logging.getLogger("anonpsy.llm")

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 429})
MAX_REASKS = 1
_FENCE_RE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\n?(.*?)\n?[ \t]*```$", re.DOTALL)


def template_marker(template: PromptTemplate) -> str:
    """The marker the client puts on the first line of the system message."""
    return f"[template:{template.id}@v{template.version}]"


# ---------------------------------------------------------------------------------------- pure helpers


def parse_retry_after(headers: dict[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP date); None if absent."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms) / 1000.0
        except ValueError:
            value = -1.0
        if value >= 0:
            return value
    raw = headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return max(0.0, seconds)


def backoff_delay(retry: int, *, base: float, cap: float, rng: random.Random) -> float:
    """Full-jitter backoff for the ``retry``-th retry (1-based): uniform in [0, min(cap, base·2^(n-1))]."""
    return rng.uniform(0.0, min(cap, base * (2 ** (retry - 1))))


def strip_fences(content: str) -> str:
    """Remove surrounding whitespace and one pair of Markdown code fences (```json … ```)."""
    text = content.strip()
    m = _FENCE_RE.match(text)
    return m.group(1).strip() if m else text


def _json_path(parts: Any) -> str:
    return "/" + "/".join(str(p) for p in parts)


def _schema_names(schema: Any, names: set[str] | None = None) -> set[str]:
    """Every property name declared anywhere in a JSON Schema."""
    found = set() if names is None else names
    if isinstance(schema, dict):
        props = schema.get("properties")
        if isinstance(props, dict):
            found.update(str(k) for k in props)
        for value in schema.values():
            _schema_names(value, found)
    elif isinstance(schema, list):
        for item in schema:
            _schema_names(item, found)
    return found


@lru_cache(maxsize=128)
def _model_names(model_cls: type[BaseModel]) -> frozenset[str]:
    names = _schema_names(model_cls.model_json_schema(mode="validation"))
    return frozenset(names | set(model_cls.model_fields))


def _safe_path(parts: Any, known: set[str]) -> str:
    """A JSON path keeping array indices and schema-declared names; other keys become ``*``."""
    return "/" + "/".join(
        str(p) if isinstance(p, int) or (isinstance(p, str) and p in known) else "*" for p in parts
    )


def _safe_schema_problem(err: jsonschema.ValidationError, known: set[str]) -> str:
    """A problem description built from the schema only (the reply's values and keys never appear)."""
    path = _safe_path(err.absolute_path, known)
    kw = str(err.validator)
    value = err.validator_value
    if kw == "required" and isinstance(err.instance, dict) and isinstance(value, list):
        # One error per missing property; its name (from the schema) is the one the message quotes.
        missing = [str(k) for k in value if k not in err.instance and err.message.startswith(repr(k))]
        if not missing:
            missing = [str(k) for k in value if k not in err.instance]
        return f"{path}: missing required {', '.join(missing)}"
    if kw == "type":
        return f"{path}: expected type {value}"
    if kw in ("enum", "const"):
        return f"{path}: not one of the allowed values"
    if kw == "additionalProperties":
        return f"{path}: properties not in the schema"
    if kw in (
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "multipleOf",
    ):
        return f"{path}: violates {kw} {value}"
    return f"{path}: violates {kw}"


@dataclass(frozen=True)
class _SchemaInfo:
    """What a client derives from one reply schema, once: its validator, declared names, prompt text and hash."""

    validator: jsonschema.Draft202012Validator
    fast: Check | None  # the yes/no check of schema_fast; None where the schema is beyond it
    names: frozenset[str]
    prompt_text: str
    sha256: str


_SCHEMA_INFO: dict[int, tuple[dict[str, Any], _SchemaInfo]] = {}
_SCHEMA_INFO_MAX = 256
_SCHEMA_LOCK = threading.Lock()


def _schema_info(schema: dict[str, Any]) -> _SchemaInfo:
    """The derived data of ``schema``, computed once per schema object.

    Reply schemas are loaded once with their template and never modified, so the object's identity is the key;
    the cache holds the schema itself so that an identity cannot be reused by another object while cached.
    """
    hit = _SCHEMA_INFO.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    info = _SchemaInfo(
        validator=jsonschema.Draft202012Validator(schema),
        fast=compile_check(schema),
        names=frozenset(_schema_names(schema)),
        prompt_text=json.dumps(schema, ensure_ascii=False, indent=1, sort_keys=True),
        sha256=sha256_text(canonical_json(schema)),
    )
    with _SCHEMA_LOCK:
        if len(_SCHEMA_INFO) >= _SCHEMA_INFO_MAX:  # schemas built per call (from a model class) are not all kept
            _SCHEMA_INFO.pop(next(iter(_SCHEMA_INFO)), None)
        _SCHEMA_INFO[id(schema)] = (schema, info)
    return info


@dataclass(frozen=True)
class Problem:
    """One reason a reply was rejected: ``safe`` for errors and logs, ``detail`` only for the re-ask.

    ``transient``: the reply is empty or not JSON at all — a glitch worth asking again unchanged, not a
    misunderstanding of the schema worth explaining in a re-ask.
    """

    safe: str
    detail: str
    transient: bool = False


def check_reply(
    content: str, schema: dict[str, Any] | None, model_cls: type[BaseModel] | None
) -> tuple[Any, list[Problem]]:
    """Parse and validate a JSON reply. Returns ``(value, [])`` or ``(None, problems)``."""
    info = _schema_info(schema) if schema is not None else None

    def known() -> set[str]:  # the names a problem may quote; only needed when there is one
        return set(info.names if info is not None else ()) | (
            _model_names(model_cls) if model_cls is not None else set()
        )

    text = strip_fences(content)
    if not text:
        return None, [Problem("/: reply is empty", "The reply was empty; answer with one JSON value.", True)]
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}: {exc.msg}"
        return None, [Problem(f"/: not valid JSON ({where})", f"The reply is not valid JSON ({where}).", True)]
    if info is not None and (info.fast is None or not info.fast(value)):
        # Valid replies (nearly all) pass the fast check; jsonschema describes the problems of the others.
        errors = sorted(
            info.validator.iter_errors(value), key=lambda e: (list(map(str, e.absolute_path)), e.message)
        )
        if errors:
            names = known()
            return None, [
                Problem(_safe_schema_problem(e, names), f"{_json_path(e.absolute_path)}: {e.message}")
                for e in errors
            ]
    if model_cls is not None:
        try:
            model_cls.model_validate(value)
        except ValidationError as exc:
            names = known()
            return None, [
                Problem(f"{_safe_path(e['loc'], names)}: {e['type']}", f"{_json_path(e['loc'])}: {e['msg']}")
                for e in exc.errors()
            ]
    return value, []


def _truncated(problem: Problem) -> Problem:
    return Problem(
        f"{problem.safe} (reply cut at max_tokens)",
        f"{problem.detail} Your reply was cut off at the token limit: answer more briefly.",
        False,
    )


def reask_message(problems: list[Problem]) -> str:
    """The user message of the single re-ask."""
    lines = "\n".join(f"- {p.detail}" for p in problems[:20])
    return (
        "Your previous reply could not be used. Problems found:\n"
        f"{lines}\n"
        "Reply again with only the corrected JSON, matching the required schema exactly, with no other text."
    )


def _format_rejected(status: int, body: bytes) -> bool:
    text = body[:4000].decode("utf-8", errors="replace").lower()
    if status in (400, 422):
        return any(k in text for k in ("response_format", "json_schema", "json_object", "format"))
    return status == 500 and "response_format" in text


def _transport_kind(exc: httpx.TransportError) -> str:
    names = {
        httpx.ConnectTimeout: "connect timeout",
        httpx.ReadTimeout: "read timeout",
        httpx.WriteTimeout: "write timeout",
        httpx.PoolTimeout: "pool timeout",
        httpx.ConnectError: "connection refused or unreachable",
        httpx.RemoteProtocolError: "protocol error",
        httpx.ReadError: "read error",
        httpx.WriteError: "write error",
    }
    for cls, name in names.items():
        if isinstance(exc, cls):
            return name
    return "transport error"


# ----------------------------------------------------------------------------------- the state machine


@dataclass(frozen=True)
class _Post:
    url: str
    body: dict[str, Any]
    native: bool


@dataclass(frozen=True)
class _Sleep:
    seconds: float


@dataclass(frozen=True)
class _Response:
    status: int | None
    headers: dict[str, str]
    content: bytes
    error: str | None
    latency_s: float


@dataclass
class _Budget:
    """Retries left to one ask, shared by HTTP faults and transient reply faults."""

    limit: int
    used: int = 0
    requests: int = 0  # requests sent for this ask, whatever their outcome

    def take(self) -> bool:
        """Use one retry; False when none is left."""
        if self.used >= self.limit:
            return False
        self.used += 1
        return True


@dataclass
class _Stats:
    requests: int = 0
    retries: int = 0
    reasks: int = 0
    fallbacks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0


_Step = Generator[_Post | _Sleep, _Response | None, T]


@dataclass
class _Reply:
    content: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    truncated: bool = False  # the server stopped at max_tokens (finish_reason / done_reason "length")


class _Core:
    """Shared configuration, request building, retry policy and validation of both clients."""

    def __init__(self, config: LLMConfig, *, cache: ResponseCache | None, metrics: Metrics | None) -> None:
        self.config = config
        self.profile = config.endpoint
        ensure_allowed_endpoint(self.profile.base_url, allow_remote=config.allow_remote)
        if self.profile.native_base_url:
            ensure_allowed_endpoint(self.profile.native_base_url, allow_remote=config.allow_remote)
        self._chain: tuple[StructuredOutput, ...] = self.profile.mode_chain()
        self._mode_index = 0
        self._mode_lock = threading.Lock()
        self._rng = random.Random(config.seed)
        self._rng_lock = threading.Lock()
        self._owns_cache = cache is None and config.cache_path is not None
        self.cache: ResponseCache | None = cache
        if self._owns_cache and config.cache_path is not None:
            self.cache = ResponseCache(config.cache_path)
        self.metrics = metrics if metrics is not None else Metrics()
        self._timeout = httpx.Timeout(
            connect=config.timeouts.connect,
            read=config.timeouts.read,
            write=config.timeouts.write,
            pool=config.timeouts.pool,
        )
        self._limits = httpx.Limits(
            max_connections=config.concurrency, max_keepalive_connections=config.concurrency
        )
        headers = {"Accept": "application/json"}
        key = config.api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._headers = headers

    @property
    def structured_output(self) -> StructuredOutput:
        """The structured-output form currently used (after any fallback)."""
        return self._chain[self._mode_index]

    # -- request building ----------------------------------------------------------------------------------

    def _messages(
        self, template: PromptTemplate, variables: dict[str, Any], schema: dict[str, Any] | None
    ) -> list[dict[str, str]]:
        values = dict(variables)
        if "schema" in template.placeholders and "schema" not in values and schema is not None:
            values["schema"] = _schema_info(schema).prompt_text
        messages = template.render(**values)
        marker = template_marker(template)
        if messages and messages[0]["role"] == "system":
            system = f"{marker}\n{messages[0]['content']}"
            messages = messages[1:]
        else:
            system = marker
        if self.profile.merge_system:
            user = messages[0]
            return [{"role": "user", "content": f"{system}\n\n{user['content']}"}, *messages[1:]]
        return [{"role": "system", "content": system}, *messages]

    def _build(
        self,
        mode: StructuredOutput,
        messages: list[dict[str, str]],
        template: PromptTemplate,
        temperature: float,
        seed: int | None,
        schema: dict[str, Any] | None,
    ) -> _Post:
        max_tokens = self.profile.max_tokens
        if mode == "ollama_format" and self.profile.native_base_url:
            options: dict[str, Any] = {
                "temperature": temperature,
                "num_predict": max_tokens,
                "num_ctx": self.profile.context_size,
            }
            if seed is not None:
                options["seed"] = seed
            body_native: dict[str, Any] = {
                "model": self.profile.model,
                "messages": messages,
                "stream": False,
                "options": options,
            }
            if schema is not None:
                body_native["format"] = schema
            return _Post(self.profile.native_base_url.rstrip("/") + "/chat", body_native, native=True)
        body: dict[str, Any] = {
            "model": self.profile.model,
            "messages": messages,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "stream": False,
        }
        if seed is not None:
            body["seed"] = seed
        if schema is not None:
            if mode == "json_schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": template.id.replace("-", "_")[:64],
                        "schema": schema,
                        "strict": True,
                    },
                }
            elif mode == "json_object_schema":
                body["response_format"] = {"type": "json_object", "schema": schema}
            elif mode == "json_object":
                body["response_format"] = {"type": "json_object"}
            elif mode == "ollama_format":
                body["format"] = schema
        return _Post(self.profile.base_url.rstrip("/") + "/chat/completions", body, native=False)

    def _retry_delay(self, retry: int, headers: dict[str, str] | None) -> float:
        if headers:
            after = parse_retry_after(headers)
            if after is not None:
                return min(after, self.config.retry_after_cap)
        with self._rng_lock:
            return backoff_delay(
                retry, base=self.config.backoff_base, cap=self.config.backoff_cap, rng=self._rng
            )

    def _advance_mode(self, used: int) -> bool:
        with self._mode_lock:
            if self._mode_index != used:
                return True  # another request already moved on
            if self._mode_index + 1 >= len(self._chain):
                return False
            self._mode_index += 1
            return True

    @staticmethod
    def _parse_envelope(resp: _Response, native: bool, template_id: str, attempts: int) -> _Reply:
        status = resp.status or 0
        try:
            payload = json.loads(resp.content)
            if native:
                content = payload["message"].get("content")
                usage = {
                    "prompt_tokens": payload.get("prompt_eval_count", 0),
                    "completion_tokens": payload.get("eval_count", 0),
                }
                finish = payload.get("done_reason")
            else:
                content = payload["choices"][0]["message"].get("content")
                usage = payload.get("usage") or {}
                finish = payload["choices"][0].get("finish_reason")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise LLMHTTPError(
                status, template_id=template_id, attempts=attempts, reason="response is not a chat completion"
            ) from None
        if content is not None and not isinstance(content, str):
            raise LLMHTTPError(
                status, template_id=template_id, attempts=attempts, reason="reply content is not text"
            )

        def _int(v: Any) -> int:
            return int(v) if isinstance(v, int | float) else 0

        return _Reply(
            content or "",
            _int(usage.get("prompt_tokens")),
            _int(usage.get("completion_tokens")),
            truncated=finish == "length",
        )

    # -- the state machine ---------------------------------------------------------------------------------

    def _exchange(
        self,
        messages: list[dict[str, str]],
        template: PromptTemplate,
        temperature: float,
        seed: int | None,
        schema: dict[str, Any] | None,
        stats: _Stats,
        budget: _Budget,
    ) -> _Step[_Reply]:
        """One logical request: retries on retryable failures, format fallback. Returns the reply text.

        Errors report as ``attempts`` every request of the ask so far (``budget.requests``), transient reply
        faults included.
        """
        while True:
            used = self._mode_index
            mode: StructuredOutput = self._chain[used] if schema is not None else "none"
            post = self._build(mode, messages, template, temperature, seed, schema)
            budget.requests += 1
            attempts = budget.requests
            stats.requests += 1
            resp = yield post
            assert resp is not None
            stats.latency_s += resp.latency_s
            log.info(
                "llm request template=%s attempt=%d mode=%s status=%s latency_ms=%.0f",
                template.ref,
                attempts,
                mode,
                resp.status if resp.error is None else resp.error,
                resp.latency_s * 1000,
            )
            if resp.error is not None:
                if not budget.take():
                    raise LLMConnectionError(resp.error, template_id=template.id, attempts=attempts)
                stats.retries += 1
                yield _Sleep(self._retry_delay(budget.used, None))
                continue
            status = resp.status or 0
            if (
                schema is not None
                and mode != "none"
                and _format_rejected(status, resp.content)
                and self._advance_mode(used)
            ):
                stats.fallbacks += 1
                log.warning(
                    "llm server rejected structured output form %s; now using %s",
                    mode,
                    self.structured_output,
                )
                continue
            if status in RETRYABLE_STATUS or status >= 500:
                if not budget.take():
                    raise LLMHTTPError(status, template_id=template.id, attempts=attempts)
                stats.retries += 1
                yield _Sleep(self._retry_delay(budget.used, resp.headers))
                continue
            if status >= 400 or status < 200:
                raise LLMHTTPError(status, template_id=template.id, attempts=attempts)
            reply = self._parse_envelope(resp, post.native, template.id, attempts)
            stats.prompt_tokens += reply.prompt_tokens
            stats.completion_tokens += reply.completion_tokens
            log.info(
                "llm reply template=%s attempt=%d prompt_tokens=%d completion_tokens=%d",
                template.ref,
                attempts,
                reply.prompt_tokens,
                reply.completion_tokens,
            )
            return reply

    def _call(
        self,
        template: PromptTemplate,
        variables: dict[str, Any],
        *,
        operator: str,
        model_cls: type[BaseModel] | None,
        seed: int | None,
        case_id: str | None,
        want_json: bool,
    ) -> _Step[Any]:
        temperature = self.config.temperatures.for_operator(operator)
        schema: dict[str, Any] | None = None
        if want_json:
            schema = template.reply_schema
            if schema is None and model_cls is not None:
                schema = model_cls.model_json_schema()
            if schema is None:
                raise LLMTemplateError(
                    f"template {template.ref} has no reply_schema and no model was given",
                    template_id=template.id,
                )
        seed = seed if seed is not None else self.config.seed
        messages = self._messages(template, variables, schema)
        stats = _Stats()
        started = time.perf_counter()

        def record(*, hit: bool, ok: bool) -> None:
            self.metrics.record(
                CallRecord(
                    template_id=template.id,
                    template_version=template.version,
                    operator=operator,
                    case_id=case_id,
                    cache_hit=hit,
                    requests=stats.requests,
                    retries=stats.retries,
                    reasks=stats.reasks,
                    fallbacks=stats.fallbacks,
                    prompt_tokens=stats.prompt_tokens,
                    completion_tokens=stats.completion_tokens,
                    latency_s=time.perf_counter() - started if not hit else 0.0,
                    ok=ok,
                )
            )

        key = ""
        if self.cache is not None:  # the key hashes the whole conversation: only worth it with a cache
            key = cache_key(
                model=self.profile.model,
                template_id=template.id,
                template_version=template.version,
                messages=messages,
                params={
                    "temperature": temperature,
                    "max_tokens": self.profile.max_tokens,
                    "response_format": list(self._chain) if want_json else "text",
                    "schema_sha256": _schema_info(schema).sha256 if schema is not None else None,
                },
                seed=seed,
            )
            cached = self.cache.get(key)
            if cached is not MISS:
                log.info("llm cache hit template=%s", template.ref)
                record(hit=True, ok=True)
                return model_cls.model_validate(cached) if model_cls is not None and want_json else cached

        conversation = list(messages)
        problems: list[Problem] = []
        asks = 0
        try:
            while True:
                asks += 1
                budget = _Budget(self.config.retries)
                ask_seed = seed
                while True:
                    reply = yield from self._exchange(
                        conversation, template, temperature, ask_seed, schema, stats, budget
                    )
                    if want_json:
                        value, problems = check_reply(reply.content, schema, model_cls)
                        if problems and reply.truncated:
                            # Cut at max_tokens: asking again unchanged would be cut the same way.
                            problems = [_truncated(p) for p in problems]
                    else:
                        value = reply.content
                        problems = (
                            []
                            if reply.content.strip()
                            else [Problem("/: reply is empty", "The reply was empty; answer the request.", True)]
                        )
                    if not problems or not all(p.transient for p in problems) or not budget.take():
                        break
                    stats.retries += 1
                    log.warning(
                        "llm reply unusable template=%s ask=%d retry=%d problems=%s",
                        template.ref,
                        asks,
                        budget.used,
                        [p.safe for p in problems[:3]],
                    )
                    ask_seed = None if seed is None else seed + budget.used
                    yield _Sleep(self._retry_delay(budget.used, None))
                if not problems:
                    if self.cache is not None:
                        self.cache.put(
                            key,
                            value,
                            template_id=template.id,
                            template_version=template.version,
                            model=self.profile.model,
                        )
                    record(hit=False, ok=True)
                    return model_cls.model_validate(value) if model_cls is not None and want_json else value
                log.warning(
                    "llm reply rejected template=%s ask=%d problems=%s",
                    template.ref,
                    asks,
                    [p.safe for p in problems[:10]],
                )
                if asks > MAX_REASKS:
                    raise LLMReplyError(template.id, asks, [p.safe for p in problems])
                stats.reasks += 1
                conversation = [
                    *conversation,
                    {"role": "assistant", "content": reply.content},
                    {"role": "user", "content": reask_message(problems)},
                ]
        except LLMError:
            record(hit=False, ok=False)
            raise


# ----------------------------------------------------------------------------------------- sync client


class LLMClient(_Core):
    """Blocking client; safe to share between threads (a semaphore bounds simultaneous requests)."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        cache: ResponseCache | None = None,
        metrics: Metrics | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(config, cache=cache, metrics=metrics)
        self._slots = threading.BoundedSemaphore(config.concurrency)
        self._http = httpx.Client(
            timeout=self._timeout,
            limits=self._limits,
            headers=self._headers,
            transport=transport,
            trust_env=False,
            follow_redirects=False,
        )
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def executor(self) -> ThreadPoolExecutor:
        """Threads (``concurrency`` of them, started once and shared by every caller) for asks sent together.

        A caller that sends independent asks at once submits them here rather than starting threads of its
        own each time; the tasks must not wait on other tasks of this executor.
        """
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=self.config.concurrency, thread_name_prefix="llm-step"
                )
            return self._pool

    def _send(self, post: _Post) -> _Response:
        with self._slots:
            started = time.perf_counter()
            try:
                r = self._http.post(post.url, json=post.body)
            except httpx.TransportError as exc:
                return _Response(None, {}, b"", _transport_kind(exc), time.perf_counter() - started)
            return _Response(
                r.status_code,
                {k.lower(): v for k, v in r.headers.items()},
                r.content,
                None,
                time.perf_counter() - started,
            )

    def _drive(self, steps: _Step[T]) -> T:
        try:
            step = next(steps)
            while True:
                if isinstance(step, _Sleep):
                    time.sleep(step.seconds)
                    step = steps.send(None)
                else:
                    step = steps.send(self._send(step))
        except StopIteration as stop:
            result: T = stop.value
            return result

    @overload
    def complete_json(
        self,
        template: PromptTemplate,
        variables: dict[str, Any],
        *,
        operator: str,
        model_cls: type[M],
        seed: int | None = None,
        case_id: str | None = None,
    ) -> M: ...

    @overload
    def complete_json(
        self,
        template: PromptTemplate,
        variables: dict[str, Any],
        *,
        operator: str,
        model_cls: None = None,
        seed: int | None = None,
        case_id: str | None = None,
    ) -> Any: ...

    def complete_json(
        self,
        template: PromptTemplate,
        variables: dict[str, Any],
        *,
        operator: str,
        model_cls: type[BaseModel] | None = None,
        seed: int | None = None,
        case_id: str | None = None,
    ) -> Any:
        """Render ``template`` with ``variables``, ask for JSON, validate and return it (or a ``model_cls``).

        If the template has a ``{{ schema }}`` placeholder and no ``schema`` variable is given, the reply
        schema is filled in. Raises :class:`LLMReplyError`, :class:`LLMHTTPError` or
        :class:`LLMConnectionError`.
        """
        return self._drive(
            self._call(
                template,
                variables,
                operator=operator,
                model_cls=model_cls,
                seed=seed,
                case_id=case_id,
                want_json=True,
            )
        )

    def complete_text(
        self,
        template: PromptTemplate,
        variables: dict[str, Any],
        *,
        operator: str,
        seed: int | None = None,
        case_id: str | None = None,
    ) -> str:
        """Render ``template`` and return the free-text reply (non-empty; one re-ask if empty)."""
        result: str = self._drive(
            self._call(
                template,
                variables,
                operator=operator,
                model_cls=None,
                seed=seed,
                case_id=case_id,
                want_json=False,
            )
        )
        return result

    def list_models(self) -> list[str]:
        """Model ids the server lists (``GET <base_url>/models``); one attempt, no retries.

        Raises :class:`LLMConnectionError` when the server cannot be reached and :class:`LLMHTTPError` when it
        answers with an error status or not with an OpenAI model list.
        """
        url = self.profile.base_url.rstrip("/") + "/models"
        with self._slots:
            try:
                r = self._http.get(url)
            except httpx.TransportError as exc:
                raise LLMConnectionError(_transport_kind(exc), template_id=None, attempts=1) from None
        if r.status_code != 200:
            raise LLMHTTPError(r.status_code, template_id=None, attempts=1, reason="listing the models")
        try:
            data = r.json()["data"]
            return [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m]
        except (ValueError, KeyError, TypeError):
            raise LLMHTTPError(
                200, template_id=None, attempts=1, reason="the model list is not an OpenAI list"
            ) from None

    def close(self) -> None:
        """Close the HTTP connection pool and the cache if this client opened it."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)
        self._http.close()
        if self._owns_cache and self.cache is not None:
            self.cache.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


# ---------------------------------------------------------------------------------------- async client


class AsyncLLMClient(_Core):
    """asyncio client; at most ``concurrency`` requests are in flight at once (``asyncio.Semaphore``)."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        cache: ResponseCache | None = None,
        metrics: Metrics | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(config, cache=cache, metrics=metrics)
        self._slots = asyncio.Semaphore(config.concurrency)
        self._http = httpx.AsyncClient(
            timeout=self._timeout,
            limits=self._limits,
            headers=self._headers,
            transport=transport,
            trust_env=False,
            follow_redirects=False,
        )

    async def _send(self, post: _Post) -> _Response:
        async with self._slots:
            started = time.perf_counter()
            try:
                r = await self._http.post(post.url, json=post.body)
            except httpx.TransportError as exc:
                return _Response(None, {}, b"", _transport_kind(exc), time.perf_counter() - started)
            return _Response(
                r.status_code,
                {k.lower(): v for k, v in r.headers.items()},
                r.content,
                None,
                time.perf_counter() - started,
            )

    async def _drive(self, steps: _Step[T]) -> T:
        try:
            step = next(steps)
            while True:
                if isinstance(step, _Sleep):
                    await asyncio.sleep(step.seconds)
                    step = steps.send(None)
                else:
                    step = steps.send(await self._send(step))
        except StopIteration as stop:
            result: T = stop.value
            return result

    @overload
    async def complete_json(
        self,
        template: PromptTemplate,
        variables: dict[str, Any],
        *,
        operator: str,
        model_cls: type[M],
        seed: int | None = None,
        case_id: str | None = None,
    ) -> M: ...

    @overload
    async def complete_json(
        self,
        template: PromptTemplate,
        variables: dict[str, Any],
        *,
        operator: str,
        model_cls: None = None,
        seed: int | None = None,
        case_id: str | None = None,
    ) -> Any: ...

    async def complete_json(
        self,
        template: PromptTemplate,
        variables: dict[str, Any],
        *,
        operator: str,
        model_cls: type[BaseModel] | None = None,
        seed: int | None = None,
        case_id: str | None = None,
    ) -> Any:
        """Async :meth:`LLMClient.complete_json`."""
        return await self._drive(
            self._call(
                template,
                variables,
                operator=operator,
                model_cls=model_cls,
                seed=seed,
                case_id=case_id,
                want_json=True,
            )
        )

    async def complete_text(
        self,
        template: PromptTemplate,
        variables: dict[str, Any],
        *,
        operator: str,
        seed: int | None = None,
        case_id: str | None = None,
    ) -> str:
        """Async :meth:`LLMClient.complete_text`."""
        result: str = await self._drive(
            self._call(
                template,
                variables,
                operator=operator,
                model_cls=None,
                seed=seed,
                case_id=case_id,
                want_json=False,
            )
        )
        return result

    async def aclose(self) -> None:
        """Close the HTTP connection pool and the cache if this client opened it."""
        await self._http.aclose()
        if self._owns_cache and self.cache is not None:
            self.cache.close()

    async def __aenter__(self) -> AsyncLLMClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


# -------------------------------------------------------------------------------- transcription client


class TranscriptionClient:
    """Blocking client of an OpenAI-compatible ``POST <base_url>/audio/transcriptions`` endpoint.

    For speech-recognition servers that speak the OpenAI audio API (whisper.cpp's server, faster-whisper
    servers): the recording goes up as ``multipart/form-data`` with ``response_format=verbose_json`` and
    ``timestamp_granularities[]=word``; the reply must be a JSON object (its words are checked by the
    caller, :mod:`anonpsy.audio.asr`). The same rules as :class:`LLMClient` apply: the endpoint must be on
    this machine unless ``allow_remote``; split timeouts; proxies from the environment ignored; at most
    ``retries`` extra attempts on 408, 409, 429, 5xx and connection failures, with full-jitter backoff that
    honours ``Retry-After``. Logs carry the status, the attempt and the latency only.

    Errors are one-line :class:`~anonpsy.errors.AnonpsyError` with code ``A103`` naming what failed (never
    any of the reply's text).
    """

    def __init__(
        self,
        base_url: str,
        *,
        model: str = "whisper-1",
        allow_remote: bool = False,
        timeouts: Timeouts | None = None,
        retries: int = 2,
        backoff_base: float = 0.5,
        backoff_cap: float = 8.0,
        retry_after_cap: float = 30.0,
        api_key_env: str | None = None,
        seed: int | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        ensure_allowed_endpoint(base_url, allow_remote=allow_remote)
        if retries < 0 or retries > 10:
            raise ValueError("retries must be from 0 to 10")
        self.url = base_url.rstrip("/") + "/audio/transcriptions"
        self.model = model
        self.retries = retries
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.retry_after_cap = retry_after_cap
        self._rng = random.Random(seed)
        t = timeouts or Timeouts(read=600.0, write=120.0)
        headers = {"Accept": "application/json"}
        key = os.environ.get(api_key_env) if api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._http = httpx.Client(
            timeout=httpx.Timeout(connect=t.connect, read=t.read, write=t.write, pool=t.pool),
            headers=headers,
            transport=transport,
            trust_env=False,
            follow_redirects=False,
        )
        self.requests = 0

    def _fail(self, message: str) -> AnonpsyError:
        return AnonpsyError(A103_TRANSCRIPTION, f"transcription server {message}")

    def transcribe(
        self, audio: bytes, *, filename: str = "audio.wav", language: str | None = "en"
    ) -> dict[str, Any]:
        """Send one recording; return the decoded ``verbose_json`` object."""
        data: dict[str, Any] = {
            "model": self.model,
            "response_format": "verbose_json",
            "timestamp_granularities[]": ["word", "segment"],
            "temperature": "0",
        }
        if language:
            data["language"] = language
        attempts = 0
        while True:
            attempts += 1
            self.requests += 1
            started = time.perf_counter()
            try:
                r = self._http.post(self.url, data=data, files={"file": (filename, audio, "audio/wav")})
            except httpx.TransportError as exc:
                kind = _transport_kind(exc)
                log.info("asr request attempt=%d error=%s", attempts, kind)
                if attempts > self.retries:
                    raise self._fail(f"failed ({kind}) after {attempts} attempt(s); check that it is running "
                                     "and that --asr-url points at it") from None
                time.sleep(backoff_delay(attempts, base=self.backoff_base, cap=self.backoff_cap, rng=self._rng))
                continue
            log.info("asr request attempt=%d status=%d latency_ms=%.0f", attempts, r.status_code,
                     (time.perf_counter() - started) * 1000)
            status = r.status_code
            if status in RETRYABLE_STATUS or status >= 500:
                if attempts > self.retries:
                    raise self._fail(f"answered HTTP {status} after {attempts} attempt(s); check its log")
                after = parse_retry_after({k.lower(): v for k, v in r.headers.items()})
                delay = (
                    min(after, self.retry_after_cap)
                    if after is not None
                    else backoff_delay(attempts, base=self.backoff_base, cap=self.backoff_cap, rng=self._rng)
                )
                time.sleep(delay)
                continue
            if status != 200:
                raise self._fail(f"answered HTTP {status}; check --asr-model and that the server offers "
                                 "/audio/transcriptions")
            try:
                payload = json.loads(r.content)
            except (ValueError, UnicodeDecodeError):
                raise self._fail("reply is not JSON; the server must support response_format=verbose_json") \
                    from None
            if not isinstance(payload, dict):
                raise self._fail("reply is not a JSON object")
            return payload

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> TranscriptionClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
