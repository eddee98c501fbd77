"""The pytest hooks of an active run: each hands one step to the run driver (:mod:`.driver`).

Registered under :data:`~pytest_graphinstruct.vocab.PYTEST_PLUGIN_NAME`, where the fixtures
(:mod:`pytest_graphinstruct.plugin`) find the run's session (``bench``), ``query`` and
``evaluate``.  The xdist hooks are :mod:`.xdist_hooks`'s, registered only when xdist is loaded.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from pytest_graphinstruct.pytest_run.driver import RunDriver
from pytest_graphinstruct.pytest_run.live import live_line
from pytest_graphinstruct.pytest_run.summary import write_summary
from pytest_graphinstruct.run.records.results import ItemResult
from pytest_graphinstruct.suite.instruction import Instruction

if TYPE_CHECKING:  # the evaluation path: imported on first use
    from pytest_graphinstruct.run.session import BenchmarkSession


class GraphInstructPlugin:
    """The hooks of an active benchmark run, each handing off to ``driver``."""

    def __init__(self, driver: RunDriver) -> None:
        self.driver = driver

    @property
    def bench(self) -> BenchmarkSession:
        """The run's session (the ``gi_suite`` and ``gi_results`` fixtures)."""
        return self.driver.bench

    def query(self, instruction: Instruction, strategy: str = "zero-shot", sample: int = 0,
              model: str | None = None) -> Any:
        return self.driver.query(instruction, strategy, sample, model)

    def evaluate(self, instruction: Instruction, answers: Sequence[Any],
                 strategy: str = "zero-shot") -> ItemResult:
        return self.driver.evaluate(instruction, answers, strategy)

    @pytest.hookimpl(tryfirst=True)  # before xdist starts its workers
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.driver.start(session)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.driver.unconfigure()

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        self.driver.collect(session, items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.driver.collected(session)

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        # trylast: inside the terminal reporter's wrapper, so the live line is gone before it
        # writes its last ``[100%]``
        with live_line(self.driver, session):
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None],
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        self.driver.made_report(item, report, call)
        return report

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.driver.reported(report)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.driver.end_session(session, exitstatus)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        write_summary(self.driver, terminalreporter)
