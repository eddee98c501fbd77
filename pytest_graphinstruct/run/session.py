"""A benchmark session without pytest: requests, answers, verdicts and results per item.

:class:`BenchmarkSession` owns the suite, the cells, one backend and scheduler per model, and the
results of the items that ran in this process.  The pytest plugin and the ``score`` command
drive it the same way: :meth:`BenchmarkSession.prefetch` every item's answers, then per item
:meth:`answers`, :meth:`check` (verdicts and outcome) and :meth:`record`; :meth:`flush` scores
everything recorded in one batch (D3's GCNs train together) into typed
:class:`~pytest_graphinstruct.run.results.ItemResult` records, and :meth:`report` builds the
:class:`~pytest_graphinstruct.run.results.RunReport`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_graphinstruct.answers import Answer, Message
from pytest_graphinstruct.graphs.model import Limits
from pytest_graphinstruct.methods.constrained import request_extra, resolve_format
from pytest_graphinstruct.methods.registry import method_of
from pytest_graphinstruct.models.base import Request, quiet_thread, wait_result
from pytest_graphinstruct.options import DEFAULT_TIMEOUT_S
from pytest_graphinstruct.run.aggregate import TOOL, build_run_report
from pytest_graphinstruct.run.config import Cell, RunConfig
from pytest_graphinstruct.run.evaluate import Checked, check, error_result, score
from pytest_graphinstruct.run.results import CellMetadata, Coverage, ItemResult, RunReport
from pytest_graphinstruct.run.stop import STOP_GRACE_S
from pytest_graphinstruct.run.tally import AnswerTally, ProgressCounts
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import Suite, load_suite
from pytest_graphinstruct.verify.verifier import Verifier
from pytest_graphinstruct.vocab import as_outcome

if TYPE_CHECKING:
    from pytest_graphinstruct.methods.caap import CaapDecision
    from pytest_graphinstruct.models.recorded import RecordProblem, ReplayCheck
    from pytest_graphinstruct.models.snapshot import CacheSource
    from pytest_graphinstruct.pools import ReferencePools
    from pytest_graphinstruct.prompts.exemplars import Exemplar, ExemplarPool
    from pytest_graphinstruct.run.preflight import RunInputs, Served

SCORE_BATCH = 128
"""Recorded items are scored in batches of this many (D3's GCNs train together).  Scoring as the
run goes, not all at the end, lets pytest-xdist balance the scoring work between workers like
any other test time (a batch of 128 costs ~5 % more than one batch of 800)."""

PEER_STOP_SLACK_S = 5.0
"""After a stop, how long past :data:`~.stop.STOP_GRACE_S` a worker waits for the owner's last
word on an item's answers (its calls in flight answered, or cancelled and noted)."""
SERIAL_PEER_QUIET_S = 180.0
"""How long a worker waits for a peer's answer from a serial endpoint after the last answer
anyone obtained (see :meth:`BenchmarkSession._await_peer`)."""


class BenchmarkSession:
    """State of one benchmark run in one process (controller or xdist worker)."""

    def __init__(self, config: RunConfig, *, worker: tuple[int, int] | None = None,
                 local: Mapping[str, str] | None = None, limits: Limits | None = None,
                 inputs: RunInputs | None = None, served: Served | None = None,
                 share_dir: Path | None = None,
                 stop_check: Callable[[], str | None] | None = None) -> None:
        """Load the suite; backends are built on first use (:attr:`schedulers`).

        Args:
            config: the validated run configuration.
            worker: ``(index, count)`` under xdist, else ``None``.
            local: the running embedded server (:func:`.local_server.endpoint_info`), needed
                when ``local`` is one of the models.
            limits: the parser's limits (default :class:`~.graphs.model.Limits`).
            inputs: the suite, recorded answers and cache :func:`~.preflight.preflight`
                already read for this ``config`` (read here when not given).
            served: what the preflight learned about the models (the snapshots served, the
                cache's size when the run began), when ``inputs`` are another process's
                (an xdist worker); default: ``inputs.served``, else nothing known.
            share_dir: a folder private to this run that all its processes see (an xdist
                worker's): without an answer cache (``--gi-no-cache``) the workers share their
                answers through a cache there, which holds only this run's answers and goes
                with the run — so no request is made twice and every call made is counted by
                the item that asked for it.
            stop_check: handed to every scheduler (:class:`~.models.scheduler.Scheduler`):
                says, right before each request, whether the run was stopped.

        Raises:
            GraphInstructError: the suite or the pools cannot be loaded.
        """
        from pytest_graphinstruct.models.cache import AnswerCache
        from pytest_graphinstruct.run.preflight import Served

        self.config = config
        self.worker = worker
        self.local = local
        self.suite: Suite = (inputs.suite if inputs is not None
                             else load_suite(config.suite, levels=config.levels))
        self.verifier = Verifier(limits=limits) if limits is not None else Verifier()
        self._replay = inputs.replay if inputs is not None else None
        if config.replay is not None and self._replay is None:
            from pytest_graphinstruct.models.recorded import read_responses

            self._replay = read_responses(config.replay, self.suite, levels=config.levels)
        self.served: Served = (inputs.served if inputs is not None
                               else served if served is not None else Served())
        self.cache = (inputs.cache if inputs is not None and inputs.cache is not None
                      else AnswerCache(config.cache_dir, mark=self.served.cache_mark,
                                       run=_run_id(worker))
                      if config.cache_dir is not None
                      else AnswerCache(share_dir / "answers", mark=0, run=_run_id(worker))
                      if share_dir is not None and worker is not None else None)
        self._pools: ReferencePools | None = None
        self._exemplars: ExemplarPool | None = None
        self._schedulers: dict[str, Any] | None = None
        self._futures: dict[tuple[str, str, int], Future[Answer]] = {}
        self._chains_pool: ThreadPoolExecutor | None = None
        self.stopped: str | None = None  # why the run stopped issuing requests (stop())
        self._stop_check = stop_check
        self._owned: set[tuple[str, str]] | None = None
        self.results: list[ItemResult] = []
        self._pending: list[tuple[Checked, bool]] = []
        self.started = time.monotonic()
        self.tally = AnswerTally()  # the prefetched answers as they arrive (progress line)

    @property
    def pools(self) -> ReferencePools | None:
        """The run's reference pools, loaded on first use (a process that only merges results,
        like the xdist controller, never loads them; the plugin touches this at collection so
        a broken pool directory is reported before any item runs).

        Raises:
            GraphInstructError: the pools cannot be read.
        """
        if self._pools is None and self.config.pools is not None:
            from pytest_graphinstruct.pools import ReferencePools, default_cache_dir

            # Pool features and matches are cached on disk, keyed by the pools' content hash.
            cache = self.config.cache_dir
            features = (cache / "pools") if cache else default_cache_dir()
            self._pools = ReferencePools.load(self.config.pools, cache_dir=features)
        return self._pools

    @property
    def exemplars(self) -> ExemplarPool:
        """The few-shot exemplar pool of the suite, built on first use."""
        if self._exemplars is None:
            from pytest_graphinstruct.prompts.exemplars import ExemplarPool

            self._exemplars = ExemplarPool.from_suite(self.suite,
                                                      templates=self.config.templates)
        return self._exemplars

    @property
    def recorded_ids(self) -> frozenset[str] | None:
        """The instruction ids the recorded answers hold usable records for — ids of the suite,
        never a skipped line's (``None`` without ``--gi-replay``)."""
        if self._replay is None:
            return None
        return frozenset(r.instruction_id for r in self._replay)

    @property
    def replay_problems(self) -> tuple[RecordProblem, ...]:
        """Every line of the recorded answers that was skipped, and why, in line order."""
        return self._replay.problems if self._replay is not None else ()

    @property
    def replay_check(self) -> ReplayCheck | None:
        """What reading the recorded answers found, as the report's ``run.replay_problems``
        keeps it (``None`` without ``--gi-replay``)."""
        return self._replay.check() if self._replay is not None else None

    def select(self, instructions: Sequence[Instruction]) -> list[Instruction]:
        """The instructions this run asks: with recorded answers, only those the file holds
        (an instruction without answers is not an infrastructure error of the run)."""
        recorded = self.recorded_ids
        if recorded is None:
            return list(instructions)
        return [inst for inst in instructions if inst.id in recorded]

    @property
    def schedulers(self) -> dict[str, Any]:
        """One scheduler per model, built on first access (a process that only merges results,
        like the xdist controller, never builds backends).

        The embedded ``local`` model answers one request at a time, so its scheduler keeps one
        request in flight per process (and its backend's gate orders the processes); every
        other model gets ``--gi-concurrency``.

        Raises:
            GraphInstructError: a backend cannot be set up (a missing API key, a missing
                ``[local]`` install, ...).
        """
        if self._schedulers is None:
            self._schedulers = self._build_schedulers()
            if self.stopped is not None:  # stopped before any request: none is ever issued
                for scheduler in self._schedulers.values():
                    scheduler.stop_issuing(self.stopped)
        return self._schedulers

    def _build_schedulers(self) -> dict[str, Any]:
        from pytest_graphinstruct.models.scheduler import Scheduler, TokenBudget
        from pytest_graphinstruct.run.backends import make_run_backend

        config = self.config
        # One budget for every model of the run; under xdist each worker gets its share.
        budget = None
        if config.max_tokens_total is not None:
            share = config.max_tokens_total // (self.worker[1] if self.worker else 1)
            budget = TokenBudget(max(1, share))
        schedulers: dict[str, Any] = {}
        for model in config.models:
            backend = make_run_backend(
                model, base_url=config.base_url, api_key_env=config.api_key_env,
                suite=self.suite, replay=self._replay, timeout_s=config.timeout_s,
                max_retries=config.max_retries, backoff_base_s=config.backoff_s,
                local=self.local, model_version=config.model_version(model),
            )
            cache = self.cache if getattr(backend, "cacheable", False) else None
            schedulers[model] = Scheduler(
                backend, concurrency=1 if model == "local" else config.concurrency,
                rate_limit=config.rate_limit, cache=cache, token_budget=budget,
                snapshot=self.served.snapshot(model), reuse_stale=config.reuse_stale_cache,
                stop_check=self._stop_check,
            )
        return schedulers

    def samples(self, inst: Instruction, cell: Cell | None = None) -> int:
        """Samples per item: ``--gi-chains`` in an iterative method's cell; else
        ``--gi-samples``, or with recorded answers and no ``--gi-samples`` as many as the file
        holds for the instruction (at least 1)."""
        if cell is not None and _method(cell):
            return self.config.chains
        if self.config.samples is not None:
            return self.config.samples
        record = self._replay.get(inst.id) if self._replay is not None else None
        return max(1, len(record.samples)) if record is not None else 1

    # -- requests ----------------------------------------------------------------------------

    def request(self, instruction: Instruction, cell: Cell, sample: int) -> Request:
        """The request for one sample of one item (deterministic; no randomness)."""
        from pytest_graphinstruct.prompts.builder import build_messages

        strategy = cell.strategy
        decision = None
        if method_of(cell.spec).caap:
            decision = self.caap(instruction, cell.model)
            strategy = decision.strategy
        exemplars: tuple[Exemplar, ...] = ()
        if strategy.startswith("few"):
            exemplars = self.exemplars.select(instruction, k=3, seed=self.config.exemplar_seed)
        messages = build_messages(instruction, strategy, exemplars=exemplars,
                                  templates=self.config.templates)
        if decision is not None:
            from pytest_graphinstruct.methods.caap import augment

            messages = augment(messages, decision)
        extra: tuple[tuple[str, Any], ...] = ()
        if method_of(cell.spec).constrained:
            fmt = resolve_format(self.config.constrained_format, cell.model)
            extra = request_extra(fmt, instruction.level)
        return Request(model=cell.model, messages=messages, params=self.config.params,
                       sample_index=sample, instruction_id=instruction.id, cell=cell.label,
                       extra=extra)

    def caap(self, instruction: Instruction, model: str) -> CaapDecision:
        """CAAP's decision for ``instruction`` and ``model`` (the packaged table, the run's
        ``--gi-model-tiers`` and prompt texts)."""
        from pytest_graphinstruct.methods.caap import select

        return select(instruction, model, tiers=dict(self.config.model_tiers),
                      templates=self.config.templates)

    def prefetch(self, items: Iterable[tuple[Instruction, Cell]]) -> int:
        """Submit every sample of ``items`` to the schedulers; returns the number submitted.

        Under xdist, ``items`` is the full selected list (identical on every worker) and each
        worker prefetches only its share (position modulo worker count); an item that runs on a
        worker which does not own it waits for the owner's answer in the shared cache (see
        :meth:`answers`), so no request is made twice.
        """
        items = list(items)
        if self.worker is not None:
            index, count = self.worker
            items = [x for n, x in enumerate(items) if n % count == index]
            self._owned = {(inst.id, cell.label) for inst, cell in items}
        n = 0
        for inst, cell in items:
            for k in range(self.samples(inst, cell)):
                self.tally.watch(self._future(inst, cell, k))
                n += 1
        return n

    def _future(self, inst: Instruction, cell: Cell, k: int) -> Future[Answer]:
        key = (inst.id, cell.label, k)
        fut = self._futures.get(key)
        if fut is None:
            if _iterative(cell):
                fut = self._method_pool().submit(self._chain, inst, cell, k)
            else:
                fut = self.schedulers[cell.model].submit(self.request(inst, cell, k))
            self._futures[key] = fut
        return fut

    def _method_pool(self) -> ThreadPoolExecutor:
        """Threads that run method chains (each waits on its own calls in the scheduler, so
        they never occupy the scheduler's workers)."""
        if self._chains_pool is None:
            self._chains_pool = ThreadPoolExecutor(max_workers=self.config.concurrency,
                                                   thread_name_prefix="gi-method",
                                                   initializer=quiet_thread)
        return self._chains_pool

    def _chain(self, inst: Instruction, cell: Cell, k: int) -> Answer:
        """Sample ``k`` of an iterative method's item: one chain (never raises: a harness
        fault is the answer's error, an infrastructure error, not the model's failure)."""
        from pytest_graphinstruct.methods.iterative import verifier_grader
        from pytest_graphinstruct.run.method_runner import chain_answer, run_chain, sample_index
        from pytest_graphinstruct.score.instruction_score import pool_profiles

        base = self.request(inst, cell, 0)
        scheduler = self.schedulers[cell.model]

        def ask(messages: tuple[Message, ...], temperature: float, call: int) -> Answer:
            request = replace(base, messages=messages, sample_index=sample_index(k, call),
                              params=replace(base.params, temperature=temperature))
            return scheduler.submit(request).result()

        try:
            grader = verifier_grader(inst, self.verifier, pool_profiles(inst, self.pools))
            result = run_chain(cell.method, inst, base.messages, ask, grader, chain=k,
                               config=self.config)
        except Exception as exc:  # a harness fault: say it in one line
            return Answer(error=f"method {cell.method} failed: {type(exc).__name__}: {exc}")
        return chain_answer(result)

    def answers(self, inst: Instruction, cell: Cell) -> tuple[Answer, ...]:
        """Every sample's answer for one item (blocks until all are obtained or given up).

        An item another worker owned carries the calls that worker made for it: its cached
        answers say so, and an answer it did not cache (an error, or a call cancelled when
        the run stopped) was noted with its calls (:meth:`AnswerCache.uncached_calls`)."""
        peer = (self._owned is not None and (inst.id, cell.label) not in self._owned
                and not _iterative(cell))  # a method's calls are shared through the cache
        if peer:
            self._await_peer(inst, cell)
        futures = [self._future(inst, cell, k) for k in range(self.samples(inst, cell))]
        got = tuple(wait_result(f) for f in futures)  # a Ctrl+C is acted on while waiting
        return self._with_peer_calls(inst, cell, got) if peer else got

    def _with_peer_calls(self, inst: Instruction, cell: Cell,
                         got: tuple[Answer, ...]) -> tuple[Answer, ...]:
        """``got`` with each error this process made no call for given the calls the owner
        noted for its key (made, then not cached: the report counts every call sent)."""
        cache = getattr(self.schedulers[cell.model], "cache", None)
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
        endpoint = self.schedulers[cell.model].backend.endpoint
        return [self.request(inst, cell, k).cache_key(endpoint)
                for k in range(self.samples(inst, cell))]

    def _await_peer(self, inst: Instruction, cell: Cell) -> None:
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
        asks itself.
        """
        scheduler = self.schedulers[cell.model]
        cache = getattr(scheduler, "cache", None)
        if cache is None or (inst.id, cell.label, 0) in self._futures:
            return
        keys = self._cache_keys(inst, cell)
        if getattr(scheduler.backend, "serial_gate", None) is not None:
            # A serial endpoint delivers an answer every few seconds while anyone is working;
            # three quiet minutes mean the owner's answer will not come (a truncated answer is
            # never cached), and waiting for its worst case would stall the run for an hour.
            quiet_s = SERIAL_PEER_QUIET_S
        else:
            timeout = getattr(scheduler.backend, "timeout_s", None) or self.config.timeout_s
            quiet_s = (timeout or DEFAULT_TIMEOUT_S) * (self.config.max_retries + 1) + 30
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

    # -- evaluation ---------------------------------------------------------------------------

    def check(self, inst: Instruction, cell: Cell, answers: Sequence[Answer]) -> Checked:
        """Verify every sample of one item and decide its outcome (no scores yet: see
        :meth:`record` and :meth:`flush`)."""
        return check(inst, answers, cell=cell, verifier=self.verifier,
                     pass_rule=self.config.pass_rule)

    def record(self, checked: Checked, *, expected_failure: bool = False) -> None:
        """Keep a checked item for scoring; its result appears in :attr:`results` after the
        next :meth:`flush`, which happens by itself once :data:`SCORE_BATCH` items are held
        (D3 trains one batch over them)."""
        self._pending.append((checked, expected_failure))
        if len(self._pending) >= SCORE_BATCH:
            self.flush()

    def record_error(self, inst: Instruction, cell: Cell, answers: Sequence[Answer], *,
                     outcome: str, error: str | None) -> None:
        """Keep an item that has no scores (``error``: no answer; ``skipped``)."""
        self.results.append(error_result(inst, cell, answers, outcome=as_outcome(outcome),
                                         error=error))

    def flush(self) -> list[ItemResult]:
        """Score every item recorded since the last flush (one batch) and return
        :attr:`results`, the results of every item recorded in this process.

        A batch whose scoring raises is scored item by item; an item whose scoring still
        raises is kept as an ``error`` naming the exception (a harness fault is never the
        model's failure, and no other item is lost with it).
        """
        if not self._pending:
            return self.results
        pending, self._pending = self._pending, []
        try:
            scored = score([c for c, _ in pending], self.pools)
        except Exception:
            scored = [self._score_alone(c) for c, _ in pending]
        for (checked, expected), result in zip(pending, scored, strict=True):
            result = self._with_method_details(checked, result)
            self.results.append(replace(result, expected_failure=True) if expected
                                else result)
        return self.results

    def _with_method_details(self, checked: Checked, result: ItemResult) -> ItemResult:
        """A CAAP cell's result names CAAP's decision for the item (``details.caap``)."""
        if not method_of(checked.cell.spec).caap:
            return result
        d = self.caap(checked.instruction, checked.cell.model)
        caap = {"strategy": d.strategy, "cell": str(d.cell),
                "extras": [name for name, _ in d.extras], "rationale": d.rationale}
        return replace(result, details=replace(result.details, caap=caap))

    def _score_alone(self, checked: Checked) -> ItemResult:
        try:
            return score([checked], self.pools)[0]
        except Exception as exc:
            return error_result(checked.instruction, checked.cell, checked.answers,
                                outcome="error",
                                error=f"scoring failed: {type(exc).__name__}: {exc}")

    def evaluate(self, inst: Instruction, cell: Cell, answers: Sequence[Answer]) -> ItemResult:
        """Verify and score one item at once (outside the plugin's batching)."""
        return score([self.check(inst, cell, answers)], self.pools)[0]

    def report(self, results: Sequence[ItemResult], *, coverage: Coverage | None = None,
               model_info: Mapping[str, str] | None = None) -> RunReport:
        """The run report of ``results`` (from this process or merged from workers);
        ``coverage`` says what the run covers (default: complete)."""
        coverage = coverage or Coverage()
        partial = not coverage.complete
        order = {inst.id: n for n, inst in enumerate(self.suite)}
        served = self.served.models()
        cells = [(cell_metadata(self.config, cell, partial=partial, model_info=model_info,
                                served=served),
                  [r for r in results if r.cell == cell.label]) for cell in self.config.cells]
        return build_run_report(cells, suite_order=order, coverage=coverage)

    def stop(self, reason: str, *, grace_s: float | None = None) -> None:
        """Issue no new request, in any cell (the run was interrupted): requests not issued
        resolve at once to errors saying ``reason``; calls already in flight may finish for
        ``grace_s`` seconds (default :data:`~.stop.STOP_GRACE_S`; their answers are cached),
        then they are cancelled.  Safe from any thread, and twice."""
        import threading

        if self.stopped is not None:
            return
        self.stopped = reason
        schedulers = list((self._schedulers or {}).values())
        for scheduler in schedulers:
            scheduler.stop_issuing(reason)

        def cancel_in_flight() -> None:
            quiet_thread()
            for scheduler in schedulers:
                cancel = getattr(scheduler.backend, "cancel", None)
                if callable(cancel):
                    cancel(reason)

        timer = threading.Timer(STOP_GRACE_S if grace_s is None else grace_s, cancel_in_flight)
        timer.daemon = True
        timer.start()

    def close(self, *, cancel: bool = False) -> None:
        """Close the schedulers (waiting for requests in flight); with ``cancel`` (an
        interrupted or stopped run) requests not started are dropped and none is retried."""
        if self._chains_pool is not None:
            self._chains_pool.shutdown(wait=not cancel, cancel_futures=cancel)
        for s in (self._schedulers or {}).values():
            s.close(cancel_pending=cancel)
        if self._pools is not None:
            for pool in self._pools.pools.values():
                pool.flush()

    def notes(self) -> list[str]:
        """One line per thing that went wrong outside the items and must not pass unseen:
        answers that could not be cached, damaged cache lines, an open circuit breaker,
        provider token counts that were impossible (each line names the model or cache)."""
        out: list[str] = []
        if self.cache is not None:
            out += [line for line in (self.cache.write_failure_summary(),
                                      self.cache.damage_summary()) if line]
        for model, scheduler in (self._schedulers or {}).items():
            if scheduler.circuit_open_reason:
                unsent = scheduler.stats().get("circuit_skipped", 0)
                out.append(f"{model}: {scheduler.circuit_open_reason} ({unsent} request(s) "
                           "not sent; their items are errors)")
            backend = scheduler.backend
            rejected = getattr(backend, "usage_rejections", 0)
            if rejected:
                out.append(f"{model}: {rejected} answer(s) with an impossible token count from "
                           f"the provider (first: {backend.first_usage_rejection}); recounted "
                           "with tiktoken")
        return out

    def stats(self) -> dict[str, Any]:
        return {model: s.stats() for model, s in (self._schedulers or {}).items()}

    def cache_sources(self) -> dict[str, CacheSource]:
        """Per cell label: the snapshots of the answers this process reused from an earlier
        run's cache and when the oldest was cached (:meth:`.Scheduler.cache_sources`)."""
        from pytest_graphinstruct.models.snapshot import merge_sources

        return merge_sources(*(s.cache_sources() for s in (self._schedulers or {}).values()))

    def progress(self) -> ProgressCounts:
        """The prefetched answers' counts so far and the tokens this process spent (safe to
        call from any thread)."""
        schedulers = self._schedulers or {}
        return self.tally.counts(tokens=sum(s.tokens_spent() for s in schedulers.values()))



def cell_metadata(config: RunConfig, cell: Cell, *, partial: bool = False,
                  model_info: Mapping[str, str] | None = None,
                  served: Mapping[str, str | None] | None = None) -> CellMetadata:
    """What produced a cell of this run (``model_info``: model name → what served it;
    ``served``: model name → the snapshot its endpoint said it served).  Its
    ``model_version`` is ``--gi-model-version``, else the snapshot served, else ``None``."""
    return CellMetadata(
        model=cell.model, strategy=cell.strategy, method=cell.method, tool=TOOL,
        constraint=(resolve_format(config.constrained_format, cell.model)
                    if method_of(cell.spec).constrained else None),
        model_info=(model_info or {}).get(cell.model), suite=str(config.suite),
        levels=config.levels,
        samples_per_instruction=config.chains if _method(cell) else config.samples,
        pass_rule=config.pass_rule, decoding=config.params.to_json(), partial=partial,
        method_settings=_method_settings(config, cell),
        model_version=config.model_version(cell.model) or (served or {}).get(cell.model))


def _method_settings(config: RunConfig, cell: Cell) -> dict[str, Any]:
    """What a method's cell ran with (the registry's method says; empty for other cells)."""
    if not _method(cell):
        return {}
    return dict(method_of(cell.spec).settings(cell.spec, config.method_context))


def _run_id(worker: tuple[int, int] | None) -> str | None:
    """The id every process of this run shares, for the answer cache to tell this run's
    answers and notes from earlier runs' (:attr:`AnswerCache.run`): under xdist, the test run's
    uid that pytest-xdist gives each worker; ``None`` for a single process (the cache's byte
    mark suffices there)."""
    import os

    return os.environ.get("PYTEST_XDIST_TESTRUNUID") if worker is not None else None


def _iterative(cell: Cell) -> bool:
    """Whether the cell's method makes several calls per sample (VGIG, retry, sc, combined)."""
    return method_of(cell.spec).iterative


def _method(cell: Cell) -> bool:
    """Whether the cell runs a method (its samples are ``--gi-chains``)."""
    kind = method_of(cell.spec)
    return kind.iterative or kind.caap
