"""Case-insensitive patterns searched faster on ASCII text.

With ``re.IGNORECASE`` the regular expression engine lowers every character of the text it compares, alternative
by alternative, and cannot skip ahead to the positions where a match may begin; a long case-insensitive
alternation ("emergency department|ED|psychiatric emergency|...") so costs several times what the same
alternation costs case-sensitively. On ASCII text (most notes) :class:`Caseless` searches the lower-case text with
the same pattern made case-sensitive (every letter of the pattern in lower case, every character class made of
the ASCII characters it matches, lower-cased), then re-reads the match it found with the original pattern at that
position, so callers get the original pattern's match object on the original text. Text with any character
outside ASCII, and patterns this rewriting does not cover (local flags, bytes), use the original pattern.

Both searches give the same matches (``tests/test_caseless.py`` holds the property): on ASCII text
``str.lower`` changes only the letters A-Z, one for one, and never what ``\\w``, ``\\b``, ``\\d`` or ``\\s`` see;
each character the rewritten pattern tests is tested against the set of ASCII characters the original one
accepts, which is closed under case. The rewriting also tests a boundary that every alternative of an
alternation opens with once, before the alternation (the unions of cues, one named group per cue).
"""

from __future__ import annotations

import re
import sys
import weakref
from collections.abc import Iterator
from functools import cache
from typing import Any

try:  # the engine's own parser and compiler (CPython 3.11 and later)
    from re import _compiler, _parser  # type: ignore[attr-defined]
    from re._constants import (  # type: ignore[import-not-found]
        ANY,
        ASSERT,
        ASSERT_NOT,
        AT,
        ATOMIC_GROUP,
        BRANCH,
        GROUPREF,
        GROUPREF_EXISTS,
        IN,
        LITERAL,
        MAX_REPEAT,
        MIN_REPEAT,
        NOT_LITERAL,
        POSSESSIVE_REPEAT,
        SUBPATTERN,
    )
    _REWRITES = True
except ImportError:  # pragma: no cover - another implementation: every pattern keeps its own search
    _REWRITES = False

_ASCII = [chr(i) for i in range(128)]


#: Every :class:`Caseless` alive (the property tests check each against its pattern).
MADE: weakref.WeakSet[Caseless] = weakref.WeakSet()


class _Unsupported(Exception):
    """The pattern holds something the rewriting does not cover."""


@cache
def _char_node(op: Any, av: Any, flags: int) -> tuple[Any, Any]:
    """The case-sensitive node that accepts, in lower-cased ASCII text, what the one-character node ``(op, av)``
    accepts in ASCII text under ``flags`` (which hold ``re.IGNORECASE``)."""
    state = _parser.State()
    state.flags = flags
    one = _compiler.compile(_parser.SubPattern(state, [(op, av)]), flags)
    accepted = {c for c in _ASCII if one.fullmatch(c)}
    lowered = sorted({c.lower() for c in accepted})
    if {c for c in _ASCII if c.lower() in lowered} != accepted:  # not closed under case: cannot happen with re.I
        raise _Unsupported(op)
    if len(lowered) == 1:
        return (LITERAL, ord(lowered[0]))
    if not lowered:  # a character outside ASCII: it still matches nothing in ASCII text
        return (op, av)
    return (IN, [(LITERAL, ord(c)) for c in lowered])


def _leading_assertion(items: Any) -> Any:
    """The nodes that begin with the zero-width assertion (``\\b``, ``^``...) ``items`` starts with, inside the
    groups it opens with; None when it does not start with one."""
    while items and items[0][0] is SUBPATTERN and not items[0][1][1] and not items[0][1][2]:
        items = items[0][1][3]
    return items if items and items[0][0] is AT else None


def _hoist(items: Any, k: int) -> None:
    """Move the assertion every alternative of the alternation ``items[k]`` starts with before it (in a union of
    cues "(?P<c0>\\b...)|(?P<c1>\\b...)" the engine then tests ``\\b`` once per position, not once per cue)."""
    heads = [_leading_assertion(alt) for alt in items[k][1][1]]
    if not heads or any(h is None for h in heads) or len({h[0] for h in heads}) != 1:
        return
    node = heads[0][0]
    for h in heads:
        del h[0]
    items.insert(k, node)


