"""Patient-keyed date shifting that keeps each date's written format.

Every date of one patient moves by the same number of days, ``offset = HMAC(key, patient_id)`` mapped into a
configured range (default −365..−30, never 0), so intervals between that patient's dates are preserved
exactly.

Recognised forms (the shifted date is written back in the same form: separators, zero padding, two- or
four-digit years, full or abbreviated month names with or without a period, ordinal suffixes, commas, letter
case):

* numeric US ``3/12/2019``, ``03-12-19``, month/day ``3/12``; day-first is used only when the first number
  cannot be a month (``25/12/2019``);
* ISO ``2019-03-12``, ``2019/03/12``; ISO month ``2019-03``;
* written ``March 12, 2019``, ``Mar. 12th 2019``, ``12 March 2019``, ``March 12``;
* partial ``March 2019``, ``03/2019`` (month granularity) and a bare year ``2019`` (year granularity).

Partial dates shift at their granularity: a month-only date moves by ``round(offset / 30.44)`` months and a
year-only date by ``round(offset / 365.25)`` years, each at least one unit in the offset's direction, so a
patient's partial dates keep their intervals too.
"""

from __future__ import annotations

import calendar
import datetime as dt
import hashlib
import hmac
import re
from dataclasses import dataclass, replace
from typing import Literal

Granularity = Literal["day", "month", "year"]

DEFAULT_RANGE: tuple[int, int] = (-365, -30)
# Year used for dates written without one; a leap year so that "2/29" stays valid.
_REFERENCE_YEAR = 2000

_MONTHS_FULL = [calendar.month_name[i] for i in range(1, 13)]
_MONTHS_ABBR = [calendar.month_abbr[i] for i in range(1, 13)]
_MONTH_LOOKUP: dict[str, int] = {}
for _i in range(12):
    _MONTH_LOOKUP[_MONTHS_FULL[_i].lower()] = _i + 1
    _MONTH_LOOKUP[_MONTHS_ABBR[_i].lower()] = _i + 1
_MONTH_LOOKUP["sept"] = 9

_MONTH_RE = (
    r"(?P<mon>(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)(?P<dot>\.)?)"
)
_ORD = r"(?P<ord>st|nd|rd|th)?"

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(r"(?P<y>\d{4})(?P<sep>[-/.])(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})", re.I)),
    ("iso_month", re.compile(r"(?P<y>\d{4})-(?P<m>\d{1,2})", re.I)),
    ("mdy", re.compile(r"(?P<a>\d{1,2})(?P<sep>[-/.])(?P<b>\d{1,2})(?P=sep)(?P<y>\d{4}|\d{2})", re.I)),
    ("my", re.compile(r"(?P<m>\d{1,2})(?P<sep>[/-])(?P<y>\d{4})", re.I)),
    ("md", re.compile(r"(?P<a>\d{1,2})/(?P<b>\d{1,2})", re.I)),
    (
        "written_mdy",
        re.compile(
            _MONTH_RE + r"(?P<sp1>\s+)(?P<d>\d{1,2})" + _ORD + r"(?P<comma>,?)(?P<sp2>\s+)(?P<y>\d{4})", re.I
        ),
    ),
    (
        "written_dmy",
        re.compile(
            r"(?P<d>\d{1,2})"
            + _ORD
            + r"(?P<of>\s+of)?(?P<sp1>\s+)"
            + _MONTH_RE
            + r"(?P<comma>,?)(?P<sp2>\s+)(?P<y>\d{4})",
            re.I,
        ),
    ),
    ("written_my", re.compile(_MONTH_RE + r"(?P<comma>,?)(?P<sp1>\s+)(?P<y>\d{4})", re.I)),
    ("written_md", re.compile(_MONTH_RE + r"(?P<sp1>\s+)(?P<d>\d{1,2})" + _ORD, re.I)),
    ("written_dm", re.compile(r"(?P<d>\d{1,2})" + _ORD + r"(?P<of>\s+of)?(?P<sp1>\s+)" + _MONTH_RE, re.I)),
    ("year", re.compile(r"(?P<y>\d{4})", re.I)),
]

# Used to find dates inside running text (longest forms first; word boundaries on both sides).
_FIND_RE = re.compile(
    r"(?<![\w/.-])(?:"
    + "|".join(
        "(?:" + re.sub(r"\(\?P<\w+>", "(?:", re.sub(r"\(\?P=sep\)", r"[-/.]", p.pattern)) + ")"
        for name, p in _PATTERNS
        if name != "year"
    )
    + r")(?![\w/]|[-.]\d)",
    re.I,
)


