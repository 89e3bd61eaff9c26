"""One place where the LLM backend calls the language model.

Every LLM step renders a versioned template (``adapters/prompts/<id>.v1.md``) whose user message carries the step's
input as one JSON object between ``<<<`` and ``>>>`` lines, followed by optional feedback (used for the evidence
re-ask and the bounded rewrite retries). The client validates the reply against the template's schema
(``schemas/llm/<id>.json``) and re-asks once on its own; what reaches the caller is a schema-valid ``dict``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from anonpsy.errors import AnonpsyError
from anonpsy.llm.errors import LLMError
from anonpsy.llm.prompts import load_template

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


@dataclass
class StepContext:
    """Per-case state shared by the steps: the client, the seed, the case id and the audit notes.

    ``notes`` collect what the backend decided without failing (dropped items, fallbacks); notes hold codes, step
    names, item indices and node ids only, never narrative text.
    """

    llm: JSONClient
    case_id: str
    seed: int
    notes: list[str] = field(default_factory=list)
    calls: int = 0

    def ask(
        self, template_id: str, payload: dict[str, Any], *, operator: str, feedback: str = ""
    ) -> dict[str, Any]:
        """Render ``template_id`` with ``payload`` and return the validated reply object."""
        template = load_template(template_id)
        self.calls += 1
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


def require_client(llm: Any) -> JSONClient:
    """The client, or a one-line configuration error when the llm backend was chosen without one."""
    if llm is None or not hasattr(llm, "complete_json"):
        raise AnonpsyError(
            "E121",
            "the llm backend needs a language-model client; pass --llm-config with a "
            "server profile (see adapters/config.example.yaml)",
        )
    return llm  # type: ignore[no-any-return]
