"""``--gi-dry-run``: the run's items are collected as usual (``-k``, ``-m``, ``--gi-levels``,
``--gi-per-level`` and ``--gi-shard`` select them), then, instead of the run, its estimate is
printed (:mod:`pytest_graphinstruct.run.estimate`) and nothing runs: no backend is built, no
request sent, no report or cache written.  One process only (with ``-n`` it is a usage
error: the estimate needs no workers)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.pytest_run.items import GraphInstructItem

if TYPE_CHECKING:
    from pytest_graphinstruct.pytest_run.state import RunState
    from pytest_graphinstruct.run.config import RunConfig


def dry_run_config(run: RunConfig) -> RunConfig:
    """``run`` as a dry run makes it: without the answer cache and the outputs (it opens and
    writes nothing)."""
    return replace(run, cache_dir=None, report=None, html=None, markdown=None, store=None)


class DryRunPlugin:
    """The hooks of a dry run: collect the items, estimate them, print, run nothing."""

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.lines: list[str] = []

    @pytest.hookimpl(tryfirst=True)  # before xdist starts its workers
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if getattr(session.config.option, "numprocesses", None):
            raise self.state.usage("--gi-dry-run runs in one process: drop -n")

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        from pytest_graphinstruct.pytest_run.collection import add_items

        add_items(self.state, session, items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.lines = dry_run_lines(self.state, session.items)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        return True  # nothing runs

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        for line in self.lines:
            terminalreporter.write_line(line)


def dry_run_lines(state: RunState, items: list[pytest.Item]) -> list[str]:
    """The estimate of the selected ``items`` as the dry run prints it (the output tokens
    from the run's ``--gi-baseline`` report, which the run read and checked).

    Raises:
        pytest.UsageError: the price table cannot be read or tokens cannot be counted (one
            line).
    """
    from pytest_graphinstruct.report.render.estimate import estimate_lines
    from pytest_graphinstruct.run.estimate import estimate_run, price_table

    run, bench = state.run, state.bench
    chosen = [(it.instruction, it.cell) for it in items if isinstance(it, GraphInstructItem)]
    cap = run.auto_samples
    # --gi-samples=auto: what it may ask at most (its looks depend on the answers)
    samples = bench.inputs.samples if cap is None else (lambda inst, cell: cap)
    try:
        estimate = estimate_run(run, chosen, bench.requests, samples,
                                price_table(run), state.plan.report)
    except GraphInstructError as exc:
        raise state.usage(exc) from None
    return estimate_lines(estimate)
