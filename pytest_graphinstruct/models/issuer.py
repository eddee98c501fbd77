"""How a scheduler obtains the answer of a request one of its workers took up: from the cache
(looked up again, since a peer may have obtained it meanwhile), from a peer asking for the same
key (the cache's claims), or from the backend — paced, within the token budget, and cached as
soon as it arrives."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.models.base import Backend, Request
from pytest_graphinstruct.models.cache_view import CacheView
from pytest_graphinstruct.models.cost_cap import CallCharge
from pytest_graphinstruct.models.issue_gate import IssueGate
from pytest_graphinstruct.models.ratelimit import RateLimiter
from pytest_graphinstruct.models.request_stats import RequestStats
from pytest_graphinstruct.models.snapshot import Snapshot

if TYPE_CHECKING:  # the budget is the scheduler's public type; its module imports this one
    from pytest_graphinstruct.models.cost_cap import RequestCost
    from pytest_graphinstruct.models.scheduler import TokenBudget


class RequestIssuer:
    """Obtains one request's answer for a scheduler (see the promises of :mod:`.scheduler`).

    Args:
        backend: where answers come from.
        endpoint: the backend's endpoint, recorded with each answer cached.
        view: the scheduler's view of the cache.
        gate: whether a request may be issued.
        stats: the scheduler's counters.
        limiter: paces the requests issued (``None``: unlimited).
        budget: the token budget (``None``: none).
        share_in_flight: take the cache's per-key claims.
        claim_wait_s: the longest wait for another process's request in flight.
        cost: the model's side of the run's cost cap (``None``: no cap).
    """

    def __init__(self, backend: Backend, endpoint: str, *, view: CacheView, gate: IssueGate,
                 stats: RequestStats, limiter: RateLimiter | None, budget: TokenBudget | None,
                 share_in_flight: bool, claim_wait_s: float,
                 cost: RequestCost | None = None) -> None:
        self.backend = backend
        self.endpoint = endpoint
        self._view = view
        self._gate = gate
        self._stats = stats
        self.limiter = limiter
        self.budget = budget
        self.share_in_flight = share_in_flight
        self.claim_wait_s = claim_wait_s
        self.cost = cost

    def obtain(self, key: str, request: Request) -> Answer:
        """The answer of ``request`` (cache key ``key``): cached, a peer's, or issued."""
        cache = self._view.cache
        if cache is None:
            return self.issue(key, request)
        cached = self._view.hit(key)  # another process may have obtained it meanwhile
        if cached is not None:
            return cached
        if not self.share_in_flight:
            return self.issue(key, request)
        claim = cache.claim(key, wait_s=self.claim_wait_s, stop=self._gate.halt,
                            accept=self._view.usable)
        try:
            shared = self._view.peer_answer(key, claim)
            if shared is not None:
                return shared
            if claim.waited and claim.cancelled and self._gate.cancelled.is_set():
                return self._view.publish(key, Answer(
                    error="cancelled: the run was interrupted while another process was asking "
                          "for the same answer", calls=0), "cancelled")
            # otherwise this process asks itself (issue refuses when the circuit opened or
            # it was stopped)
            if not claim.waited:  # an owner may have stored it and let go since the check above
                entry = cache.lookup(key, self._view.usable)
                if entry is not None and self._view.usable(entry):
                    cached = self._view.hit(key, entry)
                    if cached is not None:
                        return cached
            return self.issue(key, request)
        finally:
            claim.release()

    def issue(self, key: str, request: Request) -> Answer:
        """Send ``request`` (unless the circuit is open, the budget spent or its worst case
        does not fit in the cost cap) and store the answer."""
        refused = self._gate.refusal(key)
        if refused is not None:
            return refused
        if self.limiter is not None and not self._budget_exhausted():
            self.limiter.acquire()
        refused = self._gate.refusal(key)  # the circuit may have opened during the pacing wait
        if refused is not None:
            return refused
        if self.budget is not None and self._budget_exhausted():
            self._stats.add("budget_skipped")
            return self._view.publish(key, Answer(error=self.budget.refusal(), calls=0,
                                                      failure_kind="budget"),
                                      "budget")
        charge = None
        if self.cost is not None:
            charge = CallCharge(self.cost, request)
            if not charge.open():
                self._stats.add("cost_skipped")
                return self._view.publish(key, Answer(error=self.cost.cap.refusal(charge.worst),
                                                      calls=0, failure_kind="cost_cap"),
                                          "cost cap")
        answer, served = self._call(request, charge)
        if not self._gate.attempt_feed:
            self._gate.feed_request(answer)
        reason = self._gate.circuit_open_reason
        if reason is not None and answer.failure_kind == "cancelled":
            # a call the opening circuit stopped (a backend whose cancel() takes no kind):
            # the one summary line, not an interruption message
            answer = replace(answer, error=reason, failure_kind="circuit_open")
        ordinary = getattr(self.backend, "sent_ordinary", None)  # a batch backend's record
        spent = self._stats.account(
            answer, batched=callable(ordinary) and answer.ok and not ordinary(request))
        if self.budget is not None and spent:
            self.budget.spend(spent)
        self._store(key, request, answer, served)
        return answer

    def _call(self, request: Request,
              charge: CallCharge | None) -> tuple[Answer, Snapshot | None]:
        """The backend's answer to ``request`` (and the snapshot that served it, when the
        backend says); the cost cap's ``charge`` is lent to a backend that retries (each retry
        reserved, each attempt abandoned unread kept at its worst case) and closed however the
        call ends."""
        answer: Answer | None = None
        try:
            with self._stats.in_flight():
                complete_served = getattr(self.backend, "complete_served", None)
                if callable(complete_served):
                    if charge is not None and getattr(self.backend, "takes_guard", False):
                        answer, served = complete_served(request, guard=charge)
                    else:
                        answer, served = complete_served(request)
                    return answer, served
                answer = self.backend.complete(request)
                return answer, None
        finally:
            if charge is not None:
                charge.close(answer)

    def _store(self, key: str, request: Request, answer: Answer,
               served: Snapshot | None) -> None:
        """Cache an obtained answer; tell peers of one that is not cached."""
        cache = self._view.cache
        if cache is not None and answer.ok and not answer.truncated:
            if cache.store(key, request, answer, endpoint=self.endpoint,
                           served=served) == "failed":
                self._stats.add("cache_write_errors")
                self._view.publish(key, answer, "not cacheable: write failed")
        elif cache is not None:  # peers waiting for this answer must not wait in vain
            self._view.publish(key, answer, "truncated" if answer.ok else "error")

    def _budget_exhausted(self) -> bool:
        return self.budget is not None and self.budget.exhausted
