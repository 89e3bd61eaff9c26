"""Click options of the LLM backend's ablations (``--no-steb``, ``--no-retro``), bundled into one ``llm_options``.

Apply :func:`llm_ablation_options` under ``@main.command()`` of a command; the command then receives
``llm_options: dict`` (``{"no_steb": bool, "no_retro": bool}``) to merge into ``deid_text(..., options=...)``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

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
