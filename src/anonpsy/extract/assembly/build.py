"""The deterministic (rules) backend of extraction E: narrative text → case graph.

Each step is a small pure function over the segmented text; the lexicons, ConText triggers, DSM aliases and
treatment classes come from ``rules/``. The result is normalised by the core temporal engine by the caller.

Time: every mention takes the temporal expression nearest to it in its clause (``since age 15``, ``3 days before
admission``, ``in March 2025``); calendar dates are placed relative to the visit date (a ``Date: 03/14/2025``
header, or the date the patient was seen), so ``on 03/12/2025`` is two days before day 0. A mention with no
temporal expression gets no duration (no invented precision); a symptom that is present at the visit but whose
only durations lie in the past gets a one-day duration on day 0.
"""

from __future__ import annotations

import calendar
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import lru_cache
from typing import Any, Literal, TypeVar

from anonpsy import lexicon
from anonpsy.extract.assertion.context import ContextResult, classify, default_engine
from anonpsy.extract.sections import Sentence, sentences
from anonpsy.graph import (
    STEB,
    UNIT_DAYS,
    ArrivalMode,
    CaseGraph,
    Demographics,
    Diagnosis,
    Duration,
    Edge,
    FamilyHistory,
    HistoryStatus,
    LegalStatus,
    PastHistory,
    RelationType,
    Route,
    SafetyFlag,
    Setting,
    Sex,
    Symptom,
    TestResults,
    Treatment,
    TreatmentType,
    Unit,
    VisitEvent,
)
from anonpsy.rules import dsm as dsm_rules
from anonpsy.rules import tables
from anonpsy.temporal import TimeSpec, parse_expression

# ---------------------------------------------------------------------------------------------------------------
# Demographics

_AGE_PATTERNS = [
    re.compile(r"\b(\d{1,3})[- ](?:year|yr)s?[- ]old\b", re.I),
    re.compile(r"\b(\d{1,3})\s?(?:yo|y/o|y\.o\.)(?!\w)", re.I),
    re.compile(r"\b(?:aged|age:?)\s(\d{1,3})\b", re.I),
    re.compile(r"\bage\s+of\s+(\d{1,3})\b(?![^.]*\b(?:when|at the time)\b)", re.I),
    # "Marisol Q., 33 F", "Pt: K. A., 23M": age and sex written together in a header line.
    re.compile(r"(?:^|[,:]\s*)(\d{1,3})\s?(?:M|F)\b"),
]
_DECADE = re.compile(r"\bin (?:his|her|their) (early |mid-?|late )?(twenties|thirties|forties|fifties|sixties|"
                     r"seventies|eighties|nineties|teens|20s|30s|40s|50s|60s|70s|80s|90s)\b", re.I)
_DECADES = {"teens": 15, "twenties": 25, "thirties": 35, "forties": 45, "fifties": 55, "sixties": 65,
            "seventies": 75, "eighties": 85, "nineties": 95}
_FEMALE = re.compile(r"\b(she|her|hers|herself|woman|female|girl|lady|mrs|ms|miss|mother of|wife|daughter|"
                     r"sister|pregnant|postpartum)\b", re.I)
_MALE = re.compile(r"\b(he|him|his|himself|man|male|boy|gentleman|mr|father of|husband|son|brother)\b", re.I)


def extract_age(sents: list[Sentence]) -> int | None:
    """Present age from the opening lines: "34-year-old", "34 yo", "aged 7", "33 F", else "in her thirties".

    >>> extract_age(sentences("A 34-year-old woman with low mood."))
    34
    >>> extract_age(sentences("She is a woman in her late thirties."))
    38
    """
    for s in sents[:12]:
        for pat in _AGE_PATTERNS:
            m = pat.search(s.text)
            if m and 0 <= int(m.group(1)) <= 120:
                return int(m.group(1))
    for s in sents[:12]:
        m = _DECADE.search(s.text)
        if m:
            word = m.group(2).lower()
            base = _DECADES.get(word) or int(word[:2]) + 5
            mod = (m.group(1) or "").strip().lower()
            return base - 3 if mod == "early" else base + 3 if mod == "late" else base
    return None


def extract_sex(text: str) -> Sex:
    """Sex from pronouns, nouns and titles, weighting the patient-describing opening lines."""
    head = text[:600]
    f = len(_FEMALE.findall(text)) + 3 * len(_FEMALE.findall(head))
    m = len(_MALE.findall(text)) + 3 * len(_MALE.findall(head))
    if f == m == 0:
        return Sex.unknown
    if f > 1.5 * m:
        return Sex.female
    if m > 1.5 * f:
        return Sex.male
    return Sex.unknown


_OCC_CUE = re.compile(r"\b(?:works?|worked|working|employed)\s+(?:as|at)\b|\bretired\b|\bunemployed\b|"
                      r"\bstudent\b|\boccupation\b|\bby profession\b|\bis an?\b", re.I)


def extract_occupation(sents: list[Sentence]) -> str | None:
    """The patient's occupation from the history or social history (a lexicon term with an occupation cue)."""
    for s in sents:
        if s.section not in ("hpi", "social_history", "chief_complaint"):
            continue
        matches = lexicon.find_terms(s.text, "occupation")
        if matches and (_OCC_CUE.search(s.text) or s.section == "social_history"):
            return matches[0].surface.lower()
    return None


def extract_ethnicity(sents: list[Sentence]) -> str | None:
    """Ethnicity, race, nationality or religion written in the opening lines."""
    for s in sents[:8]:
        matches = lexicon.find_terms(s.text, "ethnicity")
        if matches:
            return matches[0].surface
    return None


def extract_family_structure(sents: list[Sentence]) -> str | None:
    """Marital status / household ("married", "lives with her parents")."""
    for s in sents:
        matches = lexicon.find_terms(s.text, "family")
        if matches:
            return matches[0].surface.lower()
    return None


