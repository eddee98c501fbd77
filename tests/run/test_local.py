"""``LocalHost``: the embedded model found, its server started once (what a worker needs to reach
it, as text), stopped idempotently.  The server here is a stand-in: no model runs."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.run import local
from pytest_graphinstruct.run.local import LocalHost


class FakeServer:
    """Counts starts and stops; ready after ``startup_s``."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.startup_s: float | None = None
        self.starts = self.stops = 0

    def start(self) -> None:
        self.starts += 1
        self.startup_s = 1.5

    def stop(self) -> None:
        self.stops += 1


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "LocalServer", FakeServer)
    monkeypatch.setattr(local, "endpoint_info", lambda server: {
        "base_url": "http://127.0.0.1:8001/v1", "port": 8001, "describe": server.model})


def test_find_locates_the_installed_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "find_local_model", lambda: "the model")
    host = LocalHost.find()
    assert host.model == "the model" and host.server is None


def test_find_says_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> None:
        raise ModelError("install pytest-graphinstruct[local]")

    monkeypatch.setattr(local, "find_local_model", missing)
    with pytest.raises(ModelError, match="install"):
        LocalHost.find()


@pytest.mark.usefixtures("fake_server")
def test_start_gives_what_a_worker_needs_as_text() -> None:
    host = LocalHost("tiny")
    assert host.startup_s is None  # not started
    info = host.start()
    assert info == {"base_url": "http://127.0.0.1:8001/v1", "port": "8001", "describe": "tiny"}
    assert isinstance(host.server, FakeServer) and host.server.starts == 1
    assert host.startup_s == 1.5


@pytest.mark.usefixtures("fake_server")
def test_stop_is_idempotent_and_nothing_before_a_start() -> None:
    host = LocalHost("tiny")
    host.stop()  # never started: nothing to stop
    host.start()
    host.stop()
    host.stop()  # each handed to the server, whose own stop is idempotent
    assert isinstance(host.server, FakeServer) and host.server.stops == 2
