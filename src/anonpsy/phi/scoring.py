"""Coverage scoring of PHI masking: how much of each gold identifier the predicted spans hide.

Matching scores (:mod:`anonpsy.phi.evaluate`) ask whether a prediction names the same entity; a privacy
officer asks whether the identifier is still readable. Gold corpora also cut spans differently from a masker
(the PhysioNet gold marks "CALVERT" in "CALVERT HOSPITAL", and each word of "mary souza" apart), so this module
scores by characters covered, whatever the boundaries and types:

* **entity recall**: a gold span is *detected* when the union of predicted spans covers at least
  :data:`MIN_COVERAGE` (50 %) of its non-blank characters; **strict recall** asks for all of them;
  **exact recall** for a predicted span with the very same offsets;
* **precision**: a predicted span is correct when it overlaps a gold span (the PhysioNet deid convention);
* **character level**: recall is the share of gold non-blank characters covered, precision the share of
  predicted non-blank characters that lie inside a gold span;
* **document all-or-nothing**: the share of documents with gold spans in which every gold span is detected
  (and, strict, fully covered); the documents that still leak are listed by type;
* per gold label (the data set's own label where it has one, e.g. PhysioNet's ``HCPName``) and per predicted
  type.

:func:`deid_stat` reproduces the scoring of the PhysioNet deid package's ``stat.pm`` (Neamatullah et al. 2008)
exactly, quirks included: offsets are compared as closed intervals, so a predicted span that only touches a
gold span (``end == start``) counts as a hit; sensitivity and PPV are rounded half up to three decimals.
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from anonpsy.errors import AnonpsyError
from anonpsy.phi.operators import M104_BAD_EVAL_INPUT
from anonpsy.phi.readers import Document, GoldSpan

MIN_COVERAGE = 0.5


def _union(spans: Sequence[GoldSpan]) -> list[tuple[int, int]]:
    """Sorted disjoint intervals covering the spans."""
    out: list[tuple[int, int]] = []
    for s in sorted(spans, key=lambda s: (s.start, s.end)):
        if out and s.start <= out[-1][1]:
            if s.end > out[-1][1]:
                out[-1] = (out[-1][0], s.end)
        else:
            out.append((s.start, s.end))
    return out


def _solid(text: str, start: int, end: int) -> int:
    """Non-blank characters of ``text[start:end]``."""
    return sum(1 for c in text[start:end] if not c.isspace())


def covered_chars(text: str, start: int, end: int, union: Sequence[tuple[int, int]]) -> int:
    """Non-blank characters of ``text[start:end]`` inside the disjoint sorted intervals ``union``."""
    i = max(0, bisect.bisect_right(union, (start, len(text) + 1)) - 1)
    total = 0
    while i < len(union) and union[i][0] < end:
        lo, hi = max(start, union[i][0]), min(end, union[i][1])
        if lo < hi:
            total += _solid(text, lo, hi)
        i += 1
    return total


@dataclass
class LabelCounts:
    """Recall counts of one gold label."""

    gold: int = 0
    detected: int = 0
    strict: int = 0
    exact: int = 0
    documents: int = 0
    leaking_documents: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "gold": self.gold,
            "recall": _ratio(self.detected, self.gold),
            "strict_recall": _ratio(self.strict, self.gold),
            "exact_recall": _ratio(self.exact, self.gold),
            "documents": self.documents,
            "all_or_nothing": _ratio(self.documents - len(self.leaking_documents), self.documents),
            "leaking_documents": list(self.leaking_documents),
        }


@dataclass(frozen=True)
class Leak:
    """A gold span that the prediction leaves readable: document, label, offsets, share of it covered."""

    document: str
    label: str
    start: int
    end: int
    coverage: float


def _ratio(a: int, b: int) -> float:
    return round(a / b, 4) if b else 1.0


@dataclass
class CoverageReport:
    """All coverage metrics of one scoring run."""

    documents: int = 0
    documents_with_gold: int = 0
    documents_clean: int = 0
    documents_clean_strict: int = 0
    documents_without_gold_masked: int = 0
    gold: int = 0
    detected: int = 0
    strict: int = 0
    exact: int = 0
    overlapped: int = 0
    predicted: int = 0
    predicted_correct: int = 0
    chars_gold: int = 0
    chars_gold_covered: int = 0
    chars_predicted: int = 0
    chars_predicted_in_gold: int = 0
    per_label: dict[str, LabelCounts] = field(default_factory=dict)
    per_predicted_type: dict[str, list[int]] = field(default_factory=dict)
    leaks: list[Leak] = field(default_factory=list)

    @property
    def recall(self) -> float:
        """Gold spans with at least half their characters covered / gold spans."""
        return self.detected / self.gold if self.gold else 1.0

    @property
    def strict_recall(self) -> float:
        """Gold spans fully covered / gold spans."""
        return self.strict / self.gold if self.gold else 1.0

    @property
    def precision(self) -> float:
        """Predicted spans overlapping a gold span / predicted spans."""
        return self.predicted_correct / self.predicted if self.predicted else 1.0

    @property
    def all_or_nothing(self) -> float:
        """Documents whose gold spans are all detected / documents with gold spans."""
        return self.documents_clean / self.documents_with_gold if self.documents_with_gold else 1.0

    def add_document(self, doc_id: str, text: str, gold: Sequence[GoldSpan], pred: Sequence[GoldSpan]) -> None:
        """Score one document."""
        self.documents += 1
        union = _union(pred)
        gold_union = _union(gold)
        doc_clean = doc_strict = True
        labels_seen: set[str] = set()
        labels_leaking: set[str] = set()
        exact = Counter((p.start, p.end) for p in pred)
        for g in gold:
            label = g.kind
            counts = self.per_label.setdefault(label, LabelCounts())
            counts.gold += 1
            labels_seen.add(label)
            solid = _solid(text, g.start, g.end)
            covered = covered_chars(text, g.start, g.end, union)
            if solid == 0:  # a span of blanks only: count its characters as they are
                solid = g.end - g.start
                covered = sum(max(0, min(g.end, b) - max(g.start, a)) for a, b in union)
            self.gold += 1
            self.chars_gold += solid
            self.chars_gold_covered += covered
            share = covered / solid if solid else 1.0
            if any(a < g.end and g.start < b for a, b in union):
                self.overlapped += 1
            if share >= MIN_COVERAGE:
                self.detected += 1
                counts.detected += 1
            else:
                doc_clean = False
                labels_leaking.add(label)
                self.leaks.append(Leak(doc_id, label, g.start, g.end, round(share, 4)))
            if covered >= solid:
                self.strict += 1
                counts.strict += 1
            else:
                doc_strict = False
            if exact[(g.start, g.end)]:
                self.exact += 1
                counts.exact += 1
        for label in labels_seen:
            counts = self.per_label[label]
            counts.documents += 1
            if label in labels_leaking:
                counts.leaking_documents.append(doc_id)
        for p in pred:
            self.predicted += 1
            hit = any(g.start < p.end and p.start < g.end for g in gold)
            tally = self.per_predicted_type.setdefault(p.type, [0, 0])
            tally[0] += 1
            if hit:
                self.predicted_correct += 1
                tally[1] += 1
        for a, b in union:
            self.chars_predicted += _solid(text, a, b)
            self.chars_predicted_in_gold += covered_chars(text, a, b, gold_union)
        if gold:
            self.documents_with_gold += 1
            self.documents_clean += doc_clean
            self.documents_clean_strict += doc_strict
        elif pred:
            self.documents_without_gold_masked += 1

    def leaking_by_label(self) -> dict[str, list[str]]:
        """Document ids that still leak, by gold label."""
        out: dict[str, list[str]] = defaultdict(list)
        for leak in self.leaks:
            if not out[leak.label] or out[leak.label][-1] != leak.document:
                out[leak.label].append(leak.document)
        return dict(sorted(out.items()))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (offsets and ids only, never the text of a span)."""
        return {
            "documents": self.documents,
            "documents_with_gold": self.documents_with_gold,
            "gold": self.gold,
            "predicted": self.predicted,
            "min_coverage": MIN_COVERAGE,
            "recall": round(self.recall, 4),
            "strict_recall": round(self.strict_recall, 4),
            "exact_recall": _ratio(self.exact, self.gold),
            "overlap_recall": _ratio(self.overlapped, self.gold),
            "precision": round(self.precision, 4),
            "char_recall": _ratio(self.chars_gold_covered, self.chars_gold),
            "char_precision": _ratio(self.chars_predicted_in_gold, self.chars_predicted),
            "all_or_nothing": round(self.all_or_nothing, 4),
            "all_or_nothing_strict": _ratio(self.documents_clean_strict, self.documents_with_gold),
            "documents_without_gold_masked": self.documents_without_gold_masked,
            "per_label": {k: v.as_dict() for k, v in sorted(self.per_label.items())},
            "per_predicted_type": {
                t: {"predicted": n, "precision": _ratio(ok, n)}
                for t, (n, ok) in sorted(self.per_predicted_type.items())
            },
            "leaks": [
                {"document": x.document, "label": x.label, "start": x.start, "end": x.end, "coverage": x.coverage}
                for x in self.leaks
            ],
        }


