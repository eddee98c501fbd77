"""The OpenAI Batch API's JSONL files: the input files a batch run writes (each within the
provider's limits on requests and bytes per file) and the output and error files it reads back.

Promises:

* :func:`input_files` splits the request lines into as few files as the limits allow, in the
  order given; no file holds more than ``max_requests`` lines or more than ``max_bytes`` bytes.
  A single line over ``max_bytes`` is refused (:class:`~pytest_graphinstruct.errors.ModelError`,
  one line) rather than sent to be refused by the provider.
* :func:`read_results` never raises on what the endpoint sent: output and error files are
  endpoint output.  A line that is not JSON, not an object or has no string ``custom_id`` is
  skipped and counted (``skipped``); a line with a ``custom_id`` whose body is unusable becomes
  a final error for that request.  Only the first ``max_line_bytes`` of each line are read as a
  line (a longer one is damaged).  A second line naming a request another line answered
  already (or failed already, unless it is the answer) is damaged too: skipped, counted in
  ``duplicates`` and its id kept for the one line the run says; the first line stays.
  Every text taken from a file and shown is escaped (:func:`~.base.one_line`).
* What a line means (:class:`LineResult`): ``body`` (a 200 response's chat completion object),
  or ``error`` with ``retry`` saying whether a later batch may try again — an expired or
  cancelled line, a batch that failed as a whole, a 408/409/429 or 5xx status — or not (another
  4xx status: the request itself is wrong, as for an ordinary request).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.base import one_line

MAX_REQUESTS_PER_FILE = 50_000
"""OpenAI's limit on the requests of one batch input file."""
MAX_BYTES_PER_FILE = 200 * 1024 * 1024
"""OpenAI's limit on the size of one batch input file (200 MB)."""
MAX_LINE_BYTES = 8 * 1024 * 1024
"""The longest output or error line read (a longer one is damaged)."""
BATCH_ENDPOINT = "/v1/chat/completions"
"""The ``url`` of every request line (and the batch's ``endpoint``)."""

_RETRIED_STATUS = frozenset({408, 409, 429})


