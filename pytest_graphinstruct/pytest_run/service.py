"""The xdist controller's answer service (:mod:`pytest_graphinstruct.run.answer_service`): the
one process of a run that asks endpoints.  Opened before the workers start, asked for every
selected item's answers once the first worker has collected — under ``--gi-samples=auto`` it
then runs the looks there, before xdist hands out any item —, closed at the end.  Registered
only when xdist is loaded."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.pytest_run.items import item_id
from pytest_graphinstruct.pytest_run.state import RunState
from pytest_graphinstruct.run.answer_service import AnswerService, served_models


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
        try:
            state.bench.schedulers  # noqa: B018  (a backend that cannot be built: usage error)
        except GraphInstructError as exc:
            raise state.usage(exc) from None
        assert state.stopper.signal is not None
        state.service = AnswerService(state.bench, state.stopper.signal.folder,
                                      looks=state.run.auto_samples is not None)

    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        # every worker collects the same items: the first one's ids are the selection
        # (xdist calls this before it schedules any item, so before any worker asks; under
        # --gi-samples=auto the looks run here, so no item is handed out before they end)
        if not self.served:
            self.served = True
            serve(self.state, ids)

    @pytest.hookimpl(tryfirst=True)  # before the schedulers close: the workers are gone
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        service = self.state.service
        if service is not None:
            service.close()
            note = refusal_note(service)
            if note is not None:
                self.state.notes.append(note)


def serve(state: RunState, ids: Sequence[str]) -> None:
    """Hand the service the run's selection — the items of the node ids ``ids`` (collection
    order; ids of other tests are passed over), the only items it will answer — and ask it
    for their answers of a model it answers, each cached as it arrives, before any worker
    asks (nothing without a service).  A node id is matched whole against the ids the run's
    items have (:func:`~.items.item_id`), never parsed: an instruction id may hold ``[``.

    Under ``--gi-samples=auto`` that asks each item's first sample, and the service then runs
    the looks against the baseline's cells (:meth:`.AnswerService.run_looks`), returning once
    every item's samples are decided and fetched — as one process does at collection
    (:mod:`.collection`), so ``-n`` asks exactly what ``-n 0`` asks."""
    service = state.service
    if service is None:
        return
    known = {item_id(inst, cell): (inst, cell)
             for inst in state.bench.suite for cell in state.run.cells}
    chosen = [known[nodeid] for nodeid in ids if nodeid in known]
    service.expect(chosen)
    state.bench.prefetch(chosen)
    if state.run.auto_samples is not None:
        service.run_looks(chosen, state.plan.cells)


def refusal_note(service: AnswerService) -> str | None:
    """The line the run says when its answer service turned anything away: connections that
    did not give the run's key (another local process), questions of its workers outside the
    run's items and samples (a ``gi_query`` under ``-n``); ``None`` when nothing was."""
    parts = []
    if service.intruders:
        parts.append(f"{service.intruders} connection(s) that did not give the run's key "
                     "(another local process tried to use it)")
    if service.refused:
        parts.append(f"{service.refused} question(s) for items or samples outside the run's "
                     "plan (under -n, gi_query answers only the run's items)")
    if not parts:
        return None
    return (f"the run's answer service refused {' and '.join(parts)}; nothing was asked of "
            "an endpoint for them")
