"""A verdict you can trust, end to end through pytest (issue 19): a failing endpoint never
becomes the baseline, a gated run says what it compared (levels left out by ``-k`` or
``--gi-levels`` are named, a level subset is compared, not refused), and
``--gi-violations=fail`` fails on what was not compared.

The model is recorded answers: the oracle's answers to the first 10 instructions of each level
of the project's suite ("good"), and the same with every answer of chosen levels replaced by a
non-answer ("worse").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.models.base import Request
from pytest_graphinstruct.run.oracle import OracleBackend
from pytest_graphinstruct.suite.loader import load_suite
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer, Fault
from tests.report.schema_check import load_valid_report

pytestmark = pytest.mark.slow  # whole runs through pytester: the full tier (.ci/run)

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "instructions"
PER_LEVEL = 10


@pytest.fixture(scope="module")
def good_answers() -> dict[str, tuple[int, str]]:
    """Instruction id → (level, the oracle's answer) for the instructions the runs select."""
    suite = load_suite(SUITE)
    oracle = OracleBackend(suite)
    seen: dict[int, int] = {}
    out = {}
    for inst in suite:
        seen[inst.level] = seen.get(inst.level, 0) + 1
        if seen[inst.level] <= PER_LEVEL:
            answer = oracle.complete(Request("oracle", (), instruction_id=inst.id))
            assert answer.text is not None, inst.id
            out[inst.id] = (inst.level, answer.text)
    return out


def recorded(path: Path, answers: dict[str, tuple[int, str]],
             worse: tuple[int, ...] = ()) -> Path:
    """A replay file of ``answers``, every answer of the ``worse`` levels replaced."""
    lines = [json.dumps({"instruction_id": iid, "level": lv, "samples": [
        {"raw_output": "I am not able to draw graphs." if lv in worse else text}]})
        for iid, (lv, text) in answers.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def replay(pytester: pytest.Pytester, answers: Path, *extra: str) -> Any:
    return pytester.runpytest(f"--gi-suite={SUITE}", f"--gi-replay={answers}",
                              "--gi-replay-label=m", f"--gi-per-level={PER_LEVEL}",
                              "-p", "no:cacheprovider", "-p", "no:randomly", *extra)


def test_a_failing_endpoint_never_becomes_the_baseline(
        pytester: pytest.Pytester, good_answers: dict[str, tuple[int, str]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    base = pytester.path / "ci" / "baseline.json"
    base.parent.mkdir()
    made = replay(pytester, recorded(pytester.path / "good.jsonl", good_answers),
                  f"--gi-baseline={base}", "--gi-update-baseline")
    assert made.ret == pytest.ExitCode.OK, made.stdout.str()[-3000:]
    before = base.read_bytes()
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    with FakeOpenAIServer(model="m", fault_for=lambda _: Fault.server_error()) as server:
        common = [f"--gi-suite={SUITE}", "--gi-model=m", f"--gi-base-url={server.base_url}",
                  "--gi-api-key-env=GI_TEST_KEY", "--gi-cache=none",
                  "--override-ini=gi_max_retries=0", "--override-ini=gi_backoff=0.01",
                  f"--gi-per-level={PER_LEVEL}", "-p", "no:cacheprovider"]
        update = pytester.runpytest(*common, f"--gi-baseline={base}", "--gi-update-baseline")
        missing = pytester.path / "ci" / "missing.json"
        first = pytester.runpytest(*common, f"--gi-baseline={missing}")
    out = update.stdout.str()
    assert update.ret == pytest.ExitCode.TESTS_FAILED
    assert ("FAILED: infrastructure error rate 100.0% exceeds "
            "gi_max_error_rate=0.05") in out
    assert (f"baseline NOT written: infrastructure error rate 100.0% exceeds "
            f"gi_max_error_rate=0.05; {base} is unchanged") in out
    assert base.read_bytes() == before
    assert first.ret == pytest.ExitCode.TESTS_FAILED
    assert "it is not written either: infrastructure error rate 100.0%" in first.stdout.str()
    assert not missing.exists()
    # the baseline still holds the good answers, so a model worse at every level fails
    worse = replay(pytester, recorded(pytester.path / "worse.jsonl", good_answers,
                                      worse=(0, 1, 2, 3, 4, 5)), f"--gi-baseline={base}")
    assert worse.ret == pytest.ExitCode.TESTS_FAILED
    text = worse.stdout.str()
    assert f"compared with baseline {base}: m-zero-shot: 60 instructions paired" in text
    for lv in range(6):
        assert f"GATE FAILED (regression): m-zero-shot: L{lv} dropped (level score -" in text


def test_the_gate_line_names_levels_left_out_and_strict_fails_on_them(
        pytester: pytest.Pytester, good_answers: dict[str, tuple[int, str]]) -> None:
    base = pytester.path / "baseline.json"
    assert replay(pytester, recorded(pytester.path / "good.jsonl", good_answers),
                  f"--gi-baseline={base}", "--gi-update-baseline").ret == pytest.ExitCode.OK
    worse = recorded(pytester.path / "worse.jsonl", good_answers, worse=(2, 4))
    report, summary = pytester.path / "r.json", pytester.path / "s.md"
    kept = replay(pytester, worse, f"--gi-baseline={base}", "-k", "not L2 and not L4",
                  f"--gi-report={report}", f"--gi-markdown={summary}")
    assert kept.ret == pytest.ExitCode.OK, kept.stdout.str()[-3000:]
    left_out = ("not compared: L2 (left out by -k 'not L2 and not L4'), L4 (left out by -k "
                "'not L2 and not L4')")
    kept.stdout.fnmatch_lines([f"compared with baseline {base}: m-zero-shot: 40 instructions "
                               f"paired: L0 10*L5 10*; {left_out}"])
    gate = load_valid_report(report)["gate"]
    assert gate["passed"] and gate["baseline"] == str(base)
    assert [(x["level"], x["items"], x["of"]) for x in gate["cells"][0]["not_compared"]] == [
        (2, 10, 10), (4, 10, 10)]
    assert "L2 (left out by -k" in summary.read_text(encoding="utf-8")
    strict = replay(pytester, worse, f"--gi-baseline={base}", "-k", "not L2 and not L4",
                    "--gi-violations=fail")
    assert strict.ret == pytest.ExitCode.TESTS_FAILED
    strict.stdout.fnmatch_lines(["GATE FAILED (strict): m-zero-shot: not compared with the "
                                 "baseline: L2 (left out by -k*"])
    # all levels: the two worse ones fail the gate
    every = replay(pytester, worse, f"--gi-baseline={base}")
    assert every.ret == pytest.ExitCode.TESTS_FAILED
    out = every.stdout.str()
    assert "L2 dropped (level score" in out and "L4 dropped (level score" in out
    assert "L0 dropped" not in out


def test_a_level_subset_is_compared_not_refused(
        pytester: pytest.Pytester, good_answers: dict[str, tuple[int, str]]) -> None:
    base = pytester.path / "baseline.json"
    good = recorded(pytester.path / "good.jsonl", good_answers)
    assert replay(pytester, good, f"--gi-baseline={base}",
                  "--gi-update-baseline").ret == pytest.ExitCode.OK
    subset = replay(pytester, good, f"--gi-baseline={base}", "--gi-levels=0,1,3,5")
    assert subset.ret == pytest.ExitCode.OK, subset.stdout.str()[-3000:] + subset.stderr.str()
    subset.stdout.fnmatch_lines(["compared with baseline *: m-zero-shot: 40 instructions "
                                 "paired: L0 10*L1 10*L3 10*L5 10*; not compared: L2 (left out "
                                 "by --gi-levels), L4 (left out by --gi-levels)"])
