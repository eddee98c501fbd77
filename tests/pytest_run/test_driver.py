"""``RunDriver``: the run's state in one process (worker or controller, what the controller sent)
and the steps that need no pytest session around them."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_graphinstruct.pytest_run.driver import RunDriver
from pytest_graphinstruct.pytest_run.items import BASELINE_FAILURE
from pytest_graphinstruct.run.payload import (
    INPUT_KEY,
    OUTPUT_KEY,
    WorkerInput,
    WorkerPayload,
)
from pytest_graphinstruct.run.tally import ProgressCounts

from .fakes import (
    FakeConfig,
    FakeSession,
    controller_config,
    run_config,
    worker_config,
)


def _driver(tmp_path: Path, config: Any = None, **raw: Any) -> RunDriver:
    return RunDriver(config or FakeConfig(tmp_path), run_config(tmp_path, **raw))


def test_a_single_process_is_neither_worker_nor_controller(tmp_path: Path) -> None:
    driver = _driver(tmp_path)
    assert (driver.worker, driver.winput, driver.controller) == (None, None, False)
    assert driver.progress_counts() == ProgressCounts()  # no session opened yet


def test_a_worker_knows_its_index_and_what_its_controller_sent(tmp_path: Path) -> None:
    sent = WorkerInput(progress=True, stop_folder="/tmp/x")
    driver = _driver(tmp_path, worker_config(tmp_path, "gw3", 4, **{INPUT_KEY: sent.to_json()}))
    assert driver.worker == (3, 4) and driver.winput == sent and not driver.controller
    plain = _driver(tmp_path, worker_config(tmp_path, "odd", 2))
    assert plain.worker == (0, 2) and plain.winput == WorkerInput()


def test_the_controller_is_asked_late(tmp_path: Path) -> None:
    config = FakeConfig(tmp_path, numprocesses=2)
    driver = _driver(tmp_path, config)
    assert not driver.controller  # xdist has not registered its session plugin yet
    config.pluginmanager.loaded.add("dsession")
    assert driver.controller
    config.option.numprocesses = 0  # -n 0: no workers
    assert not driver.controller


def test_the_controllers_progress_is_its_workers_added(tmp_path: Path) -> None:
    driver = _driver(tmp_path, controller_config(tmp_path))
    driver.totals.counted("gw0", ProgressCounts(3, 1))
    driver.totals.counted("gw1", ProgressCounts(2, 2))
    assert driver.progress_counts() == ProgressCounts(5, 3)


def test_a_usage_error_is_remembered_and_written_to_the_report(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    driver = _driver(tmp_path, report=str(report))
    err = driver.usage("a\nbad thing")
    assert isinstance(err, pytest.UsageError) and str(err) == "pytest-graphinstruct: a\nbad thing"
    assert driver.usage_error == "a bad thing"
    coverage = json.loads(report.read_text(encoding="utf-8"))["coverage"]
    assert coverage["reason"] == "usage error: a bad thing"


def test_a_workers_usage_error_writes_nothing(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    driver = _driver(tmp_path, worker_config(tmp_path), report=str(report))
    driver.usage("bad")
    assert driver.usage_error == "bad" and not report.exists()


# -- reported ----------------------------------------------------------------------------------

def _report(nodeid: str = "L1-001[oracle-zero-shot]", when: str = "call", **kw: Any) -> Any:
    return SimpleNamespace(nodeid=nodeid, when=when, passed=kw.pop("passed", True), **kw)


def test_reported_counts_items_done_and_shows_a_pending_stop_line_once(tmp_path: Path) -> None:
    driver = _driver(tmp_path)
    driver.stopper.line = "pytest-graphinstruct: SIGTERM: no new requests"
    driver.reported(_report(when="setup"))  # passed: not done yet
    driver.reported(_report())
    driver.reported(_report(nodeid="tests/test_x.py::test_y"))  # not an item of the run
    assert driver.items_done == 1
    assert driver.config.get_terminal_writer().lines == [
        ("\npytest-graphinstruct: SIGTERM: no new requests", {"yellow": True})]


def test_a_worker_reports_nothing_itself(tmp_path: Path) -> None:
    driver = _driver(tmp_path, worker_config(tmp_path))
    driver.reported(_report())
    assert driver.items_done == 0


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
    driver = _driver(tmp_path, config, benchmark=True)
    driver.reported(_report("L1-001[oracle-zero-shot]", wasxfail="model violations"))
    driver.reported(_report("L1-002[oracle-zero-shot]", wasxfail="failed in the baseline too",
                            user_properties=[(BASELINE_FAILURE, True)]))
    driver.reported(_report("L2-001[oracle-zero-shot]"))  # passed
    driver.unconfigure()  # after pytest's own record was written
    assert config.cache.saved["cache/lastfailed"] == {"tests/t.py::test_x": True,
                                                      "L1-001[oracle-zero-shot]": True}
    plain_config = FakeConfig(tmp_path)
    plain_config.cache = FakeCache()
    plain = _driver(tmp_path, plain_config)
    plain.reported(_report("L0-001[oracle-zero-shot]", wasxfail="model violations"))
    plain.unconfigure()
    assert plain_config.cache.saved == {}  # neither benchmark nor gated


JUNIT = ('<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite '
         'name="pytest" tests="2"><testcase classname="" name="L1-001[oracle-zero-shot]" '
         'time="0.001" /><testcase classname="tests.test_x" name="test_y" time="0.002" />'
         '</testsuite></testsuites>')


def test_junit_gets_a_class_per_cell_and_nothing_else_changes(tmp_path: Path) -> None:
    _driver(tmp_path).unconfigure()  # without --junitxml: nothing to name
    xml = tmp_path / "j.xml"
    xml.write_text(JUNIT, encoding="utf-8")
    config = FakeConfig(tmp_path)
    config.option.xmlpath = str(xml)
    _driver(tmp_path, config).unconfigure()
    assert xml.read_text(encoding="utf-8") == JUNIT.replace(
        'classname=""', 'classname="graphinstruct.oracle-zero-shot"')
    xml.write_text("<testsuites", encoding="utf-8")  # not XML: left as it is
    _driver(tmp_path, config).unconfigure()
    assert xml.read_text(encoding="utf-8") == "<testsuites"


# -- end_session -------------------------------------------------------------------------------

def test_a_worker_ships_its_payload_at_the_end(tmp_path: Path) -> None:
    config = worker_config(tmp_path)
    driver = _driver(tmp_path, config)
    driver.end_session(FakeSession(config), pytest.ExitCode.OK)
    assert WorkerPayload.from_json(config.workeroutput[OUTPUT_KEY]) == WorkerPayload()
    assert driver.report is None  # the controller writes the report


def test_a_stop_turns_a_finished_run_into_an_interrupted_one(tmp_path: Path) -> None:
    config = FakeConfig(tmp_path, collectonly=True)  # collect-only: nothing is written
    driver = _driver(tmp_path, config, report=str(tmp_path / "r.json"))
    driver.stopper.reason = "terminated (SIGTERM)"
    session = FakeSession(config)
    driver.end_session(session, pytest.ExitCode.TESTS_FAILED)
    assert session.exitstatus == pytest.ExitCode.INTERRUPTED
    assert driver.report is None and not (tmp_path / "r.json").exists()
    session = FakeSession(config, exitstatus=pytest.ExitCode.USAGE_ERROR)
    driver.end_session(session, pytest.ExitCode.USAGE_ERROR)
    assert session.exitstatus == pytest.ExitCode.USAGE_ERROR  # kept: it says more
