"""Small stand-ins for what pytest hands the edge (config, session, terminal reporter), and a
run configuration over the tiny suite, for unit tests of ``pytest_graphinstruct.pytest_run``."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_graphinstruct.run.config import RunConfig, build_run_config
from tests.plugin._suite import write_suite


def run_config(tmp_path: Path, **raw: Any) -> RunConfig:
    """An oracle run over the tiny suite (written under ``tmp_path``), with ``raw`` options."""
    suite = write_suite(tmp_path / "suite")
    run = build_run_config({"model": "oracle", "suite": str(suite), **raw}, rootdir=tmp_path)
    assert run is not None
    return run


class FakePluginManager:
    """Registers plugins by name; ``plugins`` says which names are loaded."""

    def __init__(self, *loaded: str, **named: Any) -> None:
        self.loaded = set(loaded)
        self.registered: dict[str, Any] = dict(named)

    def register(self, plugin: Any, name: str) -> None:
        self.registered[name] = plugin

    def hasplugin(self, name: str) -> bool:
        return name in self.loaded or name in self.registered

    has_plugin = hasplugin

    def get_plugin(self, name: str) -> Any:
        return self.registered.get(name)


class FakeWriter:
    """A terminal writer: the lines written, and a ``_file`` like pytest's."""

    def __init__(self, stream: Any = None, fullwidth: int = 80) -> None:
        self._file = stream
        self.fullwidth = fullwidth
        self.lines: list[tuple[str, dict[str, Any]]] = []

    def line(self, text: str = "", **markup: Any) -> None:
        self.lines.append((text, markup))


class FakeConfig:
    """The parts of ``pytest.Config`` the edge reads."""

    def __init__(self, rootpath: Path, *, plugins: FakePluginManager | None = None,
                 workerinput: dict[str, Any] | None = None, numprocesses: int | None = None,
                 collectonly: bool = False, verbosity: int = 0, capture: str = "fd",
                 writer: FakeWriter | None = None) -> None:
        self.rootpath = rootpath
        self.pluginmanager = plugins or FakePluginManager()
        if workerinput is not None:
            self.workerinput = workerinput
            self.workeroutput: dict[str, Any] = {}
        self.option = SimpleNamespace(numprocesses=numprocesses, collectonly=collectonly,
                                      keyword="", markexpr="", capture=capture)
        self.verbosity = verbosity
        self.writer = writer or FakeWriter()
        self.ini_lines: list[tuple[str, str]] = []
        self.stash = pytest.Stash()

    def addinivalue_line(self, name: str, line: str) -> None:
        self.ini_lines.append((name, line))

    def get_verbosity(self) -> int:
        return self.verbosity

    def getoption(self, name: str, default: Any = None) -> Any:
        return getattr(self.option, name, default)

    def get_terminal_writer(self) -> FakeWriter:
        return self.writer


def controller_config(rootpath: Path, **kw: Any) -> FakeConfig:
    """The config of an xdist controller (``-n 2``, xdist's session plugin loaded)."""
    return FakeConfig(rootpath, plugins=FakePluginManager("dsession", "xdist"), numprocesses=2,
                      **kw)


def worker_config(rootpath: Path, workerid: str = "gw1", count: int = 2,
                  **info: Any) -> FakeConfig:
    """The config of an xdist worker."""
    return FakeConfig(rootpath, workerinput={"workerid": workerid, "workercount": count, **info})


class FakeSession:
    """The parts of ``pytest.Session`` the edge reads and sets."""

    def __init__(self, config: Any = None, *, exitstatus: int = pytest.ExitCode.OK,
                 shouldstop: bool | str = False, shouldfail: bool | str = False,
                 testsfailed: int = 0, items: list[Any] | None = None) -> None:
        self.config = config
        self.exitstatus = exitstatus
        self.shouldstop = shouldstop
        self.shouldfail = shouldfail
        self.testsfailed = testsfailed
        self.items = items or []


class FakeTerminalReporter:
    """Records ``section`` and ``write_line`` calls, with their markup."""

    def __init__(self) -> None:
        self.sections: list[str] = []
        self.lines: list[tuple[str, dict[str, Any]]] = []

    def section(self, title: str) -> None:
        self.sections.append(title)

    def write_line(self, line: str, **markup: Any) -> None:
        self.lines.append((line, markup))

    def texts(self) -> list[str]:
        return [text for text, _ in self.lines]
