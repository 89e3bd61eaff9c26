"""Leftmost-longest matching of many phrases on token boundaries: an Aho-Corasick automaton (:mod:`ahocorasick`)
over the case-folded tokens of :func:`anonpsy.lexicon.tokenize`, joined by single spaces, plus case-sensitive
abbreviations through the project's :class:`~anonpsy.lexicon.TermIndex` (exact or all capitals). Shared by the
condition vocabulary of :mod:`anonpsy.extract.mentions.general_conditions` and the RecordTwin vocabulary."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from anonpsy import lexicon


class PhraseEntry(Protocol):
    """What the matcher needs of an entry: its id, the token keys of its forms and its abbreviations."""

    @property
    def id(self) -> str: ...

    @property
    def abbreviations(self) -> Sequence[str]: ...

    def surface_keys(self) -> Sequence[str]: ...


@dataclass(frozen=True, slots=True)
class Hit:
    start: int
    end: int
    concept: str


class PhraseMatcher:
    """Leftmost-longest, token-aligned matching of many phrases (Aho-Corasick) plus case-sensitive abbreviations."""

    def __init__(self, entries: Iterable[PhraseEntry]) -> None:
        try:
            import ahocorasick
        except ImportError:
            from anonpsy.errors import E100_MISSING_FILE, AnonpsyError

            raise AnonpsyError(E100_MISSING_FILE, "pyahocorasick is not installed; reinstall anonpsy with its "
                                                  "dependencies") from None
        self._auto = ahocorasick.Automaton()
        specs: list[lexicon.IndexSpec] = []
        self.conflicts: list[str] = []
        for e in entries:
            for key in e.surface_keys():
                if not key:
                    continue
                pat = f" {key} "
                prev = self._auto.get(pat, None)
                if prev is not None and prev[2] != e.id:
                    self.conflicts.append(f"{key!r} of {e.id} already belongs to {prev[2]}")
                    continue
                self._auto.add_word(pat, (len(pat), len(key.split()), e.id))
            if e.abbreviations:
                specs.append(lexicon.IndexSpec(e.id, e.id, (), tuple(e.abbreviations)))
        self.size = len(self._auto)
        if self.size:
            self._auto.make_automaton()
        self._abbr = lexicon.build_index(specs)
        self.conflicts += self._abbr.conflicts

    def find(self, text: str) -> list[Hit]:
        keys = lexicon.token_keys(text)
        if not keys:
            return []
        cands: list[tuple[int, int, str]] = []  # (first token, token count, concept)
        if self.size:
            starts: dict[int, int] = {}
            pos = 1
            for i, key in enumerate(keys):
                starts[pos] = i
                pos += len(key) + 1
            line = " " + " ".join(keys) + " "
            for end, (width, n, cid) in self._auto.iter(line):
                at = starts.get(end - width + 2)  # the pattern " a b " ends at ``end``; its first token follows
                if at is not None:
                    cands.append((at, n, cid))
        abbr = self._abbr.find(text)
        if not cands and not abbr:
            return []
        spans = lexicon.token_spans(text)  # only a text with a match needs the offsets
        if abbr:
            first = {a: k for k, (a, _b) in enumerate(spans)}
            last = {b: k for k, (_a, b) in enumerate(spans)}
            for m in abbr:
                a, b = first.get(m.start), last.get(m.end)
                if a is not None and b is not None:
                    cands.append((a, b - a + 1, m.id))
        cands.sort(key=lambda c: (c[0], -c[1]))
        out: list[Hit] = []
        nxt = 0
        for i, n, cid in cands:
            if i < nxt:
                continue
            out.append(Hit(spans[i][0], spans[i + n - 1][1], cid))
            nxt = i + n
        return out
