"""One backend and scheduler per model of a run, and how a stop reaches them
(:class:`ModelSchedulers`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.models.base import quiet_timer
from pytest_graphinstruct.run.session_inputs import SessionInputs
from pytest_graphinstruct.run.stop import STOP_GRACE_S
from pytest_graphinstruct.run.tally import BatchProgress

if TYPE_CHECKING:
    from pytest_graphinstruct.models.batch.ledger import LedgerBatch
    from pytest_graphinstruct.models.caching.snapshot import CacheSource
    from pytest_graphinstruct.models.cost.cap import CostCap, RequestCost
    from pytest_graphinstruct.models.cost.prices import PriceTable
    from pytest_graphinstruct.models.scheduling.request_stats import Sent


class ModelSchedulers:
    """The schedulers of one run in one process, built on first use, and its stop."""

    def __init__(self, inputs: SessionInputs, *, worker: tuple[int, int] | None,
                 local: Mapping[str, str] | None,
                 stop_check: Callable[[], str | None] | None,
                 skip: frozenset[str] = frozenset()) -> None:
        self.inputs = inputs
        self.skip = skip  # models another process answers (an xdist worker's: the service's)
        self.worker = worker
        self.local = local
        self._stop_check = stop_check
        self._schedulers: dict[str, Any] | None = None
        self._building = threading.Lock()  # method chains' threads may ask first, at once
        self.stopped: str | None = None  # why the run stopped issuing requests (stop())
        self.cap: CostCap | None = None  # --gi-max-cost, once the schedulers are built
        self.prices: PriceTable | None = None  # the price table of the cap

    @property
    def schedulers(self) -> dict[str, Any]:
        """One scheduler per model, built once, on first access from any thread (the threads
        of method chains may be the first to ask, at once); none for a model in ``skip`` (an
        xdist worker's models with an endpoint: the controller's answer service asks them).

        The embedded ``local`` model answers one request at a time, so its scheduler keeps one
        request in flight (only one process of a run asks it: the xdist controller); every
        other model gets ``--gi-concurrency``.

        Raises:
            GraphInstructError: a backend cannot be set up (a missing API key, a missing
                ``[local]`` install, ...).
        """
        if self._schedulers is None:
            with self._building:  # built once, whichever thread asks first
                if self._schedulers is None:
                    self._schedulers = built = self._build()
                    if self.stopped is not None:  # stopped before any request: none is issued
                        for scheduler in built.values():
                            scheduler.stop_issuing(self.stopped)
        return self._schedulers

    def _build(self) -> dict[str, Any]:
        from pytest_graphinstruct.models.scheduling.scheduler import Scheduler, TokenBudget
        from pytest_graphinstruct.run.model_names import backend_for

        config = self.inputs.config
        # One budget and one cost cap for every model of the run (the controller's answer
        # service holds them whole for the models with an endpoint); an xdist worker gets its
        # share of each for the models it answers itself, so the workers stay within them.
        workers = self.worker[1] if self.worker else 1
        budget = None
        if config.max_tokens_total is not None:
            budget = TokenBudget(max(1, config.max_tokens_total // workers))
        self.cap = self._cost_cap(workers)
        schedulers: dict[str, Any] = {}
        for model in config.models:
            if model in self.skip:
                continue
            backend = backend_for(
                model, base_url=config.base_url, api_key_env=config.api_key_env,
                suite=self.inputs.suite, replay=self.inputs.replay, timeout_s=config.timeout_s,
                max_retries=config.max_retries, backoff_base_s=config.backoff_s,
                local=self.local, model_version=config.model_version(model),
            )
            cache = self.inputs.cache if getattr(backend, "cacheable", False) else None
            concurrency = 1 if model == "local" else config.concurrency
            rate_limit = config.rate_limit
            if config.batch is not None:  # requests wait for their batch as futures
                backend, rate_limit = self._batched(backend), None
            schedulers[model] = Scheduler(
                backend, concurrency=concurrency,
                rate_limit=rate_limit, cache=cache, token_budget=budget,
                snapshot=self.inputs.served.snapshot(model),
                reuse_stale=config.reuse_stale_cache, stop_check=self._stop_check,
                cost=self._request_cost(model, backend),
            )
        return schedulers

    def _batched(self, backend: Any) -> Any:
        """``backend`` asked through its endpoint's Batch API (``--gi-batch``)."""
        from pytest_graphinstruct.models.backends.openai_backend import OpenAIBackend
        from pytest_graphinstruct.models.batch.backend import BatchBackend
        from pytest_graphinstruct.models.batch.runner import BatchSettings

        mode = self.inputs.config.batch
        if not isinstance(backend, OpenAIBackend) or mode is None:
            raise GraphInstructError(f"--gi-batch: {backend!r} has no Batch API")
        return BatchBackend(backend, self.inputs.cache, BatchSettings(
            poll_s=mode.poll_s, quiet_s=mode.quiet_s, fallback=mode.fallback))

    def _cost_cap(self, workers: int) -> CostCap | None:
        """This process's share of the run's ``--gi-max-cost`` (the run's ``workers``
        processes share it evenly), for every model."""
        from pytest_graphinstruct.models.cost.cap import CostCap
        from pytest_graphinstruct.models.cost.prices import load_prices

        config = self.inputs.config
        if config.max_cost is None:
            return None
        self.prices = load_prices(config.prices)
        return CostCap(config.max_cost / workers, self.prices.currency)

    def _request_cost(self, model: str, backend: Any) -> RequestCost | None:
        """``model``'s side of the cap (``None``: no cap, or a model that costs nothing); in
        batch mode at the batch price (``backend``, the batch backend, says which answers an
        ordinary fallback request obtained: those at list price)."""
        from pytest_graphinstruct.models.backends.tokens import TokenCounter, encoding_name_for
        from pytest_graphinstruct.models.cost.cap import BatchPricing, RequestCost
        from pytest_graphinstruct.models.cost.prices import FREE_MODELS

        config = self.inputs.config
        if self.cap is None or self.prices is None or model in FREE_MODELS:
            return None
        price = self.prices.price(model)
        if price is None or config.params.max_tokens is None:  # refused by run.config
            raise GraphInstructError(f"--gi-max-cost: no price for {model}")
        batch = None
        if config.batch is not None:
            batch = BatchPricing(fallback=config.batch.fallback, ordinary=backend.sent_ordinary)
        return RequestCost(self.cap, price, TokenCounter(encoding_name_for(model)),
                           config.params.max_tokens, batch=batch)

    def stop(self, reason: str, *, grace_s: float | None = None) -> None:
        """Issue no new request, in any cell (the run was interrupted): requests not issued
        resolve at once to errors saying ``reason``; calls already in flight may finish for
        ``grace_s`` seconds (default :data:`~.stop.STOP_GRACE_S`; their answers are cached),
        then they are cancelled.  Safe from any thread, and twice."""
        if self.stopped is not None:
            return
        self.stopped = reason
        schedulers = list((self._schedulers or {}).values())
        for scheduler in schedulers:
            scheduler.stop_issuing(reason)

        def cancel_in_flight() -> None:
            for scheduler in schedulers:
                cancel = getattr(scheduler.backend, "cancel", None)
                if callable(cancel):
                    cancel(reason)

        quiet_timer(STOP_GRACE_S if grace_s is None else grace_s, cancel_in_flight,
                    "gi-stop-grace")

    def close(self, *, cancel: bool = False) -> None:
        """Close the schedulers built (waiting for requests in flight); with ``cancel``
        requests not started are dropped and none is retried."""
        for s in (self._schedulers or {}).values():
            s.close(cancel_pending=cancel)
            close = getattr(s.backend, "close", None)  # a batch backend's thread
            if callable(close):
                close()

    def notes(self) -> list[str]:
        """One line per model whose circuit breaker opened or whose provider reported
        impossible token counts, one when the cost cap refused requests and one when the
        token budget did."""
        out: list[str] = []
        for model, scheduler in (self._schedulers or {}).items():
            if scheduler.circuit_open_reason:
                unsent = scheduler.stats().get("circuit_skipped", 0)
                out.append(f"{model}: {scheduler.circuit_open_reason} ({unsent} request(s) "
                           "not sent; their items are errors)")
            backend = scheduler.backend
            out += [f"{model}: {note}" for note in _claim_notes(scheduler)]
            out += [f"{model}: {note}" for note in _batch_notes(backend)]
            rejected = getattr(backend, "usage_rejections", 0)
            if rejected:
                out.append(f"{model}: {rejected} answer(s) with an impossible token count from "
                           f"the provider (first: {backend.first_usage_rejection}); recounted "
                           "with tiktoken")
        capped = None if self.cap is None else self.cap.summary()
        if capped is not None:
            out.append(capped)
        budget = self._budget_summary()
        if budget is not None:
            out.append(budget)
        return out

    def limits(self) -> list[str]:
        """The spending limits that refused requests in this process, each as the run's
        coverage names it (``cost cap reached (--gi-max-cost=5 USD)``, ``token budget
        exhausted (--gi-max-tokens-total=3000)``); empty when none refused any."""
        out = []
        if self.cap is not None and self.cap.refused:
            out.append(self.cap.limit_reached())
        budget = self._budget_refused()
        if budget is not None:
            out.append(budget[0])
        return out

    def _budget_refused(self) -> tuple[str, int] | None:
        """``--gi-max-tokens-total`` named as the coverage names it, and how many requests it
        refused in this process; ``None`` when it refused none (or is not set)."""
        from pytest_graphinstruct.models.scheduling.scheduler import BUDGET_EXHAUSTED

        total = self.inputs.config.max_tokens_total
        refused = sum(int(s.stats().get("budget_skipped", 0))
                      for s in (self._schedulers or {}).values())
        if total is None or not refused:
            return None
        return f"{BUDGET_EXHAUSTED} (--gi-max-tokens-total={total})", refused

    def _budget_summary(self) -> str | None:
        """One line when ``--gi-max-tokens-total`` refused requests in this process (``None``
        otherwise): the budget, the tokens spent, the requests not issued, and that the run
        is partial."""
        budget = self._budget_refused()
        total = self.inputs.config.max_tokens_total
        if budget is None or total is None:
            return None
        name, refused = budget
        spent = max((int(s.stats().get("budget_spent", 0))
                     for s in (self._schedulers or {}).values()), default=0)
        share = "" if self.worker is None else f" (this worker's share: {total // self.worker[1]})"
        return (f"{name}: {spent} token(s) spent{share}, {refused} request(s) not issued; the run "
                "is partial: rerun with a larger budget (answers already cached are not asked "
                "again)")

    def batch_progress(self) -> tuple[BatchProgress, ...]:
        """Where each batched model's batches stand (``--gi-batch``; the live progress line):
        per model with a batch not read yet, the oldest such batch, its place among the
        model's batches this run deals with and its last known state and counts; empty
        without batch mode (or before the schedulers are built).  Safe from any thread."""
        out: list[BatchProgress] = []
        for model, scheduler in list((self._schedulers or {}).items()):
            statuses = getattr(scheduler.backend, "statuses", None)
            if not callable(statuses):
                continue
            batches = statuses()
            live = [n for n, b in enumerate(batches) if b.live]
            if not live:
                continue
            batch = batches[live[0]]
            done, failed, total = batch.counts
            out.append(BatchProgress(model, live[0] + 1, len(batches), batch.state,
                                     done, failed, total))
        return tuple(out)

    def cache_sources(self) -> dict[str, CacheSource]:
        """Per cell label: the snapshots of the answers this process reused from an earlier
        run's cache and when the oldest was cached (:meth:`.Scheduler.cache_sources`)."""
        from pytest_graphinstruct.models.caching.snapshot import merge_sources

        return merge_sources(*(s.cache_sources() for s in (self._schedulers or {}).values()))

    def sent(self) -> dict[str, Sent]:
        """Per model whose answers come from an endpoint (a cacheable backend: not the oracle,
        not recorded answers): what this process's scheduler really sent to it and how many
        answers an earlier run's cache served (:meth:`.Scheduler.sent`), and in batch mode the
        requests in batches still live at the endpoint now (``batch_in_flight``: submitted,
        billed when they finish, not counted in the rest); empty before any scheduler is
        built."""
        return {model: _with_in_flight(s.sent(), s.backend)
                for model, s in (self._schedulers or {}).items()
                if getattr(s.backend, "cacheable", False)}

    def earlier_keys(self) -> dict[str, frozenset[str]]:
        """Per model of :meth:`sent`: the cache keys an earlier run's cache answered in this
        process (the xdist controller counts their union: two workers may read one answer)."""
        return {model: s.earlier_keys() for model, s in (self._schedulers or {}).items()
                if getattr(s.backend, "cacheable", False)}

    def tokens_spent(self) -> int:
        """The tokens this process's schedulers spent so far (safe from any thread)."""
        return sum(s.tokens_spent() for s in (self._schedulers or {}).values())


