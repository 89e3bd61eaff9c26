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

When the written words still find no path (the text says a number otherwise than the speaker did: "918-920-2857"
for "nine one eight, nine two zero, twenty eight fifty seven", "128" for "one twenty eight"), the alignment is
tried once more on a grammar in which each number may be said in any of its usual ways
(:func:`spoken_alternatives`), with wider search beams. Without it the utterance's words would only share its
time by their length, and a phone number in it would be muted where it was not said.

Each written token keeps the span from the first to the last of its spoken words; the alignment's own
silence and noise tokens are not words.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

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


def _digit_readings(digits: str) -> list[list[str]]:
    """Ways a run of digits is said: as :func:`number_words`, digit by digit (zero as "zero" or "oh"), three digits
    as a cardinal or a digit and a pair ("one twenty eight"), four as two pairs ("twenty eight fifty seven")."""
    ones = [_ONES[int(c)] for c in digits]
    out = [number_words(digits), ones]
    if "0" in digits:
        out.append(["oh" if c == "0" else w for c, w in zip(digits, ones, strict=True)])
    if len(digits) == 3 and digits[0] != "0":
        out.append(cardinal(int(digits)))
        rest = ["oh", _ONES[int(digits[2])]] if digits[1] == "0" else _under_100(int(digits[1:]))
        out.append([ones[0], *rest])
    if len(digits) == 4 and digits[0] != "0" and digits[2] != "0":
        out.append(_under_100(int(digits[:2])) + _under_100(int(digits[2:])))
    return out


_NUMBER_TOKEN = re.compile(r"[\d()\-./]*\d[\d()\-./]*")


def spoken_alternatives(token: str, *, most: int = 32) -> list[list[str]]:
    """The ways a speaker may say one written token: :func:`spoken_words` first; for a number written in digits
    (grouped or not) also each group read in the ways of :func:`_digit_readings` (at most ``most`` in all)."""
    first = spoken_words(token)
    bare = token.lower().strip(".,;:!?\"[]{}")
    if not _NUMBER_TOKEN.fullmatch(bare):
        return [first] if first else []
    out = [first]
    groups = [_digit_readings(g) for g in re.findall(r"\d+", bare)]
    for combo in itertools.product(*groups):
        said = [w for g in combo for w in g]
        if said not in out:
            out.append(said)
        if len(out) >= most:
            break
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
    #: Search beams of the last try, on the grammar of spoken alternatives (PocketSphinx's defaults: 1e-48,
    #: 7e-29, 1e-48): wide enough to keep a path through words said a little otherwise than written.
    loose_beams: ClassVar[dict[str, float]] = {"beam": 1e-80, "wbeam": 1e-60, "pbeam": 1e-80}

    def __init__(self, **config: Any) -> None:
        ps = require("pocketsphinx")
        options: dict[str, Any] = {"samprate": ANALYSIS_RATE, "loglevel": "FATAL"}
        options.update(config)
        self._options = options
        self._decoder = ps.Decoder(**options)
        self._loose: Any = None
        self._known: dict[str, str] = {}
        #: Whether the last alignment came from the grammar of spoken alternatives (the written words found
        #: no path): its times are less certain.
        self.last_loose = False

    def _lookup(self, word: str) -> str | None:
        found: str | None = self._decoder.lookup_word(word)
        return found

    def _dictionary_word(self, word: str) -> str:
        """``word`` itself when the dictionary has it; otherwise it is added with a guessed pronunciation."""
        w = re.sub(r"[^a-z']", "", word.lower()).strip("'") or "ah"
        if w in self._known or self._lookup(w):
            return w
        phones = guess_phones(w, self._lookup)
        self._decoder.add_word(w, phones, True)
        if self._loose is not None:
            self._loose.add_word(w, phones, True)
        self._known[w] = phones
        return w

    def _loose_decoder(self) -> Any:
        if self._loose is None:
            ps = require("pocketsphinx")
            self._loose = ps.Decoder(**{**self._options, **self.loose_beams})
            for w, phones in self._known.items():
                self._loose.add_word(w, phones, True)
        return self._loose

    def _align_alternatives(self, signal: Any, tokens: Sequence[str]) -> list[Aligned] | None:
        """The last try: a grammar in which each token may be said in any of its :func:`spoken_alternatives`."""
        said = [[[self._dictionary_word(w) for w in alt] for alt in spoken_alternatives(tok)] for tok in tokens]
        said = [[alt for alt in alts if alt] for alts in said]
        parts = [" | ".join(" ".join(alt) for alt in alts) for alts in said if alts]
        if not parts:
            return []
        d = self._loose_decoder()
        grammar = "#JSGF V1.0;\ngrammar said;\npublic <said> = " + " ".join(f"( {p} )" for p in parts) + " ;\n"
        d.add_jsgf_string("said", grammar)
        d.activate_search("said")
        for level, seed in self.retries:
            d.start_utt()
            d.process_raw(to_pcm16(dither(signal, level, seed)), full_utt=True)
            d.end_utt()
            if d.hyp() is None:
                continue
            segs = [s for s in d.seg() if not _FILLER.match(str(s.word))]
            spans = _read_as([_VARIANT.sub("", str(s.word)) for s in segs], said)
            if spans is not None:
                break
        else:
            return None  # no try found a reading of the tokens
        out = [Aligned(i, segs[a].start_frame / 100.0, (segs[b].end_frame + 1) / 100.0) for i, a, b in spans]
        rest = [i for i, alts in enumerate(said) if alts and i > (spans[-1][0] if spans else -1)]
        if rest:
            # The path stopped before the text's end (the utterance was cut while a number or a name went on):
            # the tokens it did not reach share the time after the last one it did.
            start = out[-1].end if out else 0.0
            end = max(start, len(signal) / ANALYSIS_RATE)
            weights = [len("".join(said[i][0])) for i in rest]
            bounds = [start]
            for k in weights:
                bounds.append(bounds[-1] + (end - start) * k / sum(weights))
            out += [Aligned(i, bounds[max(0, j - 1)], bounds[min(len(rest), j + 2)]) for j, i in enumerate(rest)]
        return out

    def align(self, signal: Any, tokens: Sequence[str]) -> list[Aligned] | None:
        """Times of ``tokens`` in ``signal`` (float, 16 kHz); None when the decoder finds no alignment.

        Tokens that say nothing (punctuation) get no entry; every other token gets one.
        """
        spoken: list[tuple[int, str]] = []
        for i, tok in enumerate(tokens):
            for w in spoken_words(tok):
                spoken.append((i, self._dictionary_word(w)))
        self.last_loose = False
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
            self.last_loose = True
            return self._align_alternatives(signal, tokens)
        spans: dict[int, list[float]] = {}
        for (i, _), s in zip(spoken, segs, strict=True):
            a, b = s.start_frame / 100.0, (s.end_frame + 1) / 100.0
            if i in spans:
                spans[i][1] = b
            else:
                spans[i] = [a, b]
        return [Aligned(i, a, b) for i, (a, b) in sorted(spans.items())]


