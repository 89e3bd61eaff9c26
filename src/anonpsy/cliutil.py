"""Shared command-line plumbing: one-line errors and exit codes for every command."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from anonpsy.errors import AnonpsyError

F = TypeVar("F", bound=Callable[..., Any])


def handle_errors(fn: F) -> F:
    """Turn AnonpsyError into a one-line message and exit 2; hide tracebacks of internal errors."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AnonpsyError as exc:
            click.echo(exc.one_line(), err=True)
            sys.exit(2)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException, SystemExit):
            raise
        except Exception as exc:
            if os.environ.get("ANONPSY_DEBUG"):
                raise
            click.echo(f"E999 internal error ({type(exc).__name__}); rerun with ANONPSY_DEBUG=1 to see where",
                       err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]