def _live_batches(backend: object) -> list[LedgerBatch]:
    """The batches a batch backend's run deals with that are still live (not read yet);
    empty for any other backend."""
    runner = getattr(backend, "runner", None)
    in_flight = getattr(runner, "in_flight", None)
    return list(in_flight()) if callable(in_flight) else []


def _with_in_flight(sent: Sent, backend: object) -> Sent:
    """``sent`` with the requests of ``backend``'s live batches as ``batch_in_flight``."""
    live = _live_batches(backend)
    return replace(sent, batch_in_flight=sum(len(b.custom_ids) for b in live)) if live else sent


def _claim_notes(scheduler: Any) -> list[str]:
    """A scheduler's lines about the other runs on its cache folder (docs/MODELS.md "Two runs
    on one cache"): the requests another run was asking at the same time, awaited instead of
    asked again, and a lease or claims that could not be taken."""
    out: list[str] = []
    stats = scheduler.stats()
    waits, awaited = int(stats.get("claim_waits", 0)), int(stats.get("claim_awaited", 0))
    reasked = int(stats.get("claim_reasked", 0))
    if waits:
        asked = (f"; {reasked} it did not obtain (an error, a refusal, a crash) were asked "
                 "here" if reasked else "")
        out.append(f"{awaited} answer(s) awaited from another run asking the same cache at the "
                   f"same time, not asked again{asked}")
    lease, claims = getattr(scheduler, "lease", None), getattr(scheduler, "claims", None)
    out += [x.warning for x in (lease, claims) if x is not None and x.warning]
    return out