# ---------------------------------------------------------------------------------------------------------------
# Time: the visit date and temporal expressions relative to it

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH_RE = (r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
             r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?")
_NUMERIC_DATE = r"(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})(?![\d/])"
_VISIT_HEADER = re.compile(
    r"\b(?:date of (?:evaluation|visit|service|consultation|consult|exam(?:ination)?|admission|assessment|"
    r"encounter)|visit date|evaluation dates?|admission date|date of admission|admitted|dos|date(?:/time)?)"
    r"\s*:\s*" + _NUMERIC_DATE, re.I)
_VISIT_PROSE = re.compile(
    r"\b(?:seen|evaluated|examined|assessed|interviewed|admitted|presented|presents)\s+(?:\w+\s+){0,3}?on\s+"
    + _NUMERIC_DATE, re.I)
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
_SINCE_REL = re.compile(r"\bsince\s+(?:about\s+|around\s+)?(?:\d{1,2}:\d{2}\s+|\d{1,2}\s*(?:a\.?m\.?|p\.?m\.?)\s+)?"
                        r"(yesterday|last night|this morning|last (?:week|month|year)|admission)\b", re.I)
_QUALIFIER = re.compile(r"\bfor\s+(?:at least|roughly|approximately|about|around|nearly|almost|over|more than|"
                        r"close to|upwards of|the last|the past)\s+(?=\d|a |an |one|two|three|four|five|six|seven|"
                        r"eight|nine|ten|several|a few|many)", re.I)


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
    for m in re.finditer(_NUMERIC_DATE, text[:400]):
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
    out: list[TimeMention] = []
    if visit is not None:
        out.extend(absolute_dates(text, visit))
    for m in _SINCE_AGE.finditer(text):
        at = int(m.group(1))
        if age is not None and at <= age:
            out.append(TimeMention(m.start(), m.end(), TimeSpec(at - age, None, Unit.year, ongoing=True, coarse=True)))
    for pat in (_AROUND_AGE, _AT_AGE_BARE):
        for m in pat.finditer(text):
            at = int(m.group(1))
            if age is not None and at <= age and not _overlaps(out, m.start(), m.end()):
                out.append(TimeMention(m.start(), m.end(), TimeSpec(at - age, 1, Unit.year, coarse=True)))
    for m in _AT_AGE_UNIT.finditer(text):
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
    for cm in re.finditer(r"[^;,()]+", text):
        frag = _QUALIFIER.sub(lambda q: "for " + " " * (len(q.group(0)) - 4), cm.group(0))
        spec = parse_expression(frag, age=age)
        if spec is None or _overlaps(out, cm.start(), cm.end(), strict=True):
            continue
        lo, hi = _narrow(frag, spec, age)
        if re.search(r"\bsince\b", frag[max(0, lo - 12):hi], re.I) and not spec.ongoing and spec.offset <= 0:
            spec = TimeSpec(spec.offset, None, spec.unit, ongoing=True, coarse=spec.coarse)
        if not _overlaps(out, cm.start() + lo, cm.start() + hi):
            out.append(TimeMention(cm.start() + lo, cm.start() + hi, spec))
    return sorted(out, key=lambda t: t.start)


def _narrow(frag: str, spec: TimeSpec, age: int | None) -> tuple[int, int]:
    """The smallest word-aligned window of ``frag`` that still parses to ``spec``."""
    starts = [m.start() for m in re.finditer(r"\S+", frag)]
    lo = 0
    for i in reversed(starts):
        if parse_expression(frag[i:], age=age) == spec:
            lo = i
            break
    hi = len(frag)
    for m in re.finditer(r"\S+", frag[lo:]):
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


def _past(spec: TimeSpec) -> bool:
    """Entirely before day 0 (a finite span ending at or before the visit, not ongoing)."""
    if spec.ongoing:
        return False
    iv = spec.interval()
    if iv is None:
        return spec.offset < 0
    return iv[1] <= 0


_ONSET_CUE = re.compile(r"\b(?:began|begun|begins|started|starts|onset|since|became|has become|have become|"
                        r"developed|emerged|first noticed|dates? the onset|beginning|escalat\w+|worsen\w+|"
                        r"increasing|progressive)\b", re.I)
_PAST_EVENT_CUE = re.compile(r"\b(?:had|was|were|did|once|one episode|an episode|a period|stopped|resolved|"
                             r"treated|hospitali[sz]ed|admitted)\b", re.I)


# ---------------------------------------------------------------------------------------------------------------
# Clauses


_HARD_BREAK = re.compile(r";|\.\s|\s(?:but|however|although|though|whereas|yet)\s|:\s", re.I)


def _clause_bounds(sentence: str, pos: int) -> tuple[int, int]:
    """[start, end) of the clause around ``pos``: split at semicolons, full stops and contrast words."""
    start, end = 0, len(sentence)
    for m in _HARD_BREAK.finditer(sentence):
        if m.end() <= pos:
            start = m.end()
        elif m.start() >= pos:
            end = m.start()
            break
    return start, end


def _segments(sentence: str) -> list[tuple[int, int]]:
    """Comma/semicolon-delimited segments (outside quotes) with offsets."""
    out: list[tuple[int, int]] = []
    start = 0
    quote = False
    for i, ch in enumerate(sentence):
        if ch in "\"“”":
            quote = not quote if ch == '"' else ch == "“"
        elif ch in ",;:" and not quote:
            out.append((start, i))
            start = i + 1
    out.append((start, len(sentence)))
    return [(a, b) for a, b in out if sentence[a:b].strip()]


def _segment_index(segs: list[tuple[int, int]], pos: int) -> int:
    for i, (a, b) in enumerate(segs):
        if a <= pos < b:
            return i
    return max(0, len(segs) - 1)


_EXAMPLE_ASIDE = re.compile(r"\([^()]*\)|,\s*(?:including|such as|e\.g\.|for example|for instance)\b[^;.]*")


def mention_time(sentence: str, span: tuple[int, int], times: Sequence[TimeMention]) -> TimeSpec | None:
    """The temporal expression that governs a mention (see :func:`governing_time`), or None."""
    t = governing_time(sentence, span, times)
    return None if t is None else t.spec


def governing_time(sentence: str, span: tuple[int, int], times: Sequence[TimeMention]) -> TimeMention | None:
    """The temporal expression that governs a mention: the nearest one in its clause, preferring one before it.
    One after it governs only within the mention's comma segment unless it is a duration ("for the past 3
    weeks"); one inside an example aside dates only the example."""
    lo, hi = _clause_bounds(sentence, span[0])
    asides = [(m.start(), m.end()) for m in _EXAMPLE_ASIDE.finditer(sentence)]

    def visible(t: TimeMention) -> bool:
        # A date inside an example ("(maxed two credit cards in January 2025)", ", including ... in February
        # 2025") dates the example, not the mention outside it.
        return all(not (a <= t.start < b) or a <= span[0] < b for a, b in asides)

    segs = _segments(sentence)
    own = _segment_index(segs, span[0])

    def local(t: TimeMention) -> bool:
        return t.start < span[1] or t.spec.ongoing or _segment_index(segs, t.start) == own

    cands = [t for t in times if lo <= t.start and t.end <= hi and visible(t) and local(t)]
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


def _onset_anchor(sentence: str, t: TimeMention) -> bool:
    """Is the time expression the date of a triggering event ("following an assault 5 months ago")?"""
    return bool(_ANCHOR_BEFORE.search(sentence[max(0, t.start - 80):t.start]))


# ---------------------------------------------------------------------------------------------------------------
# Visit


_SETTING_CUES: list[tuple[re.Pattern[str], Setting]] = [
    (re.compile(r"\b(?:emergency (?:department|room)|ED\b|ER\b|psychiatric emergency|CPEP|crisis center)", re.I),
     Setting.emergency_department),
    (re.compile(r"\b(?:consult(?:ation)?[- ]liaison|C-L psychiatry|psychiatry (?:was )?consulted|"
                r"psychiatry consult(?: note)?|reason for consult|consulted (?:by|for)|medical (?:floor|ward)|"
                r"medicine service|surgical (?:floor|ward)|(?:orthopedic|surgery|medicine) ward|ICU)\b", re.I),
     Setting.consultation_liaison),
    (re.compile(r"\b(?:admitted to (?:the )?(?:inpatient|psychiatric|locked|acute)|inpatient (?:psychiatric )?unit|"
                r"inpatient (?:admission|psychiatry)|psychiatric (?:unit|ward|hospitali[sz]ation)|on the unit|"
                r"discharge summary|hospital course|admission note)\b", re.I), Setting.inpatient),
    (re.compile(r"\b(?:forensic|detention center|jail|correctional|prior to sentencing|competency evaluation)\b",
                re.I), Setting.forensic),
    (re.compile(r"\b(?:telehealth|telepsychiatry|video visit)\b", re.I), Setting.telehealth),
    (re.compile(r"\bresidential (?:treatment|program)\b", re.I), Setting.residential),
    (re.compile(r"\b(?:outpatient|clinic|follow[- ]up|office visit|returns? for|medication management|"
                r"med management|initial evaluation|psychiatric evaluation|consultation|diagnostic evaluation|"
                r"SOAP note|seen (?:today|in (?:the )?office)|intake|new patient evaluation)\b", re.I),
     Setting.outpatient),
]
_KIN = (r"(?:mother|father|parents?|wife|husband|partner|family|sister|brother|daughter|son|girlfriend|boyfriend|"
        r"roommate|friend|aunt|uncle|grandmother|grandfather|caregiver|guardian)")
_ARRIVAL_CUES: list[tuple[re.Pattern[str], ArrivalMode]] = [
    (re.compile(r"\b(?:brought (?:in |to [\w' ]{2,40}?)?by (?:the )?(?:[A-Z][a-z]+ )?(?:police|officers|sheriff|"
                r"law enforcement)|police (?:brought|escorted)|by law enforcement|escorted by (?:police|officers)|"
                r"(?:brought|transported) by (?:police )?officers|police (?:were called|responded)|"
                r"initiated by police)\b", re.I), ArrivalMode.police),
    (re.compile(r"\b(?:by ambulance|via ambulance|EMS|paramedics)\b", re.I), ArrivalMode.ambulance),
    (re.compile(r"\btransferred from\b", re.I), ArrivalMode.transfer),
    (re.compile(r"\b(?:referred (?:by|from)|referring (?:clinician|provider|physician)|referral\s*:|"
                r"reason for referral|at the request of|admitted from (?:her|his|their|the) (?:\w+'s )?"
                r"(?:office|clinic)|sent (?:in )?by (?:her|his|their) (?:pediatrician|physician|doctor|PCP|GP|"
                r"therapist|psychiatrist))", re.I), ArrivalMode.referral),
    (re.compile(rf"\b(?:brought (?:in |to [\w' ]{{2,40}}?)?by (?:his |her |their )?{_KIN}|accompanied by "
                rf"(?:his |her |their )?{_KIN})", re.I), ArrivalMode.family),
    (re.compile(r"\b(?:scheduled|follow[- ]up|returns for|here for)\b", re.I), ArrivalMode.scheduled),
    (re.compile(r"\b(?:self[- ]referred|presented on (?:his|her|their) own|walked in|self-presented|"
                r"came (?:in )?(?:by [\w ]{2,20}? )?on (?:his|her|their) own|walk-in|presented alone)\b", re.I),
     ArrivalMode.self),
]
#: Cues a heading block may carry: the ways of arriving that outrank a scheduled visit or the family's company.
_HEADING_ARRIVAL = _ARRIVAL_CUES[:4]
_LEGAL_CUES: list[tuple[re.Pattern[str], LegalStatus]] = [
    (re.compile(r"\b(?:court[- ]ordered|court order|committed by the court|prior to sentencing|Superior Court|"
                r"District Court|(?:ordered|referred) by the (?:court|judge)|Honorable Judge)\b", re.I),
     LegalStatus.court_ordered),
    (re.compile(r"\binvoluntar(?:y|ily)\b|\badmitted (?:on|under) (?:an? )?(?:emergency detention|hold|"
                r"emergency hold|civil commitment)\b", re.I), LegalStatus.involuntary),
    (re.compile(r"\b(?:5150|section 12|legal hold|emergency hold|72[- ]hour hold|pink slip|emergency detention|"
                r"mental health (?:act|hold)|placed on a hold|on a hold)\b", re.I), LegalStatus.legal_hold),
    (re.compile(r"\bvoluntar(?:y|ily)\b", re.I), LegalStatus.voluntary),
]
#: Outpatient-like settings, where care is voluntary unless the text says otherwise.
_VOLUNTARY_BY_DEFAULT = {Setting.outpatient, Setting.telehealth, Setting.community}
#: Ways of arriving that are voluntary by definition (coming on one's own, a booked visit, a clinician referral).
_VOLUNTARY_ARRIVALS = {ArrivalMode.self, ArrivalMode.scheduled, ArrivalMode.referral}
SAFETY_FROM_HEADWORD: dict[str, SafetyFlag] = {
    "suicidal ideation": SafetyFlag.suicidal_ideation, "suicide plan": SafetyFlag.suicidal_ideation,
    "suicide attempt": SafetyFlag.suicide_attempt, "passive death wish": SafetyFlag.suicidal_ideation,
    "self-harm": SafetyFlag.self_harm, "homicidal ideation": SafetyFlag.homicidal_ideation,
    "violent behavior": SafetyFlag.violence, "threats of violence": SafetyFlag.violence,
    "aggression": SafetyFlag.violence, "intoxication": SafetyFlag.intoxication,
}
#: Flags read from phrases (affirmed, in the history or assessment) rather than from symptoms.
_SAFETY_CUES: list[tuple[re.Pattern[str], SafetyFlag]] = [
    (re.compile(r"\b(?:medically unstable|medical(?:ly)? instability|hemodynamic(?:ally)? unstable|"
                r"(?:requiring|for|needs?) (?:inpatient )?medical stabili[sz]ation|orthostatic instability|"
                r"autonomic instability|risk of (?:seizures and )?death is high)\b", re.I),
     SafetyFlag.medical_instability),
    (re.compile(r"\b(?:gravely disabled|unable to care for (?:him|her|them)sel(?:f|ves)|self-neglect|"
                r"vulnerable adult|financial (?:exploitation|protection)|at risk of exploitation|"
                r"exploited financially)\b", re.I), SafetyFlag.vulnerability),
    (re.compile(r"\b(?:danger to others|threat to others)\b", re.I), SafetyFlag.violence),
]
_SOURCES = re.compile(r"\b(?:history (?:was )?(?:obtained|provided|taken) from|per|according to|collateral (?:from|"
                      r"information from))\s+(?:the\s+)?((?:patient|chart|records?|(?:his|her|their)\s+\w+|"
                      r"family|parents?|mother|father|wife|husband|police|EMS|staff|teachers?|school)"
                      r"(?:\s*(?:,|and)\s*(?:the\s+)?(?:patient|chart|records?|(?:his|her|their)\s+\w+|family|"
                      r"parents?|mother|father|wife|husband|police|EMS|staff|teachers?|school))*)", re.I)


_V = TypeVar("_V")
_D = TypeVar("_D")


def _first_cue(text: str, cues: Sequence[tuple[re.Pattern[str], _V]], default: _D) -> _V | _D:
    best: tuple[int, _V] | None = None
    for pat, value in cues:
        m = pat.search(text)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), value)
    return best[1] if best else default


