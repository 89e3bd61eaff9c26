"""Temporal mentions: the visit date (day 0) and every temporal expression of a sentence, relative to it.

Every mention takes the temporal expression nearest to it in its clause (``since age 15``, ``3 days before
admission``, ``in March 2025``); calendar dates are placed relative to the visit date (a ``Date: 03/14/2025``
header, or the date the patient was seen), so ``on 03/12/2025`` is two days before day 0. A mention with no
temporal expression gets no duration (no invented precision).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

from anonpsy.caseless import Caseless
from anonpsy.extract.sections import clause_bounds, segment_index, segments
from anonpsy.graph import UNIT_DAYS, Unit
from anonpsy.temporal import TimeSpec, parse_expression

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH_RE = (r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
             r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?")
_NUMERIC_DATE = r"(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})(?![\d/])"
_VISIT_HEADER = Caseless(re.compile(
    r"\b(?:date of (?:evaluation|visit|service|consultation|consult|exam(?:ination)?|admission|assessment|"
    r"encounter)|visit date|evaluation dates?|admission date|date of admission|admitted|dos|date(?:/time)?)"
    r"\s*:\s*" + _NUMERIC_DATE, re.I))
_VISIT_PROSE = Caseless(re.compile(
    r"\b(?:seen|evaluated|examined|assessed|interviewed|admitted|presented|presents)\s+(?:\w+\s+){0,3}?on\s+"
    + _NUMERIC_DATE, re.I))
_DOB = re.compile(r"\b(?:DOB|date of birth|born(?: on)?)\s*:?\s*$", re.I)

_SEASONS = {"spring": (3, 3), "summer": (6, 3), "fall": (9, 3), "autumn": (9, 3), "winter": (12, 3)}
_PART = r"(?:(early|mid|late|the end of|the beginning of|the start of)[- ]\s*)?"
_ABS_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(_NUMERIC_DATE), "mdy"),
    (re.compile(r"\b(\d{1,2})/(\d{4})\b"), "my"),
    (re.compile(rf"\b{_PART}({_MONTH_RE})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I), "mdy_text"),
    (re.compile(rf"\b{_PART}({_MONTH_RE})\s+(?:of\s+)?(\d{{4}})\b"), "my_text"),
    (re.compile(rf"\b{_PART}(?:the\s+)?(spring|summer|fall|autumn|winter)\s+(?:of\s+)?(\d{{4}})\b", re.I), "season"),
    (re.compile(r"\b(?:in|since|during|from|around|circa|by|of|until|through|early|mid|late)\s+((?:19|20)\d{2})\b"
                r"(?!\s*(?:mg|mcg|ml|kcal|calories|units|/))", re.I), "year"),
    (re.compile(r"\bon\s+(\d{1,2})/(\d{1,2})\b(?![\d/])"), "md"),
]
#: Every pattern of :data:`_ABS_PATTERNS` and every age pattern below matches a digit (``\d``) or nothing.
_DIGIT = re.compile(r"\d")
_SINCE_BEFORE = re.compile(r"\b(?:since|from|starting(?: in)?|beginning(?: in)?)\s+(?:about\s+|around\s+|"
                           r"approximately\s+|roughly\s+|the\s+|mid-?|early\s+|late\s+)*$", re.I)
_END_BEFORE = re.compile(r"\b(?:until|till|through|to|before|by)\s+(?:about\s+|around\s+|the\s+|mid-?|early\s+|"
                         r"late\s+)*$", re.I)
_SINCE_AGE = re.compile(r"\bsince\s+(?:about\s+|around\s+|approximately\s+)?(?:the\s+)?age\s+(?:of\s+)?(\d{1,3})\b",
                        re.I)
# "at 19," / "by 7 she …" but never a clock time ("at 01:40", "at 9:30") or a decimal.
_AT_AGE_BARE = re.compile(r"\b(?:at|by)\s+(?!0)(\d{1,2})(?![:.]\d)(?=\s*[:;,.)]|\s+(?:and|when|while|after|before|"
                          r"during|with|in|for|she|he|they)\b)")
_AROUND_AGE = re.compile(r"\b(?:at|around|by|from)\s+(?:about\s+|around\s+|approximately\s+)(?:the\s+)?age\s+"
                         r"(?:of\s+)?(\d{1,3})\b", re.I)
_AT_AGE_UNIT = re.compile(r"\b(?:at|by)\s+(?:about\s+|around\s+|approximately\s+)?(\d{1,2})\s+(months|years)"
                          r"(?:\s+of\s+age|\s+old)?(?!\s+(?:ago|later|earlier|before|after|prior))\b", re.I)
_SINCE_REL = Caseless(re.compile(r"\bsince\s+(?:about\s+|around\s+)?(?:\d{1,2}:\d{2}\s+|\d{1,2}\s*"
                                 r"(?:a\.?m\.?|p\.?m\.?)\s+)?(yesterday|last night|this morning|"
                                 r"last (?:week|month|year)|admission)\b", re.I))
_QUALIFIER = re.compile(r"\bfor\s+(?:at least|roughly|approximately|about|around|nearly|almost|over|more than|"
                        r"close to|upwards of|the last|the past)\s+(?=\d|a |an |one|two|three|four|five|six|seven|"
                        r"eight|nine|ten|several|a few|many)", re.I)


_NUMERIC_DATE_RE = re.compile(_NUMERIC_DATE)


def visit_date(text: str) -> date | None:
    """Day 0 as a calendar date: a ``Date:`` / ``Date of evaluation:`` / ``Admission date:`` header, else the
    date the patient was "seen on" in the narrative, else the first full date in the heading lines that is not a
    date of birth. None when the text has no usable date.

    >>> visit_date("CONSULT\\nDate: 03/14/2025\\nDOB: 01/02/1990")
    datetime.date(2025, 3, 14)
    """
    for pat in (_VISIT_HEADER, _VISIT_PROSE):
        m = pat.search(text)
        if m:
            d = _mdy(m.group(1), m.group(2), m.group(3))
            if d is not None:
                return d
    for m in _NUMERIC_DATE_RE.finditer(text[:400]):
        if _DOB.search(text[max(0, m.start() - 20):m.start()]):
            continue
        d = _mdy(m.group(1), m.group(2), m.group(3))
        if d is not None:
            return d
    return None


def _mdy(mo: str, dy: str, yr: str) -> date | None:
    y = int(yr)
    if y < 100:
        y += 2000 if y < 50 else 1900
    try:
        return date(y, int(mo), int(dy))
    except ValueError:
        return None


def _interval_spec(start: date, end: date, visit: date, *, since: bool) -> TimeSpec:
    """A [start, end) calendar interval as a TimeSpec relative to ``visit``; coarse intervals far from the visit
    are written in months or years (rounded outwards, so the true interval is covered)."""
    s = (start - visit).days
    e = max((end - visit).days, s + 1)
    length = e - s
    unit = Unit.day
    if length >= 300 and abs(s) > 730:
        unit = Unit.year
    elif length >= 28 and abs(s) > 120:
        unit = Unit.month
    u = UNIT_DAYS[unit]
    off = s // u
    span = max(1, -((off * u - e) // u))
    if since:
        return TimeSpec(off, None, unit, ongoing=True, coarse=unit != Unit.day)
    return TimeSpec(off, span, unit, coarse=length > 1)


def _month_end(y: int, m: int) -> date:
    return date(y, m, calendar.monthrange(y, m)[1]) + timedelta(days=1)


def _part_of(start: date, end: date, part: str | None) -> tuple[date, date]:
    if not part:
        return start, end
    third = max(1, (end - start).days // 3)
    p = part.lower()
    if p in ("early", "the beginning of", "the start of"):
        return start, start + timedelta(days=third)
    if p in ("late", "the end of"):
        return end - timedelta(days=third), end
    return start + timedelta(days=third), end - timedelta(days=third)


@dataclass(frozen=True)
class TimeMention:
    """A temporal expression found in a sentence: its character span and meaning."""

    start: int
    end: int
    spec: TimeSpec


def absolute_dates(text: str, visit: date) -> list[TimeMention]:
    """Calendar dates in ``text`` as offsets from ``visit`` (day 0): "on 03/12/2025" (day -2), "in March 2025",
    "spring of 2018", "since 2019" (ongoing), "06/2025". A date of birth is skipped.

    >>> [m.spec for m in absolute_dates("seen on 03/12/2025", date(2025, 3, 14))]
    [TimeSpec(offset=-2, span=1, unit=<Unit.day: 'day'>, ongoing=False, coarse=False)]
    """
    out: list[TimeMention] = []
    taken: list[tuple[int, int]] = []
    if _DIGIT.search(text) is None:  # every calendar date holds a digit; most sentences hold none
        return out
    for pat, kind in _ABS_PATTERNS:
        for m in pat.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            interval = _date_interval(kind, m, visit)
            if interval is None:
                continue
            taken.append((m.start(), m.end()))
            before = text[max(0, m.start() - 30):m.start()]
            if _DOB.search(before) or _END_BEFORE.search(before):
                continue
            since = bool(_SINCE_BEFORE.search(before))
            out.append(TimeMention(m.start(), m.end(), _interval_spec(*interval, visit, since=since)))
    return sorted(out, key=lambda t: t.start)


def _date_interval(kind: str, m: re.Match[str], visit: date) -> tuple[date, date] | None:
    g = m.groups()
    try:
        if kind == "mdy":
            d = _mdy(g[0], g[1], g[2])
            return None if d is None else (d, d + timedelta(days=1))
        if kind == "md":
            d = date(visit.year, int(g[0]), int(g[1]))
            if d > visit + timedelta(days=31):
                d = date(visit.year - 1, int(g[0]), int(g[1]))
            return d, d + timedelta(days=1)
        if kind == "my":
            mo, y = int(g[0]), int(g[1])
            return date(y, mo, 1), _month_end(y, mo)
        if kind == "mdy_text":
            mo = _MONTHS[g[1].lower().rstrip(".")]
            d = date(int(g[3]), mo, int(g[2]))
            return d, d + timedelta(days=1)
        if kind == "my_text":
            mo, y = _MONTHS[g[1].lower().rstrip(".")], int(g[2])
            return _part_of(date(y, mo, 1), _month_end(y, mo), g[0])
        if kind == "season":
            first, n = _SEASONS[g[1].lower()]
            y = int(g[2])
            start = date(y if first != 12 else y - 1, first, 1) if first == 12 else date(y, first, 1)
            end_m = (first + n - 1) % 12 or 12
            end_y = start.year + (1 if end_m < start.month else 0)
            return _part_of(start, _month_end(end_y, end_m), g[0])
        if kind == "year":
            y = int(g[0])
            if not 1900 <= y <= visit.year + 1:
                return None
            word = m.group(0).split()[0].lower()
            part = word if word in ("early", "mid", "late") else None
            return _part_of(date(y, 1, 1), date(y + 1, 1, 1), part)
    except (ValueError, KeyError):
        return None
    return None


def time_mentions(text: str, *, age: int | None, visit: date | None) -> list[TimeMention]:
    """Every temporal expression in ``text`` with its span: calendar dates (given the visit date), ages
    ("since age 15" is ongoing from that age, "at 19"), and the relative expressions of
    :func:`anonpsy.temporal.parse_expression` ("for the past 6 weeks", "two days before admission", "yesterday").

    >>> [m.spec.ongoing for m in time_mentions("Self-harm since age 14.", age=22, visit=None)]
    [True]
    """
    return list(_time_mentions(text, age, visit))


_CLAUSE_PART = re.compile(r"[^;,()]+")


_SINCE_WORD = re.compile(r"\bsince\b", re.I)


@lru_cache(maxsize=4096)
def _time_mentions(text: str, age: int | None, visit: date | None) -> tuple[TimeMention, ...]:
    # every read of the text (the source, the output, each probe) asks again about the same sentences
    out: list[TimeMention] = []
    if visit is not None:
        out.extend(absolute_dates(text, visit))
    digits = _DIGIT.search(text) is not None
    for m in _SINCE_AGE.finditer(text) if digits else ():
        at = int(m.group(1))
        if age is not None and at <= age:
            out.append(TimeMention(m.start(), m.end(), TimeSpec(at - age, None, Unit.year, ongoing=True, coarse=True)))
    for pat in (_AROUND_AGE, _AT_AGE_BARE) if digits else ():
        for m in pat.finditer(text):
            at = int(m.group(1))
            if age is not None and at <= age and not _overlaps(out, m.start(), m.end()):
                out.append(TimeMention(m.start(), m.end(), TimeSpec(at - age, 1, Unit.year, coarse=True)))
    for m in _AT_AGE_UNIT.finditer(text) if digits else ():
        n, unit = int(m.group(1)), m.group(2).lower()
        years = n // 12 if unit.startswith("month") else n
        if age is not None and years <= age and not _overlaps(out, m.start(), m.end()):
            out.append(TimeMention(m.start(), m.end(), TimeSpec(years - age, 1, Unit.year, coarse=True)))
    for m in _SINCE_REL.finditer(text):
        if not _overlaps(out, m.start(), m.end()):
            word = m.group(1).lower()
            unit = {"week": Unit.week, "month": Unit.month, "year": Unit.year}.get(word.split()[-1], Unit.day)
            off = 0 if word in ("this morning", "admission") else -1
            out.append(TimeMention(m.start(), m.end(), TimeSpec(off, None, unit, ongoing=True)))
    # Relative expressions: scan clause by clause so that each finds its own position.
    for cm in _CLAUSE_PART.finditer(text):
        frag = cm.group(0)
        if "for" in frag.lower():  # the qualifier opens with "for"; most clauses hold none
            frag = _QUALIFIER.sub(lambda q: "for " + " " * (len(q.group(0)) - 4), frag)
        spec = parse_expression(frag, age=age)
        if spec is None or _overlaps(out, cm.start(), cm.end(), strict=True):
            continue
        lo, hi = _narrow(frag, spec, age)
        if _SINCE_WORD.search(frag[max(0, lo - 12):hi]) and not spec.ongoing and spec.offset <= 0:
            spec = TimeSpec(spec.offset, None, spec.unit, ongoing=True, coarse=spec.coarse)
        if not _overlaps(out, cm.start() + lo, cm.start() + hi):
            out.append(TimeMention(cm.start() + lo, cm.start() + hi, spec))
    return tuple(sorted(out, key=lambda t: t.start))


_WORD = re.compile(r"\S+")


def _narrow(frag: str, spec: TimeSpec, age: int | None) -> tuple[int, int]:
    """The smallest word-aligned window of ``frag`` that still parses to ``spec``."""
    starts = [m.start() for m in _WORD.finditer(frag)]
    lo = 0
    for i in reversed(starts):
        if parse_expression(frag[i:], age=age) == spec:
            lo = i
            break
    hi = len(frag)
    for m in _WORD.finditer(frag[lo:]):
        j = lo + m.end()
        if parse_expression(frag[lo:j], age=age) == spec:
            hi = j
            break
    return lo, hi


def _overlaps(found: Sequence[TimeMention], start: int, end: int, *, strict: bool = False) -> bool:
    """Does [start, end) overlap a found mention? ``strict``: the found mention lies inside [start, end)."""
    if strict:
        return any(start <= t.start and t.end <= end for t in found)
    return any(t.start < end and start < t.end for t in found)


def is_past(spec: TimeSpec) -> bool:
    """Entirely before day 0 (a finite span ending at or before the visit, not ongoing)."""
    if spec.ongoing:
        return False
    iv = spec.interval()
    if iv is None:
        return spec.offset < 0
    return iv[1] <= 0


ONSET_CUE = re.compile(r"\b(?:began|begun|begins|started|starts|onset|since|became|has become|have become|"
                        r"developed|emerged|first noticed|dates? the onset|beginning|escalat\w+|worsen\w+|"
                        r"increasing|progressive)\b", re.I)
PAST_EVENT_CUE = re.compile(r"\b(?:had|was|were|did|once|one episode|an episode|a period|stopped|resolved|"
                             r"treated|hospitali[sz]ed|admitted)\b", re.I)


_EXAMPLE_ASIDE = re.compile(r"\([^()]*\)|,\s*(?:including|such as|e\.g\.|for example|for instance)\b[^;.]*")


def mention_time(sentence: str, span: tuple[int, int], times: Sequence[TimeMention]) -> TimeSpec | None:
    """The temporal expression that governs a mention (see :func:`governing_time`), or None."""
    t = governing_time(sentence, span, times)
    return None if t is None else t.spec


#: A mention that a relation word puts before or after the event a time dates ("underwent a lobectomy on 9/16/92
#: following initial treatment with Decadron": the date is the lobectomy's; the Decadron came before it). The
#: relation word governs the mention's own phrase: at most four words between it and the mention, no punctuation
#: and no subject ("three years ago after her divorce she became depressed" is still dated).
_OTHER_EVENT = re.compile(r"\b(?:following|after|before|prior\s+to|preceded\s+by|followed\s+by)\s+"
                          r"(?:(?!(?:he|she|they|patient|I|we)\b)[\w/-]+\s+){0,4}$", re.I)


def governing_time(sentence: str, span: tuple[int, int], times: Sequence[TimeMention]) -> TimeMention | None:
    """The temporal expression that governs a mention: the nearest one in its clause, preferring one before it.
    One after it governs only within the mention's comma segment unless it is a duration ("for the past 3
    weeks"); one inside an example aside dates only the example; one before a relation word that governs the
    mention ("on 9/16/92 following treatment with Decadron") dates another event."""
    if not times:  # most sentences name no time: nothing to choose from
        return None
    lo, hi = clause_bounds(sentence, span[0])
    asides = [(m.start(), m.end()) for m in _EXAMPLE_ASIDE.finditer(sentence)]

    def visible(t: TimeMention) -> bool:
        # A date inside an example ("(maxed two credit cards in January 2025)", ", including ... in February
        # 2025") dates the example, not the mention outside it.
        return all(not (a <= t.start < b) or a <= span[0] < b for a, b in asides)

    segs = segments(sentence)
    own = segment_index(segs, span[0])

    def local(t: TimeMention) -> bool:
        return t.start < span[1] or t.spec.ongoing or segment_index(segs, t.start) == own

    cands = [t for t in times if lo <= t.start and t.end <= hi and visible(t) and local(t)
             and not _OTHER_EVENT.search(sentence, t.end, span[0])]
    if not cands:
        return None

    def dist(t: TimeMention) -> tuple[int, int]:
        if t.end <= span[0]:
            return (span[0] - t.end, 0)
        if t.start >= span[1]:
            return (t.start - span[1], 1)
        return (0, 0)

    return min(cands, key=dist)


_ANCHOR_BEFORE = re.compile(r"\b(?:after|following|since|in the wake of|ever since)\b[^,;.]*$", re.I)


def onset_anchor(sentence: str, t: TimeMention) -> bool:
    """Is the time expression the date of a triggering event ("following an assault 5 months ago")?"""
    return bool(_ANCHOR_BEFORE.search(sentence[max(0, t.start - 80):t.start]))
