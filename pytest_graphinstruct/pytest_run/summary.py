"""The run's section of pytest's terminal summary: the embedded server's start-up, the score
tables, warnings, the replay check, the baseline comparison and verdict, and what was written."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_graphinstruct.pytest_run.state import RunState


class SummaryPlugin:
    """Add the run's section to pytest's terminal summary."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        write_summary(self.state, terminalreporter)


def write_summary(state: RunState, terminalreporter: Any) -> None:
    """Write the GraphInstruct section, in the process that wrote the report (nothing in an
    xdist worker, or before the run has a report)."""
    from pytest_graphinstruct.report.render.terminal import (
        replay_lines,
        summary_lines,
        warning_lines,
    )

    report, decision = state.report, state.decision
    if getattr(state.config, "workeroutput", None) is not None or report is None:
        return
    assert decision is not None  # decided with the report
    terminalreporter.section("GraphInstruct")
    if state.usage_error is not None and not any(c.per_instruction for c in report.cells):
        # stopped by a usage error before any item had a result: pytest's own ERROR line
        # says why; tables of nothing and the reason twice more would bury it
        for written in state.written:
            terminalreporter.write_line(written.line, red=not written.ok)
        return
    local = state.local
    if local is not None and local.startup_s is not None:
        terminalreporter.write_line(
            f"local model: {state.local_info['describe'] if state.local_info else ''} "
            f"(server ready in {local.startup_s:.1f} s)")
    for line in summary_lines(report):
        terminalreporter.write_line(line)
    for line in warning_lines(state.notes):  # escaped: they quote endpoints
        terminalreporter.write_line(line, yellow=True)
    replay = replay_lines(report.run)  # the count line, then each skipped line
    if replay:
        skipped = len(replay) > 1
        terminalreporter.write_line(("WARNING: " if skipped else "") + replay[0], yellow=skipped)
        for line in replay[1:]:
            terminalreporter.write_line(f"  {line}", yellow=True)
    for line in decision.compared_lines() + decision.update_lines():
        terminalreporter.write_line(line)
    for line in decision.verdict.lines():
        terminalreporter.write_line(line, red=True)
    for line in decision.notes:
        terminalreporter.write_line(line, yellow=True)
    for written in state.written:
        terminalreporter.write_line(written.line, red=not written.ok)
