"""The records that cross between the xdist controller and its workers: each makes one JSON
document that reads back as the same record, and the controller adds payloads up."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.models.caching.snapshot import CacheSource, Snapshot
from pytest_graphinstruct.models.scheduling.request_stats import Sent
from pytest_graphinstruct.run.payload import WorkerInput, WorkerPayload, WorkerTotals
from pytest_graphinstruct.run.records.codec import ShapeError
from pytest_graphinstruct.run.records.results import ItemResult, SampleResult
from pytest_graphinstruct.run.served import Served
from pytest_graphinstruct.run.tally import ProgressCounts


def _result(iid: str, cell: str = "m-zero-shot") -> ItemResult:
    return ItemResult(instruction_id=iid, level=int(iid[1]), cell=cell, model="m",
                      strategy="zero-shot", outcome="passed",
                      samples=(SampleResult(parsed=True, refusal=False, raw_answer="0 1"),))


def _payload() -> WorkerPayload:
    return WorkerPayload(
        results=(_result("L0-001"), _result("L1-002", "m-few-shot")),
        notes=("a stale answer", "another"), limits=("cost cap reached (--gi-max-cost=1 USD)",),
        progress=ProgressCounts(4, 3, 1, 0, 120),
        cached={"m-zero-shot": 1, "m-few-shot": 0},
        sources={"m-zero-shot": CacheSource(frozenset({"m-2024", None}), 17.5)},
        sent={"m": Sent(requests=5, retries=1, input_tokens=400, output_tokens=90, cached=2)},
        earlier={"m": frozenset({"k1", "k2"})})


def test_worker_input_round_trips_through_one_json_document() -> None:
    given = WorkerInput(local={"base_url": "http://127.0.0.1:8001/v1", "describe": "tiny"},
                        served=Served({"m": Snapshot("m-2024", "fp_1")}, cache_mark=7),
                        progress=True, stop_folder="/tmp/gi-run-x")
    text = given.to_json()
    assert isinstance(json.loads(text), dict)
    assert WorkerInput.from_json(text) == given
    assert WorkerInput.from_json(WorkerInput().to_json()) == WorkerInput()


def test_the_answer_services_key_travels_but_is_never_shown() -> None:
    """The key the controller's answer service asks first reaches the worker whole, and a
    traceback or log that shows the record does not show it."""
    given = WorkerInput(answers="tcp:127.0.0.1:5", answers_key="s3cr3t-key")
    assert WorkerInput.from_json(given.to_json()).answers_key == "s3cr3t-key"
    assert "s3cr3t" not in repr(given) and "tcp:127.0.0.1:5" in repr(given)


def test_worker_payload_round_trips_through_one_json_document() -> None:
    given = _payload()
    text = given.to_json()
    assert set(json.loads(text)) == {"results", "notes", "limits", "progress", "cached", "sources",
                                     "sent", "earlier"}
    assert WorkerPayload.from_json(text) == given
    assert WorkerPayload.from_json(WorkerPayload().to_json()) == WorkerPayload()


def test_a_missing_field_reads_as_its_default_and_a_wrong_one_is_refused() -> None:
    assert WorkerPayload.from_json("{}") == WorkerPayload()
    assert WorkerInput.from_json("{}") == WorkerInput()
    with pytest.raises(ShapeError, match="earlier"):
        WorkerPayload.from_json('{"earlier": {"m": "k1"}}')


@given(st.frozensets(st.none() | st.text(max_size=8), max_size=4),
       st.none() | st.floats(allow_nan=False, allow_infinity=False))
def test_a_cache_source_survives_the_payload(snapshots: frozenset[str | None],
                                             oldest: float | None) -> None:
    given = WorkerPayload(sources={"c": CacheSource(snapshots, oldest)})
    text = given.to_json()
    assert WorkerPayload.from_json(text) == given
    assert given.to_json() == WorkerPayload.from_json(text).to_json()  # one order: by text


def test_totals_add_payloads_and_keep_each_workers_latest_counts() -> None:
    totals = WorkerTotals()
    totals.add("gw0", _payload())
    seen = totals.progress
    totals.add("gw1", WorkerPayload(results=(_result("L2-001"),), progress=ProgressCounts(1, 1),
                                    cached={"m-zero-shot": 2},
                                    sources={"m-zero-shot": CacheSource(frozenset({"m-2025"}),
                                                                        3.0)},
                                    sent={"m": Sent(3, 0, 100, 10, 2), "n": Sent(1)},
                                    earlier={"m": frozenset({"k2", "k3"})}))
    assert [r.instruction_id for r in totals.results] == ["L0-001", "L1-002", "L2-001"]
    assert totals.cached == {"m-zero-shot": 3, "m-few-shot": 0}
    # summed per model; the answers from the cache counted once each: k2 was read by both
    assert totals.sent == {"m": Sent(8, 1, 500, 100, 3), "n": Sent(1)}
    assert totals.sources["m-zero-shot"] == CacheSource(frozenset({"m-2024", "m-2025", None}), 3.0)
    assert totals.counts() == ProgressCounts(5, 4, 1, 0, 120)
    assert seen is not totals.progress and set(seen) == {"gw0"}  # replaced, not mutated
    totals.counted("gw0", ProgressCounts(6, 6))
    assert totals.counts() == ProgressCounts(7, 7)
