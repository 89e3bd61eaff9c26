"""Typed errors of the language-model layer.

Every error carries the template id (when known) and how many HTTP attempts were made. None of them ever
carries prompt text, reply text or anything taken from a case: validation problems are reduced to a JSON
path and the name of the schema keyword that failed.

Exception tree::

    AnonpsyError
     └── LLMError                  E12x
          ├── LLMConfigError       E121  bad profile or configuration file
          ├── LLMRemoteEndpointError E120  endpoint is not on this machine and allow_remote is false
          ├── LLMTemplateError     E122  unknown template, bad front matter, missing or unknown placeholder
          ├── LLMConnectionError   E123  no connection / timeouts after all retries
          ├── LLMHTTPError         E124  HTTP error status (after retries where the status is retryable)
          └── LLMReplyError        E125  reply not valid JSON or not valid against its schema after one re-ask
"""

from __future__ import annotations

from collections.abc import Sequence

from anonpsy.errors import AnonpsyError

E120_REMOTE_ENDPOINT = "E120"
E121_LLM_CONFIG = "E121"
E122_TEMPLATE = "E122"
E123_LLM_CONNECTION = "E123"
E124_LLM_HTTP = "E124"
E125_LLM_REPLY = "E125"


class LLMError(AnonpsyError):
    """Base class of every language-model error.

    ``attempts`` counts HTTP requests for connection and HTTP errors, and replies received for reply errors.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        template_id: str | None = None,
        attempts: int = 0,
        location: str | None = None,
    ) -> None:
        self.template_id = template_id
        self.attempts = attempts
        super().__init__(code, message, location)


class LLMConfigError(LLMError):
    """A profile or configuration file is missing or invalid."""

    def __init__(self, message: str, *, location: str | None = None) -> None:
        super().__init__(E121_LLM_CONFIG, message, location=location)


class LLMRemoteEndpointError(LLMError):
    """The endpoint host is not a loopback address and ``allow_remote`` is false."""

    def __init__(self, host_class: str) -> None:
        self.host_class = host_class
        super().__init__(
            E120_REMOTE_ENDPOINT,
            f"the language-model endpoint is a {host_class}, not this machine; case text must not leave it. "
            "Use a server on 127.0.0.1/::1/localhost, or set allow_remote: true in the configuration if the "
            "remote server is trusted with the data",
        )


class LLMTemplateError(LLMError):
    """A prompt template cannot be found, parsed or rendered."""

    def __init__(self, message: str, *, template_id: str | None = None, location: str | None = None) -> None:
        super().__init__(E122_TEMPLATE, message, template_id=template_id, location=location)


class LLMConnectionError(LLMError):
    """The server could not be reached or did not answer in time, after all retries."""

    def __init__(self, kind: str, *, template_id: str | None, attempts: int) -> None:
        self.kind = kind
        super().__init__(
            E123_LLM_CONNECTION,
            f"language-model server failed ({kind}) after {attempts} attempt(s); check that it is running "
            "and that the timeouts in the configuration suit the model",
            template_id=template_id,
            attempts=attempts,
        )


class LLMHTTPError(LLMError):
    """The server answered with an error status (retried first when the status is retryable)."""

    def __init__(self, status: int, *, template_id: str | None, attempts: int, reason: str = "") -> None:
        self.status = status
        why = f" ({reason})" if reason else ""
        super().__init__(
            E124_LLM_HTTP,
            f"language-model server answered HTTP {status}{why} after {attempts} attempt(s); "
            "check the server log, the model name and the profile",
            template_id=template_id,
            attempts=attempts,
        )


class LLMReplyError(LLMError):
    """The reply did not parse or validate, even after one re-ask with the validation errors.

    ``errors`` lists ``path: problem`` strings built from schema keywords only (no reply text).
    """

    def __init__(self, template_id: str | None, attempts: int, errors: Sequence[str]) -> None:
        self.errors = list(errors)
        shown = "; ".join(self.errors[:5]) + (
            f"; … {len(self.errors) - 5} more" if len(self.errors) > 5 else ""
        )
        super().__init__(
            E125_LLM_REPLY,
            f"reply for template {template_id or '?'} failed validation after {attempts} attempt(s): "
            f"{shown}. "
            "Try a larger model, a lower temperature or a profile with schema-constrained output",
            template_id=template_id,
            attempts=attempts,
        )
