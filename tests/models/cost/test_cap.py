"""The cost cap: reservation arithmetic, worst case and actual cost of a request, and the
scheduler refusing what could exceed it; in batch mode at the batch price (list price for what
``--override-ini=gi_batch_fallback=true`` sends as ordinary requests)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from pytest_graphinstruct.answers import Answer, Failure, Usage
from pytest_graphinstruct.models.backends.openai_backend import OpenAIBackend
from pytest_graphinstruct.models.backends.tokens import TokenCounter
from pytest_graphinstruct.models.base import AttemptOutcome, DecodingParams
from pytest_graphinstruct.models.batch.backend import BatchBackend
from pytest_graphinstruct.models.batch.runner import BatchSettings
from pytest_graphinstruct.models.caching.cache import AnswerCache
from pytest_graphinstruct.models.cost.cap import (
    COST_CAP_REACHED,
    BatchPricing,
    CallCharge,
    CostCap,
    RequestCost,
)
from pytest_graphinstruct.models.cost.prices import ModelPrice
from pytest_graphinstruct.models.scheduling.scheduler import Scheduler
from pytest_graphinstruct.testing.batch_server import FakeBatchAPI
from tests.models.fake_openai import FakeOpenAIServer
from tests.models.helpers import req

#: one token costs 1 (input) or 2 (output): costs are token counts
PRICE = ModelPrice(input_per_1m=1_000_000, output_per_1m=2_000_000)
#: the same, at half price in a batch
HALF = ModelPrice(input_per_1m=1_000_000, output_per_1m=2_000_000, batch_discount=0.5)


def test_reservations_keep_the_spending_within_the_cap() -> None:
    cap = CostCap(10.0, "USD")
    assert cap.reserve(4.0) and cap.reserve(4.0)
    assert not cap.reserve(4.0)  # 8 set aside: a third could reach 12
    cap.settle(4.0, 1.0)
    cap.settle(4.0, 1.5)
    assert cap.spent == pytest.approx(2.5)
    assert not cap.reserve(1.0)  # closed once a request was refused
    assert cap.refused == 2


def test_the_summary_is_one_line_only_after_a_refusal() -> None:
    cap = CostCap(1.0, "EUR")
    assert cap.summary() is None
    assert not cap.reserve(2.0)
    line = cap.summary()
    assert line is not None and "\n" not in line
    assert line.startswith(COST_CAP_REACHED) and "EUR" in line and "1 request(s)" in line
    assert cap.refusal(2.0).startswith(COST_CAP_REACHED) and "2.0000" in cap.refusal(2.0)


UNREAD = AttemptOutcome(ok=False, endpoint_fault=True, error="timed out", unread=True)
REFUSED = AttemptOutcome(ok=False, endpoint_fault=True, error="HTTP 503")


def test_an_attempt_abandoned_unread_keeps_its_worst_case_and_its_retry_reserves_again() -> None:
    counter = TokenCounter("cl100k_base")
    request = req("q")
    worst = RequestCost(CostCap(1.0, "USD"), PRICE, counter, max_tokens=10).worst_case(request)
    cap = CostCap(2.5 * worst, "USD")
    charge = CallCharge(RequestCost(cap, PRICE, counter, max_tokens=10), request)
    assert charge.open()
    charge.after_attempt(UNREAD)  # timed out: the endpoint may bill it
    assert cap.spent == pytest.approx(worst)
    assert charge.before_retry(1) is None  # a second worst case still fits
    charge.after_attempt(UNREAD)
    refusal = charge.before_retry(2)  # a third does not: 2 spent + 1 > 2.5
    assert refusal is not None and refusal.startswith(COST_CAP_REACHED)
    assert "retry after 2 call(s)" in refusal
    charge.close(Answer(error=refusal, calls=2))
    assert cap.spent == pytest.approx(2 * worst) and cap.spent <= cap.limit
    assert cap.unread == (2, pytest.approx(2 * worst)) and cap.refused == 1
    line = cap.summary()
    assert line is not None and "2 call(s) abandoned unread" in line and "\n" not in line


def test_an_error_status_is_not_billed_and_its_retry_reuses_the_reservation() -> None:
    counter = TokenCounter("cl100k_base")
    cost = RequestCost(CostCap(1e6, "USD"), PRICE, counter, max_tokens=10)
    charge = CallCharge(cost, req("q"))
    assert charge.open()
    charge.after_attempt(REFUSED)
    assert charge.before_retry(1) is None and cost.cap.spent == 0.0
    charge.close(Answer(text="ok", usage=Usage(3, 1)))
    charge.close(Answer(text="ok", usage=Usage(3, 1)))  # once only
    assert cost.cap.spent == pytest.approx(3 + 2) and cost.cap.unread == (0, 0.0)
    assert cost.cap.summary() is None


def test_timed_out_calls_count_at_their_worst_case_and_the_servers_bill_stays_within(
        api_key: str) -> None:
    """Every call held past its deadline, then answered once released, as a provider finishes
    (and bills) a call its client abandoned: the server's bill stays within the cap."""
    counter = TokenCounter("cl100k_base")
    with FakeOpenAIServer(token_counter=counter) as server:
        server.hold()
        backend = OpenAIBackend(server.base_url, "fake-model", api_key_env=api_key,
                                timeout_s=0.5, max_retries=3, sleep=lambda s: None)
        cost = RequestCost(CostCap(1.0, "USD"), PRICE, counter, max_tokens=20)
        cap = CostCap(2.5 * cost.worst_case(req("w w")), "USD")
        cost = RequestCost(cap, PRICE, counter, max_tokens=20)
        with Scheduler(backend, concurrency=1, cost=cost) as sched:
            answers = [f.result() for f in sched.submit_all(
                [req("w w", sample=k) for k in range(3)])]
        sent = server.request_count
        server.release()
        assert server.wait_for_answers(sent)
        billed = PRICE.cost(*server.tokens_counted)
    assert sent == 2 and all(a.failure_kind == "cost_cap" for a in answers)
    assert billed <= cap.spent <= cap.limit