def _priority_cue(text: str, cues: Sequence[tuple[re.Pattern[str], _V]]) -> _V | None:
    for pat, value in cues:
        if pat.search(text):
            return value
    return None


def _title(text: str) -> str:
    """The note's first non-empty line (its title)."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def extract_visit(text: str, sents: list[Sentence], current_headwords: set[str]) -> VisitEvent:
    """Visit scaffold from cues.

    Setting: the earliest cue in the title line, else the heading (first 500 characters) by priority, then the
    earliest cue in the chief complaint / history, then anywhere. Arrival: a police, ambulance, transfer or
    referral cue in the heading, else the earliest cue in the chief complaint / history, then anywhere. Legal
    status: an explicit cue anywhere; otherwise voluntary for outpatient-like settings and for patients who came
    on their own, for a booked visit or on a clinician's referral; else unknown. Safety flags: current, affirmed
    symptoms (a denied symptom is never current) and affirmed phrases ("medically unstable", "gravely
    disabled").
    """
    heading = text[:500]
    head = " ".join(s.text for s in sents if s.section in ("chief_complaint", "hpi"))[:3000] or text[:3000]
    setting: Setting = (_first_cue(_title(text), _SETTING_CUES, None) or _priority_cue(heading, _SETTING_CUES)
                        or _first_cue(head, _SETTING_CUES, None) or _first_cue(text, _SETTING_CUES, Setting.unknown))
    arrival: ArrivalMode = (_priority_cue(heading, _HEADING_ARRIVAL) or _first_cue(head, _ARRIVAL_CUES, None)
                            or _first_cue(text, _ARRIVAL_CUES, ArrivalMode.unknown))
    legal = _priority_cue(text, _LEGAL_CUES)
    if legal is None:
        voluntary = setting in _VOLUNTARY_BY_DEFAULT or (
            arrival in _VOLUNTARY_ARRIVALS and setting != Setting.forensic)
        legal = LegalStatus.voluntary if voluntary else LegalStatus.unknown
    flags = {SAFETY_FROM_HEADWORD[h] for h in current_headwords if h in SAFETY_FROM_HEADWORD}
    for s in sents:
        if s.section in ("family_history", "labs", "medications"):
            continue
        for pat, flag in _SAFETY_CUES:
            for cue in pat.finditer(s.text):
                ctx = classify_in_sentence(s.text, cue.start(), cue.end())
                if not (ctx.negated or ctx.hypothetical or ctx.uncertain or ctx.experiencer != "patient"):
                    flags.add(flag)
    sources: list[str] = []
    m = _SOURCES.search(text)
    if m:
        sources = [x.strip() for x in re.split(r",|\band\b", m.group(1)) if x.strip()]
    reason = None
    for s in sents:
        if s.section == "chief_complaint":
            reason = s.text.strip().strip('"').rstrip(".")
            break
    return VisitEvent(
        setting=setting,
        arrival_mode=arrival,
        legal_status=legal,
        reason_for_visit=reason,
        safety_flags=sorted(flags, key=lambda f: f.value),
        source_of_information=sources,
    )


# ---------------------------------------------------------------------------------------------------------------
# STEB

_MAX_WORDS = 25
_SITUATION = re.compile(r"\b(?:often\s+|usually\s+|especially\s+|mostly\s+|typically\s+|only\s+)?"
                        r"((?:when|while|whenever|after|following|during|before|in the context of|at the time of|"
                        r"every time|each time|triggered by|in response to)\b[^,;.:]{3,160})", re.I)
_THOUGHT_VERB = re.compile(r"\b(?:believes?|believed|believing|thinks?|thought(?!\s+(?:broadcasting|insertion|"
                           r"withdrawal|blocking|content|process|disorder|of|about))|worries|worried|fears?|feared|"
                           r"is convinced|was convinced|is certain|was certain|insists?|insisted|is sure|was sure|"
                           r"feels? that|felt that|says|said|states|stated)\s+", re.I)
_SAYING = re.compile(r"^(?:says|said|states|stated)\s+$", re.I)
_THOUGHT_LEAD = re.compile(r"^(?:that\s+|about\s+(?=\w+ing\b))", re.I)
#: A new main clause inside a captured phrase: the subject of the sentence comes back ("after the assault she has").
_MAIN_CLAUSE = re.compile(r"\s(?:she|he|they|I|we|the patient|patient|pt)\s", re.I)
_BEHAVIOR_VERBS = re.compile(r"\b((?:stopped|started|began|refused|refuses|quit|locked|locks|barricaded|called|calls|"
                             r"ran|hid|hides|stayed|stays|avoided|avoids|checks|checked|washes|washed|threw|"
                             r"throws|broke|hit|punched|cuts? (?:her|his|their|him|them)|burned|drank|drinks|took|"
                             r"takes|ingested|overdosed|"
                             r"isolated|isolates|paced|paces|screamed|yelled|shouted|wandered|missed|misses|skipped|"
                             r"skips|spent|attacked|fled|pushed|smashed|stole|lied|sits|sat|keeps|kept|showers|weighs|"
                             r"clings|cries|cried|follows|pinches|picked|picks|covered|covering|banging|shouting|"
                             r"climbs|blurts|interrupts|rehearses|spends|drove|texted|pounded|"
                             r"left (?:the|her|his|their|work|school|home)|walked out|ran away|runs off)\b"
                             r"[^,;.:]{0,120})", re.I)
_NARRATIVE_SECTIONS = {"hpi", "chief_complaint", "past_psych", "social_history", "substance"}


def _clean_field(text: str | None, *, min_words: int = 1) -> str | None:
    """A clean STEB field: no unbalanced quotes, no leading conjunction, at most 25 whole words, no dangling
    function word at the end."""
    if not text:
        return None
    t = re.sub(r"\s+", " ", text).strip(" ,;:-")
    if t.count('"') % 2:
        t = t.replace('"', "")
    if (t.count("“") + t.count("”")) % 2:
        t = t.replace("“", "").replace("”", "")
    if t.count("(") != t.count(")"):
        t = t.replace("(", "").replace(")", "")
    t = re.sub(r"^(?:and|or|but|then|so|that)\s+", "", t, flags=re.I)
    words = t.split()
    if len(words) > _MAX_WORDS:
        words = words[:_MAX_WORDS]
    while words and words[-1].lower().strip(",;:") in {"and", "or", "but", "the", "a", "an", "of", "to", "in",
                                                         "on", "at", "for", "with", "that", "his", "her", "their",
                                                         "so", "because", "as", "by", "from", "my", "is", "was"}:
        words.pop()
    t = " ".join(words).strip(" ,;:-")
    t = re.sub(r"[.,;:]+([\"”’']?)$", r"\1", t)
    if t.count('"') % 2:
        t = t.replace('"', "")
    return t if len(t) >= 3 and len(t.split()) >= min_words else None


def _thought_at(sentence: str, m: re.Match[str]) -> tuple[int, str] | None:
    """The proposition after a thought verb (the verb dropped): a quotation, or the clause up to the end of its
    comma segment. After "says/states" only a quotation or a that-clause is a thought."""
    rest = sentence[m.end():]
    q = re.match(r"\s*[\"“]([^\"”]{3,400})[\"”]", rest)
    if q:
        return m.end() + q.start(1), q.group(1)
    lead = _THOUGHT_LEAD.match(rest)
    if _SAYING.match(m.group(0)) and not lead:
        return None
    body_start = m.end() + (lead.end() if lead else 0)
    body = sentence[body_start:]
    stop = re.search(r"[;,:]|\.(?:\s|$)|\s(?:but|although|though|whereas)\s", body)
    prop = body[: stop.start()] if stop else body
    about = re.search(r"\babout\s+", prop) if not lead else None
    if about is not None and m.group(0).lower().startswith(("worr", "fear")):
        body_start += about.end()
        prop = prop[about.end():]
    # Keep the first proposition of "X and that Y".
    prop = re.split(r"\s+and that\s+", prop, maxsplit=1)[0]
    return (body_start, prop) if len(prop.split()) >= 2 else None


def _cut_main_clause(phrase: str) -> str:
    """A situation phrase without the main clause that follows it ("after the assault she has had ..." →
    "after the assault"); a subject right after the conjunction is the clause's own ("whenever she has to
    separate")."""
    words = list(re.finditer(r"\S+", phrase))
    if len(words) < 3:
        return phrase
    m = _MAIN_CLAUSE.search(phrase, words[1].end())
    return phrase[: m.start()] if m else phrase


def extract_steb(sentence: str, span: tuple[int, int],
                 others: Sequence[tuple[int, int]] = ()) -> STEB | None:
    """STEB frame from clause patterns around the symptom mention at ``span``; None when no field is found.

    Situation: a when/while/after/during clause in the mention's comma segment, or in the neighbouring segment
    that introduces it, cut before the main clause; never the clause that contains the mention itself. Thought:
    the proposition of believes/thinks/worries/is convinced (the verb dropped; a quotation is taken whole) when the
    mention lies in it or shares its segment. Emotion: an emotion-lexicon word in the mention's segment.
    Behavior: an action-verb phrase in the mention's segment (not the taking of a medication). ``others`` are
    the spans of the other symptom mentions of the sentence: a clause that belongs to another symptom's segment
    is not copied to this one. Every field is at most 25 words, cut at a word boundary.

    >>> extract_steb("He believes his neighbors implanted a microchip in his tooth.", (0, 11)).thought
    'his neighbors implanted a microchip in his tooth'
    >>> f = extract_steb("She cries several times a day, often while feeding the baby.", (4, 9))
    >>> f.situation, f.behavior
    ('while feeding the baby', 'cries several times a day')
    """
    segs = _segments(sentence)
    i = _segment_index(segs, span[0])
    own = segs[i]
    other_segs = {_segment_index(segs, o[0]) for o in others if o != span}

    situation = None
    for j in (i, i + 1, i - 1):
        if not 0 <= j < len(segs) or (j != i and j in other_segs):
            continue
        a, b = segs[j]
        m = _SITUATION.search(sentence, a, b)
        if m is None or (j != i and m.start() - a > 12):
            continue
        phrase = _cut_main_clause(m.group(1))
        if m.start(1) <= span[0] < m.start(1) + len(phrase):
            continue  # the mention is inside this clause: it is the situation of something else
        here = abs(m.start(1) - span[0])
        if j == i and any(a <= o[0] < b and abs(m.start(1) - o[0]) < here for o in others if o != span):
            continue  # another symptom of the segment is nearer: the clause is about that one
        situation = phrase
        break

    thought = None
    for m in _THOUGHT_VERB.finditer(sentence):
        got = _thought_at(sentence, m)
        if got is None:
            continue
        start, prop = got
        inside = start <= span[0] < start + len(prop)
        same_seg = _segment_index(segs, m.start()) == i
        between = any(min(m.end(), span[0]) <= o[0] < max(m.start(), span[1]) for o in others if o != span)
        if inside or (same_seg and not between):
            thought = prop
            break

    emotion = None
    a, b = own
    best: tuple[int, str] | None = None
    for e in lexicon.find_terms(sentence[a:b], "emotion"):
        s0, e0 = a + e.start, a + e.end
        if any(s0 < o[1] and o[0] < e0 for o in (span, *others)):
            continue  # the word is a symptom mention itself ("euphoric and irritable")
        d = abs(s0 - span[0])
        if best is None or d < best[0]:
            best = (d, e.surface.lower())
    if best is not None:
        emotion = best[1]

    behavior = None
    m = _BEHAVIOR_VERBS.search(sentence, a, b)
    if m:
        phrase = re.split(r"\s+and\s+(?=\w+s\b|\w+ed\b)|\s+(?:but|although|though|whereas|yet)\s+", m.group(1),
                          maxsplit=1)[0]
        if len(phrase.split()) >= 2 and not lexicon.find_terms(phrase, "medication"):
            behavior = phrase

    frame = STEB(situation=_clean_field(situation, min_words=2), thought=_clean_field(thought, min_words=2),
                 emotion=_clean_field(emotion), behavior=_clean_field(behavior, min_words=2))
    return frame if frame.present_fields() else None


# ---------------------------------------------------------------------------------------------------------------
# Diagnoses


@lru_cache(maxsize=1)
def _dx_matcher() -> tuple[re.Pattern[str], dict[str, str]]:
    names: dict[str, str] = {}
    for rule in dsm_rules.load_dsm().values():
        for alias in [rule.name, *rule.aliases]:
            key = _dx_key(alias)
            if len(key) < 3 and not alias.isupper():
                continue
            names.setdefault(key, rule.id)
    # Spaces, hyphens and slashes in a name match any run of them ("methamphetamine-induced", line wraps). The
    # alternation is a character trie so the engine tests each position against shared prefixes once.
    pattern = re.compile(r"(?<![\w-])(" + _trie_regex(names) + r")(?![\w-])", re.I)
    return pattern, names


def _trie_regex(strings: Iterable[str]) -> str:
    """A regex matching exactly ``strings`` (longest first at each branch), built as a character trie."""
    trie: dict[str, Any] = {}
    for text in strings:
        node = trie
        for ch in text:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        ends = "" in node
        alts = [(r"[\s/-]+" if ch == " " else re.escape(ch)) + build(node[ch]) for ch in sorted(node) if ch]
        if not alts:
            return ""
        if len(alts) == 1 and not ends:
            return alts[0]
        return "(?:" + "|".join(alts) + ")" + ("?" if ends else "")

    return build(trie)


def _dx_key(s: str) -> str:
    return " ".join(re.sub(r"[\s/-]+", " ", s.strip().lower()).split())


#: A diagnosis or symptom word that names an instrument ("Geriatric Depression Scale", "PHQ depression module").
_INSTRUMENT_AFTER = re.compile(r"^[\s-]*(?:[A-Z][\w'-]*\s+){0,2}(?:scale|inventory|questionnaire|checklist|rating|"
                               r"index|subscale|screen(?:er|ing)?|measure|module|interview|schedule|severity|score|"
                               r"test|assessment tool)\b", re.I)
_INSTRUMENT_BEFORE = re.compile(r"\b(?:Yale-Brown|Hamilton|Beck|Geriatric|Children's|Edinburgh|Montgomery|Zung|"
                                r"Hospital|Patient Health|Young)\s+(?:[A-Z][\w'-]*\s+)?$")


def is_instrument_name(text: str, start: int, end: int) -> bool:
    """Is ``text[start:end]`` part of the name of a rating scale or test?

    >>> s = "Geriatric Depression Scale-15: 3."
    >>> is_instrument_name(s, 10, 20)
    True
    """
    before = text[max(0, start - 40):start]
    return bool(_INSTRUMENT_AFTER.match(text[end:end + 40]) or _INSTRUMENT_BEFORE.search(before))


def _blank_parentheticals(text: str) -> str:
    """Short parenthetical remarks replaced by spaces (offsets kept): "Stimulant (methamphetamine) use disorder"."""
    return re.sub(r"\((?:[^()]{1,30})\)", lambda m: " " * len(m.group(0)), text)


def find_diagnoses(text: str) -> list[tuple[int, int, str]]:
    """DSM diagnoses named in ``text``: (start, end, rule id). Short all-caps abbreviations (MDD, GAD) must be in
    capitals; names of rating scales ("Geriatric Depression Scale") do not count.

    >>> find_diagnoses("Stimulant (methamphetamine) use disorder, severe.")
    [(0, 40, 'stimulant_use_disorder')]
    """
    pattern, names = _dx_matcher()
    out: list[tuple[int, int, str]] = []
    seen: set[tuple[int, int]] = set()
    for source in (text, _blank_parentheticals(text)) if "(" in text else (text,):
        for m in pattern.finditer(source):
            surface = m.group(1)
            key = _dx_key(surface)
            if key not in names:
                continue
            if len(key) <= 5 and not surface.isupper() and " " not in key:
                continue
            if is_instrument_name(text, m.start(1), m.end(1)):
                continue
            if any(a < m.end(1) and m.start(1) < b for a, b in seen):
                continue
            seen.add((m.start(1), m.end(1)))
            out.append((m.start(1), m.end(1), names[key]))
    return sorted(out)


# ---------------------------------------------------------------------------------------------------------------
# Family history

_MEMBER = re.compile(
    r"\b((?:(?:maternal|paternal|older|younger|elder|twin|half-|step)\s*)?(?:great-)?(?:grandmother|grandfather|"
    r"grandparents?|mother|father|mom|dad|parents?|sisters?|brothers?|siblings?|aunts?|uncles?|cousins?|sons?|"
    r"daughters?|children|niece|nephew|grandson|granddaughter|twin))\b", re.I)
_FH_VERB = re.compile(r"\b(?:has|had|have|with|diagnosed with|was diagnosed with|suffer(?:s|ed)? from|"
                      r"died (?:of|from|by)|developed|struggle[sd]? with|treated for|was treated for|history of|"
                      r"is on \w+ for|takes \w+ for|took \w+ for)\s+", re.I)
_FH_LEAD_VERB = re.compile(r"^(?:has|had|have|with|diagnosed with|was diagnosed with|suffer(?:s|ed)? from|"
                           r"died (?:of|from|by)|developed|struggle[sd]? with|also had|also has)\s+", re.I)
_FH_STOP = re.compile(r"[,;.()]|\s(?:who|which|after|when|while|since|until|in (?:his|her|their|a|the)|at age|"
                      r"at \d+|as a|treated|never|institutionali[sz]ed|but)\b", re.I)
_FH_BREAK = re.compile(r"^(?:treated|was|were|is|are|who|which|never|institutionali[sz]ed|takes|took|on|drank|drinks|"
                       r"also|in|at|after|when|while|but|not|no|incarcerated|imprisoned|died|lives|lived|works|"
                       r"worked|describes|denies|reports)\b", re.I)
_FH_NEGATIVE = re.compile(r"\b(?:no|none|not|unknown|denies|negative|noncontributory|non-contributory|never "
                          r"diagnosed)\b", re.I)
_FH_NOT_CONDITION = re.compile(r"^(?:a|an|the|his|her|their|two|three|one|been|also|some|several|children|"
                               r"custody|contact)\b|\d", re.I)


def _member_before(text: str, pos: int) -> str | None:
    found = None
    for m in _MEMBER.finditer(text, 0, pos):
        found = m.group(1)
    return re.sub(r"\s+", " ", found.lower()) if found else None


def normalize_condition(label: str) -> str:
    """A family-history condition as a short lowercase label; eponyms lose the possessive ("Parkinson's disease"
    → "parkinson disease").

    >>> normalize_condition('"Bad nerves"')
    'bad nerves'
    """
    t = re.sub(r"[\"“”]", "", label).strip(" .,;:").lower()
    t = re.sub(r"(\w)['’]s\s+(disease|syndrome|disorder|dementia|chorea|palsy)\b", r"\1 \2", t)
    return re.sub(r"\s+", " ", t)


def family_conditions(sentence: str) -> list[tuple[str, str]]:
    """(member, condition) pairs of a family-history sentence, including conditions outside the lexicons
    ("Father had coronary artery disease and diabetes"). Negated statements ("no family history of suicide",
    "father unknown") give nothing.

    >>> family_conditions("Father had coronary artery disease and diabetes; no psychiatric illness known.")
    [('father', 'coronary artery disease'), ('father', 'diabetes')]
    >>> family_conditions("Mother had bipolar disorder and died of cancer at 70, treated with lithium.")
    [('mother', 'bipolar disorder'), ('mother', 'cancer')]
    """
    out: list[tuple[str, str]] = []
    for clause in re.split(r";|\.\s", sentence):
        for mm in _MEMBER.finditer(clause):
            member = re.sub(r"\s+", " ", mm.group(1).lower())
            rest = clause[mm.end():]
            nxt = _MEMBER.search(rest)
            scope = rest[: nxt.start()] if nxt else rest
            v = _FH_VERB.search(scope)
            if v is None or len(scope[: v.start()].split()) > 2:
                continue
            if _FH_NEGATIVE.search(clause[: mm.start()] + scope[: v.start()]):
                continue
            for k, raw in enumerate(re.split(r"\s+and\s+|\s*,\s*", scope[v.end():])):
                part = re.sub(r"[\"“”]", "", raw).strip()
                lead = _FH_LEAD_VERB.match(part)
                if lead:
                    part = part[lead.end():]
                elif k > 0 and _FH_BREAK.match(part):
                    break
                stop = _FH_STOP.search(part)
                cond = normalize_condition(part[: stop.start()] if stop else part)
                if not cond or len(cond) < 3 or len(cond.split()) > 6 or _FH_NOT_CONDITION.match(cond) or \
                        _FH_NEGATIVE.match(cond):
                    break
                out.append((member, cond))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Extraction


@dataclass
class Accumulator:
    """Nodes, durations and edges collected while reading a narrative (shared with the LLM backend's extraction)."""

    symptoms: dict[str, Symptom] = field(default_factory=dict)
    durations: list[Duration] = field(default_factory=list)
    diagnoses: dict[str, Diagnosis] = field(default_factory=dict)
    treatments: dict[str, Treatment] = field(default_factory=dict)
    past: dict[str, PastHistory] = field(default_factory=dict)
    family: list[FamilyHistory] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    mentions: dict[str, int] = field(default_factory=dict)  # node id -> first sentence index
    med_class: dict[str, str] = field(default_factory=dict)  # treatment id -> medication class id
    present: set[str] = field(default_factory=set)  # symptom ids with a mention present at the visit
    flaggable: set[str] = field(default_factory=set)  # headwords present at the visit in words, not a lab value
    index_is_admission: bool = False  # a discharge summary: day 0 is the admission

    def duration_for(self, spec: TimeSpec) -> str:
        for d in self.durations:
            if (d.offset, d.span, d.unit, d.ongoing) == (spec.offset, spec.span, spec.unit, spec.ongoing):
                return d.id
        did = f"d{len(self.durations) + 1}"
        self.durations.append(Duration(id=did, offset=spec.offset, span=spec.span, unit=spec.unit,
                                       ongoing=spec.ongoing))
        return did

    def add_family(self, member: str | None, condition: str, evidence: str) -> None:
        cond = normalize_condition(condition)
        mem = member or "relative"
        for i, f in enumerate(self.family):
            have = normalize_condition(f.condition)
            if f.evidence_text != evidence or (f.member != mem and mem != "relative"):
                continue
            if re.search(rf"\b{re.escape(cond)}\b", have):
                return  # "anxiety" inside "generalized anxiety" from the same sentence
            if re.search(rf"\b{re.escape(have)}\b", cond):
                self.family[i] = FamilyHistory(member=f.member, condition=cond, evidence_text=evidence)
                return
        self.family.append(FamilyHistory(member=mem, condition=cond, evidence_text=evidence))


@lru_cache(maxsize=1)
def _therapy_types() -> dict[str, str]:
    return {e.id: e.type for e in lexicon.therapy_lexicon().rules}


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")[:40] or "x"


_HISTORICAL_SECTIONS = {"past_psych", "past_medical"}
_NON_CLINICAL_SECTIONS = {"medications", "allergies", "labs"}
_LAB_AFTER = re.compile(r"^\s*(?:levels?\b|level was\b|concentrations?\b|(?:was |is )?(?:normal|low|high|"
                        r"undetectable|within normal|wnl|elevated|decreased|deficien)|[<>≤≥]?\s*\d+(?:[.,]\d+)?\s*"
                        r"(?:mmol/L|mg/dL|ng/mL|ng/dL|pg/mL|ug/L|µg/L|mcg/L|U/L|IU/L|mIU/L|mEq/L|umol/L|µmol/L|g/L|"
                        r"g/dL|nmol/L|pmol/L|fL)\b)", re.I)


def _present_cue(sentence: str) -> bool:
    return bool(re.search(r"\b(?:has|have|is|are|now|still|continues?|currently|persists?|remains?)\b", sentence,
                          re.I))


def extract(text: str, *, case_id: str = "case") -> CaseGraph:
    """Rules-backend extraction of a case graph from narrative text (not yet temporally normalised).

    >>> g = extract("A 34-year-old woman reports low mood for the past 3 weeks. She denies suicidal ideation.")
    >>> [(s.headword, s.current_symptom) for s in g.symptoms]
    [('depressed mood', True)]
    """
    sents = sentences(text)
    age = extract_age(sents)
    sex = extract_sex(text)
    visit = visit_date(text)
    acc = Accumulator(index_is_admission=bool(re.search(r"\bdischarge summary\b", _title(text), re.I)))
    labs: list[str] = []
    mse: list[str] = []
    other_tests: list[str] = []

    for s in sents:
        times = time_mentions(s.text, age=age, visit=visit)
        if s.section == "mse":
            mse.append(_verbatim(text, s))
        elif s.section == "labs":
            labs.append(_verbatim(text, s))
        elif re.search(r"\b(?:PHQ-9|GAD-7|MMSE|MoCA|HAM-?D|MADRS|YMRS|Y-BOCS|PCL-5|AUDIT|CIWA|COWS|BDI|PANSS|"
                       r"EPDS|lithium level|level (?:of|was))\b[^.]{0,30}\d", s.text, re.I):
            other_tests.append(_verbatim(text, s))
        if s.section == "family_history":
            for member, cond in family_conditions(s.text):
                acc.add_family(member, cond, s.text.strip())
        _symptoms(s, times, acc)
        _diagnoses(s, times, acc)
        _treatments(s, times, acc)
    _present_today(acc)
    derive_relations(text, sents, acc)

    current = {sx.headword for sx in acc.symptoms.values() if sx.current_symptom and sx.headword in acc.flaggable}
    visit_event = extract_visit(text, sents, current)
    tests = TestResults(labs=_field_text(labs), mental_status=_field_text(mse), other=_field_text(other_tests))
    return CaseGraph(
        case_id=case_id,
        demographics=Demographics(age=age, sex=sex, ethnicity=extract_ethnicity(sents),
                                  occupation=extract_occupation(sents),
                                  family_structure=extract_family_structure(sents)),
        test_results=tests,
        family_history=acc.family,
        diagnoses=list(acc.diagnoses.values()),
        symptoms=list(acc.symptoms.values()),
        treatments=list(acc.treatments.values()),
        past_history=list(acc.past.values()),
        visit_event=visit_event,
        durations=acc.durations,
        edges=_dedupe_edges(acc.edges),
    )


def _verbatim(text: str, s: Sentence) -> str:
    """A sentence copied into a test-results field. When the source ran it on after a comma ("intact.,Assets:
    include ..."), its first word is lowered: in the source it reads as a mid-sentence capital, i.e. a name."""
    out = s.text.strip()
    before = text[:s.start].rstrip()
    if before.endswith((",", ":")) and re.match(r"[A-Z][a-z]+\b", out):
        out = out[0].lower() + out[1:]
    return out


def _field_text(parts: list[str]) -> str | None:
    """Sentences joined into one test-results field: list and header artefacts (".,", ":,") removed, and the
    first word in lower case when it is an ordinary capitalised word (the field is quoted inside a sentence:
    "On mental status examination, attitude was cooperative")."""
    # A capitalised word written after a comma ("cooperative.,Appearance") reads as a proper noun; keep it in
    # lower case so the field never carries what looks like a name.
    text = " ".join(re.sub(r"\s+", " ", p).strip() for p in parts if p.strip())
    text = re.sub(r"([,:;]\s*)([A-Z][a-z]+)\b", lambda m: m.group(1) + m.group(2).lower(), text)
    text = re.sub(r"\.\s*,\s*", ". ", text)
    text = re.sub(r":\s*,\s*", ": ", text)
    text = re.sub(r"\s+([,.;:])", r"\1", text).strip(" ,")
    if not text:
        return None
    first = re.match(r"[A-Z][a-z]+\b", text)
    if first and not re.match(r"(?:Mr|Mrs|Ms|Dr|I)\b", text):
        text = text[0].lower() + text[1:]
    return text


def _dedupe_edges(edges: list[Edge]) -> list[Edge]:
    return list({e.key(): e for e in edges}.values())


def _present_today(acc: Accumulator) -> None:
    """A symptom present at the visit whose durations all lie in the past gets a one-day duration on day 0, so
    the temporal engine keeps it current."""
    for sid in acc.present:
        sx = acc.symptoms[sid]
        if not sx.duration_ids:
            continue
        dmap = {d.id: d for d in acc.durations}
        specs = [dmap[i] for i in sx.duration_ids if i in dmap]
        if any(d.ongoing or not _past(TimeSpec(d.offset, d.span, d.unit)) for d in specs):
            continue
        did = acc.duration_for(TimeSpec(0, 1, Unit.day))
        sx.duration_ids = [*sx.duration_ids, did]


_ASIDE = re.compile(r"\([^()]*\)|\"[^\"]*\"|“[^”]*”")


def classify_in_sentence(sentence: str, start: int, end: int) -> ContextResult:
    """ConText classification of ``sentence[start:end]`` with parenthetical remarks and quotations that do not
    contain the concept blanked out, so that a trigger inside an aside ("poor self-esteem ('I've never been good
    at anything'), difficulty making decisions") does not reach across it."""
    def blank(m: re.Match[str]) -> str:
        return m.group(0) if m.start() <= start and end <= m.end() else " " * len(m.group(0))

    return classify(_ASIDE.sub(blank, sentence), start, end)


def _quote_blanked(text: str) -> str:
    """Quotation marks replaced by spaces (offsets kept), so 'Energy is "low"' reads as 'Energy is  low '."""
    return re.sub(r"[\"“”]", " ", text)


#: Numeric phrasings the lexicon cannot express: (pattern, symptom id, headword).
_NUMERIC_SYMPTOMS: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(r"\b(?:gained|has gained|put on|gain of)\s+(?:about\s+|approximately\s+|nearly\s+|almost\s+|over\s+|"
                r"more than\s+|roughly\s+)?\d+(?:\.\d+)?\s*(?:kg|kilograms?|kilos?|lbs?|pounds)\b", re.I),
     "weight_gain", "weight gain"),
    (re.compile(r"\b(?:lost|has lost|loss of)\s+(?:about\s+|approximately\s+|nearly\s+|almost\s+|over\s+|"
                r"more than\s+|roughly\s+)?\d+(?:\.\d+)?\s*(?:kg|kilograms?|kilos?|lbs?|pounds)\b", re.I),
     "weight_loss", "weight loss"),
    # Spending of four figures or more in one go ("spending about $18,000 on power tools").
    (re.compile(r"\bspen(?:t|ding|ds)\s+(?:about\s+|nearly\s+|over\s+|more than\s+|almost\s+)?\$\s?\d{1,3}(?:,\d{3})+",
                re.I), "impulsive_spending", "impulsive spending"),
]


