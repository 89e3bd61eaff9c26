"""Click options of the LLM backend.

* :func:`llm_ablation_options`: ``--no-steb``, ``--no-retro``, bundled into ``llm_options: dict``
  (``{"no_steb": bool, "no_retro": bool}``) to merge into ``deid_text(..., options=...)``;
* :func:`strict_llm_option`: ``--strict-llm``, added to ``llm_options`` as ``strict_llm``;
* :func:`llm_server_options`: ``--llm-config``, ``--llm-url``, ``--llm-model``, passed as
  ``llm_server: LLMServerArgs`` (``.resolve()`` gives the :class:`anonpsy.llm.LLMConfig`).

Apply them under ``@main.command()``; the decorators closest to the function run first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from anonpsy.llm.config import LLMConfig

F = TypeVar("F", bound=Callable[..., Any])


def ablation_options(no_steb: bool = False, no_retro: bool = False) -> dict[str, bool]:
    """The pipeline options of the two ablations."""
    return {"no_steb": no_steb, "no_retro": no_retro}


def llm_ablation_options(fn: F) -> F:
    """Add ``--no-steb`` and ``--no-retro`` and pass them to ``fn`` as ``llm_options``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, no_steb: bool = False, no_retro: bool = False, **kwargs: Any) -> Any:
        return fn(*args, llm_options=ablation_options(no_steb, no_retro), **kwargs)

    wrapper = click.option(
        "--no-retro",
        is_flag=True,
        help="llm backend: rewrite contexts in chronological instead of retrograde order.",
    )(wrapper)
    wrapper = click.option(
        "--no-steb",
        is_flag=True,
        help="llm backend: one episode sentence per symptom instead of STEB frames.",
    )(wrapper)
    return wrapper  # type: ignore[return-value]


@dataclass(frozen=True)
class LLMServerArgs:
    """Where the language-model server is: ``--llm-config``, ``--llm-url`` and ``--llm-model`` as given."""

    config: Path | None = None
    url: str | None = None
    model: str | None = None

    def resolve(self) -> LLMConfig:
        """The configuration (see :func:`anonpsy.llm.config.resolve_config`; the environment is read only without
        a configuration file)."""
        from anonpsy.llm.config import resolve_config

        return resolve_config(self.config, base_url=self.url, model=self.model)


def llm_server_options(fn: F) -> F:
    """Add ``--llm-config``, ``--llm-url`` and ``--llm-model`` and pass them to ``fn`` as ``llm_server``."""

    @functools.wraps(fn)
    def wrapper(
        *args: Any, llm_config: Path | None = None, llm_url: str | None = None, llm_model: str | None = None,
        **kwargs: Any,
    ) -> Any:
        return fn(*args, llm_server=LLMServerArgs(llm_config, llm_url, llm_model), **kwargs)

    wrapper = click.option(
        "--llm-model",
        metavar="NAME",
        help="Model name sent to the server (overrides the configuration's).",
    )(wrapper)
    wrapper = click.option(
        "--llm-url",
        metavar="URL",
        help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1 (overrides the configuration's; without "
        "--llm-config, OPENAI_BASE_URL is read and the key comes from OPENAI_API_KEY). Loopback only unless a "
        "configuration file sets allow_remote: true.",
    )(wrapper)
    wrapper = click.option(
        "--llm-config",
        type=click.Path(path_type=Path),
        help="LLM configuration file (format: adapters/config.example.yaml).",
    )(wrapper)
    return wrapper  # type: ignore[return-value]


def strict_llm_option(fn: F) -> F:
    """Add ``--strict-llm``; it is merged into ``llm_options`` as ``strict_llm`` (apply it below
    :func:`llm_ablation_options`, which provides ``llm_options``)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, strict_llm: bool = False, llm_options: dict[str, Any], **kwargs: Any) -> Any:
        return fn(*args, llm_options={**llm_options, "strict_llm": strict_llm}, **kwargs)

    wrapper = click.option(
        "--strict-llm",
        is_flag=True,
        help="llm backend: no rules-backend fallback; the first model step that fails after its retries ends the "
        "case.",
    )(wrapper)
    return wrapper  # type: ignore[return-value]
