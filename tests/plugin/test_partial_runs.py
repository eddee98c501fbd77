"""A partial or narrowed run never stands in for a full one (issue 32, section 3), end to end
on the tiny suite (L0-001, L1-001, L1-002, L2-001): a run the token budget cut short is
partial; a baseline update from a run narrower than the baseline is refused unless asked for
in so many words; what either side lacks is named and ``--gi-violations=fail`` fails on it; recorded
answers are graded whatever their label."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.report.schema_check import load_valid_report

from ._suite import CYCLE4, EMPTY3, TREE4

pytestmark = pytest.mark.slow  # whole pytester runs: the full tier (.ci/run)

pytest_plugins = ["pytester"]

#: the right answer of each instruction of the tiny suite (L2-001 is infeasible)
RIGHT = {"L0-001": (0, EMPTY3), "L1-001": (1, TREE4), "L1-002": (1, CYCLE4),
         "L2-001": (2, "No such graph exists: the constraints are contradictory, so this "
                          "instruction is infeasible.")}
WRONG = "I am not able to draw graphs."


def recorded(path: Path, answers: dict[str, tuple[int, str]], *,
             wrong: tuple[str, ...] = ()) -> Path:
    """A replay file of ``answers``, those of the ``wrong`` ids replaced by a non-answer."""
    lines = [json.dumps({"instruction_id": iid, "level": lv, "samples": [
        {"raw_output": WRONG if iid in wrong else text}]}) for iid, (lv, text) in answers.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def replay(pytester: pytest.Pytester, suite: Path, answers: Path, *extra: str) -> Any:
    return pytester.runpytest(f"--gi-suite={suite}", f"--gi-replay={answers}",
                              "--gi-replay-label=m", "-p", "no:cacheprovider",
                              "-p", "no:randomly", *extra)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    """Answers every request with the right answer of the instruction it asks about."""
    def answer(body: dict[str, Any]) -> str:
        user = body["messages"][-1]["content"]
        texts = {"3 nodes": EMPTY3, "tree": TREE4, "cycle": CYCLE4}
        return next((a for key, a in texts.items() if key in user), RIGHT["L2-001"][1])

    with FakeOpenAIServer(responder=answer) as srv:
        yield srv


def endpoint(suite: Path, server: FakeOpenAIServer, *extra: str) -> list[str]:
    return [f"--gi-suite={suite}", "--gi-model=m", f"--gi-base-url={server.base_url}",
            "--gi-api-key-env=GI_TEST_KEY", "--gi-cache=none", "--override-ini=gi_max_retries=0",
            "--gi-concurrency=1", "-p", "no:cacheprovider", "-p", "no:randomly", *extra]


# -- --gi-replay-label names a cell, never a backend --------------------------------------------

def test_recorded_answers_labelled_oracle_are_graded_not_the_oracles(
        pytester: pytest.Pytester, suite_dir: Path) -> None:
    answers = recorded(pytester.path / "answers.jsonl", RIGHT, wrong=("L1-001", "L1-002"))
    result = pytester.runpytest(f"--gi-suite={suite_dir}", f"--gi-replay={answers}",
                                "--gi-replay-label=oracle", "-k", "L1", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-2000:]
    assert result.parseoutcomes().get("failed") == 2
    assert "2 passed" not in result.stdout.str()


# -- the token budget makes a run partial --------------------------------------------------------

def test_a_run_the_token_budget_cut_short_is_partial_and_never_the_baseline(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    base, report = pytester.path / "baseline.json", pytester.path / "r.json"
    full = pytester.runpytest(*endpoint(suite_dir, server, f"--gi-baseline={base}",
                                        "--gi-update-baseline", "--gi-samples=1"))
    assert full.ret == pytest.ExitCode.OK, full.stdout.str()[-2000:]
    before = base.read_bytes()
    budget = ["--gi-max-tokens-total=1", f"--gi-report={report}", "--gi-samples=1"]
    update = pytester.runpytest(*endpoint(suite_dir, server, f"--gi-baseline={base}",
                                          "--gi-update-baseline", *budget))
    out = update.stdout.str()
    assert update.ret == pytest.ExitCode.TESTS_FAILED, out[-2000:]
    assert base.read_bytes() == before  # the full baseline stays
    assert "token budget exhausted (--gi-max-tokens-total=1)" in out
    assert "the run is partial" in out
    assert "baseline NOT written: the run is incomplete (not asked: token budget" in out
    data = load_valid_report(report)
    assert data["coverage"]["complete"] is False and data["coverage"]["missing_count"] == 3
    assert "token budget" in data["coverage"]["reason"]

    # gated: the levels never asked are not compared, and the run does not pass
    gated = pytester.runpytest(*endpoint(suite_dir, server, f"--gi-baseline={base}", *budget))
    text = gated.stdout.str()
    assert gated.ret == pytest.ExitCode.TESTS_FAILED, text[-2000:]
    assert "FAILED: incomplete run (" in text and "no gate passes on a partial run" in text
    assert "not compared: L1 (" in text and "L2 (" in text


def test_under_xdist_the_limit_a_worker_hit_reaches_the_coverage(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker's limits travel in its payload as what they are, not as note text."""
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    report = pytester.path / "r.json"
    result = pytester.runpytest(*endpoint(suite_dir, server, "-n", "2",
                                          "--gi-max-tokens-total=2", f"--gi-report={report}"))
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-2000:]
    coverage = load_valid_report(report)["coverage"]
    assert coverage["complete"] is False
    assert coverage["reason"] == "not asked: token budget exhausted (--gi-max-tokens-total=2)"


