"""``--gi-html``: the page is written right after the JSON report, partial runs included."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.plugin._suite import EMPTY3

pytest_plugins = ["pytester"]

_DATA = re.compile(r'<script type="application/json" id="gi-data">(.*?)</script>', re.S)


@pytest.mark.slow
def test_an_oracle_run_writes_the_page(pytester: pytest.Pytester, suite_dir: Path) -> None:
    html, report = pytester.path / "out" / "r.html", pytester.path / "r.json"
    result = pytester.runpytest_subprocess(
        f"--gi-suite={suite_dir}", "--gi-model=oracle", f"--gi-html={html}",
        f"--gi-report={report}", "-p", "no:cacheprovider")
    assert result.ret == 0
    out = result.stdout.str()
    assert f"html report written to {html}" in out and f"report written to {report}" in out
    doc = json.loads(_DATA.findall(html.read_text(encoding="utf-8"))[0])
    data = json.loads(report.read_text())
    assert len(doc["items"]) == sum(len(c["per_instruction"]) for c in data["cells"])
    assert doc["instructions"]["L1-001"] == "Generate a tree with 4 nodes."
    assert doc["partial"] is False


@pytest.mark.slow  # a whole run stopped by -x; the fast tier keeps the oracle run's page
def test_a_stopped_run_writes_a_page_marked_partial(pytester: pytest.Pytester,
                                                    suite_dir: Path) -> None:
    answers = pytester.path / "a.jsonl"
    answers.write_text("".join(json.dumps({"instruction_id": iid, "level": int(iid[1]),
                                           "samples": [{"raw_output": EMPTY3}]}) + "\n"
                               for iid in ("L0-001", "L1-001", "L1-002", "L2-001")))
    html = pytester.path / "r.html"
    result = pytester.runpytest_subprocess(f"--gi-suite={suite_dir}", f"--gi-replay={answers}",
                                           "-x", f"--gi-html={html}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert f"html report (partial run) written to {html}" in result.stdout.str()
    page = html.read_text(encoding="utf-8")
    assert "PARTIAL RUN" in page and "stopped early" in page


@pytest.mark.slow
def test_a_page_that_cannot_be_written_is_a_usage_error_at_start(
        pytester: pytest.Pytester, suite_dir: Path) -> None:
    folder = pytester.path / "adir"
    folder.mkdir()
    result = pytester.runpytest_subprocess(f"--gi-suite={suite_dir}", "--gi-model=oracle",
                                           f"--gi-html={folder}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "it is a directory" in result.stderr.str()
    same = pytester.path / "x.json"
    result = pytester.runpytest_subprocess(f"--gi-suite={suite_dir}", "--gi-model=oracle",
                                           f"--gi-html={same}", f"--gi-report={same}",
                                           "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "name the same file" in result.stderr.str()
