"""Two schedulers on one cache folder — two runs at once (issue 47 §7): a request one is asking
is awaited by the other and read from the cache, never asked twice; one the first did not
obtain is asked by the second; a stop ends the wait.  Events, never a sleep."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.models.base import Request
from pytest_graphinstruct.models.caching.cache import AnswerCache
from pytest_graphinstruct.models.caching.claims import ClaimBoard
from pytest_graphinstruct.models.caching.lease import BATCH, CacheBusy, acquire
from pytest_graphinstruct.models.scheduling.scheduler import Scheduler
from tests.models.helpers import req


@pytest.fixture
def waiting(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Set when a scheduler starts waiting for a claim another holder has."""
    event = threading.Event()
    wait = ClaimBoard.wait

    def noted(self: ClaimBoard, key: str, halted: object) -> object:
        event.set()
        return wait(self, key, halted)  # type: ignore[arg-type]

    monkeypatch.setattr(ClaimBoard, "wait", noted)
    return event


class HeldBackend:
    """Answers once the test lets it (``release``); counts what it was asked."""

    cacheable = True
    remote = False
    endpoint = "http://fake.invalid/v1"

    def __init__(self, *, fail: bool = False) -> None:
        self.asked: list[str] = []
        self.started = threading.Event()
        self.gate = threading.Event()
        self.fail = fail

    def complete(self, request: Request) -> Answer:
        self.asked.append(request.messages[0].content)
        self.started.set()
        assert self.gate.wait(60)
        if self.fail:
            return Answer(error="HTTP 500", calls=1)
        return Answer(text=f"answer to {request.messages[0].content}",
                      usage=Usage(input_tokens=3, output_tokens=2))


def test_a_request_another_run_is_asking_is_awaited_and_read_from_the_cache(
        tmp_path: Path, waiting: threading.Event) -> None:
    first_backend, second_backend = HeldBackend(), HeldBackend()
    with (Scheduler(first_backend, cache=AnswerCache(tmp_path)) as first,
          Scheduler(second_backend, cache=AnswerCache(tmp_path)) as second):
        asked = first.submit(req("q"))
        assert first_backend.started.wait(60)  # the first run is asking it now
        awaited = second.submit(req("q"))
        second_backend.gate.set()
        assert waiting.wait(60)  # waits for the first run's claim, sends nothing
        assert not awaited.done()
        first_backend.gate.set()
        assert asked.result(60).text == awaited.result(60).text == "answer to q"
    assert first_backend.asked == ["q"] and second_backend.asked == []
    stats = second.stats()
    assert (stats["claim_waits"], stats["claim_awaited"], stats["issued"]) == (1, 1, 0)
    assert second.sent().requests == 0 and not list((tmp_path / "claims").iterdir())


def test_an_answer_the_other_run_did_not_obtain_is_asked_after_it(
        tmp_path: Path, waiting: threading.Event) -> None:
    failing, second_backend = HeldBackend(fail=True), HeldBackend()
    with (Scheduler(failing, cache=AnswerCache(tmp_path)) as first,
          Scheduler(second_backend, cache=AnswerCache(tmp_path)) as second):
        lost = first.submit(req("q"))
        assert failing.started.wait(60)
        asked = second.submit(req("q"))
        second_backend.gate.set()
        assert waiting.wait(60)
        failing.gate.set()
        assert not lost.result(60).ok
        assert asked.result(60).text == "answer to q"  # asked here, under the claim
    assert second_backend.asked == ["q"]
    assert (second.stats()["claim_waits"], second.stats()["claim_reasked"]) == (1, 1)


def test_a_stop_ends_the_wait_for_another_runs_request(
        tmp_path: Path, waiting: threading.Event) -> None:
    first_backend, second_backend = HeldBackend(), HeldBackend()
    with (Scheduler(first_backend, cache=AnswerCache(tmp_path)) as first,
          Scheduler(second_backend, cache=AnswerCache(tmp_path)) as second):
        first.submit(req("q"))
        assert first_backend.started.wait(60)
        pending = second.submit(req("q"))
        assert waiting.wait(60)
        second.stop_issuing("interrupted (Ctrl+C)")
        answer = pending.result(60)
        assert answer.error == "interrupted (Ctrl+C)" and answer.failure_kind == "stopped"
        first_backend.gate.set()
    assert second_backend.asked == []


def test_an_ordinary_scheduler_is_refused_while_a_batch_run_holds_the_folder(
        tmp_path: Path) -> None:
    lease = acquire(tmp_path, BATCH)
    try:
        with pytest.raises(CacheBusy, match="a --gi-batch run is using the answer cache"):
            Scheduler(HeldBackend(), cache=AnswerCache(tmp_path))
    finally:
        lease.release()
    Scheduler(HeldBackend(), cache=AnswerCache(tmp_path)).close()
    acquire(tmp_path, BATCH).release()  # its close gave the folder back
