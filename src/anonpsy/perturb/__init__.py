"""Perturbation P: a case graph in, a perturbed case graph and its audit out.

* :mod:`~anonpsy.perturb.demographics` — age, sex, ethnicity and occupation under the DSM and demographic rules;
* :mod:`~anonpsy.perturb.test_values` — test values resampled within clinically equivalent pools;
* :mod:`~anonpsy.perturb.contexts` — identifying detail in STEB frames and narrative fields;
* :mod:`~anonpsy.perturb.anchors` — rare proper-noun anchors (shared with the leak audit);
* :mod:`~anonpsy.perturb.check` — ``check(G, G~)``, the invariants every perturbation keeps.

``perturb(graph, seed)`` runs the attribute steps (demographics, then test values) deterministically; the context
step runs after it in :func:`anonpsy.pipeline.deid_text` because it needs the source text.
"""

from __future__ import annotations

from anonpsy.audit import Audit
from anonpsy.graph import CaseGraph
from anonpsy.perturb.check import check
from anonpsy.perturb.demographics import perturb_demographics, step_rng
from anonpsy.perturb.test_values import perturb_test_values

__all__ = ["check", "perturb", "perturb_attributes"]


def perturb(graph: CaseGraph, seed: int) -> tuple[CaseGraph, Audit]:
    """Perturb identifying attributes of a (temporally normalised) graph; returns (graph, audit)."""
    g, audit = perturb_attributes(graph, seed)
    audit.violations = [v.model_dump() for v in check(graph, g)]
    return g, audit


def perturb_attributes(graph: CaseGraph, seed: int) -> tuple[CaseGraph, Audit]:
    """The steps of :func:`perturb` without its closing check: for a caller that perturbs further and checks the
    final graph itself (:func:`anonpsy.pipeline.deid_text`), which would otherwise check twice and keep only the
    second result."""
    audit = Audit(case_id=graph.case_id, seed=seed)
    g = perturb_demographics(graph, seed, audit)
    g = perturb_test_values(g, step_rng(seed, graph.case_id, "tests"), audit)
    return g, audit
