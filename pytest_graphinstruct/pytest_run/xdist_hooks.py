"""The run's xdist hooks, registered only when pytest-xdist is loaded (a plain install has no
xdist, and pluggy refuses a hook whose spec was never registered).

The controller hands each worker one :class:`~.payload.WorkerInput`, keeps the node ids the
workers collected, and adds up each worker's :class:`~.payload.WorkerPayload` as the worker
goes down; while the items run, a worker ships its answer counts with each item's report (the
report attribute :data:`PROGRESS_ATTR`, which xdist serializes) when the controller shows the
live line.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

import pytest

from pytest_graphinstruct.pytest_run.items import GraphInstructItem, is_item_id, item_done
from pytest_graphinstruct.pytest_run.live import live_wanted
from pytest_graphinstruct.pytest_run.state import RunState
from pytest_graphinstruct.run.payload import (
    INPUT_KEY,
    OUTPUT_KEY,
    WorkerInput,
    WorkerPayload,
)
from pytest_graphinstruct.run.records.codec import ShapeError, decode, encode
from pytest_graphinstruct.run.tally import ProgressCounts
from pytest_graphinstruct.vocab import PYTEST_PLUGIN_NAME

XDIST_PLUGIN_NAME = f"{PYTEST_PLUGIN_NAME}-xdist"
"""The name :class:`XdistHooks` is registered under."""
PROGRESS_ATTR = "graphinstruct_progress"
"""The report attribute with a worker's answer counts (ProgressCounts as JSON)."""


class XdistHooks:
    """The xdist hooks of an active run, sharing the run's ``state``."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[INPUT_KEY] = worker_input(self.state).to_json()

    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        # every worker collects the same items: the first one's ids are the selection
        if self.state.selected is None:
            self.state.selected = [label for label in ids if is_item_id(label)]

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        self._add(node, error)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None],
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        self._ship_progress(item, report)
        return report

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._take_progress(report)

    def _add(self, node: Any, error: Any) -> None:
        """Add the payload of the worker ``node`` stands for (its notes once each), or the
        reason it sent none."""
        state = self.state
        output = getattr(node, "workeroutput", None) or {}
        if error or OUTPUT_KEY not in output:
            state.totals.errors.append(str(error or "worker sent no results"))
            return
        payload = WorkerPayload.from_json(output[OUTPUT_KEY])
        state.totals.add(_worker_id(node), payload)
        state.notes.extend(n for n in payload.notes if n not in state.notes)
        state.limits.extend(n for n in payload.limits if n not in state.limits)

    def _ship_progress(self, item: pytest.Item, report: pytest.TestReport) -> None:
        """A worker whose controller shows the live line: put this process's answer counts on
        the report that decides the item's outcome."""
        winput = self.state.winput
        if (isinstance(item, GraphInstructItem) and item_done(report) and winput is not None
                and winput.progress):
            setattr(report, PROGRESS_ATTR, encode(self.state.bench.progress()))

    def _take_progress(self, report: pytest.TestReport) -> None:
        """The controller: keep the answer counts a worker shipped with ``report`` (counts that
        do not read are dropped: a progress display must never fail a run)."""
        shipped = getattr(report, PROGRESS_ATTR, None)
        if shipped is None or self.state.worker is not None or not is_item_id(report.nodeid):
            return
        try:
            counts = decode(ProgressCounts, shipped)
        except ShapeError:
            return
        self.state.totals.counted(_worker_id(getattr(report, "node", None)), counts)


def worker_input(state: RunState) -> WorkerInput:
    """What the controller tells each worker: the embedded server, what its preflight learned,
    whether it shows the live line, the folder of the run's stop file, and the address of its
    answer service and its key."""
    stop = state.stopper.signal
    return WorkerInput(local=state.local_info, served=state.served,
                       progress=live_wanted(state),
                       stop_folder=None if stop is None else str(stop.folder),
                       answers=None if state.service is None else state.service.address,
                       answers_key=None if state.service is None else state.service.key)


def _worker_id(node: Any) -> str:
    """The xdist id (``gw0``) of the worker ``node`` stands for (``""`` when unknown)."""
    return str(getattr(node, "workerinput", {}).get("workerid", ""))
