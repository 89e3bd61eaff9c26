"""Caches of extraction keyed by sentence text give what the uncached computation gives."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.extract.sections import _HARD_BREAK, clause_bounds

_WORDS = st.sampled_from(["He", "she", "denies", "low", "mood", "but", "however", "though", "yet", "whereas",
                          "although", ";", ".", ":", ",", "p.o.", "e.g.", "Dr.", "sleep", "3", "weeks", "\n", "  "])
sentences_ = st.lists(_WORDS, max_size=20).map(" ".join)


def _clause_bounds_uncached(sentence: str, pos: int) -> tuple[int, int]:
    start, end = 0, len(sentence)
    for m in _HARD_BREAK.finditer(sentence):
        if m.end() <= pos:
            start = m.end()
        elif m.start() >= pos:
            end = m.start()
            break
    return start, end


@given(sentences_, st.integers(0, 200))
@example("He sleeps; but she does not.", 12)
def test_clause_bounds_cached_equals_uncached(sentence: str, pos: int) -> None:
    """Property (cache is transparent): the clause around a position, from the cached breaks of the sentence, is
    the clause a fresh search of the breaks finds, asked once or again."""
    pos = min(pos, len(sentence))
    expected = _clause_bounds_uncached(sentence, pos)
    assert clause_bounds(sentence, pos) == expected
    assert clause_bounds(sentence, pos) == expected
