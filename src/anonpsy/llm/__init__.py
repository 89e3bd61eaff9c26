"""Language-model adapter layer: server profiles, the HTTP client, the reply cache and prompt templates.

Only :mod:`anonpsy.llm.client` touches the network. Typical use::

    from anonpsy.llm import LLMClient, load_config, load_template

    with LLMClient(load_config("llm.yaml")) as client:
        reply = client.complete_json(load_template("echo"), {"text": "..."}, operator="extraction")

The client logs retries, re-asks and format fallbacks to the ``anonpsy.llm`` logger (template ids, statuses and
counts only, never text). Nothing is printed unless the application configures :mod:`logging`; the command line
reports fallbacks in the audit and `anonpsy llm check` reports retries.
"""

import logging

from anonpsy.llm.cache import ResponseCache, cache_key
from anonpsy.llm.client import AsyncLLMClient, LLMClient, TranscriptionClient, template_marker
from anonpsy.llm.config import LLMConfig, Profile, Temperatures, Timeouts, load_config, load_profile
from anonpsy.llm.errors import (
    LLMConfigError,
    LLMConnectionError,
    LLMError,
    LLMHTTPError,
    LLMRemoteEndpointError,
    LLMReplyError,
    LLMTemplateError,
)
from anonpsy.llm.metrics import CallRecord, Metrics
from anonpsy.llm.prompts import PromptTemplate, list_templates, load_template

__all__ = [
    "AsyncLLMClient",
    "CallRecord",
    "LLMClient",
    "LLMConfig",
    "LLMConfigError",
    "LLMConnectionError",
    "LLMError",
    "LLMHTTPError",
    "LLMRemoteEndpointError",
    "LLMReplyError",
    "LLMTemplateError",
    "Metrics",
    "Profile",
    "PromptTemplate",
    "ResponseCache",
    "Temperatures",
    "Timeouts",
    "TranscriptionClient",
    "cache_key",
    "list_templates",
    "load_config",
    "load_profile",
    "load_template",
    "template_marker",
]

logging.getLogger("anonpsy.llm").addHandler(logging.NullHandler())
