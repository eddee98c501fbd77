"""run.scoring: batched scoring that loses nothing when scoring itself breaks."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.run import evaluate, scoring
from pytest_graphinstruct.run.config import build_run_config
from pytest_graphinstruct.run.requests import RequestBuilder
from pytest_graphinstruct.run.scoring import ScoringQueue
from pytest_graphinstruct.run.session_inputs import SessionInputs
from pytest_graphinstruct.verify.verifier import Verifier
from tests.plugin._suite import CYCLE4, TREE4, write_suite


@pytest.fixture
def queue(tmp_path: Path) -> ScoringQueue:
    root = write_suite(tmp_path / "suite")
    run = build_run_config({"model": "oracle", "suite": str(root), "no_cache": True,
                            "pools": "none"}, rootdir=tmp_path)
    assert run is not None
    inputs = SessionInputs(run, worker=None, inputs=None, served=None)
    return ScoringQueue(inputs, RequestBuilder(inputs), Verifier())


def test_batched_results_equal_one_by_one(queue: ScoringQueue) -> None:
    cell = queue.inputs.config.cells[0]
    inst = queue.inputs.suite["L1-001"]
    for text in (TREE4, CYCLE4):
        queue.record(queue.check(inst, cell, [Answer(text=text)]))
    batched = queue.flush()
    alone = [queue.evaluate(inst, cell, [Answer(text=t)]) for t in (TREE4, CYCLE4)]
    assert batched == alone
    assert [r.outcome for r in batched] == ["passed", "failed"]


def test_an_item_that_breaks_scoring_is_an_error_and_the_others_survive(
        queue: ScoringQueue, monkeypatch: pytest.MonkeyPatch) -> None:
    cell = queue.inputs.config.cells[0]
    good, bad = queue.inputs.suite["L1-001"], queue.inputs.suite["L1-002"]
    real = evaluate.score

    def fragile(items, pools=None, *, d3_device="cpu"):  # type: ignore[no-untyped-def]
        if any(c.instruction.id == bad.id for c in items):
            raise RuntimeError("boom")
        return real(items, pools, d3_device=d3_device)

    monkeypatch.setattr("pytest_graphinstruct.run.scoring.score", fragile)
    queue.record(queue.check(good, cell, [Answer(text=TREE4)]))
    queue.record(queue.check(bad, cell, [Answer(text=CYCLE4)]))
    first, second = queue.flush()
    assert first.instruction_id == good.id and first.outcome == "passed"
    assert first.level_score is not None
    assert second.instruction_id == bad.id and second.outcome == "error"
    assert second.error == "scoring failed: RuntimeError: boom"


def test_a_full_batch_is_scored_by_itself_and_errors_are_kept_at_once(
        queue: ScoringQueue, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scoring, "SCORE_BATCH", 3)
    cell = queue.inputs.config.cells[0]
    inst = queue.inputs.suite["L1-001"]
    checked = queue.check(inst, cell, [Answer(text=TREE4)])
    for _ in range(2):
        queue.record(checked)
    assert queue.results == []  # held until the batch is full
    queue.record(checked, expected_failure=True)
    assert len(queue.results) == 3 and queue.results[-1].expected_failure
    queue.record_error(inst, cell, [Answer(error="timeout")], outcome="error", error="timeout")
    assert queue.results[-1].outcome == "error" and queue.results[-1].error == "timeout"


# -- the size of the batches ------------------------------------------------------------------

def _batch_sizes(queue: ScoringQueue, monkeypatch: pytest.MonkeyPatch, n: int) -> list[int]:
    """Record ``n`` items into ``queue`` (scoring stubbed) and return the size of each batch
    scored on the way, then the size of what is left for the end."""
    sizes: list[int] = []

    def counted(items, pools=None, *, d3_device="cpu"):  # type: ignore[no-untyped-def]
        sizes.append(len(items))
        return [evaluate.error_result(c.instruction, c.cell, c.answers, outcome="error",
                                      error="stub") for c in items]

    monkeypatch.setattr("pytest_graphinstruct.run.scoring.score", counted)
    cell = queue.inputs.config.cells[0]
    checked = queue.check(queue.inputs.suite["L1-001"], cell, [Answer(text=TREE4)])
    for _ in range(n):
        queue.record(checked)
    left = len(queue._pending)
    queue.flush()
    assert len(queue.results) == n  # every item scored once
    return sizes if left else [*sizes, 0]  # the end's flush scored what was left


def test_without_a_share_every_batch_is_full(queue: ScoringQueue,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    assert _batch_sizes(queue, monkeypatch, 400) == [128, 128, 128, 16]


def test_a_worker_that_knows_its_share_halves_its_last_batches(
        queue: ScoringQueue, monkeypatch: pytest.MonkeyPatch) -> None:
    queue.expected = 400
    sizes = _batch_sizes(queue, monkeypatch, 400)
    assert sizes == [128, 128, 72, 36, 18, 16, 2]
    assert sizes[-1] < scoring.TAIL_BATCH  # what is left for the session's end


def test_a_worker_given_more_than_its_share_scores_the_rest_in_tail_batches(
        queue: ScoringQueue, monkeypatch: pytest.MonkeyPatch) -> None:
    queue.expected = 50
    sizes = _batch_sizes(queue, monkeypatch, 100)
    assert sizes == [25, 16] + [16] * 3 + [11]
    assert max(sizes) <= scoring.SCORE_BATCH


def test_the_limit_never_exceeds_a_full_batch_nor_drops_below_the_tail(
        queue: ScoringQueue) -> None:
    queue.expected = 10_000
    assert queue.batch_limit() == scoring.SCORE_BATCH
    queue.expected = 0
    assert queue.batch_limit() == scoring.TAIL_BATCH
