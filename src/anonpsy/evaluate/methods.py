"""The de-identification methods the evaluation compares, each a function of (case text, seed, client).

==================  =======  ==========================================================================
method              LLM      what runs
==================  =======  ==========================================================================
``anonpsy-rules``   no       :func:`anonpsy.pipeline.deid_text`, rules backend (E → P → D)
``phi-mask``        no       :func:`anonpsy.phi.pipeline.mask_text`, surrogate operator (masking stage alone)
``anonpsy-llm``     yes      :func:`anonpsy.pipeline.deid_text`, llm backend
``llm-only``        yes      constrained clinical rewrite, then a self-critique pass (two prompt templates)
``anonpsy-nosteb``  yes      llm backend with ``no_steb`` (one episode sentence per symptom, no STEB frames)
``anonpsy-noretro`` yes      llm backend with ``no_retro`` (contexts rewritten in chronological order)
==================  =======  ==========================================================================

Every method returns a :class:`MethodOutput`: the output text, the graph the text was generated from (when
the method has one; used by the round-trip structure score) and a few counters (never narrative text).
:func:`method_config` gives what, besides the seed and the case text, an output depends on; it goes into the
cache key. The surrogates of ``phi-mask`` are keyed by a secret derived from the seed, so an evaluation run is
reproducible; a real release uses a secret key of its own (``ANONPSY_HMAC_KEY``).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from anonpsy import errors
from anonpsy.errors import AnonpsyError
from anonpsy.evaluate.cache import files_digest


@dataclass(frozen=True)
class MethodSpec:
    """A method's name, version (bump it when its output would change), whether it needs a server."""

    name: str
    version: int
    needs_llm: bool
    description: str


METHODS: dict[str, MethodSpec] = {
    s.name: s
    for s in (
        MethodSpec("anonpsy-rules", 1, False, "Anonpsy pipeline, rules backend"),
        MethodSpec("phi-mask", 1, False, "PHI masking with surrogates (masking stage alone)"),
        MethodSpec("anonpsy-llm", 1, True, "Anonpsy pipeline, llm backend"),
        MethodSpec("llm-only", 1, True, "LLM rewrite + self-critique baseline"),
        MethodSpec("anonpsy-nosteb", 1, True, "llm backend without STEB frames (ablation)"),
        MethodSpec("anonpsy-noretro", 1, True, "llm backend without retrograde rewriting (ablation)"),
    )
}
DEFAULT_METHODS: tuple[str, ...] = ("anonpsy-rules", "phi-mask", "anonpsy-llm", "llm-only")
_ABLATIONS: dict[str, dict[str, bool]] = {
    "anonpsy-llm": {},
    "anonpsy-nosteb": {"no_steb": True},
    "anonpsy-noretro": {"no_retro": True},
}
REWRITE_TEMPLATE = "llm_only_rewrite"
CRITIQUE_TEMPLATE = "llm_only_critique"
TEMPLATE_VERSION = 1


@dataclass(frozen=True)
class MethodOutput:
    """One method's output for one case. ``graph`` is the generating graph's JSON data, when there is one."""

    text: str
    graph: dict[str, Any] | None = None
    stats: dict[str, Any] = field(default_factory=dict)


def parse_methods(spec: str | Sequence[str]) -> list[str]:
    """Method names from ``"a,b,c"`` (or a sequence), in order, without repeats; ``all`` names every method.

    Raises AnonpsyError (E109) naming the unknown method and the known ones.
    """
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    out: list[str] = []
    for raw in items:
        name = raw.strip().lower()
        if not name:
            continue
        names = list(METHODS) if name == "all" else [name]
        for n in names:
            if n not in METHODS:
                raise AnonpsyError(
                    errors.E109_BAD_OPTION, f"unknown method {n!r}; choose from {', '.join(METHODS)} or all",
                    "--methods",
                )
            if n not in out:
                out.append(n)
    if not out:
        raise AnonpsyError(errors.E109_BAD_OPTION, "no method given", "--methods")
    return out


# ----------------------------------------------------------------------------------------------------
# Configuration fingerprints (part of the cache key)


@lru_cache(maxsize=1)
def rules_digest() -> str:
    """Digest of every file of the rules directory (a rule change invalidates cached outputs)."""
    from anonpsy.paths import rules_dir

    root = rules_dir()
    return files_digest([p for p in root.rglob("*") if p.is_file()], root)


@lru_cache(maxsize=16)
def prompts_digest(prefixes: tuple[str, ...]) -> str:
    """Digest of the prompt templates whose file names start with one of ``prefixes``."""
    from anonpsy.llm.prompts import prompts_dir

    root = prompts_dir()
    return files_digest([p for p in root.glob("*.md") if p.name.startswith(prefixes)], root)


def llm_fingerprint(llm: Any) -> dict[str, Any]:
    """What of a client's configuration shapes its replies: profile, model, output form, temperatures, seed.

    The endpoint address is left out on purpose: the same model served on another port gives the same outputs.
    """
    config = getattr(llm, "config", None)
    if config is None:
        return {"client": type(llm).__name__}
    ep = config.endpoint
    return {
        "profile": ep.name,
        "model": ep.model,
        "structured_output": ep.structured_output,
        "max_tokens": ep.max_tokens,
        "temperatures": config.temperatures.model_dump(),
        "seed": config.seed,
    }


