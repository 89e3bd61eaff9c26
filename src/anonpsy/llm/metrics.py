"""Per-case accounting of language-model calls: requests, cache hits, retries, re-asks, tokens and latency.

Only counts and timings are recorded, never prompt or reply text.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class CallRecord:
    """One ``complete_*`` call as seen by the client."""

    template_id: str
    template_version: int
    operator: str
    case_id: str | None
    cache_hit: bool
    requests: int = 0
    retries: int = 0
    reasks: int = 0
    fallbacks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    ok: bool = True


class Metrics:
    """Thread-safe recorder of :class:`CallRecord` items with per-case summaries."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[CallRecord] = []
        # Calls by case, so that a case's summary does not scan every call of a long batch.
        self._by_case: dict[str, list[CallRecord]] = {}

    def record(self, record: CallRecord) -> None:
        """Add one call."""
        with self._lock:
            self._records.append(record)
            if record.case_id is not None:
                self._by_case.setdefault(record.case_id, []).append(record)

    def records(self, case_id: str | None = None) -> list[CallRecord]:
        """All calls, or those of one case."""
        with self._lock:
            if case_id is None:
                return list(self._records)
            return list(self._by_case.get(case_id, ()))

    def case_ids(self) -> list[str]:
        """Case ids seen so far, in first-seen order."""
        with self._lock:
            return list(self._by_case)

    def summary(self, case_id: str | None = None) -> dict[str, Any]:
        """Totals for one case (or all calls): calls, cache hits, requests, retries, tokens, latency."""
        items = self.records(case_id)
        by_template: dict[str, dict[str, int]] = {}
        for r in items:
            slot = by_template.setdefault(
                f"{r.template_id}@v{r.template_version}", {"calls": 0, "cache_hits": 0, "failures": 0}
            )
            slot["calls"] += 1
            slot["cache_hits"] += int(r.cache_hit)
            slot["failures"] += int(not r.ok)
        latencies = [r.latency_s for r in items if not r.cache_hit]
        return {
            "case_id": case_id,
            "calls": len(items),
            "cache_hits": sum(r.cache_hit for r in items),
            "requests": sum(r.requests for r in items),
            "retries": sum(r.retries for r in items),
            "reasks": sum(r.reasks for r in items),
            "fallbacks": sum(r.fallbacks for r in items),
            "failures": sum(not r.ok for r in items),
            "prompt_tokens": sum(r.prompt_tokens for r in items),
            "completion_tokens": sum(r.completion_tokens for r in items),
            "latency_s_total": round(sum(latencies), 6),
            "latency_s_max": round(max(latencies, default=0.0), 6),
            "by_template": by_template,
        }

    def as_list(self, case_id: str | None = None) -> list[dict[str, Any]]:
        """The records as plain dicts (for reports)."""
        return [asdict(r) for r in self.records(case_id)]
