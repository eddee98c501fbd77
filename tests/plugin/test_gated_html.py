"""A gated run's HTML page shows its gate (issue 33 §3): the verdict, what was compared, each
level's change, and the items marked against the baseline — without the separate ``html …
--baseline`` command."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.plugin.test_gate_sees_collapse import baseline, oracle_answers, responder, run

pytestmark = pytest.mark.slow  # whole runs through pytester: the full tier (.ci/run)
pytest_plugins = ["pytester"]
COUNT = 20


def _document(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="gi-data">(.*?)</script>', page, re.S)
    assert found is not None
    return json.loads(found.group(1))


def test_a_gated_runs_page_shows_its_gate(pytester: pytest.Pytester,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    from tests.plugin.test_gate_sees_collapse import SUITE

    answers = oracle_answers(SUITE, 2, COUNT)
    base = baseline(pytester, answers, count=COUNT)
    ids = [iid for iid, _ in answers.values()]
    page = pytester.path / "page.html"
    with FakeOpenAIServer(model="m", responder=responder(answers, wrong=ids)) as server:
        got = run(pytester, server, f"--gi-baseline={base}", f"--gi-html={page}", count=COUNT)
    assert got.ret == pytest.ExitCode.TESTS_FAILED, got.stdout.str()[-2000:]
    text = page.read_text(encoding="utf-8")
    assert '<section id="gate">' in text and "Gate: <span class=\"bad\">failed</span>" in text
    doc = _document(text)
    assert doc["baseline"] == "baseline.json"
    gate = doc["gate"]
    assert gate["passed"] is False and gate["baseline"] == str(base)
    assert "built-in method" not in text and gate["baseline_update"] is None
    assert any(line.startswith("GATE FAILED (regression): m-zero-shot: L2 dropped (level score")
               for line in gate["failures"])
    (cell,) = gate["cells"]
    assert cell["newly_failing"] == COUNT
    (level,) = cell["levels"]
    assert level["level"] == 2 and level["regressed"] and level["change"] < 0
    # every item is marked against the baseline: passed there, failed now
    assert {(i["baseline"], i["outcome"], i["differs"]) for i in doc["items"]} == {
        ("passed", "failed", True)}


def test_an_ungated_page_has_no_gate(pytester: pytest.Pytester,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    from tests.plugin.test_gate_sees_collapse import SUITE

    answers = oracle_answers(SUITE, 2, 3)
    page = pytester.path / "page.html"
    with FakeOpenAIServer(model="m", responder=responder(answers)) as server:
        got = run(pytester, server, f"--gi-html={page}", count=3)
    assert got.ret == pytest.ExitCode.OK
    text = page.read_text(encoding="utf-8")
    doc = _document(text)
    assert doc["gate"] is None and doc["baseline"] is None and 'id="gate"' not in text
