"""``--gi-batch``: a backend that obtains an OpenAI-compatible endpoint's answers through its
Batch API instead of one HTTP request each (:class:`BatchBackend`).

It sits where the ordinary backend sits, under the scheduler: the scheduler's cache lookups,
deduplication, token budget and cost cap, and everything after the cache (verdicts, scores,
reports, gates, methods), are unchanged.  :meth:`BatchBackend.submit_served` hands the
request to the :class:`~.runner.BatchRunner` and returns the future of its batch line's answer
(the scheduler's thread does not wait for it); the runner gathers the requests of one round
into batches, polls them and resolves them.

Promises:

* A batch line's body is exactly what the ordinary request would send
  (:meth:`~.chat_completions.ChatCompletions.body`, the wrapped backend's), and its answer is
  read as the ordinary response would be (:mod:`.answers`): one answer per request, cached
  under the same key (:attr:`endpoint` is the wrapped backend's).
* Never raises for infrastructure problems (an error :class:`Answer`, ``calls=0``), like every
  backend.  :meth:`cancel` answers the waiting requests at once and leaves the batches to the
  next run (they are in the ledger of the cache folder).
* Not ``remote``: the scheduler's circuit breaker, made for one failing HTTP call after
  another, does not apply (the runner counts failed API calls itself).
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import NoReturn

from pytest_graphinstruct.answers import Answer, FailureKind
from pytest_graphinstruct.models.backends.openai_backend import OpenAIBackend
from pytest_graphinstruct.models.backends.tokens import TokenCounter, encoding_name_for
from pytest_graphinstruct.models.backends.usage_accounting import UsageAccounting
from pytest_graphinstruct.models.base import Request
from pytest_graphinstruct.models.batch.answers import answer_of
from pytest_graphinstruct.models.batch.api import BatchApi
from pytest_graphinstruct.models.batch.ledger import BatchLedger, LedgerBatch, RequestMeta
from pytest_graphinstruct.models.batch.runner import BatchRunner, BatchSettings, Served
from pytest_graphinstruct.models.caching.cache import AnswerCache
from pytest_graphinstruct.models.caching.snapshot import Snapshot


class BatchBackend:
    """The batch mode's backend over an :class:`OpenAIBackend` (see the module's promises).

    Args:
        inner: the endpoint's ordinary backend (its client, key, base URL and request bodies;
            and its requests for ``gi_batch_fallback``).
        cache: the answer cache (results no one in this process waits for are written here);
            ``None``: none.
        settings: the run's batch settings.
        api: the Batch API calls (default: over ``inner``'s client).
    """

    cacheable = True
    remote = False

    def __init__(self, inner: OpenAIBackend, cache: AnswerCache | None,
                 settings: BatchSettings | None = None, *,
                 api: BatchApi | None = None) -> None:
        self.inner = inner
        self.endpoint = inner.endpoint
        self.model = inner.model
        self.cache = cache
        self._usage = UsageAccounting(TokenCounter(encoding_name_for(inner.model)))
        self.ledger = BatchLedger(cache.path.parent if cache is not None else None)
        self.runner = BatchRunner(
            api or BatchApi(inner.client, inner.timeout_s), self.ledger, self.endpoint,
            body=inner.chat.body, answer=self._answer, store=self._store,
            fallback=inner.complete_served, settings=settings or BatchSettings())

    def __repr__(self) -> str:
        return f"BatchBackend({self.inner!r})"

    def __reduce__(self) -> NoReturn:
        raise TypeError("BatchBackend cannot be pickled (it holds an API key)")

    def complete(self, request: Request) -> Answer:
        """The answer of ``request``'s batch line (blocks until its batch is read)."""
        return self.complete_served(request)[0]

    def complete_served(self, request: Request) -> Served:
        """:meth:`complete`, and what the line's response said served it."""
        return self.submit_served(request).result()

    def submit_served(self, request: Request) -> Future[Served]:
        """The future of :meth:`complete_served`: resolved when ``request``'s batch is read
        (or the run cancels it), from the runner's thread."""
        return self.runner.ask(request.cache_key(self.endpoint), request)

    def cancel(self, reason: str | None = None, kind: FailureKind = "cancelled") -> None:
        """Answer every waiting request with an error (``reason`` of ``kind``, else that the
        run was interrupted) and stop gathering and polling; the batches stay for the next
        run."""
        self.runner.cancel(reason or "cancelled: the run was interrupted while waiting for "
                                     "its batch (a rerun resumes it)",
                           kind if reason is not None else "cancelled")
        self.inner.cancel(reason, kind)

    def close(self) -> None:
        """End the runner's thread (after the run: every request was answered)."""
        self.runner.cancel("closed: the run ended")

    def statuses(self) -> list[LedgerBatch]:
        """The batches this run deals with, oldest first (the live progress line's;
        :meth:`.BatchRunner.statuses`)."""
        return self.runner.statuses()

    def sent_ordinary(self, request: Request) -> bool:
        """Whether ``request``'s answer came from an ordinary request of the wrapped backend
        (``gi_batch_fallback``: billed at list price), not from a batch line."""
        return self.runner.sent_ordinary(request.cache_key(self.endpoint))

    def unread(self, request: Request) -> bool:
        """Whether ``request``'s line is out at the endpoint, in a live batch, though its answer
        was an error (the run cancelled, or the API failed too often): it may still be billed,
        so the cost cap keeps its worst case (:meth:`.BatchRunner.unread`)."""
        return self.runner.unread(request.cache_key(self.endpoint))

    def _answer(self, body: dict[str, object], request: Request | None, latency_s: float) -> Served:
        answer, served = answer_of(body, request, self._usage, latency_s=latency_s)
        return self.inner.withhold_key(answer), served  # an answer holding the key: withheld

    def _store(self, key: str, meta: RequestMeta, answer: Answer, served: Snapshot) -> None:
        if self.cache is not None:
            request = Request(meta.model, (), sample_index=meta.sample_index,
                              instruction_id=meta.instruction_id, cell=meta.cell)
            self.cache.store(key, request, answer, endpoint=self.endpoint, served=served)