def _paired(gold_docs: Sequence[Document], pred_docs: Sequence[Document]) -> list[tuple[Document, Document]]:
    preds = {d.id: d for d in pred_docs}
    out = []
    for g in gold_docs:
        p = preds.get(g.id)
        if p is None:
            raise AnonpsyError(M104_BAD_EVAL_INPUT, "no prediction for a gold document", location=f"id {g.id}")
        if any(s.end > len(g.text) for s in p.spans):
            raise AnonpsyError(
                M104_BAD_EVAL_INPUT, "a predicted span lies outside the gold text", location=f"id {g.id}"
            )
        out.append((g, p))
    return out


def score_coverage(gold_docs: Sequence[Document], pred_docs: Sequence[Document]) -> CoverageReport:
    """Coverage metrics of predictions against gold documents, matched by id."""
    report = CoverageReport()
    for g, p in _paired(gold_docs, pred_docs):
        report.add_document(g.id, g.text, g.spans, p.spans)
    return report


@dataclass(frozen=True)
class DeidStat:
    """The figures ``stat.pm`` prints."""

    true_positives: int
    false_positives: int
    false_negatives: int
    sensitivity: float
    ppv: float


def _round3(x: float) -> float:
    """stat.pm's rounding: ``int(x * 1000 + 0.5) / 1000``."""
    return int(x * 1000 + 0.5) / 1000.0


