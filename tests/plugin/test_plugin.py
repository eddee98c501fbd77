"""End-to-end behaviour of the pytest plugin, through pytester."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.report.schema_check import load_valid_report, without_provenance

from ._suite import CYCLE4, EMPTY3, TREE4

pytest_plugins = ["pytester"]


def replay_file(path: Path, answers: dict[str, list[str]]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for iid, outs in answers.items():
            f.write(json.dumps({"instruction_id": iid, "level": int(iid[1]), "samples": [
                {"raw_output": o, "input_tokens": 10, "output_tokens": 5, "api_calls": 1}
                for o in outs]}) + "\n")
    return path


def test_no_gi_options_collects_nothing_extra(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_oracle_passes_everything(pytester: pytest.Pytester, suite_dir: Path) -> None:
    report = pytester.path / "r.json"
    result = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle",
                                f"--gi-report={report}", "-v")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*L1-001?oracle-zero-shot? PASSED*",
                                 "*L2-001?oracle-zero-shot? PASSED*", "*GraphInstruct*"])
    data = load_valid_report(report)
    assert data["cells"][0]["metadata"]["model"] == "oracle"
    assert [r["instruction_id"] for r in data["cells"][0]["per_instruction"]] == [
        "L0-001", "L1-001", "L1-002", "L2-001"]
    assert all(r["d4_instruction_score"] == 1.0 for r in data["cells"][0]["per_instruction"])
    assert data["cells"][0]["summary"]["infra_errors"] == 0


def test_failing_item_lists_every_violation(pytester: pytest.Pytester, suite_dir: Path) -> None:
    replay = replay_file(pytester.path / "a.jsonl", {
        "L0-001": [EMPTY3],
        "L1-001": [CYCLE4.replace("L1-002", "x"), TREE4],
        "L1-002": ["no idea", "still no idea"],
        "L2-001": [TREE4, "Impossible: 3*5 is odd, so no such graph exists."],
    })
    result = pytester.runpytest(f"--gi-suite={suite_dir}", f"--gi-replay={replay}",
                                "--gi-samples=2", "-p", "no:cacheprovider")
    out = result.stdout.str()
    # L0 sample 1 is missing from the recording: an infra error, not a model failure
    result.assert_outcomes(failed=3, errors=1)
    assert "no recorded answer" in out
    assert "assert graph_type=tree  (explicit, structural): expected tree" in out
    assert "assert num_edges=3  (implicit, count): expected = 3, observed 4, gap +1" in out
    assert "sample 1: ok" in out
    assert "assert feasible=false" in out and "confabulated" in out


def test_benchmark_mode_reports_violations_without_failing(pytester: pytest.Pytester,
                                                           suite_dir: Path) -> None:
    replay = replay_file(pytester.path / "a.jsonl", {
        "L0-001": [EMPTY3], "L1-001": [CYCLE4], "L1-002": ["no idea"],
        "L2-001": ["Impossible: 3*5 is odd, so no such graph exists."],
    })
    report = pytester.path / "r.json"
    args = [f"--gi-suite={suite_dir}", f"--gi-replay={replay}", "--gi-violations=report",
            f"--gi-report={report}", "-p", "no:cacheprovider", "-rx"]
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=2, xfailed=2)
    assert result.ret == 0
    out = result.stdout.str()
    assert "--gi-violations=report: shown, not failed" in out and "assert graph_type=tree" in out
    data = load_valid_report(report)
    outcomes = {r["instruction_id"]: r["outcome"] for r in data["cells"][0]["per_instruction"]}
    assert outcomes == {"L0-001": "passed", "L1-001": "failed", "L1-002": "failed",
                        "L2-001": "passed"}
    gated = pytester.runpytest(*args, "--gi-fail-under=0.99")
    assert gated.ret != 0  # the gates still decide the exit status


def test_pass_rule_any(pytester: pytest.Pytester, suite_dir: Path) -> None:
    replay = replay_file(pytester.path / "a.jsonl", {"L1-001": [CYCLE4, TREE4]})
    result = pytester.runpytest(f"--gi-suite={suite_dir}", f"--gi-replay={replay}",
                                "--gi-samples=2", "--gi-pass=any", "-k", "L1-001",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)  # only the instructions the file answers are collected


def test_selection_markers_and_collect_only(pytester: pytest.Pytester, suite_dir: Path) -> None:
    args = [f"--gi-suite={suite_dir}", "--gi-model=oracle", "-p", "no:cacheprovider"]
    co = pytester.runpytest(*args, "--co", "-q")
    co.stdout.fnmatch_lines(["L0-001[[]oracle-zero-shot[]]", "L2-001[[]oracle-zero-shot[]]"])
    pytester.runpytest(*args, "-m", "level1").assert_outcomes(passed=2, deselected=2)
    pytester.runpytest(*args, "-m", "infeasible").assert_outcomes(passed=1, deselected=3)
    pytester.runpytest(*args, "--gi-levels=0,2").assert_outcomes(passed=2)
    pytester.runpytest(*args, "-k", "L1-002").assert_outcomes(passed=1, deselected=3)
    first = pytester.runpytest(*args, "--gi-per-level=1", "-v")
    first.assert_outcomes(passed=3)  # L0-001, L1-001, L2-001: L1-002 is the second of L1
    assert "L1-002" not in first.stdout.str()
    bad = pytester.runpytest(*args, "--gi-per-level=0")
    bad.stderr.fnmatch_lines(["*--gi-per-level*"])


def test_several_cells(pytester: pytest.Pytester, suite_dir: Path) -> None:
    report = pytester.path / "r.json"
    result = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle",
                                "--gi-strategy=zero-shot,few-cot", f"--gi-report={report}",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=8)
    data = load_valid_report(report)
    assert [c["metadata"]["strategy"] for c in data["cells"]] == ["zero-shot", "few-cot"]


def test_last_failed_reruns_only_failures(pytester: pytest.Pytester, suite_dir: Path) -> None:
    replay = replay_file(pytester.path / "a.jsonl", {
        "L0-001": [EMPTY3], "L1-001": [CYCLE4], "L1-002": [CYCLE4],
        "L2-001": ["Impossible: 3*5 is odd, so no such graph exists."]})
    args = [f"--gi-suite={suite_dir}", f"--gi-replay={replay}"]
    pytester.runpytest(*args).assert_outcomes(passed=3, failed=1)
    result = pytester.runpytest(*args, "--lf")
    result.assert_outcomes(failed=1, deselected=3)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--gi-model=oracle", "--gi-samples=0"], "--gi-samples must be >= 1"),
        (["--gi-model=oracle", "--gi-pass=most"], "--gi-pass must be one of"),
        (["--gi-model=oracle", "--gi-strategy=magic"], "unknown --gi-strategy 'magic'"),
        (["--gi-model=oracle", "--gi-levels=7"], "--gi-levels must name levels 0-5"),
        (["--gi-model=oracle", "--gi-temperature=hot"], "--gi-temperature must be a number"),
        (["--gi-replay=nope.jsonl"], "--gi-replay file not found"),
        (["--gi-model=oracle", "--gi-pools=nope"], "--gi-pools directory not found"),
        (["--gi-model=oracle", "--gi-fail-under=2"], "--gi-fail-under must be <= 1"),
    ],
)
def test_bad_options_are_usage_errors(pytester: pytest.Pytester, suite_dir: Path,
                                      args: list[str], fragment: str) -> None:
    result = pytester.runpytest(f"--gi-suite={suite_dir}", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert fragment in result.stderr.str()


def test_missing_suite_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--gi-model=oracle", f"--gi-suite={pytester.path / 'none'}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "no GraphInstruct suite" in result.stderr.str()


def test_ini_options(pytester: pytest.Pytester, suite_dir: Path) -> None:
    pytester.makeini(f"[pytest]\ngi_model = oracle\ngi_suite = {suite_dir}\ngi_levels = 1\n"
                     "gi_pass = majority\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)
    pytester.makeini(f"[pytest]\ngi_model = oracle\ngi_suite = {suite_dir}\ngi_pass = most\n")
    bad = pytester.runpytest("-p", "no:cacheprovider")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR and "--gi-pass" in bad.stderr.str()


@pytest.mark.slow
def test_xdist_report_equals_single_process(pytester: pytest.Pytester, suite_dir: Path) -> None:
    replay = replay_file(pytester.path / "a.jsonl", {
        "L0-001": [EMPTY3], "L1-001": [CYCLE4], "L1-002": [CYCLE4],
        "L2-001": ["Impossible: 3*5 is odd, so no such graph exists."]})
    r0, r2 = pytester.path / "r0.json", pytester.path / "r2.json"
    base = [f"--gi-suite={suite_dir}", f"--gi-replay={replay}", "-p", "no:cacheprovider"]
    pytester.runpytest_subprocess(*base, "-n", "0", f"--gi-report={r0}").assert_outcomes(
        passed=3, failed=1)
    pytester.runpytest_subprocess(*base, "-n", "2", f"--gi-report={r2}").assert_outcomes(
        passed=3, failed=1)
    d0, d2 = (json.loads(p.read_text(encoding="utf-8")) for p in (r0, r2))
    run0, run2 = d0.pop("run"), d2.pop("run")
    assert json.dumps(d0) == json.dumps(d2)  # every result, in the same order
    for run in (run0, run2):  # when it ran differs; what produced it does not
        del run["started"], run["finished"]
    assert run0 == run2


def test_junit_carries_sample_verdicts(pytester: pytest.Pytester, suite_dir: Path) -> None:
    xml = pytester.path / "junit.xml"
    pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle", f"--junitxml={xml}",
                       "-p", "no:cacheprovider").assert_outcomes(passed=4)
    text = xml.read_text(encoding="utf-8")
    assert text.count('name="gi_passed_samples" value="1"') == 4
    assert 'name="gi_samples" value="1"' in text


def test_baseline_expected_failures_and_fail_under(pytester: pytest.Pytester,
                                                   suite_dir: Path) -> None:
    good = {"L0-001": [EMPTY3], "L1-001": [TREE4], "L1-002": [TREE4],  # L1-002 wrong
            "L2-001": ["Impossible: 3*5 is odd, so no such graph exists."]}
    worse = dict(good, **{"L1-001": [CYCLE4]})  # a new failure
    base = pytester.path / "baseline.json"
    a = replay_file(pytester.path / "a.jsonl", good)
    b = replay_file(pytester.path / "b.jsonl", worse)
    common = [f"--gi-suite={suite_dir}", "-p", "no:cacheprovider", "--gi-replay-label=m"]
    first = pytester.runpytest(*common, f"--gi-replay={a}", f"--gi-baseline={base}",
                               "--gi-update-baseline")
    first.assert_outcomes(passed=3, failed=1)
    assert base.is_file()
    # the same answers again: the known failure is expected, the session is green
    again = pytester.runpytest(*common, f"--gi-replay={a}", f"--gi-baseline={base}")
    again.assert_outcomes(passed=3, xfailed=1)
    assert again.ret == pytest.ExitCode.OK
    # a new failure alone is not a real drop: the statistical gate lets it pass, with a note
    regressed = pytester.runpytest(*common, f"--gi-replay={b}", f"--gi-baseline={base}")
    regressed.assert_outcomes(passed=2, xfailed=2)
    assert regressed.ret == pytest.ExitCode.OK
    regressed.stdout.fnmatch_lines(["*NOTE: m-zero-shot: 1 item(s) newly fail against the "
                                    "baseline on levels without a significant drop (L1-001)*"])
    # --gi-violations=fail fails on any newly failing item
    strict = pytester.runpytest(*common, f"--gi-replay={b}", f"--gi-baseline={base}",
                                "--gi-violations=fail")
    strict.assert_outcomes(passed=2, failed=1, xfailed=1)
    # the quality floor
    floor = pytester.runpytest(*common, f"--gi-replay={a}", "--gi-fail-under=0.99")
    assert floor.ret == pytest.ExitCode.TESTS_FAILED
    floor.stdout.fnmatch_lines(["*GATE FAILED (fail_under)*below --gi-fail-under=0.99*"])
    ok = pytester.runpytest(*common, f"--gi-replay={a}", "--gi-fail-under=0.5", "-k", "not L1-002")
    assert ok.ret == pytest.ExitCode.OK


def test_baseline_usage_errors(pytester: pytest.Pytester, suite_dir: Path) -> None:
    r = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle", "--gi-update-baseline")
    assert r.ret == pytest.ExitCode.USAGE_ERROR and "needs --gi-baseline" in r.stderr.str()
    r = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle", "--gi-strict")
    assert r.ret == pytest.ExitCode.USAGE_ERROR and "--gi-strict needs --gi-baseline" in \
        r.stderr.str()


def test_a_missing_baseline_is_written_and_fails_the_run(pytester: pytest.Pytester,
                                                         suite_dir: Path) -> None:
    base = pytester.path / "ci" / "none.json"
    base.parent.mkdir()
    r = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle",
                           f"--gi-baseline={base}", "-p", "no:cacheprovider")
    assert r.ret == pytest.ExitCode.TESTS_FAILED
    r.stdout.fnmatch_lines([f"*GATE FAILED (baseline): baseline {base} did not exist: it is "
                            "written from this run; review and commit it*"])
    assert load_valid_report(base)["cells"][0]["summary"]["items"] == 4
    again = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle",
                               f"--gi-baseline={base}", "-p", "no:cacheprovider")
    assert again.ret == pytest.ExitCode.OK


def test_a_baseline_of_another_cell_or_suite_is_a_usage_error(pytester: pytest.Pytester,
                                                              suite_dir: Path) -> None:
    base = pytester.path / "b.json"
    common = [f"--gi-suite={suite_dir}", "-p", "no:cacheprovider", f"--gi-baseline={base}"]
    pytester.runpytest(*common, "--gi-model=oracle", "--gi-update-baseline")
    other = pytester.runpytest(*common, "--gi-model=oracle", "--gi-strategy=few-shot")
    assert other.ret == pytest.ExitCode.USAGE_ERROR
    assert "has no cell oracle-few-shot (it has: oracle-zero-shot)" in other.stderr.str()
    assert "--gi-baseline-cell" in other.stderr.str()
    across = pytester.runpytest(*common, "--gi-model=oracle", "--gi-strategy=few-shot",
                                "--gi-baseline-cell=oracle-zero-shot")
    assert across.ret == pytest.ExitCode.OK
    unknown = pytester.runpytest(*common, "--gi-model=oracle", "--gi-baseline-cell=x")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR and "no such cell" in unknown.stderr.str()
    # another suite: one instruction more changes the suite hash
    data = json.loads((suite_dir / "level_1.json").read_text(encoding="utf-8"))
    moved = pytester.path / "other_suite"
    shutil.copytree(suite_dir, moved)
    data[0]["instruction"] += " (edited)"
    (moved / "level_1.json").write_text(json.dumps(data), encoding="utf-8")
    suite = pytester.runpytest(f"--gi-suite={moved}", "-p", "no:cacheprovider",
                               f"--gi-baseline={base}", "--gi-model=oracle")
    assert suite.ret == pytest.ExitCode.USAGE_ERROR
    assert "was made on another suite" in suite.stderr.str()


def test_fixtures_for_users_own_tests(pytester: pytest.Pytester, suite_dir: Path) -> None:
    pytester.makepyfile(test_mine="""
        def test_query_and_evaluate(gi_suite, gi_query, gi_evaluate, gi_verifier):
            inst = gi_suite["L1-001"]
            answer = gi_query(inst)
            ev = gi_evaluate(inst, [answer])
            assert ev.passed and ev.d4_instruction_score == 1.0
            assert ev.dimension_scores["D4"] == 1.0
            v = gi_verifier.verify(inst, "no graph here")
            assert not v.passed and v.parse.reason

        def test_results_are_recorded(gi_results):
            assert isinstance(gi_results, list)

        def test_instruction_fixture_outside_items_skips(gi_instruction):
            pass
    """)
    result = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle", "test_mine.py",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6, skipped=1)
    bare = pytester.runpytest("test_mine.py", "-p", "no:cacheprovider", "-k", "query")
    bare.assert_outcomes(skipped=1, deselected=2)


@pytest.mark.slow
def test_crashed_worker_marks_the_summary_partial(pytester: pytest.Pytester,
                                                  suite_dir: Path) -> None:
    pytester.makepyfile(test_crash="""
        import os

        def test_crash():
            os._exit(3)
    """)
    report = pytester.path / "r.json"
    result = pytester.runpytest_subprocess(f"--gi-suite={suite_dir}", "--gi-model=oracle", "-n",
                                           "2", f"--gi-report={report}", "-p",
                                           "no:cacheprovider")
    result.stdout.fnmatch_lines(["*INCOMPLETE RUN*a worker crashed*"])
    assert load_valid_report(report)["partial"] is True


@pytest.mark.slow
def test_report_with_all_dimensions_is_identical_across_workers(
        pytester: pytest.Pytester, official_suite_dir: Path) -> None:
    r0, r2, again = (pytester.path / n for n in ("r0.json", "r2.json", "again.json"))
    base = [f"--gi-suite={official_suite_dir}", "--gi-model=oracle", "--gi-levels=3,4,5",
            "-k", "L3-00 or L4-00 or L5-00", "-p", "no:cacheprovider"]
    pytester.runpytest_subprocess(*base, "-n", "0", f"--gi-report={r0}")
    pytester.runpytest_subprocess(*base, "-n", "2", f"--gi-report={r2}")
    pytester.runpytest_subprocess(*base, "-n", "0", f"--gi-report={again}")
    data = load_valid_report(r0)
    dims = {d for r in data["cells"][0]["per_instruction"] for d, v in r["dimension_scores"].items()
            if v is not None}
    assert {"D1", "D2", "D3", "D4"} <= dims
    assert without_provenance(r0) == without_provenance(r2) == without_provenance(again)
