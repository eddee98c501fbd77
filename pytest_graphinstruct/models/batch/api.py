"""The Batch API calls a batch run makes — upload an input file, create a batch, retrieve it,
find it by its input file, download an output file — through the ``openai`` client, each read
into a typed record (:class:`BatchStatus`).

Promises: every value read from a response is checked for its type (a missing or odd field
reads as absent, never raises past :meth:`BatchApi.status_of`); a downloaded file is bounded
(:class:`~pytest_graphinstruct.errors.ModelError` past ``max_bytes``).  A batch (or the input
file a batch is created from) that the endpoint answers HTTP 404 for raises
:class:`BatchNotFound` from :meth:`BatchApi.retrieve` and :meth:`BatchApi.create`: deleted, or
another account's or endpoint's — asking again will not find it.  Otherwise the calls raise what
the client raises (the caller, :class:`~.runner.BatchRunner`, retries or gives up); none
is retried here.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.base import one_line
from pytest_graphinstruct.models.batch.files import BATCH_ENDPOINT

COMPLETION_WINDOW = "24h"
"""The only completion window the OpenAI Batch API offers."""
MAX_OUTPUT_BYTES = 1024 * 1024 * 1024
"""The largest output or error file downloaded (1 GiB)."""


@dataclass(frozen=True)
class BatchStatus:
    """What the endpoint says of one batch.

    Attributes:
        batch_id: its id.
        status: ``validating``, ``in_progress``, ``finalizing``, ``completed``, ``failed``,
            ``expired``, ``cancelling``, ``cancelled`` (or what else the endpoint says, escaped).
        input_file_id / output_file_id / error_file_id: its files (``None``: none).
        completed / failed / total: its request counts.
        errors: the batch's own errors (a failed batch), one line (``None``: none).
    """

    batch_id: str
    status: str
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    completed: int = 0
    failed: int = 0
    total: int = 0
    errors: str | None = None


class BatchNotFound(ModelError):
    """The endpoint answered HTTP 404 for a batch, or for the input file of a batch to create:
    it does not know it (deleted, or made with another account or at another endpoint)."""


class BatchApi:
    """The files and batches endpoints of one ``openai`` client.

    Args:
        client: an ``openai.OpenAI`` client (the backend's, with its key and base URL).
        timeout_s: the timeout of each call.
    """

    def __init__(self, client: object, timeout_s: float) -> None:
        self._client: Any = cast(Any, client).with_options(timeout=timeout_s)

    def upload(self, data: bytes, name: str) -> str:
        """Upload an input file (``purpose=batch``); its file id."""
        created = self._client.files.create(file=(name, data, "application/jsonl"),
                                            purpose="batch")
        return _text(getattr(created, "id", None)) or _missing("file id")

    def create(self, input_file_id: str, metadata: dict[str, str] | None = None) -> BatchStatus:
        """Create the batch of an uploaded input file.

        Raises:
            BatchNotFound: the endpoint does not know the input file (HTTP 404).
        """
        with _not_found(f"input file {input_file_id}"):
            made = self._client.batches.create(
                input_file_id=input_file_id, endpoint=BATCH_ENDPOINT,
                completion_window=COMPLETION_WINDOW, metadata=metadata)
        return self.status_of(made)

    def retrieve(self, batch_id: str) -> BatchStatus:
        """The batch's status now.

        Raises:
            BatchNotFound: the endpoint does not know the batch (HTTP 404).
        """
        with _not_found(f"batch {batch_id}"):
            found = self._client.batches.retrieve(batch_id)
        return self.status_of(found)

    def find_by_input(self, input_file_id: str) -> BatchStatus | None:
        """The batch made of ``input_file_id`` among those the endpoint lists (``None``:
        none): a run killed between creating a batch and recording it finds it here."""
        for batch in self._client.batches.list(limit=100):
            status = self.status_of(batch)
            if status.input_file_id == input_file_id:
                return status
        return None

    def content(self, file_id: str, max_bytes: int = MAX_OUTPUT_BYTES) -> bytes:
        """An output or error file's bytes.

        Raises:
            ModelError: the file is over ``max_bytes``.
        """
        chunks: list[bytes] = []
        size = 0
        with self._client.files.with_streaming_response.content(file_id) as response:
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise ModelError(f"batch file {one_line(file_id, limit=80)} is over "
                                     f"{max_bytes} bytes; not read")
                chunks.append(chunk)
        return b"".join(chunks)

    @staticmethod
    def status_of(batch: object) -> BatchStatus:
        """A batch object (the client's, or a plain namespace) as a :class:`BatchStatus`."""
        counts = getattr(batch, "request_counts", None)
        errors = getattr(batch, "errors", None)
        data = getattr(errors, "data", None) if errors is not None else None
        messages = [_text(getattr(e, "message", None)) or "" for e in data or ()]
        return BatchStatus(
            batch_id=_text(getattr(batch, "id", None)) or _missing("batch id"),
            status=one_line(_text(getattr(batch, "status", None)) or "unknown", limit=40),
            input_file_id=_text(getattr(batch, "input_file_id", None)),
            output_file_id=_text(getattr(batch, "output_file_id", None)),
            error_file_id=_text(getattr(batch, "error_file_id", None)),
            completed=_count(getattr(counts, "completed", 0)),
            failed=_count(getattr(counts, "failed", 0)),
            total=_count(getattr(counts, "total", 0)),
            errors=one_line("; ".join(m for m in messages if m)) if any(messages) else None)


@contextmanager
def _not_found(what: str) -> Iterator[None]:
    """Turn the client's HTTP 404 (any exception with ``status_code`` 404) into
    :class:`BatchNotFound` naming ``what`` (escaped, bounded); anything else passes."""
    try:
        yield
    except Exception as exc:
        if getattr(exc, "status_code", None) != 404:
            raise
        raise BatchNotFound(one_line(f"the endpoint does not know the {what}", limit=160)
                            + " (HTTP 404)") from None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _missing(what: str) -> str:
    raise ModelError(f"the batch endpoint's response has no {what}")
