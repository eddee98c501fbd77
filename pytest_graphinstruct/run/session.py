"""A benchmark session without pytest: requests, answers, verdicts and results per item.

:class:`BenchmarkSession` is the state of one run in one process, made of collaborators: what
it reads (:class:`~.session_inputs.SessionInputs`), its requests
(:class:`~.requests.RequestBuilder`), one backend and scheduler per model and the run's stop
(:class:`~.schedulers.ModelSchedulers`), the answers asked and awaited
(:class:`~.fetcher.AnswerFetcher`, with :class:`~.method_chains.MethodChains` for iterative
methods; an xdist worker's answers from an endpoint come from the controller's
:class:`~.answer_service.AnswerService`) and the scoring
(:class:`~.scoring.ScoringQueue`).  The pytest plugin and the ``score`` command drive it the
same way: :meth:`BenchmarkSession.prefetch` every item's answers, then per item
:meth:`~BenchmarkSession.answers`, :meth:`~BenchmarkSession.check` (verdicts and outcome) and
:meth:`~BenchmarkSession.record`; :meth:`~BenchmarkSession.flush` scores everything recorded in
one batch (D3's GCNs train together) into typed
:class:`~pytest_graphinstruct.run.records.results.ItemResult` records, and
:meth:`~BenchmarkSession.report` builds the :class:`~.records.results.RunReport`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.graphs.model import Limits
from pytest_graphinstruct.methods.constrained import resolve_format
from pytest_graphinstruct.methods.registry import method_of
from pytest_graphinstruct.models.base import Request, wait_result
from pytest_graphinstruct.run.aggregate import TOOL, build_run_report
from pytest_graphinstruct.run.answer_service import AnswerClient, served_models
from pytest_graphinstruct.run.config import Cell, RunConfig
from pytest_graphinstruct.run.fetcher import AnswerFetcher
from pytest_graphinstruct.run.method_chains import MethodChains
from pytest_graphinstruct.run.model_schedulers import ModelSchedulers
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    CellReport,
    Coverage,
    ItemResult,
    PromptSet,
    RunReport,
    sample_passed,
)
from pytest_graphinstruct.run.requests import RequestBuilder
from pytest_graphinstruct.run.session_inputs import SessionInputs, runs_method
from pytest_graphinstruct.run.tally import AnswerTally, BatchProgress, ProgressCounts
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import Suite
from pytest_graphinstruct.vocab import Outcome

if TYPE_CHECKING:
    from pytest_graphinstruct.models.backends.recorded import RecordProblem, ReplayCheck
    from pytest_graphinstruct.models.caching.cache import AnswerCache
    from pytest_graphinstruct.models.caching.snapshot import CacheSource
    from pytest_graphinstruct.models.scheduling.request_stats import Sent
    from pytest_graphinstruct.pools import ReferencePools
    from pytest_graphinstruct.run.adaptive import Looks
    from pytest_graphinstruct.run.evaluate import Checked
    from pytest_graphinstruct.run.item_store import ItemStore
    from pytest_graphinstruct.run.preflight import RunInputs
    from pytest_graphinstruct.run.scoring import ScoringQueue
    from pytest_graphinstruct.run.served import Served
    from pytest_graphinstruct.verify.verifier import Verifier


class BenchmarkSession:
    """State of one benchmark run in one process (controller or xdist worker)."""

    def __init__(self, config: RunConfig, *, worker: tuple[int, int] | None = None,
                 local: Mapping[str, str] | None = None, limits: Limits | None = None,
                 inputs: RunInputs | None = None, served: Served | None = None,
                 service: str | None = None, service_key: str = "",
                 stop_check: Callable[[], str | None] | None = None,
                 session_inputs: SessionInputs | None = None,
                 item_store: ItemStore | None = None) -> None:
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
            service: an xdist worker's: the address of the controller's answer service
                (:mod:`.answer_service`), which answers every model with an endpoint; such a
                worker builds no backend for them and opens no answer cache.
            service_key: the key that service asks first (:attr:`.AnswerService.key`).
            stop_check: handed to every scheduler (:class:`~.models.scheduler.Scheduler`):
                says, right before each request, whether the run was stopped.
            session_inputs: what this process already read for ``config`` (the plugin reads
                the suite at collection, before the session opens); read here when not given.
            item_store: where scored results are kept and :meth:`recall` finds them (the
                ``score`` command's :func:`~.item_store.default_item_store`); none by default.

        Raises:
            GraphInstructError: the suite or the pools cannot be loaded.
        """
        self.config = config
        self.inputs = session_inputs or SessionInputs(config, worker=worker, inputs=inputs,
                                                      served=served)
        self.suite: Suite = self.inputs.suite
        self.cache: AnswerCache | None = self.inputs.cache
        self._limits = limits
        self._item_store = item_store
        self._expected_items: int | None = None  # see expect_items
        self.requests = RequestBuilder(self.inputs)
        remote = served_models(config) if service is not None else frozenset()
        self.models = ModelSchedulers(self.inputs, worker=worker, local=local,
                                      stop_check=stop_check, skip=remote)
        self.chains = MethodChains(self.inputs, self.requests, self.models,
                                   lambda: self.verifier)
        self.tally = AnswerTally()  # the prefetched answers as they arrive (progress line)
        self.fetcher = AnswerFetcher(
            self.inputs, self.requests, self.models, self.chains, self.tally,
            service=None if service is None else AnswerClient(service, service_key),
            served=remote)

    @cached_property
    def verifier(self) -> Verifier:
        """The run's verifier (with the parser's limits given), built on first use."""
        from pytest_graphinstruct.verify.verifier import Verifier

        return Verifier(limits=self._limits) if self._limits is not None else Verifier()

    @cached_property
    def scoring(self) -> ScoringQueue:
        """The items checked and recorded in this process, and their scores, built on first
        use: a process that only writes the report (the xdist controller) never imports the
        scoring side (the pools, D1–D5 and what they need)."""
        from pytest_graphinstruct.run.scoring import ScoringQueue

        return ScoringQueue(self.inputs, self.requests, self.verifier, store=self._item_store,
                            expected=self._expected_items)

    def expect_items(self, n: int) -> None:
        """About ``n`` items will be recorded in this process (an xdist worker's share, known
        once it collected), for the size of its last scoring batches
        (:meth:`.ScoringQueue.batch_limit`); also when the queue was built before."""
        self._expected_items = n
        if "scoring" in self.__dict__:  # the cached queue, built already
            self.scoring.expected = n

    # -- what the run reads --------------------------------------------------------------------

    @property
    def pools(self) -> ReferencePools | None:
        """The run's reference pools, loaded on first use (:attr:`.SessionInputs.pools`).

        Raises:
            GraphInstructError: the pools cannot be read.
        """
        return self.inputs.pools

    @property
    def recorded_ids(self) -> frozenset[str] | None:
        """The instruction ids the recorded answers hold usable records for
        (:attr:`.SessionInputs.recorded_ids`; ``None`` without ``--gi-replay``)."""
        return self.inputs.recorded_ids

    @property
    def replay_problems(self) -> tuple[RecordProblem, ...]:
        """Every line of the recorded answers that was skipped, and why, in line order."""
        return self.inputs.replay_problems

    @property
    def replay_check(self) -> ReplayCheck | None:
        """What reading the recorded answers found, as the report's ``run.replay_problems``
        keeps it (``None`` without ``--gi-replay``)."""
        return self.inputs.replay_check

    def select(self, instructions: Sequence[Instruction]) -> list[Instruction]:
        """The instructions this run asks (:meth:`.SessionInputs.select`)."""
        return self.inputs.select(instructions)

    # -- requests and answers ------------------------------------------------------------------

    @property
    def schedulers(self) -> dict[str, Any]:
        """One scheduler per model, built on first access (:attr:`.ModelSchedulers.schedulers`).

        Raises:
            GraphInstructError: a backend cannot be set up.
        """
        return self.models.schedulers

    def request(self, instruction: Instruction, cell: Cell, sample: int) -> Request:
        """The request for one sample of one item (deterministic; no randomness)."""
        return self.requests.request(instruction, cell, sample)

    def prefetch(self, items: Iterable[tuple[Instruction, Cell]]) -> int:
        """Submit every sample of ``items``; returns the number submitted
        (:meth:`.AnswerFetcher.prefetch`)."""
        return self.fetcher.prefetch(items)

    def query(self, inst: Instruction, cell: Cell, sample: int = 0) -> Answer:
        """One sample's answer (the ``gi_query`` fixture), asked now unless it was."""
        return wait_result(self.fetcher.ask(inst, cell, sample))

    def ask_adaptively(self, items: Sequence[tuple[Instruction, Cell]],
                       baselines: Mapping[str, CellReport]) -> Looks:
        """``--gi-samples=auto``: after :meth:`prefetch` asked each item's first sample, ask
        more look by look until the gate's every level is decided against ``baselines`` (run
        cell label → baseline cell); each item then has the samples its looks asked
        (:func:`.adaptive.ask_adaptively`)."""
        from pytest_graphinstruct.run.adaptive import ask_adaptively
        from pytest_graphinstruct.run.evaluate import sample_result

        cap = self.config.auto_samples
        if cap is None:
            raise ValueError("ask_adaptively needs --gi-samples=auto")

        def passed(inst: Instruction, cell: Cell, answer: Answer) -> bool:
            return sample_passed(sample_result(self.check(inst, cell, [answer])
                                               .verifications[0], answer))

        return ask_adaptively(items, baselines, self.inputs.planned, cap=cap,
                              ask=self.fetcher.ask, passed=passed)

    def answers(self, inst: Instruction, cell: Cell) -> tuple[Answer, ...]:
        """Every sample's answer for one item (blocks until all are obtained or given up;
        :meth:`.AnswerFetcher.answers`)."""
        return self.fetcher.answers(inst, cell)

    # -- evaluation ----------------------------------------------------------------------------

    def check(self, inst: Instruction, cell: Cell, answers: Sequence[Answer]) -> Checked:
        """Verify every sample of one item and decide its outcome (no scores yet: see
        :meth:`record` and :meth:`flush`)."""
        return self.scoring.check(inst, cell, answers)

    def record(self, checked: Checked, *, expected_failure: bool = False) -> None:
        """Keep a checked item for scoring (:meth:`.ScoringQueue.record`)."""
        self.scoring.record(checked, expected_failure=expected_failure)

    def recall(self, inst: Instruction, cell: Cell, answers: Sequence[Answer]) -> bool:
        """Keep the stored result of an item scored before with these answers, if the item
        store has it (:meth:`.ScoringQueue.recall`): then it needs no :meth:`check`."""
        return self.scoring.recall(inst, cell, answers)

    def record_error(self, inst: Instruction, cell: Cell, answers: Sequence[Answer], *,
                     outcome: Outcome, error: str | None) -> None:
        """Keep an item that has no scores (``error``: no answer; ``skipped``)."""
        self.scoring.record_error(inst, cell, answers, outcome=outcome, error=error)

    def flush(self) -> list[ItemResult]:
        """Score every item recorded since the last flush and return the results of every
        item recorded in this process (:meth:`.ScoringQueue.flush`)."""
        return self.scoring.flush()

    def evaluate(self, inst: Instruction, cell: Cell, answers: Sequence[Answer]) -> ItemResult:
        """Verify and score one item at once (outside the plugin's batching)."""
        return self.scoring.evaluate(inst, cell, answers)

    def report(self, results: Sequence[ItemResult], *, coverage: Coverage | None = None,
               model_info: Mapping[str, str] | None = None) -> RunReport:
        """The run report of ``results`` (from this process or merged from workers);
        ``coverage`` says what the run covers (default: complete)."""
        coverage = coverage or Coverage()
        partial = not coverage.complete
        order = {inst.id: n for n, inst in enumerate(self.suite)}
        served = self.inputs.served.models()
        cells = [(cell_metadata(self.config, cell, partial=partial, model_info=model_info,
                                served=served),
                  [r for r in results if r.cell == cell.label]) for cell in self.config.cells]
        return build_run_report(cells, suite_order=order, coverage=coverage)

    # -- stop and end --------------------------------------------------------------------------

    def stop(self, reason: str, *, grace_s: float | None = None) -> None:
        """Issue no new request, in any cell (the run was interrupted): requests not issued
        resolve at once to errors saying ``reason``; calls already in flight may finish for
        ``grace_s`` seconds (default :data:`~.stop.STOP_GRACE_S`; their answers are cached),
        then they are cancelled.  Safe from any thread, and twice."""
        self.models.stop(reason, grace_s=grace_s)

    def close(self, *, cancel: bool = False) -> None:
        """Close the schedulers (waiting for requests in flight); with ``cancel`` (an
        interrupted or stopped run) requests not started are dropped and none is retried."""
        self.chains.close(cancel=cancel)
        self.models.close(cancel=cancel)
        self.inputs.flush_pools()

    def notes(self) -> list[str]:
        """One line per thing that went wrong outside the items and must not pass unseen:
        answers that could not be cached, damaged cache lines, an open circuit breaker,
        provider token counts that were impossible (each line names the model or cache)."""
        out: list[str] = []
        if self.cache is not None:
            out += [line for line in (self.cache.write_failure_summary(),
                                      self.cache.damage_summary()) if line]
        return out + self.models.notes()

    def limits(self) -> list[str]:
        """The spending limits that refused requests in this process
        (:meth:`ModelSchedulers.limits`)."""
        return self.models.limits()

    def cache_sources(self) -> dict[str, CacheSource]:
        """Per cell label: the snapshots of the answers this process reused from an earlier
        run's cache and when the oldest was cached (:meth:`.Scheduler.cache_sources`)."""
        return self.models.cache_sources()

    def earlier_keys(self) -> dict[str, frozenset[str]]:
        """Per model with an endpoint: the cache keys an earlier run's cache answered here
        (:meth:`.ModelSchedulers.earlier_keys`)."""
        return self.models.earlier_keys()

    def sent(self) -> dict[str, Sent]:
        """Per model with an endpoint: what this process really sent to it and how many
        answers an earlier run's cache served (:meth:`.ModelSchedulers.sent`)."""
        return self.models.sent()

    def progress(self) -> ProgressCounts:
        """The prefetched answers' counts so far and the tokens this process spent (safe to
        call from any thread)."""
        return self.tally.counts(tokens=self.models.tokens_spent())

    def batch_progress(self) -> tuple[BatchProgress, ...]:
        """Where each model's batches stand (``--gi-batch``; empty otherwise), safe to call
        from any thread (:meth:`.ModelSchedulers.batch_progress`)."""
        return self.models.batch_progress()


