"""One tokenisation pass per analysed text, shared by every lexical recognizer.

:class:`TextView` holds the text, its case-folded copy (same length, so offsets are shared) and the word tokens
(letters with inner apostrophes and hyphens: "O'Rourke", "Kessler-Adventist"), found by one compiled regex.
Name cues, name dictionaries, place gazetteers and the clinical safe-list all read these tokens instead of
scanning the text again, and all of them compare the folded form, so "HEALEY", "Healey" and "healey" are the
same word.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from functools import cached_property

_NONWORD = re.compile(r"[^\w']")
#: :data:`_NONWORD` replaced by a blank, for ASCII text: every ASCII character but a letter, a digit, "_" and "'".
_ASCII_BLANKS = str.maketrans({chr(i): " " for i in range(128) if _NONWORD.match(chr(i))})


def _blanked(text: str) -> str:
    """``text`` with every character of :data:`_NONWORD` a blank (one table lookup per character on ASCII
    text, rather than one match per character)."""
    return text.translate(_ASCII_BLANKS) if text.isascii() else _NONWORD.sub(" ", text)
_ASCII_UPPER = string.ascii_uppercase.encode()
_ASCII_LOWER = string.ascii_lowercase.encode()
WORD_RE = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*(?:-[^\W\d_]+)*")


def spaced_key(phrase: str) -> str:
    """The form of a phrase that :attr:`TextView.spaced` holds: folded, every non-word character a blank,
    padded with one blank each side, so an automaton finds it only as whole words."""
    return " " + _blanked(fold(phrase).strip()) + " "


def core_span(end_idx: int, key: str) -> tuple[int, int]:
    """Offsets in the text of an automaton hit of ``key`` (a :func:`spaced_key`) ending at ``end_idx`` of
    :attr:`TextView.spaced`."""
    lead = len(key) - len(key.lstrip(" "))
    trail = len(key) - len(key.rstrip(" "))
    start = end_idx - len(key) + 1
    return start + lead - 1, end_idx + 1 - trail - 1


def fold(text: str) -> str:
    """Lower-cased ``text`` with the same length (characters whose lower case is longer are kept)."""
    low = text.lower()
    if len(low) == len(text):
        return low.replace("’", "'")
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text).replace("’", "'")


@dataclass
class TextView:
    """A text, its folded copy and its word tokens (parallel lists of starts, ends and folded words)."""

    text: str
    folded: str = field(init=False)
    starts: list[int] = field(init=False)
    ends: list[int] = field(init=False)
    words: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.folded = fold(self.text)
        found = list(WORD_RE.finditer(self.folded))
        self.starts = list(map(re.Match.start, found))  # builtins: no Python step per token
        self.ends = list(map(re.Match.end, found))
        self.words = list(map(re.Match.group, found))

    def __len__(self) -> int:
        return len(self.words)

    @cached_property
    def spaced(self) -> str:
        """The folded text with every non-word character a blank, padded with one blank each side (offsets
        shifted by one): whole-word automaton matching needs no boundary checks on it."""
        return " " + _blanked(self.folded) + " "

    @cached_property
    def positions(self) -> dict[str, list[int]]:
        """Token indexes by folded word."""
        out: dict[str, list[int]] = {}
        for i, w in enumerate(self.words):
            out.setdefault(w, []).append(i)
        return out

    def phrase_hits(self, phrase: str) -> list[tuple[int, int]]:
        """``(start, end)`` of every occurrence of a folded phrase as whole tokens separated by blanks."""
        parts = phrase.split(" ")
        out: list[tuple[int, int]] = []
        k = len(parts)
        for i in self.positions.get(parts[0], ()):
            if k == 1:
                out.append((self.starts[i], self.ends[i]))
            elif self.words[i : i + k] == parts and all(not self.gap(j).strip() for j in range(i, i + k - 1)):
                out.append((self.starts[i], self.ends[i + k - 1]))
        return out

    @cached_property
    def index_at(self) -> dict[int, int]:
        """Token index by start offset."""
        return {s: i for i, s in enumerate(self.starts)}

    def gap(self, i: int) -> str:
        """The characters between token ``i`` and token ``i + 1`` (empty past the last token)."""
        if i + 1 >= len(self.starts):
            return self.text[self.ends[i] :] if i < len(self.ends) else ""
        return self.text[self.ends[i] : self.starts[i + 1]]

    def before(self, i: int) -> str:
        """The characters between token ``i - 1`` and token ``i``."""
        return self.text[self.ends[i - 1] if i > 0 else 0 : self.starts[i]]

    @cached_property
    def letter_case(self) -> tuple[int, int]:
        """How many ASCII capitals and ASCII lower-case letters the text holds (counted in its UTF-8 bytes, where
        every other character is written with bytes outside ASCII: two deletions, not one count per letter)."""
        raw = self.text.encode("utf-8", "surrogatepass")
        return (len(raw) - len(raw.translate(None, _ASCII_UPPER)), len(raw) - len(raw.translate(None, _ASCII_LOWER)))

    @cached_property
    def uncased(self) -> bool:
        """Whether case carries no signal here: the text is written mostly in capitals, or almost all in lower
        case (as many nursing notes are)."""
        upper, lower = self.letter_case
        return upper > lower or upper * 40 < lower

    @cached_property
    def lower_case(self) -> bool:
        """Whether the text is written almost all in lower case: there the rare capital is a signal ("psych
        doctor Sullivan phoned") even though a lower-case word may still be a name."""
        upper, lower = self.letter_case
        return upper * 40 < lower and upper <= lower

    def capitalised_at(self, start: int) -> bool:
        """Whether the word at ``start`` is written with a capital in a text whose case carries a signal (a text
        that uses case, or one almost all in lower case)."""
        return self.text[start : start + 1].isupper() and (not self.uncased or self.lower_case)

    def is_upper(self, i: int) -> bool:
        """Whether token ``i`` is written in capitals."""
        return self.text[self.starts[i] : self.ends[i]].isupper()

    def is_title(self, i: int) -> bool:
        """Whether token ``i`` starts with a capital followed by a lower-case letter."""
        w = self.text[self.starts[i] : self.ends[i]]
        return w[:1].isupper() and not w.isupper()


__all__ = ["WORD_RE", "TextView", "core_span", "fold", "spaced_key"]
