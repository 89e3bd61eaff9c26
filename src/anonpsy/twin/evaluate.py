"""Evaluation of synthetic corpora against their sources: re-identification, lexical overlap, diversity, utility.

* **Nearest-document Jaccard re-identification** (RecordTwin's attack): an attacker holding an original document
  picks the synthetic document with the highest Jaccard similarity ``|A ∩ B| / |A ∪ B|``; accuracy is the share
  of attacks (originals that have a twin) that land on their own twin, ties credited ``1/t`` (the expected
  accuracy of an attacker choosing among ``t`` tied documents). Computed with sparse matrix products in row
  blocks, over two feature sets: the documents' **tokens** (lower-cased letter/digit runs, as
  :func:`anonpsy.evaluate.reident.token_set`) and their **entities** (concepts named in the text, with their
  ancestors, so a generalisation can match its specific concept). The mean Jaccard of the chosen pairs is
  reported with it.
* **ROUGE-L** F-measure of each synthetic document against its source: rouge-score's tokenizer and F-measure,
  with the longest common subsequence computed by a bit-parallel algorithm (Allison–Dix / Hyyrö: one big-integer
  step per token, exactly the DP's length); mean, median, max and a KDE plot.
* **Entity diversity** per type: distinct concepts in the sources, distinct concepts named in the synthetic
  corpus, and the share of source concepts that still appear (as themselves).
* **Utility, TSTR vs TRTR**: a TF-IDF + linear SVM classifier (scikit-learn) of a document label (the corpus field
  ``medical_specialty`` by default) trained on the synthetic twins of a training split of the sources, and on
  the training sources themselves, both tested on the same held-out sources (never seen by either, nor their
  twins); macro- and weighted F1, next to a majority-class baseline.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from anonpsy.twin.concepts import Hierarchy
from anonpsy.twin.errors import missing_extra

TOKEN_PATTERN = r"(?u)[^\W_]+"
BLOCK = 512


def _sparse() -> Any:
    try:
        from scipy import sparse
    except ImportError:
        raise missing_extra("scipy") from None
    return sparse


# -------------------------------------------------------------------------------------------------------------
# Jaccard re-identification


@dataclass(frozen=True)
class Reid:
    """Result of the nearest-document attack."""

    features: str
    attacks: int
    candidates: int
    accuracy: float
    chance: float
    mean_chosen_jaccard: float
    mean_own_jaccard: float

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (NaN, for a corpus without attacks, as None)."""
        return {k: (None if isinstance(v, float) and math.isnan(v) else round(v, 4) if isinstance(v, float) else v)
                for k, v in self.__dict__.items()}


def binary_rows(sets: Sequence[frozenset[str]], vocab: dict[str, int]) -> Any:
    """A CSR matrix of 0/1 rows over ``vocab`` (items not in it are added)."""
    import numpy as np

    sparse = _sparse()
    indptr = [0]
    indices: list[int] = []
    for s in sets:
        indices.extend(sorted(vocab.setdefault(x, len(vocab)) for x in s))
        indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.float64)
    return sparse.csr_matrix((data, np.array(indices, dtype=np.int64), np.array(indptr, dtype=np.int64)),
                             shape=(len(sets), max(1, len(vocab))))


def jaccard_attack(orig: Sequence[frozenset[str]], synth: Sequence[frozenset[str]], own: Sequence[int | None],
                   features: str = "tokens") -> Reid:
    """Every original ``i`` with a twin (``own[i]`` its index in ``synth``) picks its most Jaccard-similar
    synthetic document; ties are credited ``1/t``."""
    import numpy as np

    vocab: dict[str, int] = {}
    a = binary_rows(orig, vocab)
    b = binary_rows(synth, vocab)
    a.resize((a.shape[0], max(1, len(vocab))))
    b.resize((b.shape[0], max(1, len(vocab))))
    size_a = np.asarray(a.sum(axis=1)).ravel()
    size_b = np.asarray(b.sum(axis=1)).ravel()
    bt = b.T.tocsc()
    attackers = [i for i, o in enumerate(own) if o is not None]
    credit: list[float] = []
    chosen: list[float] = []
    own_j: list[float] = []
    for lo in range(0, len(attackers), BLOCK):
        rows = attackers[lo:lo + BLOCK]
        inter = (a[rows] @ bt).toarray()
        union = size_a[rows][:, None] + size_b[None, :] - inter
        with np.errstate(divide="ignore", invalid="ignore"):
            jac = np.where(union > 0, inter / union, 0.0)
        top = jac.max(axis=1)
        for r, i in enumerate(rows):
            o = own[i]
            assert o is not None
            tied = np.flatnonzero(jac[r] == top[r])
            credit.append(1.0 / len(tied) if o in set(tied.tolist()) else 0.0)
            chosen.append(float(top[r]))
            own_j.append(float(jac[r, o]))
    n = len(attackers)
    return Reid(features, n, len(synth), math.fsum(credit) / n if n else math.nan,
                1.0 / len(synth) if len(synth) else math.nan,
                statistics.fmean(chosen) if chosen else math.nan,
                statistics.fmean(own_j) if own_j else math.nan)


