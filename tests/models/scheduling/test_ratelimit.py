"""The token-bucket rate limiter."""

from __future__ import annotations

import threading
import time

import pytest

from pytest_graphinstruct.models.scheduling.ratelimit import RateLimiter


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s


def test_burst_then_steady_rate_on_a_fake_clock() -> None:
    clock = FakeClock()
    lim = RateLimiter(10.0, burst=3, clock=clock, sleep=clock.sleep)
    waits = [lim.acquire() for _ in range(7)]
    assert waits[:3] == [0.0, 0.0, 0.0]
    assert all(w == pytest.approx(0.1) for w in waits[3:])
    assert clock.now == pytest.approx(0.4)
    clock.now += 10  # idle refills the bucket, but only up to the burst
    assert [lim.acquire() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert lim.acquire() == pytest.approx(0.1)


def test_reservations_queue_up_without_sleeping_inside_the_lock() -> None:
    clock = FakeClock()
    lim = RateLimiter(4.0, burst=1, clock=clock, sleep=clock.sleep)
    # Four callers arriving at the same instant get increasing waits: 0, .25, .5, .75.
    assert [lim.reserve() for _ in range(4)] == pytest.approx([0.0, 0.25, 0.5, 0.75])


def test_shared_by_threads_bounds_the_real_rate() -> None:
    lim = RateLimiter(50.0, burst=1)
    stamps: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(5):
            lim.acquire()
            with lock:
                stamps.append(time.monotonic())

    threads = [threading.Thread(target=worker) for _ in range(4)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(stamps) == 20
    # 20 acquisitions at 50/s with burst 1 need at least 19/50 s.
    assert time.monotonic() - t0 >= 19 / 50 - 0.02


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError):
        RateLimiter(0)
    with pytest.raises(ValueError):
        RateLimiter(1.0, burst=0)
