"""--gi-model-version, --override-ini=gi_reuse_stale_cache=true, the cells' model_version and
the run record's cache use (issue 19: the cache knows the model); the preflight's snapshot
check is in tests/run/test_preflight.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.models.caching.snapshot import CacheSource
from pytest_graphinstruct.report.render.terminal import cache_lines, summary_lines
from pytest_graphinstruct.run.provenance import cache_use
from pytest_graphinstruct.run.records.results import (
    CacheUse,
    ItemResult,
    RunInfo,
    RunReport,
    SampleResult,
)
from pytest_graphinstruct.run.session import cell_metadata
from tests.run._gpt_x import config, suite_fixture  # noqa: F401  (the fixture `suite`)

# -- the options ------------------------------------------------------------------------------

def test_one_version_for_the_one_model(suite: Path) -> None:
    run = config(suite, model_version="gpt-x-2024-08-06")
    assert run.model_versions == (("gpt-x", "gpt-x-2024-08-06"),)
    assert run.model_version("gpt-x") == "gpt-x-2024-08-06"
    assert run.model_version("other") is None
    assert config(suite).model_versions == () and not config(suite).reuse_stale_cache
    assert config(suite, reuse_stale_cache=True).reuse_stale_cache


def test_versions_per_model(suite: Path) -> None:
    run = config(suite, model="a,b", model_version="a=v1, b=v2")
    assert run.model_versions == (("a", "v1"), ("b", "v2"))
    assert config(suite, model="a,b", model_version="b=v2").model_version("a") is None


@pytest.mark.parametrize(("raw", "message"), [
    ({"model": "a,b", "model_version": "v1"}, "name it per model: --gi-model-version=a=VERSION"),
    ({"model_version": "other=v1"}, "'other', which is not a model of this run"),
    ({"model_version": "gpt-x=v1,gpt-x=v2"}, "names 'gpt-x' twice"),
    ({"model_version": "gpt-x="}, "is not a version"),
    ({"model_version": "two words"}, "is not a version"),
    ({"model_version": "x" * 201}, "is not a version"),
    ({"model_version": "=v1"}, "wants VERSION or model=VERSION"),
])
def test_bad_versions_are_usage_errors(suite: Path, raw: dict[str, Any], message: str) -> None:
    with pytest.raises(GraphInstructError, match=message):
        config(suite, **raw)


# -- the cells' model_version -------------------------------------------------------------------

def test_model_version_is_the_users_else_the_snapshot_served(suite: Path) -> None:
    plain = config(suite)
    cell = plain.cells[0]
    assert cell_metadata(plain, cell).model_version is None
    assert cell_metadata(plain, cell, served={"gpt-x": "gpt-x-2024-11-20"}).model_version == (
        "gpt-x-2024-11-20")
    named = config(suite, model_version="gpt-x-2024-08-06")
    assert cell_metadata(named, named.cells[0],
                         served={"gpt-x": "gpt-x-2024-11-20"}).model_version == (
        "gpt-x-2024-08-06")


# -- the run record ---------------------------------------------------------------------------

def _item(cell: str, *cached: bool) -> ItemResult:
    return ItemResult(instruction_id="L1-001", level=1, cell=cell, model="m",
                      strategy="zero-shot",
                      samples=tuple(SampleResult(True, False, cached=c) for c in cached))


def test_cache_use_says_where_the_cached_answers_came_from() -> None:
    results = [_item("a", True, True), _item("b", False)]
    sources = {"a": CacheSource(frozenset({"s1", None}), 1700000000.0),
               "b": CacheSource(frozenset({"s9"}), 1.0)}  # no sample of b came from the cache
    use = cache_use(results, {"a": 2}, sources, {"a": "s2", "b": "s2"})
    assert use == {"a": CacheUse(2, 2, ("s1", None), "2023-11-14T22:13:20+00:00", "s2"),
                   "b": CacheUse(0, 1, (), None, "s2")}
    assert use["a"].stale == ("s1",)
    assert cache_use(results, {"a": 2}) == {"a": CacheUse(2, 2), "b": CacheUse(0, 1)}


def test_cache_use_reads_old_reports_and_combines() -> None:
    assert CacheUse.from_json({"cached": 1, "samples": 2}) == CacheUse(1, 2)
    use = CacheUse(2, 4, ("s1", None), "2025-01-02T00:00:00+00:00", "s1")
    assert CacheUse.from_json(json.loads(json.dumps(use.to_json()))) == use
    assert use.stale == () and CacheUse(1, 1, ("s0",)).stale == ()  # served not known
    other = CacheUse(1, 3, ("s2",), "2025-01-01T00:00:00+00:00", "s2")
    assert use.combined(other) == CacheUse(3, 7, ("s1", None, "s2"),
                                           "2025-01-01T00:00:00+00:00", None)


# -- what the summaries say ---------------------------------------------------------------------

def _run(**cache: CacheUse) -> RunInfo:
    return RunInfo(finished="2025-03-04T05:06:07+00:00", cache=cache)


def test_an_all_cached_run_says_so_plainly() -> None:
    run = _run(a=CacheUse(64, 64, ("gpt-4o-2024-08-06",), "2025-03-01T05:06:07+00:00",
                          "gpt-4o-2024-08-06"),
               b=CacheUse(32, 32, ("gpt-4o-2024-08-06", None), "2025-03-04T05:00:00+00:00",
                          "gpt-4o-2024-08-06"))
    assert cache_lines(run) == ["all 96 answers came from the cache (gpt-4o-2024-08-06, "
                                "snapshot not recorded, oldest 3 days)"]


def test_some_cached_and_stale_reused_on_purpose() -> None:
    run = _run(a=CacheUse(3, 8, ("s1",), "2025-03-04T05:05:27+00:00", "s2"),
               b=CacheUse(0, 8, (), None, "s2"))
    assert cache_lines(run) == [
        "3 of 16 answers came from the cache (s1, oldest 40 s)",
        "stale cached answers reused on purpose (gi_reuse_stale_cache): "
        "cached from s1, served now s2"]


def test_nothing_cached_nothing_said_and_names_are_escaped() -> None:
    assert cache_lines(_run(a=CacheUse(0, 8))) == [] and cache_lines(None) == []
    run = _run(a=CacheUse(1, 1, ("s\x1b[31m",), None, None))
    assert cache_lines(run) == ["all 1 answers came from the cache (s\\x1b[31m)"]


def test_the_terminal_summary_carries_the_line() -> None:
    report = RunReport((), run=_run(a=CacheUse(2, 2, ("s1",), "2025-03-04T03:06:07+00:00",
                                                 "s1")))
    assert summary_lines(report)[-1] == "all 2 answers came from the cache (s1, oldest 2 h)"