def symptom_mentions(text: str) -> list[lexicon.TermMatch]:
    """Symptom mentions in a sentence: lexicon terms (quotation marks ignored) and the numeric phrasings of
    weight change and large spending, in text order, non-overlapping."""
    out = list(lexicon.find_terms(_quote_blanked(text), "symptom"))
    out = [lexicon.TermMatch(m.start, m.end, m.id, m.headword, text[m.start:m.end]) for m in out]
    for pat, sid, head in _NUMERIC_SYMPTOMS:
        for m in pat.finditer(text):
            if not any(x.start < m.end() and m.start() < x.end for x in out):
                out.append(lexicon.TermMatch(m.start(), m.end(), sid, head, m.group(0)))
    return sorted(out, key=lambda x: x.start)


def _family_member(s: Sentence, start: int, ctx: ContextResult) -> str | None:
    """The relative a concept belongs to: the kin word written before it ("maternal uncle"), else ConText's."""
    near = _member_before(s.text[:start], start)
    if near and (ctx.family_member is None or ctx.family_member in near):
        return near
    return ctx.family_member or near


_VERB_SURFACE = re.compile(r"^(?:has|had|have|is|was|with|feels|felt|gets|got)\s+|^\w+(?:ed|ing)$|^(?:drank|drinks|"
                           r"drink|uses|smokes|cries|cried|hears|sees)$", re.I)


