"""Find clinical test values in a test-results text and resample them within their clinical band.

:func:`find_values` scans a text for numbers and maps each to a canonical test of ``rules/test_values`` (alias
matching on the words before the number, exact first, then fuzzy with rapidfuzz; "22/30 on the MMSE" is read
from the right), reads the unit written after it (or infers the unit from the test's range when none is
written) and finds the value's pool. Numbers that are not test values are skipped: dates, clock times, doses
("900 mg"), durations ("3 weeks"), ages, ordinals, reference ranges ("3.5-5.0") and denominators ("22/30"
keeps its "30"). List enumerators ("1.  ...") and military times ("at 0800") are not values either. Blood
pressure "128/84" gives two values, one per half of the slash pair, and so does "AST/ALT 120/85" (one value
per alias, in order).

:func:`resample_values` replaces every mapped value with a value drawn uniformly from the same pool, written
in the same unit with the same number of decimals (and the same thousands grouping), different from the
original whenever the pool allows another value. Only the digits of each number change; everything else stays
byte-identical. The two halves of a slash pair keep their order (systolic above diastolic). Values that
cannot be mapped are left as written and reported with a reason code:

* ``UNKNOWN_TEST`` no test alias before (or "on the <test>" after) the number;
* ``UNKNOWN_UNIT`` the unit written after the number is not one of the test's units;
* ``OUT_OF_RANGE`` the value is outside the test's physically possible range;
* ``AMBIGUOUS`` several tests (or several units, when none is written) fit equally well.

Both functions are pure and deterministic (the resampler draws only from the ``random.Random`` it is given).

Example::

    >>> new, changes, unmapped = resample_values("MMSE 22/30, Li 0.8 mmol/L", random.Random(7))
    >>> [(c.test_id, c.interpretation) for c in changes]
    [('mmse', 'mild impairment'), ('lithium_level', 'therapeutic')]
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

from rapidfuzz import fuzz, process

from anonpsy.audit import Audit, Change, Unmapped
from anonpsy.graph import CaseGraph, TestValue
from anonpsy.rules.test_values import TestDef, UnitDef, alias_key, load_test_values

UNKNOWN_TEST = "UNKNOWN_TEST"
UNKNOWN_UNIT = "UNKNOWN_UNIT"
OUT_OF_RANGE = "OUT_OF_RANGE"
AMBIGUOUS = "AMBIGUOUS"
REASONS: tuple[str, ...] = (UNKNOWN_TEST, UNKNOWN_UNIT, OUT_OF_RANGE, AMBIGUOUS)

FUZZY_CUTOFF = 88.0
FUZZY_MIN_KEY = 6
MAX_GAP_WORDS = 6
MAX_CONTEXT_WORDS = 10
ORDER_RETRIES = 50

Defs = Mapping[str, TestDef]


# ----------------------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class ValueMention:
    """One numeric value found in a text.

    ``start``/``end`` delimit the number as written (``text``). ``test_id`` is the canonical test when the
    value is mapped, else None and ``reason`` says why (``candidates`` lists the tests that were considered).
    ``unit`` is the canonical spelling of the unit the value is written in (``unit_written`` False when it was
    inferred); ``canonical`` and ``interpretation`` give the value in canonical units and its pool. ``pair``
    links the two halves of a slash pair ("128/84"): both carry the start offset of the first half.
    """

    start: int
    end: int
    text: str
    value: float
    decimals: int
    test_id: str | None
    unit: str | None = None
    unit_written: bool = False
    canonical: float | None = None
    interpretation: str | None = None
    reason: str | None = None
    candidates: tuple[str, ...] = ()
    pair: int | None = None

    @property
    def mapped(self) -> bool:
        """True when the value maps to a test, a unit and a pool."""
        return self.reason is None and self.test_id is not None


@dataclass(frozen=True)
class ValueChange:
    """A resampled value; ``start``/``end`` delimit the new number in the new text."""

    start: int
    end: int
    test_id: str
    interpretation: str
    old: str
    new: str
    unit: str


@dataclass(frozen=True)
class UnmappedValue:
    """A value left as written; ``start``/``end`` delimit it in the new text; ``reason`` is one of REASONS."""

    start: int
    end: int
    text: str
    reason: str
    candidates: tuple[str, ...] = ()


# ----------------------------------------------------------------------------------------------------------
# Lexical patterns

_NUM_RE = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])|\d+(?:\.\d+)?")
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?"
    r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_DATE_TIME_RE = re.compile(
    r"(?<![\d.])\d{4}-\d{1,2}-\d{1,2}(?![\d])"
    r"|(?<![\d.])\d{1,2}([/.-])\d{1,2}\1\d{2,4}(?![\d])"
    rf"|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?:,?\s+\d{{4}})?\b"
    rf"|\b{_MONTH},?\s+\d{{4}}\b"
    r"|(?<![\d.])\d{1,2}:\d{2}(?::\d{2})?(?:\s*(?i:[ap]\.?m\.?)(?![a-z]))?"
    r"|(?<![\d.])\d{1,2}\s*(?i:[ap]\.m\.|[ap]m)(?![A-Za-z])"
    r"|(?i:\b(?:at|@|from|until|by)\s*)(?:[01]\d|2[0-3])[0-5]\d(?:\s*(?i:h|hrs|hours))?(?![\w.])"
    r"|(?<![\d.])(?:[01]\d|2[0-3])[0-5]\d\s*(?i:h|hrs|hours)\b"
)
_PRE_EXCLUDE_RE = re.compile(
    r"(?:\b(?:age[ds]?|day|days|week|weeks|wk|month|months|year|years|yr|HD|POD|room|bed|grade|stage|type"
    r"|item|items|phase|step|percentile|version|DOB|MRN|no|number|page|question|cycle|session|visit)\.?"
    r"|#|\bx|×)\s*:?\s*$",
    re.IGNORECASE,
)
_ORDINAL_RE = re.compile(r"(?:st|nd|rd|th)(?![A-Za-z])")
_PERCENTILE_RE = re.compile(r"\s*(?:%\s*ile|(?:st|nd|rd|th)?\s*(?:percentile|centile))", re.IGNORECASE)
_DOSE_RE = re.compile(
    r"\s*(?:mg|mcg|µg|μg|ug|g|gm|grams?|milligrams?|micrograms?|ml|cc|l|litres?|liters?|tabs?"
    r"|tablets?|caps?|capsules?|puffs?|drops?|sprays?|patch(?:es)?|injections?|pills?)(?![A-Za-z])",
    re.IGNORECASE,
)
_DURATION_RE = re.compile(
    r"\s*-?\s*(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|h|days?|d|weeks?|wks?|months?|mos?|years?|yrs?|y"
    r"|y/o|yo|y\.o\.)(?![A-Za-z])",
    re.IGNORECASE,
)
_RANGE_AFTER_RE = re.compile(r"\s*[-–—]\s*\d")
_RANGE_BEFORE_RE = re.compile(r"\d\s*[-–—]\s*$")
_SLASH_RE = re.compile(r"\s*/\s*(\d+(?:\.\d+)?)(?![\d.]*\s*/\s*\d)")
_OUT_OF_RE = re.compile(r"\s+out\s+of\s+(\d+)(?!\.\d)", re.IGNORECASE)
_HARD_DELIM_RE = re.compile(r"[;\n|•]|\.[\s,]|:\s*\n")
_ENUMERATOR_RE = re.compile(r"(?:^|[\n,:;(]|\.,)[ \t]*$")
_WORD_RE = re.compile(r"[^\W\d_][\w'’\-]*|\d+(?:[.,]\d+)*")
_ON_TEST_RE = re.compile(
    r"\s*(?:(?:points?|pts)\s+)?(?:on|in|for|by)\s+(?:(?:the|a|an|his|her|their|a\s+repeat|repeat)\s+)?",
    re.IGNORECASE,
)

# Measure words that are not units of any test: a test value written with one of them has an unknown unit.
OTHER_UNITS: tuple[str, ...] = (
    "kg", "lb", "lbs", "pounds", "cm", "mm", "inches", "ft", "feet", "drinks", "standard drinks", "beers",
    "cigarettes", "packs", "pack-years", "pack years", "times", "episodes", "attempts", "admissions",
    "hospitalizations", "hospitalisations", "cups", "joints", "L/min", "litres/min", "mOsm/kg", "mmol/kg",
    "ng/dL", "mg/L", "g/L", "mg/dL", "mmol/L", "µmol/L", "%",
)  # fmt: skip
BLOCKERS: frozenset[str] = frozenset((
    "age", "aged", "since", "ago", "day", "days", "week", "weeks", "month", "months", "year", "years", "yr",
    "yrs", "hour", "hours", "hr", "hrs", "minute", "minutes", "dose", "doses", "dosed", "item", "items",
    "subscale", "subscales", "positive", "negative", "general", "x", "times", "tablet", "tablets",
))  # fmt: skip


def _unit_regex(spelling: str) -> str:
    """A regex for a unit spelling that accepts the variants :func:`unit_key` folds together."""
    out: list[str] = []
    i = 0
    s = spelling
    while i < len(s):
        c = s[i]
        if c.isspace():
            out.append(r"\s*")
        elif c == "/":
            out.append(r"\s*/\s*")
        elif c in "µμ":
            out.append(r"(?:[µμu]|mc)")
        elif c in "x×*" and (i == 0 or not s[i - 1].isalpha()):
            out.append(r"[x×*]\s*")
        elif c in "°º":
            out.append(r"[°º]\s*")
        elif c == "^" and i + 1 < len(s) and s[i + 1] in "93":
            sup = "⁹" if s[i + 1] == "9" else "³"
            out.append(rf"(?:\^{s[i + 1]}|{sup})")
            i += 1
        elif c in "⁹³":
            out.append(rf"(?:\^{'9' if c == '⁹' else '3'}|{c})")
        elif c in "2²" and i > 0 and s[i - 1] == "m":
            out.append("[2²]")
        elif c == "u" and (i == 0 or not s[i - 1].isalpha()) and i + 1 < len(s) and s[i + 1] in "glmiGLMI":
            out.append(r"(?:[µμu]|mc)")
        else:
            out.append(re.escape(c))
        i += 1
    pat = "".join(out)
    if len(spelling) == 1 and spelling.isalpha():
        pat = f"(?-i:{pat})"
    if spelling[-1].isalnum():
        pat += r"(?![A-Za-z0-9])"
    return pat


def _alias_regex(alias: str) -> str:
    """A regex for an alias; spaces and hyphens are interchangeable.

    A trailing digit group may follow a space only when another number follows ("PHQ 9 score 14"), so that
    "HAM-D 17" alone reads as a score.
    """
    m = re.fullmatch(r"(.*[^\W\d_])[\s\-‐–]*(\d+)", alias)
    head, digits = (m.group(1), m.group(2)) if m else (alias, "")
    parts: list[str] = []
    for chunk in re.split(r"([\s\-‐–]+)", head):
        if not chunk:
            continue
        if re.fullmatch(r"[\s\-‐–]+", chunk):
            parts.append(r"[\s\-‐–]*")
        else:
            parts.append(re.escape(chunk).replace("'", "['’]?"))
    pat = "".join(parts)
    if digits:
        tail = r"(?=[\s:=]*(?:(?:score|total|of|was|is|=)\s*)*[<>≤≥~]?\s*\d)"
        pat += rf"(?:[-‐–]?{digits}|\s+{digits}{tail})"
    letters = sum(ch.isalpha() for ch in alias)
    if letters > 2 or any(ch.isdigit() for ch in alias):
        pat = f"(?i:{pat})"
    return pat


# ----------------------------------------------------------------------------------------------------------
# Index over a set of test definitions


class _Index:
    """Compiled matchers for one set of test definitions."""

    def __init__(self, defs: Defs) -> None:
        self.defs = dict(defs)
        self.by_alias: dict[str, list[TestDef]] = {}
        spellings: dict[str, str] = {}
        for t in self.defs.values():
            for a in t.aliases:
                key = alias_key(a)
                self.by_alias.setdefault(key, [])
                if t not in self.by_alias[key]:
                    self.by_alias[key].append(t)
                spellings.setdefault(a, key)
        ordered = sorted(spellings, key=lambda a: (-len(a), a))
        self.alias_re = re.compile(r"(?<!\w)(?:" + "|".join(_alias_regex(a) for a in ordered) + r")(?!\w)")
        self.fuzzy_keys = sorted(k for k in self.by_alias if len(k) >= FUZZY_MIN_KEY)
        units: set[str] = set(OTHER_UNITS)
        for t in self.defs.values():
            for u in t.units:
                units.update(u.names)
        self.unit_re = re.compile(
            r"[ \t]*(" + "|".join(_unit_regex(u) for u in sorted(units, key=lambda u: (-len(u), u))) + ")",
            re.IGNORECASE,
        )
        self.sibling: dict[str, str] = {}
        for tests in self.by_alias.values():
            slash = [t for t in tests if t.slash_position is not None]
            for one in slash:
                for other in slash:
                    if one.id != other.id:
                        self.sibling[one.id] = other.id


_INDEX_CACHE: dict[int, tuple[Defs, _Index]] = {}
_INDEX_CACHE_MAX = 16


def _index(defs: Defs | None) -> _Index:
    """The compiled index of a definitions mapping (cached per mapping object; do not mutate it)."""
    d: Defs = load_test_values() if defs is None else defs
    hit = _INDEX_CACHE.get(id(d))
    if hit is not None and hit[0] is d:
        return hit[1]
    if len(_INDEX_CACHE) >= _INDEX_CACHE_MAX:
        _INDEX_CACHE.clear()
    idx = _Index(d)
    _INDEX_CACHE[id(d)] = (d, idx)  # the mapping is kept alive, so its id cannot be reused while cached
    return idx


# ----------------------------------------------------------------------------------------------------------
# Finder


@dataclass
class _Num:
    start: int
    end: int
    text: str
    value: float
    decimals: int


def _num(text: str, start: int, end: int) -> _Num:
    s = text[start:end]
    plain = s.replace(",", "")
    dec = len(plain.split(".", 1)[1]) if "." in plain else 0
    return _Num(start, end, s, float(plain), dec)


def _is_word_part(text: str, start: int, end: int) -> bool:
    """True when the digits belong to a word or code ("PHQ-9", "T4", "B12", "x3", "25-OH", "3x", "2nd")."""
    prev = text[start - 1] if start > 0 else ""
    if prev.isalnum() or prev in "._^'":
        return True
    if prev in "-‐–" and start > 1 and text[start - 2].isalpha():
        return True
    nxt = text[end] if end < len(text) else ""
    return nxt in "-‐–" and end + 1 < len(text) and text[end + 1].isalpha()


def _excluded_after(text: str, end: int, idx: _Index) -> bool:
    """Doses, durations, ordinals and percentiles written after a number (tested after the unit lexicon)."""
    if _ORDINAL_RE.match(text, end) or _PERCENTILE_RE.match(text, end):
        return True
    if idx.unit_re.match(text, end):
        return False
    return bool(_DOSE_RE.match(text, end) or _DURATION_RE.match(text, end))


def _attached_letters(text: str, end: int, idx: _Index) -> bool:
    """A number followed directly by letters that are not a unit ("3x", "10yo") is part of a word."""
    if end < len(text) and text[end].isalpha():
        return not idx.unit_re.match(text, end)
    return False


def _segment_start(text: str, boundary: int, pos: int) -> int:
    start = boundary
    for m in _HARD_DELIM_RE.finditer(text, boundary, pos):
        start = max(start, m.end())
    return start


def _gap_ok(text: str, start: int, end: int) -> bool:
    words = [w.lower() for w in _WORD_RE.findall(text[start:end])]
    return len(words) <= MAX_GAP_WORDS and not any(w in BLOCKERS for w in words)


def _left_tests(
    text: str, seg_start: int, pos: int, idx: _Index, aliases: list[tuple[int, int, str]]
) -> tuple[list[TestDef], bool, list[TestDef]]:
    """Tests named before ``pos``: (tests, fuzzy match was ambiguous, tests of an alias joined by "/" before).

    Exact aliases are tried first, then fuzzy matching on the last words. The third element is non-empty for
    "AST/ALT 120/85", where the first number belongs to the alias before the slash.
    """
    inside = [a for a in aliases if a[0] >= seg_start and a[1] <= pos]
    if inside:
        a_start, a_end, key = max(inside, key=lambda a: (a[1], a[1] - a[0]))
        if not _gap_ok(text, a_end, pos):
            return [], False, []
        before = [b for b in inside if b[1] <= a_start and re.fullmatch(r"\s*/\s*", text[b[1] : a_start])]
        return list(idx.by_alias[key]), False, list(idx.by_alias[before[0][2]]) if before else []
    words = [(m.start(), m.end(), m.group(0)) for m in _WORD_RE.finditer(text, seg_start, pos)]
    words = words[-MAX_CONTEXT_WORDS:]
    best: tuple[float, int] = (0.0, -1)
    found: dict[tuple[float, int], set[str]] = {}
    for j in range(len(words)):
        if words[j][2][0].isdigit():
            continue
        for i in range(max(0, j - 4), j + 1):
            if words[i][2][0].isdigit():
                continue
            key = alias_key(" ".join(w[2] for w in words[i : j + 1]))
            if len(key) < FUZZY_MIN_KEY:
                continue
            hit: Any = process.extractOne(key, idx.fuzzy_keys, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF)
            if hit is None:
                continue
            score = (float(hit[1]), words[j][1])
            found.setdefault(score, set()).add(hit[0])
            best = max(best, score)
    if best[1] < 0 or not _gap_ok(text, best[1], pos):
        return [], False, []
    keys = found[best]
    tests = {t.id: t for k in keys for t in idx.by_alias[k]}
    ambiguous = len({tuple(sorted(t.id for t in idx.by_alias[k])) for k in keys}) > 1
    return list(tests.values()), ambiguous, []


def _right_tests(
    text: str, pos: int, idx: _Index, alias_starts: dict[int, str], aliases: list[tuple[int, int, str]]
) -> tuple[list[TestDef], int]:
    """Tests named right after a value ("22/30 on the MMSE") and the end of that alias; ([], pos) if none."""
    m = _ON_TEST_RE.match(text, pos)
    if not m:
        return [], pos
    key = alias_starts.get(m.end())
    if not key:
        return [], pos
    end = next(a[1] for a in aliases if a[0] == m.end())
    return list(idx.by_alias[key]), end


#: Nouns a bare count is written before: cell types of a differential and of a CSF or urine count.
_COUNTED_NOUN_RE = re.compile(
    r"[ \t]+(?:[a-z]*(?:cytes?|phils?|blasts?)|cells?|bands?|segs?|polys?|monos?|lymphs?|eos|basos|"
    r"red(?:[ \t]+blood)?[ \t]+cells|white(?:[ \t]+blood)?[ \t]+cells)\b", re.I)


def counted_noun(text: str, end: int) -> str | None:
    """The cells a number ending at ``end`` counts when they are named right after it ("8 lymphocytes",
    "4 eos"), else None. Such a number is never the value of a test named before it ("…, 82 neutrophils,
    8 lymphocytes" must not give the lymphocytes' 8 to the neutrophils). A test name after a number is not
    enough ("Na 140 K 4.0" is a list of values written before their next name)."""
    m = _COUNTED_NOUN_RE.match(text, end)
    return " ".join(m.group(0).split()) if m else None


def _infer_unit(test: TestDef, value: float) -> tuple[UnitDef | None, str | None]:
    fits = [u for u in test.units if test.in_range(u.to_canonical(value))]
    if not fits:
        return None, OUT_OF_RANGE
    if fits[0] is test.canonical_unit or len(fits) == 1:
        return fits[0], None
    return None, AMBIGUOUS


def _mention(
    num: _Num,
    test: TestDef | None,
    unit_text: str | None,
    reason: str | None,
    cands: tuple[str, ...],
    pair: int | None,
) -> ValueMention:
    base: dict[str, Any] = {
        "start": num.start, "end": num.end, "text": num.text, "value": num.value, "decimals": num.decimals,
        "candidates": cands, "pair": pair,
    }  # fmt: skip
    if test is None or reason is not None:
        return ValueMention(test_id=None, reason=reason or UNKNOWN_TEST, **base)
    if unit_text is not None:
        unit = test.unit_for(unit_text)
        if unit is None:
            return ValueMention(test_id=None, reason=UNKNOWN_UNIT, **base)
        written = True
    else:
        inferred, why = _infer_unit(test, num.value)
        if inferred is None:
            return ValueMention(test_id=None, reason=why, **base)
        unit, written = inferred, False
    canonical = unit.to_canonical(num.value)
    pool = test.pool_for(canonical) if test.in_range(canonical) else None
    if pool is None:
        return ValueMention(test_id=None, reason=OUT_OF_RANGE, **base)
    return ValueMention(
        test_id=test.id, unit=unit.unit, unit_written=written, canonical=canonical,
        interpretation=pool.interpretation, **base,
    )  # fmt: skip


def _looks_like_date(a: _Num, b: _Num) -> bool:
    return a.decimals == 0 and b.decimals == 0 and 1 <= a.value <= 31 and 1 <= b.value <= 31


def unit_at(text: str, pos: int) -> str | None:
    """The measure word written at ``pos`` (a unit of some test, or another known measure such as kg), or None."""
    m = _index(None).unit_re.match(text, pos)
    return m.group(1) if m else None


def find_values(text: str, defs: Defs | None = None) -> list[ValueMention]:
    """Every numeric test value in ``text``, in order, mapped to its test or with a reason code.

    ``defs`` defaults to :func:`anonpsy.rules.test_values.load_test_values`. Dates, clock times, doses,
    durations, ages, ordinals, reference ranges and denominators are not values and are not returned.
    """
    if defs is None:
        return list(_find_values_default(text))
    return _find_values(text, defs)


@lru_cache(maxsize=1024)
def _find_values_default(text: str) -> tuple[ValueMention, ...]:
    """find_values with the default definitions, cached per text (the function is pure)."""
    return tuple(_find_values(text, None))


def _find_values(text: str, defs: Defs | None) -> list[ValueMention]:
    idx = _index(defs)
    aliases = [(m.start(), m.end(), alias_key(m.group(0))) for m in idx.alias_re.finditer(text)]
    aliases = [a for a in aliases if a[2] in idx.by_alias]
    alias_starts = {a[0]: a[2] for a in aliases}
    masked = [(a[0], a[1]) for a in aliases]
    masked += [(m.start(), m.end()) for m in _DATE_TIME_RE.finditer(text)]
    masked.sort()

    def is_masked(s: int, e: int) -> bool:
        return any(ms <= s and e <= me for ms, me in masked)

    out: list[ValueMention] = []
    boundary = 0
    consumed_until = -1
    for m in _NUM_RE.finditer(text):
        s, e = m.start(), m.end()
        if (
            s < consumed_until
            or is_masked(s, e)
            or _is_word_part(text, s, e)
            or _attached_letters(text, e, idx)
        ):
            continue
        if _RANGE_AFTER_RE.match(text, e) or _RANGE_BEFORE_RE.search(text, max(0, s - 4), s):
            continue
        if _PRE_EXCLUDE_RE.search(text, max(0, s - 24), s):
            continue
        if (
            "." not in m.group(0)
            and re.match(r"[.)][ \t]", text[e : e + 2])
            and _ENUMERATOR_RE.search(text[:s])
        ):
            continue  # a list enumerator ("1.  Seasonal ...", ",4.  Prednisone ...")
        num = _num(text, s, e)
        tail = e
        second: _Num | None = None
        slash = _SLASH_RE.match(text, e)
        if slash and not _is_word_part(text, slash.start(1), slash.end(1)):
            second = _num(text, slash.start(1), slash.end(1))
            tail = slash.end()
        else:
            of = _OUT_OF_RE.match(text, e)
            if of:
                tail = of.end()
        if second is None and _excluded_after(text, e, idx):
            continue
        if second is not None and _excluded_after(text, second.end, idx):
            continue
        unit_m = idx.unit_re.match(text, tail)
        unit_text = unit_m.group(1) if unit_m else None
        tail_end = unit_m.end() if unit_m else tail

        seg = _segment_start(text, boundary, s)
        tests, right_end = _right_tests(text, tail_end, idx, alias_starts, aliases)
        fuzzy_ambiguous = False
        before: list[TestDef] = []
        if tests:
            tail_end = right_end
        elif unit_m is None and counted_noun(text, e):
            pass  # "82 neutrophils, 8 lymphocytes": each count is its own noun's, not the test named before
        else:
            tests, fuzzy_ambiguous, before = _left_tests(text, seg, s, idx, aliases)
        cands = tuple(sorted(t.id for t in [*before, *tests]))
        if not tests:
            if second is not None and _looks_like_date(num, second):
                continue
            if num.decimals == 0 and 1900 <= num.value <= 2099 and "," not in num.text:
                continue
            out.append(_mention(num, None, None, UNKNOWN_TEST, cands, None))
        elif fuzzy_ambiguous or (before and (second is None or len(before) != 1 or len(tests) != 1)):
            out.append(_mention(num, None, None, AMBIGUOUS, cands, None))
        elif before:  # "AST/ALT 120/85": one value per alias, in order
            out.append(_mention(num, before[0], unit_text, None, cands, s))
            out.append(_mention(cast(_Num, second), tests[0], unit_text, None, cands, s))
        else:
            first_t, second_t = _resolve_slash(tests, second is not None, idx)
            pair = s if second is not None and second_t is not None else None
            if first_t is None:
                out.append(_mention(num, None, None, AMBIGUOUS, cands, pair))
            else:
                out.append(_mention(num, first_t, unit_text, None, cands, pair))
            if second is not None and second_t is not None:
                out.append(_mention(second, second_t, unit_text, None, (second_t.id,), pair))
        boundary = tail_end
        consumed_until = tail_end
    return out


def _resolve_slash(
    tests: list[TestDef], has_second: bool, idx: _Index
) -> tuple[TestDef | None, TestDef | None]:
    """The tests of the first number and (for a slash pair) of the number after the slash."""
    if len(tests) == 1:
        t = tests[0]
        if has_second and t.slash_position == 1 and t.id in idx.sibling:
            return t, idx.defs[idx.sibling[t.id]]
        return t, None
    positions = {t.slash_position: t for t in tests}
    if has_second and 1 in positions and 2 in positions and len(tests) == 2:
        return positions[1], positions[2]
    return None, None


# ----------------------------------------------------------------------------------------------------------
# Resampler


def _fmt_int(k: int, decimals: int, grouped: bool) -> str:
    digits = str(k).rjust(decimals + 1, "0")
    int_part, frac = (digits[:-decimals], digits[-decimals:]) if decimals else (digits, "")
    if grouped:
        int_part = f"{int(int_part):,}"
    return f"{int_part}.{frac}" if decimals else int_part


def _grid_bounds(test: TestDef, unit: UnitDef, scale: int, low: float, high: float) -> tuple[int, int]:
    """Smallest and largest integer k >= 0 with ``low <= canonical(k / scale) < high``."""

    def canon(k: int) -> float:
        return unit.to_canonical(k / scale)

    k_lo = max(0, math.floor(unit.from_canonical(low) * scale) - 2)
    while canon(k_lo) < low:
        k_lo += 1
    while k_lo > 0 and canon(k_lo - 1) >= low:
        k_lo -= 1
    k_hi = max(k_lo, math.ceil(unit.from_canonical(high) * scale) + 2)
    while k_hi >= k_lo and canon(k_hi) >= high:
        k_hi -= 1
    while canon(k_hi + 1) < high:
        k_hi += 1
    return k_lo, k_hi


def _draw(mention: ValueMention, test: TestDef, rng: random.Random) -> str:
    """A new spelling of the value, uniform over the pool's values written with the same decimals (an edge pool's
    within :meth:`~anonpsy.rules.test_values.TestDef.draw_window` of the value)."""
    unit = test.unit_for(mention.unit or "") or test.canonical_unit
    pool = test.pool_for(mention.canonical if mention.canonical is not None else math.nan)
    if pool is None:
        return mention.text
    scale = 10**mention.decimals
    k0 = round(mention.value * scale)
    low, high = test.draw_window(pool, cast(float, mention.canonical))
    k_lo, k_hi = _grid_bounds(test, unit, scale, low, high)
    if not k_lo <= k0 <= k_hi or k_hi <= k_lo:
        return mention.text
    step = 1
    if mention.decimals == 0 and k0 > 0:
        tz = len(str(k0)) - len(str(k0).rstrip("0"))
        for p in range(tz, 1, -1):
            st = 10**p
            if k_hi // st - (k_lo + st - 1) // st + 1 >= 2:
                step = st
                break
    m_lo, m_hi = (k_lo + step - 1) // step, k_hi // step
    m0 = k0 // step
    r = rng.randrange(m_hi - m_lo)
    m = m_lo + r
    if m >= m0:
        m += 1
    return _fmt_int(m * step, mention.decimals, "," in mention.text)


def _canonical_of(test: TestDef, mention: ValueMention, spelled: str) -> float:
    unit = test.unit_for(mention.unit or "") or test.canonical_unit
    return unit.to_canonical(float(spelled.replace(",", "")))


def resample_values(
    text: str, rng: random.Random, defs: Defs | None = None
) -> tuple[str, list[ValueChange], list[UnmappedValue]]:
    """Resample every mapped value of ``text`` within its pool; return (new text, changes, unmapped values).

    A change is listed for every mapped value (``old == new`` only when its pool holds a single value at the
    written precision). Positions in both lists refer to the new text. The two halves of a slash pair keep
    their order (systolic above diastolic) when the original did.
    """
    d: Defs = load_test_values() if defs is None else defs
    mentions = find_values(text, d)
    new_spelling: dict[int, str] = {}
    for i, mv in enumerate(mentions):
        if mv.mapped and i not in new_spelling:
            new_spelling[i] = _draw(mv, d[mv.test_id or ""], rng)
            j = i + 1
            if (
                mv.pair is not None
                and j < len(mentions)
                and mentions[j].pair == mv.pair
                and mentions[j].mapped
            ):
                _draw_pair(mentions, i, j, d, rng, new_spelling)
    pieces: list[str] = []
    changes: list[ValueChange] = []
    unmapped: list[UnmappedValue] = []
    pos = 0
    out_len = 0
    for i, mv in enumerate(mentions):
        pieces.append(text[pos : mv.start])
        out_len += mv.start - pos
        spelled = new_spelling.get(i, mv.text)
        if mv.mapped:
            changes.append(
                ValueChange(
                    out_len,
                    out_len + len(spelled),
                    mv.test_id or "",
                    mv.interpretation or "",
                    mv.text,
                    spelled,
                    mv.unit or "",
                )
            )
        else:
            unmapped.append(UnmappedValue(out_len, out_len + len(spelled), mv.text, mv.reason or UNKNOWN_TEST,
                                          mv.candidates))  # fmt: skip
        pieces.append(spelled)
        out_len += len(spelled)
        pos = mv.end
    pieces.append(text[pos:])
    return "".join(pieces), changes, unmapped


def _draw_pair(
    mentions: list[ValueMention], i: int, j: int, d: Defs, rng: random.Random, new_spelling: dict[int, str]
) -> None:
    """Draw both halves of a slash pair, redrawing while the original order (first > second) is broken."""
    a, b = mentions[i], mentions[j]
    ta, tb = d[a.test_id or ""], d[b.test_id or ""]
    if a.canonical is None or b.canonical is None or a.canonical <= b.canonical:
        new_spelling[j] = _draw(b, tb, rng)
        return
    for _ in range(ORDER_RETRIES):
        na, nb = _draw(a, ta, rng), _draw(b, tb, rng)
        if _canonical_of(ta, a, na) > _canonical_of(tb, b, nb):
            new_spelling[i], new_spelling[j] = na, nb
            return
    new_spelling[i], new_spelling[j] = a.text, b.text


# ----------------------------------------------------------------------------------------------------------
# The perturbation step

#: Reason recorded for a numeric value that no ``rules/test_values`` entry maps (it is kept as written).
NO_TEST_RULE = "NO_TEST_RULE"


def structured_mention(test: TestDef, value: str, unit: str | None) -> ValueMention:
    """A structured value (``value`` as written, ``unit`` as recorded) read as a :class:`ValueMention` of ``test``:
    its canonical value and pool, or a reason why it has none."""
    num = _num(value, 0, len(value))
    udef = test.unit_for(unit) if unit else None
    reason = None
    if udef is None:
        udef, reason = _infer_unit(test, num.value) if not unit else (None, UNKNOWN_UNIT)
    base: dict[str, Any] = {"start": 0, "end": len(value), "text": value, "value": num.value,
                            "decimals": num.decimals}
    if udef is None:
        return ValueMention(test_id=None, reason=reason or UNKNOWN_UNIT, **base)
    canonical = udef.to_canonical(num.value)
    pool = test.pool_for(canonical) if test.in_range(canonical) else None
    if pool is None:
        return ValueMention(test_id=None, reason=OUT_OF_RANGE, **base)
    return ValueMention(test_id=test.id, unit=udef.unit, unit_written=unit is not None, canonical=canonical,
                        interpretation=pool.interpretation, **base)


def pool_of(value: TestValue, defs: Defs | None = None) -> str | None:
    """The pool (interpretation) a structured value falls in under its test rule, or None."""
    d: Defs = load_test_values() if defs is None else defs
    test = d.get(value.test_id or "")
    if test is None or value.value is None:
        return None
    return structured_mention(test, value.value, value.unit).interpretation


def perturb_test_values(graph: CaseGraph, rng: random.Random, audit: Audit) -> CaseGraph:
    """Resample every numeric test value that a ``rules/test_values`` entry maps (``rule_id``) within its pool,
    written with the same decimals; the two halves of a blood pressure keep their order. Every change goes to
    ``audit`` with the value's rule id; a numeric value no entry maps is kept as written and listed as unmapped."""
    d = load_test_values()
    values = graph.test_results.values
    mentions: list[ValueMention | None] = []
    for v in values:
        test = d.get(v.test_id or "")
        if v.value is None:
            mentions.append(None)
            continue
        path = f"test_results.values[{v.id}].value"
        if test is None:
            audit.unmapped_values.append(Unmapped(path=path, start=0, end=len(v.value), reason=NO_TEST_RULE))
            mentions.append(None)
            continue
        read = structured_mention(test, v.value, v.unit)
        if not read.mapped:
            audit.unmapped_values.append(Unmapped(path=path, start=0, end=len(v.value), reason=read.reason or ""))
            mentions.append(None)
            continue
        mentions.append(read)
    new_spelling: dict[int, str] = {}
    idx = _index(None)
    for i, mv in enumerate(mentions):
        if mv is None or i in new_spelling:
            continue
        new_spelling[i] = _draw(mv, d[mv.test_id or ""], rng)
        j = i + 1
        nxt = mentions[j] if j < len(mentions) else None
        if nxt is not None and idx.sibling.get(mv.test_id or "") == nxt.test_id and \
                d[mv.test_id or ""].slash_position == 1:
            pair = {0: new_spelling[i]}
            _draw_pair([mv, nxt], 0, 1, d, rng, pair)
            new_spelling[i], new_spelling[j] = pair[0], pair[1]
    if not new_spelling:
        return graph
    updated: list[TestValue] = []
    for i, v in enumerate(values):
        new = new_spelling.get(i)
        if new is None or new == v.value:  # a single-value pool leaves nothing to change
            updated.append(v)
            continue
        audit.changes.append(Change(path=f"test_results.values[{v.id}].value", rule_id=v.rule_id or "",
                                    old=v.value, new=new, detail=f"resampled within pool '{v.interpretation}'"))
        updated.append(v.model_copy(update={"value": new}))
    return graph.model_copy(update={"test_results": graph.test_results.model_copy(update={"values": updated})})
