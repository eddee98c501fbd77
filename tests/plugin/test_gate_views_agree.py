"""One set of numbers per level in every view (issue 48 §6), end to end through pytest against a
local server: one gated run writes its terminal summary, its Markdown summary, its HTML page and
its JSON report, and each shows every compared level with the same change (level score and pass
rate where both exist, each with its unadjusted 95 % interval), the same p-value with the same
label (``Holm p(no drop)=…``: Holm-adjusted over the run's level tests), the same words — and
never a verdict beside an interval that reads otherwise without the words that say why.  The
``gate`` and ``compare`` commands, given the run's report and baseline, print the same.

Two cases:

* (a) the case of ``test_gate_modes_agree.py`` (30 L2 instructions, a baseline of five samples
  each, 3 of them now always wrong: 15 of 150 samples turned), fixed and ``auto``: the tests
  see the drop (regressed) while the intervals, over thirty instructions of which three
  changed, reach 0;
* (b) L0, L1 and L2 against a five-sample baseline, six L2 instructions wrong once in five
  samples: the unadjusted intervals lie wholly below 0 and the level's own p-value is below
  0.05, but Holm over the three level tests does not reject.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape

from pytest_graphinstruct.report.commands.compare import compare_cells
from pytest_graphinstruct.report.commands.gate import gate
from pytest_graphinstruct.report.render.markdown import md
from pytest_graphinstruct.run.records.reader import read_report
from pytest_graphinstruct.run.records.results import LevelChange
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.plugin.test_auto_samples import flaky
from tests.plugin.test_gate_sees_collapse import SUITE, oracle_answers, responder

pytestmark = pytest.mark.slow  # whole runs through pytester: the full tier (.ci/run)
pytest_plugins = ["pytester"]
COUNT = 30  # the first instructions of each level run
_SHOWN = 5e-4  # an interval's end within this of 0 is printed as 0


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")


def _answers(levels: tuple[int, ...]) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for lv in levels:
        out.update(oracle_answers(SUITE, lv, COUNT))
    return out


def _run(pytester: pytest.Pytester, server: FakeOpenAIServer, levels: tuple[int, ...],
         *extra: str) -> pytest.RunResult:
    return pytester.runpytest(
        f"--gi-suite={SUITE}", "--gi-model=m", f"--gi-base-url={server.base_url}",
        "--gi-api-key-env=GI_TEST_KEY", "--gi-cache=none",
        f"--gi-levels={','.join(map(str, levels))}", f"--gi-per-level={COUNT}",
        "-p", "no:cacheprovider", "-p", "no:randomly", *extra)


class Views:
    """What one gated run wrote: its terminal, Markdown, HTML page, JSON report and
    baseline."""

    def __init__(self, pytester: pytest.Pytester, result: pytest.RunResult,
                 baseline: Path) -> None:
        self.result = result
        self.terminal = result.stdout.str()
        self.markdown = (pytester.path / "summary.md").read_text(encoding="utf-8")
        self.page = (pytester.path / "page.html").read_text(encoding="utf-8")
        self.report = pytester.path / "run.json"
        self.baseline = baseline
        gate_record = json.loads(self.report.read_text(encoding="utf-8"))["gate"]
        (cell,) = gate_record["cells"]
        self.levels = [LevelChange.from_json(x) for x in cell["levels"]]

    def gate_section(self) -> str:
        found = re.search(r'<section id="gate">(.*?)</section>', self.page, re.S)
        assert found is not None, "the page has no gate section"
        return found.group(1)


def _gated(pytester: pytest.Pytester, levels: tuple[int, ...], samples: str,
           answer: Any) -> Views:
    """A five-sample baseline of the oracle's answers, then the run (``samples``: a fixed
    count or ``auto``) answered by ``answer``, writing every output."""
    answers = _answers(levels)
    base = pytester.path / "baseline.json"
    with FakeOpenAIServer(model="m", responder=responder(answers)) as server:
        made = _run(pytester, server, levels, f"--gi-baseline={base}", "--gi-update-baseline",
                    "--gi-samples=5")
    assert made.ret == pytest.ExitCode.OK, made.stdout.str()[-3000:]
    with FakeOpenAIServer(model="m", responder=answer(answers)) as server:
        got = _run(pytester, server, levels, f"--gi-baseline={base}", f"--gi-samples={samples}",
                   "--gi-report=run.json", "--gi-markdown=summary.md", "--gi-html=page.html")
    print(got.stdout.str()[-2500:])
    return Views(pytester, got, base)


def _contradicts(x: LevelChange) -> bool:
    """Whether an interval shown beside ``x``'s verdict reads otherwise than the verdict
    (judged from the numbers and the words alone, not by the code that writes the note)."""
    word = x.verdict or ""
    shown = [(x.low, x.high)]
    if x.pass_change is not None:
        assert x.pass_low is not None and x.pass_high is not None
        shown.append((x.pass_low, x.pass_high))
    if word == "regressed" or word.startswith("lower by"):
        return any(hi > -_SHOWN for _, hi in shown)
    if word == "improved" or word.startswith("higher by"):
        return any(lo < _SHOWN for lo, _ in shown)
    assert word.startswith(("lower, not significant", "higher, not significant", "unchanged")), \
        word
    return any(hi <= -_SHOWN or lo >= _SHOWN for lo, hi in shown)


_P = re.compile(r"(Holm )?p(\\?\(no (?:drop|rise)\\?\))?=([0-9.e+-]+)( unadjusted)?")


def _every_p_labelled(text: str) -> None:
    """Every p-value in ``text`` says whether it is Holm-adjusted: ``Holm p(no drop)=…`` or
    ``p(no drop)=… unadjusted`` — never a bare ``p=…``."""
    found = list(_P.finditer(text))
    assert found, text
    for m in found:
        assert m.group(2), (m.group(0), text)  # of what: no drop, no rise
        assert bool(m.group(1)) != bool(m.group(4)), (m.group(0), text)


def _check_every_view(v: Views) -> None:
    """Each level: the same texts in the terminal, the Markdown, the HTML page, the report and
    the ``gate`` and ``compare`` commands; every p-value labelled; a note exactly where an
    interval beside the verdict reads otherwise, and it is shown wherever the verdict is."""
    section = v.gate_section()
    markdown_rows = [line for line in v.markdown.splitlines() if line.startswith("| L")]
    again = gate(v.report, v.baseline)  # the gate command on the run's report and baseline
    compared = compare_cells(read_report(v.baseline).cells[0],
                             read_report(v.report).cells[0]).lines()
    assert v.levels
    for x in v.levels:
        p = x.p_text()
        # the p-value: Holm-adjusted, labelled so, the report's own adjusted value
        assert x.p_drop_holm is not None and x.tests is not None and x.p_drop is not None
        held = x.p_rise_holm if x.rose else x.p_drop_holm
        assert held is not None and p == (f"Holm p(no {'rise' if x.rose else 'drop'})="
                                          f"{held:.2g}")
        assert x.p_drop_holm >= x.p_drop  # adjusted, never below the level's own
        # a verdict never read against its interval without the words that say why
        assert _contradicts(x) == (x.note is not None), (x.describe(), x.note)
        line = x.describe()
        # terminal: the compared line of the level is the record's text, exactly
        assert f"  m-zero-shot: {line}" in v.terminal.splitlines(), line
        # Markdown: the level's row holds the same texts, escaped, and nothing else numeric
        (row,) = [r for r in markdown_rows if r.startswith(f"| L{x.level} | {x.n} | ")]
        for text in (x.changes_text(), p, x.verdict_text()):
            assert md(text, 600) in row, (text, row)
        # HTML: the gate table's row, escaped
        (cells,) = [r for r in section.split("<tr") if f"<td>L{x.level}</td>" in r]
        for text in (x.changes_text(), p, x.verdict_text()):
            assert str(escape(text)) in cells, (text, cells)
        for shown in (line, row, cells):
            _every_p_labelled(shown)
        # the gate and compare commands say the same
        assert f"  m-zero-shot: {line}" in again.lines()
        assert any(md(x.verdict_text(), 600) in r and md(p) in r
                   for r in again.markdown.splitlines() if r.startswith(f"| L{x.level} |"))
        assert f"  {line}; {x.n} instructions" in compared
        # a failure line gives the same p-value, labelled, and no interval
        for failure in [f for f in v.terminal.splitlines()
                        if f.startswith(f"GATE FAILED (regression): m-zero-shot: L{x.level} ")]:
            assert p in failure and "[" not in failure, failure
            _every_p_labelled(failure)
            assert md(failure, 400) in v.markdown and str(escape(failure)) in v.page


@pytest.mark.parametrize("samples", ["5", "auto"])
def test_three_instructions_always_wrong_read_alike_everywhere(
        pytester: pytest.Pytester, samples: str) -> None:
    """(a): regressed — by the tests, which count the fifteen samples that turned — beside
    intervals that reach 0, with the words that say why, in every view."""

    def three_wrong(answers: dict[str, tuple[str, str]]) -> Any:
        return responder(answers, {iid for iid, _ in list(answers.values())[:3]})

    v = _gated(pytester, (2,), samples, three_wrong)
    assert v.result.ret == pytest.ExitCode.TESTS_FAILED, v.terminal[-3000:]
    (x,) = v.levels
    assert x.regressed and x.verdict == "regressed" and x.high > 0
    assert x.note is not None and "reach" in x.note and x.note in v.terminal
    if samples == "auto":
        assert x.paired_samples and x.measure == "pass rate" and x.pass_change is None
    else:  # the drop as level score and as pass rate: three of thirty, 0.100
        assert x.measure == "level score" and x.pass_change == pytest.approx(-0.1)
        assert x.change < 0 and x.pass_high is not None and x.pass_high > 0
    _check_every_view(v)


def test_an_interval_below_zero_beside_a_drop_holm_does_not_reject(
        pytester: pytest.Pytester) -> None:
    """(b): six of thirty L2 instructions wrong in one of five samples, L0 and L1 unchanged.
    L2's own p-value is below 0.05, its unadjusted intervals lie wholly below 0, and Holm over
    the three level tests does not reject: "lower, not significant", with the words that say
    the interval is unadjusted and not the test, and the test's unadjusted p-value labelled."""

    def six_flaky(answers: dict[str, tuple[str, str]]) -> Any:
        level_2 = [iid for iid, _ in answers.values() if iid.startswith("L2-")]
        return flaky(answers, level_2[:6])

    v = _gated(pytester, (0, 1, 2), "5", six_flaky)
    assert v.result.ret == pytest.ExitCode.OK, v.terminal[-3000:]
    by_level = {x.level: x for x in v.levels}
    assert sorted(by_level) == [0, 1, 2]
    x = by_level[2]
    assert x.p_drop is not None and x.p_drop <= 0.05 < (x.p_drop_holm or 0.0)
    assert x.tests == 3 and x.verdict == "lower, not significant" and not x.regressed
    assert x.pass_change == pytest.approx(-0.04) and x.pass_high is not None
    assert x.pass_high < 0  # wholly below 0, unadjusted
    assert x.note is not None and x.note.endswith(
        f"unadjusted and not the test: p(no drop)={x.p_drop:.2g} unadjusted, Holm over 3 "
        "level tests")
    assert all(by_level[lv].note is None for lv in (0, 1))
    _check_every_view(v)
