"""How a scheduler obtains the answer of a request one of its workers took up: from the cache
(looked up again, since another run may have obtained it meanwhile) or from the backend —
paced, within the token budget and the cost cap, and cached as soon as it arrives.

With a cache, a request is asked only under its claim (:mod:`~.caching.claims`): a request
another process on the same cache folder is asking now waits for that claim, then takes the
answer the other run cached instead of asking again (``claim_waits``, ``claim_awaited``); an
answer the other run did not obtain (an error, a refusal, a crash) is asked here, under the
claim (``claim_reasked``).  The batch mode's requests (:meth:`RequestIssuer.issue_later`) take
no claim: a batch run has its cache folder alone (:mod:`~.caching.lease`)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.models.base import AttemptOutcome, Backend, Request, one_line
from pytest_graphinstruct.models.caching.claims import ClaimBoard
from pytest_graphinstruct.models.caching.snapshot import Snapshot
from pytest_graphinstruct.models.caching.view import CacheView
from pytest_graphinstruct.models.cost.cap import CallCharge
from pytest_graphinstruct.models.scheduling.issue_gate import IssueGate
from pytest_graphinstruct.models.scheduling.ratelimit import RateLimiter
from pytest_graphinstruct.models.scheduling.request_stats import RequestStats

if TYPE_CHECKING:  # the budget is the scheduler's public type; its module imports this one
    from pytest_graphinstruct.models.cost.cap import RequestCost
    from pytest_graphinstruct.models.scheduling.scheduler import TokenBudget


@dataclass(frozen=True)
class _Begun:
    """What an issued request's call holds until its answer: its cost charge (``None``: no
    cap)."""

    charge: CallCharge | None


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
        cost: the model's side of the run's cost cap (``None``: no cap).
        claims: the cache folder's claims (``None``: none, as without a cache).
    """

    def __init__(self, backend: Backend, endpoint: str, *, view: CacheView, gate: IssueGate,
                 stats: RequestStats, limiter: RateLimiter | None, budget: TokenBudget | None,
                 cost: RequestCost | None = None, claims: ClaimBoard | None = None) -> None:
        self.backend = backend
        self.endpoint = endpoint
        self._view = view
        self._gate = gate
        self._stats = stats
        self.limiter = limiter
        self.budget = budget
        self.cost = cost
        self.claims = claims

    def obtain(self, key: str, request: Request) -> Answer:
        """The answer of ``request`` (cache key ``key``): cached, or issued under its claim
        (another process asking it now: awaited, then read from the cache; see the module)."""
        cached = self._view.hit(key)  # another run may have obtained it meanwhile
        if cached is not None:
            return cached
        if self.claims is None:
            return self.issue(key, request)
        claim = self.claims.take(key)
        waited = claim is None
        if claim is None:  # another run is asking it now: wait for its answer
            self._stats.add("claim_waits")
            refused: list[Answer] = []
            claim = self.claims.wait(key, lambda pause: self._halted(pause, refused))
            if claim is None:
                return refused[0]
        with claim:
            cached = self._view.hit(key)  # the other run's answer (or one cached meanwhile)
            if cached is not None:
                if waited:
                    self._stats.add("claim_awaited")
                return cached
            if waited:
                self._stats.add("claim_reasked")
            return self.issue(key, request)

    def _halted(self, pause: float, refused: list[Answer]) -> bool:
        """Wait up to ``pause`` seconds for the run to halt; ``True`` (its refusal appended to
        ``refused``) when it did: a request waiting for another run's claim is not issued."""
        self._gate.halt.wait(pause)
        answer = self._gate.refusal()
        if answer is None and self._gate.halt.is_set():
            answer = Answer(error="cancelled: the run was interrupted while another run on the "
                            "same cache was asking this request", calls=0,
                            failure_kind="cancelled")
        if answer is not None:
            refused.append(answer)
        return answer is not None

    def issue(self, key: str, request: Request) -> Answer:
        """Send ``request`` (unless the circuit is open, the budget spent or its worst case
        does not fit in the cost cap) and store the answer."""
        begun = self._begin(request)
        if isinstance(begun, Answer):
            return begun
        answer, served = self._call(request, begun.charge)
        return self._finish(key, request, answer, served)

    def issue_later(self, key: str, request: Request, done: Callable[[Answer], None]) -> None:
        """:meth:`issue` for a backend that answers with a future (``submit_served``: the
        batch mode's): ``done(answer)`` is called when the answer is there, from the thread
        that resolves it, and the calling thread returns at once (no thread waits)."""
        begun = self._begin(request)
        if isinstance(begun, Answer):
            done(begun)
            return
        self._stats.call_began()

        def finished(fut: Future[tuple[Answer, Snapshot | None]]) -> None:
            answer: Answer | None = None
            try:
                answer, served = fut.result()
            except BaseException as exc:  # a backend bug must not leave an item waiting
                answer, served = Answer(error=one_line(
                    f"internal error in {type(self.backend).__name__}: "
                    f"{type(exc).__name__}: {exc}"), calls=0), None
            finally:
                self._stats.call_ended()
                if begun.charge is not None:
                    if answer is not None and not answer.ok and self._out_unread(request):
                        # its line is out at the endpoint and may yet be billed: kept whole
                        begun.charge.after_attempt(AttemptOutcome(ok=False, unread=True))
                    begun.charge.close(answer)
            assert answer is not None
            done(self._finish(key, request, answer, served))

        try:
            self.backend.submit_served(request).add_done_callback(  # type: ignore[attr-defined]
                finished)
        except Exception as exc:
            failed: Future[tuple[Answer, Snapshot | None]] = Future()
            failed.set_exception(exc)
            finished(failed)

    def _out_unread(self, request: Request) -> bool:
        """Whether a backend that answers with futures (the batch mode's) says ``request``
        is out at the endpoint unread — its error came while its batch line was live, so it
        may still be billed (``unread``)."""
        unread = getattr(self.backend, "unread", None)
        return bool(callable(unread) and unread(request))

    def _begin(self, request: Request) -> Answer | _Begun:
        """The refusal of ``request`` (circuit open, stopped, budget spent, over the cost
        cap), else what its call holds (its cost charge, opened)."""
        refused = self._gate.refusal()
        if refused is not None:
            return refused
        if self.limiter is not None and not self._budget_exhausted():
            self.limiter.acquire()
        refused = self._gate.refusal()  # the circuit may have opened during the pacing wait
        if refused is not None:
            return refused
        if self.budget is not None and self._budget_exhausted():
            self._stats.add("budget_skipped")
            return Answer(error=self.budget.refusal(), calls=0, failure_kind="budget")
        charge = None
        if self.cost is not None:
            charge = CallCharge(self.cost, request)
            if not charge.open():
                self._stats.add("cost_skipped")
                return Answer(error=self.cost.cap.refusal(charge.worst), calls=0,
                              failure_kind="cost_cap")
        return _Begun(charge)

    def _finish(self, key: str, request: Request, answer: Answer,
                served: Snapshot | None) -> Answer:
        """Feed the breaker, count and spend the answer of an issued request, store it."""
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
        """Cache an obtained answer (not an error, not truncated)."""
        cache = self._view.cache
        if (cache is not None and answer.ok and not answer.truncated
                and cache.store(key, request, answer, endpoint=self.endpoint,
                                served=served) == "failed"):
            self._stats.add("cache_write_errors")

    def _budget_exhausted(self) -> bool:
        return self.budget is not None and self.budget.exhausted
