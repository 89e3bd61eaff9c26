"""LLM-judge tasks of the evaluation, each one versioned prompt template with a validated reply.

* **Diagnosis prediction** (``judge_diagnosis``): the DSM-5-TR diagnoses a psychiatrist gives from a narrative
  alone; scored against the case's reference diagnoses with the diagnosis soft-F1.
* **Diagnosis acceptability** (``judge_acceptability``): given the reference diagnoses, whether a narrative still
  supports every one of them (binary, with the kinds of problem found).
* **Insider re-identification** (``judge_reident``): the judge is primed with the original record and sees the
  outputs of two methods as versions A and B, in an order drawn per case and pair from the run seed
  (:func:`plan_pairs`); it scores both on the 1–5 rubric and picks the more recallable one.

Every call goes through :class:`anonpsy.llm.LLMClient` (JSON Schema, then pydantic, one re-ask), with a seed
derived from the run seed, the task, the case and the methods (:func:`derive_seed`), so a rerun asks the same
questions. Replies never quote the narrative: problems and cues are closed vocabularies.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from anonpsy.evaluate.methods import llm_fingerprint, prompts_digest

JUDGE_VERSION = 1
TEMPLATE_VERSION = 1
DIAGNOSIS_TEMPLATE = "judge_diagnosis"
ACCEPTABILITY_TEMPLATE = "judge_acceptability"
REIDENT_TEMPLATE = "judge_reident"
TASKS: tuple[str, ...] = ("diagnosis", "acceptability", "reident")

AcceptabilityProblem = Literal[
    "criteria_not_described", "duration_not_met", "onset_inconsistent", "exclusion_not_addressed",
    "contradicted", "specifier_unsupported", "severity_inconsistent", "other",
]
Cue = Literal[
    "name", "place", "institution", "date", "age", "occupation", "family", "event", "quote", "score", "phrase",
    "none",
]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DiagnosisReply(_Reply):
    """Reply of ``judge_diagnosis``."""

    diagnoses: list[str] = Field(max_length=12)


class AcceptabilityReply(_Reply):
    """Reply of ``judge_acceptability``."""

    acceptable: bool
    problems: list[AcceptabilityProblem] = Field(max_length=20)


class ReidentReply(_Reply):
    """Reply of ``judge_reident``: rubric scores of versions A and B and the more recallable one."""

    score_a: int = Field(ge=1, le=5)
    score_b: int = Field(ge=1, le=5)
    more_recallable: Literal["A", "B", "tie"]
    cues_a: list[Cue] = Field(max_length=12)
    cues_b: list[Cue] = Field(max_length=12)


def derive_seed(seed: int, *parts: str) -> int:
    """A stable 31-bit seed from the run seed and names (SHA-256; independent of Python's hash salt)."""
    h = hashlib.sha256("\x1f".join([str(seed), *parts]).encode("utf-8")).digest()
    return int.from_bytes(h[:4], "big") & 0x7FFFFFFF


@dataclass(frozen=True)
class PairPlan:
    """One A/B comparison: which method is shown as A and which as B, and the seeds that decided it."""

    case_id: str
    method_a: str
    method_b: str
    order_seed: int
    llm_seed: int
    swapped: bool

    @property
    def methods(self) -> tuple[str, str]:
        """(method shown as A, method shown as B)."""
        return self.method_a, self.method_b


def plan_pairs(methods: Sequence[str], case_id: str, seed: int) -> list[PairPlan]:
    """Every unordered pair of ``methods`` for one case, each in a seeded random A/B order.

    The order of a pair depends only on the run seed, the case id and the two method names (not on which other
    methods run), so adding a method does not reshuffle the existing comparisons.
    """
    plans: list[PairPlan] = []
    for i, first in enumerate(methods):
        for second in methods[i + 1:]:
            lo, hi = sorted((first, second))
            order_seed = derive_seed(seed, "reident-order", case_id, lo, hi)
            swapped = random.Random(order_seed).random() < 0.5
            a, b = (hi, lo) if swapped else (lo, hi)
            plans.append(PairPlan(case_id, a, b, order_seed, derive_seed(seed, REIDENT_TEMPLATE, case_id, a, b),
                                  swapped))
    return plans


def judge_config(llm: Any) -> dict[str, Any]:
    """What judge replies depend on besides their inputs and seed: templates and model settings."""
    return {"judge_version": JUDGE_VERSION, "prompts": prompts_digest(("judge_",)), "llm": llm_fingerprint(llm)}


def predict_diagnoses(llm: Any, text: str, *, seed: int, case_id: str) -> DiagnosisReply:
    """The diagnoses the judge reads off ``text`` alone."""
    from anonpsy.llm.prompts import load_template

    reply: DiagnosisReply = llm.complete_json(
        load_template(DIAGNOSIS_TEMPLATE, TEMPLATE_VERSION), {"text": text}, operator="judge",
        model_cls=DiagnosisReply, seed=seed, case_id=case_id,
    )
    return reply


def judge_acceptability(
    llm: Any, text: str, diagnoses: Sequence[str], *, seed: int, case_id: str
) -> AcceptabilityReply:
    """Whether the reference ``diagnoses`` are acceptable for ``text``."""
    from anonpsy.llm.prompts import load_template

    listed = "\n".join(f"- {d}" for d in diagnoses)
    reply: AcceptabilityReply = llm.complete_json(
        load_template(ACCEPTABILITY_TEMPLATE, TEMPLATE_VERSION), {"text": text, "diagnoses": listed},
        operator="judge", model_cls=AcceptabilityReply, seed=seed, case_id=case_id,
    )
    return reply


def judge_reident(
    llm: Any, original: str, text_a: str, text_b: str, *, seed: int, case_id: str
) -> ReidentReply:
    """Insider re-identification of versions A and B, primed with ``original``."""
    from anonpsy.llm.prompts import load_template

    reply: ReidentReply = llm.complete_json(
        load_template(REIDENT_TEMPLATE, TEMPLATE_VERSION),
        {"original": original, "text_a": text_a, "text_b": text_b},
        operator="judge", model_cls=ReidentReply, seed=seed, case_id=case_id,
    )
    return reply


def method_scores(plan: PairPlan, reply: ReidentReply) -> dict[str, int]:
    """Rubric score per method of one comparison."""
    return {plan.method_a: reply.score_a, plan.method_b: reply.score_b}


def picked_method(plan: PairPlan, reply: ReidentReply) -> str | None:
    """The method judged more recallable, or None for a tie."""
    if reply.more_recallable == "tie":
        return None
    return plan.method_a if reply.more_recallable == "A" else plan.method_b


def consistent(reply: ReidentReply) -> bool:
    """Whether the pick agrees with the scores (the picked version does not score lower than the other)."""
    if reply.more_recallable == "A":
        return reply.score_a >= reply.score_b
    if reply.more_recallable == "B":
        return reply.score_b >= reply.score_a
    return True
