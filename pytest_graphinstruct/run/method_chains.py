"""The threads that run an iterative method's chains for a session (:class:`MethodChains`);
one chain is one sample (:mod:`pytest_graphinstruct.run.method_runner`)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING

from pytest_graphinstruct.answers import LIMIT_KINDS, Answer, Message
from pytest_graphinstruct.models.base import quiet_thread
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.run.model_schedulers import ModelSchedulers
from pytest_graphinstruct.run.requests import RequestBuilder
from pytest_graphinstruct.run.session_inputs import SessionInputs
from pytest_graphinstruct.suite.instruction import Instruction

if TYPE_CHECKING:
    from pytest_graphinstruct.verify.verifier import Verifier


class _CostCapped(Exception):
    """A call of a chain the cost cap or the token budget did not issue: the chain ends
    unanswered."""

    def __init__(self, answer: Answer) -> None:
        super().__init__(answer.error)
        self.answer = answer


class MethodChains:
    """Runs method chains on threads of their own (each waits on its own calls in the
    scheduler, so they never occupy the scheduler's workers); the pool starts on first use."""

    def __init__(self, inputs: SessionInputs, requests: RequestBuilder,
                 models: ModelSchedulers, verifier: Callable[[], Verifier]) -> None:
        """``verifier`` gives the run's verifier when a chain first needs it (a process that
        runs no method chain never imports the verifier)."""
        self.inputs = inputs
        self.requests = requests
        self.models = models
        self.verifier = verifier
        self._pool: ThreadPoolExecutor | None = None

    def submit(self, inst: Instruction, cell: Cell, k: int) -> Future[Answer]:
        """Start chain ``k`` of one item; its future holds the chain's answer."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.inputs.config.concurrency,
                                            thread_name_prefix="gi-method",
                                            initializer=quiet_thread)
        return self._pool.submit(self._chain, inst, cell, k)

    def close(self, *, cancel: bool = False) -> None:
        """Wait for the chains running (with ``cancel``: not for them, and drop those not
        started); nothing when none ever ran."""
        if self._pool is not None:
            self._pool.shutdown(wait=not cancel, cancel_futures=cancel)

    def _chain(self, inst: Instruction, cell: Cell, k: int) -> Answer:
        """Sample ``k`` of an iterative method's item: one chain (never raises: a harness
        fault is the answer's error, an infrastructure error, not the model's failure)."""
        from pytest_graphinstruct.methods.iterative import verifier_grader
        from pytest_graphinstruct.run.method_runner import chain_answer, run_chain, sample_index
        from pytest_graphinstruct.score.instruction_score import pool_profiles

        base = self.requests.request(inst, cell, 0)
        scheduler = self.models.schedulers[cell.model]

        def ask(messages: tuple[Message, ...], temperature: float, call: int) -> Answer:
            request = replace(base, messages=messages, sample_index=sample_index(k, call),
                              params=replace(base.params, temperature=temperature))
            answer = scheduler.submit(request).result()
            if answer.failure_kind in LIMIT_KINDS:
                raise _CostCapped(answer)
            return answer

        try:
            grader = verifier_grader(inst, self.verifier(),
                                     pool_profiles(inst, self.inputs.pools))
            result = run_chain(cell.method, inst, base.messages, ask, grader, chain=k,
                               config=self.inputs.config)
        except _CostCapped as capped:  # not run (its calls so far are cached): no result
            return capped.answer
        except Exception as exc:  # a harness fault: say it in one line
            return Answer(error=f"method {cell.method} failed: {type(exc).__name__}: {exc}")
        return chain_answer(result)