def _condition_words(m: lexicon.TermMatch) -> str:
    """How a relative's symptom is named in family history: as written ("panic attacks"), unless the text uses a
    verb ("drank", "has panic") -- then the headword."""
    surface = re.sub(r"^(?:has|had|have|is|was|with)\s+", "", m.surface, flags=re.I)
    return m.headword if _VERB_SURFACE.search(surface) else surface


_PATIENT_SUBJECT = re.compile(r"\b(?:the patient|patient|pt)\b", re.I)


def _is_family(s: Sentence, start: int, ctx: ContextResult) -> bool:
    """A concept belongs to a relative: ConText says so, or it sits in the family-history section after a
    relative named in the same clause with no mention of the patient in between."""
    if ctx.experiencer == "family":
        return True
    if s.section != "family_history" or ctx.experiencer != "patient":
        return False
    lo, _hi = _clause_bounds(s.text, start)
    last = None
    for m in _MEMBER.finditer(s.text, lo, start):
        last = m
    return last is not None and not _PATIENT_SUBJECT.search(s.text, last.end(), start)


_LAB_SURFACE = re.compile(r"\b(?:BAL|BAC|blood alcohol|breathaly[sz]er|UDS|tox(?:icology)? screen|drug screen|"
                          r"positive for)\b", re.I)


