"""Extraction E: narrative text → case graph.

``extract(text, case_id=...)`` runs the deterministic rules backend. The LLM backend lives in
:mod:`anonpsy.llm_backend` and reuses this backend for round-trip checks.
"""

from __future__ import annotations

from anonpsy.extract.assembly.build import extract

__all__ = ["extract"]
