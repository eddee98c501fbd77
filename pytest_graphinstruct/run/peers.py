"""Answers another xdist worker asks for: waiting for them in the shared answer cache, and the
calls it made for them (:class:`PeerAnswers`)."""

from __future__ import annotations

import time
from dataclasses import replace

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.options import DEFAULT_TIMEOUT_S
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.run.requests import RequestBuilder
from pytest_graphinstruct.run.schedulers import ModelSchedulers
from pytest_graphinstruct.run.session_inputs import SessionInputs
from pytest_graphinstruct.run.stop import STOP_GRACE_S
from pytest_graphinstruct.suite.instruction import Instruction

PEER_STOP_SLACK_S = 5.0
"""After a stop, how long past :data:`~.stop.STOP_GRACE_S` a worker waits for the owner's last
word on an item's answers (its calls in flight answered, or cancelled and noted)."""
SERIAL_PEER_QUIET_S = 180.0
"""How long a worker waits for a peer's answer from a serial endpoint after the last answer
anyone obtained (see :meth:`PeerAnswers.await_owner`)."""


class PeerAnswers:
    """The items of a worker that another worker (their owner) prefetched."""

    def __init__(self, inputs: SessionInputs, requests: RequestBuilder,
                 models: ModelSchedulers) -> None:
        self.inputs = inputs
        self.requests = requests
        self.models = models

    def await_owner(self, inst: Instruction, cell: Cell) -> None:
        """Wait until the worker that owns this item has cached its answers.

        The wait ends when no answer at all has arrived in the shared cache for the owner's
        worst case for one request (every retry timing out; for a serial endpoint such as the
        embedded model, :data:`SERIAL_PEER_QUIET_S`): while answers keep arriving the owner is
        working through its queue, however long, so the bound scales with the queue.  It ends
        at once when the owner published that it will not cache them (truncated, errors, its
        circuit open, its budget spent, stopped, cancelled, a failed cache write:
        :meth:`AnswerCache.note_uncached`, which works for a read-only cache folder too), or
        when this worker's own scheduler issues no more requests (its circuit open, stopped):
        its request then resolves at once.  After it, or without a shared cache, this worker
        asks itself.  The caller asks only for an item it has not asked itself.
        """
        config = self.inputs.config
        scheduler = self.models.schedulers[cell.model]
        cache = getattr(scheduler, "cache", None)
        if cache is None:
            return
        keys = self._cache_keys(inst, cell)
        if getattr(scheduler.backend, "serial_gate", None) is not None:
            # A serial endpoint delivers an answer every few seconds while anyone is working;
            # three quiet minutes mean the owner's answer will not come (a truncated answer is
            # never cached), and waiting for its worst case would stall the run for an hour.
            quiet_s = SERIAL_PEER_QUIET_S
        else:
            timeout = getattr(scheduler.backend, "timeout_s", None) or config.timeout_s
            quiet_s = (timeout or DEFAULT_TIMEOUT_S) * (config.max_retries + 1) + 30
        deadline = time.monotonic() + quiet_s
        seen = len(cache)
        halted_at: float | None = None
        while time.monotonic() < deadline:
            if halted_at is None and getattr(scheduler, "halted", False):
                if getattr(scheduler, "stopped_reason", None) is None:
                    return  # its circuit is open: its answer is the refusal
                # Stopped: this process issues nothing more, but the owner may have calls in
                # flight for these keys: they finish within the stop's grace (cached) or are
                # cancelled (noted with their calls); wait that long for its word, no longer.
                halted_at = time.monotonic()
                deadline = min(deadline, halted_at + STOP_GRACE_S + PEER_STOP_SLACK_S)
            missing = {key for key in keys if not scheduler.cached(key)}  # stale: not yet
            if not missing or missing <= cache.uncached():
                return  # all cached, or the owner got answers it could not cache
            if len(cache) > seen and halted_at is None:  # the owner made progress
                seen = len(cache)
                deadline = time.monotonic() + quiet_s
            time.sleep(0.1)

    def with_owner_calls(self, inst: Instruction, cell: Cell,
                         got: tuple[Answer, ...]) -> tuple[Answer, ...]:
        """``got`` with each error this process made no call for given the calls the owner
        noted for its key (made, then not cached: the report counts every call sent)."""
        cache = getattr(self.models.schedulers[cell.model], "cache", None)
        if cache is None or not any(a.error is not None and a.calls == 0 for a in got):
            return got
        noted = cache.uncached_calls()
        out = []
        for key, answer in zip(self._cache_keys(inst, cell), got, strict=True):
            calls = noted.get(key, 0) if answer.error is not None and answer.calls == 0 else 0
            out.append(replace(answer, calls=calls) if calls else answer)
        return tuple(out)

    def _cache_keys(self, inst: Instruction, cell: Cell) -> list[str]:
        """The answer-cache key of each sample of one item."""
        endpoint = self.models.schedulers[cell.model].backend.endpoint
        return [self.requests.request(inst, cell, k).cache_key(endpoint)
                for k in range(self.inputs.samples(inst, cell))]
