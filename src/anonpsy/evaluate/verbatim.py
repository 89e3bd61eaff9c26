"""Verbatim copying: the longest run of consecutive words an output copies from its source.

Words are the tokens ``\\w+`` (internal ``. ' - /`` kept: ``b.i.d``, ``mg/day``, ``Risperdal M-Tab`` is two
words), compared case-insensitively; punctuation and spacing are ignored, so "Mood was okay, though" copies
"mood was okay though". A *copied run* is a sequence of consecutive output words that also occurs as
consecutive words of the source.

Drug names with doses are excepted, because a faithful rewrite must keep them: a *dose group* is a maximal
stretch of consecutive output words each of which is a drug-name word (any word of a name, brand or alias in
``rules/lexicon/medications.yaml``, or of a name the caller passes), a number, a dose unit (mg, mcg, mL,
units, %, ...), a frequency, route or formulation word (daily, b.i.d., q.h.s., p.r.n., at, bedtime, PO,
tablet, XR, ...) or a list word (and, or, plus, then), and that contains at least one drug-name word. Words
inside dose groups do not count. The length of a copied run is the number of its words outside dose groups;
:func:`copied_runs` reports the longest such length over the whole output and within each sentence (a run is
cut at sentence boundaries for the per-sentence figure).

The longest copied run ending at every output word is found in one pass with a suffix automaton of the source
words (linear in source + output length; no quadratic alignment).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

_TOKEN = re.compile(r"\w+(?:[.'’/-]\w+)*")
_NUMBER = re.compile(r"\d+(?:[.,/]\d+)*(?:st|nd|rd|th|x)?")
_UNIT = re.compile(
    r"(?:mg|mgs|mcg|µg|ug|g|gm|gram|grams|milligrams?|micrograms?|ml|cc|l|units?|iu|meq|mmol|mg/\w+|mcg/\w+|"
    r"ml/\w+|units/\w+|%)"
)
_DOSE_WORDS: frozenset[str] = frozenset({
    "qd", "q.d", "bid", "b.i.d", "tid", "t.i.d", "qid", "q.i.d", "qhs", "q.h.s", "hs", "h.s", "prn", "p.r.n",
    "qam", "q.a.m", "qpm", "q.p.m", "qod", "q.o.d", "po", "p.o", "iv", "i.v", "im", "i.m", "sl", "subq", "sq",
    "sc", "od", "daily", "nightly", "weekly", "monthly", "twice", "once", "thrice", "times", "a", "per", "day",
    "days", "every", "each", "morning", "mornings", "evening", "evenings", "night", "nights", "noon",
    "bedtime", "at", "in", "the", "am", "pm", "a.m", "p.m", "tablet", "tablets", "tab", "tabs", "capsule",
    "capsules", "cap", "caps", "patch", "patches", "injection", "injections", "xr", "er", "sr", "xl", "cr", "dr",
    "la", "odt", "cd", "hours", "hour", "hrs", "hr", "h", "week", "weeks", "month", "months", "dose", "doses",
    "as", "needed", "and", "or", "plus", "then", "by", "mouth", "orally", "intramuscularly", "intravenously",
    "one", "two", "three", "four", "half", "q4h", "q6h", "q8h", "q12h", "q2h", "q72h", "q4", "q6", "q8",
})


def tokens(text: str) -> list[tuple[str, int, int]]:
    """(lower-case word, start, end) of every word of ``text``."""
    if text.isascii():  # lower-casing keeps every offset and every word boundary
        found = list(_TOKEN.finditer(text.lower()))
        return list(zip(map(re.Match.group, found), map(re.Match.start, found), map(re.Match.end, found),
                        strict=True))
    return [(m.group(0).lower().replace("’", "'"), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def words(text: str) -> list[str]:
    """The words of :func:`tokens` without their offsets (one scan by the engine, no object per word)."""
    if text.isascii():  # lower-casing changes no word boundary
        return _TOKEN.findall(text.lower())
    return [w.lower().replace("’", "'") for w in _TOKEN.findall(text)]


@lru_cache(maxsize=1)
def drug_words() -> frozenset[str]:
    """Every word of every drug id, name, brand, alias and long-acting form in the medication lexicon."""
    from anonpsy.paths import rules_dir
    from anonpsy.yamlio import load_yaml

    doc = load_yaml((rules_dir() / "lexicon" / "medications.yaml").read_text(encoding="utf-8"))
    forms: list[str] = []
    for rule in doc.get("rules", []):
        forms += [str(rule.get("id", "")).replace("_", " "), str(rule.get("name", ""))]
        for key in ("brands", "aliases", "long_acting"):
            forms += [str(x) for x in rule.get(key, []) or []]
    return name_words(forms)


#: Words of a drug's name that never make a word a drug-name word: dose, list and function words ("and" of
#: "acceptance and commitment therapy", "of" of "milk of magnesia"). Alone they would start a dose group.
_NOT_NAME_WORDS: frozenset[str] = _DOSE_WORDS | frozenset({
    "of", "with", "for", "to", "on", "from", "into", "an", "this", "that", "his", "her", "he", "she", "they",
    "is", "was", "be", "been", "not", "no",
})


def name_words(forms: Iterable[str]) -> frozenset[str]:
    """The drug-name words of names, brands or aliases: every word but dose, list and function words."""
    return frozenset(w for form in forms for w, _, _ in tokens(form)) - _NOT_NAME_WORDS


def dose_mask(words: Sequence[str], extra_drug_words: Iterable[str] = ()) -> list[bool]:
    """For each word, whether it lies inside a dose group (see the module docstring)."""
    return _dose_mask(words, drug_words() | name_words(extra_drug_words))


@lru_cache(maxsize=65536)
def _dose_word(w: str) -> bool:
    """A number, a unit or another word of a dose ("mg", "twice", "daily")."""
    return bool(_NUMBER.fullmatch(w) or _UNIT.fullmatch(w) or w in _DOSE_WORDS)


def _dose_mask(words: Sequence[str], drugs: frozenset[str]) -> list[bool]:
    kind = []
    for w in words:
        if w in drugs:
            kind.append(2)
        elif _dose_word(w):
            kind.append(1)
        else:
            kind.append(0)
    mask = [False] * len(words)
    i = 0
    while i < len(words):
        if kind[i] == 0:
            i += 1
            continue
        j = i
        while j < len(words) and kind[j] > 0:
            j += 1
        if any(k == 2 for k in kind[i:j]):
            for k in range(i, j):
                mask[k] = True
        i = j
    return mask


class _SuffixAutomaton:
    """Suffix automaton over a sequence of word ids."""

    def __init__(self, seq: Sequence[int]) -> None:
        # built in local lists (no attribute lookup per step), then kept
        link = [-1]
        length = [0]
        nxt: list[dict[int, int]] = [{}]
        last = 0
        for c in seq:
            cur = len(length)
            length.append(length[last] + 1)
            link.append(-1)
            nxt.append({})
            p = last
            while p != -1 and c not in nxt[p]:
                nxt[p][c] = cur
                p = link[p]
            if p == -1:
                link[cur] = 0
            else:
                q = nxt[p][c]
                if length[p] + 1 == length[q]:
                    link[cur] = q
                else:
                    clone = len(length)
                    length.append(length[p] + 1)
                    link.append(link[q])
                    nxt.append(dict(nxt[q]))
                    while p != -1 and nxt[p].get(c) == q:
                        nxt[p][c] = clone
                        p = link[p]
                    link[q] = clone
                    link[cur] = clone
            last = cur
        self.link, self.length, self.next = link, length, nxt

    def match_lengths(self, seq: Sequence[int]) -> list[int]:
        """For each position i, the length of the longest suffix of ``seq[:i+1]`` that occurs in the source."""
        out: list[int] = []
        v, n = 0, 0
        for c in seq:
            while v and c not in self.next[v]:
                v = self.link[v]
                n = self.length[v]
            if c in self.next[v]:
                v = self.next[v][c]
                n += 1
            else:
                v, n = 0, 0
            out.append(n)
        return out


@dataclass(frozen=True)
class CopyStats:
    """Copied runs of one output: the longest overall, the longest within one sentence, per-sentence lengths."""

    longest_run: int
    max_sentence_run: int
    sentence_runs: tuple[int, ...]
    limit: int = 12

    @property
    def sentences_over_limit(self) -> int:
        """Sentences whose longest copied run exceeds ``limit`` words."""
        return sum(1 for r in self.sentence_runs if r > self.limit)

    @property
    def within_limit(self) -> bool:
        """Every sentence copies at most ``limit`` consecutive words (doses excepted)."""
        return self.max_sentence_run <= self.limit


def copied_runs(source: str, output: str, *, sentence_spans: Sequence[tuple[int, int]] = (),
                extra_drug_words: Iterable[str] = (), limit: int = 12) -> CopyStats:
    """Longest copied runs of ``output`` from ``source`` (definitions in the module docstring).

    ``sentence_spans`` are the (start, end) character spans of the output's sentences; without them the whole
    output is one sentence.
    """
    src = words(source)
    out_toks = tokens(output)
    out = [w for w, _, _ in out_toks]
    ids: dict[str, int] = {}
    sam = _SuffixAutomaton([ids.setdefault(w, len(ids)) for w in src])
    lengths = sam.match_lengths([ids.get(w, -1) for w in out])
    counted = [0 if m else 1 for m in dose_mask(out, extra_drug_words)]
    prefix = [0]
    for c in counted:
        prefix.append(prefix[-1] + c)
    longest = max((prefix[i + 1] - prefix[i + 1 - n] for i, n in enumerate(lengths) if n), default=0)
    spans = list(sentence_spans) or [(0, len(output))]
    starts = [s for s, _ in spans]
    sentence_of: list[int] = []
    k = 0
    for _, a, _ in out_toks:
        while k + 1 < len(starts) and a >= starts[k + 1]:
            k += 1
        sentence_of.append(k)
    first_tok: dict[int, int] = {}
    for i, s in enumerate(sentence_of):
        first_tok.setdefault(s, i)
    runs = [0] * len(spans)
    for i, n in enumerate(lengths):
        if not n:
            continue
        s = sentence_of[i]
        lo = max(i + 1 - n, first_tok[s])
        runs[s] = max(runs[s], prefix[i + 1] - prefix[lo])
    return CopyStats(longest, max(runs, default=0), tuple(runs), limit)



class CopyMeter:
    """Copied runs of any number of outputs against one source (the source's automaton is built once).

    >>> m = CopyMeter("the patient reports low mood and poor sleep")
    >>> m.longest("she reports low mood and poor sleep")
    6
    """

    def __init__(self, source: str, extra_drug_words: Iterable[str] = ()) -> None:
        self._ids: dict[str, int] = {}
        self._sam = _SuffixAutomaton([self._ids.setdefault(w, len(self._ids)) for w in words(source)])
        self._drugs = drug_words() | name_words(extra_drug_words)
        self._last: tuple[str, tuple[list[tuple[str, int, int]], list[int], list[int]]] | None = None

    def _lengths(self, output: str) -> tuple[list[tuple[str, int, int]], list[int], list[int]]:
        # the same text is often measured twice in a row (its runs, then its longest run)
        if self._last is None or self._last[0] != output:
            self._last = (output, self._measure(output))
        return self._last[1]

    def _measure(self, output: str) -> tuple[list[tuple[str, int, int]], list[int], list[int]]:
        out_toks = tokens(output)
        lengths = self._sam.match_lengths([self._ids.get(w, -1) for w, _, _ in out_toks])
        counted = [0 if m else 1 for m in _dose_mask([w for w, _, _ in out_toks], self._drugs)]
        prefix = [0]
        for c in counted:
            prefix.append(prefix[-1] + c)
        return out_toks, lengths, prefix

    def runs(self, output: str, limit: int = 12) -> list[tuple[int, int, int]]:
        """Every maximal copied run of ``output`` longer than ``limit`` words (doses excepted), as (start, end,
        words): character offsets into ``output`` and the run's length as :func:`copied_runs` counts it. A run
        that crosses sentences is reported whole."""
        out_toks, lengths, prefix = self._lengths(output)
        found: list[tuple[int, int, int]] = []
        for i, n in enumerate(lengths):
            if not n or (i + 1 < len(lengths) and lengths[i + 1] == n + 1):
                continue  # not the end of a maximal run
            words = prefix[i + 1] - prefix[i + 1 - n]
            if words > limit:
                found.append((out_toks[i + 1 - n][1], out_toks[i][2], words))
        return found

    def longest(self, output: str) -> int:
        """The longest copied run of ``output`` (doses excepted), as :func:`copied_runs` reports it."""
        _, lengths, prefix = self._lengths(output)
        return max((prefix[i + 1] - prefix[i + 1 - n] for i, n in enumerate(lengths) if n), default=0)


def long_runs(source: str, output: str, *, limit: int = 12,
              extra_drug_words: Iterable[str] = ()) -> list[tuple[int, int, int]]:
    """Every maximal copied run of ``output`` from ``source`` longer than ``limit`` words (see
    :meth:`CopyMeter.runs`)."""
    return CopyMeter(source, extra_drug_words).runs(output, limit)
