"""Entity-level evaluation of PHI detection.

Gold and predicted spans of the same documents (same ids, same text) are compared in several ways:

* **lenient** entity matching: a gold and a predicted span match when they overlap and their texts have a
  Levenshtein normalized similarity of at least 0.6 (rapidfuzz); pairs are matched one-to-one, most similar
  first; reported type-agnostic and type-aware (types must also be equal);
* **strict** matching: identical offsets (and, type-aware, identical types);
* **token recall**: the share of word tokens inside gold spans that predicted spans cover completely;
* **all-or-nothing recall**: the share of documents (with at least one gold span) whose gold spans are all
  matched (lenient, type-agnostic), overall and per type (documents holding that type; masking under another
  label still protects the value, so matching ignores the label here);
* documents without gold spans that received predictions (over-masking) are counted.

Precision, recall and F1 are micro-averaged over all documents.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz.distance import Levenshtein

from anonpsy.errors import AnonpsyError
from anonpsy.phi.operators import M104_BAD_EVAL_INPUT
from anonpsy.phi.readers import Document, GoldSpan
from anonpsy.phi.recognizers import age_over_limit, is_year_only

MIN_SIMILARITY = 0.6
_TOKEN = re.compile(r"\w+")


@dataclass
class PRF:
    """Counts and precision/recall/F1."""

    tp_pred: int = 0
    tp_gold: int = 0
    n_pred: int = 0
    n_gold: int = 0

    @property
    def precision(self) -> float:
        """Matched predictions / predictions (1.0 when nothing was predicted)."""
        return self.tp_pred / self.n_pred if self.n_pred else 1.0

    @property
    def recall(self) -> float:
        """Matched gold spans / gold spans (1.0 when there is no gold span)."""
        return self.tp_gold / self.n_gold if self.n_gold else 1.0

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def add(self, other: PRF) -> None:
        """Accumulate another count."""
        self.tp_pred += other.tp_pred
        self.tp_gold += other.tp_gold
        self.n_pred += other.n_pred
        self.n_gold += other.n_gold

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
            "gold": self.n_gold,
            "predicted": self.n_pred,
            "matched_gold": self.tp_gold,
            "matched_predicted": self.tp_pred,
        }


def match_lenient(
    text: str, gold: Sequence[GoldSpan], pred: Sequence[GoldSpan], *, type_aware: bool
) -> list[tuple[int, int]]:
    """One-to-one (gold index, pred index) pairs: overlapping, similarity ≥ 0.6, most similar first."""
    cands: list[tuple[float, int, int]] = []
    for gi, g in enumerate(gold):
        gt = text[g.start : g.end]
        for pi, p in enumerate(pred):
            if p.start >= g.end or g.start >= p.end:
                continue
            if type_aware and p.type != g.type:
                continue
            sim = Levenshtein.normalized_similarity(gt, text[p.start : p.end])
            if sim >= MIN_SIMILARITY:
                cands.append((sim, gi, pi))
    cands.sort(key=lambda c: (-c[0], c[1], c[2]))
    used_g: set[int] = set()
    used_p: set[int] = set()
    pairs = []
    for _, gi, pi in cands:
        if gi in used_g or pi in used_p:
            continue
        used_g.add(gi)
        used_p.add(pi)
        pairs.append((gi, pi))
    return pairs


def match_strict(
    gold: Sequence[GoldSpan], pred: Sequence[GoldSpan], *, type_aware: bool
) -> list[tuple[int, int]]:
    """Pairs with identical offsets (and types when ``type_aware``)."""
    index: dict[tuple[int, int, str], list[int]] = defaultdict(list)
    for pi, p in enumerate(pred):
        index[(p.start, p.end, p.type if type_aware else "")].append(pi)
    pairs = []
    for gi, g in enumerate(gold):
        bucket = index.get((g.start, g.end, g.type if type_aware else ""))
        if bucket:
            pairs.append((gi, bucket.pop(0)))
    return pairs


def token_coverage(text: str, gold: Sequence[GoldSpan], pred: Sequence[GoldSpan]) -> tuple[int, int]:
    """(covered, total) gold tokens; a token is covered when it lies entirely inside one predicted span."""
    total = covered = 0
    for g in gold:
        for m in _TOKEN.finditer(text, g.start, g.end):
            total += 1
            if any(p.start <= m.start() and m.end() <= p.end for p in pred):
                covered += 1
    return covered, total


@dataclass
class EvalReport:
    """All metrics of one evaluation."""

    documents: int = 0
    lenient: PRF = field(default_factory=PRF)
    lenient_typed: PRF = field(default_factory=PRF)
    strict: PRF = field(default_factory=PRF)
    strict_typed: PRF = field(default_factory=PRF)
    per_type: dict[str, PRF] = field(default_factory=dict)
    tokens_covered: int = 0
    tokens_total: int = 0
    docs_with_gold: int = 0
    docs_all_recalled: int = 0
    per_type_docs: Counter[str] = field(default_factory=Counter)
    per_type_docs_recalled: Counter[str] = field(default_factory=Counter)
    docs_without_gold: int = 0
    docs_overmasked: int = 0
    #: Of those, documents where a masked span is a Safe Harbor identifier (not only a year or an age up to 89,
    #: which the masking policy may hide although Safe Harbor allows them).
    docs_overmasked_safe_harbor: int = 0

    @property
    def token_recall(self) -> float:
        """Covered gold tokens / gold tokens."""
        return self.tokens_covered / self.tokens_total if self.tokens_total else 1.0

    @property
    def all_or_nothing_recall(self) -> float:
        """Documents with every gold span matched / documents with gold spans."""
        return self.docs_all_recalled / self.docs_with_gold if self.docs_with_gold else 1.0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "documents": self.documents,
            "lenient": self.lenient.as_dict(),
            "lenient_typed": self.lenient_typed.as_dict(),
            "strict": self.strict.as_dict(),
            "strict_typed": self.strict_typed.as_dict(),
            "token_recall": round(self.token_recall, 4),
            "all_or_nothing_recall": round(self.all_or_nothing_recall, 4),
            "all_or_nothing_recall_per_type": {
                t: round(self.per_type_docs_recalled[t] / n, 4) for t, n in sorted(self.per_type_docs.items())
            },
            "per_type": {t: prf.as_dict() for t, prf in sorted(self.per_type.items())},
            "documents_without_gold": self.docs_without_gold,
            "documents_overmasked": self.docs_overmasked,
            "documents_overmasked_safe_harbor": self.docs_overmasked_safe_harbor,
            "min_similarity": MIN_SIMILARITY,
        }


def _safe_harbor_identifier(text: str, span: GoldSpan) -> bool:
    """Whether a masked span is an identifier Safe Harbor requires removing: not a year alone, not an age up to 89.
    (States and countries, which Safe Harbor also allows, cannot be told from other places by type alone and
    count here.)"""
    value = text[span.start : span.end]
    if span.type in ("DATE", "BIRTH_DATE_TIME", "DEATH_DATE_TIME"):
        return not is_year_only(value)
    if span.type == "AGE":
        return age_over_limit(value)
    return True


def _prf(pairs: list[tuple[int, int]], n_gold: int, n_pred: int) -> PRF:
    return PRF(len(pairs), len(pairs), n_pred, n_gold)


def evaluate_document(
    report: EvalReport, text: str, gold: Sequence[GoldSpan], pred: Sequence[GoldSpan]
) -> None:
    """Add one document's comparison to ``report``."""
    report.documents += 1
    ng, np_ = len(gold), len(pred)
    agnostic = match_lenient(text, gold, pred, type_aware=False)
    report.lenient.add(_prf(agnostic, ng, np_))
    typed = match_lenient(text, gold, pred, type_aware=True)
    report.lenient_typed.add(_prf(typed, ng, np_))
    report.strict.add(_prf(match_strict(gold, pred, type_aware=False), ng, np_))
    report.strict_typed.add(_prf(match_strict(gold, pred, type_aware=True), ng, np_))
    types = {g.type for g in gold} | {p.type for p in pred}
    for t in types:
        prf = report.per_type.setdefault(t, PRF())
        prf.n_gold += sum(1 for g in gold if g.type == t)
        prf.n_pred += sum(1 for p in pred if p.type == t)
        prf.tp_gold += sum(1 for gi, _ in typed if gold[gi].type == t)
        prf.tp_pred += sum(1 for _, pi in typed if pred[pi].type == t)
    covered, total = token_coverage(text, gold, pred)
    report.tokens_covered += covered
    report.tokens_total += total
    if gold:
        report.docs_with_gold += 1
        matched = {gi for gi, _ in agnostic}
        if len(matched) == ng:
            report.docs_all_recalled += 1
        for t in {g.type for g in gold}:
            report.per_type_docs[t] += 1
            if all(gi in matched for gi, g in enumerate(gold) if g.type == t):
                report.per_type_docs_recalled[t] += 1
    else:
        report.docs_without_gold += 1
        if pred:
            report.docs_overmasked += 1
            report.docs_overmasked_safe_harbor += any(_safe_harbor_identifier(text, p) for p in pred)