@dataclass(frozen=True)
class ParsedDate:
    """One written date: its value, granularity and everything needed to write another value the same way."""

    form: str
    granularity: Granularity
    year: int | None
    month: int | None
    day: int | None
    groups: tuple[tuple[str, str], ...]

    def group(self, name: str) -> str:
        """The original text of a named part ('' when absent)."""
        for key, value in self.groups:
            if key == name:
                return value
        return ""


def _two_digit_year(yy: int) -> int:
    return 2000 + yy if yy < 70 else 1900 + yy


def _valid(year: int, month: int, day: int) -> bool:
    if not 1 <= month <= 12:
        return False
    return 1 <= day <= calendar.monthrange(year, month)[1]


def parse_date(value: str) -> ParsedDate | None:
    """Parse one whole date string; None when it is not a recognised date form."""
    s = value.strip()
    for form, pattern in _PATTERNS:
        m = pattern.fullmatch(s)
        if m is None:
            continue
        g = {k: v for k, v in m.groupdict().items() if v is not None}
        groups = tuple(sorted(g.items()))
        year: int | None
        if form in ("iso", "iso_month"):
            year, month = int(g["y"]), int(g["m"])
            if form == "iso_month":
                if 1 <= month <= 12:
                    return ParsedDate(form, "month", year, month, None, groups)
                continue
            day = int(g["d"])
            if _valid(year, month, day):
                return ParsedDate(form, "day", year, month, day, groups)
            continue
        if form in ("mdy", "md"):
            a, b = int(g["a"]), int(g["b"])
            ytxt = g.get("y", "")
            year = (int(ytxt) if len(ytxt) == 4 else _two_digit_year(int(ytxt))) if ytxt else None
            ref = year if year is not None else _REFERENCE_YEAR
            if _valid(ref, a, b):
                return ParsedDate(form, "day", year, a, b, groups)
            if _valid(ref, b, a):
                return ParsedDate(form + "_dayfirst", "day", year, b, a, groups)
            continue
        if form == "my":
            month, year = int(g["m"]), int(g["y"])
            if 1 <= month <= 12:
                return ParsedDate(form, "month", year, month, None, groups)
            continue
        if form == "year":
            year = int(g["y"])
            if 1800 <= year <= 2199:
                return ParsedDate(form, "year", year, None, None, groups)
            continue
        found_month = _MONTH_LOOKUP.get(g["mon"].rstrip(".").lower())
        if found_month is None:
            continue
        month = found_month
        wyear = int(g["y"]) if "y" in g else None
        if "d" in g:
            day = int(g["d"])
            if _valid(wyear if wyear is not None else _REFERENCE_YEAR, month, day):
                return ParsedDate(form, "day", wyear, month, day, groups)
            continue
        return ParsedDate(form, "month", wyear, month, None, groups)
    return None


def find_dates(text: str) -> list[tuple[int, int]]:
    """Character ranges of recognised dates inside running text (bare years excluded)."""
    out: list[tuple[int, int]] = []
    for m in _FIND_RE.finditer(text):
        if parse_date(m.group(0)) is not None:
            out.append((m.start(), m.end()))
    return out


def _case_like(template: str, word: str) -> str:
    letters = template.rstrip(".")
    if letters.isupper() and len(letters) > 1:
        return word.upper()
    if letters.islower():
        return word.lower()
    return word


def _padded(p: ParsedDate) -> bool:
    """Zero-padded style: no numeric month/day part of the original is written with a single digit."""
    parts = [p.group(k) for k in ("m", "d", "a", "b") if p.group(k)]
    return bool(parts) and all(len(x) == 2 for x in parts)


def _pad_like(p: ParsedDate, number: int) -> str:
    return f"{number:02d}" if _padded(p) else str(number)


def _ordinal(day: int) -> str:
    if 11 <= day % 100 <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _month_word(p: ParsedDate, month: int) -> str:
    mon = p.group("mon")
    dot = p.group("dot")
    bare = mon[: len(mon) - len(dot)]
    low = bare.lower()
    abbreviated = (len(low) == 3 and low != "may") or low == "sept" or (low == "may" and bool(dot))
    if abbreviated:
        word = "Sept" if low == "sept" and month == 9 else _MONTHS_ABBR[month - 1]
    else:
        word = _MONTHS_FULL[month - 1]
    return _case_like(bare, word) + dot