def _only_time_words(sentence: str, ctx: ContextResult, times: Sequence[TimeMention]) -> bool:
    """Is every historical trigger of the sentence part of a parsed temporal expression ("three years ago")?
    Then the expression, not the trigger word, decides whether the mention is past."""
    if not set(ctx.trigger_ids) <= {"hist.bidirectional", "hist.backward"}:
        return False
    hist = [t for t in default_engine().triggers(sentence) if t.rule.category == "historical"]
    return bool(hist) and all(any(tm.start <= t.start and t.end <= tm.end for tm in times) for t in hist)


def _course_of_index_stay(s: Sentence, ctx: ContextResult, acc: Accumulator) -> bool:
    """In a discharge summary day 0 is the admission: what "resolved" during the hospital course was present
    then."""
    return (acc.index_is_admission and s.section in ("plan", "assessment") and set(ctx.trigger_ids) <= {
        "hist.backward"} and bool(re.search(r"\bresolv", s.text, re.I)))


def _symptoms(s: Sentence, times: Sequence[TimeMention], acc: Accumulator) -> None:
    if s.section in _NON_CLINICAL_SECTIONS:
        return
    matches = symptom_mentions(s.text)
    spans = [(m.start, m.end) for m in matches]
    for m in matches:
        if is_instrument_name(s.text, m.start, m.end):
            continue
        ctx = classify_in_sentence(s.text, m.start, m.end)
        if ctx.negated or ctx.hypothetical:
            continue
        if _is_family(s, m.start, ctx):
            acc.add_family(_family_member(s, m.start, ctx), _condition_words(m), s.text.strip())
            continue
        if ctx.experiencer != "patient":
            continue
        tm = governing_time(s.text, (m.start, m.end), times)
        spec = tm.spec if tm is not None else None
        ctx_historical = ctx.historical and not _course_of_index_stay(s, ctx, acc)
        if ctx_historical and tm is not None and _only_time_words(s.text, ctx, times):
            ctx_historical = False  # "years ago", "last year": the parsed expression itself decides below
        historical = ctx_historical or s.section in _HISTORICAL_SECTIONS
        if tm is not None and spec is not None and _past(spec):
            lo, hi = _clause_bounds(s.text, m.start)
            clause = s.text[lo:hi]
            onset = _onset_anchor(s.text, tm) or (_ONSET_CUE.search(clause) and _present_cue(clause))
            if not historical and onset and not _PAST_EVENT_CUE.search(clause):
                # "Memory problems began three years ago": ongoing since then.
                spec = TimeSpec(spec.offset, None, spec.unit, ongoing=True, coarse=spec.coarse)
            else:
                historical = True
        sid = f"sx_{_slug(m.headword)}"
        sx = acc.symptoms.get(sid)
        if sx is None:
            sx = Symptom(id=sid, headword=m.headword, current_symptom=not historical, evidence_text=s.text.strip())
            acc.symptoms[sid] = sx
            acc.mentions[sid] = s.index
        elif not historical:
            sx.current_symptom = True
        if not historical:
            acc.present.add(sid)
            if not _LAB_SURFACE.search(m.surface):
                acc.flaggable.add(m.headword)
        if spec is not None and not (historical and spec.ongoing):
            did = acc.duration_for(spec)
            if did not in sx.duration_ids:
                sx.duration_ids = [*sx.duration_ids, did]
        if s.section in _NARRATIVE_SECTIONS:
            frame = extract_steb(s.text, (m.start, m.end), spans)
            if frame is not None and len(sx.contexts) < 3 and frame not in sx.contexts:
                sx.contexts = [*sx.contexts, frame]