def evaluate(gold_docs: Sequence[Document], pred_docs: Sequence[Document]) -> EvalReport:
    """Compare predictions with gold documents, matched by id.

    Predicted offsets refer to the gold text (a prediction file written by ``anonpsy mask`` holds the masked
    text but input offsets), so only their bounds are checked against it.
    """
    preds = {d.id: d for d in pred_docs}
    report = EvalReport()
    for g in gold_docs:
        p = preds.get(g.id)
        if p is None:
            raise AnonpsyError(
                M104_BAD_EVAL_INPUT, "no prediction for a gold document", location=f"id {g.id}"
            )
        if any(s.end > len(g.text) for s in p.spans):
            raise AnonpsyError(
                M104_BAD_EVAL_INPUT, "a predicted span lies outside the gold text", location=f"id {g.id}"
            )
        evaluate_document(report, g.text, g.spans, p.spans)
    return report


def render_table(report: EvalReport) -> Any:
    """A rich Table of the report (overall rows, then one row per type)."""
    from rich.table import Table

    table = Table(title=f"PHI detection, {report.documents} documents")
    for col in ("metric", "precision", "recall", "F1", "gold", "predicted"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    rows = [
        ("lenient (type-agnostic)", report.lenient),
        ("lenient (type-aware)", report.lenient_typed),
        ("strict (type-agnostic)", report.strict),
        ("strict (type-aware)", report.strict_typed),
    ]
    for name, prf in rows:
        table.add_row(
            name,
            f"{prf.precision:.3f}",
            f"{prf.recall:.3f}",
            f"{prf.f1:.3f}",
            str(prf.n_gold),
            str(prf.n_pred),
        )
    table.add_row("token recall", "", f"{report.token_recall:.3f}", "", str(report.tokens_total), "")
    table.add_row(
        "all-or-nothing recall (docs)",
        "",
        f"{report.all_or_nothing_recall:.3f}",
        "",
        str(report.docs_with_gold),
        "",
    )
    table.add_section()
    for t, prf in sorted(report.per_type.items()):
        n_docs = report.per_type_docs.get(t, 0)
        aon = f" / {report.per_type_docs_recalled[t] / n_docs:.2f}" if n_docs else ""
        table.add_row(
            f"{t}",
            f"{prf.precision:.3f}",
            f"{prf.recall:.3f}{aon}",
            f"{prf.f1:.3f}",
            str(prf.n_gold),
            str(prf.n_pred),
        )
    table.caption = (
        f"per-type rows are type-aware lenient; recall '/ x' is per-type all-or-nothing recall. "
        f"Documents without gold spans: {report.docs_without_gold}, over-masked: {report.docs_overmasked} "
        f"(with a Safe Harbor identifier, not only a year or an age up to 89: {report.docs_overmasked_safe_harbor})"
    )
    return table