def _read_as(heard: Sequence[str], said: Sequence[Sequence[Sequence[str]]]) -> list[tuple[int, int, int]] | None:
    """Which of its alternatives each token was heard as: ``(token, first, last)`` indices into ``heard``.

    ``heard`` must read as one alternative of each token in turn, or as such a reading cut short (the path
    stopped inside or after a token: the text goes on past the audio); the tokens it reaches are returned, the
    last one possibly with only the first words of its alternative. None when ``heard`` reads otherwise.
    """
    n = len(heard)
    # back[i][p]: (previous position, token) for a reading of tokens [0, i) that ends at heard position p
    back: list[dict[int, int]] = [{0: -1}]
    cut: tuple[int, int, int] | None = None  # (tokens read, position, words of the next token heard)
    for alts in said:
        here = back[-1]
        nxt: dict[int, int] = {}
        for p in sorted(here):
            if not alts:
                nxt.setdefault(p, p)
                continue
            for alt in alts:
                m = len(alt)
                if list(heard[p : p + m]) == list(alt):
                    nxt.setdefault(p + m, p)
                elif p < n and p + m > n and list(heard[p:]) == list(alt[: n - p]) and cut is None:
                    cut = (len(back) - 1, p, n - p)
        back.append(nxt)
        if not nxt:
            break
    read = next((i for i in range(len(back) - 1, -1, -1) if n in back[i]), None)
    if read is None and cut is None:
        return None
    out: list[tuple[int, int, int]] = []
    if read is not None and (read == len(said) or cut is None or cut[0] < read):
        pos, upto = n, read
    else:
        assert cut is not None
        out.append((cut[0], cut[1], n - 1))
        pos, upto = cut[1], cut[0]
    for i in range(upto, 0, -1):
        prev = back[i][pos]
        if prev < pos:
            out.append((i - 1, prev, pos - 1))
        pos = prev
    return out[::-1]


__all__ = ["Aligned", "Aligner", "cardinal", "dither", "guess_phones", "number_words", "spoken_alternatives",
           "spoken_words"]
