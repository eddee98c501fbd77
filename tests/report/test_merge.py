"""Merging shard reports and answer caches (report/merge.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.models.cache import AnswerCache
from pytest_graphinstruct.report.merge import merge_caches, merge_reports
from pytest_graphinstruct.run.aggregate import build_run_report
from pytest_graphinstruct.run.results import (
    CellMetadata,
    Coverage,
    ItemFilter,
    ItemResult,
    RunInfo,
    RunReport,
    ShardSelection,
)
from pytest_graphinstruct.run.shard import Shard, select
from tests.models.helpers import req

UNIVERSE = tuple((f"L{lv}-{i:03d}", lv) for lv in (0, 2, 5) for i in range(1, 13))
ORDER = {iid: n for n, (iid, _) in enumerate(UNIVERSE)}
CELLS = (CellMetadata("m", "zero-shot", samples_per_instruction=1),
         CellMetadata("m", "few-shot", samples_per_instruction=1))


def _item(iid: str, level: int, cell: CellMetadata) -> ItemResult:
    score = (sum(map(ord, iid + cell.strategy)) % 100) / 100  # varied, deterministic
    return ItemResult(instruction_id=iid, level=level, cell=cell.label, model=cell.model,
                      strategy=cell.strategy, level_score=score,
                      outcome="passed" if score > 0.5 else "failed", api_calls=1)


def _run(ids: set[str], shard: ShardSelection | None = None,
         coverage: Coverage | None = None, suite_hash: str = "sha256:x") -> RunReport:
    cells = [(meta, [_item(i, lv, meta) for i, lv in UNIVERSE if i in ids]) for meta in CELLS]
    report = build_run_report(cells, suite_order=ORDER, coverage=coverage)
    info = RunInfo(started="2026-12-01T10:00:00Z", finished="2026-12-01T10:05:00Z",
                   suite_hash=suite_hash, filter=ItemFilter(shard=shard))
    return replace(report, run=info)


def _shards(n: int) -> list[tuple[str, RunReport]]:
    levels = dict(UNIVERSE)
    return [(f"shard-{k}.json", _run(select(levels, Shard(k, n)), ShardSelection(k, n, UNIVERSE)))
            for k in range(1, n + 1)]


@pytest.mark.parametrize("n", [1, 3, 4])
def test_merged_shards_equal_the_unsharded_report(n: int) -> None:
    whole = _run({i for i, _ in UNIVERSE})
    merged = merge_reports(_shards(n))
    assert merged.missing == () and merged.present == tuple(range(1, n + 1))
    assert merged.report.coverage.complete
    assert [c.to_json() for c in merged.report.cells] == [c.to_json() for c in whole.cells]
    assert merged.report.pareto == whole.pareto
    assert merged.report.run is not None and merged.report.run.filter.shard is None


def test_a_missing_shard_is_named_and_makes_the_report_partial() -> None:
    shards = _shards(3)
    merged = merge_reports([shards[0], shards[2]])
    assert merged.missing == (2,)
    cov = merged.report.coverage
    assert not cov.complete and cov.reason is not None and "shard(s) 2/3 missing" in cov.reason
    lost = select(dict(UNIVERSE), Shard(2, 3))
    assert cov.missing_count == 2 * len(lost)  # every cell of every lost instruction
    assert set(cov.missing) == {f"{i}[{c.label}]" for i in lost for c in CELLS}
    assert "partial" in merged.notes[0]


def test_inputs_that_are_not_one_run_are_refused() -> None:
    shards = _shards(2)
    with pytest.raises(GraphInstructError, match="comes twice"):
        merge_reports([shards[0], shards[0]])
    other = _shards(3)[1]
    with pytest.raises(GraphInstructError, match="not the same sharding"):
        merge_reports([shards[0], other])
    with pytest.raises(GraphInstructError, match="are not shards"):
        merge_reports([shards[0], ("plain.json", _run({"L0-001"}))])
    moved = ("x.json", _run({"L0-001"}, ShardSelection(2, 2, UNIVERSE[1:])))
    with pytest.raises(GraphInstructError, match="different selections"):
        merge_reports([shards[0], moved])
    with pytest.raises(GraphInstructError, match="different suites"):
        merge_reports([("a", _run({"L0-001"})), ("b", _run({"L0-002"}, suite_hash="sha256:y"))])
    with pytest.raises(GraphInstructError, match=r"L0-001\[m-zero-shot\] is in both a and b"):
        merge_reports([("a", _run({"L0-001"})), ("b", _run({"L0-001"}))])
    with pytest.raises(GraphInstructError, match="at least one"):
        merge_reports([])


def test_a_partial_shard_keeps_its_reason() -> None:
    shards = _shards(2)
    name, first = shards[0]
    broken = replace(first, coverage=Coverage.partial("interrupted (Ctrl+C)",
                                                      missing=["L0-003[m-zero-shot]"]))
    merged = merge_reports([(name, broken), shards[1]])
    assert not merged.report.coverage.complete
    assert "shard-1.json: interrupted (Ctrl+C)" in (merged.report.coverage.reason or "")
    assert "L0-003[m-zero-shot]" in merged.report.coverage.missing


def test_merge_caches_unions_answers(tmp_path: Path) -> None:
    from pytest_graphinstruct.answers import Answer, Usage

    for k in (1, 2):
        cache = AnswerCache(tmp_path / f"s{k}")
        for i in range(3):
            r = req(f"q{k}-{i}", sample=i)
            cache.put(r.cache_key("ep"), r, Answer(text=f"a{k}{i}", usage=Usage(1, 1)))
        shared = req("shared")
        cache.put(shared.cache_key("ep"), shared, Answer(text="s", usage=Usage(1, 1)))
    result = merge_caches([tmp_path / "s1", tmp_path / "s2"], tmp_path / "out")
    assert [n for _, n in result.added] == [4, 3] and result.total == 7
    with pytest.raises(GraphInstructError, match="no answer cache at"):
        merge_caches([tmp_path / "nothing"], tmp_path / "out")
