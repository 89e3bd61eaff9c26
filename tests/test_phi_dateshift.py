"""Patient-keyed date shifting: formats kept, intervals preserved, offsets in range and never zero."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.phi import dateshift as ds

KEY = b"0123456789abcdef-test-key"


@pytest.mark.parametrize(
    ("value", "offset", "expected"),
    [
        ("3/12/2019", -45, "1/26/2019"),
        ("03/12/2019", -45, "01/26/2019"),
        ("03-02-19", -45, "01-16-19"),
        ("2019-03-12", -45, "2019-01-26"),
        ("2019/3/1", -45, "2019/1/15"),
        ("March 12, 2019", -45, "January 26, 2019"),
        ("Mar. 12th 2019", -45, "Jan. 26th 2019"),
        ("12 March 2019", -45, "26 January 2019"),
        ("1st of May 2020", -45, "17th of March 2020"),
        ("MARCH 12, 2019", -45, "JANUARY 26, 2019"),
        ("Sept. 3, 2020", -1, "Sept. 2, 2020"),
        ("Jan 5", -45, "Nov 21"),
        ("3/12", -45, "1/27"),  # no year: computed in a leap reference year
        ("25/12/2019", -1, "24/12/2019"),  # day-first only when the first number cannot be a month
        ("2020-01-01", -1, "2019-12-31"),
        ("2019-03-12", -35, "2019-02-05"),  # zero padding kept
        ("12/15/2019", -10, "12/05/2019"),
    ],
)
def test_shift_keeps_format(value: str, offset: int, expected: str) -> None:
    assert ds.shift_date_text(value, offset) == expected


@pytest.mark.parametrize(
    ("value", "offset", "expected"),
    [
        ("March 2019", -45, "February 2019"),
        ("March 2019", -300, "May 2018"),
        ("03/2019", -30, "02/2019"),
        ("2019-03", -365, "2018-03"),
        ("2019", -300, "2018"),
        ("2019", -30, "2018"),  # at least one unit in the offset's direction
        ("March 2019", -10, "February 2019"),
    ],
)
def test_partial_dates_shift_at_their_granularity(value: str, offset: int, expected: str) -> None:
    assert ds.shift_date_text(value, offset) == expected


@pytest.mark.parametrize("value", ["13/13/2019", "2019-02-30", "hello", "", "3/4/5/6", "Marchh 3"])
def test_non_dates_are_not_parsed(value: str) -> None:
    assert ds.shift_date_text(value, -40) is None


def test_find_dates_in_running_text() -> None:
    text = "Seen 3/12/2019 and March 5th, 2021; labs 2019-04-01; next visit April 2020, v1.2.3."
    found = [text[a:b] for a, b in ds.find_dates(text)]
    assert found == ["3/12/2019", "March 5th, 2021", "2019-04-01", "April 2020"]


def test_offset_is_in_range_never_zero_and_deterministic() -> None:
    offsets = {ds.patient_offset(KEY, f"p{i}") for i in range(300)}
    assert all(-365 <= o <= -30 for o in offsets)
    assert len(offsets) > 100
    assert ds.patient_offset(KEY, "p1") == ds.patient_offset(KEY, "p1")
    assert all(ds.patient_offset(KEY, f"q{i}", -3, 3) != 0 for i in range(200))


@pytest.mark.parametrize(("low", "high"), [(5, 1), (0, 0)])
def test_bad_range_is_rejected(low: int, high: int) -> None:
    with pytest.raises(ValueError):
        ds.patient_offset(KEY, "p", low, high)


_FORMATS = [
    lambda d: f"{d.month}/{d.day}/{d.year}",
    lambda d: d.strftime("%m/%d/%Y"),
    lambda d: d.isoformat(),
    lambda d: f"{d.strftime('%B')} {d.day}, {d.year}",
    lambda d: f"{d.day} {d.strftime('%b')} {d.year}",
    lambda d: d.strftime("%m-%d-%y"),
]


def _parse_back(value: str) -> dt.date:
    p = ds.parse_date(value)
    assert p is not None and p.year is not None and p.month is not None and p.day is not None
    return dt.date(p.year, p.month, p.day)


@given(
    a=st.dates(dt.date(1971, 1, 1), dt.date(2060, 12, 31)),
    b=st.dates(dt.date(1971, 1, 1), dt.date(2060, 12, 31)),
    fa=st.integers(0, len(_FORMATS) - 1),
    fb=st.integers(0, len(_FORMATS) - 1),
    patient=st.text(min_size=1, max_size=12),
)
@example(a=dt.date(2000, 2, 29), b=dt.date(2001, 3, 1), fa=0, fb=3, patient="p")
def test_date_shift_preserves_intervals(a: dt.date, b: dt.date, fa: int, fb: int, patient: str) -> None:
    offset = ds.patient_offset(KEY, patient)
    sa = ds.shift_date_text(_FORMATS[fa](a), offset)
    sb = ds.shift_date_text(_FORMATS[fb](b), offset)
    assert sa is not None and sb is not None
    da, db = _parse_back(sa), _parse_back(sb)
    assert (db - da) == (b - a)
    assert (da - a).days == offset


def test_date_to_year() -> None:
    assert ds.date_to_year("March 12, 2019") == "2019"
    assert ds.date_to_year("3/12") is None