def deid_stat(gold_docs: Sequence[Document], pred_docs: Sequence[Document]) -> DeidStat:
    """Sensitivity and PPV exactly as the PhysioNet deid package's ``stat.pm`` computes them.

    A gold span is a true positive when some predicted span of the same note overlaps it, intervals taken as
    closed (``[start, end]``); a predicted span is a false positive when it overlaps no gold span in the same
    sense. Several predictions on one gold span, or one prediction over several gold spans, are not paired.
    """
    fn = fp = n_gold = n_pred = 0
    for g, p in _paired(gold_docs, pred_docs):
        n_gold += len(g.spans)
        n_pred += len(p.spans)
        for gs in g.spans:
            if not any(gs.start <= ps.end and ps.start <= gs.end for ps in p.spans):
                fn += 1
        for ps in p.spans:
            if not any(gs.start <= ps.end and ps.start <= gs.end for gs in g.spans):
                fp += 1
    tp = n_gold - fn
    sens = _round3(tp / n_gold) if n_gold else 1.0
    ppv = _round3((n_pred - fp) / n_pred) if n_pred else 1.0
    return DeidStat(tp, fp, fn, sens, ppv)


def render_coverage(report: CoverageReport, deid: DeidStat | None = None) -> Any:
    """A rich Table of the coverage report: overall rows, one row per gold label, leaking documents."""
    from rich.table import Table

    table = Table(title=f"PHI coverage, {report.documents} documents ({report.documents_with_gold} with PHI)")
    for col in ("metric", "value", "count"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    d = report.as_dict()
    rows = [
        (f"entity recall (>= {MIN_COVERAGE:.0%} of characters)", d["recall"], f"{report.detected}/{report.gold}"),
        ("strict recall (every character)", d["strict_recall"], f"{report.strict}/{report.gold}"),
        ("exact-boundary recall", d["exact_recall"], f"{report.exact}/{report.gold}"),
        ("precision (overlaps a gold span)", d["precision"], f"{report.predicted_correct}/{report.predicted}"),
        ("character recall", d["char_recall"], f"{report.chars_gold_covered}/{report.chars_gold}"),
        ("character precision", d["char_precision"], f"{report.chars_predicted_in_gold}/{report.chars_predicted}"),
        (
            "document all-or-nothing",
            d["all_or_nothing"],
            f"{report.documents_clean}/{report.documents_with_gold}",
        ),
        (
            "document all-or-nothing (strict)",
            d["all_or_nothing_strict"],
            f"{report.documents_clean_strict}/{report.documents_with_gold}",
        ),
    ]
    if deid is not None:
        rows.append(("deid stat.pm sensitivity", deid.sensitivity, f"fn {deid.false_negatives}"))
        rows.append(("deid stat.pm PPV", deid.ppv, f"fp {deid.false_positives}"))
    for name, value, count in rows:
        table.add_row(name, f"{value:.4f}", count)
    table.add_section()
    for label, counts in sorted(report.per_label.items()):
        c = counts.as_dict()
        table.add_row(
            f"{label}: recall / strict / all-or-nothing",
            f"{c['recall']:.3f} / {c['strict_recall']:.3f} / {c['all_or_nothing']:.3f}",
            f"{counts.gold} spans, {counts.documents} docs",
        )
    table.add_section()
    for t, (n, ok) in sorted(report.per_predicted_type.items()):
        table.add_row(f"predicted {t}: precision", f"{_ratio(ok, n):.3f}", f"{ok}/{n}")
    leaking = report.leaking_by_label()
    if leaking:
        table.add_section()
        for label, ids in leaking.items():
            shown = ", ".join(ids[:12]) + (f", … (+{len(ids) - 12})" if len(ids) > 12 else "")
            table.add_row(f"documents leaking {label}", str(len(ids)), shown)
    return table


__all__ = [
    "MIN_COVERAGE",
    "CoverageReport",
    "DeidStat",
    "LabelCounts",
    "Leak",
    "covered_chars",
    "deid_stat",
    "render_coverage",
    "score_coverage",
]
