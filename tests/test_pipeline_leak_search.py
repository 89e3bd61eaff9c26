"""The leak audit's whole-word search agrees with the regular expression it stands for."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.pipeline import _find_word

# Letters, digits, underscore, punctuation, spaces and a few non-ASCII word and non-word characters.
_CHARS = st.sampled_from(list("ab_1 -.'éß٣²\u00a0İ"))


@given(text=st.text(_CHARS, max_size=30), surface=st.text(_CHARS, min_size=1, max_size=4))
@example(text="xab ab", surface="ab")
@example(text="ab_ ab", surface="ab")
@example(text="²ab", surface="ab")
def test_find_word_is_the_word_boundary_regex(text: str, surface: str) -> None:
    """property find_word_is_word_regex: _find_word(text, s) is where (?<!\\w)s(?!\\w) first matches, or -1."""
    m = re.search(rf"(?<!\w){re.escape(surface)}(?!\w)", text)
    assert _find_word(text, surface) == (m.start() if m else -1)