def test_a_cap_must_be_positive() -> None:
    with pytest.raises(ValueError):
        CostCap(0.0, "USD")


def test_worst_case_counts_the_messages_sent_and_max_tokens() -> None:
    counter = TokenCounter("cl100k_base")
    cost = RequestCost(CostCap(100.0, "USD"), PRICE, counter, max_tokens=7)
    request = req("three words here")
    tokens = counter.count_messages([("user", "three words here")])
    assert cost.worst_case(request) == pytest.approx(tokens + 2 * 7)
    own = req("three words here", params=DecodingParams(max_tokens=2))
    assert cost.worst_case(own) == pytest.approx(tokens + 2 * 2)  # the request's own limit
    assert cost.cost_of(Answer(text="x", usage=Usage(5, 3))) == pytest.approx(5 + 6)
    assert cost.cost_of(Answer(error="HTTP 500")) == 0.0


def test_a_failure_is_a_kind_never_read_from_its_text() -> None:
    assert Answer(error=f"{COST_CAP_REACHED}: 1 of 1 USD spent", calls=0).failure_kind == "error"
    assert Answer(error="HTTP 503").failure == Failure("error", "HTTP 503")
    assert Answer(text=f"{COST_CAP_REACHED} is what I say").failure is None
    with pytest.raises(ValueError, match="no failure kind"):
        Answer(text="x", failure_kind="cost_cap")


def test_the_scheduler_stops_at_the_cap_and_the_server_agrees(api_key: str,
                                                               tmp_path: Path) -> None:
    counter = TokenCounter("cl100k_base")
    with FakeOpenAIServer(token_counter=counter) as server:
        backend = OpenAIBackend(server.base_url, "fake-model", api_key_env=api_key,
                                timeout_s=5.0)
        prompt = counter.count_messages([("user", "w w")])
        worst = prompt + 2 * 20
        actual = prompt + 2 * counter.count_text("echo: w w")
        # after three answers the fourth's worst case just fits; after four, a fifth does not
        cap = CostCap(3 * actual + worst, "USD")
        cost = RequestCost(cap, PRICE, counter, max_tokens=20)
        cache = AnswerCache(tmp_path)
        requests = [req("w w", sample=k) for k in range(6)]
        with Scheduler(backend, concurrency=1, cache=cache, cost=cost) as sched:
            answers = [f.result() for f in sched.submit_all(requests)]
            stats = sched.stats()
        sent_in, sent_out = server.tokens_counted
    issued = [a for a in answers if a.ok]
    refused = [a for a in answers if a.failure_kind == "cost_cap"]
    assert len(issued) == 4 and len(refused) == 2
    assert all(a.calls == 0 for a in refused)
    assert server.request_count == len(issued) == stats["issued"]
    assert stats["cost_skipped"] == len(refused)
    assert cap.spent == pytest.approx(PRICE.cost(sent_in, sent_out))
    assert cap.spent <= cap.limit
    assert len(cache) == len(issued)


