"""The live progress line: shown only by the process that reports, when the terminal and
options allow it, on the terminal writer's stream for the duration of the items' run."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_graphinstruct.pytest_run.live import LiveLinePlugin, live_line, live_wanted
from pytest_graphinstruct.report.live.line import LiveLine
from pytest_graphinstruct.run.tally import BatchProgress, ProgressCounts

from .fakes import FakeConfig, FakePluginManager, FakeSession, FakeWriter


def _state(tmp_path: Path, *, progress: str = "on", worker: tuple[int, int] | None = None,
            reporter: Any = "tty", selected: list[str] | None = None, controller: bool = False,
            writer: FakeWriter | None = None, batches: tuple[BatchProgress, ...] = (),
            **config: Any) -> Any:
    if reporter == "tty":
        reporter = SimpleNamespace(isatty=True, hasmarkup=True)
    plugins = FakePluginManager(**({} if reporter is None else {"terminalreporter": reporter}))
    return SimpleNamespace(
        config=FakeConfig(tmp_path, plugins=plugins, writer=writer, **config),
        run=SimpleNamespace(progress=progress), worker=worker, selected=selected,
        controller=controller, items_done=1,
        progress_counts=lambda: ProgressCounts(requested=4, received=3),
        batch_progress=lambda: batches)


def test_wanted_on_an_interactive_terminal(tmp_path: Path) -> None:
    assert live_wanted(_state(tmp_path, progress="auto"))
    assert live_wanted(_state(tmp_path, progress="on"))


@pytest.mark.parametrize("kw", [
    {"worker": (0, 2)},  # a worker never shows it: its controller does
    {"reporter": None},  # no terminal reporter (-p no:terminal)
    {"progress": "off"},
    {"progress": "auto", "reporter": SimpleNamespace(isatty=False, hasmarkup=False)},
    {"verbosity": -1},  # -q
    {"capture": "no"},  # -s
])
def test_not_wanted(tmp_path: Path, kw: dict[str, Any]) -> None:
    assert not live_wanted(_state(tmp_path, **kw))


@pytest.mark.parametrize("kw", [
    {"collectonly": True},
    {"progress": "off"},
    {"selected": []},  # no items to watch
])
def test_nothing_is_shown_when(tmp_path: Path, kw: dict[str, Any]) -> None:
    stream = io.StringIO()
    state = _state(tmp_path, writer=FakeWriter(stream), **{"selected": ["a[c]"], **kw})
    with live_line(state, FakeSession(state.config)):
        assert state.config.writer._file is stream
    assert stream.getvalue() == ""


def test_a_writer_without_a_stream_is_left_alone(tmp_path: Path) -> None:
    state = _state(tmp_path, selected=["a[c]"], writer=FakeWriter(None))
    with live_line(state, FakeSession(state.config)):
        assert state.config.writer._file is None


def test_the_line_is_drawn_on_the_stream_and_the_stream_given_back(tmp_path: Path) -> None:
    stream = io.StringIO()
    state = _state(tmp_path, selected=["a[c]", "b[c]"], writer=FakeWriter(stream))
    with live_line(state, FakeSession(state.config)):
        live = state.config.writer._file
        assert isinstance(live, LiveLine) and live.stream is stream
        live.refresh()  # the watcher thread may have drawn already: the text is the same
    assert state.config.writer._file is stream
    shown = stream.getvalue()
    assert "answers 3/4" in shown and "items 1/2" in shown
    assert "batch" not in shown  # not a batch run


def test_a_batch_runs_line_shows_its_batch_state(tmp_path: Path) -> None:
    stream = io.StringIO()
    batch = BatchProgress("m", 1, 2, "in_progress\x1b[2J", 1, 0, 4)
    state = _state(tmp_path, selected=["a[c]"], writer=FakeWriter(stream), batches=(batch,))
    with live_line(state, FakeSession(state.config)):
        state.config.writer._file.refresh()
    shown = stream.getvalue()
    assert "items 1/1 | batch 1/2 in_progress\\x1b[2J 1/4" in shown and "\x1b[2J" not in shown


def test_the_controller_shows_it_before_it_knows_the_selection(tmp_path: Path) -> None:
    stream = io.StringIO()
    state = _state(tmp_path, controller=True, writer=FakeWriter(stream))
    with pytest.raises(RuntimeError), live_line(state, FakeSession(state.config)):
        state.config.writer._file.refresh()
        raise RuntimeError("the run loop failed")
    assert state.config.writer._file is stream  # given back on the way out too
    assert "items 1/?" in stream.getvalue()


def test_the_plugin_runs_the_loop_inside_the_line_and_keeps_its_result(tmp_path: Path) -> None:
    state = _state(tmp_path, collectonly=True)  # no live line: only the hand-over is seen
    gen = LiveLinePlugin(state).pytest_runtestloop(FakeSession(state.config))
    next(gen)
    with pytest.raises(StopIteration) as stop:
        gen.send("loop result")
    assert stop.value.value == "loop result"