@dataclass(frozen=True)
class BatchLine:
    """One request line of an input file: its ``custom_id`` (the request's cache key) and the
    chat completion body the ordinary request would send."""

    custom_id: str
    body: dict[str, object]

    def encoded(self) -> bytes:
        """The JSONL line (newline included)."""
        line = {"custom_id": self.custom_id, "method": "POST", "url": BATCH_ENDPOINT,
                "body": self.body}
        return (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


@dataclass(frozen=True)
class InputFile:
    """One input file: its bytes and the custom ids of its lines, in order."""

    data: bytes
    custom_ids: tuple[str, ...]


def input_files(lines: Iterable[BatchLine], *, max_requests: int = MAX_REQUESTS_PER_FILE,
                max_bytes: int = MAX_BYTES_PER_FILE) -> list[InputFile]:
    """``lines`` as input files within ``max_requests`` lines and ``max_bytes`` bytes each.

    Raises:
        ModelError: one line alone is over ``max_bytes``.
    """
    if max_requests < 1 or max_bytes < 1:
        raise ValueError("batch file limits must be >= 1")
    files: list[InputFile] = []
    chunk: list[bytes] = []
    ids: list[str] = []
    size = 0
    for line in lines:
        data = line.encoded()
        if len(data) > max_bytes:
            raise ModelError(f"a batch request line of {len(data)} bytes is over the limit of "
                             f"{max_bytes} bytes per input file (custom_id {line.custom_id})")
        if chunk and (len(chunk) >= max_requests or size + len(data) > max_bytes):
            files.append(InputFile(b"".join(chunk), tuple(ids)))
            chunk, ids, size = [], [], 0
        chunk.append(data)
        ids.append(line.custom_id)
        size += len(data)
    if chunk:
        files.append(InputFile(b"".join(chunk), tuple(ids)))
    return files


@dataclass(frozen=True)
class LineResult:
    """What the endpoint said about one request line.

    Attributes:
        custom_id: the request's cache key.
        body: the chat completion object of a 200 response (``None`` otherwise).
        error: why there is no answer, one escaped line (``None`` with a body).
        retry: a later batch (or an ordinary request) may try again.
    """

    custom_id: str
    body: dict[str, Any] | None = None
    error: str | None = None
    retry: bool = False


@dataclass(frozen=True)
class ReadResults:
    """The lines of output and error files: per custom id its result (an output line wins
    over an error line of the same id), how many lines were skipped as damaged, and of those
    how many named a custom id another line already named (``duplicates``; the first such id,
    cut to 64 characters and escaped, in ``first_duplicate``)."""

    results: dict[str, LineResult]
    skipped: int
    duplicates: int = 0
    first_duplicate: str | None = None


@dataclass
class OutputDamage:
    """The damaged lines of every output and error file one runner read (:meth:`add`), said
    in one line (:meth:`summary`)."""

    skipped: int = 0
    duplicates: int = 0
    first_duplicate: str | None = None

    def add(self, read: ReadResults) -> None:
        """Count the damaged lines of one batch's files."""
        self.skipped += read.skipped
        self.duplicates += read.duplicates
        self.first_duplicate = self.first_duplicate or read.first_duplicate

    def summary(self) -> str | None:
        """One line when lines were damaged (not JSON, naming no request, or naming one another
        line already answered), else ``None``."""
        if not self.skipped:
            return None
        dup = (f", {self.duplicates} of them naming a request another line already answered "
               f"(first: custom_id {self.first_duplicate}; the first line was kept)"
               ) if self.duplicates else ""
        return f"batch output: {self.skipped} damaged line(s) skipped{dup}"


def split_lines(data: bytes, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The non-empty lines of ``data``; a line over ``max_line_bytes`` is cut there (and so
    reads as damaged)."""
    for raw in data.split(b"\n"):
        raw = raw.strip()
        if raw:
            yield raw[:max_line_bytes]


def read_results(files: Iterable[bytes], *, max_line_bytes: int = MAX_LINE_BYTES) -> ReadResults:
    """Every line of the output and error files ``files`` (see the module's promises)."""
    results: dict[str, LineResult] = {}
    skipped = duplicates = 0
    first: str | None = None
    for data in files:
        for raw in split_lines(data, max_line_bytes):
            result = _line_result(raw)
            if result is None:
                skipped += 1
                continue
            kept = results.get(result.custom_id)
            if kept is None:
                results[result.custom_id] = result
                continue
            if kept.body is None and result.body is not None:  # an answer over an error line
                results[result.custom_id] = result
                continue
            # another line for a request already answered (or failed twice): which is right
            # cannot be told, so the later one is damaged — skipped, counted, said once
            skipped += 1
            duplicates += 1
            if first is None:
                first = one_line(result.custom_id, limit=64)
    return ReadResults(results, skipped, duplicates, first)


def _line_result(raw: bytes) -> LineResult | None:
    """One output or error line's result; ``None`` when it names no request."""
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(obj, dict):
        return None
    custom_id = obj.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id or len(custom_id) > 512:
        return None
    error = obj.get("error")
    if error:
        code, message = _error_parts(error)
        return LineResult(custom_id, error=one_line(f"batch request {code}: {message}"),
                          retry=True)
    response = obj.get("response")
    if not isinstance(response, dict):
        return LineResult(custom_id, error="batch output line without a response",
                          retry=False)
    status = response.get("status_code")
    body = response.get("body")
    if status == 200 and isinstance(body, dict):
        return LineResult(custom_id, body=body)
    if not isinstance(status, int) or isinstance(status, bool):
        return LineResult(custom_id, error="batch output line without a status code")
    _, message = _error_parts(body.get("error") if isinstance(body, dict) else None)
    retry = status in _RETRIED_STATUS or status >= 500
    return LineResult(custom_id, error=one_line(f"batch request failed: HTTP {status}: "
                                                f"{message}"), retry=retry)


def _error_parts(error: Any) -> tuple[str, str]:
    """An error object's code and message (``"error"`` / ``"no message"`` when absent)."""
    if not isinstance(error, dict):
        return "error", "no message" if not isinstance(error, str) else error[:300]
    code = error.get("code")
    message = error.get("message")
    return (str(code)[:80] if code else "error",
            str(message)[:300] if message else "no message")