def test_requests_in_flight_together_never_exceed_the_cap(api_key: str) -> None:
    """Eight workers asking at once: each reserves its worst case before its call, so the
    cap holds whichever order they run in."""
    counter = TokenCounter("cl100k_base")
    gate = threading.Event()
    with FakeOpenAIServer(token_counter=counter) as server:
        server.responder = lambda body: (gate.wait(30), "ok")[1]
        backend = OpenAIBackend(server.base_url, "fake-model", api_key_env=api_key,
                                timeout_s=60.0)
        worst = counter.count_messages([("user", "q")]) + 2 * 50
        cap = CostCap(worst * 2.5, "USD")
        cost = RequestCost(cap, PRICE, counter, max_tokens=50)
        with Scheduler(backend, concurrency=8, cost=cost) as sched:
            futures = sched.submit_all([req("q", sample=k) for k in range(8)])
            assert server.wait_for_requests(2, timeout=60)
            gate.set()
            answers = [f.result() for f in futures]
    assert sum(a.ok for a in answers) == 2 == server.request_count
    assert cap.spent <= cap.limit


def test_batch_mode_reserves_and_settles_at_the_batch_price() -> None:
    counter = TokenCounter("cl100k_base")
    request = req("three words here")
    tokens = counter.count_messages([("user", "three words here")])
    used = Answer(text="x", usage=Usage(5, 3))
    batch = RequestCost(CostCap(100.0, "USD"), HALF, counter, max_tokens=7,
                        batch=BatchPricing())
    assert batch.worst_case(request) == pytest.approx((tokens + 2 * 7) / 2)
    assert batch.cost_of(used, request) == pytest.approx((5 + 6) / 2)
    # with fallback a line may end as an ordinary request: reserved at list price, and
    # settled at list price only when the fallback answered it
    fell_back: set[str] = set()
    pricing = BatchPricing(fallback=True, ordinary=lambda r: r.messages[0].content in fell_back)
    fallback = RequestCost(CostCap(100.0, "USD"), HALF, counter, max_tokens=7, batch=pricing)
    assert fallback.worst_case(request) == pytest.approx(tokens + 2 * 7)
    assert fallback.cost_of(used, request) == pytest.approx((5 + 6) / 2)
    fell_back.add(request.messages[0].content)
    assert fallback.cost_of(used, request) == pytest.approx(5 + 6)
    assert fallback.cost_of(used) == pytest.approx(5 + 6)  # request unknown: the upper bound


@pytest.mark.parametrize("fallback", [False, True], ids=["batch", "fallback"])
def test_a_batch_runs_cap_is_spent_at_the_batch_price_the_server_counted(
        tmp_path: Path, fallback: bool) -> None:
    """Six requests through BatchBackend under a scheduler with a cap: what the cap counts
    spent is the tokens the server billed at the batch price — and, with fallback, the lines
    the batch failed (sent again as ordinary requests) at list price."""
    counter = TokenCounter("cl100k_base")
    with FakeOpenAIServer(token_counter=counter) as server:
        api = FakeBatchAPI(server, line_fault=(
            lambda c, n: "failed" if fallback and c < "8" else None))
        inner = OpenAIBackend(server.base_url, "fake-model", api_key="sk-test", max_retries=0)
        backend = BatchBackend(inner, AnswerCache(tmp_path),
                               BatchSettings(poll_s=0.02, quiet_s=0.05, fallback=fallback))
        cap = CostCap(1e9, "USD")
        cost = RequestCost(cap, HALF, counter, max_tokens=20,
                           batch=BatchPricing(fallback=fallback, ordinary=backend.sent_ordinary))
        with Scheduler(backend, concurrency=8, cost=cost) as sched:
            answers = [f.result() for f in sched.submit_all(
                [req(f"w {k}", sample=k) for k in range(6)])]
        backend.close()
        assert all(a.ok for a in answers)
    per_answer = [PRICE.cost(a.usage.input_tokens or 0, a.usage.output_tokens or 0)
                  for a in answers if a.usage is not None]
    ordinary = server.request_count  # the fallback's ordinary requests (list price)
    assert ordinary == (sum(1 for c in api.submitted if c < "8") if fallback else 0)
    assert len(per_answer) == 6 and len(set(per_answer)) == 1  # the same size each
    assert cap.spent == pytest.approx(per_answer[0] * (ordinary + (6 - ordinary) / 2))
