"""``OutcomePlugin``: each item's outcome recorded where it ran, counted where it is reported,
and kept for pytest's own files (JUnit classes, ``--lf``)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pytest_graphinstruct.pytest_run.items import BASELINE_FAILURE
from pytest_graphinstruct.pytest_run.outcomes import OutcomePlugin
from pytest_graphinstruct.pytest_run.state import RunState

from .fakes import FakeConfig, run_config, worker_config


def _state(tmp_path: Path, config: Any = None, **raw: Any) -> RunState:
    return RunState(config or FakeConfig(tmp_path), run_config(tmp_path, **raw))


def _report(nodeid: str = "L1-001[oracle-zero-shot]", when: str = "call", **kw: Any) -> Any:
    return SimpleNamespace(nodeid=nodeid, when=when, passed=kw.pop("passed", True), **kw)


def test_reported_counts_items_done_and_shows_a_pending_stop_line_once(tmp_path: Path) -> None:
    state = _state(tmp_path)
    state.stopper.line = "pytest-graphinstruct: SIGTERM: no new requests"
    plugin = OutcomePlugin(state)
    plugin.pytest_runtest_logreport(_report(when="setup"))  # passed: not done yet
    plugin.pytest_runtest_logreport(_report())
    plugin.pytest_runtest_logreport(_report(nodeid="tests/test_x.py::test_y"))  # not the run's
    assert state.items_done == 1
    assert state.config.get_terminal_writer().lines == [
        ("\npytest-graphinstruct: SIGTERM: no new requests", {"yellow": True})]


def test_a_worker_reports_nothing_itself(tmp_path: Path) -> None:
    state = _state(tmp_path, worker_config(tmp_path))
    OutcomePlugin(state).pytest_runtest_logreport(_report())
    assert state.items_done == 0


class FakeCache:
    """``config.cache``: pytest's last-failed record as LFPlugin left it."""

    def __init__(self, **saved: Any) -> None:
        self.saved: dict[str, Any] = dict(saved)

    def get(self, key: str, default: Any) -> Any:
        return self.saved.get(key, default)

    def set(self, key: str, value: Any) -> None:
        self.saved[key] = value


def test_benchmark_xfails_stay_for_last_failed(tmp_path: Path) -> None:
    config = FakeConfig(tmp_path)
    config.cache = FakeCache(**{"cache/lastfailed": {"tests/t.py::test_x": True}})
    state = _state(tmp_path, config, benchmark=True)
    plugin = OutcomePlugin(state)
    plugin.pytest_runtest_logreport(_report("L1-001[oracle-zero-shot]",
                                            wasxfail="model violations"))
    plugin.pytest_runtest_logreport(_report("L1-002[oracle-zero-shot]",
                                            wasxfail="failed in the baseline too",
                                            user_properties=[(BASELINE_FAILURE, True)]))
    plugin.pytest_runtest_logreport(_report("L2-001[oracle-zero-shot]"))  # passed
    OutcomePlugin(state).pytest_unconfigure(config)  # after pytest's own record was written
    assert config.cache.saved["cache/lastfailed"] == {"tests/t.py::test_x": True,
                                                      "L1-001[oracle-zero-shot]": True}
    plain_config = FakeConfig(tmp_path)
    plain_config.cache = FakeCache()
    plain = _state(tmp_path, plain_config)
    OutcomePlugin(plain).pytest_runtest_logreport(_report("L0-001[oracle-zero-shot]",
                                                          wasxfail="model violations"))
    OutcomePlugin(plain).pytest_unconfigure(plain_config)
    assert plain_config.cache.saved == {}  # neither benchmark nor gated


JUNIT = ('<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite '
         'name="pytest" tests="2"><testcase classname="" name="L1-001[oracle-zero-shot]" '
         'time="0.001" /><testcase classname="tests.test_x" name="test_y" time="0.002" />'
         '</testsuite></testsuites>')


def test_junit_gets_a_class_per_cell_and_nothing_else_changes(tmp_path: Path) -> None:
    _unconfigure(tmp_path, FakeConfig(tmp_path))  # without --junitxml: nothing to name
    xml = tmp_path / "j.xml"
    xml.write_text(JUNIT, encoding="utf-8")
    config = FakeConfig(tmp_path)
    config.option.xmlpath = str(xml)
    _unconfigure(tmp_path, config)
    assert xml.read_text(encoding="utf-8") == JUNIT.replace(
        'classname=""', 'classname="graphinstruct.oracle-zero-shot"')
    xml.write_text("<testsuites", encoding="utf-8")  # not XML: left as it is
    _unconfigure(tmp_path, config)
    assert xml.read_text(encoding="utf-8") == "<testsuites"




def _unconfigure(tmp_path: Path, config: Any) -> None:
    OutcomePlugin(_state(tmp_path, config)).pytest_unconfigure(config)
