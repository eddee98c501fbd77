"""Methods as cells of a run, against a local OpenAI-compatible server (--gi-method)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.suite.loader import load_suite
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.report.schema_check import load_valid_report

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
WRONG = "Graph[name='x', nodes=3] { node_list = ['a','b','c']; edge_list = []; }"


def _learner() -> Any:
    """A model that answers a first attempt wrongly and any attempt that shows it a previous
    answer (a refinement) correctly, with the instruction's reference."""
    suite = load_suite(ROOT / "instructions", levels=[1])
    by_text = {inst.text: inst.references[0] for inst in suite if inst.references}

    def answer(body: dict[str, Any]) -> str:
        messages = body["messages"]
        if not any(m["role"] == "assistant" for m in messages):
            return WRONG
        first_user = next(m["content"] for m in messages if m["role"] == "user")
        return next((ref for text, ref in by_text.items() if text in first_user), WRONG)

    return answer


def _fake_run(pytester: pytest.Pytester, server: FakeOpenAIServer,
              *args: str) -> pytest.RunResult:
    """A run of the project's suite against the fake server's ``fake-model`` (``args``: the
    levels, methods, cache and report options of the test)."""
    return pytester.runpytest(
        f"--gi-suite={ROOT / 'instructions'}", "--gi-model=fake-model",
        f"--gi-base-url={server.base_url}", "--gi-api-key-env=GI_TEST_KEY",
        "--gi-violations=report", "-p", "no:cacheprovider", *args)


def _calls(cells: dict[str, Any]) -> dict[str, int]:
    """API calls charged per cell label: the sum over every item's samples."""
    return {label: sum(s["api_calls"] for r in c["per_instruction"] for s in r["samples"])
            for label, c in cells.items()}


