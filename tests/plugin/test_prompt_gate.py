"""A worse prompt fails the baseline gate, naming the newly failing items (--gi-prompts,
--gi-baseline, --gi-markdown; the options of the ci/ kit and of our own CI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.suite.loader import load_suite
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
WRONG = "Graph[name='x', nodes=3] { node_list = ['a','b','c']; edge_list = []; }"


def _prompt_sensitive() -> Any:
    """A model that answers with the reference when its system prompt is the packaged one and
    wrongly when the prompt was changed."""
    suite = load_suite(ROOT / "instructions", levels=[1])
    by_text = {inst.text: inst.references[0] for inst in suite if inst.references}

    def answer(body: dict[str, Any]) -> str:
        system = body["messages"][0]["content"]
        user = body["messages"][-1]["content"]
        if "graph construction assistant" not in system:
            return WRONG
        return next((ref for text, ref in by_text.items() if text in user), WRONG)

    return answer


@pytest.mark.slow
def test_a_worse_prompt_fails_the_gate_with_the_newly_failing_items(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    baseline, summary = pytester.path / "baseline.json", pytester.path / "summary.md"
    worse = pytester.path / "worse_prompts"
    worse.mkdir()
    (worse / "system_default.txt").write_text(
        "You write short poems about graphs.\n\n$format\n\n$infeasibility\n\n$output_rule\n\n"
        "$completeness\n", encoding="utf-8")
    with FakeOpenAIServer(latency_s=0.0, responder=_prompt_sensitive()) as server:
        common = [f"--gi-suite={ROOT / 'instructions'}", "--gi-levels=1", "--gi-per-level=25",
                  "--gi-model=fake-model", f"--gi-base-url={server.base_url}",
                  "--gi-api-key-env=GI_TEST_KEY", "--gi-cache=none", "--gi-violations=report",
                  f"--gi-baseline={baseline}", "-p", "no:cacheprovider"]
        first = pytester.runpytest(*common, "--gi-update-baseline")
        assert first.ret == pytest.ExitCode.OK
        same = pytester.runpytest(*common, f"--gi-markdown={summary}")
        assert same.ret == pytest.ExitCode.OK
        assert summary.read_text(encoding="utf-8").startswith("## GraphInstruct: ✅ passed")
        bad = pytester.runpytest(*common, f"--gi-prompts={worse}", f"--gi-markdown={summary}")
    assert bad.ret == pytest.ExitCode.TESTS_FAILED
    # the first run wrote a baseline of five samples per instruction (issue 48), so the
    # one-sample runs are judged on pass counts, and the drop is one of pass rate
    bad.stdout.fnmatch_lines(["*GATE FAILED (regression): fake-model-zero-shot: L1 dropped "
                              "(pass rate -*; newly failing: L1-001, L1-002, *"])
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("## GraphInstruct: ❌ gate failed")
    assert "Newly failing (25):" in text and "- `L1-001` (L1): " in text
    assert "| L1 |" in text and "**regressed**" in text
