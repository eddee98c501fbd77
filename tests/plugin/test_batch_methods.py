"""An iterative method (VGIG) with ``--gi-batch``, end to end against the fake Batch API: each
round is one batch (round 1 every item, round 2 only the follow-ups of the items round 1 got
wrong), and the report equals the one the same answers give without batch mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.suite.loader import load_suite
from pytest_graphinstruct.testing.batch_server import FakeBatchAPI
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

from .test_batch_run import comparable

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
WRONG = "Graph[name='x', nodes=3] { node_list = ['a','b','c']; edge_list = []; }"
ITEMS = 6


def half_learner() -> Any:
    """Answers the first attempt of every other instruction right and the rest wrong; any
    refinement (a conversation showing an earlier answer) right."""
    suite = load_suite(ROOT / "instructions", levels=[1])
    refs = [(inst.text, inst.references[0]) for inst in suite if inst.references]

    def answer(body: dict[str, Any]) -> str:
        messages = body["messages"]
        first_user = next(m["content"] for m in messages if m["role"] == "user")
        n, ref = next(((n, ref) for n, (text, ref) in enumerate(refs) if text in first_user),
                      (1, WRONG))
        refined = any(m["role"] == "assistant" for m in messages)
        return ref if refined or n % 2 == 0 else WRONG

    return answer


def run(pytester: pytest.Pytester, server: FakeOpenAIServer, cache: Path, report: Path,
        *extra: str) -> pytest.RunResult:
    return pytester.runpytest(
        f"--gi-suite={ROOT / 'instructions'}", "--gi-model=fake-model",
        f"--gi-base-url={server.base_url}", "--gi-api-key-env=GI_TEST_KEY",
        "--gi-levels=1", f"--gi-per-level={ITEMS}", "--gi-method=vgig",
        "--override-ini=gi_chains=1", "--gi-samples=1", f"--gi-cache={cache}",
        f"--gi-report={report}",
        "--override-ini=gi_max_retries=0", "-p", "no:cacheprovider", "-p", "no:randomly", *extra)


def test_vgig_sends_one_batch_per_round_and_reports_as_without_batch_mode(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    learner = half_learner()
    batch_report, plain_report = pytester.path / "batch.json", pytester.path / "plain.json"
    with FakeOpenAIServer(latency_s=0.0, responder=learner) as server:
        api = FakeBatchAPI(server)
        result = run(pytester, server, pytester.path / "c1", batch_report, "--gi-batch",
                     "--override-ini=gi_batch_poll=0.05", "--override-ini=gi_batch_quiet=0.5")
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
        assert server.request_count == 0  # every answer through batches
        rounds = [b.lines for b in api.batches.values()]
    assert [len(lines) for lines in rounds] == [ITEMS, ITEMS // 2]
    assert not any(m["role"] == "assistant" for x in rounds[0] for m in x["body"]["messages"])
    assert all(any(m["role"] == "assistant" for m in x["body"]["messages"]) for x in rounds[1])
    assert set(api.submitted.values()) == {1}
    with FakeOpenAIServer(latency_s=0.0, responder=learner) as plain:
        again = run(pytester, plain, pytester.path / "c2", plain_report)
        assert again.ret == result.ret
        assert plain.request_count == ITEMS + ITEMS // 2
    assert comparable(batch_report) == comparable(plain_report)
