"""What a run covers (:class:`~pytest_graphinstruct.run.records.results.Coverage`), from how its
pytest session ended and which selected items have results."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from pytest_graphinstruct.run.records.results import Coverage, ItemResult


def run_coverage(session: pytest.Session, results: Sequence[ItemResult], *,
                 selected: Sequence[str] | None, usage_error: str | None, terminated: bool,
                 worker_errors: Sequence[str], limits: Sequence[str] = ()) -> Coverage:
    """Complete when nothing stopped the run and every ``selected`` node id has a result;
    else partial, with the first reason that applies: a usage error, SIGTERM, Ctrl+C, pytest
    stopping with an internal or usage error, a crashed worker, ``-x``/``--maxfail``, items
    never collected (``selected`` is ``None``), selected items without a result (``not asked:``
    and ``limits`` when spending limits refused requests: ``BenchmarkSession.limits``)."""
    done = {f"{r.instruction_id}[{r.cell}]" for r in results}
    missing = [label for label in (selected or ()) if label not in done]
    status = session.exitstatus
    reason = None
    if usage_error is not None:
        reason = f"usage error: {usage_error}"
    elif terminated:
        reason = "terminated (SIGTERM)"
    elif status == pytest.ExitCode.INTERRUPTED:
        reason = "interrupted (Ctrl+C)"
    elif status in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR):
        reason = f"pytest stopped with {pytest.ExitCode(status).name}"
    elif worker_errors:
        reason = "a worker crashed: " + "; ".join(worker_errors)
    elif session.shouldstop or session.shouldfail:
        reason = f"stopped early: {session.shouldstop or session.shouldfail}"
    elif selected is None:
        reason = "the run stopped before its items were collected"
    elif missing:
        reason = (f"not asked: {'; '.join(limits)}" if limits
                  else f"{len(missing)} selected item(s) have no result")
    if reason is None:
        return Coverage(selected=len(selected or ()))
    return Coverage.partial(reason, selected=None if selected is None else len(selected),
                            missing=missing)
