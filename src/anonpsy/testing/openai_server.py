"""A scripted OpenAI-compatible chat-completions server for tests (real HTTP on 127.0.0.1, random port).

Endpoints: ``POST /v1/chat/completions``, ``GET /v1/models``, Ollama's native ``POST /api/chat`` and the
audio API's ``POST /v1/audio/transcriptions`` (multipart upload; replies with recorded ``verbose_json``).

Replies come from a *script* keyed by template id (read from the ``[template:<id>@v<N>]`` marker that
:class:`anonpsy.llm.LLMClient` puts in the system message; key ``"*"`` matches any template) or from a
*responder* callable ``(request_json) -> content``. A script value is the reply content (a ``str``, or a
``dict`` sent as JSON) or a ``list`` of such values served in turn (the last one repeats).

Faults (:class:`Fault`) are injected per chat-request index (0-based) and/or per template: HTTP 500 or any
status, 429 with ``Retry-After``, a read timeout (the server sleeps before answering), malformed JSON, JSON
that violates the schema, empty content, or a 400 rejecting the requested ``response_format``. A
:class:`FaultMix` adds seeded random faults at a given rate; whether a request fails depends only on the seed,
the request's messages and how many times the same messages were sent before, so a run is reproducible
whatever the order in which concurrent requests arrive.

Transcription replies come from ``transcriptions``: a ``dict`` (sent as JSON), a ``str`` (sent as the raw
body), a list of those served in turn (the last one repeats), or a callable ``(upload) -> reply`` given the
:class:`Upload`. ``transcription_faults`` inject ``http_500``/``http_error``/``rate_limit``/``timeout``/
``malformed_json``/``empty``/``content`` per transcription-request index, like chat faults.

Every request is logged (:attr:`ScriptedOpenAIServer.requests`) with its template id, ``response_format``
type and body, and the greatest number of simultaneous chat requests is kept in :attr:`max_in_flight`::

    with ScriptedOpenAIServer(script={"echo": {"echo": "hi", "count": 1}}) as srv:
        config = LLMConfig(profile="scripted", base_url=srv.base_url)
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

Content = str | dict[str, Any]
ScriptValue = Content | list[Content]
Responder = Callable[[dict[str, Any]], Content]
FaultKind = Literal[
    "http_500",
    "http_error",
    "rate_limit",
    "timeout",
    "malformed_json",
    "schema_violation",
    "empty",
    "truncated",
    "reject_format",
    "content",
]

MARKER_RE = re.compile(r"\[template:([a-z0-9][a-z0-9_-]*)@v([0-9]+)\]")
_DEFAULT_STATUS = {"http_500": 500, "http_error": 500, "rate_limit": 429, "reject_format": 400}


@dataclass
class Fault:
    """One injected fault.

    ``at``: chat-request index (0-based, over all chat requests) or None for any; ``template``: template id
    or None for any; ``times``: how many requests it affects (None: all that match). Per kind:

    * ``http_500`` / ``http_error``: answer ``status`` (default 500) with an error body;
    * ``rate_limit``: 429 with ``Retry-After: retry_after`` (when not None);
    * ``timeout``: wait ``delay`` seconds, then answer normally (the client should have given up);
    * ``malformed_json``: content ``{"echo": ...`` (not JSON); ``schema_violation``: content ``{}`` (valid
      JSON that misses required fields); ``empty``: empty content; ``content``: the given ``content``;
    * ``truncated``: the same unterminated JSON with ``finish_reason: "length"`` (cut at ``max_tokens``);
    * ``reject_format``: 400 naming ``response_format`` when the request's response_format type is in
      ``formats`` (``json_object+schema`` is llama-cpp-python's form, ``ollama_format`` the ``format`` field).
    """

    kind: FaultKind
    at: int | None = None
    template: str | None = None
    times: int | None = 1
    status: int | None = None
    retry_after: str | None = "1"
    delay: float = 1.0
    content: str = ""
    formats: tuple[str, ...] = ("json_schema",)


#: The mix of faults a real server under load shows: errors, rate limits and broken replies.
MIXED_FAULTS: tuple[FaultKind, ...] = ("http_500", "rate_limit", "malformed_json", "schema_violation", "empty")


@dataclass(frozen=True)
class FaultMix:
    """Seeded random faults: each chat request fails with probability ``rate``, its kind drawn from ``kinds``.

    The draw hashes ``seed``, the request's messages and the number of earlier requests with the same messages
    (a retry of a request draws again), so the same run meets the same faults. Explicit :class:`Fault` items are
    served first. ``retry_after`` is the ``Retry-After`` header of ``rate_limit`` faults.
    """

    rate: float
    kinds: tuple[FaultKind, ...] = MIXED_FAULTS
    seed: int = 0
    retry_after: str | None = "1"

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError("rate must be between 0 and 1")
        if not self.kinds or any(k in ("reject_format", "content") for k in self.kinds):
            raise ValueError("kinds must be a non-empty tuple of self-contained fault kinds")

    def draw(self, messages_key: str, occurrence: int) -> Fault | None:
        """The fault for the ``occurrence``-th request (0-based) with these messages, or None."""
        digest = hashlib.sha256(f"{self.seed}\0{occurrence}\0{messages_key}".encode()).digest()
        u = int.from_bytes(digest[:8], "big") / 2**64
        if u >= self.rate:
            return None
        kind = self.kinds[int.from_bytes(digest[8:16], "big") % len(self.kinds)]
        return Fault(kind, retry_after=self.retry_after)


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the server saw it."""

    index: int
    method: str
    path: str
    template_id: str | None
    template_version: int | None
    response_format: str | None
    authorization: str | None
    body: dict[str, Any] | None
    status: int
    fault: str | None


@dataclass(frozen=True)
class Upload:
    """One transcription request: its form fields and the uploaded file."""

    fields: dict[str, list[str]]
    filename: str | None
    content_type: str | None
    data: bytes


TranscriptionReply = dict[str, Any] | str
TranscriptionScript = TranscriptionReply | list[TranscriptionReply] | Callable[[Upload], TranscriptionReply]


def parse_multipart(body: bytes, content_type: str) -> Upload | None:
    """Fields and the ``file`` part of a ``multipart/form-data`` body (None when it is not one)."""
    m = re.search(r'boundary="?([^";]+)"?', content_type or "")
    if not content_type.startswith("multipart/form-data") or m is None:
        return None
    boundary = b"--" + m.group(1).encode("latin-1")
    fields: dict[str, list[str]] = {}
    filename = ctype = None
    data = b""
    for part in body.split(boundary)[1:]:
        if part.startswith(b"--"):
            break
        head, _, value = part.lstrip(b"\r\n").partition(b"\r\n\r\n")
        if value.endswith(b"\r\n"):
            value = value[:-2]
        headers = head.decode("latin-1")
        name = re.search(r'name="([^"]*)"', headers)
        fname = re.search(r'filename="([^"]*)"', headers)
        if name is None:
            continue
        if fname is not None:
            filename = fname.group(1)
            ct = re.search(r"Content-Type:\s*([^\r\n]+)", headers, re.I)
            ctype = ct.group(1).strip() if ct else None
            data = value
        else:
            fields.setdefault(name.group(1), []).append(value.decode("utf-8", errors="replace"))
    return Upload(fields, filename, ctype, data)


def response_format_type(body: Mapping[str, Any]) -> str | None:
    """``json_schema``, ``json_object+schema``, ``json_object``, ``text``, ``ollama_format`` or None."""
    rf = body.get("response_format")
    if isinstance(rf, dict):
        kind = str(rf.get("type"))
        return "json_object+schema" if kind == "json_object" and "schema" in rf else kind
    if "format" in body:
        return "ollama_format"
    return None


def template_of(body: Mapping[str, Any]) -> tuple[str | None, int | None]:
    """Template id and version from the marker in the request's messages."""
    for message in body.get("messages") or []:
        if isinstance(message, dict) and isinstance(message.get("content"), str):
            m = MARKER_RE.search(message["content"])
            if m:
                return m.group(1), int(m.group(2))
    return None, None


def _words(text: str) -> int:
    return len(text.split())


@dataclass
class _Outcome:
    status: int
    payload: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    fault: str | None = None


class ScriptedOpenAIServer:
    """Context manager running the scripted server in a background thread; see the module docstring."""

    def __init__(
        self,
        script: Mapping[str, ScriptValue] | None = None,
        *,
        responder: Responder | None = None,
        faults: Sequence[Fault] = (),
        fault_mix: FaultMix | None = None,
        latency: float = 0.0,
        model: str = "scripted-model",
        api_key: str | None = None,
        host: str = "127.0.0.1",
        transcriptions: TranscriptionScript | None = None,
        transcription_faults: Sequence[Fault] = (),
    ) -> None:
        self.transcriptions = transcriptions
        self.transcription_faults = list(transcription_faults)
        self._t_remaining: list[int | None] = [f.times for f in self.transcription_faults]
        self._t_index = 0
        self.uploads: list[Upload] = []
        self.script: dict[str, ScriptValue] = dict(script or {})
        self.responder = responder
        self.faults = list(faults)
        self.fault_mix = fault_mix
        self._seen_messages: dict[str, int] = {}
        self.latency = latency
        self.model = model
        self.api_key = api_key
        self._host = host
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._log: list[LoggedRequest] = []
        self._chat_index = 0
        self._served: dict[str, int] = {}
        self._remaining: list[int | None] = [f.times for f in self.faults]
        self._in_flight = 0
        self.max_in_flight = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------------------

    def start(self) -> ScriptedOpenAIServer:
        """Bind to a free port and serve in a daemon thread."""
        handler = _make_handler(self)
        self._httpd = ThreadingHTTPServer((self._host, 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="scripted-openai",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; pending artificial delays are cut short."""
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """OpenAI-compatible base URL (``http://127.0.0.1:<port>/v1``)."""
        return f"http://{self._host}:{self.port}/v1"

    @property
    def native_base_url(self) -> str:
        """Ollama-style native base URL (``http://127.0.0.1:<port>/api``)."""
        return f"http://{self._host}:{self.port}/api"

    # -- inspection ----------------------------------------------------------------------------------------

    @property
    def requests(self) -> list[LoggedRequest]:
        """Every request received, in arrival order of their answers."""
        with self._lock:
            return list(self._log)

    @property
    def chat_requests(self) -> list[LoggedRequest]:
        """Chat-completion requests only (OpenAI and native)."""
        return [r for r in self.requests if r.method == "POST" and "/audio/" not in r.path]

    @property
    def transcription_requests(self) -> list[LoggedRequest]:
        """Transcription requests only."""
        return [r for r in self.requests if r.method == "POST" and "/audio/" in r.path]

    def requests_for(self, template_id: str) -> list[LoggedRequest]:
        """Chat requests carrying ``template_id``'s marker."""
        return [r for r in self.chat_requests if r.template_id == template_id]

    # -- behaviour -----------------------------------------------------------------------------------------

    def _take_fault(
        self, index: int, template_id: str | None, rf_type: str | None, body: Mapping[str, Any]
    ) -> Fault | None:
        explicit = self._take_explicit_fault(index, template_id, rf_type)
        if explicit is not None or self.fault_mix is None:
            return explicit
        key = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).hexdigest()
        with self._lock:
            occurrence = self._seen_messages.get(key, 0)
            self._seen_messages[key] = occurrence + 1
        return self.fault_mix.draw(key, occurrence)

    def _take_explicit_fault(self, index: int, template_id: str | None, rf_type: str | None) -> Fault | None:
        with self._lock:
            for i, fault in enumerate(self.faults):
                left = self._remaining[i]
                if left is not None and left <= 0:
                    continue
                if fault.at is not None and fault.at != index:
                    continue
                if fault.template is not None and fault.template != template_id:
                    continue
                if fault.kind == "reject_format" and rf_type not in fault.formats:
                    continue
                if left is not None:
                    self._remaining[i] = left - 1
                return fault
        return None

    def _scripted_content(self, template_id: str | None, body: dict[str, Any]) -> Content | None:
        if self.responder is not None:
            return self.responder(body)
        key = template_id if template_id in self.script else "*"
        if key not in self.script:
            return None
        value = self.script[key]
        if isinstance(value, list):
            with self._lock:
                n = self._served.get(key, 0)
                self._served[key] = n + 1
            if not value:
                return ""
            return value[min(n, len(value) - 1)]
        return value

    def _chat(self, body: dict[str, Any], *, native: bool) -> _Outcome:
        with self._lock:
            index = self._chat_index
            self._chat_index += 1
        template_id, _ = template_of(body)
        rf_type = response_format_type(body)
        fault = self._take_fault(index, template_id, rf_type, body)
        delay = self.latency
        content: Content | None
        if fault is not None:
            kind = fault.kind
            if kind in ("http_500", "http_error"):
                status = fault.status or _DEFAULT_STATUS[kind]
                return _Outcome(
                    status, _error("scripted server error", "server_error"), delay=delay, fault=kind
                )
            if kind == "rate_limit":
                headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
                return _Outcome(429, _error("rate limited", "rate_limit"), headers, delay=delay, fault=kind)
            if kind == "reject_format":
                message = f"response_format type {rf_type!r} is not supported by this server"
                return _Outcome(
                    fault.status or 400, _error(message, "invalid_request_error"), delay=delay, fault=kind
                )
            if kind == "timeout":
                delay += fault.delay
                content = self._scripted_content(template_id, body)
            elif kind in ("malformed_json", "truncated"):
                content = '{"echo": "unterminated'
            elif kind == "schema_violation":
                content = "{}"
            elif kind == "empty":
                content = ""
            else:
                content = fault.content
        else:
            content = self._scripted_content(template_id, body)
        if content is None:
            message = f"no scripted reply for template {template_id!r}"
            return _Outcome(404, _error(message, "not_found"), delay=delay)
        text = content if isinstance(content, str) else json.dumps(content)
        prompt_tokens = sum(
            _words(m.get("content", "")) for m in body.get("messages") or [] if isinstance(m, dict)
        )
        if native:
            payload: dict[str, Any] = {
                "model": body.get("model", self.model),
                "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "message": {"role": "assistant", "content": text},
                "done": True,
                "prompt_eval_count": prompt_tokens,
                "eval_count": _words(text),
            }
        else:
            payload = {
                "id": f"chatcmpl-scripted-{index}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", self.model),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "length" if fault is not None and fault.kind == "truncated" else "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": _words(text),
                    "total_tokens": prompt_tokens + _words(text),
                },
            }
        return _Outcome(200, payload, delay=delay, fault=fault.kind if fault else None)

    def _transcription(self, upload: Upload | None) -> tuple[int, bytes, dict[str, str], float, str | None]:
        """(status, body, headers, delay, fault) of one transcription request."""
        with self._lock:
            index = self._t_index
            self._t_index += 1
            if upload is not None:
                self.uploads.append(upload)
            fault = None
            for i, f in enumerate(self.transcription_faults):
                left = self._t_remaining[i]
                if (left is not None and left <= 0) or (f.at is not None and f.at != index):
                    continue
                if left is not None:
                    self._t_remaining[i] = left - 1
                fault = f
                break
        delay = self.latency

        def err(status: int, message: str, kind: str) -> tuple[int, bytes, dict[str, str], float, str | None]:
            return status, json.dumps(_error(message, kind)).encode(), {}, delay, fault.kind if fault else None

        if upload is None or upload.filename is None:
            return err(400, "expected multipart/form-data with a file part", "invalid_request_error")
        if fault is not None:
            if fault.kind in ("http_500", "http_error"):
                return err(fault.status or 500, "scripted server error", "server_error")
            if fault.kind == "rate_limit":
                status, body, _, _, kind = err(429, "rate limited", "rate_limit")
                headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
                return status, body, headers, delay, kind
            if fault.kind == "malformed_json":
                return 200, b'{"text": "unterminated', {}, delay, fault.kind
            if fault.kind == "empty":
                return 200, b"", {}, delay, fault.kind
            if fault.kind == "content":
                return 200, fault.content.encode(), {}, delay, fault.kind
            if fault.kind == "timeout":
                delay += fault.delay
        script = self.transcriptions
        reply: TranscriptionReply | None
        if callable(script):
            reply = script(upload)
        elif isinstance(script, list):
            reply = script[min(index, len(script) - 1)] if script else None
        else:
            reply = script
        if reply is None:
            return err(404, "no scripted transcription", "not_found")
        body = reply.encode() if isinstance(reply, str) else json.dumps(reply).encode()
        return 200, body, {}, delay, fault.kind if fault else None

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _record(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None,
        authorization: str | None,
        status: int,
        fault: str | None,
    ) -> None:
        template_id, version = template_of(body) if body is not None else (None, None)
        rf_type = response_format_type(body) if body is not None else None
        with self._lock:
            self._log.append(
                LoggedRequest(
                    len(self._log),
                    method,
                    path,
                    template_id,
                    version,
                    rf_type,
                    authorization,
                    body,
                    status,
                    fault,
                )
            )


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _make_handler(server: ScriptedOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(
            self, status: int, payload: dict[str, Any], headers: Mapping[str, str] | None = None
        ) -> None:
            data = json.dumps(payload).encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, OSError):
                self.close_connection = True

        def _auth_ok(self) -> bool:
            if server.api_key is None:
                return True
            return self.headers.get("Authorization") == f"Bearer {server.api_key}"

        def do_GET(self) -> None:
            if not self._auth_ok():
                status, payload = 401, _error("invalid api key", "invalid_request_error")
            elif self.path.rstrip("/") == "/v1/models":
                data = [{"id": server.model, "object": "model", "owned_by": "scripted"}]
                status, payload = 200, {"object": "list", "data": data}
            else:
                status, payload = 404, _error("not found", "not_found")
            server._record("GET", self.path, None, self.headers.get("Authorization"), status, None)
            self._send(status, payload)

        def _send_raw(self, status: int, data: bytes, headers: Mapping[str, str]) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, OSError):
                self.close_connection = True

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            path = self.path.rstrip("/")
            if path == "/v1/audio/transcriptions":
                if not self._auth_ok():
                    self._send(401, _error("invalid api key", "invalid_request_error"))
                    return
                upload = parse_multipart(raw, self.headers.get("Content-Type") or "")
                server._enter()
                try:
                    status, data, headers, delay, fault = server._transcription(upload)
                    if delay > 0:
                        server._stop.wait(delay)
                finally:
                    server._leave()
                server._record("POST", self.path, None, self.headers.get("Authorization"), status, fault)
                self._send_raw(status, data, headers)
                return
            native = path == "/api/chat"
            try:
                body = json.loads(raw or b"null")
            except json.JSONDecodeError:
                body = None
            server._enter()
            try:
                if not self._auth_ok():
                    outcome = _Outcome(401, _error("invalid api key", "invalid_request_error"))
                elif path not in ("/v1/chat/completions", "/api/chat"):
                    outcome = _Outcome(404, _error("not found", "not_found"))
                elif not isinstance(body, dict):
                    outcome = _Outcome(400, _error("body is not a JSON object", "invalid_request_error"))
                else:
                    outcome = server._chat(body, native=native)
                if outcome.delay > 0:
                    server._stop.wait(outcome.delay)
            finally:
                server._leave()
            server._record(
                "POST",
                self.path,
                body if isinstance(body, dict) else None,
                self.headers.get("Authorization"),
                outcome.status,
                outcome.fault,
            )
            self._send(outcome.status, outcome.payload, outcome.headers)

    return Handler