def cell_metadata(config: RunConfig, cell: Cell, *, partial: bool = False,
                  model_info: Mapping[str, str] | None = None,
                  served: Mapping[str, str | None] | None = None) -> CellMetadata:
    """What produced a cell of this run (``model_info``: model name → what served it;
    ``served``: model name → the snapshot its endpoint said it served).  Its
    ``model_version`` is ``--gi-model-version``, else the snapshot served, else ``None``; its
    ``prompts`` the ``--gi-prompts`` set (:func:`prompt_set`)."""
    return CellMetadata(
        model=cell.model, strategy=cell.strategy, method=cell.method, tool=TOOL,
        constraint=(resolve_format(config.constrained_format, cell.model)
                    if method_of(cell.spec).constrained else None),
        model_info=(model_info or {}).get(cell.model), suite=str(config.suite),
        levels=config.levels,
        samples_per_instruction=config.chains if runs_method(cell) else config.samples,
        pass_rule=config.pass_rule, decoding=config.params.to_json(), partial=partial,
        method_settings=_method_settings(config, cell),
        model_version=config.model_version(cell.model) or (served or {}).get(cell.model),
        prompts=prompt_set(config), samples_cap=config.auto_samples)


def prompt_set(config: RunConfig) -> PromptSet | None:
    """The prompt set a run's requests are made from, as its cells record it: ``None`` for the
    packaged templates, and for recorded answers (``--gi-replay``: no prompt is sent)."""
    templates = config.templates
    digest = templates.sha256()
    if digest is None or config.replay is not None:
        return None
    name = templates.folder.name if templates.folder is not None else "overrides"
    return PromptSet(name or "overrides", digest, templates.names)


def _method_settings(config: RunConfig, cell: Cell) -> dict[str, Any]:
    """What a method's cell ran with (the registry's method says; empty for other cells)."""
    if not runs_method(cell):
        return {}
    return dict(method_of(cell.spec).settings(cell.spec, config.method_context))
