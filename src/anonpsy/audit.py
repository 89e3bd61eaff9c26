"""Provenance of a de-identification run: every changed field, the rule that allowed it, and the seed.

The audit is written to a file the user controls, next to the outputs; it holds before/after values and is as
sensitive as the input. It is never logged.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FactCheck(_Model):
    """One fact whose status a text does not state as the graph says: ``expected`` None is a fact the text adds,
    ``found`` None a fact the text does not state."""

    kind: str = Field(description="diagnosis, treatment, symptom or family.")
    key: str = Field(description="Normalised identity, e.g. dsm:major_depressive_disorder or lex:sertraline.")
    node_id: str | None = None
    expected: str | None = Field(default=None, description="Status in the graph, e.g. provisional/current.")
    found: str | None = Field(default=None, description="Status the rules extractor reads in the text.")


class RoundTripRecord(_Model):
    """The generated text read back by the rules extractor and compared with the graph, fact by fact."""

    checked: int = Field(0, description="Facts of the graph compared.")
    agreed: int = Field(0, description="Facts read back with the graph's status.")
    unverifiable: list[str] = Field(default_factory=list, description=(
        "Keys of facts whose plain sentence the extractor does not read back even alone: not checkable here."))
    first_pass: list[FactCheck] = Field(default_factory=list, description="Disagreements of the first text.")
    repaired: list[str] = Field(default_factory=list, description="Pieces re-written plainly to repair them.")
    remaining: list[FactCheck] = Field(default_factory=list, description="Disagreements left: violations.")


class CopyGuardRecord(_Model):
    """Runs of words copied from the source beyond the limit (drug names with doses excepted)."""

    limit: int = 12
    longest_run: int = Field(0, description="Longest copied run of the final text.")
    rewritten: list[str] = Field(default_factory=list, description="Pieces re-written because they copied.")
    remaining: int = Field(0, description="Runs over the limit left in the final text: violations.")


class GenerationRecord(_Model):
    """How the text was generated from the perturbed graph, and what was checked."""

    backend: str = "rules"
    levels: dict[str, int] = Field(default_factory=dict, description=(
        "Pieces not written as narrative: 1 plain, 2 plain without free text or time phrases."))
    dropped: list[str] = Field(default_factory=list, description=(
        "Graph paths of free text left out of the text (level 2 pieces); the perturbed graph keeps them."))
    round_trip: RoundTripRecord | None = None
    copy_guard: CopyGuardRecord | None = None


class Change(_Model):
    path: str = Field(
        description="Dotted path of the changed field, e.g. demographics.age or symptoms[sx_1].contexts[0].situation"
    )
    rule_id: str = Field(description="Id of the rule (file-qualified) that allowed the change.")
    old: Any = None
    new: Any = None
    detail: str | None = None


class Kept(_Model):
    path: str
    reason: str = Field(description="Code explaining why the field was kept.")
    rule_id: str | None = None
    detail: str | None = None


class Unmapped(_Model):
    path: str
    start: int
    end: int
    reason: str


class Fallback(_Model):
    """A step of the llm backend that the deterministic rules backend did instead, and why."""

    stage: Literal["extraction", "perturbation", "generation"]
    step: str = Field(description="Template id, with the item for per-item steps: perturb_steb:sx_insomnia, "
                                  "generate_block:3, or extract_graph for the whole graph.")
    backend: Literal["rules-fallback"] = "rules-fallback"
    code: str = Field(description="Error code of the step's last failure (E123, E124, E125, E127).")
    template_id: str | None = None
    attempts: int = Field(default=0, description="HTTP requests or replies the step used before giving up.")
    error: str = Field(description="The one-line error (codes, template ids and counts only; no case text).")


class Audit(_Model):
    case_id: str
    seed: int
    operator: str = "perturb"
    backend: str = "rules"
    changes: list[Change] = Field(default_factory=list)
    kept: list[Kept] = Field(default_factory=list)
    unmapped_values: list[Unmapped] = Field(default_factory=list)
    generalized: list[Change] = Field(default_factory=list)
    generation: GenerationRecord | None = None
    violations: list[dict[str, Any]] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    fallbacks: list[Fallback] = Field(default_factory=list)

    def changed_paths(self) -> set[str]:
        return {c.path for c in self.changes}
