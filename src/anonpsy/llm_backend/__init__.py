"""The ``llm`` backend of extraction E, perturbation P and generation D.

``deid_with_llm(text, seed=, case_id=, llm=, options=)`` runs the whole pipeline against an OpenAI-compatible server
through :class:`anonpsy.llm.LLMClient`, under the same rules and invariants as the deterministic backend. A
language-model fault is first retried by the client (transient faults with backoff, then one re-ask); a step that
still fails is done by the deterministic rules backend for that step alone — an extraction stage, a perturbation
field, a generation block — and recorded in ``audit.fallbacks`` (``backend: rules-fallback``, the error code, the
step). Faults that would fail every step (server unreachable, 401/403/404, configuration) end the case with a
typed :class:`anonpsy.llm.errors.LLMError`; no partial result is returned.

Options: ``diagnoses`` (list of labels or rule ids given as metadata), ``no_steb`` (one episode sentence per
symptom instead of STEB frames), ``no_retro`` (rewrite contexts in chronological order), ``strict_llm`` (no rules
fallback: the first step that fails ends the case).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from anonpsy.llm_backend.cli_options import ablation_options, llm_ablation_options
from anonpsy.llm_backend.steps import E127_LLM_BACKEND, LLMBackendError

if TYPE_CHECKING:
    from anonpsy.pipeline import DeidResult

__all__ = ["E127_LLM_BACKEND", "LLMBackendError", "ablation_options", "deid_with_llm", "llm_ablation_options"]


def deid_with_llm(
    text: str, *, seed: int = 0, case_id: str = "case", llm: Any = None, options: dict[str, Any] | None = None
) -> DeidResult:
    """De-identify one narrative with the LLM backend; returns :class:`anonpsy.pipeline.DeidResult`."""
    from anonpsy.llm_backend.extract_llm import extract_with_llm
    from anonpsy.llm_backend.generate_llm import generate_with_llm
    from anonpsy.llm_backend.perturb_llm import perturb_with_llm
    from anonpsy.llm_backend.steps import StepContext, require_client
    from anonpsy.perturb.contexts import SourceIdentifiers
    from anonpsy.pipeline import DeidResult, leak_audit

    client = require_client(llm)
    opts = dict(options or {})
    ctx = StepContext(
        llm=client, case_id=case_id, seed=seed, strict=bool(opts.get("strict_llm")), source_text=text,
        identifiers=SourceIdentifiers(text),
    )
    graph = extract_with_llm(text, ctx, options=opts)
    e_notes = list(ctx.notes)
    ctx.notes.clear()
    perturbed, audit = perturb_with_llm(graph, ctx, options=opts)
    out = generate_with_llm(perturbed, ctx, audit)
    audit.notes = [*e_notes, *ctx.notes, *audit.notes]
    audit.fallbacks = list(ctx.fallbacks)
    kept: set[str] = set()
    age0, age1 = graph.demographics.age, perturbed.demographics.age
    if age0 is not None and age0 == age1:
        kept.add(f"{age0}-year-old")
    # The rules backend's own audit: ages that moved with the patient's perturbed age are not leaks.
    shift = age1 - age0 if age0 is not None and age1 is not None else 0
    leaks = leak_audit(
        text, out, exclude=kept, patient_age=age0, age_shift=shift, source_spans=ctx.identifiers.spans
    )
    stats: dict[str, Any] = {
        "backend": "llm",
        "llm_calls": ctx.calls,
        "fallbacks": len(ctx.fallbacks),
        "options": {k: opts[k] for k in ("no_steb", "no_retro", "strict_llm") if k in opts},
    }
    metrics = getattr(client, "metrics", None)
    if metrics is not None and hasattr(metrics, "summary"):
        summary = metrics.summary(case_id)
        stats.update(
            {
                k: summary[k]
                for k in ("requests", "retries", "reasks", "cache_hits", "prompt_tokens", "completion_tokens")
                if k in summary
            }
        )
    return DeidResult(
        case_id=case_id, original=graph, perturbed=perturbed, text=out, audit=audit, leaks=leaks, stats=stats
    )