def _rewrite(items: Any, flags: int) -> None:
    """Rewrite the parsed pattern ``items`` (a SubPattern or list of nodes) in place."""
    k = 0
    while k < len(items):
        if items[k][0] is BRANCH:
            _hoist(items, k)
        op, av = items[k]
        k += 1
        if op in (LITERAL, NOT_LITERAL, IN):
            items[k - 1] = _char_node(op, av if op is not IN else _Frozen(av), flags)
        elif op in (ANY, AT, GROUPREF):
            pass
        elif op is BRANCH:
            for sub in av[1]:
                _rewrite(sub, flags)
        elif op is SUBPATTERN:
            _group, add_flags, del_flags, sub = av
            if add_flags or del_flags:
                raise _Unsupported("local flags")
            _rewrite(sub, flags)
        elif op in (MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT):
            _rewrite(av[2], flags)
        elif op is ATOMIC_GROUP:
            _rewrite(av, flags)
        elif op in (ASSERT, ASSERT_NOT):
            _rewrite(av[1], flags)
        elif op is GROUPREF_EXISTS:
            _rewrite(av[1], flags)
            if av[2] is not None:
                _rewrite(av[2], flags)
        else:
            raise _Unsupported(op)


class _Frozen(list):  # type: ignore[type-arg]
    """A character-class item list that can key a cache (compared and hashed by its items)."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(repr(self))


def lowered(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """``pattern`` (case-insensitive) made case-sensitive for lower-cased ASCII text, or None when the rewriting
    does not cover it."""
    made = _lowered_required(pattern)
    return None if made is None else made[0]


def _lowered_required(pattern: re.Pattern[str]) -> tuple[re.Pattern[str], tuple[str, ...] | None] | None:
    """:func:`lowered` with the strings of :func:`_required` for the rewritten pattern."""
    if not _REWRITES or not isinstance(pattern.pattern, str):
        return None
    parsed = _parser.parse(pattern.pattern, pattern.flags)
    flags = parsed.state.flags
    if not flags & re.IGNORECASE:
        return None
    try:
        _rewrite(parsed, flags)
    except _Unsupported:
        return None
    # The rewritten pattern reads ASCII text only, where the ASCII meaning of a word boundary (the one assertion
    # left that depends on the flags: every character class is now a set of ASCII characters) is the Unicode
    # one, and is told by a table lookup instead of a query of the Unicode database.
    parsed.state.flags = (flags & ~(re.IGNORECASE | re.UNICODE)) | re.ASCII
    return _compiler.compile(parsed, parsed.state.flags), _required(parsed)


#: Most literal beginnings a pattern may have for the substring test before its search (:func:`_required`): past
#: that many, the tests cost more than the search they would spare.
_MAX_REQUIRED = 12


def _prefixes(items: Any, deep: bool = True) -> set[str]:
    """Strings one of which every match of the nodes ``items`` (rewritten: case-sensitive) begins with; the empty
    string among them when a match may begin with anything. Zero-width nodes (``\\b``, look-arounds) consume
    nothing, so the letters on either side of them are consecutive in the text. Not ``deep``: the literal letters
    before a group are all that is read when there are any (fewer, shorter strings)."""
    buf: list[str] = []
    for op, av in items:
        if op is LITERAL:
            buf.append(chr(av))
            continue
        if op in (AT, ASSERT, ASSERT_NOT):
            continue
        head = "".join(buf)
        if head and not deep:
            return {head}
        if op is SUBPATTERN:
            subs = _prefixes(av[3], deep)
        elif op is BRANCH:
            subs = set().union(*(_prefixes(alt, deep) for alt in av[1]))
        elif op in (MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT) and av[0] >= 1:
            subs = _prefixes(av[2], deep)
        elif op is ATOMIC_GROUP:
            subs = _prefixes(av, deep)
        else:
            return {head}
        return {head + s for s in subs}
    return {"".join(buf)}


def _longest_run(items: Any) -> str:
    """The longest run of literal letters that every match of the nodes ``items`` holds: consecutive literal
    nodes of the sequence itself (zero-width nodes between them consume nothing), never inside a group."""
    runs, buf = [""], []
    for op, av in items:
        if op is LITERAL:
            buf.append(chr(av))
        elif op not in (AT, ASSERT, ASSERT_NOT):
            runs.append("".join(buf))
            buf = []
    runs.append("".join(buf))
    return max(runs, key=len)


def _required(parsed: Any) -> tuple[str, ...] | None:
    """A few strings one of which every match of the rewritten pattern ``parsed`` holds in the lower-cased text
    (a text that holds none cannot match, which substring tests tell sooner than the search): the strings its
    matches begin with, else a run of at least three literal letters they all hold; None when neither pays."""
    run = _longest_run(parsed)
    for deep in (True, False):
        found = _prefixes(parsed, deep)
        if not found or min(map(len, found)) < 2:
            break
        # a string holding another of them adds nothing: the text that holds it holds the other
        kept = sorted(p for p in found if not any(q != p and q in p for q in found))
        if len(kept) <= _MAX_REQUIRED:
            return tuple(kept)
    # no short list of beginnings: a long enough run of letters in the middle or at the end ("... p.r.n.$")
    return (run,) if len(run) >= 3 else None


def _never_empty(pattern: re.Pattern[str]) -> bool:
    return bool(_parser.parse(pattern.pattern, pattern.flags).getwidth()[0] > 0)


#: The text lower-cased last, as (text, lower-cased text): three searches in four read the very text the search
#: before read (each step asks several patterns about one sentence), which is then lower-cased once. One tuple,
#: replaced whole, so a reader always gets a text with its own lower-cased form.
_last_lowered: tuple[str, str] = ("", "")


def _lower(string: str) -> str:
    """``string.lower()``, remembered for the last text (see :data:`_last_lowered`)."""
    global _last_lowered
    last = _last_lowered
    if last[0] is string:
        return last[1]
    low = string.lower()
    _last_lowered = (string, low)
    return low


class Caseless:
    """A case-insensitive pattern with the faster search on ASCII text (see the module). Offers ``search``,
    ``match``, ``finditer`` and ``findall`` with the arguments and results of :class:`re.Pattern`'s."""

    __slots__ = ("__weakref__", "_iter_fast", "fast", "required", "slow")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        MADE.add(self)
        self.slow = pattern
        made = _lowered_required(pattern)
        self.fast = None if made is None else made[0]
        #: Strings one of which every match holds in the lower-cased text (None: no such short list): a text that
        #: holds none of them is not searched.
        self.required = None if made is None else made[1]
        # finditer's handling of empty matches is left to the engine
        self._iter_fast = self.fast is not None and _never_empty(pattern)

    @property
    def pattern(self) -> str:
        return self.slow.pattern

    @property
    def flags(self) -> int:
        return self.slow.flags

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        if self.fast is None or not string.isascii():
            return self.slow.search(string, pos, endpos)
        low = _lower(string)
        if not self._may_match(low):
            return None
        m = self.fast.search(low, pos, endpos)
        # the original pattern matches at the same position, and the caller gets its match on the original text
        return None if m is None else self.slow.match(string, m.start(), endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        if self.fast is None or not string.isascii() or self.fast.match(_lower(string), pos, endpos):
            return self.slow.match(string, pos, endpos)
        return None

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        if not self._iter_fast or not string.isascii():
            return self.slow.finditer(string, pos, endpos)
        return self._finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        if not self._iter_fast or not string.isascii():
            return self.slow.findall(string, pos, endpos)
        groups = self.slow.groups
        ms = self._finditer(string, pos, endpos)
        if groups == 0:
            return [m.group() for m in ms]
        return [m.group(1) or "" for m in ms] if groups == 1 else [m.groups("") for m in ms]

    def _may_match(self, low: str) -> bool:
        """False only when the lower-cased text holds none of the strings every match holds (see
        :attr:`required`); a plain loop, which costs less than a generator on every sentence."""
        if self.required is None:
            return True
        for r in self.required:  # noqa: SIM110 (a generator costs more than the tests)
            if r in low:
                return True
        return False

    def _finditer(self, string: str, pos: int, endpos: int) -> Iterator[re.Match[str]]:
        assert self.fast is not None
        low = _lower(string)
        if not self._may_match(low):
            return
        search, match = self.fast.search, self.slow.match
        while (f := search(low, pos, endpos)) is not None:
            m = match(string, f.start(), endpos)
            if m is None:  # pragma: no cover - the two patterns accept the same matches
                raise AssertionError("case-insensitive rewriting disagrees with the pattern")
            yield m
            pos = m.end()


def compile(pattern: str, flags: int = re.IGNORECASE) -> Caseless:
    """``re.compile(pattern, flags)`` (case-insensitive) as a :class:`Caseless`."""
    return Caseless(re.compile(pattern, flags))