def method_config(name: str, llm: Any = None) -> dict[str, Any]:
    """The configuration an output of ``name`` depends on, besides its version, the seed and the text."""
    from anonpsy import __version__

    base: dict[str, Any] = {"anonpsy": __version__}
    if name == "anonpsy-rules":
        return {**base, "rules": rules_digest()}
    if name == "phi-mask":
        return {**base, "rules": rules_digest(), "operator": "surrogate"}
    if name in _ABLATIONS:
        return {**base, "rules": rules_digest(), "options": _ABLATIONS[name],
                "prompts": prompts_digest(("extract_", "perturb_", "generate_")), "llm": llm_fingerprint(llm)}
    if name == "llm-only":
        return {**base, "prompts": prompts_digest((REWRITE_TEMPLATE, CRITIQUE_TEMPLATE)), "llm": llm_fingerprint(llm)}
    raise KeyError(name)


# ----------------------------------------------------------------------------------------------------
# Running


def surrogate_key(seed: int) -> bytes:
    """The HMAC key of ``phi-mask`` surrogates in an evaluation run: derived from the seed (reproducible)."""
    return hashlib.sha256(f"anonpsy-evaluate-surrogates:{seed}".encode()).digest()


def _deid(text: str, *, seed: int, case_id: str, backend: str, llm: Any, options: dict[str, Any]) -> MethodOutput:
    from anonpsy.graphio import graph_to_data
    from anonpsy.pipeline import deid_text

    result = deid_text(text, seed=seed, backend=backend, case_id=case_id, llm=llm, options=options or None)
    stats: dict[str, Any] = {
        "violations": len(result.audit.violations),
        "pipeline_leaks": len(result.leaks.leaks),
    }
    if isinstance(result.stats.get("llm_calls"), int):
        stats["llm_calls"] = result.stats["llm_calls"]
    return MethodOutput(text=result.text, graph=graph_to_data(result.perturbed), stats=stats)


def _phi_mask(text: str, *, seed: int, case_id: str) -> MethodOutput:
    from anonpsy.phi.pipeline import mask_text

    result = mask_text(text, operator="surrogate", key=surrogate_key(seed), document_id=case_id)
    return MethodOutput(text=result.text, graph=None, stats={"spans": len(result.spans)})


IssueCategory = Literal[
    "name", "place", "institution", "date", "age", "occupation", "relationship", "event", "quote", "score",
    "phrase", "other_identifier", "diagnosis", "temporal", "causal", "severity", "trajectory", "treatment",
    "structure",
]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RewriteReply(_Reply):
    """Reply of ``llm_only_rewrite``: the rewritten narrative."""

    text: str = Field(min_length=1)


class CritiqueIssue(_Reply):
    """One problem the critique found: its category and what was done (never the text itself)."""

    category: IssueCategory
    action: Literal["removed", "changed", "repaired"]


class CritiqueReply(_Reply):
    """Reply of ``llm_only_critique``: the problems found and the corrected narrative."""

    issues: list[CritiqueIssue]
    text: str = Field(min_length=1)


def llm_only(text: str, *, seed: int, case_id: str, llm: Any) -> MethodOutput:
    """The LLM-only baseline: a constrained clinical rewrite, then a self-critique pass over it."""
    from anonpsy.llm.prompts import load_template

    draft = llm.complete_json(
        load_template(REWRITE_TEMPLATE, TEMPLATE_VERSION), {"text": text}, operator="baseline_rewrite",
        model_cls=RewriteReply, seed=seed, case_id=case_id,
    )
    final = llm.complete_json(
        load_template(CRITIQUE_TEMPLATE, TEMPLATE_VERSION), {"original": text, "draft": draft.text},
        operator="critique", model_cls=CritiqueReply, seed=seed, case_id=case_id,
    )
    counts = Counter(f"{i.action}:{i.category}" for i in final.issues)
    stats: dict[str, Any] = {"critique_issues": len(final.issues),
                             **{f"critique.{k}": v for k, v in sorted(counts.items())}}
    return MethodOutput(text=final.text, graph=None, stats=stats)


def run_method(name: str, text: str, *, seed: int, case_id: str, llm: Any = None) -> MethodOutput:
    """Run method ``name`` on one case. LLM methods need ``llm`` (an :class:`anonpsy.llm.LLMClient`)."""
    spec = METHODS.get(name)
    if spec is None:
        raise AnonpsyError(errors.E109_BAD_OPTION, f"unknown method {name!r}", "--methods")
    if spec.needs_llm and llm is None:
        raise AnonpsyError(errors.E109_BAD_OPTION, f"method {name} needs a language-model server; "
                                                   "give --llm-config", "--llm-config")
    if name == "anonpsy-rules":
        return _deid(text, seed=seed, case_id=case_id, backend="rules", llm=None, options={})
    if name == "phi-mask":
        return _phi_mask(text, seed=seed, case_id=case_id)
    if name == "llm-only":
        return llm_only(text, seed=seed, case_id=case_id, llm=llm)
    return _deid(text, seed=seed, case_id=case_id, backend="llm", llm=llm, options=dict(_ABLATIONS[name]))
