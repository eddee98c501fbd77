"""ReplayBackend: recorded answers by (instruction, sample)."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_graphinstruct.answers import Usage
from pytest_graphinstruct.models.backends.recorded import read_responses
from pytest_graphinstruct.models.backends.replay import ReplayBackend
from pytest_graphinstruct.models.scheduling.scheduler import Scheduler
from tests.models.helpers import req


def _backend(tmp_path: Path) -> ReplayBackend:
    path = tmp_path / "raw.jsonl"
    rows = [
        {"instruction_id": "L1-001", "level": 1, "samples": [
            {"raw_output": "first", "input_tokens": 12, "output_tokens": 3, "api_calls": 2},
            {"raw_output": "second", "input_tokens": None, "output_tokens": None},
            {"raw_output": "third", "output_tokens": 4}]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return ReplayBackend(read_responses(path))


def test_replay_answers_by_instruction_and_sample(tmp_path: Path) -> None:
    backend = _backend(tmp_path)
    assert backend.endpoint == f"replay:{tmp_path / 'raw.jsonl'}" and not backend.cacheable
    a0 = backend.complete(req(iid="L1-001", sample=0))
    assert (a0.text, a0.usage, a0.calls) == ("first", Usage(12, 3, "recorded"), 2)
    a1 = backend.complete(req(iid="L1-001", sample=1))
    assert (a1.text, a1.usage, a1.calls) == ("second", None, 1)
    a2 = backend.complete(req(iid="L1-001", sample=2))
    assert a2.usage == Usage(None, 4, "recorded")


def test_missing_instruction_or_sample_is_an_error(tmp_path: Path) -> None:
    backend = _backend(tmp_path)
    for r in (req(iid="L1-002"), req(iid="L1-001", sample=3)):
        answer = backend.complete(r)
        assert not answer.ok and answer.error.startswith("no recorded answer for")
    assert "sample 3" in backend.complete(req(iid="L1-001", sample=3)).error


def test_replay_through_the_scheduler(tmp_path: Path) -> None:
    with Scheduler(_backend(tmp_path), concurrency=2) as sched:
        texts = [f.result().text for f in sched.submit_all(
            [req(iid="L1-001", sample=k) for k in range(3)])]
    assert texts == ["first", "second", "third"]


def test_an_instruction_only_on_skipped_lines_says_which_and_why(tmp_path: Path) -> None:
    path = tmp_path / "raw.jsonl"
    rows = [{"instruction_id": "L1-001", "samples": [{"raw_output": "a", "input_tokens": -1}]},
            {"instruction_id": "L1-002", "samples": [{"raw_output": "b"}]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    backend = ReplayBackend(read_responses(path))
    answer = backend.complete(req(iid="L1-001"))
    assert answer.error == "no recorded answer for L1-001 (line 1 skipped: impossible usage)"
    assert backend.complete(req(iid="L1-002")).text == "b"
