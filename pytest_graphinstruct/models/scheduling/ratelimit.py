"""A thread-safe token-bucket rate limiter shared by all worker threads of a scheduler.

Promises: over any window of ``t`` seconds at most ``burst + rate * t`` acquisitions return;
waiters are served in the order they called :meth:`RateLimiter.acquire` (each reserves its slot
under the lock and then sleeps outside it, so no thread spins and none starves).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class RateLimiter:
    """Token bucket: ``rate`` tokens per second, at most ``burst`` stored.

    Args:
        rate: sustained requests per second (> 0).
        burst: how many requests may start back to back after an idle period (>= 1).
        clock: monotonic clock (injectable for tests).
        sleep: sleep function (injectable for tests).
    """

    def __init__(
        self,
        rate: float,
        burst: int = 1,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not rate > 0:
            raise ValueError(f"rate must be > 0 requests/second, got {rate!r}")
        if burst < 1:
            raise ValueError(f"burst must be >= 1, got {burst!r}")
        self.rate = float(rate)
        self.burst = int(burst)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._stamp = clock()

    def __repr__(self) -> str:
        return f"RateLimiter(rate={self.rate}, burst={self.burst})"

    def reserve(self) -> float:
        """Take one token and return how long the caller must wait before using it."""
        with self._lock:
            now = self._clock()
            self._tokens = min(float(self.burst), self._tokens + (now - self._stamp) * self.rate)
            self._stamp = now
            # Going negative is a reservation: later callers queue behind this one.
            self._tokens -= 1.0
            if self._tokens >= 0:
                return 0.0
            return -self._tokens / self.rate

    def acquire(self) -> float:
        """Block until one request may start; returns the seconds waited."""
        wait = self.reserve()
        if wait > 0:
            self._sleep(wait)
        return wait
