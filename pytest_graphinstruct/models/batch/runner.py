"""The batch run's one thread: it gathers the requests waiting for answers into batches, polls
the live batches, and hands each request its answer (:class:`BatchRunner`).

Promises:

* **One batch per round.**  Requests are gathered until none has arrived for ``quiet_s``
  seconds (or a file's worth is waiting, or the oldest has waited ``gather_s``), then written
  as input files (:func:`~.files.input_files`, within the limits) and submitted, one batch
  per file.  An iterative method's next round is asked only when its previous answers came
  back, so each round forms its own batch.
* **Never submitted twice.**  Every input file is recorded in the ledger
  (:class:`~.ledger.BatchLedger`) before its batch is created, the batch id right after;
  a request whose key is in a live batch of the ledger (this run's or a killed run's) is not
  submitted again: it waits for that batch.  A run killed between upload and record re-uploads
  (an input file is not a request); one killed between create and record finds its batch by
  the input file (:meth:`~.api.BatchApi.find_by_input`), and where none is found the file is
  marked not created (below).
* **Results become ordinary answers**: each 200 line through :func:`~.answers.answer_of`;
  a line whose request no one in this process waits for (a killed run's batch, read before the
  rerun asks) is written to the answer cache under its key at once, so the scheduler finds it
  there.  Lines a batch failed, expired or cancelled (and a line missing from a finished
  batch) are retried: in the next batch, at most ``max_tries`` batches in all, or — with
  ``fallback`` — at once as an ordinary request of the wrapped backend.  A line the endpoint
  refused for the request's own fault (a 4xx) is the request's error answer, like an ordinary
  request's.  A retried line whose request no one here waits for is dropped: a later ask
  submits it (once).
* A batch the endpoint answers HTTP 404 for (:class:`~.api.BatchNotFound`: deleted, or
  the ledger came from another account or endpoint) is marked gone in the ledger (never polled
  again, by this run or a later one) and its requests are retried as a failed batch's are (a
  new batch, within ``max_tries``; or the fallback) — those this run waits for; the others
  are asked as the run needs them.  :attr:`BatchRunner.gone` says it once, with how many
  were asked again.
* **Only what this run asked is submitted**, so the run's cost cap (reserved by the
  scheduler for each request it asks) covers every line it submits: a killed run's input file
  without a batch (none found by its input file) is marked not created
  (:attr:`BatchRunner.never_created`), never made into a batch of requests nobody asked.
* **Alone on its cache folder**: the runner holds the folder's batch lease
  (:mod:`~.caching.lease`) from its start to :meth:`BatchRunner.cancel`; another run on the
  folder is refused, and this one is refused while another holds it
  (:class:`~.caching.lease.CacheBusy`).
* A request whose line is out at the endpoint (in a live batch) but whose waiter got an error
  (the run interrupted, or the API failed ``call_tries`` times in a row) may still be billed:
  :meth:`BatchRunner.unread` says so, and the cost cap keeps its worst case.
* An API call that fails (upload, create, poll, download) is tried again at the next poll, up
  to ``call_tries`` times in a row; then the requests it concerned get an error answer naming
  the failure.  Nothing the endpoint sends stops the thread.
* :meth:`BatchRunner.cancel` answers every waiting request with an error at once and ends the
  thread; the batches stay on the endpoint and in the ledger, so the next run resumes them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from pytest_graphinstruct.answers import Answer, FailureKind
from pytest_graphinstruct.models.base import Request, one_line, quiet_thread
from pytest_graphinstruct.models.batch.api import BatchApi, BatchNotFound, BatchStatus
from pytest_graphinstruct.models.batch.files import (
    MAX_BYTES_PER_FILE,
    MAX_REQUESTS_PER_FILE,
    BatchLine,
    InputFile,
    LineResult,
    OutputDamage,
    input_files,
    read_results,
)
from pytest_graphinstruct.models.batch.ledger import (
    GONE_STATE,
    NOT_CREATED_STATE,
    TERMINAL_STATES,
    BatchLedger,
    GoneBatches,
    LedgerBatch,
    RequestMeta,
)
from pytest_graphinstruct.models.caching.lease import BATCH, CacheLease
from pytest_graphinstruct.models.caching.lease import acquire as acquire_lease
from pytest_graphinstruct.models.caching.snapshot import Snapshot

Served = tuple[Answer, Snapshot]


@dataclass(frozen=True)
class BatchSettings:
    """How a batch run gathers, submits and polls (``--gi-batch-*``; docs/MODELS.md)."""

    poll_s: float = 30.0  #: seconds between two polls of the live batches
    quiet_s: float = 2.0  #: a round is complete when no request arrived for this long
    gather_s: float = 60.0  #: the longest a request waits to be put in a batch
    max_requests: int = MAX_REQUESTS_PER_FILE  #: request lines per input file
    max_bytes: int = MAX_BYTES_PER_FILE  #: bytes per input file
    max_tries: int = 3  #: batches one request may go in (failed or expired lines retried)
    call_tries: int = 5  #: failed API calls in a row before their requests get an error
    fallback: bool = False  #: retry failed/expired lines as ordinary requests instead


class BatchRunner:
    """The gathering, submitting and polling of one backend's batches (module promises).

    Args:
        api, ledger: the endpoint's files and batches calls; the cache folder's ledger.
        endpoint: the backend's endpoint (the cache keys' and the ledger entries').
        body: the chat completion body of a request (the ordinary request's, exactly).
        answer: a 200 line's body as an answer (the request when known, the latency).
        store: caches an answer nobody here waits for (key, request metadata, answer, snapshot).
        fallback: an ordinary request's answer (the wrapped backend), for ``gi_batch_fallback``.
        settings: the run's batch settings.

    Raises:
        CacheBusy: another run holds the cache folder (:mod:`~.caching.lease`).
        LedgerUnreadable: the ledger cannot be read.
    """

    def __init__(self, api: BatchApi, ledger: BatchLedger, endpoint: str, *,
                 body: Callable[[Request], dict[str, object]],
                 answer: Callable[[dict[str, object], Request | None, float], Served],
                 store: Callable[[str, RequestMeta, Answer, Snapshot], None],
                 fallback: Callable[[Request], Served], settings: BatchSettings) -> None:
        self.api, self.ledger, self.endpoint, self.settings = api, ledger, endpoint, settings
        self._body, self._answer, self._store, self._fallback = body, answer, store, fallback
        self._cond = threading.Condition()
        self._waiters: dict[str, tuple[Future[Served], Request, float]] = {}
        self._pending: list[str] = []
        self._first_at = self._last_at = 0.0
        self._tries: dict[str, int] = {}
        self._unclaimed: dict[str, Served] = {}  # answers read before anyone here asked
        self._ordinary: set[str] = set()  # keys sent as ordinary requests (fallback)
        self._unread: set[str] = set()  # keys out at the endpoint whose waiter got an error
        folder = None if ledger.path is None else ledger.path.parent
        self._lease: CacheLease | None = None if folder is None else acquire_lease(folder, BATCH)
        #: why the folder's lease could not be taken (one line; ``None``: taken, or no folder)
        self.lease_warning = None if self._lease is None else self._lease.warning
        try:
            self.resumed = tuple(ledger.live(endpoint))  #: earlier runs' live batches, resumed
        except BaseException:
            self._release()
            raise
        self._live = {k: b.entry for b in self.resumed for k in b.custom_ids}
        self._own: set[str] = set()  # the ledger entries this run added
        self._dealt: list[str] = [b.entry for b in self.resumed]  # entries this run deals with
        self._failures = 0
        self._next_poll = 0.0
        self.damage = OutputDamage()  #: the damaged lines of the files read
        self.gone = GoneBatches()  #: the ledger batches the endpoint did not know (HTTP 404)
        #: the input files a killed run left without a batch (marked not created)
        self.never_created = GoneBatches(never_created=True)
        self._closed: str | None = None
        self._closed_kind: FailureKind = "cancelled"
        self._fallbacks = ThreadPoolExecutor(4, "gi-batch-fallback", initializer=quiet_thread)
        self._thread = threading.Thread(target=self._loop, name="gi-batch", daemon=True)
        self._thread.start()

    # -- the callers' side ---------------------------------------------------------------------

    def ask(self, key: str, request: Request) -> Future[Served]:
        """The future answer of ``request`` (cache key ``key``): one already waited for, the
        live batch's that holds the key, or a new line of the next batch."""
        with self._cond:
            if key in self._waiters:
                return self._waiters[key][0]
            fut: Future[Served] = Future()
            unclaimed = self._unclaimed.pop(key, None)
            if unclaimed is not None:  # read (and cached) before this ask came
                fut.set_result(unclaimed)
                return fut
            if self._closed is not None:
                fut.set_result((Answer(error=self._closed, calls=0, failure_kind=self._closed_kind),
                                Snapshot()))
                return fut
            self._waiters[key] = (fut, request, time.monotonic())
            if key not in self._live:
                self._enqueue(key)
            self._cond.notify_all()
        return fut

    def cancel(self, reason: str, kind: FailureKind = "cancelled") -> None:
        """Answer every waiting request with ``reason`` and end the thread (the batches stay
        on the endpoint and in the ledger for the next run)."""
        with self._cond:
            if self._closed is None:
                self._closed = one_line(reason)
                self._closed_kind = kind
            waiters, self._waiters, self._pending = self._waiters, {}, []
            self._unread.update(k for k in waiters if k in self._live)
            self._cond.notify_all()
        for fut, _, _ in waiters.values():
            if not fut.done():
                fut.set_result((Answer(error=self._closed, calls=0, failure_kind=self._closed_kind),
                                Snapshot()))
        self._fallbacks.shutdown(wait=False, cancel_futures=True)
        self._release()

    def _release(self) -> None:
        """Give the cache folder's batch lease back (nothing is submitted any more)."""
        lease, self._lease = self._lease, None
        if lease is not None:
            lease.release()

    def statuses(self) -> list[LedgerBatch]:
        """The batches this run deals with, as the ledger knows them, oldest first: the live
        ones at the start (a killed run's), then this run's own; older runs' finished batches
        are not counted."""
        by_entry = {b.entry: b for b in self.ledger.batches(self.endpoint)}
        with self._cond:
            dealt = list(self._dealt)
        return [by_entry[e] for e in dealt if e in by_entry]

    def in_flight(self) -> list[LedgerBatch]:
        """The batches this run dealt with that are still live (submitted, not read: billed
        when they finish)."""
        return [b for b in self.statuses() if b.live]

    def unread(self, key: str) -> bool:
        """Whether ``key``'s line is out at the endpoint, in a live batch, though its waiter
        got an error (the run cancelled, or the API failed too often): it may still be
        billed."""
        with self._cond:
            return key in self._unread

    def lost(self) -> set[str]:
        """The ledger entries this run found gone or not created (their batches are not
        resumed)."""
        return self.gone.entries | self.never_created.entries

    def sent_ordinary(self, key: str) -> bool:
        """Whether ``key``'s request was sent as an ordinary request (``fallback``; billed at
        list price), set before its answer is handed out."""
        with self._cond:
            return key in self._ordinary

    # -- the thread ----------------------------------------------------------------------------

    def _enqueue(self, key: str) -> None:
        """Put ``key`` in the next batch (under the lock)."""
        now = time.monotonic()
        if not self._pending:
            self._first_at = now
        self._pending.append(key)
        self._last_at = now

    def _loop(self) -> None:
        quiet_thread()
        while True:
            with self._cond:
                if self._closed is not None:
                    return
                now = time.monotonic()
                submit = self._due(now)
                poll = bool(self._live) and now >= self._next_poll
                if not submit and not poll:
                    self._cond.wait(self._wake_in(now))
                    continue
                keys, self._pending = (self._pending, []) if submit else ([], self._pending)
            try:
                if keys:
                    self._submit(keys)
                if poll:
                    self._next_poll = time.monotonic() + self.settings.poll_s
                    self._poll()
            except Exception as exc:  # nothing the endpoint does may end this thread
                self._failed_call(keys, f"batch mode: {type(exc).__name__}: {exc}")

    def _due(self, now: float) -> bool:
        if not self._pending:
            return False
        s = self.settings
        return (now - self._last_at >= s.quiet_s or now - self._first_at >= s.gather_s
                or len(self._pending) >= s.max_requests)

    def _wake_in(self, now: float) -> float:
        waits = [self.settings.poll_s if not self._live else max(0.0, self._next_poll - now)]
        if self._pending:
            waits.append(max(0.0, min(self._last_at + self.settings.quiet_s,
                                      self._first_at + self.settings.gather_s) - now))
        return max(0.005, min(waits))

    def _submit(self, keys: list[str]) -> None:
        """Write ``keys``' requests as input files and create their batches."""
        with self._cond:
            lines = [(k, self._waiters[k][1]) for k in dict.fromkeys(keys) if k in self._waiters]
        files = input_files((BatchLine(k, self._body(r)) for k, r in lines),
                            max_requests=self.settings.max_requests,
                            max_bytes=self.settings.max_bytes)
        requests = dict(lines)
        for n, file in enumerate(files):
            meta = {k: RequestMeta(r.model, r.instruction_id, r.cell, r.sample_index)
                    for k in file.custom_ids for r in (requests[k],)}
            try:
                file_id = self.api.upload(file.data, f"gi-batch-{int(time.time())}-{n}.jsonl")
                # recorded before its batch exists: a batch the ledger cannot name is never made
                entry = self.ledger.add(LedgerBatch(self.endpoint, file_id, file.custom_ids,
                                                    meta))
            except Exception:
                self._requeue(files[n:])  # no batch was created: nothing was submitted
                raise
            with self._cond:
                self._own.add(entry.entry)
                self._dealt.append(entry.entry)
                for key in file.custom_ids:
                    self._live[key] = entry.entry
                    self._tries[key] = self._tries.get(key, 0) + 1
            self.gone.asked_again(file.custom_ids)
            self.never_created.asked_again(file.custom_ids)
            try:
                _create(self.api, self.ledger, entry)
            except Exception:  # this file is in the ledger: the next poll creates its batch
                self._requeue(files[n + 1:])
                raise
        self._next_poll = time.monotonic() + self.settings.poll_s

    def _requeue(self, files: list[InputFile]) -> None:
        """Put the requests of ``files`` (not submitted) back in the next batch."""
        with self._cond:
            for file in files:
                for key in file.custom_ids:
                    self._enqueue(key)

    def _poll(self) -> None:
        """Poll every live batch once; collect the finished ones, forget the gone ones and
        the killed runs' input files without a batch."""
        for batch in self.ledger.live(self.endpoint):
            if batch.entry not in self._own and not batch.batch_id:
                # a killed run's input file: its batch, if it made one, is found by the file
                found = self.api.find_by_input(batch.input_file_id)
                if found is None:
                    self._abandon(batch)
                    continue
                batch = self.ledger.update(batch.entry, batch_id=found.batch_id)
            try:
                batch, status = _polled(self.api, self.ledger, batch)
            except BatchNotFound:
                self._forget(batch)
                continue
            if status is not None and status.status in TERMINAL_STATES:
                self._collect(batch, status)
        self._failures = 0

    def _forget(self, batch: LedgerBatch) -> None:
        """``batch`` is unknown to the endpoint: marked gone (no run polls it again) and its
        requests retried like a failed batch's."""
        self.gone.add(self.ledger.update(batch.entry, state=GONE_STATE, collected=True))
        why = f"batch {batch.shown_id} is unknown to the endpoint (HTTP 404)"
        for key in batch.custom_ids:
            self._resolve(key, batch.requests.get(key), LineResult(key, error=why, retry=True))

    def _abandon(self, batch: LedgerBatch) -> None:
        """A killed run's input file of which no batch exists: marked not created (no run
        makes a batch of it: its requests were not asked within this run's limits) and its
        requests asked again like a failed batch's, those this run waits for."""
        self.never_created.add(self.ledger.update(batch.entry, state=NOT_CREATED_STATE,
                                                  collected=True))
        why = f"{batch.shown_id} was never made into a batch"
        for key in batch.custom_ids:
            self._resolve(key, batch.requests.get(key), LineResult(key, error=why, retry=True))

    def _collect(self, batch: LedgerBatch, status: BatchStatus) -> None:
        """Read a finished batch's files and hand out its lines' answers."""
        files = [self.api.content(f) for f in (status.output_file_id, status.error_file_id) if f]
        read = read_results(files)
        self.damage.add(read)
        self.ledger.update(batch.entry, collected=True)
        why = f"batch {status.status}" + (f": {status.errors}" if status.errors else "")
        for key in batch.custom_ids:
            result = read.results.get(key) or LineResult(
                key, error=one_line(f"no result line ({why})"), retry=True)
            self._resolve(key, batch.requests.get(key), result)

    def _resolve(self, key: str, meta: RequestMeta | None, result: LineResult) -> None:
        with self._cond:
            unasked = key not in self._waiters
        if unasked and result.body is not None and meta is not None:
            # a killed run's line read before (or without) the rerun's ask: cached first, then
            # handed out, so an ask that comes meanwhile waits for it (the key is still live)
            self._store(key, meta, *self._answer(result.body, None, 0.0))
        with self._cond:
            self._live.pop(key, None)
            waiting = self._waiters.pop(key, None)
            if waiting is None:
                if result.body is not None:
                    self._unclaimed[key] = self._answer(result.body, None, 0.0)
                return  # a retry nobody here waits for is dropped: a later ask submits it
            if result.body is None and result.retry and self._retry(key, waiting):
                return
        fut, request, started = waiting
        if result.body is None:
            fut.set_result((Answer(error=result.error or "batch request failed", calls=0),
                            Snapshot()))
        else:
            fut.set_result(self._answer(result.body, request, time.monotonic() - started))

    def _retry(self, key: str, waiting: tuple[Future[Served], Request, float]) -> bool:
        """Send a failed or expired line again (under the lock): the next batch, or an
        ordinary request with ``fallback``; ``False`` when its tries are spent."""
        fut, request, _ = waiting
        if self.settings.fallback:
            self._ordinary.add(key)
            self.gone.asked_again((key,))
            self.never_created.asked_again((key,))
            self._fallbacks.submit(_send_ordinary, self._fallback, fut, request)
            return True
        if self._tries.get(key, 0) >= self.settings.max_tries:
            return False
        self._waiters[key] = waiting
        self._enqueue(key)
        return True

    def _failed_call(self, keys: list[str], message: str) -> None:
        """An API call failed: tried again at the next poll, until ``call_tries`` in a row
        failed; then every request not in a live batch, and those in one, get the error."""
        self._failures += 1
        if self._failures < self.settings.call_tries:
            return
        error = one_line(message, f"; gave up after {self._failures} failed call(s)")
        with self._cond:
            waiters, self._waiters, self._pending = self._waiters, {}, []
            self._unread.update(k for k in waiters if k in self._live)
        for fut, _, _ in waiters.values():
            fut.set_result((Answer(error=error, calls=0), Snapshot()))
        self._failures = 0


def _create(api: BatchApi, ledger: BatchLedger, batch: LedgerBatch) -> None:
    """Create the batch of ``batch``'s uploaded input file and record its id and state."""
    status = api.create(batch.input_file_id, {"gi_input_file": batch.input_file_id})
    ledger.update(batch.entry, batch_id=status.batch_id, state=status.status)


def _polled(api: BatchApi, ledger: BatchLedger,
            batch: LedgerBatch) -> tuple[LedgerBatch, BatchStatus | None]:
    """``batch`` retrieved once and its state and counts recorded: the ledger's new entry and
    the status (``None``: this run's create failed earlier, and no batch was found by its
    input file, so it was created now).

    Raises:
        BatchNotFound: the endpoint does not know the batch, or the input file to create it of.
    """
    if not batch.batch_id:  # this run's create failed: find or create
        found = api.find_by_input(batch.input_file_id)
        if found is None:
            _create(api, ledger, batch)
            return batch, None
        batch = ledger.update(batch.entry, batch_id=found.batch_id)
    status = api.retrieve(batch.batch_id)
    batch = ledger.update(batch.entry, state=status.status,
                          counts=(status.completed, status.failed, status.total))
    return batch, status


def _send_ordinary(fallback: Callable[[Request], Served], fut: Future[Served],
                   request: Request) -> None:
    """``request`` as an ordinary request (``gi_batch_fallback``); never raises."""
    try:
        fut.set_result(fallback(request))
    except Exception as exc:  # the wrapped backend never raises; this is a safety net
        fut.set_result((Answer(error=one_line(f"fallback request failed: {exc}"), calls=0),
                        Snapshot()))
