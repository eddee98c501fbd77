"""The cost cap of a request a batch backend answers with an error while its line is still out
at the endpoint (issue 47 §2): the line may yet be billed, so its worst case stays spent and no
other request takes its room; an error of a line never submitted frees its reservation."""

from __future__ import annotations

import threading
from concurrent.futures import Future

import pytest

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.models.backends.tokens import TokenCounter
from pytest_graphinstruct.models.base import Request
from pytest_graphinstruct.models.caching.snapshot import Snapshot
from pytest_graphinstruct.models.caching.view import CacheView
from pytest_graphinstruct.models.cost.cap import CostCap, RequestCost
from pytest_graphinstruct.models.cost.prices import ModelPrice
from pytest_graphinstruct.models.scheduling.issue_gate import IssueGate
from pytest_graphinstruct.models.scheduling.issuer import RequestIssuer
from pytest_graphinstruct.models.scheduling.request_stats import RequestStats
from tests.models.helpers import req

PRICE = ModelPrice(input_per_1m=1_000_000, output_per_1m=2_000_000)


class Cancelled:
    """A batch backend whose requests all end in an error (the run was interrupted); ``out``
    says whether their lines were out at the endpoint then."""

    endpoint = "http://fake.invalid/v1"
    cacheable = True

    def __init__(self, out: bool) -> None:
        self.out = out

    def submit_served(self, request: Request) -> Future[tuple[Answer, Snapshot]]:
        fut: Future[tuple[Answer, Snapshot]] = Future()
        fut.set_result((Answer(error="cancelled: interrupted", calls=0,
                               failure_kind="cancelled"), Snapshot()))
        return fut

    def unread(self, request: Request) -> bool:
        return self.out


@pytest.mark.parametrize("out", [True, False], ids=["line-out", "never-submitted"])
def test_an_error_of_a_line_out_at_the_endpoint_keeps_its_worst_case(out: bool) -> None:
    backend = Cancelled(out)
    lock = threading.RLock()
    stats = RequestStats(lock)
    cap = CostCap(1000.0, "USD")
    cost = RequestCost(cap, PRICE, TokenCounter("cl100k_base"), max_tokens=10)
    issuer = RequestIssuer(
        backend, backend.endpoint,  # type: ignore[arg-type]
        view=CacheView(None, snapshot=None, reuse_stale=False, lock=lock, stats=stats),
        gate=IssueGate(backend, None, lock=lock, stats=stats,  # type: ignore[arg-type]
                       stop_check=None, on_halt=lambda: None),
        stats=stats, limiter=None, budget=None, cost=cost)
    request = req("q")
    answers: list[Answer] = []
    issuer.issue_later(request.cache_key(backend.endpoint), request, answers.append)
    assert not answers[0].ok
    worst = cost.worst_case(request)
    assert cap.spent == (worst if out else 0.0)
    assert cap.unread == ((1, worst) if out else (0, 0.0))
