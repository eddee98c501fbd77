"""run.session: one run in one process, driven the way the plugin and ``score`` drive it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_graphinstruct.run.config import build_run_config
from pytest_graphinstruct.run.records.results import PromptSet
from pytest_graphinstruct.run.session import BenchmarkSession, cell_metadata, prompt_set
from tests.plugin._suite import write_suite


@pytest.fixture
def bench(tmp_path: Path) -> BenchmarkSession:
    root = write_suite(tmp_path / "suite")
    run = build_run_config({"model": "oracle", "suite": str(root), "no_cache": True,
                            "pools": "none", "samples": "2"}, rootdir=tmp_path)
    assert run is not None
    return BenchmarkSession(run)


def test_every_item_is_asked_checked_scored_and_reported(bench: BenchmarkSession) -> None:
    cell = bench.config.cells[0]
    items = [(inst, cell) for inst in bench.select(bench.suite.instructions)]
    assert bench.prefetch(items) == 2 * len(items)
    for inst, c in items:
        bench.record(bench.check(inst, c, bench.answers(inst, c)))
    results = bench.flush()
    report = bench.report(results)
    bench.close()
    assert [r.instruction_id for r in results] == [inst.id for inst, _ in items]
    assert {r.outcome for r in results} == {"passed"}  # the oracle answers the references
    assert [c.metadata.model for c in report.cells] == ["oracle"]
    assert bench.progress().received == 2 * len(items) and bench.notes() == []


def test_a_stop_before_the_first_request_reaches_the_schedulers_built_later(
        bench: BenchmarkSession) -> None:
    bench.stop("terminated (SIGTERM)", grace_s=0.01)
    bench.stop("stopped again")  # a second stop changes nothing
    cell = bench.config.cells[0]
    items = [(inst, cell) for inst in bench.suite]
    bench.prefetch(items)
    answers = [a for inst, c in items for a in bench.answers(inst, c)]
    bench.close(cancel=True)
    assert {a.error for a in answers} == {"terminated (SIGTERM)"}
    assert sum(a.calls for a in answers) == 0


def test_the_cells_record_the_prompt_set_of_the_run(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "suite")
    folder = tmp_path / "terse"
    folder.mkdir()
    (folder / "system_default.txt").write_text("Be terse.\n$format\n", encoding="utf-8")
    plain = build_run_config({"model": "oracle", "suite": str(root), "no_cache": True},
                             rootdir=tmp_path)
    assert plain is not None and prompt_set(plain) is None
    assert cell_metadata(plain, plain.cells[0]).prompts is None
    run = build_run_config({"model": "oracle", "suite": str(root), "no_cache": True,
                            "prompts": str(folder)}, rootdir=tmp_path)
    assert run is not None
    recorded = cell_metadata(run, run.cells[0]).prompts
    assert recorded == PromptSet("terse", str(run.templates.sha256()), ("system_default",))
    answers = tmp_path / "a.jsonl"
    answers.write_text("", encoding="utf-8")
    replayed = replace(run, replay=answers)  # recorded answers: no prompt was sent
    assert prompt_set(replayed) is None


def test_the_share_of_items_reaches_the_scoring_queue_before_or_after_it_is_built(
        tmp_path: Path) -> None:
    run = build_run_config({"model": "oracle", "suite": str(write_suite(tmp_path / "s")),
                            "no_cache": True}, rootdir=tmp_path)
    assert run is not None
    built_first = BenchmarkSession(run)
    assert built_first.scoring.expected is None
    built_first.expect_items(7)
    assert built_first.scoring.expected == 7
    told_first = BenchmarkSession(run)
    told_first.expect_items(5)
    assert told_first.scoring.expected == 5