_EPISODE = re.compile(r"\bepisode\b|\bMDE\b", re.I)


def _diagnoses(s: Sentence, times: Sequence[TimeMention], acc: Accumulator) -> None:
    rules = dsm_rules.load_dsm()
    for start, end, rule_id in find_diagnoses(s.text):
        ctx = classify_in_sentence(s.text, start, end)
        if ctx.negated or ctx.hypothetical:
            continue
        rule = rules[rule_id]
        if _is_family(s, start, ctx):
            acc.add_family(_family_member(s, start, ctx), s.text[start:end], s.text.strip())
            continue
        if ctx.experiencer != "patient":
            continue
        spec = mention_time(s.text, (start, end), times)
        past = spec is not None and _past(spec)
        ctx_historical = ctx.historical and not _course_of_index_stay(s, ctx, acc)
        historical = ctx_historical or s.section in _HISTORICAL_SECTIONS or past
        episode = bool(_EPISODE.search(s.text[start:end]))
        if historical and (s.section != "assessment" or episode):
            pid = f"ph_{_slug(rule.id)}"
            if pid not in acc.past and f"dx_{_slug(rule.id)}" not in acc.diagnoses:
                status = HistoryStatus.remitted if re.search(r"\bremission|remitted|resolved\b", s.text, re.I) \
                    else HistoryStatus.pre_existing
                ids = [acc.duration_for(spec)] if spec is not None and not spec.ongoing else []
                acc.past[pid] = PastHistory(id=pid, condition=rule.name, status=status, duration_ids=ids,
                                            evidence_text=s.text.strip())
            continue
        did = f"dx_{_slug(rule.id)}"
        if did not in acc.diagnoses:
            spec_text = re.findall(r"\bwith (?:peripartum onset|psychotic features|anxious distress|mixed features|"
                                   r"seasonal pattern|melancholic features|catatonia)\b", s.text, re.I)
            dx_status: Literal["current", "provisional", "historical"] = (
                "historical" if historical else "provisional" if ctx.uncertain else "current")
            acc.diagnoses[did] = Diagnosis(id=did, label=rule.name, rule_id=rule.id, status=dx_status,
                                           specifiers=[x.lower() for x in spec_text], evidence_text=s.text.strip())
            acc.mentions[did] = s.index
            acc.past.pop(f"ph_{_slug(rule.id)}", None)
        elif not historical and acc.diagnoses[did].status == "historical":
            acc.diagnoses[did].status = "current"


