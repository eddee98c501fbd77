"""A refused run: the usage error pytest shows, and the partial report that says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.options import DEFAULT_CACHE_DIR
from pytest_graphinstruct.pytest_run.usage import one_line, refuse, usage_error, write_stopped
from pytest_graphinstruct.run.overwrites import Input

from .fakes import FakeConfig, worker_config


def _coverage(path: Path) -> dict[str, object]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["cells"] == []
    return data["coverage"]


def test_one_line_makes_every_run_of_white_space_one_space() -> None:
    assert one_line("  a\n\tb  \r\n c ") == "a b c"
    assert one_line("") == ""


def test_the_usage_error_is_named_after_the_plugin() -> None:
    err = usage_error(GraphInstructError("--gi-samples must be ≥ 1"))
    assert isinstance(err, pytest.UsageError)
    assert str(err) == "pytest-graphinstruct: --gi-samples must be ≥ 1"
    assert str(usage_error("plain")) == "pytest-graphinstruct: plain"


def test_write_stopped_writes_a_partial_report_with_no_cells(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "r.json"
    path.parent.mkdir()
    path.write_text("an older, complete report", encoding="utf-8")
    write_stopped(path, "usage error: nope")
    assert _coverage(path) == {"complete": False, "reason": "usage error: nope",
                               "selected": None, "missing": [], "missing_count": 0}


def test_write_stopped_never_raises_and_writes_nothing_where_it_cannot(tmp_path: Path) -> None:
    write_stopped(None, "why")  # nothing asked
    write_stopped(tmp_path, "why")  # a directory in the report's place
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    write_stopped(blocker / "r.json", "why")  # a folder that cannot be created
    assert blocker.read_text(encoding="utf-8") == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_refuse_writes_the_report_of_the_raw_option(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    err = refuse(FakeConfig(tmp_path), {"report": "~/r.json"},
                 GraphInstructError("two\nlines"))
    assert str(err) == "pytest-graphinstruct: two\nlines"
    assert _coverage(tmp_path / "r.json")["reason"] == "usage error: two lines"


def test_refuse_writes_nothing_without_a_report_or_in_a_worker(tmp_path: Path) -> None:
    err = refuse(FakeConfig(tmp_path), {"report": None}, "why")
    assert str(err) == "pytest-graphinstruct: why"
    refuse(worker_config(tmp_path), {"report": str(tmp_path / "r.json")},
           "why")
    assert list(tmp_path.iterdir()) == []


def test_a_refused_run_never_writes_its_report_over_the_baseline(tmp_path: Path) -> None:
    base = tmp_path / "base.json"
    base.write_text('{"kept": true}', encoding="utf-8")
    inputs = [Input("the baseline file", tmp_path / "." / "base.json")]
    write_stopped(base, "usage error: x", inputs=inputs)
    refuse(FakeConfig(tmp_path), {"report": str(base), "baseline": str(base)}, "why")
    assert base.read_text(encoding="utf-8") == '{"kept": true}'
    write_stopped(tmp_path / "r.json", "usage error: x", inputs=inputs)  # another file: written
    assert _coverage(tmp_path / "r.json")["reason"] == "usage error: x"


@pytest.mark.parametrize("cache", [None, "c"])
def test_a_refused_run_never_writes_its_report_over_the_answer_cache(tmp_path: Path,
                                                                     cache: str | None) -> None:
    # --gi-cache as given, or the default folder under the rootdir
    folder = tmp_path / (cache or DEFAULT_CACHE_DIR)
    folder.mkdir(parents=True)
    answers = folder / "answers.jsonl"
    answers.write_text('{"kept": true}\n', encoding="utf-8")
    raw = {"report": str(answers), "cache": None if cache is None else str(folder)}
    refuse(FakeConfig(tmp_path), raw, "why")
    assert answers.read_text(encoding="utf-8") == '{"kept": true}\n'
    refuse(FakeConfig(tmp_path), dict(raw, cache="none"), "why")  # no cache: no cache file
    assert _coverage(answers)["reason"] == "usage error: why"
