"""How recognised words sound: pronunciations and a phone distance, to read a word a recogniser wrote as another
word that sounds like it ("screen" for "Green", "Terri's" for "Terrace").

Pronunciations are PocketSphinx's English dictionary (CMUdict phones without stress), every listed variant; a
word it does not list is spelled out from its longest dictionary pieces (:func:`anonpsy.audio.align.guess_phones`).
The distance is a Levenshtein distance over phones in which a phone heard as a close one costs half: a
consonant and its voiced or voiceless partner, two nasals, two vowels. Without PocketSphinx nothing sounds like
anything (:func:`phones` answers no pronunciation), so the rules that use it stay off.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

#: Consonants heard as each other (voiced and voiceless partners, nasals, the affricates and their fricatives).
_CLOSE = (
    {"P", "B"}, {"T", "D"}, {"K", "G"}, {"F", "V"}, {"S", "Z"}, {"SH", "ZH"}, {"CH", "JH"}, {"TH", "DH"},
    {"M", "N"}, {"N", "NG"}, {"CH", "SH"}, {"JH", "ZH"},
)
_VOWELS = frozenset({"AA", "AE", "AH", "AO", "AW", "AY", "EH", "ER", "EY", "IH", "IY", "OW", "OY", "UH", "UW"})
_VARIANT = re.compile(r"\(\d+\)$")


@lru_cache(maxsize=1)
def pronunciations() -> dict[str, list[str]]:
    """Lower-case word -> its pronunciations (phones joined by spaces), from PocketSphinx's dictionary; empty
    without it. Kept as written and split per word asked for: loading stays a small share of a short file's
    processing time."""
    try:
        import pocketsphinx
    except ImportError:
        return {}
    path = Path(pocketsphinx.get_model_path()) / "en-us" / "cmudict-en-us.dict"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        word, _, said = line.partition(" ")
        if said:
            if word.endswith(")"):
                word = _VARIANT.sub("", word)
            out.setdefault(word, []).append(said)
    return out


@lru_cache(maxsize=4096)
def _listed(word: str) -> tuple[tuple[str, ...], ...] | None:
    found = pronunciations().get(word)
    return tuple(tuple(p.split()) for p in found) if found else None


def phones(word: str) -> tuple[tuple[str, ...], ...]:
    """The pronunciations of ``word``: the dictionary's, else one guessed from its spelling; none without a
    dictionary. A possessive is the word and a Z."""
    from anonpsy.audio.align import guess_phones

    pron = pronunciations()
    if not pron:
        return ()
    w = re.sub(r"[^a-z'-]", "", word.lower().replace("\u2019", "'")).strip("'-")
    if not w:
        return ()
    listed = _listed(w)
    if listed:
        return listed
    base = _listed(w[:-2]) if w.endswith("'s") else None
    if base:
        return tuple((*p, "Z") for p in base)
    parts = [p for p in re.split(r"[-']", w) if p]

    def lookup(piece: str) -> str | None:
        found = pron.get(piece)
        return found[0] if found else None

    return (tuple(" ".join(guess_phones(p, lookup) for p in parts).split()),)


def _sub(a: str, b: str) -> float:
    if a == b:
        return 0.0
    if (a in _VOWELS and b in _VOWELS) or any(a in c and b in c for c in _CLOSE):
        return 0.5
    return 1.0


def distance(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    """Levenshtein distance over phones; a close phone (:data:`_CLOSE`, vowel for vowel) costs half."""
    prev = [float(j) for j in range(len(b) + 1)]
    for i, x in enumerate(a, 1):
        cur = [float(i)]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1.0, cur[j - 1] + 1.0, prev[j - 1] + _sub(x, y)))
        prev = cur
    return prev[-1]


def sounds_like(word: str, targets: Iterable[str]) -> str | None:
    """The first of ``targets`` that ``word`` sounds like, else None: a phone distance of at most half a phone
    from a target of three phones (one close phone: "Ram" is no "dam"), one from a target of four ("Ram" for
    "ramp"), one and a half from a longer one ("screen" for "stream"). Shorter targets sound like too many
    words to be read at all."""
    said = phones(word)
    if not said:
        return None
    for t in targets:
        for target in phones(t):
            if len(target) < 3:
                continue
            limit = 0.5 if len(target) == 3 else 1.0 if len(target) == 4 else 1.5
            if any(distance(p, target) <= limit for p in said):
                return t
    return None


__all__ = ["distance", "phones", "pronunciations", "sounds_like"]
