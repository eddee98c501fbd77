"""run.answer_service: the controller's answers, asked by a worker over a local socket."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from pytest_graphinstruct.answers import Answer, MethodStep, Usage
from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.run.answer_service import (
    MAX_QUESTION_BYTES,
    AnswerClient,
    AnswerService,
    ServiceGone,
    served_models,
)
from pytest_graphinstruct.run.config import Cell
from tests.plugin._suite import write_suite
from tests.run._gpt_x import config

CELL = Cell("gpt-x", "zero-shot")
STEP = MethodStep(round=0, source="round0", temperature=0.7, input_tokens=3, output_tokens=4,
                  calls=1, d4=1.0, passed=True, kept=True)
ANSWERS = (Answer(text="Graph[...] ✓", usage=Usage(3, 4), calls=2, finish_reason="stop",
                  cached=True, latency_s=0.5, steps=(STEP,)),
           Answer(error="budget spent", calls=0, failure_kind="budget"))


class Session:
    """What the service reads of a session: the suite, and each item's answers."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Cell]] = []
        self.release = threading.Event()
        self.release.set()
        self.suite = SimpleNamespace(get=lambda i: SimpleNamespace(id=i) if i != "nope" else None)
        self.fetcher = SimpleNamespace(ask=self._ask)

    def answers(self, inst: Any, cell: Cell) -> tuple[Answer, ...]:
        assert self.release.wait(60)
        self.asked.append((inst.id, cell))
        return ANSWERS

    def _ask(self, inst: Any, cell: Cell, k: int) -> Future[Answer]:
        fut: Future[Answer] = Future()
        fut.set_result(ANSWERS[k])
        return fut


@pytest.fixture
def session() -> Session:
    return Session()


@pytest.fixture
def service(session: Session, tmp_path: Path) -> Any:
    svc = AnswerService(cast(Any, session), tmp_path)
    yield svc
    svc.close()


def test_served_models_are_those_with_an_endpoint(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    assert served_models(config(suite, model="oracle,gpt-x,local")) == {"gpt-x", "local"}
    assert served_models(config(suite, model="oracle")) == frozenset()


def test_a_worker_gets_the_sessions_answers_exactly(service: AnswerService,
                                                     session: Session) -> None:
    client = AnswerClient(service.address)
    assert client.answers("L1-001", CELL) == ANSWERS
    assert client.answers("L1-002", Cell("gpt-x", "few-shot", "vgig")) == ANSWERS
    assert session.asked == [("L1-001", CELL), ("L1-002", Cell("gpt-x", "few-shot", "vgig"))]
    assert client.answers("L1-001", CELL, samples=[1]) == ANSWERS[1:]
    assert service.asked == 3
    client.close()


def test_a_question_the_service_cannot_answer_is_an_error_and_the_connection_stays(
        service: AnswerService) -> None:
    client = AnswerClient(service.address)
    with pytest.raises(GraphInstructError, match="no instruction 'nope'"):
        client.answers("nope", CELL)
    with pytest.raises(GraphInstructError, match="samples is a list"):
        client.answers("L1-001", CELL, samples=[-1])
    assert client.answers("L1-001", CELL) == ANSWERS  # the same connection
    assert service.asked == 1


@pytest.mark.parametrize("line", [b"[1, 2]\n", b'{"id": 3}\n', b"not json\n",
                                  b"x" * (MAX_QUESTION_BYTES + 10) + b"\n"])
def test_a_malformed_or_overlong_question_gets_one_error_line(service: AnswerService,
                                                               line: bytes) -> None:
    import json
    import socket

    path = service.address.partition(":")[2]
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(path)
        stream = sock.makefile("rwb")
        stream.write(line)
        stream.flush()
        reply = json.loads(stream.readline())
        assert set(reply) == {"error"} and "\n" not in reply["error"]
        stream.write(b'{"id": "L1-001", "model": "gpt-x", "strategy": "zero-shot", '
                     b'"method": "baseline", "samples": [0]}\n')
        stream.flush()
        assert len(json.loads(stream.readline())["answers"]) == 1  # still answering


def test_workers_asking_at_once_are_answered_each(service: AnswerService,
                                                  session: Session) -> None:
    session.release.clear()  # both questions wait inside the session
    got: list[tuple[Answer, ...]] = []
    threads = [threading.Thread(target=lambda: got.append(
        AnswerClient(service.address).answers("L1-001", CELL))) for _ in range(2)]
    for t in threads:
        t.start()
    session.release.set()
    for t in threads:
        t.join(60)
    assert got == [ANSWERS, ANSWERS]


def test_a_service_that_is_gone_is_said(session: Session, tmp_path: Path) -> None:
    svc = AnswerService(cast(Any, session), tmp_path)
    client = AnswerClient(svc.address)
    assert client.answers("L1-001", CELL) == ANSWERS
    svc.close()
    Path(svc.address.partition(":")[2]).unlink()
    client.close()
    with pytest.raises(ServiceGone, match="cannot be reached"):
        client.answers("L1-001", CELL)


def test_a_folder_too_long_for_a_unix_socket_uses_loopback_tcp(session: Session,
                                                                 tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 120)
    deep.mkdir()
    svc = AnswerService(cast(Any, session), deep)
    try:
        assert svc.address.startswith("tcp:127.0.0.1:")
        assert AnswerClient(svc.address).answers("L1-001", CELL) == ANSWERS
    finally:
        svc.close()
