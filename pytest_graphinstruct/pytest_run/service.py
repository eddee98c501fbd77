"""The xdist controller's answer service (:mod:`pytest_graphinstruct.run.answer_service`): the
one process of a run that asks endpoints.  Opened before the workers start, asked for every
selected item's answers once the first worker has collected, closed at the end.  Registered
only when xdist is loaded."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.pytest_run.items import is_item_id
from pytest_graphinstruct.pytest_run.state import RunState
from pytest_graphinstruct.run.answer_service import served_models


class AnswerServicePlugin:
    """Open, feed and close the controller's answer service."""

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.served = False  # the selection was handed to the service

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """After the run's start (its preflight), before xdist starts the workers (its own
        hook runs last): the controller of a run with an endpoint builds its backends and
        opens the service."""
        state = self.state
        if (session.config.option.collectonly or not state.controller or state.run.dry_run
                or not served_models(state.run)):
            return
        from pytest_graphinstruct.run.answer_service import AnswerService

        try:
            state.bench.schedulers  # noqa: B018  (a backend that cannot be built: usage error)
        except GraphInstructError as exc:
            raise state.usage(exc) from None
        assert state.stopper.signal is not None
        state.service = AnswerService(state.bench, state.stopper.signal.folder)

    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        # every worker collects the same items: the first one's ids are the selection
        if not self.served:
            self.served = True
            serve(self.state, [label for label in ids if is_item_id(label)])

    @pytest.hookimpl(tryfirst=True)  # before the schedulers close: the workers are gone
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.state.service is not None:
            self.state.service.close()


def serve(state: RunState, ids: Sequence[str]) -> None:
    """Ask the service for the answers of the items ``ids`` (node ids, collection order) of a
    model it answers, each cached as it arrives, before any worker asks (nothing without a
    service)."""
    if state.service is None:
        return
    cells = {cell.label: cell for cell in state.run.cells}
    chosen = []
    for nodeid in ids:
        inst_id, _, label = nodeid[:-1].partition("[")
        inst, cell = state.bench.suite.get(inst_id), cells.get(label)
        if inst is not None and cell is not None:
            chosen.append((inst, cell))
    state.bench.prefetch(chosen)
