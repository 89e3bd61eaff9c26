"""One place where the LLM backend calls the language model.

Every LLM step renders a versioned template (``adapters/prompts/<id>.v1.md``) whose user message carries the step's
input as one JSON object between ``<<<`` and ``>>>`` lines, followed by optional feedback (used for the evidence
re-ask and the bounded rewrite retries). The client validates the reply against the template's schema
(``schemas/llm/<id>.json``) and re-asks once on its own; what reaches the caller is a schema-valid ``dict``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from pydantic import ValidationError

from anonpsy.audit import Fallback
from anonpsy.errors import AnonpsyError
from anonpsy.llm.errors import LLMConnectionError, LLMError, LLMHTTPError, LLMReplyError
from anonpsy.llm.prompts import load_template

if TYPE_CHECKING:
    from anonpsy.graph import CaseGraph

Stage = Literal["extraction", "perturbation", "generation"]
T = TypeVar("T")

#: HTTP statuses that concern one request (overload, a prompt the server cannot take), not the whole setup.
_STEP_STATUSES = frozenset({200, 400, 408, 409, 413, 422, 429})
#: Transport failures that happen to one request on a server that is up (a refused connection is not one).
_STEP_TRANSPORT = frozenset({"read timeout", "write timeout", "pool timeout", "protocol error", "read error"})

#: Code of errors raised by the LLM backend itself (not by the client): a reply that passed its schema but
#: cannot be turned into a valid graph.
E127_LLM_BACKEND = "E127"


class LLMBackendError(LLMError):
    """A step of the LLM backend cannot produce a valid result (the case ends with no output)."""

    def __init__(self, message: str, *, template_id: str | None = None) -> None:
        super().__init__(E127_LLM_BACKEND, message, template_id=template_id)


class JSONClient(Protocol):
    """What the backend needs from :class:`anonpsy.llm.LLMClient`."""

    def complete_json(
        self,
        template: Any,
        variables: dict[str, Any],
        *,
        operator: str,
        seed: int | None = None,
        case_id: str | None = None,
    ) -> Any: ...


def input_json(payload: dict[str, Any]) -> str:
    """The step input as it appears in the prompt (stable key order, unicode kept)."""
    return json.dumps(payload, ensure_ascii=False, sort_keys=True)


def is_step_fault(exc: BaseException) -> bool:
    """Whether ``exc`` is a fault of one step that the rules backend may cover.

    Step faults: replies that stay invalid after retries and the re-ask (E125), replies the graph cannot hold
    (E127), overload and per-request HTTP errors after retries (408/409/429/5xx, 400/413/422), and a read timeout
    or broken response. Not step faults — they would fail every step the same way, so the case ends loudly:
    an unreachable server, 401/403/404 (key, model or URL wrong), configuration and template errors.
    """
    if isinstance(exc, LLMReplyError | LLMBackendError):
        return True
    if isinstance(exc, LLMHTTPError):
        return exc.status in _STEP_STATUSES or exc.status >= 500
    if isinstance(exc, LLMConnectionError):
        return exc.kind in _STEP_TRANSPORT
    return False


@dataclass(frozen=True)
class Ask:
    """One model step for :meth:`StepContext.ask_all`: template, input payload, operator, re-ask feedback."""

    template_id: str
    payload: dict[str, Any]
    operator: str
    feedback: str = ""


@dataclass
class StepContext:
    """Per-case state shared by the steps: the client, the seed, the case id and the audit notes.

    ``notes`` collect what the backend decided without failing (dropped items, fallbacks); notes hold codes, step
    names, item indices and node ids only, never narrative text. ``fallbacks`` lists the steps the rules backend
    did instead of the model (see :meth:`fall_back`); ``strict`` forbids them. ``source_text`` is the narrative
    (for the rules backend's own extraction, computed once on the first fallback that needs it).
    """

    llm: JSONClient
    case_id: str
    seed: int
    notes: list[str] = field(default_factory=list)
    calls: int = 0
    strict: bool = False
    source_text: str | None = None
    identifiers: Any = None  # anonpsy.perturb.contexts.SourceIdentifiers of the source, found once per case
    fallbacks: list[Fallback] = field(default_factory=list)
    _rules_graph: CaseGraph | None = field(default=None, repr=False)

    def ask(
        self, template_id: str, payload: dict[str, Any], *, operator: str, feedback: str = ""
    ) -> dict[str, Any]:
        """Render ``template_id`` with ``payload`` and return the validated reply object."""
        self.calls += 1
        return self._ask(template_id, payload, operator, feedback)

    def ask_all(self, asks: Sequence[Ask]) -> list[dict[str, Any] | Exception]:
        """:meth:`ask` for independent steps, sent together: each reply, or the exception its ask raised, in the
        order of ``asks``.

        With :class:`anonpsy.llm.LLMClient` (thread-safe; its ``concurrency`` bounds the requests in flight of
        every case sharing it) up to ``concurrency`` asks wait on the server at once, so that a case spends one
        model latency on its independent steps rather than one each; with any other client, or one of
        concurrency 1, they run one after another. The caller handles the results in order, so what it records
        (fallbacks, notes) does not depend on which reply came first.
        """
        from anonpsy.llm import LLMClient

        width = self.llm.config.concurrency if isinstance(self.llm, LLMClient) else 1
        out: list[dict[str, Any] | Exception] = []
        if width <= 1 or len(asks) <= 1:
            for a in asks:
                self.calls += 1
                try:
                    out.append(self._ask(a.template_id, a.payload, a.operator, a.feedback))
                except Exception as exc:
                    out.append(exc)
                    if self.strict or not is_step_fault(exc):  # the case ends here: ask nothing more
                        out += [exc] * (len(asks) - len(out))
                        break
            return out
        self.calls += len(asks)
        assert isinstance(self.llm, LLMClient)
        pool = self.llm.executor()  # the client's threads, shared by the cases in flight
        futures = [pool.submit(self._ask, a.template_id, a.payload, a.operator, a.feedback) for a in asks]
        for fut in futures:
            err = fut.exception()
            if err is not None and not isinstance(err, Exception):
                raise err
            out.append(fut.result() if err is None else err)
        return out

    def _ask(self, template_id: str, payload: dict[str, Any], operator: str, feedback: str) -> dict[str, Any]:
        template = load_template(template_id)
        reply = self.llm.complete_json(
            template,
            {"input": input_json(payload), "feedback": feedback},
            operator=operator,
            seed=self.seed,
            case_id=self.case_id,
        )
        if not isinstance(reply, dict):
            raise LLMBackendError(f"reply of {template_id} is not a JSON object", template_id=template_id)
        return reply

    def note(self, code: str, detail: str) -> None:
        """Record a non-fatal decision (``CODE detail``; no narrative text)."""
        self.notes.append(f"{code} {detail}")

    def fall_back(self, exc: BaseException, *, stage: Stage, step: str) -> None:
        """Record that the rules backend does ``step`` because the model step failed with ``exc``.

        Re-raises ``exc`` when fallbacks are off (``strict``) or when ``exc`` is not a step fault
        (:func:`is_step_fault`); the caller then runs the rules backend for that step.
        """
        if self.strict or not is_step_fault(exc):
            raise exc
        assert isinstance(exc, LLMError)
        self.fallbacks.append(
            Fallback(
                stage=stage,
                step=step,
                code=exc.code,
                template_id=exc.template_id,
                attempts=exc.attempts,
                error=exc.one_line(),
            )
        )
        self.note("RULES_FALLBACK", f"{step}: {exc.code}; the rules backend did this step")

    def rules_graph(self) -> CaseGraph:
        """The rules backend's extraction of the source narrative (not normalised), computed once."""
        if self._rules_graph is None:
            from anonpsy.extract import extract

            if self.source_text is None:
                raise LLMBackendError("no source text for the rules fallback")
            self._rules_graph = extract(self.source_text, case_id=self.case_id)
        return self._rules_graph


def require_client(llm: Any) -> JSONClient:
    """The client, or a one-line configuration error when the llm backend was chosen without one."""
    if llm is None or not hasattr(llm, "complete_json"):
        raise AnonpsyError(
            "E121",
            "the llm backend needs a language-model client; pass --llm-config with a "
            "server profile (see adapters/config.example.yaml)",
        )
    return llm  # type: ignore[no-any-return]


def run_step(
    ctx: StepContext,
    *,
    stage: Stage,
    step: str,
    template_id: str,
    llm: Callable[[], T],
    rules: Callable[[], T],
) -> T:
    """``llm()``, or ``rules()`` after recording the fallback when the model step fails (see :meth:`fall_back`).

    A schema-valid reply that the graph model still rejects (pydantic) is the model's failure too (E127).
    """
    try:
        return llm()
    except ValidationError as exc:
        err = LLMBackendError(
            f"reply of {template_id} does not fit the graph model ({exc.error_count()} problem(s))",
            template_id=template_id,
        )
        ctx.fall_back(err, stage=stage, step=step)
    except LLMError as exc:
        ctx.fall_back(exc, stage=stage, step=step)
    return rules()
