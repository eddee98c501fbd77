"""The run's hard cap on money (``--gi-max-cost``): :class:`CostCap`, the money one run may
spend, shared by every model's scheduler, and :class:`RequestCost`, what one model's request
may cost at worst and did cost.

Promises:

* A request is issued only when its worst case fits in what is left: its input tokens, counted
  on the exact messages sent (:meth:`.TokenCounter.count_messages`), plus its ``max_tokens``
  of output, at the model's list price (:class:`~.prices.ModelPrice`).  The worst case is
  reserved before the call and replaced by what the answer cost when it comes back, so
  requests in flight together never take the run over its cap: spent ≤ cap, whatever the
  concurrency.  Once one request is refused the cap is closed: none is issued after it, so
  what a capped run answered is a prefix of its order of requests, not its cheapest ones.
* What an answer cost is its usage (the provider's, or tiktoken's count where the provider
  sent none: :mod:`.usage_accounting`); an answer without usage (an error) costs nothing.
* In batch mode (``--gi-batch``, :class:`BatchPricing`) a request sent in a batch is reserved
  and settled at the model's batch price (``batch_discount`` × list price): the worst case at
  the batch price, the answer at the batch price.  With ``--gi-batch-fallback`` a line a batch
  failed may be sent again as an ordinary request, at list price: its worst case is reserved at
  list price, and an answer the fallback obtained is settled at list price.
* A request refused is never sent: its answer is an error starting with
  :data:`COST_CAP_REACHED` (:func:`is_cost_capped`) and ``calls=0``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.models.base import Request
from pytest_graphinstruct.models.prices import ModelPrice
from pytest_graphinstruct.models.tokens import TokenCounter

COST_CAP_REACHED: Final = "cost cap reached"
"""Prefix of the error of every request not issued because of ``--gi-max-cost``."""


def is_cost_capped(answer: Answer) -> bool:
    """Whether ``answer`` is a request the cost cap did not issue."""
    return answer.error is not None and answer.error.startswith(COST_CAP_REACHED)


class CostCap:
    """Money a run may spend, in ``currency``; thread-safe, shared by several schedulers.

    Args:
        limit: the cap (> 0).
        currency: the price table's currency, said in messages.
    """

    def __init__(self, limit: float, currency: str) -> None:
        if not limit > 0:
            raise ValueError(f"cost cap must be > 0, got {limit!r}")
        self.limit = float(limit)
        self.currency = currency
        self._spent = 0.0
        self._reserved = 0.0
        self._refused = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"CostCap(limit={self.limit}, spent={self.spent})"

    @property
    def spent(self) -> float:
        """What the answers obtained so far cost."""
        with self._lock:
            return self._spent

    @property
    def refused(self) -> int:
        """Requests not issued because they could have exceeded the cap."""
        with self._lock:
            return self._refused

    def reserve(self, worst: float) -> bool:
        """Set ``worst`` aside for one request when spent + set aside + ``worst`` ≤ the cap
        and no request was refused before (``True``); else the request may not be issued
        (``False``, counted)."""
        with self._lock:
            if self._refused or self._spent + self._reserved + worst > self.limit:
                self._refused += 1
                return False
            self._reserved += worst
            return True

    def settle(self, reserved: float, cost: float) -> None:
        """Replace a reservation by what its request cost."""
        with self._lock:
            self._reserved = max(0.0, self._reserved - reserved)
            self._spent += max(0.0, cost)

    def refusal(self, worst: float) -> str:
        """The error of a request whose worst case ``worst`` did not fit."""
        return (f"{COST_CAP_REACHED}: {self.spent:.4f} of {self.limit:g} {self.currency} "
                f"spent, the next request could cost up to {worst:.4f}; not issued")

    def summary(self) -> str | None:
        """One line when requests were refused (``None`` otherwise)."""
        refused = self.refused
        if not refused:
            return None
        return (f"{COST_CAP_REACHED} (--gi-max-cost={self.limit:g} {self.currency}): "
                f"{self.spent:.4f} spent, {refused} request(s) not issued; the run is partial "
                "and what was answered is cached: rerun with a higher cap to ask only for "
                "the rest")


def _never(request: Request) -> bool:
    return False


@dataclass(frozen=True)
class BatchPricing:
    """How a batch run's requests are billed (``--gi-batch``): at the batch price, but for
    those sent as ordinary requests after their batch line failed (``--gi-batch-fallback``).

    Attributes:
        fallback: a request may end as an ordinary request (its worst case is at list price).
        ordinary: whether ``request``'s answer came from an ordinary request (asked once its
            answer is back; the batch backend's record of its fallbacks).
    """

    fallback: bool = False
    ordinary: Callable[[Request], bool] = _never


class RequestCost:
    """One model's side of the cap: its price, its token counter and its ``max_tokens``.

    Args:
        cap: the run's cap, shared by every model.
        price: the model's price.
        counter: counts the input tokens of what is sent (the model's encoding).
        max_tokens: the most output tokens one answer may have (``--gi-max-tokens``).
        batch: batch mode's pricing (``None``: every request at list price).
    """

    def __init__(self, cap: CostCap, price: ModelPrice, counter: TokenCounter,
                 max_tokens: int, *, batch: BatchPricing | None = None) -> None:
        self.cap = cap
        self.price = price
        self.counter = counter
        self.max_tokens = max_tokens
        self.batch = batch

    def worst_case(self, request: Request) -> float:
        """The most ``request`` can cost: its counted input tokens and its ``max_tokens``
        (the request's own when it sets one, else this model's) of output, at list price —
        at the batch price in batch mode without fallback."""
        tokens = self.counter.count_messages((m.role, m.content) for m in request.messages)
        out = request.params.max_tokens or self.max_tokens
        batched = self.batch is not None and not self.batch.fallback
        return self.price.cost(tokens, out, batch=batched)

    def cost_of(self, answer: Answer, request: Request | None = None) -> float:
        """What ``answer`` (of ``request``) cost: its usage at list price, or at the batch
        price in batch mode unless the answer came from an ordinary request (``request``
        unknown in batch mode with fallback: list price, the upper bound); no usage:
        nothing."""
        usage = answer.usage
        if usage is None:
            return 0.0
        batched = self.batch is not None and not (
            self.batch.fallback and (request is None or self.batch.ordinary(request)))
        return self.price.cost(usage.input_tokens or 0, usage.output_tokens or 0,
                               batch=batched)
