"""Extraction E: narrative text → case graph.

``extract(text, case_id=...)`` runs the deterministic rules backend, one package per step:

* :mod:`~anonpsy.extract.sections` — sections, sentences, clauses;
* :mod:`~anonpsy.extract.mentions` — what the text names and where (demographics, dates and durations,
  diagnoses, symptoms, drugs, therapies, relatives);
* :mod:`~anonpsy.extract.assertion` — whether each mention is asserted, and whose it is (ConText);
* :mod:`~anonpsy.extract.assembly` — nodes, durations, STEB frames, edges and the visit event.

The LLM backend lives in :mod:`anonpsy.llm_backend` and reuses these steps and this backend for round-trip checks.
"""

from __future__ import annotations

from anonpsy.extract.assembly.build import extract, extract_facts

__all__ = ["extract", "extract_facts"]
