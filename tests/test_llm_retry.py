"""Pure helpers of the client: Retry-After parsing, jittered backoff, fence stripping, reply checking."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

from hypothesis import example, given
from hypothesis import strategies as st

from anonpsy.llm.client import backoff_delay, check_reply, parse_retry_after, strip_fences

NOW = datetime(2030, 1, 1, 12, 0, 0, tzinfo=UTC)


def test_retry_after_seconds_date_and_ms() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "150", "retry-after": "9"}) == 0.15
    date = format_datetime(NOW + timedelta(seconds=7), usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=NOW) == 7.0
    past = format_datetime(NOW - timedelta(seconds=30), usegmt=True)
    assert parse_retry_after({"retry-after": past}, now=NOW) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


@given(
    retry=st.integers(min_value=1, max_value=30),
    seed=st.integers(),
    base=st.floats(0, 5),
    cap=st.floats(0, 10),
)
@example(retry=30, seed=0, base=5.0, cap=8.0)
def test_backoff_stays_within_cap(retry: int, seed: int, base: float, cap: float) -> None:
    delay = backoff_delay(retry, base=base, cap=cap, rng=random.Random(seed))
    assert 0.0 <= delay <= min(cap, base * 2 ** (retry - 1))


def test_strip_fences() -> None:
    assert strip_fences('```json\n{"a": 1}\n```') == '{"a": 1}'
    assert strip_fences("  ```\n[1]\n```  ") == "[1]"
    assert strip_fences('{"a": "```"}') == '{"a": "```"}'


def test_check_reply_orders_schema_then_model() -> None:
    schema = {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer", "minimum": 0}}}
    assert check_reply('{"n": 2}', schema, None) == ({"n": 2}, [])
    _, problems = check_reply('{"n": -1}', schema, None)
    assert [p.safe for p in problems] == ["/n: violates minimum 0"]
    assert problems[0].detail == "/n: -1 is less than the minimum of 0"
    _, problems = check_reply("[1, 2", None, None)
    assert problems[0].safe.startswith("/: not valid JSON (line 1")
