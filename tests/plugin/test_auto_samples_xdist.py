"""``--gi-samples=auto`` under ``-n`` (issue 48): the xdist controller's answer service runs the
looks, and the workers' items read the samples it fetched.  So ``-n 2`` asks the fake server
exactly what ``-n 0`` asks — the same number of requests, the same (instruction, sample index)
pairs — and reaches the same verdict with the same compared lines, for unchanged answers
(passes at the first look) and for a changed model (3 of the 30 L2 instructions now always
wrong: the looks go on, then L2 fails).  The server's answers are deterministic (the oracle's,
or a wrong graph for the chosen instructions), so both runs see the same ones.

Before issue 48 ``-n`` with ``--gi-samples=auto`` was refused ("runs in one process").
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pytest_graphinstruct.run.records.reader import read_report
from pytest_graphinstruct.run.records.results import sample_passed
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.plugin.test_auto_samples import COUNT, auto, five_sample_baseline
from tests.plugin.test_gate_sees_collapse import SUITE, oracle_answers, responder

pytestmark = pytest.mark.slow  # whole runs through pytester: the full tier (.ci/run)
pytest_plugins = ["pytester"]

WRONG = 3  # the changed model's always-wrong L2 instructions


@pytest.fixture(scope="module")
def answers() -> dict[str, tuple[str, str]]:
    return oracle_answers(SUITE, 2, COUNT)


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")


def asked(server: FakeOpenAIServer, answers: dict[str, tuple[str, str]]
          ) -> list[tuple[str, int]]:
    """The (instruction id, sample index) of every request the server received, in arrival
    order.  The index is read off the arrivals: look t asks the t-th sample of an instruction
    only once every answer of look t − 1 is in, so an instruction's n-th request is its sample
    n − 1 (a sample asked twice would show as one index too many)."""
    seen: Counter[str] = Counter()
    out = []
    for request in server.requests:
        prompt = str(request.body["messages"][-1]["content"])
        (iid,) = [iid for text, (iid, _) in answers.items() if text in prompt]
        out.append((iid, seen[iid]))
        seen[iid] += 1
    return out


def compared(out: str) -> list[str]:
    """The compared lines a gated run prints (the line per cell, then one per level) and the
    gate's verdict lines."""
    lines = out.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("compared with baseline"))
    shown = [lines[start]]
    shown += [line for line in lines[start + 1:] if line.startswith("  m-zero-shot:")]
    return shown + [line for line in lines if line.startswith("GATE")]


def samples_of(report: Path) -> dict[str, list[tuple[bool, str | None]]]:
    """Each instruction's samples in a run's report, in sample order: whether it passed, and
    the answer it scored."""
    (cell,) = read_report(report).cells
    return {r.instruction_id: [(sample_passed(s), s.raw_answer) for s in r.samples]
            for r in cell.per_instruction}


@pytest.mark.usefixtures("keyed")
@pytest.mark.parametrize("wrong", [0, WRONG], ids=["unchanged", "three-wrong"])
def test_auto_under_xdist_asks_and_decides_as_one_process(
        pytester: pytest.Pytester, answers: dict[str, tuple[str, str]], wrong: int) -> None:
    base = five_sample_baseline(pytester, answers)
    ids = [iid for iid, _ in answers.values()]
    changed = set(ids[:wrong])
    runs = {}
    for workers in ("0", "2"):
        report = pytester.path / f"run-n{workers}.json"
        with FakeOpenAIServer(model="m", responder=responder(answers, changed)) as server:
            got = auto(pytester, server, f"--gi-baseline={base}", "--gi-samples=auto",
                       f"--gi-report={report}", "-n", workers)
            runs[workers] = (got, asked(server, answers), report)
    (one, one_asked, one_report), (two, two_asked, two_report) = runs["0"], runs["2"]
    out = two.stdout.str()
    said = out + two.stderr.str()
    assert two.ret != pytest.ExitCode.USAGE_ERROR, said[-3000:]  # before issue 48: refused
    assert "refused" not in said, said[-3000:]
    assert two.ret == one.ret, out[-3000:]
    one_samples, two_samples = samples_of(one_report), samples_of(two_report)
    assert len(two_asked) == len(one_asked)
    assert sorted(two_asked) == sorted(one_asked)
    assert len(set(two_asked)) == len(two_asked)  # no sample asked twice
    assert two_samples == one_samples  # the workers' items read exactly what the looks asked
    assert compared(out) == compared(one.stdout.str())
    assert "2 workers" in out  # xdist really ran it
    if wrong == 0:  # decided at the first look: one sample each
        assert one.ret == pytest.ExitCode.OK, one.stdout.str()[-3000:]
        assert len(one_asked) == COUNT
    else:  # the looks go on past the first, then L2 fails
        assert one.ret == pytest.ExitCode.TESTS_FAILED, one.stdout.str()[-3000:]
        assert len(one_asked) > COUNT
        assert any(line.startswith("GATE FAILED (regression): m-zero-shot: L2")
                   for line in compared(out)), out[-3000:]
        assert all(not passed for iid in changed for passed, _ in one_samples[iid])
        assert all(passed for iid in set(ids) - changed for passed, _ in one_samples[iid])
