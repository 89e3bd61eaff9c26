"""`anonpsy llm check`: what the configured language-model server offers, before a case is sent to it."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import click

from anonpsy.cli import main
from anonpsy.cliutil import handle_errors
from anonpsy.errors import AnonpsyError
from anonpsy.llm_backend.cli_options import LLMServerArgs, llm_server_options

#: The probe's text: synthetic, so no case text ever goes to a server that is only being checked.
PROBE_TEXT = "The synthetic patient slept well last night."


@main.group("llm")
def llm_group() -> None:
    """Tools for the language-model server of the llm backend.

    \b
    Example:
      anonpsy llm check --llm-url http://127.0.0.1:8080/v1
    """


@llm_group.command("check")
@llm_server_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@handle_errors
def llm_check(llm_server: LLMServerArgs, as_json: bool) -> None:
    """Check the language-model server that --backend llm would use.

    Lists the models the server offers, finds the structured-output form it accepts (the profile's form, then its
    fallbacks) with one small synthetic request — no case text is sent, no reply is cached — and times that round
    trip. The server comes from --llm-config, or --llm-url / OPENAI_BASE_URL (key in OPENAI_API_KEY); loopback
    only unless the configuration file allows remote servers.

    Exit 0 when a schema-valid reply came back; 1 when the server answers but its replies are unusable; 2 when it
    cannot be reached, refuses the key or the model, or the configuration is wrong (one line CODE location:
    message).

    \b
    Example:
      anonpsy llm check --llm-url http://127.0.0.1:8080/v1
    """
    from anonpsy.llm.client import LLMClient
    from anonpsy.llm.config import host_class
    from anonpsy.llm.errors import LLMError, LLMHTTPError, LLMReplyError
    from anonpsy.llm.prompts import load_template

    config = llm_server.resolve()
    probe = config.model_copy(update={"cache_path": None, "retries": min(config.retries, 1)})
    ep = probe.endpoint
    where = ep.base_url
    report: dict[str, Any] = {
        "endpoint": ep.base_url,
        "host": host_class(ep.base_url),
        "profile": ep.name,
        "model": ep.model,
        "api_key": f"from {ep.api_key_env}" if probe.api_key() else "none",
        "structured_output_chain": list(ep.mode_chain()),
    }
    with LLMClient(probe) as client:
        try:
            report["models"] = client.list_models()
        except LLMHTTPError as exc:
            if exc.status in (401, 403):
                raise AnonpsyError(exc.code, exc.message, where) from None
            report["models"] = None
            report["models_error"] = f"HTTP {exc.status}"
        except LLMError as exc:
            raise AnonpsyError(exc.code, exc.message, where) from None
        t0 = time.perf_counter()
        error: LLMReplyError | None = None
        try:
            client.complete_json(
                load_template("echo"), {"text": PROBE_TEXT}, operator="extraction", case_id="llm-check"
            )
        except LLMReplyError as exc:
            error = exc
        except LLMError as exc:
            raise AnonpsyError(exc.code, exc.message, where) from None
        calls = client.metrics.summary("llm-check")
        report.update({
            "structured_output": client.structured_output if error is None else None,
            "round_trip_ms": round((time.perf_counter() - t0) * 1000, 1),
            "requests": calls["requests"],
            "retries": calls["retries"],
            "reasks": calls["reasks"],
            "ok": error is None,
        })
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        _print(report)
    if error is not None:
        click.echo(AnonpsyError(error.code, error.message, where).one_line(), err=True)
        sys.exit(1)


def _print(report: dict[str, Any]) -> None:
    models = report["models"]
    if models is None:
        listed = f"not listed ({report['models_error']})"
    else:
        listed = f"{len(models)} listed: {', '.join(models) if models else '-'}"
    model = report["model"]
    if models and model not in models:
        model += " (not listed; the server may need --llm-model NAME)" if len(models) > 1 else \
            f" (not listed; a single-model server usually answers any name, else --llm-model {models[0]})"
    chain = " → ".join(report["structured_output_chain"])
    form = report["structured_output"] or "none of the forms gave a schema-valid reply"
    extra = "".join(f", {report[k]} {k}" for k in ("retries", "reasks") if report[k])
    rows = [
        ("endpoint", f"{report['endpoint']} ({report['host']}, profile {report['profile']})"),
        ("api key", report["api_key"]),
        ("models", listed),
        ("model", model),
        ("structured output", f"{form} (tried in order: {chain})"),
        ("round trip", f"{report['round_trip_ms']:.0f} ms, {report['requests']} request(s){extra}"),
        ("result", "ok" if report["ok"] else "FAILED"),
    ]
    for key, value in rows:
        click.echo(f"{key:<18} {value}")
