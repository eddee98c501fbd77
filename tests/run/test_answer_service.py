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
        self.inputs = SimpleNamespace(samples=lambda inst, cell: len(ANSWERS))  # planned

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


ITEMS = [("L1-001", CELL), ("L1-002", Cell("gpt-x", "few-shot", "vgig")), ("nope", CELL)]
"""The run's selected items (``nope`` is not in the suite)."""


def serving(session: Session, folder: Path) -> AnswerService:
    """A service that expects the items of :data:`ITEMS`."""
    svc = AnswerService(cast(Any, session), folder)
    svc.expect((SimpleNamespace(id=i), cell) for i, cell in ITEMS)  # type: ignore[misc]
    return svc


def client_of(svc: AnswerService) -> AnswerClient:
    return AnswerClient(svc.address, svc.key)


@pytest.fixture
def service(session: Session, tmp_path: Path) -> Any:
    svc = serving(session, tmp_path)
    yield svc
    svc.close()


def test_served_models_are_those_with_an_endpoint(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    assert served_models(config(suite, model="oracle,gpt-x,local")) == {"gpt-x", "local"}
    assert served_models(config(suite, model="oracle")) == frozenset()


def test_a_worker_gets_the_sessions_answers_exactly(service: AnswerService,
                                                     session: Session) -> None:
    client = client_of(service)
    assert client.answers("L1-001", CELL) == ANSWERS
    assert client.answers("L1-002", Cell("gpt-x", "few-shot", "vgig")) == ANSWERS
    assert session.asked == [("L1-001", CELL), ("L1-002", Cell("gpt-x", "few-shot", "vgig"))]
    assert client.answers("L1-001", CELL, samples=[1]) == ANSWERS[1:]
    assert service.asked == 3
    client.close()


def test_a_question_the_service_cannot_answer_is_an_error_and_the_connection_stays(
        service: AnswerService) -> None:
    client = client_of(service)
    with pytest.raises(GraphInstructError, match=r"refused: 'nope' .* not one of the run's"):
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
        stream.write(json.dumps({"key": service.key}).encode() + b"\n" + line)
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
        client_of(service).answers("L1-001", CELL))) for _ in range(2)]
    for t in threads:
        t.start()
    session.release.set()
    for t in threads:
        t.join(60)
    assert got == [ANSWERS, ANSWERS]


def test_a_service_that_is_gone_is_said(session: Session, tmp_path: Path) -> None:
    svc = serving(session, tmp_path)
    client = client_of(svc)
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
    svc = serving(session, deep)
    try:
        assert svc.address.startswith("tcp:127.0.0.1:")
        assert client_of(svc).answers("L1-001", CELL) == ANSWERS
    finally:
        svc.close()


def _raw(svc: AnswerService, data: bytes, *, read_all: bool = False) -> list[Any]:
    """What the service replies to ``data`` sent as is on a new connection: every reply line
    up to the service closing it (``read_all``), else the first."""
    import json
    import socket

    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(60)
        sock.connect(svc.address.partition(":")[2])
        stream = sock.makefile("rwb")
        stream.write(data)
        stream.flush()
        lines = stream.readlines() if read_all else [stream.readline()]
        return [json.loads(line) for line in lines]


QUESTION = (b'{"id": "L1-001", "model": "gpt-x", "strategy": "zero-shot", '
            b'"method": "baseline", "samples": [0]}\n')


@pytest.mark.parametrize("first", [
    b"", b"\n", b'{"key": "00"}\n', b'{"key": 7}\n', b"[1]\n", b"not json\n",
    b'{"key": "' + b"a" * 400 + b'"}\n',
], ids=["closed", "empty", "wrong", "number", "array", "text", "overlong"])
def test_a_connection_without_the_runs_key_is_refused_and_closed_unread(
        service: AnswerService, session: Session, first: bytes) -> None:
    """Whoever reaches the socket (loopback TCP is every local user's) gets one refusal line
    and the connection ends: the question behind a missing or wrong key is never read."""
    replies = _raw(service, first + QUESTION, read_all=True)
    assert len(replies) == 1 and "did not give the run's key" in replies[0]["error"]
    assert service.intruders == 1 and service.asked == 0 and session.asked == []


