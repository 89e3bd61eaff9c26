"""Generation D: graph → clinical case history text.

``render(graph, seed=...)`` is the deterministic template backend (``rules``). The narrative follows the
macro-structure lead → chronological history → past/family history and tests, narrates every (item, duration)
exactly once, and states diagnoses and symptoms in words the rules extractor reads back (round trip).
"""

from __future__ import annotations

from anonpsy.generate.plan import NarrativePlan, plan_narrative
from anonpsy.generate.templates import render

__all__ = ["NarrativePlan", "plan_narrative", "render"]