def _batch_notes(backend: object) -> list[str]:
    """A batch backend's lines for the run's summary (none for another backend): a ledger it
    could not write, the batches of an earlier run it resumed, damaged output lines, ledger
    batches the endpoint did not know (HTTP 404),
    and the batches still in flight at the end (interrupted: billed, not counted)."""
    out: list[str] = []
    ledger = getattr(backend, "ledger", None)
    if ledger is not None and ledger.warning:
        out.append(f"{ledger.warning} (the batches it could not record may be submitted again "
                   "by a later run)")
    runner = getattr(backend, "runner", None)
    # the earlier run's batches this run took up, but not those the endpoint forgot (gone)
    # nor the input files a killed run left without a batch (not created)
    lost = set() if runner is None else runner.lost()
    resumed = [] if runner is None else [b for b in runner.resumed if b.entry not in lost]
    if runner is not None and resumed:
        from pytest_graphinstruct.models.batch.ledger import describe_batches

        noun = "batch" if len(resumed) == 1 else "batches"
        out.append(f"resumed {len(resumed)} {noun} an earlier run left at the endpoint "
                   f"({describe_batches(resumed)}; {runner.ledger.path}): their requests are "
                   "collected from there, not sent again")
    if runner is not None and runner.lease_warning:
        out.append(runner.lease_warning)
    if runner is not None:
        fallback = runner.settings.fallback
        gone = runner.gone.summary(runner.ledger.path, fallback=fallback)
        unmade = runner.never_created.summary(runner.ledger.path, fallback=fallback)
        out += [n for n in (runner.damage.summary(), gone, unmade) if n is not None]
    live = _live_batches(backend)
    if live:
        from pytest_graphinstruct.models.batch.ledger import describe_batches

        noun, its = ("batch", "its") if len(live) == 1 else ("batches", "their")
        out.append(f"{len(live)} {noun} still in flight at the endpoint "
                   f"({describe_batches(live)}), not counted in what was sent: a rerun with "
                   f"--gi-batch on this cache collects {its} answers")
    return out
