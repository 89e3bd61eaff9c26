"""Case-insensitive patterns searched over lower-cased ASCII text (:mod:`anonpsy.caseless`) give the matches of the
original pattern, for every such pattern extraction uses and for patterns with the constructions the rewriting
handles (classes, negations, back-references, look-behinds, letters outside ASCII that match ASCII letters)."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

import anonpsy.pipeline  # noqa: F401  (loads every module that makes one)
from anonpsy import caseless
from anonpsy.caseless import Caseless
from anonpsy.extract.assembly import build, steb, visit  # noqa: F401
from anonpsy.extract.mentions import diagnoses, treatments
from anonpsy.generate import templates  # noqa: F401


def _project_patterns() -> list[Caseless]:
    """Every Caseless extraction makes, the ones built on first use included."""
    diagnoses._dx_matcher(False)
    diagnoses._dx_matcher(True)
    treatments._groups()
    for cues in (visit._SETTING_CUES, visit._ARRIVAL_CUES):
        visit._any_cue(tuple(p for p, _ in cues))
    return sorted(caseless.MADE, key=lambda c: c.pattern)


PROJECT = _project_patterns()
#: Whole names the tries and alternations are built from (a trie's pattern spells no word in one piece).
NAMES = sorted({*diagnoses._dx_matcher(True)[1], *treatments._groups()[1]})

#: Patterns with the constructions the rewriting meets (or refuses: local flags).
SHAPES = [
    r"\b(?:she|her|mrs?)\b",
    r"(?P<c0>\bED\b)|(?P<c1>\bemergency (?:room|dept))|(?P<c2>\bER)",
    r"(?<![\w-])(ab|a[^x-z]c|[A-F]+)(?![\w-])",
    r"(\w)\1x",
    r"(?<=[,.;])\s*[A-Z][a-z]+:",
    "\u017fick|\u212aey|\u0130ll|\u0131on",  # long s, Kelvin sign, dotted and dotless i
    r"[^\W\d_]+(?:'[^\W\d_]+)*",
    r"a(?-i:B)c|(?i:x)y",
    r"^\s*(?:no|denies)\b.*?$",
    r"x*",
    r"(?:(a)|b)(?(1)c|d)",
]
COMPILED = [Caseless(re.compile(p, re.I | re.M)) for p in SHAPES]


def _key(m: re.Match[str] | None) -> object:
    return None if m is None else (m.span(), m.groups(), m.lastgroup, m.re.pattern, m.string)


def _words(pattern: str) -> list[str]:
    return sorted(set(re.findall(r"[A-Za-z]+", pattern)))[:400] or ["a"]


_SEPARATORS = [" ", "  ", "-", ",", ", ", ".", ". ", "'", "\n", ":", "(", ")", "/", "1", "20", "_", "\u017f",
               "\u212a", "é", "\t", "\x1c"]  # "\x1c": a space to Unicode \s, not to ASCII \s


def _texts(words: list[str]) -> st.SearchStrategy[str]:
    word = st.sampled_from(words).flatmap(
        lambda w: st.sampled_from([w, w.lower(), w.upper(), w.capitalize(), w.swapcase()]))
    return st.lists(st.one_of(word, st.sampled_from(_SEPARATORS)), max_size=24).map("".join)


def _agree(pat: Caseless, text: str, pos: int) -> None:
    slow = pat.slow
    assert _key(pat.search(text)) == _key(slow.search(text))
    assert _key(pat.search(text, pos)) == _key(slow.search(text, pos))
    assert _key(pat.search(text, 0, pos)) == _key(slow.search(text, 0, pos))
    assert _key(pat.match(text, pos)) == _key(slow.match(text, pos))
    assert [_key(m) for m in pat.finditer(text)] == [_key(m) for m in slow.finditer(text)]
    assert [_key(m) for m in pat.finditer(text, pos)] == [_key(m) for m in slow.finditer(text, pos)]
    assert pat.findall(text) == slow.findall(text)


@given(st.data())
def test_caseless_project_patterns_match_as_the_originals(data: st.DataObject) -> None:
    pat = data.draw(st.sampled_from(PROJECT))
    names = data.draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=8))
    text = data.draw(_texts(_words(pat.pattern) + names))
    _agree(pat, text, data.draw(st.integers(0, len(text))))


@given(st.sampled_from(COMPILED), st.data())
@example(COMPILED[5], None)
def test_caseless_shapes_match_as_the_originals(pat: Caseless, data: st.DataObject | None) -> None:
    if data is None:  # the letters outside ASCII that match ASCII letters under re.I
        for text in ("sick KEY ill ion", "SICK key ILL ION", "\u017fick \u212aey"):
            _agree(pat, text, 0)
        return
    text = data.draw(_texts([*_words(pat.pattern), "sick", "KEY", "Ill", "ion", "ED", "Er", "bc", "abc"]))
    _agree(pat, text, data.draw(st.integers(0, len(text))))


def test_caseless_rewrites_the_project_patterns() -> None:
    """The faster search is taken: every pattern extraction wraps is one the rewriting covers."""
    assert PROJECT and all(p.fast is not None for p in PROJECT)
    assert COMPILED[7].fast is None  # local flags: the original pattern is used


def test_required_strings_of_a_union_of_words() -> None:
    """The strings a match must hold are read off the pattern's literal beginnings (a string holding another is
    left out), and a text holding none of them is not searched yet gets the original pattern's answer."""
    c = Caseless(re.compile(r"\b(?:gained|has gained|put on)\s+\d+", re.I))
    assert c.required == ("gained", "put on")
    assert c.search("She has GAINED 5 kg.") is not None
    assert c.search("She has gain 5 kg.") is None and c.slow.search("She has gain 5 kg.") is None
    both = "put on 3, gained 4"
    assert [m.span() for m in c.finditer(both)] == [m.span() for m in c.slow.finditer(both)] == [(0, 8), (10, 18)]
    assert Caseless(re.compile(r"\b(?:a|an)\s+x", re.I)).required is None  # a one-letter beginning: no test