# -- a narrower run never replaces the baseline unasked -----------------------------------------

@pytest.mark.parametrize("narrow", [("-k", "L0-001"), ("--gi-per-level=1",),
                                    ("--gi-shard=1/2",), ("--gi-levels=0,1",)])
def test_a_narrower_run_does_not_replace_the_baseline_unless_asked(
        pytester: pytest.Pytester, suite_dir: Path, narrow: tuple[str, ...]) -> None:
    base = pytester.path / "baseline.json"
    answers = recorded(pytester.path / "answers.jsonl", RIGHT)
    first = replay(pytester, suite_dir, answers, f"--gi-baseline={base}", "--gi-update-baseline")
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()[-2000:]
    before = base.read_bytes()
    refused = replay(pytester, suite_dir, answers, f"--gi-baseline={base}",
                     "--gi-update-baseline", *narrow)
    out = refused.stdout.str()
    assert refused.ret == pytest.ExitCode.TESTS_FAILED, out[-2000:]
    assert base.read_bytes() == before
    assert "the baseline has 4 items in 3 levels" in out, out[-2000:]
    assert "refusing to replace it" in out and "--gi-replace-baseline" in out
    assert "baseline NOT written" in out
    forced = replay(pytester, suite_dir, answers, f"--gi-baseline={base}",
                    "--gi-replace-baseline", *narrow)
    assert forced.ret == pytest.ExitCode.OK, forced.stdout.str()[-2000:]
    kept = load_valid_report(base)
    assert sum(len(c["per_instruction"]) for c in kept["cells"]) < 4


def test_a_first_baseline_is_written_from_a_narrow_run(
        pytester: pytest.Pytester, suite_dir: Path) -> None:
    base = pytester.path / "baseline.json"
    answers = recorded(pytester.path / "answers.jsonl", RIGHT)
    first = replay(pytester, suite_dir, answers, f"--gi-baseline={base}", "--gi-update-baseline",
                   "-k", "L0-001")
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()[-2000:]
    assert base.exists()


# -- what the baseline lacks is named too, and --gi-violations=fail fails on it -----------------

def test_a_level_and_a_cell_only_one_side_has_are_named_and_strict_fails_on_them(
        pytester: pytest.Pytester, suite_dir: Path) -> None:
    base = pytester.path / "baseline.json"
    good = recorded(pytester.path / "good.jsonl", RIGHT)
    made = replay(pytester, suite_dir, good, f"--gi-baseline={base}", "--gi-update-baseline",
                  "--gi-levels=0,1", "--gi-strategy=zero-shot,few-shot")
    assert made.ret == pytest.ExitCode.OK, made.stdout.str()[-2000:]
    worse = recorded(pytester.path / "worse.jsonl", RIGHT, wrong=("L2-001",))  # L2 collapsed
    report, summary = pytester.path / "r.json", pytester.path / "s.md"
    gated = replay(pytester, suite_dir, worse, f"--gi-baseline={base}", f"--gi-report={report}",
                   f"--gi-markdown={summary}")
    out = gated.stdout.str()
    lacking = "not compared: L2 (not in the baseline: left out by --gi-levels)"
    cell = "not compared: baseline cell m-few-shot (not in this run)"
    assert gated.ret == pytest.ExitCode.OK, out[-2000:]  # not a gate failure, but said
    assert "m-zero-shot: 3 instructions paired: L0 1" in out and lacking in out, out[-2000:]
    assert f"compared with baseline {base}: {cell}" in out
    text = summary.read_text(encoding="utf-8")
    assert lacking in text and cell in text
    gate = load_valid_report(report)["gate"]
    assert gate["cells"][0]["not_compared"] == [
        {"level": 2, "items": 1, "of": 1, "reason": "left out by --gi-levels",
         "missing_from": "baseline"}]
    assert f"compared with baseline {base}: {cell}" in gate["compared"]
    strict = replay(pytester, suite_dir, worse, f"--gi-baseline={base}", "--gi-violations=fail")
    assert strict.ret == pytest.ExitCode.TESTS_FAILED
    strict.stdout.fnmatch_lines([
        "GATE FAILED (strict): m-zero-shot: not compared with the baseline: L2 (not in the "
        "baseline: left out by --gi-levels)",
        f"GATE FAILED (strict): baseline {base}: 1 cell(s) not compared with this run (it has "
        "no such cell): m-few-shot"])
