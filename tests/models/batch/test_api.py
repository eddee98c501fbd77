"""The Batch API calls: a batch (or an input file) the endpoint answers HTTP 404 for raises
:class:`BatchNotFound` naming it, escaped and bounded; any other failure passes unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from pytest_graphinstruct.models.backends.openai_backend import OpenAIBackend
from pytest_graphinstruct.models.batch.api import BatchApi, BatchNotFound
from pytest_graphinstruct.testing.batch_server import FakeBatchAPI
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


def api_of(server: FakeOpenAIServer) -> BatchApi:
    backend = OpenAIBackend(server.base_url, "fake-model", api_key="sk-test", max_retries=0)
    return BatchApi(backend.client, 10.0)


def test_a_forgotten_batch_and_an_unknown_input_file_are_not_found(
        server: FakeOpenAIServer) -> None:
    fake = FakeBatchAPI(server)
    api = api_of(server)
    file_id = api.upload(b'{"custom_id": "k", "body": {}}\n', "in.jsonl")
    made = api.create(file_id)
    assert api.retrieve(made.batch_id).batch_id == made.batch_id
    fake.forget(made.batch_id)
    with pytest.raises(BatchNotFound, match=f"does not know the batch {made.batch_id} "
                                            r"\(HTTP 404\)$"):
        api.retrieve(made.batch_id)
    with pytest.raises(BatchNotFound, match=r"does not know the input file file-other"):
        api.create("file-other")  # another account's file, say
    assert api.create(file_id).batch_id != made.batch_id  # ids are never reused


class _Failing:
    """A client whose batch calls raise ``exc``."""

    def __init__(self, exc: Exception) -> None:
        self.batches = SimpleNamespace(retrieve=self._raise, create=self._raise)
        self._exc = exc

    def with_options(self, **_: object) -> _Failing:
        return self

    def _raise(self, *_: object, **__: object) -> None:
        raise self._exc


class _HttpError(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code


def test_only_a_404_is_not_found_and_what_it_names_is_escaped_and_bounded() -> None:
    hostile = "batch_\x1b[2J" + "x" * 500
    with pytest.raises(BatchNotFound) as caught:
        BatchApi(_Failing(_HttpError(404)), 1.0).retrieve(hostile)
    message = str(caught.value)
    assert "\x1b" not in message and "\\x1b[2J" in message
    assert len(message) <= 200 and message.endswith("… (HTTP 404)")
    for exc in (_HttpError(500), _HttpError(409), ConnectionError("reset")):
        with pytest.raises(type(exc)) as other:
            BatchApi(_Failing(exc), 1.0).retrieve("batch_1")
        assert other.value is exc  # retried (or given up on) by the runner, as before
