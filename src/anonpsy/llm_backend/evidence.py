"""Verification of model-quoted text against the source narrative.

Every ``evidence_text`` (and every STEB field, test result or visit phrase the extraction copies) must be found in
the source: exactly after whitespace and case folding, or with rapidfuzz ``partial_ratio`` of at least
:data:`EVIDENCE_MIN_SCORE`. Items whose evidence cannot be found are re-asked once and then dropped with a note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from rapidfuzz import fuzz

EVIDENCE_MIN_SCORE = 90.0
_QUOTES = "\"'“”‘’«»`"
_ELLIPSIS = re.compile(r"^(?:\.\.\.|…)\s*|\s*(?:\.\.\.|…)$")


def fold(text: str) -> str:
    """Lowercase, typographic quotes unified, whitespace collapsed."""
    t = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    return " ".join(t.lower().split())


def clean_quote(fragment: str) -> str:
    """A quoted fragment without surrounding quotes, ellipses and whitespace."""
    frag = fragment.strip().strip(_QUOTES).strip()
    frag = _ELLIPSIS.sub("", frag)
    return frag.strip().strip(_QUOTES).strip()


@dataclass(frozen=True)
class SourceText:
    """The source narrative, prepared for evidence look-ups."""

    text: str
    min_score: float = EVIDENCE_MIN_SCORE
    _cache: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def folded(self) -> str:
        return fold(self.text)

    def contains(self, fragment: str | None) -> bool:
        """Whether ``fragment`` is found in the source (exactly after folding, or partial_ratio ≥ min_score)."""
        if fragment is None:
            return False
        frag = fold(clean_quote(fragment))
        if len(frag) < 2:
            return False
        hit = self._cache.get(frag)
        if hit is None:
            if frag in self.folded:
                hit = True
            elif len(frag) > len(self.folded):
                hit = False
            else:
                hit = fuzz.partial_ratio(frag, self.folded, score_cutoff=self.min_score) >= self.min_score
            self._cache[frag] = hit
        return hit

    def locate(self, fragment: str | None) -> int | None:
        """Start offset (in the original text) of the best match of ``fragment``, or None when not found."""
        if not fragment or not self.contains(fragment):
            return None
        frag = clean_quote(fragment)
        i = self.text.lower().find(frag.lower())
        if i >= 0:
            return i
        al = fuzz.partial_ratio_alignment(frag.lower(), self.text.lower())
        return int(al.dest_start) if al is not None else None


def invented(fields: dict[str, str | None], source: SourceText) -> list[str]:
    """Names of the non-empty fields whose text is not found in the source."""
    return [
        name
        for name, value in fields.items()
        if value is not None and value.strip() and not source.contains(value)
    ]