@pytest.mark.slow
def test_vgig_fixes_what_zero_shot_gets_wrong_and_is_charged_every_call(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    report = pytester.path / "r.json"
    with FakeOpenAIServer(latency_s=0.0, responder=_learner()) as server:
        result = _fake_run(pytester, server, "--gi-levels=1", "--gi-per-level=6",
                           "--gi-cache=none", "--gi-method=none,vgig", "--override-ini=gi_chains=2",
                           "--gi-samples=2", f"--gi-report={report}")
        served = server.request_count
    assert result.ret == 0, result.stdout.str()[-3000:]
    data = load_valid_report(report)
    cells = {c["per_instruction"][0]["cell"]: c for c in data["cells"]}
    zs, vgig = cells["fake-model-zero-shot"], cells["fake-model-zero-shot-vgig"]
    assert zs["summary"]["passed"] == 0
    assert vgig["summary"]["passed"] == vgig["summary"]["items"] == 6
    # every call is charged: zero-shot 6 x 2, vgig 6 x 2 chains x (round 0 + one refinement)
    calls = _calls(cells)
    assert calls == {"fake-model-zero-shot": 12, "fake-model-zero-shot-vgig": 24}
    assert sum(calls.values()) == served
    # the summary ranks the cells with their cost beside their quality (not the level rows,
    # nor the consistency table's rows, whose level column is L1 or "all")
    rows = {line.split()[0]: line.split() for line in result.stdout.lines
            if line.startswith("fake-model-zero-shot") and "[" in line
            and line.split()[1] not in ("L1", "all")}
    assert rows["fake-model-zero-shot"][-3] == "12"
    assert rows["fake-model-zero-shot-vgig"][-3] == "24"
    sample = vgig["per_instruction"][0]["samples"][0]
    assert [s["source"] for s in sample["steps"]] == ["round0", "round1"]
    assert [s["kept"] for s in sample["steps"]] == [False, True]
    assert sample["input_tokens"] == sum(s["input_tokens"] for s in sample["steps"])


def test_unknown_method_and_methods_with_replay_are_usage_errors(
        pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(f"--gi-suite={ROOT / 'instructions'}", "--gi-model=oracle",
                                "--gi-method=magic", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown --gi-method 'magic'" in result.stderr.str()
    answers = pytester.path / "a.jsonl"
    answers.write_text(json.dumps({"instruction_id": "L1-001", "level": 1,
                                   "samples": [{"raw_output": WRONG}]}) + "\n")
    replay = pytester.runpytest(f"--gi-suite={ROOT / 'instructions'}", f"--gi-replay={answers}",
                                "--gi-method=vgig", "-p", "no:cacheprovider")
    assert replay.ret == pytest.ExitCode.USAGE_ERROR
    assert "--gi-method needs a model" in replay.stderr.str()


def test_caap_and_combined_prompts_carry_caap_choices(pytester: pytest.Pytester,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    report = pytester.path / "r.json"
    with FakeOpenAIServer(latency_s=0.0, responder=_learner()) as server:
        result = _fake_run(pytester, server, "--gi-levels=2", "--gi-per-level=2",
                           "--gi-cache=none", "--gi-method=caap,combined",
                           "--gi-strategy=zero-shot,few-shot",
                           "--override-ini=gi_model_tiers=fake-model=T3",
                           "--override-ini=gi_chains=1", "--gi-vgig-rounds=1",
                           f"--gi-report={report}")
        bodies = [r.body for r in server.requests]
    assert result.ret == 0, result.stdout.str()[-3000:]
    data = load_valid_report(report)
    # CAAP picks the strategy itself: one cell per model, not one per strategy
    assert [c["per_instruction"][0]["cell"] for c in data["cells"]] == [
        "fake-model-zero-shot-caap", "fake-model-zero-shot-combined"]
    firsts = [b for b in bodies if not any(m["role"] == "assistant" for m in b["messages"])]
    # L2 on a T3 model: zero-cot with the constraint checklist, in every round-0 prompt
    assert firsts and all("1. [ ]" in b["messages"][-1]["content"] for b in firsts)
    refinements = [b for b in bodies if any(m["role"] == "assistant" for m in b["messages"])]
    assert refinements and all("1. [ ]" in b["messages"][1]["content"] for b in refinements)
    for cell in data["cells"]:  # each item names CAAP's decision
        for item in cell["per_instruction"]:
            assert item["details"]["caap"]["cell"] == "L2/T3"
            assert item["details"]["caap"]["strategy"] == "zero-cot"
            assert item["details"]["caap"]["extras"] == ["checklist"]
    meta = data["cells"][1]["metadata"]["method_settings"]
    assert meta["model_tiers"] == {"fake-model": "T3"} and meta["feedback"] == "fine"


def test_bad_model_tiers_are_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(f"--gi-suite={ROOT / 'instructions'}", "--gi-model=oracle",
                                "--override-ini=gi_model_tiers=x=T9", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "gi_model_tiers wants name=tier" in result.stderr.str()


@pytest.mark.slow
def test_one_session_ranks_every_method_with_its_cost(pytester: pytest.Pytester,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    methods = "none,vgig-none,vgig-fine,caap,combined,retry,sc"
    with FakeOpenAIServer(latency_s=0.0, responder=_learner()) as server:
        result = _fake_run(pytester, server, "--gi-levels=1", "--gi-per-level=3",
                           "--gi-cache=none", f"--gi-method={methods}",
                           "--override-ini=gi_chains=2")
    assert result.ret == 0
    lines = result.stdout.lines
    header = next(i for i, line in enumerate(lines) if line.startswith("cell (* Pareto"))
    assert "TPV" in lines[header] and "API calls" in lines[header] and "Q/kTPV" in lines[header]
    rows = [line.split()[0] for line in lines[header + 2:header + 9]]
    assert rows == ["fake-model-zero-shot", "fake-model-zero-shot-vgig-none",
                    "fake-model-zero-shot-vgig-fine", "fake-model-zero-shot-caap",
                    "fake-model-zero-shot-combined", "fake-model-zero-shot-retry",
                    "fake-model-zero-shot-sc"]
    # the learner fixes answers only when shown them: the feedback methods win, at a cost
    calls = {line.split()[0]: int(line.split()[-3]) for line in lines[header + 2:header + 9]}
    assert calls["fake-model-zero-shot-vgig-fine"] == 3 * 2 * 2
    assert calls["fake-model-zero-shot-retry"] == calls["fake-model-zero-shot-sc"] == 3 * 2 * 4


@pytest.mark.slow
def test_several_vgig_rounds_sweep_e5_in_one_session(pytester: pytest.Pytester,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    report = pytester.path / "r.json"
    with FakeOpenAIServer(latency_s=0.0, responder=_learner()) as server:
        result = _fake_run(pytester, server, "--gi-levels=1", "--gi-per-level=3",
                           "--gi-cache=none", "--gi-method=vgig,retry", "--gi-vgig-rounds=0,2",
                           "--override-ini=gi_chains=1", f"--gi-report={report}")
    assert result.ret == 0, result.stdout.str()[-3000:]
    data = load_valid_report(report)
    cells = {c["per_instruction"][0]["cell"]: c for c in data["cells"]}
    assert list(cells) == ["fake-model-zero-shot-vgig@T0", "fake-model-zero-shot-vgig@T2",
                           "fake-model-zero-shot-retry@T0", "fake-model-zero-shot-retry@T2"]
    passed = {k: c["summary"]["passed"] for k, c in cells.items()}
    # T=0 is round 0 alone (the learner's first answer is wrong); one refinement fixes it;
    # retry never shows the model its answer, so more rounds do not help it
    assert passed == {"fake-model-zero-shot-vgig@T0": 0, "fake-model-zero-shot-vgig@T2": 3,
                      "fake-model-zero-shot-retry@T0": 0, "fake-model-zero-shot-retry@T2": 0}
    calls = _calls(cells)
    assert calls == {"fake-model-zero-shot-vgig@T0": 3, "fake-model-zero-shot-vgig@T2": 6,
                     "fake-model-zero-shot-retry@T0": 3, "fake-model-zero-shot-retry@T2": 9}
    assert [c["metadata"]["method_settings"]["rounds"] for c in cells.values()] == [0, 2, 0, 2]


@pytest.mark.slow
def test_with_the_cache_a_rounds_sweep_pays_for_its_longest_chains_only(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    report = pytester.path / "r.json"
    with FakeOpenAIServer(latency_s=0.0, responder=_learner()) as server:
        result = _fake_run(pytester, server, "--gi-levels=1", "--gi-per-level=3",
                           f"--gi-cache={pytester.path / 'cache'}", "--gi-method=vgig,retry",
                           "--gi-vgig-rounds=0,2", "--override-ini=gi_chains=1",
                           f"--gi-report={report}")
        served = server.request_count
    assert result.ret == 0, result.stdout.str()[-3000:]
    data = load_valid_report(report)
    charged = sum(_calls({c["per_instruction"][0]["cell"]: c for c in data["cells"]}).values())
    # every cell is charged its chain's calls (3 + 6 + 3 + 9), but round 0 is one request for
    # all four cells and vgig's refinement is asked once: 3 round-0 + 3 refinements + 6 retries
    assert charged == 21
    assert served == 12
