"""RetryPolicy delays and Retry-After parsing."""

from __future__ import annotations

import random
import time
from email.utils import formatdate

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.models.backends.retry import RetryPolicy, parse_retry_after


def test_no_jitter_is_exact_exponential_and_capped() -> None:
    p = RetryPolicy(base_s=1.0, max_s=10.0, jitter="none")
    assert [p.delay(a) for a in range(6)] == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    assert p.delay(10_000) == 10.0  # no float overflow


def test_full_and_equal_jitter_bounds() -> None:
    full = RetryPolicy(base_s=1.0, max_s=60.0, jitter="full", rng=random.Random(1))
    equal = RetryPolicy(base_s=1.0, max_s=60.0, jitter="equal", rng=random.Random(1))
    for attempt in range(8):
        cap = min(60.0, 2.0 ** attempt)
        for _ in range(50):
            assert 0.0 <= full.delay(attempt) <= cap
            assert cap / 2 <= equal.delay(attempt) <= cap
    spread = {round(full.delay(3), 6) for _ in range(20)}
    assert len(spread) > 1  # it is jittered


def test_retry_after_wins_over_a_smaller_backoff_and_is_capped() -> None:
    p = RetryPolicy(base_s=1.0, max_s=60.0, jitter="none", retry_after_cap_s=120.0)
    assert p.delay(0, retry_after=5.0) == 5.0
    assert p.delay(5, retry_after=5.0) == 32.0  # backoff is larger
    assert p.delay(0, retry_after=3600.0) == 120.0
    assert p.delay(0, retry_after=0.0) == 1.0


@given(attempt=st.integers(0, 200), ra=st.none() | st.floats(0, 1e9))
def test_delay_is_bounded(attempt: int, ra: float | None) -> None:
    p = RetryPolicy(base_s=0.5, max_s=30.0, retry_after_cap_s=120.0)
    assert 0.0 <= p.delay(attempt, ra) <= 120.0


def test_invalid_policy() -> None:
    with pytest.raises(ValueError):
        RetryPolicy(max_retries=-1)
    with pytest.raises(ValueError):
        RetryPolicy(jitter="sometimes")  # type: ignore[arg-type]


@pytest.mark.parametrize(("header", "expected"), [
    ("7", 7.0), (" 0 ", 0.0), ("1.5", 1.5), (None, None), ("", None), ("soon", None),
    ("-3", None), ("nan", None), ("inf", None),
])
def test_parse_retry_after_seconds(header: str | None, expected: float | None) -> None:
    assert parse_retry_after(header) == expected


def test_parse_retry_after_http_date() -> None:
    now = 1_700_000_000.0
    assert parse_retry_after(formatdate(now + 42, usegmt=True), now=now) == pytest.approx(42.0)
    assert parse_retry_after(formatdate(now - 42, usegmt=True), now=now) == 0.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0
    future = parse_retry_after(formatdate(time.time() + 100, usegmt=True))
    assert future is not None and 95 <= future <= 101
    assert parse_retry_after("Wed, 99 Foo 2015 07:28:00 GMT") is None