def token_sets(texts: Sequence[str]) -> list[frozenset[str]]:
    """Lower-cased letter/digit runs of each text (the token features of the attack)."""
    from anonpsy.evaluate.reident import token_set

    return [token_set(t) for t in texts]


def expand(sets: Sequence[frozenset[str]], h: Hierarchy) -> list[frozenset[str]]:
    """Each set with the ancestors of its concepts."""
    return [frozenset(a for c in s for a in h.lineage(c)) for s in sets]


# -------------------------------------------------------------------------------------------------------------
# ROUGE-L


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token sequences (bit-parallel, exact)."""
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, tok in enumerate(a):
        masks[tok] = masks.get(tok, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for tok in b:
        u = v & masks.get(tok, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - bin(v).count("1")


class _CachedStemmer:
    def __init__(self) -> None:
        from nltk.stem import porter

        self._stemmer = porter.PorterStemmer()

    @lru_cache(maxsize=200_000)  # noqa: B019 -- one instance per process
    def stem(self, word: str) -> str:
        return str(self._stemmer.stem(word))


def rouge_tokens(text: str, use_stemmer: bool = False) -> list[str]:
    """rouge-score's tokens of ``text`` (lower case, non-alphanumerics as spaces, optional Porter stems)."""
    try:
        from rouge_score import tokenize
    except ImportError:
        raise missing_extra("rouge-score") from None
    return list(tokenize.tokenize(text, _stemmer() if use_stemmer else None))


@lru_cache(maxsize=1)
def _stemmer() -> _CachedStemmer:
    return _CachedStemmer()


def rouge_l(reference: str, candidate: str, use_stemmer: bool = False) -> float:
    """ROUGE-L F-measure of ``candidate`` against ``reference`` (rouge-score's definition)."""
    ref = rouge_tokens(reference, use_stemmer)
    cand = rouge_tokens(candidate, use_stemmer)
    if not ref or not cand:
        return 0.0
    lcs = lcs_length(ref, cand)
    p, r = lcs / len(cand), lcs / len(ref)
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def _rouge_chunk(args: tuple[list[tuple[str, str]], bool]) -> list[float]:
    pairs, stem = args
    return [rouge_l(a, b, stem) for a, b in pairs]


def rouge_batch(pairs: Sequence[tuple[str, str]], use_stemmer: bool = False, jobs: int = 1,
                progress: Callable[[int], None] | None = None) -> list[float]:
    """:func:`rouge_l` of every (reference, candidate) pair, in order (``jobs`` processes)."""
    chunks = [(list(pairs[i:i + 256]), use_stemmer) for i in range(0, len(pairs), 256)]
    out: list[float] = []
    if jobs <= 1 or len(chunks) <= 1:
        for c in chunks:
            out += _rouge_chunk(c)
            if progress:
                progress(len(c[0]))
        return out
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for c, res in zip(chunks, pool.map(_rouge_chunk, chunks), strict=True):
            out += res
            if progress:
                progress(len(c[0]))
    return out


def summarize(values: Sequence[float]) -> dict[str, float | int | None]:
    """n, mean, median, sd, min, max."""
    if not values:
        return {"n": 0, "mean": None, "median": None, "sd": None, "min": None, "max": None}
    return {"n": len(values), "mean": round(statistics.fmean(values), 4), "median": round(statistics.median(values), 4),
            "sd": round(statistics.stdev(values), 4) if len(values) > 1 else None,
            "min": round(min(values), 4), "max": round(max(values), 4)}


