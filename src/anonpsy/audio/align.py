"""Word timestamps for a known transcript: forced alignment with PocketSphinx.

A recogniser that writes text without times (Moonshine) is placed in time by aligning its words to the audio
with PocketSphinx's acoustic model (``Decoder.set_align_text``): the decoder may only choose *where* each given
word lies, never *which* word, so the times are frame-accurate (10 ms) even where PocketSphinx alone would
have recognised nonsense.

Written tokens are first turned into the words a speaker says (:func:`spoken_words`): "9th" is "ninth",
"1974" is "nineteen seventy four", "555-0127" is said digit by digit, "Dr." is "doctor". A word missing
from PocketSphinx's dictionary (most unusual names) gets a pronunciation guessed from the dictionary itself
(:func:`guess_phones`): the longest pieces of the word that are dictionary words, letters for the rest.
Only the timing depends on the guess, and alignment tolerates rough pronunciations.

Digital silence (runs of exact zeros, as in padded or edited recordings) leaves the decoder's cepstral mean
and its silence model without anything to match, and it then often finds no path at all; a deterministic
dither at a room's noise floor, far below speech (:func:`dither`, -60 dBFS), is added to the decoder's copy
only. When no path is found the alignment is tried again with other dither (``retries``).

Each written token keeps the span from the first to the last of its spoken words; the alignment's own
silence and noise tokens are not words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from anonpsy.audio.signal import ANALYSIS_RATE, require, to_pcm16

_ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_TEENS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
          "nineteen")
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_ORDINAL = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
            "nine": "ninth", "twelve": "twelfth"}
_ABBREVIATIONS = {"dr": ["doctor"], "mr": ["mister"], "mrs": ["missus"], "ms": ["miz"], "st": ["street"],
                  "ave": ["avenue"], "apt": ["apartment"], "%": ["percent"], "&": ["and"], "+": ["plus"],
                  "mg": ["milligrams"], "ml": ["milliliters"], "vs": ["versus"], "etc": ["etcetera"]}
#: One ARPAbet guess per letter, for the parts of a word no dictionary piece covers.
_LETTER_PHONES = {"a": "AE", "b": "B", "c": "K", "d": "D", "e": "EH", "f": "F", "g": "G", "h": "HH", "i": "IH",
                  "j": "JH", "k": "K", "l": "L", "m": "M", "n": "N", "o": "AA", "p": "P", "q": "K", "r": "R",
                  "s": "S", "t": "T", "u": "AH", "v": "V", "w": "W", "x": "K S", "y": "IY", "z": "Z"}
_PIECE = re.compile(r"\d+|[a-z']+|[%&+]")
_GROUPED_DIGITS = re.compile(r"\(?\d+\)?(?:[-./ ]\(?\d+\)?)+")
_FILLER = re.compile(r"^(<.*>|\[.*\]|\+\+.*\+\+)$")
_VARIANT = re.compile(r"\(\d+\)$")


def dither(signal: npt.NDArray[np.float32], level: float = 1e-3, seed: int = 0) -> npt.NDArray[np.float32]:
    """``signal`` plus Gaussian noise of RMS ``level`` (-60 dBFS), the same for the same input length and seed."""
    noise = np.random.default_rng(seed).normal(0.0, level, len(signal)).astype(np.float32)
    out: npt.NDArray[np.float32] = np.asarray(signal, dtype=np.float32) + noise
    return out


def _under_100(n: int) -> list[str]:
    if n < 10:
        return [_ONES[n]]
    if n < 20:
        return [_TEENS[n - 10]]
    tens, unit = divmod(n, 10)
    return [_TENS[tens]] + ([] if unit == 0 else [_ONES[unit]])


def cardinal(n: int) -> list[str]:
    """Words of ``0 <= n < 10**6`` as a cardinal ("three hundred twelve")."""
    if n < 100:
        return _under_100(n)
    if n < 1000:
        h, rest = divmod(n, 100)
        return [_ONES[h], "hundred"] + (_under_100(rest) if rest else [])
    th, rest = divmod(n, 1000)
    return cardinal(th) + ["thousand"] + (cardinal(rest) if rest else [])


def number_words(digits: str) -> list[str]:
    """How a run of digits is most likely said: years in pairs, short numbers as cardinals, the rest digit by digit."""
    n = int(digits)
    if len(digits) == 4 and 1100 <= n <= 1999 and not digits.startswith("0"):
        hi, lo = divmod(n, 100)
        return _under_100(hi) + (["hundred"] if lo == 0 else ["oh", _ONES[lo]] if lo < 10 else _under_100(lo))
    if len(digits) == 4 and 2000 <= n <= 2099:
        return cardinal(n)
    if len(digits) <= 3 and not (len(digits) > 1 and digits.startswith("0")):
        return cardinal(n)
    return [_ONES[int(c)] for c in digits]


def _ordinal(words: list[str]) -> list[str]:
    last = words[-1]
    if last in _ORDINAL:
        end = _ORDINAL[last]
    elif last.endswith("y"):
        end = last[:-1] + "ieth"
    else:
        end = last + "th"
    return [*words[:-1], end]


def spoken_words(token: str) -> list[str]:
    """The dictionary words a speaker says for one written token (lower case; may be empty for punctuation)."""
    t = token.lower().replace("\u2019", "'")
    bare = t.strip(".,;:!?\"()[]{}")
    if bare in _ABBREVIATIONS:
        return list(_ABBREVIATIONS[bare])
    m = re.fullmatch(r"(\d+)(st|nd|rd|th)", bare)
    if m:
        return _ordinal(number_words(m.group(1)))
    if _GROUPED_DIGITS.fullmatch(bare) and sum(c.isdigit() for c in bare) >= 5:
        return [_ONES[int(c)] for c in bare if c.isdigit()]  # phone and record numbers: digit by digit
    out: list[str] = []
    for piece in _PIECE.findall(bare):
        if piece.isdigit():
            out.extend(number_words(piece))
        elif piece in _ABBREVIATIONS:
            out.extend(_ABBREVIATIONS[piece])
        else:
            p = piece.strip("'")
            if p:
                out.append(p)
    return out


def guess_phones(word: str, lookup: Callable[[str], str | None]) -> str:
    """A pronunciation for ``word``: its longest dictionary pieces (two letters or more), then letters."""
    w = re.sub(r"[^a-z]", "", word.lower())
    phones: list[str] = []
    i = 0
    while i < len(w):
        for j in range(len(w), i + 1, -1):
            p = lookup(w[i:j])
            if p:
                phones.extend(p.split())
                i = j
                break
        else:
            phones.extend(_LETTER_PHONES[w[i]].split())
            i += 1
    return " ".join(phones) if phones else "AH"


@dataclass(frozen=True)
class Aligned:
    """Token ``index`` lies at ``[start, end)`` seconds of the aligned chunk."""

    index: int
    start: float
    end: float


class Aligner:
    """PocketSphinx forced alignment of written tokens to a 16 kHz signal (model from the wheel)."""

    #: (dither level, seed) of each try.
    retries: tuple[tuple[float, int], ...] = ((1e-3, 0), (1e-3, 1), (3e-3, 2))

    def __init__(self, **config: Any) -> None:
        ps = require("pocketsphinx")
        options: dict[str, Any] = {"samprate": ANALYSIS_RATE, "loglevel": "FATAL"}
        options.update(config)
        self._decoder = ps.Decoder(**options)
        self._known: dict[str, str] = {}

    def _lookup(self, word: str) -> str | None:
        found: str | None = self._decoder.lookup_word(word)
        return found

    def _dictionary_word(self, word: str) -> str:
        """``word`` itself when the dictionary has it; otherwise it is added with a guessed pronunciation."""
        w = re.sub(r"[^a-z']", "", word.lower()).strip("'") or "ah"
        if w in self._known or self._lookup(w):
            return w
        self._decoder.add_word(w, guess_phones(w, self._lookup), True)
        self._known[w] = w
        return w

    def align(self, signal: Any, tokens: Sequence[str]) -> list[Aligned] | None:
        """Times of ``tokens`` in ``signal`` (float, 16 kHz); None when the decoder finds no alignment.

        Tokens that say nothing (punctuation) get no entry; every other token gets one.
        """
        spoken: list[tuple[int, str]] = []
        for i, tok in enumerate(tokens):
            for w in spoken_words(tok):
                spoken.append((i, self._dictionary_word(w)))
        if not spoken:
            return []
        d = self._decoder
        text = " ".join(w for _, w in spoken)
        segs: list[Any] = []
        for level, seed in self.retries:
            d.set_align_text(text)
            d.start_utt()
            d.process_raw(to_pcm16(dither(signal, level, seed)), full_utt=True)
            d.end_utt()
            if d.hyp() is not None:
                segs = [s for s in d.seg() if not _FILLER.match(str(s.word))]
                if len(segs) == len(spoken):
                    break
        else:
            return None
        spans: dict[int, list[float]] = {}
        for (i, _), s in zip(spoken, segs, strict=True):
            a, b = s.start_frame / 100.0, (s.end_frame + 1) / 100.0
            if i in spans:
                spans[i][1] = b
            else:
                spans[i] = [a, b]
        return [Aligned(i, a, b) for i, (a, b) in sorted(spans.items())]


__all__ = ["Aligned", "Aligner", "cardinal", "dither", "guess_phones", "number_words", "spoken_words"]
