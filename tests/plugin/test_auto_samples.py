"""``--gi-samples=auto`` end to end (issue 32 §2): against a baseline of five samples per
instruction, a run asks one sample each first and more only while a level's verdict is open,
and the gate judges it by replaying the same looks.  The model is the fake server answering
the first 30 instructions of L2 with the oracle's answer, a wrong graph, or a wrong graph only
the first time an instruction is asked (a flaky model); the server counts every request.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.plugin.test_gate_sees_collapse import SUITE, oracle_answers, responder, run

pytestmark = pytest.mark.slow  # whole runs through pytester: the full tier (.ci/run)
pytest_plugins = ["pytester"]
COUNT = 30  # the first instructions of L2


@pytest.fixture(scope="module")
def answers() -> dict[str, tuple[str, str]]:
    return oracle_answers(SUITE, 2, COUNT)


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")


def auto(pytester: pytest.Pytester, server: FakeOpenAIServer, *extra: str) -> Any:
    return run(pytester, server, *extra, level=2, count=COUNT)


def five_sample_baseline(pytester: pytest.Pytester, answers: dict[str, tuple[str, str]]
                         ) -> Path:
    path = pytester.path / "baseline.json"
    with FakeOpenAIServer(model="m", responder=responder(answers)) as server:
        made = run(pytester, server, f"--gi-baseline={path}", "--gi-update-baseline",
                   "--gi-samples=5", level=2, count=COUNT)
    assert made.ret == pytest.ExitCode.OK, made.stdout.str()[-3000:]
    return path


def flaky(answers: dict[str, tuple[str, str]], first_wrong: Collection[str]
          ) -> Callable[[dict[str, Any]], str]:
    """The oracle's answers, except a wrong graph the first time an instruction of
    ``first_wrong`` is asked."""
    right, wrong = responder(answers), responder(answers, wrong=first_wrong)
    seen: Counter[str] = Counter()
    lock = threading.Lock()

    def answer(body: dict[str, Any]) -> str:
        prompt = str(body["messages"][-1]["content"])
        with lock:
            seen[prompt] += 1
            first = seen[prompt] == 1
        return wrong(body) if first else right(body)
    return answer


def _samples(report: Path) -> list[int]:
    items = json.loads(report.read_text(encoding="utf-8"))["cells"][0]["per_instruction"]
    return [len(r["samples"]) for r in items]


@pytest.mark.usefixtures("keyed")
def test_nothing_changed_is_decided_at_the_first_look(
        pytester: pytest.Pytester, answers: dict[str, tuple[str, str]]) -> None:
    base = five_sample_baseline(pytester, answers)
    report = pytester.path / "run.json"
    with FakeOpenAIServer(model="m", responder=responder(answers)) as server:
        got = auto(pytester, server, f"--gi-baseline={base}", "--gi-samples=auto",
                   f"--gi-report={report}")
        asked = len(server.requests)
    out = got.stdout.str()
    assert got.ret == pytest.ExitCode.OK, out[-3000:]
    assert asked == COUNT  # one sample each, where --gi-samples=5 asks 150
    assert (f"L2 1 look, {COUNT} sample(s) (1.0 per instruction), not worse (look 1: no pair "
            "differs") in out
    assert _samples(report) == [1] * COUNT
    meta = json.loads(report.read_text(encoding="utf-8"))["cells"][0]["metadata"]
    assert meta["samples_cap"] == 5 and meta["samples_per_instruction"] is None


@pytest.mark.usefixtures("keyed")
def test_a_collapsed_level_fails_at_the_first_look(
        pytester: pytest.Pytester, answers: dict[str, tuple[str, str]]) -> None:
    base = five_sample_baseline(pytester, answers)
    ids = [iid for iid, _ in answers.values()]
    summary = pytester.path / "summary.md"
    with FakeOpenAIServer(model="m", responder=responder(answers, wrong=ids)) as server:
        got = auto(pytester, server, f"--gi-baseline={base}", "--gi-samples=auto",
                   f"--gi-markdown={summary}")
        asked = len(server.requests)
    out = got.stdout.str()
    assert got.ret == pytest.ExitCode.TESTS_FAILED, out[-3000:]
    assert ("GATE FAILED (regression): m-zero-shot: L2 dropped (pass rate on paired samples "
            "-1.0000; 30 instructions; Holm p(no drop)=") in out
    assert f"L2 1 look, {COUNT} sample(s) (1.0 per instruction), regressed" in out
    assert asked == COUNT
    markdown = summary.read_text(encoding="utf-8")
    assert "(pass rate on paired samples -1.000 ⚠)" in markdown
    assert ("| L2 | 30 | pass rate on paired samples -1.000 \\[-1.000, -1.000\\] | Holm "
            "p(no drop)=") in markdown


@pytest.mark.usefixtures("keyed")
def test_an_open_verdict_asks_again_only_where_it_is_open(
        pytester: pytest.Pytester, answers: dict[str, tuple[str, str]]) -> None:
    """Four instructions answered wrong once: four newly failing pairs are not enough to call
    a drop (p = 1/16 at best), so the looks go on; after three looks the instructions that
    passed every pair on both sides are settled and only the four are asked again, up to the
    cap of five."""
    base = five_sample_baseline(pytester, answers)
    ids = [iid for iid, _ in answers.values()]
    report = pytester.path / "run.json"
    with FakeOpenAIServer(model="m", responder=flaky(answers, ids[:4])) as server:
        got = auto(pytester, server, f"--gi-baseline={base}", "--gi-samples=auto",
                   f"--gi-report={report}", "--gi-violations=report")
        asked = len(server.requests)
    out = got.stdout.str()
    assert got.ret == pytest.ExitCode.OK, out[-3000:]
    assert asked == 3 * COUNT + 2 * 4
    assert ("L2 5 looks, 98 sample(s) (3.3 per instruction), settled (cap of 5 sample(s) "
            "reached)") in out
    assert sorted(_samples(report)) == [3] * (COUNT - 4) + [5] * 4
    gate = json.loads(report.read_text(encoding="utf-8"))["gate"]
    (level,) = gate["cells"][0]["levels"]
    assert not level["regressed"] and level["p_drop"] == pytest.approx(1 / 16)
    # one level test: Holm leaves it as it is; the interval excludes 0, and the words say why
    assert level["p_drop_holm"] == level["p_drop"] and level["tests"] == 1
    assert level["verdict"] == "lower, not significant"
    assert level["note"] == ("the interval excludes 0 but is unadjusted and not the test: "
                             "p(no drop)=0.062 unadjusted, Holm over 1 level test")


@pytest.mark.usefixtures("keyed")
@pytest.mark.parametrize(("extra", "message"), [
    (("--gi-update-baseline",), "cannot write one (--gi-update-baseline)"),
    (("--gi-update-baseline", "-n", "2"), "cannot write one (--gi-update-baseline)"),
], ids=["update", "update-xdist"])
def test_what_auto_cannot_do_is_refused_before_any_request(
        pytester: pytest.Pytester, answers: dict[str, tuple[str, str]],
        extra: tuple[str, ...], message: str) -> None:
    """``-n`` is no longer refused (issue 48: the controller runs the looks,
    ``test_auto_samples_xdist.py``); what auto cannot do is refused with it as without it."""
    base = five_sample_baseline(pytester, answers)
    with FakeOpenAIServer(model="m", responder=responder(answers)) as server:
        got = auto(pytester, server, f"--gi-baseline={base}", "--gi-samples=auto", *extra)
        asked = len(server.requests)
    assert got.ret == pytest.ExitCode.USAGE_ERROR
    assert message in got.stderr.str() + got.stdout.str()
    assert asked == 0


@pytest.mark.usefixtures("keyed")
@pytest.mark.parametrize("extra", [(), ("-n", "2")], ids=["one-process", "xdist"])
def test_a_missing_baseline_is_refused(pytester: pytest.Pytester,
                                       answers: dict[str, tuple[str, str]],
                                       extra: tuple[str, ...]) -> None:
    with FakeOpenAIServer(model="m", responder=responder(answers)) as server:
        got = auto(pytester, server, f"--gi-baseline={pytester.path / 'none.json'}",
                   "--gi-samples=auto", *extra)
        asked = len(server.requests)
    assert got.ret == pytest.ExitCode.USAGE_ERROR
    assert "needs an existing --gi-baseline" in got.stderr.str() + got.stdout.str()
    assert asked == 0


@pytest.mark.usefixtures("keyed")
def test_the_baseline_a_run_writes_by_default_serves_auto(
        pytester: pytest.Pytester, answers: dict[str, tuple[str, str]]) -> None:
    """Issue 48: a run that writes the baseline without --gi-samples asks five samples per
    instruction (gi_baseline_samples), so auto can run against it."""
    base = pytester.path / "default.json"
    with FakeOpenAIServer(model="m", responder=responder(answers)) as server:
        made = run(pytester, server, f"--gi-baseline={base}", "--gi-update-baseline",
                   level=2, count=5)
        written = len(server.requests)
    assert made.ret == pytest.ExitCode.OK, made.stdout.str()[-3000:]
    assert written == 25
    meta = json.loads(base.read_text(encoding="utf-8"))["cells"][0]["metadata"]
    assert meta["samples_per_instruction"] == 5
    with FakeOpenAIServer(model="m", responder=responder(answers)) as server:
        got = run(pytester, server, f"--gi-baseline={base}", "--gi-samples=auto",
                  level=2, count=5)
        asked = len(server.requests)
    assert got.ret == pytest.ExitCode.OK, got.stdout.str()[-3000:]
    assert asked == 5  # one look: every answer agrees with the baseline's


@pytest.mark.usefixtures("keyed")
def test_a_baseline_of_one_sample_per_instruction_is_refused_before_any_request(
        pytester: pytest.Pytester, answers: dict[str, tuple[str, str]]) -> None:
    """Issue 47 §9: auto pairs sample j with the baseline's sample j, so a one-sample baseline
    leaves nothing to ask beyond the first; it was accepted (and the help says it needs
    several).  Now one usage line names the baseline and what it holds."""
    base = pytester.path / "one.json"
    count = 5
    with FakeOpenAIServer(model="m", responder=responder(answers)) as server:
        made = run(pytester, server, f"--gi-baseline={base}", "--gi-update-baseline",
                   "--gi-samples=1", level=2, count=count)
    assert made.ret == pytest.ExitCode.OK, made.stdout.str()[-3000:]
    with FakeOpenAIServer(model="m", responder=responder(answers)) as server:
        got = run(pytester, server, f"--gi-baseline={base}", "--gi-samples=auto",
                  level=2, count=count)
        asked = len(server.requests)
    said = got.stderr.str() + got.stdout.str()
    assert got.ret == pytest.ExitCode.USAGE_ERROR, said[-3000:]
    line = (f"--gi-samples=auto needs a baseline of several samples per instruction, but "
            f"{base} holds 1 sample per instruction (cell m-zero-shot): nothing could be "
            "asked beyond the first sample")
    (shown,) = [x for x in said.splitlines() if line in x]  # one line, said once
    assert shown.startswith("ERROR: ") and shown.endswith("or give a fixed count")
    assert asked == 0
