"""k-anonymization of the document–entity table.

Input: each document's set of entity concepts (level 0 of the :class:`~anonpsy.twin.concepts.Hierarchy`).
Output: each document's *published* set, identical for at least ``k`` documents (documents whose published set is
empty are not published at all: no twin is generated for them).

1. **Frequency floor** (global recoding). A concept in fewer than ``floor`` documents (default ``k``: such a
   concept can never be shared by ``k`` documents) is recoded to its nearest ancestor whose column -- the documents
   whose rare concepts were recoded to it -- reaches the floor, else deleted. Generalising is used only where it
   keeps more information than deletion: the ancestor is kept only when it survives the floor itself.
2. **Nearest-neighbour grouping** (local recoding). Documents with the same recoded set form a unit; a unit of
   ``k`` or more documents is published as it is. The others are grouped: rows are binary over each set's concepts
   and their ancestors; scikit-learn's :class:`~sklearn.neighbors.NearestNeighbors` (cosine, brute force over the
   sparse rows) gives each unit its candidates. The unit with the most concepts picks first; among its nearest free
   candidates it takes the one that keeps the most information in the group's shared set (summed information
   content, below), until the group holds ``k`` documents. A group publishes the concepts all its members share
   plus, for what they do not share, the most specific common ancestors (two documents on different SSRIs both
   publish "selective serotonin reuptake inhibitor" instead of losing the drug); everything else is zeroed. Units
   left over when fewer than ``k`` documents remain join the group that keeps most of their concepts.
3. **Verification** after the fact (:func:`verify`), by a separate path: every published set is shared by at least
   ``k`` documents and every published concept is a concept of the document or an ancestor of one.

Deterministic: no randomness; ties are broken by a canonical order of the sets.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from anonpsy.errors import AnonpsyError
from anonpsy.twin.concepts import Hierarchy
from anonpsy.twin.errors import T104_K_IMPOSSIBLE, missing_extra

#: Nearest neighbours fetched per unit before falling back to a scan of the free units.
NEIGHBOURS = 50
#: Candidates (nearest first) among which a group picks the one that keeps the most shared concepts.
CANDIDATES = 30

KEPT = "kept"
GENERALISED = "generalised"
DELETED_FLOOR = "deleted_floor"
DELETED_MATCHING = "deleted_matching"
STATUSES = (KEPT, GENERALISED, DELETED_FLOOR, DELETED_MATCHING)


@dataclass(frozen=True)
class Outcome:
    """What happened to one entity of one document: status and the published concept that stands for it."""

    status: str
    item: str | None


@dataclass
class Anonymized:
    """Result of :func:`anonymize`."""

    k: int
    floor: int
    published: dict[str, frozenset[str]]
    recoded: dict[str, str | None]
    outcomes: dict[str, dict[str, Outcome]]
    groups: int = 0
    stats: dict[str, Any] = field(default_factory=dict)

    def kept_docs(self) -> list[str]:
        """Documents with a non-empty published set, in input order."""
        return [d for d, s in self.published.items() if s]


def _sort_key(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(items))


def global_recoding(sets: Mapping[str, frozenset[str]], h: Hierarchy, floor: int) -> dict[str, str | None]:
    """Concept → the item that stands for it after the frequency floor (itself, an ancestor, or None)."""
    df: Counter[str] = Counter(c for s in sets.values() for c in s)
    image: dict[str, str | None] = {c: c for c, n in df.items() if n >= floor}
    pending: dict[str, str | None] = {c: c for c, n in df.items() if n < floor}  # concept -> current position
    docs_of: dict[str, set[str]] = {}
    for d, s in sets.items():
        for c in s:
            docs_of.setdefault(c, set()).add(d)
    while pending:
        moved: dict[str, str | None] = {}
        for c, pos in pending.items():
            parent = h[pos].parent if pos is not None and pos in h else None
            moved[c] = parent
        column: dict[str, set[str]] = {}
        for c, pos in moved.items():
            if pos is not None:
                column.setdefault(pos, set()).update(docs_of[c])
        pending = {}
        for c, pos in moved.items():
            if pos is None:
                image[c] = None
            elif len(column[pos]) >= floor:
                image[c] = pos
            else:
                pending[c] = pos
    return image


def _expanded(items: Iterable[str], h: Hierarchy) -> frozenset[str]:
    return frozenset(a for x in items for a in h.lineage(x))


def shared_items(member_sets: list[frozenset[str]], h: Hierarchy) -> frozenset[str]:
    """What a group publishes: concepts every member has, plus the most specific common ancestors of the rest."""
    exact = frozenset.intersection(*member_sets)
    rest = [_expanded(s - exact, h) for s in member_sets]
    common = frozenset.intersection(*rest) - exact if rest else frozenset()
    # The most specific common ancestors. One that is also above a shared concept stays: every member has a
    # further concept under it ("sertraline and another selective serotonin reuptake inhibitor").
    minimal = {a for a in common if not any(a in h.ancestors(b) for b in common if b != a)}
    return exact | frozenset(minimal)


def _matrix(units: list[frozenset[str]], h: Hierarchy) -> Any:
    try:
        import numpy as np
        from scipy import sparse
    except ImportError:
        raise missing_extra("scipy") from None
    vocab: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for i, s in enumerate(units):
        for a in sorted(_expanded(s, h)):
            rows.append(i)
            cols.append(vocab.setdefault(a, len(vocab)))
    data = np.ones(len(rows), dtype=np.float64)
    return sparse.csr_matrix((data, (rows, cols)), shape=(len(units), max(1, len(vocab))))


def _neighbours(x: Any, n: int) -> tuple[Any, Any]:
    try:
        from sklearn.neighbors import NearestNeighbors
    except ImportError:
        raise missing_extra("scikit-learn") from None
    nn = NearestNeighbors(n_neighbors=n, metric="cosine", algorithm="brute")
    nn.fit(x)
    dist, idx = nn.kneighbors(x)
    return dist, idx


def _cosine_to(x: Any, u: int, others: list[int]) -> list[float]:
    import numpy as np

    sub = x[others]
    dots = np.asarray(sub @ x[u].T.toarray()).ravel()
    norms = np.sqrt(np.asarray(sub.multiply(sub).sum(axis=1)).ravel()) * math.sqrt(float(x[u].multiply(x[u]).sum()))
    with np.errstate(divide="ignore", invalid="ignore"):
        sim = np.where(norms > 0, dots / norms, 0.0)
    return [float(1.0 - v) for v in sim]


def group_units(units: list[frozenset[str]], weights: list[int], k: int, h: Hierarchy,
                done: list[int], progress: Any = None) -> list[list[int]]:
    """Groups (lists of unit indices) of total weight >= k covering every unit; ``done`` units already hold k."""
    groups: list[list[int]] = [[u] for u in done]
    pending = [u for u in range(len(units)) if u not in set(done)]
    if not pending:
        return groups
    x = _matrix(units, h)
    sub = [pending[i] for i in range(len(pending))]
    n_nb = min(len(sub), NEIGHBOURS + 1)
    _dist, idx = _neighbours(x[sub], n_nb)

    ic = information_content({str(u): units[u] for u in sub}, h)

    def value(members: list[int]) -> float:
        """Information the group would publish for each member: the summed IC of its shared items (``fsum``: the
        same float whatever order the set iterates in, so ties break the same way in every process)."""
        return math.fsum(ic.get(a, 0.0) for a in shared_items([units[m] for m in members], h))

    # The richest sets choose first: they have the most to lose.
    order = sorted(range(len(sub)), key=lambda i: (-len(units[sub[i]]), _sort_key(units[sub[i]])))
    assigned: set[int] = set()
    leftovers: list[int] = []
    for i in order:
        u = sub[i]
        if u in assigned:
            continue
        assigned.add(u)
        members, weight = [u], weights[u]
        cands = [sub[j] for j in idx[i] if sub[j] not in assigned]
        scanned = False
        while weight < k:
            cands = [v for v in cands if v not in assigned]
            if not cands and not scanned:
                free = [v for v in sub if v not in assigned]
                if free:
                    d = _cosine_to(x, u, free)
                    ranked = sorted(zip(d, free, strict=True), key=lambda p: (p[0], _sort_key(units[p[1]])))
                    cands = [v for _, v in ranked]
                scanned = True
            if not cands:
                break
            window = cands[:CANDIDATES]
            best = max(window, key=lambda v: (value([*members, v]), -window.index(v)))
            members.append(best)
            assigned.add(best)
            weight += weights[best]
        if weight >= k:
            groups.append(members)
        else:
            leftovers.extend(members)
        if progress is not None and weight >= k:
            progress(weight)
    if progress is not None:
        progress(sum(weights[u] for u in leftovers))
    for u in sorted(leftovers, key=lambda v: _sort_key(units[v])):
        if not groups:
            break
        best_g = max(range(len(groups)), key=lambda g: (
            len(_expanded(shared_items([units[m] for m in groups[g]], h), h) & _expanded(units[u], h)),
            -sum(weights[m] for m in groups[g]), -g))
        groups[best_g].append(u)
    if not groups and leftovers:
        groups.append([])  # nothing can be published: the caller reports these documents as not kept
    return groups


def anonymize(sets: Mapping[str, Iterable[str]], h: Hierarchy, k: int, floor: int | None = None,
              progress: Any = None) -> Anonymized:
    """k-anonymize documents' concept sets (see the module docstring)."""
    if k < 1:
        raise AnonpsyError(T104_K_IMPOSSIBLE, "k must be at least 1", "-k")
    fl = k if floor is None else floor
    if fl < 1:
        raise AnonpsyError(T104_K_IMPOSSIBLE, "the frequency floor must be at least 1", "--min-df")
    orig = {d: frozenset(s) for d, s in sets.items()}
    image = global_recoding(orig, h, fl)
    recoded = {d: frozenset(i for c in s if (i := image[c]) is not None) for d, s in orig.items()}
    by_set: dict[frozenset[str], list[str]] = {}
    for d, s in recoded.items():
        if s:
            by_set.setdefault(s, []).append(d)
    units = sorted(by_set, key=_sort_key)
    weights = [len(by_set[s]) for s in units]
    done = [i for i, w in enumerate(weights) if w >= k]
    if progress is not None:  # counts documents with entities: those already in a class, those the floor emptied
        progress(sum(weights[i] for i in done) + sum(1 for d, s in recoded.items() if orig[d] and not s))
    if k == 1:
        groups = [[i] for i in range(len(units))]
        if progress is not None:
            progress(sum(w for i, w in enumerate(weights) if i not in set(done)))
    else:
        groups = group_units(units, weights, k, h, done, progress)
    published: dict[str, frozenset[str]] = dict.fromkeys(orig, frozenset())
    for g in groups:
        if not g or sum(weights[u] for u in g) < k:
            continue
        shared = shared_items([units[u] for u in g], h)
        for u in g:
            for d in by_set[units[u]]:
                published[d] = shared
    outcomes = {d: _outcomes(orig[d], published[d], image, h) for d in orig}
    return Anonymized(k=k, floor=fl, published=published, recoded=image, outcomes=outcomes,
                      groups=sum(1 for g in groups if g),
                      stats={"units": len(units), "natural_classes": len(done)})


