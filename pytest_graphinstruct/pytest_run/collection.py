"""The run's items: appended at collection, and (in the process that runs them) their answers
requested as soon as they are known."""

from __future__ import annotations

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.pytest_run.items import GraphInstructItem, make_items
from pytest_graphinstruct.pytest_run.state import RunState


class CollectionPlugin:
    """Collect the run's items, then ask for their answers."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        add_items(self.state, session, items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """The process that runs the items: note them, and (one process) request their
        answers now; an xdist worker asks for each item's answers when it runs."""
        state = self.state
        if state.controller or session.config.option.collectonly:
            return
        mine = [it for it in session.items if isinstance(it, GraphInstructItem)]
        state.selected = [it.nodeid for it in mine]
        if state.worker is not None:  # xdist hands each worker about its share of the items
            state.share = -(-len(mine) // state.worker[1])
            if state.opened is not None:  # opened before its items were known
                state.opened.expect_items(state.share)
            return
        chosen = [(it.instruction, it.cell) for it in mine]
        try:
            state.bench.prefetch(chosen)
        except GraphInstructError as exc:  # a backend that cannot be set up
            raise state.usage(exc) from None
        if state.run.auto_samples is not None:  # how many each level took, and why: the
            state.bench.ask_adaptively(chosen, state.plan.cells)  # gate's compared lines


def add_items(state: RunState, session: pytest.Session, items: list[pytest.Item]) -> None:
    """Append the run's items to ``items``, announced like a collector's ("collected N
    items")."""
    chosen = state.selection()  # the suite only: pools and models wait for the first item
    if state.run.shard is not None:
        from pytest_graphinstruct.run.shard import select

        mine = select({inst.id: inst.level for inst in chosen}, state.run.shard)
        chosen = [inst for inst in chosen if inst.id in mine]
    new = make_items(session, state, chosen)
    items.extend(new)
    session.ihook.pytest_collectreport(report=pytest.CollectReport(
        "graphinstruct", "passed", None, list(new)))
