"""Consistency over samples end to end: a server that answers some samples wrongly, three
samples per item, and the pinned pass@1 / pass@k / pass^k and flaky items in the JSON report,
the terminal, the Markdown summary and the HTML page; --gi-min-pass-all fails the level whose
pass^k is below it."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

from ._suite import CYCLE4, EMPTY3, TREE4

pytest_plugins = ["pytester"]

# per instruction (a phrase of its text): the samples answered right, in arrival order; the
# rest get a wrong graph.  L0-001 3/3, L1-001 1/3, L1-002 2/3.
_RIGHT = {"3 nodes": (EMPTY3, 3, EMPTY3), "tree with 4": (TREE4, 1, CYCLE4),
          "cycle with 4": (CYCLE4, 2, TREE4)}


class _SomeWrong:
    """Answers each instruction's first ``right`` requests with its reference and the rest
    with a wrong graph (the samples of one item are the same request: which sample is wrong
    does not matter, only how many)."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        text = str(body["messages"][-1]["content"])
        phrase = next(p for p in _RIGHT if p in text)
        good, right, bad = _RIGHT[phrase]
        with self.lock:
            self.seen[phrase] += 1
            n = self.seen[phrase]
        return good if n <= right else bad


def test_three_samples_some_wrong_pin_the_figures_in_every_output(
        pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "k")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    report, summary, page = (pytester.path / n for n in ("r.json", "s.md", "p.html"))
    with FakeOpenAIServer(latency_s=0.0, responder=_SomeWrong()) as server:
        result = pytester.runpytest(
            f"--gi-suite={suite_dir}", "--gi-model=fake-model", "--gi-levels=0,1",
            "--gi-samples=3", f"--gi-base-url={server.base_url}", "--gi-api-key-env=GI_TEST_KEY",
            "--gi-cache=none", "--gi-violations=report", "--gi-min-pass-all=0.3",
            f"--gi-report={report}", f"--gi-markdown={summary}", f"--gi-html={page}",
            "-p", "no:cacheprovider")
    out = result.stdout.str()
    assert result.ret == 1, out  # the pass^k gate: L1 is 0.0 < 0.3, L0 1.0
    data = json.loads(report.read_text(encoding="utf-8"))
    (cell,) = data["cells"]
    assert {r["instruction_id"]: r["passing_samples"] for r in cell["per_instruction"]} == {
        "L0-001": 3, "L1-001": 1, "L1-002": 2}
    figures = ("k", "items", "left_out", "flaky", "pass_at_1", "pass_at_k", "pass_all_k")
    l0, l1 = (cell["per_level"][lv]["consistency"] for lv in ("0", "1"))
    total = cell["summary"]["consistency"]
    assert [l0[f] for f in figures] == [3, 1, 0, 0, 1.0, 1.0, 1.0]
    assert [l1[f] for f in figures] == [3, 2, 0, 2, pytest.approx(0.5), 1.0, 0.0]
    assert [total[f] for f in figures] == [3, 3, 0, 2, pytest.approx(2 / 3), 1.0,
                                           pytest.approx(1 / 3)]
    assert l1["pass_all_k_ci95"] == [0.0, 0.0] and l1["pass_at_k_ci95"] == [1.0, 1.0]
    assert cell["flaky"] == [
        {"instruction_id": "L1-001", "level": 1, "passing": 1, "samples": 3},
        {"instruction_id": "L1-002", "level": 1, "passing": 2, "samples": 3}]
    failure = ("GATE FAILED (min_pass_all): fake-model-zero-shot: L1 pass^3 0.0000 (items whose "
               "every one of 3 samples passes; 2 items) is below --gi-min-pass-all=0.3")
    assert data["gate"]["failures"] == [failure]

    assert failure in out
    assert "consistency over samples" in out
    assert "fake-model-zero-shot: flaky (some samples pass, some fail): L1-001 1/3, L1-002 2/3" \
        in out
    l1_row = next(line for line in out.splitlines()
                  if line.startswith("fake-model-zero-shot") and " L1 " in line and "[" in line
                  and "pass" not in line and line.split()[2] == "3")
    assert "0.500 [" in l1_row and "1.000 [1.000, 1.000]" in l1_row
    assert "0.000 [0.000, 0.000]" in l1_row

    md = summary.read_text(encoding="utf-8")
    assert "### Consistency over samples" in md
    assert ("| `fake-model-zero-shot` | L1 | 3 | 2 | 0 | 0.500 [" in md
            and "| 1.000 [1.000, 1.000] | 0.000 [0.000, 0.000] | 2 |" in md)
    assert "- `fake-model-zero-shot` (2): `L1-001` 1/3, `L1-002` 2/3" in md

    html = page.read_text(encoding="utf-8")
    assert '<section id="consistency">' in html
    assert "<code>L1-001</code> 1/3, <code>L1-002</code> 2/3" in html
