"""Detection of protected health information (PHI) in clinical text by rule recognizers."""

from __future__ import annotations

from anonpsy.phi.spans import Span, merge_adjacent, resolve_overlaps

__all__ = ["Span", "merge_adjacent", "resolve_overlaps"]