def kde_png(series: Mapping[str, Sequence[float]], title: str = "ROUGE-L F of each synthetic document") -> bytes:
    """A KDE plot (scipy's Gaussian KDE) of several score distributions on [0, 1], one curve per method."""
    try:
        import numpy as np
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from scipy.stats import gaussian_kde
    except ImportError:
        raise missing_extra("matplotlib and scipy") from None
    import io

    fig = Figure(figsize=(6.4, 3.8), dpi=150, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    xs = np.linspace(0.0, 1.0, 401)
    for name, vals in series.items():
        v = np.asarray(vals, dtype=float)
        if len(v) >= 2 and float(np.std(v)) > 0:
            ax.plot(xs, gaussian_kde(v)(xs), label=f"{name} (mean {v.mean():.3f})")
        elif len(v):
            ax.axvline(float(v.mean()), label=f"{name} (all {v.mean():.3f})", linestyle="--")
    ax.set_xlabel("ROUGE-L F against the source document")
    ax.set_ylabel("density")
    ax.set_title(title)
    ax.set_xlim(0, 1)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


# -------------------------------------------------------------------------------------------------------------
# Diversity


def diversity(orig: Sequence[frozenset[str]], synth: Sequence[frozenset[str]], h: Hierarchy) -> dict[str, Any]:
    """Per entity type: distinct source concepts, distinct synthetic concepts (specific and generalised), the
    share of source concepts named as themselves, and the Shannon entropy (bits) of each side's concept counts."""
    out: dict[str, Any] = {}
    types = sorted({h.type_of(c) for s in (*orig, *synth) for c in s})
    for t in types:
        o = Counter(c for s in orig for c in s if h.type_of(c) == t)
        y = Counter(c for s in synth for c in s if h.type_of(c) == t)
        specific = {c for c in y if c not in h or h[c].level == 0}
        out[t] = {"source_distinct": len(o), "synthetic_distinct": len(y), "synthetic_specific": len(specific),
                  "synthetic_generalised": len(y) - len(specific),
                  "source_kept_share": round(len(set(o) & specific) / len(o), 4) if o else None,
                  "source_entropy": round(_entropy(o), 3), "synthetic_entropy": round(_entropy(y), 3)}
    return out


def _entropy(c: Counter[str]) -> float:
    n = sum(c.values())
    return -sum(v / n * math.log2(v / n) for v in c.values()) if n else 0.0


# -------------------------------------------------------------------------------------------------------------
# Utility


def split(ids: Sequence[str], labels: Sequence[str], test_size: float, seed: int) -> tuple[list[str], list[str]]:
    """A stratified train/test split of ``ids``; labels with one document go to training."""
    try:
        from sklearn.model_selection import train_test_split
    except ImportError:
        raise missing_extra("scikit-learn") from None
    counts = Counter(labels)
    strat = [(i, lab) for i, lab in zip(ids, labels, strict=True) if counts[lab] >= 2]
    single = [i for i, lab in zip(ids, labels, strict=True) if counts[lab] < 2]
    tr, te = train_test_split([i for i, _ in strat], test_size=test_size, random_state=seed,
                              stratify=[lab for _, lab in strat])
    return sorted([*tr, *single]), sorted(te)


def classify(train_texts: Sequence[str], train_labels: Sequence[str], test_texts: Sequence[str],
             test_labels: Sequence[str], seed: int) -> dict[str, Any]:
    """Train TF-IDF + linear SVM, test, return macro/weighted F1 and accuracy."""
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.metrics import accuracy_score, f1_score
        from sklearn.pipeline import make_pipeline
        from sklearn.svm import LinearSVC
    except ImportError:
        raise missing_extra("scikit-learn") from None
    if len(set(train_labels)) < 2:
        return {"n_train": len(train_texts), "n_test": len(test_texts), "macro_f1": None, "weighted_f1": None,
                "accuracy": None, "note": "fewer than two labels in the training set"}
    model = make_pipeline(TfidfVectorizer(sublinear_tf=True, min_df=2, token_pattern=TOKEN_PATTERN),
                          LinearSVC(C=1.0, random_state=seed))
    model.fit(list(train_texts), list(train_labels))
    pred = model.predict(list(test_texts))
    return {"n_train": len(train_texts), "n_test": len(test_texts),
            "macro_f1": round(float(f1_score(test_labels, pred, average="macro", zero_division=0)), 4),
            "weighted_f1": round(float(f1_score(test_labels, pred, average="weighted", zero_division=0)), 4),
            "accuracy": round(float(accuracy_score(test_labels, pred)), 4)}


def majority(train_labels: Sequence[str], test_labels: Sequence[str]) -> dict[str, Any]:
    """The majority-class baseline on the same test set."""
    from sklearn.metrics import f1_score

    top = Counter(train_labels).most_common(1)[0][0]
    pred = [top] * len(test_labels)
    return {"macro_f1": round(float(f1_score(test_labels, pred, average="macro", zero_division=0)), 4),
            "weighted_f1": round(float(f1_score(test_labels, pred, average="weighted", zero_division=0)), 4),
            "accuracy": round(sum(1 for t in test_labels if t == top) / len(test_labels), 4) if test_labels else None}
