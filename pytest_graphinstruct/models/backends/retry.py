"""The retry backoff policy and ``Retry-After`` parsing.

Promises:

* :meth:`RetryPolicy.delay` never returns a negative number nor more than
  ``max(max_s, retry_after_cap_s)`` seconds.
* Without ``Retry-After`` the delay is exponential backoff ``base_s * 2**attempt`` capped at
  ``max_s``, with jitter (``full``: uniform in ``[0, cap]``; ``equal``: uniform in
  ``[cap/2, cap]``; ``none``: exactly ``cap``).
* With ``Retry-After`` the delay is ``max(retry_after, backoff)`` capped at
  ``retry_after_cap_s`` — the server's request is honoured, but a server asking for an hour does
  not stall a benchmark for an hour.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import Literal

Jitter = Literal["full", "equal", "none"]

DEFAULT_RETRY_AFTER_CAP_S = 120.0


@dataclass(frozen=True)
class RetryPolicy:
    """How many times to retry and how long to wait before each retry.

    Attributes:
        max_retries: retries after the first attempt (so at most ``max_retries + 1`` calls).
        base_s: the backoff of the first retry before jitter.
        max_s: the cap of the exponential backoff.
        jitter: ``full``, ``equal`` or ``none`` (see the module docstring).
        retry_after_cap_s: the most a ``Retry-After`` header can make us wait.
        rng: the random source of the jitter (inject a seeded one for reproducible tests).
    """

    max_retries: int = 5
    base_s: float = 1.0
    max_s: float = 60.0
    jitter: Jitter = "full"
    retry_after_cap_s: float = DEFAULT_RETRY_AFTER_CAP_S
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if self.base_s < 0 or self.max_s < 0 or self.retry_after_cap_s < 0:
            raise ValueError("backoff times must be >= 0")
        if self.jitter not in ("full", "equal", "none"):
            raise ValueError(f"unknown jitter {self.jitter!r} (full, equal, none)")

    def backoff_cap(self, attempt: int) -> float:
        """The un-jittered backoff before retry number ``attempt`` (0-based), capped."""
        # 2**attempt overflows floats past ~1024; the cap is reached long before.
        exp = min(max(attempt, 0), 64)
        return min(self.max_s, self.base_s * math.pow(2.0, exp))

    def backoff(self, attempt: int) -> float:
        """The jittered exponential backoff before retry number ``attempt`` (0-based)."""
        cap = self.backoff_cap(attempt)
        if self.jitter == "full":
            return self.rng.uniform(0.0, cap)
        if self.jitter == "equal":
            return cap / 2 + self.rng.uniform(0.0, cap / 2)
        return cap

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to sleep before retry number ``attempt`` (0-based).

        ``retry_after`` is the server's ``Retry-After`` in seconds (``None`` when absent).
        """
        wait = self.backoff(attempt)
        if retry_after is not None and math.isfinite(retry_after):
            wait = min(max(retry_after, wait), self.retry_after_cap_s)
        return max(0.0, wait)


def parse_retry_after(header: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait according to a ``Retry-After`` header value.

    Accepts delta-seconds (``"7"``, also a decimal ``"1.5"`` as some providers send) and an
    HTTP-date (``"Wed, 21 Oct 2015 07:28:00 GMT"``; a date in the past gives ``0.0``).
    ``now`` is the current Unix time (default: ``time.time()``).

    Returns:
        The delay in seconds (never negative), or ``None`` when the value is absent or
        unparseable — callers then fall back to plain backoff.
    """
    if header is None:
        return None
    text = header.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        if not math.isfinite(seconds) or seconds < 0:
            return None
        return seconds
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:  # pragma: no cover - older Pythons returned None for junk
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT; a zone-less one is read as UTC
        when = when.replace(tzinfo=UTC)
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)