#: Hypothetical triggers that still leave a treatment in the case: a planned step ("referral for", "will start").
_PLANNED = {"hyp.future"}


def _treatment_applies(ctx: ContextResult) -> bool:
    """A treatment the patient has, had or is going to have: not negated, not someone else's, not a mere option
    ("consider", "may benefit from", "if no response") and not a conditional or a warning."""
    if ctx.negated or ctx.uncertain or ctx.experiencer != "patient":
        return False
    if ctx.hypothetical:
        hyp = {t for t in ctx.trigger_ids if t.startswith("hyp.")}
        return bool(hyp) and hyp <= _PLANNED
    return True


def _treatments(s: Sentence, times: Sequence[TimeMention], acc: Accumulator) -> None:
    if s.section in ("labs", "allergies", "family_history"):
        return
    for m in lexicon.find_terms(s.text, "medication"):
        if _LAB_AFTER.match(s.text[m.end:m.end + 30]):
            continue  # a laboratory value ("magnesium 0.58 mmol/L", "vitamin B12 normal"), not a treatment
        ctx = classify_in_sentence(s.text, m.start, m.end)
        if not _treatment_applies(ctx):
            continue
        med = lexicon.parse_medication(s.text, m)
        tid = f"tx_{_slug(med.name)}"
        route = med.route
        acc.med_class.setdefault(tid, med.class_id)
        if tid not in acc.treatments:
            acc.treatments[tid] = Treatment(id=tid, type=TreatmentType.medication, name=med.name, dose=med.dose,
                                            route=route, frequency=med.frequency, evidence_text=s.text.strip())
            acc.mentions[tid] = s.index
        t = acc.treatments[tid]
        if t.dose is None and med.dose is not None:
            t.dose, t.route, t.frequency = med.dose, route or t.route, med.frequency or t.frequency
        spec = mention_time(s.text, (m.start, m.end), times)
        if spec is not None:
            did = acc.duration_for(spec)
            if did not in t.duration_ids:
                t.duration_ids = [*t.duration_ids, did]
    for m in lexicon.find_terms(s.text, "therapy"):
        ctx = classify_in_sentence(s.text, m.start, m.end)
        if not _treatment_applies(ctx):
            continue
        tid = f"tx_{_slug(m.id)}"
        if tid not in acc.treatments:
            ttype = _therapy_types().get(m.id, "psychotherapy")
            acc.treatments[tid] = Treatment(id=tid, type=TreatmentType(ttype), name=m.headword,
                                            route=Route.not_applicable, evidence_text=s.text.strip())
            acc.mentions[tid] = s.index


_CAUSAL = re.compile(r"\b(?:due to|secondary to|induced by|caused by|triggered by|precipitated by|in the context of|"
                     r"after (?:starting|using|smoking|taking|drinking)|following (?:use of|heavy)|withdrawal from)\b",
                     re.I)
_SUBSTANCE_DX = re.compile(r"(?:substance|medication|alcohol|cannabis|stimulant|methamphetamine|cocaine|opioid)"
                           r"[- ]induced|withdrawal|intoxication", re.I)


def derive_relations(text: str, sents: list[Sentence], acc: Accumulator) -> None:
    """Deterministic relations of the collected nodes: MANIFESTS_AS from the DSM symptom sets, TREATMENT_OF from
    medication-class indications and narrative proximity, INDUCES from etiologic cues with verbatim evidence."""
    rules = dsm_rules.load_dsm()
    # MANIFESTS_AS from the per-diagnosis symptom sets.
    for dx in acc.diagnoses.values():
        rule = rules.get(dx.rule_id or "")
        if rule is None:
            continue
        wanted = {h.lower() for h in rule.symptoms}
        for sx in acc.symptoms.values():
            if sx.headword.lower() in wanted:
                acc.edges.append(Edge(type=RelationType.MANIFESTS_AS, source=dx.id, target=sx.id))
    # TREATMENT_OF from medication class indications, nearest diagnosis by narrative position on ties.
    for t in acc.treatments.values():
        if t.type != TreatmentType.medication:
            targets = sorted(acc.diagnoses.values(), key=lambda d: abs(acc.mentions.get(d.id, 0)
                                                                       - acc.mentions.get(t.id, 0)))
            if targets:
                acc.edges.append(Edge(type=RelationType.TREATMENT_OF, source=t.id, target=targets[0].id))
            continue
        cls = acc.med_class.get(t.id)
        if cls is None:
            continue
        chapters, rule_ids = tables.class_indications(cls)
        cands = [d for d in acc.diagnoses.values()
                 if (d.rule_id in rule_ids) or (rules.get(d.rule_id or "") is not None
                                                 and rules[d.rule_id or ""].chapter in chapters)]
        cands.sort(key=lambda d: abs(acc.mentions.get(d.id, 0) - acc.mentions.get(t.id, 0)))
        for d in cands[:1]:
            acc.edges.append(Edge(type=RelationType.TREATMENT_OF, source=t.id, target=d.id))
    # INDUCES: etiologic morphology of substance-induced diagnoses and causal cue phrases with verbatim evidence.
    for s in sents:
        cue = _CAUSAL.search(s.text)
        if not cue:
            continue
        before, after = s.text[:cue.start()], s.text[cue.end():]
        effects = _nodes_in(before, acc) or _nodes_in(s.text, acc, kinds=("dx",))
        causes = _nodes_in(after, acc, kinds=("ph", "tx", "sx", "dx"))
        for cause in causes[:1]:
            for effect in effects[:2]:
                if cause == effect or (cause.startswith("sx_") and effect.startswith("dx_")):
                    continue  # a symptom does not induce a diagnosis (rules/graph/edge_pairs.yaml)
                acc.edges.append(Edge(type=RelationType.INDUCES, source=cause, target=effect,
                                      evidence_text=s.text.strip()))
    for dx in acc.diagnoses.values():
        if not _SUBSTANCE_DX.search(dx.label) or any(e.type == RelationType.INDUCES and e.target == dx.id
                                                    for e in acc.edges):
            continue
        subst = [sx for sx in acc.symptoms.values() if sx.headword.endswith(" use")]
        for sx in subst[:1]:
            # The substance use is the cause: recorded as active history ("methamphetamine use") → diagnosis.
            pid = f"ph_{_slug(sx.headword)}"
            if pid not in acc.past:
                acc.past[pid] = PastHistory(id=pid, condition=sx.headword, status=HistoryStatus.active,
                                            evidence_text=sx.evidence_text)
            acc.edges.append(Edge(type=RelationType.INDUCES, source=pid, target=dx.id,
                                  evidence_text=dx.evidence_text))


def _nodes_in(fragment: str, acc: Accumulator, kinds: tuple[str, ...] = ("dx", "sx")) -> list[str]:
    out: list[str] = []
    low = fragment.lower()
    if "dx" in kinds:
        for _start, _e, rule_id in find_diagnoses(fragment):
            did = f"dx_{_slug(rule_id)}"
            if did in acc.diagnoses and did not in out:
                out.append(did)
    if "sx" in kinds:
        for m in lexicon.find_terms(fragment, "symptom"):
            sid = f"sx_{_slug(m.headword)}"
            if sid in acc.symptoms and sid not in out:
                out.append(sid)
    if "tx" in kinds:
        for m in lexicon.find_terms(fragment, "medication"):
            tid = f"tx_{_slug(m.headword)}"
            if tid in acc.treatments and tid not in out:
                out.append(tid)
    if "ph" in kinds:
        for pid, ph in acc.past.items():
            if ph.condition.lower() in low and pid not in out:
                out.append(pid)
    return out


def mention_counts(graph: CaseGraph) -> Counter[str]:
    """Symptom headwords and how many nodes carry each (episodes of one symptom count separately)."""
    return Counter(s.headword for s in graph.symptoms)