def test_the_key_is_compared_in_constant_time(service: AnswerService,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import hmac

    compared: list[tuple[bytes, bytes]] = []
    original = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return original(a, b)
    monkeypatch.setattr("pytest_graphinstruct.run.answer_service.hmac.compare_digest", spy)
    assert client_of(service).answers("L1-001", CELL, samples=[0]) == ANSWERS[:1]
    assert compared == [(service.key.encode(), service.key.encode())]


def test_a_silent_connection_is_closed_after_the_key_timeout(
        service: AnswerService, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pytest_graphinstruct.run.answer_service.KEY_TIMEOUT_S", 0.2)
    (reply,) = _raw(service, b"", read_all=False)  # nothing sent: the service gives up
    assert "did not give the run's key" in reply["error"] and service.intruders == 1


def test_each_service_has_its_own_long_random_key(session: Session, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one, two = serving(session, tmp_path / "a"), serving(session, tmp_path / "b")
    try:
        assert len(one.key) == 64 and int(one.key, 16) >= 0 and one.key != two.key
        with pytest.raises(GraphInstructError, match="did not give the run's key"):
            AnswerClient(one.address, two.key).answers("L1-001", CELL)
    finally:
        one.close()
        two.close()


@pytest.mark.parametrize(("inst_id", "cell", "samples", "why"), [
    ("L1-003", CELL, None, "'L1-003' .gpt-x-zero-shot. is not one of the run's items"),
    ("L1-001", Cell("gpt-x", "few-shot"), [0], "is not one of the run's items"),
    ("L1-001", Cell("other", "zero-shot"), None, "is not one of the run's items"),
    ("L1-001", CELL, [len(ANSWERS)], "sample 2 of 'L1-001' .gpt-x-zero-shot. is not planned "
     r"\(the run asks 2 sample\(s\) of it\)"),
    ("L1-001", CELL, [0, 99], "sample 99 of"),
], ids=["instruction", "strategy", "model", "next-sample", "far-sample"])
def test_only_the_runs_items_and_planned_samples_are_served(
        service: AnswerService, session: Session, inst_id: str, cell: Cell,
        samples: list[int] | None, why: str) -> None:
    """An admitted client (a worker) asking outside the run's plan is refused before the
    session sees the question: nothing is asked of an endpoint for it."""
    asked: list[int] = []
    session.fetcher = SimpleNamespace(ask=lambda inst, c, k: asked.append(k))
    client = client_of(service)
    with pytest.raises(GraphInstructError, match=f"refused: .*{why}"):
        client.answers(inst_id, cell, samples)
    assert session.asked == [] and asked == [] and service.refused == 1
    assert service.asked == 0


def test_items_expected_later_are_served_too(session: Session, tmp_path: Path) -> None:
    svc = AnswerService(cast(Any, session), tmp_path)
    try:
        client = client_of(svc)
        with pytest.raises(GraphInstructError, match="not one of the run's items"):
            client.answers("L1-001", CELL)
        svc.expect([(SimpleNamespace(id="L1-001"), CELL)])  # type: ignore[list-item]
        assert client.answers("L1-001", CELL) == ANSWERS
    finally:
        svc.close()


# -- --gi-samples=auto: the service runs the looks ---------------------------------------------

def test_under_auto_the_service_answers_the_oracle_too(tmp_path: Path) -> None:
    """Issue 48: the controller's looks decide every item's samples, so under auto every model
    of the run is answered by the service (the oracle included); recorded answers never."""
    suite = write_suite(tmp_path / "suite")
    auto = {"samples": "auto", "baseline": str(tmp_path / "base.json")}
    assert served_models(config(suite, model="oracle,gpt-x", **auto)) == {"oracle", "gpt-x"}
    assert served_models(config(suite, model="oracle", **auto)) == {"oracle"}
    assert served_models(config(suite, model="oracle,gpt-x", samples="3")) == {"gpt-x"}


class LookingSession(Session):
    """A session whose looks (``ask_adaptively``) run as the test says, and which notes when
    anything read an item's plan or answers while they ran."""

    def __init__(self, looks: Any) -> None:
        super().__init__()
        self.looks = looks
        self.looking = False
        self.read_while_looking: list[str] = []
        self.planned: dict[str, int] = {}
        self.arrived = threading.Event()  # a question reached the plan check
        self.suite = SimpleNamespace(get=self._get)
        self.inputs = SimpleNamespace(samples=self._samples)

    def _get(self, inst_id: str) -> Any:
        self.arrived.set()
        return SimpleNamespace(id=inst_id)

    def _samples(self, inst: Any, cell: Cell) -> int:
        if self.looking:
            self.read_while_looking.append(f"samples of {inst.id}")
        return self.planned.get(inst.id, 1)

    def answers(self, inst: Any, cell: Cell) -> tuple[Answer, ...]:
        if self.looking:
            self.read_while_looking.append(f"answers of {inst.id}")
        self.asked.append((inst.id, cell))
        return ANSWERS[:self._samples(inst, cell)]

    def ask_adaptively(self, items: Any, baselines: Any) -> str:
        self.looking = True
        try:
            return cast(str, self.looks(self, items, baselines))
        finally:
            self.looking = False


def _ask_in_thread(svc: AnswerService, inst_id: str = "L1-001") -> tuple[threading.Thread,
                                                                         list[Any]]:
    """A worker's question asked from another thread; its answers (or error) land in the
    list."""
    got: list[Any] = []

    def ask() -> None:
        try:
            got.append(client_of(svc).answers(inst_id, CELL))
        except GraphInstructError as exc:
            got.append(exc)
    thread = threading.Thread(target=ask)
    thread.start()
    return thread, got


def test_a_question_waits_for_the_looks_then_reads_what_they_asked(tmp_path: Path) -> None:
    """A worker asking while the looks run is answered once they have decided, with exactly
    the samples they asked for its item (two here, where a fixed plan's first look has one);
    nothing reads the item's plan or answers before."""
    def looks(session: LookingSession, items: Any, baselines: Any) -> str:
        thread, got = _ask_in_thread(svc)
        asking.append((thread, got))
        assert session.arrived.wait(60)  # the question is in, waiting for the plan
        assert got == [] and session.asked == []
        session.planned["L1-001"] = 2  # what the looks decided
        assert items == ["the selection"] and baselines == {"m": "base"}
        return "looks"

    asking: list[tuple[threading.Thread, list[Any]]] = []
    session = LookingSession(looks)
    svc = AnswerService(cast(Any, session), tmp_path, looks=True)
    try:
        svc.expect([(SimpleNamespace(id="L1-001"), CELL)])  # type: ignore[list-item]
        looked: Any = svc.run_looks(cast(Any, ["the selection"]), cast(Any, {"m": "base"}))
        assert looked == "looks"  # what the session's looks returned
        ((thread, got),) = asking
        thread.join(60)
        assert got == [ANSWERS[:2]]
        assert session.read_while_looking == []
        assert client_of(svc).answers("L1-001", CELL) == ANSWERS[:2]  # later: at once
        with pytest.raises(GraphInstructError, match=r"sample 2 of 'L1-001'.* not planned"):
            client_of(svc).answers("L1-001", CELL, samples=[2])
    finally:
        svc.close()


def test_a_question_outside_the_runs_items_is_refused_without_waiting(tmp_path: Path) -> None:
    session = LookingSession(lambda *_: "never run")
    svc = AnswerService(cast(Any, session), tmp_path, looks=True)
    try:
        with pytest.raises(GraphInstructError, match="not one of the run's items"):
            client_of(svc).answers("L1-009", CELL)
        assert svc.refused == 1
    finally:
        svc.close()


def test_looks_that_end_without_deciding_make_each_question_an_error(tmp_path: Path) -> None:
    """An interruption in the looks: the question waiting, and any later one, get an error that
    says so — never a hang, never a guess at the item's samples."""
    def looks(session: LookingSession, items: Any, baselines: Any) -> str:
        thread, got = _ask_in_thread(svc)
        asking.append((thread, got))
        assert session.arrived.wait(60)
        raise KeyboardInterrupt

    asking: list[tuple[threading.Thread, list[Any]]] = []
    session = LookingSession(looks)
    svc = AnswerService(cast(Any, session), tmp_path, looks=True)
    try:
        svc.expect([(SimpleNamespace(id="L1-001"), CELL)])  # type: ignore[list-item]
        with pytest.raises(KeyboardInterrupt):
            svc.run_looks([], {})
        ((thread, got),) = asking
        thread.join(60)
        (error,) = got
        assert isinstance(error, GraphInstructError)
        assert "looks ended before they decided each item's samples" in str(error)
        with pytest.raises(GraphInstructError, match="looks ended before they decided"):
            client_of(svc).answers("L1-001", CELL)
        assert session.asked == [] and svc.asked == 0
    finally:
        svc.close()


def test_a_service_closed_before_its_looks_answers_the_waiting_question(
        tmp_path: Path) -> None:
    session = LookingSession(lambda *_: "never run")
    svc = AnswerService(cast(Any, session), tmp_path, looks=True)
    svc.expect([(SimpleNamespace(id="L1-001"), CELL)])  # type: ignore[list-item]
    thread, got = _ask_in_thread(svc)
    assert session.arrived.wait(60)
    svc.close()
    thread.join(60)
    (error,) = got
    assert isinstance(error, GraphInstructError) and "closed before its --gi-samples=auto" in str(
        error)
    assert session.asked == []