def _outcomes(concepts: frozenset[str], published: frozenset[str], image: Mapping[str, str | None],
              h: Hierarchy) -> dict[str, Outcome]:
    out: dict[str, Outcome] = {}
    for c in sorted(concepts):
        if c in published:
            out[c] = Outcome(KEPT, c)
            continue
        if image.get(c) is None:
            out[c] = Outcome(DELETED_FLOOR, None)
            continue
        anc = next((a for a in h.ancestors(c) if a in published), None)
        out[c] = Outcome(GENERALISED, anc) if anc is not None else Outcome(DELETED_MATCHING, None)
    return out


def item_for(concept: str, published: frozenset[str], h: Hierarchy) -> str | None:
    """The published item that stands for ``concept`` in a document (itself, its nearest published ancestor, or
    None when it was deleted)."""
    if concept in published:
        return concept
    return next((a for a in h.ancestors(concept) if a in published), None)


# -------------------------------------------------------------------------------------------------------------
# Verification and information loss


def verify(original: Mapping[str, Iterable[str]], published: Mapping[str, Iterable[str]], h: Hierarchy,
           k: int) -> dict[str, Any]:
    """Check k-anonymity and derivability of published sets from scratch; ``problems`` is empty when both hold.

    ``published`` may leave documents out (or give them an empty set): those are not published at all."""
    problems: list[str] = []
    pub = {d: frozenset(s) for d, s in published.items()}  # a document without a row is not published
    extra = sorted(set(pub) - set(original))
    if extra:
        problems.append(f"{len(extra)} published rows name documents not in the table")
    classes = Counter(s for s in pub.values() if s)
    small = [n for n in classes.values() if n < k]
    if small:
        problems.append(f"{len(small)} published sets are shared by fewer than {k} documents (smallest {min(small)})")
    invented = 0
    for d, s in pub.items():
        allowed = _expanded(original.get(d, ()), h)
        invented += sum(1 for c in s if c not in allowed)
    if invented:
        problems.append(f"{invented} published concepts are neither a concept of their document nor an ancestor of one")
    sizes = sorted(classes.values())
    return {
        "k": k,
        "ok": not problems,
        "problems": problems,
        "documents": len(original),
        "published_documents": sum(classes.values()),
        "classes": len(classes),
        "smallest_class": sizes[0] if sizes else None,
        "median_class": sizes[len(sizes) // 2] if sizes else None,
    }


def information_content(sets: Mapping[str, Iterable[str]], h: Hierarchy) -> dict[str, float]:
    """IC(c) = -log2(df(c) / N) of every concept and ancestor, df counting documents with c or a descendant."""
    n = max(1, len(sets))
    df: Counter[str] = Counter()
    for s in sets.values():
        df.update(_expanded(s, h))
    return {c: -math.log2(v / n) for c, v in df.items()}


def information_loss(sets: Mapping[str, Iterable[str]], result: Anonymized, h: Hierarchy) -> dict[str, Any]:
    """Per entity type: entity occurrences (document, concept) kept, generalised (by level) and deleted (by the
    floor or by matching), distinct concepts before and after, and the information-content share retained
    (kept: IC of the concept, generalised: IC of the ancestor, deleted: 0)."""
    ic = information_content(sets, h)
    per: dict[str, dict[str, Any]] = {}
    for d, outs in result.outcomes.items():
        for c, o in outs.items():
            t = h.type_of(c)
            row = per.setdefault(t, {"occurrences": 0, **dict.fromkeys(STATUSES, 0), "generalised_levels": Counter(),
                                     "ic_total": 0.0, "ic_retained": 0.0, "distinct_before": set(),
                                     "distinct_after": set()})
            row["occurrences"] += 1
            row[o.status] += 1
            row["distinct_before"].add(c)
            row["ic_total"] += ic.get(c, 0.0)
            if o.item is not None:
                row["ic_retained"] += ic.get(o.item, 0.0)
                row["distinct_after"].add(o.item)
                if o.status == GENERALISED:
                    row["generalised_levels"][h[o.item].level] += 1
        _ = d
    out: dict[str, Any] = {}
    for t in sorted(per):
        row = per[t]
        n = row["occurrences"]
        out[t] = {
            "occurrences": n,
            **{s: row[s] for s in STATUSES},
            "kept_share": round(row[KEPT] / n, 4) if n else None,
            "generalised_share": round(row[GENERALISED] / n, 4) if n else None,
            "deleted_share": round((row[DELETED_FLOOR] + row[DELETED_MATCHING]) / n, 4) if n else None,
            "generalised_by_level": {str(k): v for k, v in sorted(row["generalised_levels"].items())},
            "distinct_before": len(row["distinct_before"]),
            "distinct_after": len(row["distinct_after"]),
            "information_retained": round(row["ic_retained"] / row["ic_total"], 4) if row["ic_total"] else None,
        }
    total = {s: sum(v[s] for v in out.values()) for s in ("occurrences", *STATUSES)}
    ic_tot = math.fsum(per[t]["ic_total"] for t in per)
    ic_ret = math.fsum(per[t]["ic_retained"] for t in per)
    docs = len(result.published)
    with_entities = sum(1 for s in sets.values() if any(True for _ in s))
    kept = len(result.kept_docs())
    return {
        "per_type": out,
        "all": {**total, "information_retained": round(ic_ret / ic_tot, 4) if ic_tot else None},
        "documents": {"total": docs, "with_entities": with_entities, "kept": kept,
                      "kept_share": round(kept / docs, 4) if docs else None,
                      "kept_share_of_documents_with_entities":
                          round(kept / with_entities, 4) if with_entities else None},
    }
