"""A fake OpenAI Batch API on a :class:`~.openai_server.FakeOpenAIServer`: the files endpoints
(upload, content download) and the batches endpoints (create, retrieve, list, cancel), whose
batches move ``validating`` → ``in_progress`` → ``completed`` / ``expired`` under the test's
control (:class:`FakeBatchAPI`).  Never a real provider.

* Each created batch's request lines are counted by ``custom_id`` (:attr:`FakeBatchAPI.
  submitted`), so a test can say no request was submitted twice.
* A batch is ``in_progress`` from its creation; with ``hold=False`` (the default) its first
  retrieve finishes it, with ``hold=True`` it stays so until :meth:`FakeBatchAPI.finish`.
  :meth:`FakeBatchAPI.wait_for_batches` / :meth:`FakeBatchAPI.wait_for_polls` block until
  that many batches were created / retrieves made (events, never a sleep).
* ``line_fault(custom_id, submission)`` (``submission``: 1 for a line's first batch) says what
  becomes of a line: ``None`` (answered as the chat route would answer its body), ``"failed"``
  (HTTP 500 in the error file), ``"expired"`` (``batch_expired`` in the error file; the batch
  ends ``expired``), ``"refused"`` (HTTP 400), ``"malformed"`` (a damaged output line) or
  ``"duplicate"`` (answered on two output lines).
* ``batch_fault(number)`` (``number``: 1 for the first batch created) ends a batch as a whole:
  ``"failed"`` (the endpoint refused it: no output file, its ``errors`` say why) or
  ``"cancelled"`` (cancelled by the endpoint before any line ran: no output file);
  :meth:`FakeBatchAPI.finish` takes the same as ``whole``.
* :meth:`FakeBatchAPI.forget` deletes a batch: every later request naming it is answered 404,
  as a provider answers for a deleted batch or another account's; batch ids are never reused.
* With :attr:`FakeBatchAPI.hold_creates` a request to create a batch waits (counted in
  :attr:`~FakeBatchAPI.held_creates`, :meth:`~FakeBatchAPI.wait_for_held_creates`) until
  :meth:`~FakeBatchAPI.drop_creates` answers it HTTP 500 without making the batch: a run
  killed meanwhile has uploaded its input file and made no batch of it.
* :meth:`FakeBatchAPI.restart` is a restarted server process: every batch and file is
  forgotten (404 from then on) and ids are numbered anew from 1, so a new batch or file may get
  the id of a forgotten one; only the test's counts (:attr:`~FakeBatchAPI.submitted`, the
  server's token counts) go on.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

LineFault = Callable[[str, int], "str | None"]
BatchFault = Callable[[int], "str | None"]
_JSON = "application/json"


@dataclass
class _Batch:
    batch_id: str
    input_file_id: str
    lines: list[dict[str, Any]]
    created: float
    status: str = "in_progress"
    output_file_id: str | None = None
    error_file_id: str | None = None
    completed: int = 0
    failed: int = 0
    polls: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    errors: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.batch_id, "object": "batch", "endpoint": "/v1/chat/completions",
                "errors": None if self.errors is None else {"object": "list", "data": [
                    {"code": "scripted", "message": self.errors, "param": None,
                     "line": None}]}, "input_file_id": self.input_file_id,
                "completion_window": "24h", "status": self.status,
                "output_file_id": self.output_file_id, "error_file_id": self.error_file_id,
                "created_at": int(self.created), "metadata": self.metadata,
                "request_counts": {"total": len(self.lines), "completed": self.completed,
                                   "failed": self.failed}}


class FakeBatchAPI:
    """The fake Batch API of ``server`` (see the module's promises).

    Args:
        server: the fake server whose routes it adds (and whose chat answers it gives).
        hold: batches stay ``in_progress`` until :meth:`finish`.
        line_fault: what becomes of each line (``None``: every line is answered).
        batch_fault: which batches end as a whole ``failed`` or ``cancelled``.
    """

    def __init__(self, server: FakeOpenAIServer, *, hold: bool = False,
                 line_fault: LineFault | None = None,
                 batch_fault: BatchFault | None = None) -> None:
        self.server = server
        self.hold = hold
        self.line_fault = line_fault
        self.batch_fault = batch_fault
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, _Batch] = {}
        self.submitted: Counter[str] = Counter()  #: request lines per custom_id, all batches
        self.hold_creates = False  #: a create request waits for drop_creates()
        self.held_creates = 0  #: create requests that waited so
        self._drop = 0  # held create requests to answer 500 now
        self._made = 0  # batches created, forgotten ones included (ids are never reused)
        self._lock = threading.Condition()
        server.route(self.route)

    # -- the test's side -----------------------------------------------------------------------

    def wait_for_batches(self, n: int, timeout: float = 60.0) -> bool:
        """Block until ``n`` batches were created (``False``: ``timeout`` passed first)."""
        with self._lock:
            return self._lock.wait_for(lambda: len(self.batches) >= n, timeout)

    def wait_for_polls(self, batch_id: str, n: int, timeout: float = 60.0) -> bool:
        """Block until ``batch_id`` was retrieved ``n`` times."""
        with self._lock:
            return self._lock.wait_for(
                lambda: batch_id in self.batches and self.batches[batch_id].polls >= n, timeout)

    def batch_ids(self) -> list[str]:
        """The batches created, oldest first."""
        with self._lock:
            return list(self.batches)

    def forget(self, batch_id: str) -> None:
        """Delete ``batch_id``: from now on the endpoint answers 404 for it."""
        with self._lock:
            del self.batches[batch_id]

    def wait_for_held_creates(self, n: int, timeout: float = 60.0) -> bool:
        """Block until ``n`` create requests wait (:attr:`hold_creates`)."""
        with self._lock:
            return self._lock.wait_for(lambda: self.held_creates >= n, timeout)

    def drop_creates(self) -> None:
        """Answer every waiting create request HTTP 500, no batch made, and hold no more."""
        with self._lock:
            self.hold_creates = False
            self._drop = self.held_creates
            self._lock.notify_all()

    def restart(self) -> None:
        """Forget every batch and file, as a restarted server process does, and number new
        ones from 1 again (ids of forgotten ones are reused); :attr:`submitted` goes on."""
        with self._lock:
            self.batches.clear()
            self.files.clear()
            self._made = 0
            self._lock.notify_all()

    def finish(self, batch_id: str, whole: str | None = None) -> None:
        """End ``batch_id`` now: its lines answered (or failed, as ``line_fault`` says), its
        output and error files written; or, with ``whole`` (or as ``batch_fault`` says),
        ``failed`` or ``cancelled`` as a whole, no line run."""
        with self._lock:
            batch = self.batches[batch_id]
            if batch.status != "in_progress":
                return
            whole = whole or (self.batch_fault(list(self.batches).index(batch_id) + 1)
                              if self.batch_fault else None)
            if whole is not None:
                batch.status = whole
                batch.errors = f"scripted: the batch {whole}" if whole == "failed" else None
                self._lock.notify_all()
                return
            output: list[bytes] = []
            errors: list[bytes] = []
            expired = False
            for line in batch.lines:
                custom_id = str(line.get("custom_id"))
                fault = self.line_fault(custom_id, self._submission(batch, custom_id)) \
                    if self.line_fault else None
                expired |= fault == "expired"
                answered = fault in (None, "malformed", "duplicate")
                (output if answered else errors).append(
                    self._result(custom_id, line.get("body") or {}, fault))
                if fault == "duplicate":  # the same request answered on a second line too
                    output.append(self._result(custom_id, line.get("body") or {}, None))
                if answered:
                    batch.completed += 1
                else:
                    batch.failed += 1
            batch.output_file_id = self._file(b"".join(output)) if output else None
            batch.error_file_id = self._file(b"".join(errors)) if errors else None
            batch.status = "expired" if expired else "completed"
            self._lock.notify_all()

    # -- the routes ----------------------------------------------------------------------------

    def route(self, method: str, path: str, headers: dict[str, str],
              body: bytes) -> tuple[int, bytes, str] | None:
        """Answer a files or batches request (``None``: another route's)."""
        parts = path.split("?", 1)[0].strip("/").split("/")
        if len(parts) < 2 or parts[1] not in ("files", "batches"):
            return None
        with self._lock:
            try:
                if parts[1] == "files":
                    return self._files(method, parts[2:], headers, body)
                return self._batches(method, parts[2:], body)
            except (KeyError, ValueError) as exc:
                return _error(404 if isinstance(exc, KeyError) else 400, repr(exc))

    def _files(self, method: str, rest: list[str], headers: dict[str, str],
               body: bytes) -> tuple[int, bytes, str]:
        if method == "POST" and not rest:
            data = _multipart_file(headers.get("Content-Type", ""), body)
            file_id = self._file(data)
            return _ok({"id": file_id, "object": "file", "bytes": len(data), "created_at":
                        int(time.time()), "filename": "input.jsonl", "purpose": "batch",
                        "status": "processed"})
        if method == "GET" and len(rest) == 2 and rest[1] == "content":
            return 200, self.files[rest[0]], "application/octet-stream"
        raise ValueError(f"no route {method} files/{'/'.join(rest)}")

    def _batches(self, method: str, rest: list[str], body: bytes) -> tuple[int, bytes, str]:
        if method == "POST" and not rest:
            if self.hold_creates:
                self.held_creates += 1
                self._lock.notify_all()
                self._lock.wait_for(lambda: self._drop > 0)
                self._drop -= 1
                return _error(500, "scripted: the batch was not created")
            args = json.loads(body.decode("utf-8"))
            data = self.files[args["input_file_id"]]
            lines = [json.loads(x) for x in data.decode("utf-8").splitlines() if x.strip()]
            self._made += 1
            batch = _Batch(f"batch_{self._made}", args["input_file_id"], lines,
                           time.time(), metadata=dict(args.get("metadata") or {}))
            for line in lines:
                self.submitted[str(line.get("custom_id"))] += 1
            self.batches[batch.batch_id] = batch
            self._lock.notify_all()
            return _ok({**batch.to_json(), "status": "validating"})
        if method == "GET" and not rest:
            return _ok({"object": "list", "data": [b.to_json() for b in self.batches.values()],
                        "has_more": False})
        batch = self.batches[rest[0]]
        if method == "GET" and len(rest) == 1:
            batch.polls += 1
            self._lock.notify_all()
            if not self.hold:
                self.finish(batch.batch_id)
            return _ok(batch.to_json())
        if method == "POST" and rest[1:] == ["cancel"]:
            batch.status = "cancelled"
            return _ok(batch.to_json())
        raise ValueError(f"no route {method} batches/{'/'.join(rest)}")

    # -- helpers -------------------------------------------------------------------------------

    def _submission(self, batch: _Batch, custom_id: str) -> int:
        """Which submission of ``custom_id`` ``batch`` holds (1: its first batch)."""
        order = list(self.batches)
        return sum(1 for b in order[: order.index(batch.batch_id) + 1]
                   if any(x.get("custom_id") == custom_id for x in self.batches[b].lines))

    def _file(self, data: bytes) -> str:
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = data
        return file_id

    def _result(self, custom_id: str, body: dict[str, Any], fault: str | None) -> bytes:
        if fault == "malformed":
            return f'{{"custom_id": "{custom_id}", "response": {{"status_code": 200, "bo\n'.encode()
        line: dict[str, Any] = {"id": f"batch_req_{custom_id[:8]}", "custom_id": custom_id,
                                "response": None, "error": None}
        if fault in (None, "duplicate"):
            line["response"] = {"status_code": 200, "request_id": "req",
                                "body": self.server.completion(body)}
        elif fault == "expired":
            line["error"] = {"code": "batch_expired", "message": "This request could not be "
                             "executed before the completion window expired."}
        else:
            status = 400 if fault == "refused" else 500
            line["response"] = {"status_code": status, "request_id": "req", "body": {
                "error": {"message": f"scripted {fault}", "type": "server_error"}}}
        return (json.dumps(line) + "\n").encode("utf-8")


def _multipart_file(content_type: str, body: bytes) -> bytes:
    """The ``file`` part of a multipart/form-data upload."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body)
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                return payload
    raise ValueError("no file part in the upload")


def _ok(obj: Any) -> tuple[int, bytes, str]:
    return 200, json.dumps(obj).encode("utf-8"), _JSON


def _error(status: int, message: str) -> tuple[int, bytes, str]:
    return status, json.dumps({"error": {"message": message, "type": "invalid_request_error",
                                         "code": None}}).encode("utf-8"), _JSON
