"""run.fetcher: each sample asked once, a worker's share prefetched, every item answered."""

from __future__ import annotations

from pathlib import Path

from pytest_graphinstruct.run.config import build_run_config
from pytest_graphinstruct.run.session import BenchmarkSession
from tests.plugin._suite import write_suite


def test_a_worker_prefetches_its_share_and_answers_the_others_itself(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "suite")
    run = build_run_config({"model": "oracle", "suite": str(root), "no_cache": True,
                            "pools": "none"}, rootdir=tmp_path)
    assert run is not None
    bench = BenchmarkSession(run, worker=(1, 2))
    fetcher = bench.fetcher
    cell = run.cells[0]
    items = [(inst, cell) for inst in bench.suite]
    assert fetcher.prefetch(items) == len(items) // 2
    assert fetcher.owned == {(inst.id, cell.label) for inst, _ in items[1::2]}
    mine, other = items[1], items[0]
    assert fetcher.answers(*mine) == fetcher.answers(*mine)  # the same future, not asked twice
    assert fetcher.answers(*other)[0].error is None  # no shared cache: asked here
    assert bench.tally.counts(tokens=0).requested == len(items) // 2
    bench.close()
