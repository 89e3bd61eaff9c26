"""Diagnosis soft-F1: how well the diagnoses read off an output agree with the reference diagnoses.

The Anonpsy paper (Lim & Kim, "Anonpsy: A Graph-Based Framework for Structure-Preserving De-identification of
Psychiatric Narratives", arXiv:2601.13503, evaluation of diagnostic fidelity) scores the diagnoses a rater
(clinician or LLM) assigns to a de-identified narrative against the original case's diagnoses with a *soft*
F1, in which a predicted diagnosis that is close to, but not exactly, a reference diagnosis earns partial
credit instead of counting as a miss. This module implements that idea with the following exact definition.

Let ``R`` be the reference labels (``n = |R|``) and ``P`` the predicted labels (``m = |P|``), each
canonicalized with :func:`anonpsy.evaluate.canonical.canonicalize` (duplicates by canonical key dropped). The
*similarity* of a pair, on the canonical texts, is::

    sim(r, p) = 1                                  if key(r) == key(p)  (same DSM rule or same stripped label)
              = max(token_set_ratio(r, p) / 100,   otherwise
                    cos(E(r), E(p)))               (the cosine term only when an encoder E is given)

and the *credit* it earns is ``sim * w`` where ``w = 1``, except when both labels map to two different DSM
rules: then ``w = related_weight`` (default 0.5) if the rules share a DSM-5-TR chapter and ``w = 0``
otherwise. (Lexical and embedding similarity alone rate "bipolar I disorder" vs "bipolar II disorder" at
0.97; two distinct DSM diagnoses must not count as nearly the same one.)

Greedy matching: all pairs with ``sim >= threshold`` and ``credit > 0`` are sorted by credit descending (ties:
reference order, then prediction order); a pair is taken when neither side is matched yet. With ``M`` the
matched pairs::

    TP_soft   = sum of credit(r, p) over M
    precision = TP_soft / m          recall = TP_soft / n
    soft_F1   = 2 * precision * recall / (precision + recall) = 2 * TP_soft / (n + m)

Conventions: both lists empty -> precision = recall = F1 = 1 (nothing to recover, nothing invented); exactly
one empty -> 0. NaN or negative cosines count as 0. The encoder's model name is recorded in the result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rapidfuzz import fuzz

from anonpsy.evaluate.canonical import Canonical, CanonicalTable, canonicalize
from anonpsy.evaluate.embeddings import Encoder
from anonpsy.evaluate.similarity import cosine
from anonpsy.rules.dsm import load_dsm

DEFAULT_THRESHOLD = 0.8
DEFAULT_RELATED_WEIGHT = 0.5

How = Literal["canonical", "fuzzy", "embedding"]


@dataclass(frozen=True)
class DiagnosisMatch:
    """One matched (reference, predicted) pair: its similarity, the credit it earned and how it was found."""

    reference: str
    predicted: str
    similarity: float
    credit: float
    how: How


@dataclass(frozen=True)
class SoftF1:
    """Soft precision, recall and F1 of one case's predicted diagnoses."""

    precision: float
    recall: float
    f1: float
    n_reference: int
    n_predicted: int
    threshold: float
    matches: tuple[DiagnosisMatch, ...] = field(default=())
    model: str | None = None


def _dedupe(items: Sequence[Canonical]) -> list[Canonical]:
    seen: set[str] = set()
    out: list[Canonical] = []
    for c in items:
        if c.key not in seen:
            seen.add(c.key)
            out.append(c)
    return out


def pair_similarity(
    a: Canonical,
    b: Canonical,
    emb: tuple[Sequence[float], Sequence[float]] | None = None,
    related_weight: float = DEFAULT_RELATED_WEIGHT,
    rules_root: Path | None = None,
) -> tuple[float, float, How]:
    """(similarity, credit, which term gave the similarity) of two canonical labels (see module docstring)."""
    if a.key == b.key:
        return 1.0, 1.0, "canonical"
    sim = fuzz.token_set_ratio(a.text, b.text) / 100.0
    how: How = "fuzzy"
    if emb is not None:
        cs = cosine(emb[0], emb[1])
        cs = 0.0 if math.isnan(cs) or cs < 0.0 else cs
        if cs > sim:
            sim, how = cs, "embedding"
    weight = 1.0
    if a.rule_id is not None and b.rule_id is not None:
        rules = load_dsm(rules_root)
        ra, rb = rules.get(a.rule_id), rules.get(b.rule_id)
        same_chapter = ra is not None and rb is not None and ra.chapter == rb.chapter
        weight = related_weight if same_chapter else 0.0
    return sim, sim * weight, how


def diagnosis_soft_f1(
    reference: Sequence[str],
    predicted: Sequence[str],
    *,
    encoder: Encoder | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    related_weight: float = DEFAULT_RELATED_WEIGHT,
    table: CanonicalTable | None = None,
    rules_root: Path | None = None,
) -> SoftF1:
    """Soft-F1 of ``predicted`` against ``reference`` diagnosis labels (definition in the module docstring).

    ``encoder`` adds the embedding-cosine term; ``threshold`` is the least similarity a match needs;
    ``related_weight`` scales the credit of two distinct DSM diagnoses from one chapter.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError("threshold must lie in [0, 1]")
    if not 0.0 <= related_weight <= 1.0:
        raise ValueError("related_weight must lie in [0, 1]")
    model = encoder.name if encoder is not None else None
    refs = _dedupe([canonicalize(r, table, rules_root) for r in reference if r.strip()])
    preds = _dedupe([canonicalize(p, table, rules_root) for p in predicted if p.strip()])
    n, m = len(refs), len(preds)
    if n == 0 and m == 0:
        return SoftF1(1.0, 1.0, 1.0, 0, 0, threshold, (), model)
    if n == 0 or m == 0:
        return SoftF1(0.0, 0.0, 0.0, n, m, threshold, (), model)
    vecs: list[list[float]] | None = None
    if encoder is not None:
        vecs = encoder.encode([c.text for c in refs] + [c.text for c in preds])
    scored: list[tuple[float, int, int, float, How]] = []
    for i, r in enumerate(refs):
        for j, p in enumerate(preds):
            emb = (vecs[i], vecs[n + j]) if vecs is not None else None
            sim, credit, how = pair_similarity(r, p, emb, related_weight, rules_root)
            if sim >= threshold and credit > 0.0:
                scored.append((credit, i, j, sim, how))
    scored.sort(key=lambda t: (-t[0], t[1], t[2]))
    used_r: set[int] = set()
    used_p: set[int] = set()
    matches: list[DiagnosisMatch] = []
    for credit, i, j, sim, how in scored:
        if i in used_r or j in used_p:
            continue
        used_r.add(i)
        used_p.add(j)
        matches.append(DiagnosisMatch(refs[i].label, preds[j].label, sim, credit, how))
    tp = math.fsum(x.credit for x in matches)
    precision = tp / m
    recall = tp / n
    f1 = 2 * tp / (n + m)
    return SoftF1(precision, recall, f1, n, m, threshold, tuple(matches), model)
