"""RequestStats: what one issued answer counts, calls in flight, and the report's shape."""

from __future__ import annotations

import threading

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.models.scheduling.request_stats import RequestStats, Sent


def test_an_answer_counts_its_calls_retries_tokens_and_returns_what_it_spent() -> None:
    stats = RequestStats(threading.RLock())
    assert stats.account(Answer(text="x", usage=Usage(3, 4), calls=3)) == 7
    assert stats.account(Answer(text="y", calls=1)) == 0  # no usage block: unknown, not spent
    assert stats.account(Answer(error="boom", calls=2)) == 0
    out = stats.report(pending=5)
    assert (out["issued"], out["calls"], out["retries"], out["errors"]) == (3, 6, 3, 1)
    assert (out["usage_missing"], out["tokens"], out["pending"]) == (1, 7, 5)
    assert stats.tokens_spent() == 7


def test_in_flight_keeps_the_highest_count() -> None:
    stats = RequestStats(threading.RLock())
    with stats.in_flight(), stats.in_flight():
        pass
    with stats.in_flight():
        stats.add("stop_skipped", 2)
    out = stats.report(pending=0)
    assert out["max_in_flight"] == 2 and out["stop_skipped"] == 2
    assert list(out)[-3:] == ["pending", "tokens", "elapsed_s"]


def test_sent_is_what_went_over_the_wire_and_what_an_earlier_cache_served() -> None:
    stats = RequestStats(threading.RLock())
    stats.account(Answer(text="x", usage=Usage(3, 4), calls=3))
    stats.account(Answer(error="boom", calls=2))  # sent twice, billed nothing
    stats.add("cache_hits", 2)
    sent = stats.sent(cached=1)  # one of them was cached before the run began
    assert sent == Sent(requests=5, retries=3, input_tokens=3, output_tokens=4, cached=1)
    assert sent + Sent(1, 0, 10, 10, 4) == Sent(6, 3, 13, 14, 5)
    in_flight = Sent(batch_in_flight=7)  # requests in batches still live at the endpoint
    assert (sent + in_flight).requests == 5 and (sent + in_flight).batch_in_flight == 7