def format_like(p: ParsedDate, year: int | None, month: int | None, day: int | None) -> str:
    """Write a date value in the same written form as ``p``."""
    f = p.form
    if f == "iso":
        assert year is not None and month is not None and day is not None
        sep = p.group("sep")
        return f"{year:04d}{sep}{_pad_like(p, month)}{sep}{_pad_like(p, day)}"
    if f == "iso_month":
        assert year is not None and month is not None
        return f"{year:04d}-{_pad_like(p, month)}"
    if f.startswith(("mdy", "md")):
        assert month is not None and day is not None
        dayfirst = f.endswith("_dayfirst")
        first, second = (day, month) if dayfirst else (month, day)
        sep = p.group("sep") or "/"
        s = f"{_pad_like(p, first)}{sep}{_pad_like(p, second)}"
        ytxt = p.group("y")
        if ytxt and year is not None:
            s += sep + (f"{year % 100:02d}" if len(ytxt) == 2 else f"{year:04d}")
        return s
    if f == "my":
        assert month is not None and year is not None
        return f"{_pad_like(p, month)}{p.group('sep')}{year:04d}"
    if f == "year":
        assert year is not None
        return f"{year:04d}"
    assert month is not None
    mon = _month_word(p, month)
    ordinal = ""
    if p.group("ord") and day is not None:
        ordinal = _case_like(p.group("ord"), _ordinal(day))
    if f == "written_mdy":
        return f"{mon}{p.group('sp1')}{day}{ordinal}{p.group('comma')}{p.group('sp2')}{year}"
    if f == "written_dmy":
        return f"{day}{ordinal}{p.group('of')}{p.group('sp1')}{mon}{p.group('comma')}{p.group('sp2')}{year}"
    if f == "written_my":
        return f"{mon}{p.group('comma')}{p.group('sp1')}{year}"
    if f == "written_md":
        return f"{mon}{p.group('sp1')}{day}{ordinal}"
    if f == "written_dm":
        return f"{day}{ordinal}{p.group('of')}{p.group('sp1')}{mon}"
    raise ValueError(f"unknown date form {f}")


def _units(offset_days: int, unit_days: float) -> int:
    n = round(offset_days / unit_days)
    if n == 0 and offset_days != 0:
        n = 1 if offset_days > 0 else -1
    return n


def shift_parsed(p: ParsedDate, offset_days: int) -> ParsedDate:
    """Shift a parsed date by ``offset_days`` at its own granularity."""
    if p.granularity == "day":
        assert p.month is not None and p.day is not None
        base = dt.date(p.year if p.year is not None else _REFERENCE_YEAR, p.month, p.day)
        new = base + dt.timedelta(days=offset_days)
        return replace(p, year=new.year if p.year is not None else None, month=new.month, day=new.day)
    if p.granularity == "month":
        assert p.month is not None
        months = _units(offset_days, 30.436875)
        index = (p.year if p.year is not None else _REFERENCE_YEAR) * 12 + (p.month - 1) + months
        return replace(p, year=index // 12 if p.year is not None else None, month=index % 12 + 1)
    assert p.year is not None
    return replace(p, year=p.year + _units(offset_days, 365.25))


def shift_date_text(value: str, offset_days: int) -> str | None:
    """Shift one date string, written back in its own format; None when ``value`` is not a recognised date."""
    p = parse_date(value)
    if p is None:
        return None
    lead = value[: len(value) - len(value.lstrip())]
    trail = value[len(value.rstrip()) :]
    q = shift_parsed(p, offset_days)
    return lead + format_like(p, q.year, q.month, q.day) + trail


def validate_range(low: int, high: int) -> None:
    """Check a shift range: ordered and not only zero."""
    if low > high:
        raise ValueError("date shift range must be low <= high")
    if low == high == 0:
        raise ValueError("date shift range must contain a non-zero offset")


def patient_offset(
    key: bytes, patient_id: str, low: int = DEFAULT_RANGE[0], high: int = DEFAULT_RANGE[1]
) -> int:
    """The patient's day offset: HMAC-SHA256(key, patient_id) mapped into ``[low, high]`` with 0 excluded."""
    validate_range(low, high)
    values = [v for v in range(low, high + 1) if v != 0]
    digest = hmac.new(key, b"dateshift\x1f" + patient_id.encode("utf-8"), hashlib.sha256).digest()
    return values[int.from_bytes(digest[:8], "big") % len(values)]


def date_to_year(value: str) -> str | None:
    """Generalise a date to its year (None when no year is written)."""
    p = parse_date(value)
    if p is None or p.year is None:
        return None
    return f"{p.year:04d}"
