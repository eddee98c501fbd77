"""What a user sees: summary notes, --co, JUnit class names, --lf after --gi-violations=report,
and the fixtures that need no model."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ._suite import CYCLE4, EMPTY3, TREE4

pytest_plugins = ["pytester"]


def test_one_sample_and_errors_are_explained(pytester: pytest.Pytester, suite_dir: Path) -> None:
    answers = pytester.path / "a.jsonl"
    answers.write_text("".join(json.dumps({"instruction_id": iid, "level": int(iid[1]),
                                           "samples": [{"raw_output": out}] * n}) + "\n"
                               for iid, out, n in (("L0-001", EMPTY3, 2), ("L1-001", TREE4, 2),
                                                   ("L1-002", CYCLE4, 1))))
    one = pytester.runpytest(f"--gi-suite={suite_dir}", f"--gi-replay={answers}",
                             "--gi-samples=1", "-p", "no:cacheprovider")
    assert "D1's uniqueness term is 0 by definition" in one.stdout.str()
    two = pytester.runpytest(f"--gi-suite={suite_dir}", f"--gi-replay={answers}",
                             "--gi-samples=2", "--override-ini=gi_max_error_rate=1",
                             "-p", "no:cacheprovider")
    out = two.stdout.str()
    assert "1 errored item(s) (no answer obtained) are left out of it" in out
    assert "the recorded answers cover 3 of the 4 instructions asked for; the other 1" in out
    assert "uniqueness term" not in out


def test_collect_only_prints_no_summary_and_writes_no_report(pytester: pytest.Pytester,
                                                             suite_dir: Path) -> None:
    report = pytester.path / "r.json"
    result = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle", "--co",
                                f"--gi-report={report}", "-p", "no:cacheprovider")
    assert result.ret == 0
    out = result.stdout.str()
    assert "L0-001[oracle-zero-shot]" in out
    assert "GraphInstruct ===" not in out and "S_total" not in out
    assert not report.exists()


def test_junit_names_a_class_per_cell(pytester: pytest.Pytester, suite_dir: Path) -> None:
    xml = pytester.path / "j.xml"
    result = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle",
                                f"--junitxml={xml}", "-p", "no:cacheprovider")
    assert result.ret == 0
    root = ET.parse(xml).getroot()
    cases = list(root.iter("testcase"))
    assert {c.get("classname") for c in cases} == {"graphinstruct.oracle-zero-shot"}
    # one test case per item, each named (a class name set after JUnit closed the case used
    # to open a second, nameless one per item)
    names = [c.get("name") for c in cases]
    assert None not in names and len(names) == len(set(names))
    suite = root.find("testsuite")
    assert suite is not None and len(names) == int(suite.get("tests", "-1"))


def test_last_failed_reruns_benchmark_violations(pytester: pytest.Pytester,
                                                 suite_dir: Path) -> None:
    answers = pytester.path / "a.jsonl"
    answers.write_text("".join(json.dumps({"instruction_id": iid, "level": int(iid[1]),
                                           "samples": [{"raw_output": out}]}) + "\n"
                               for iid, out in (("L0-001", EMPTY3), ("L1-001", CYCLE4),
                                                ("L1-002", CYCLE4), ("L2-001", EMPTY3))))
    common = [f"--gi-suite={suite_dir}", f"--gi-replay={answers}", "--gi-violations=report"]
    first = pytester.runpytest(*common)
    first.assert_outcomes(passed=2, xfailed=2)
    again = pytester.runpytest(*common, "--lf", "-v")
    again.assert_outcomes(xfailed=2)
    out = again.stdout.str()
    assert "L1-001[a-zero-shot]" in out and "L2-001[a-zero-shot]" in out
    assert "L0-001[a-zero-shot]" not in out


def test_model_free_fixtures_work_without_a_run(pytester: pytest.Pytester,
                                                suite_dir: Path) -> None:
    pytester.makepyfile(f"""
def test_suite(gi_suite, gi_verifier):
    ids = [inst.id for inst in gi_suite]
    assert ids == ["L0-001", "L1-001", "L1-002", "L2-001"]
    inst = gi_suite["L1-001"]
    assert gi_verifier.verify(inst, {TREE4!r}).passed
""")
    result = pytester.runpytest(f"--gi-suite={suite_dir}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_own_tests_run_beside_the_benchmark_with_a_marker(pytester: pytest.Pytester,
                                                          suite_dir: Path) -> None:
    pytester.makepyfile("def test_mine():\n    assert True\n")
    result = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle",
                                "-m", "not graphinstruct", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, deselected=4)


def test_verbose_failures_show_the_raw_answer_escaped(pytester: pytest.Pytester,
                                                      suite_dir: Path) -> None:
    answers = pytester.path / "a.jsonl"
    raw = "Sure!\x1b[31m " + CYCLE4
    answers.write_text(json.dumps({"instruction_id": "L1-001", "level": 1,
                                   "samples": [{"raw_output": raw}]}) + "\n")
    quiet = pytester.runpytest(f"--gi-suite={suite_dir}", f"--gi-replay={answers}",
                               "-p", "no:cacheprovider")
    assert "raw answer" not in quiet.stdout.str()
    loud = pytester.runpytest(f"--gi-suite={suite_dir}", f"--gi-replay={answers}", "-v",
                              "-p", "no:cacheprovider")
    out = loud.stdout.str()
    assert "raw answer" in out and "Sure!\\x1b[31m" in out
    assert "\x1b[31m" not in out
