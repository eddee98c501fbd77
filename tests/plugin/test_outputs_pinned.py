"""Every output a run writes, pinned (apart from when, where and how long).

The redesign of issue 21 promises no behaviour change: the JSON report (without its ``run``
record), the Markdown summary, the HTML page, the JUnit XML and the terminal summary of an
oracle run and of a replay with failures stay the same.  The committed files in ``pinned/``
are what the code wrote when they were made; a change to any output is a change to these files,
made on purpose with ``GI_UPDATE_PINNED=1`` and seen in the diff.

"The same" is exact for every verdict, word, string and integer, but not for the last digits of
a float (issue 32): D3's GCN score follows the CPU's (or GPU's) numeric kernels, by ~1e-9 here
and up to 1.2e-6 on a GPU, and with it the level scores and S_total.  So (``tests/pinning.py``)
the JSON report is compared field by field, each float within its tolerance (1e-5 for a score
and its aggregates); the text outputs line by line, exactly but for a printed decimal number,
which may differ by one unit of its last printed digit plus 1e-5 (0.9499 vs 0.9498: a score
that moved by less than the printed unit can flip its last digit, never more); an integer
(a count, an id) never.  Inside the HTML page's charts (matplotlib's SVG) a coordinate may move
by :data:`SVG_SLACK` points: it places a score on an axis, magnified by the axis' scale.  The
pinned files were written on another CPU than the AMD EPYC this rule was checked on, and both
hold it (docs/SCORING.md, "Pinned scores").
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import matplotlib
import pytest

from tests.pinning import SCORE_TOLERANCE, json_differences, summarize, text_differences
from tests.report.schema_check import without_provenance

ROOT = Path(__file__).resolve().parents[2]
PINNED = Path(__file__).with_name("pinned")
pytest_plugins = ["pytester"]
_UPDATE = os.environ.get("GI_UPDATE_PINNED") == "1"
SVG_SLACK = 0.1
"""How far a chart's coordinate (in points) may move: a seventh of a screen pixel.  Measured:
1e-6 pt (the last printed digit flips).  A score that moves by 1e-5 moves a point by 1e-5 times
its axis' points per score unit: 0.1 pt holds up to 10,000 (a score axis 0.02 wide over the
charts' ~200 pt height)."""
_SVG = re.compile(r"(<svg\b.*?</svg>)", re.S)


def _replay_answers(path: Path) -> None:
    """Two instructions per level: the first answered with its first reference (a pass), the
    second with the first reference of the next level's first instruction (violations, or no
    parse), so failures and their rendering are pinned too."""
    levels = [json.loads((ROOT / "instructions" / f"level_{n}.json").read_text())[:2]
              for n in range(6)]
    first = [(recs[0].get("reference_solutions") or ["No such graph exists."])[0]
             for recs in levels]
    with path.open("w", encoding="utf-8") as out:
        for n, (a, b) in enumerate(levels):
            for rec, text in ((a, first[n]), (b, first[(n + 1) % 6])):
                out.write(json.dumps({"instruction_id": rec["id"], "level": n,
                                      "samples": [{"raw_output": text}]}) + "\n")


def _normalized_terminal(text: str, where: Path) -> str:
    """The terminal output without what the machine decides: paths, durations (and the final
    line's padding, which follows their width), the header's platform and plugin lines
    (versions, and the order plugins were found in), and the lines of pytest's short summary
    (pytest 8.0 leaves out a failure's message there)."""
    text = text.replace(str(where), "<tmp>")
    text = re.sub(r"in \d+\.\d+s( \(\d+:\d+:\d+\))?", "in <t>", text)
    # the final line is centred in '=': its padding follows the duration's width
    text = re.sub(r"^=+ (.* in <t>) =+$", r"== \1 ==", text, flags=re.M)
    skipped = ("platform ", "plugins: ", "PASSED ", "FAILED ", "ERROR ", "SKIPPED ", "XFAIL ",
               "XPASS ")
    return "\n".join(line.rstrip() for line in text.splitlines()
                     if not line.startswith(skipped)) + "\n"


def _normalized_junit(text: str) -> str:
    """The JUnit XML without times, host, and what pytest's version decides: the root
    element's attributes (pytest 9 names the root) and a failure's ``message`` attribute
    (pytest 9 cuts it; the element's text holds the whole failure either way)."""
    text = re.sub(r"<testsuites\b[^>]*>", "<testsuites>", text)
    return re.sub(r' (time|timestamp|hostname|message)="[^"]*"', "", text)


def _without_charts(html: str) -> str:
    """The HTML page with each chart's SVG left out (matplotlib draws them)."""
    return _SVG.sub("<svg/>", html)


def _html_differences(pinned: str, text: str) -> list[str]:
    """The page's differences: its text by the number rule, its charts' coordinates within
    :data:`SVG_SLACK`."""
    a, b = _SVG.split(pinned), _SVG.split(text)
    if len(a) != len(b):
        return [f"the page has {len(b) // 2} charts, its pinned copy {len(a) // 2}"]
    out, line = [], 1
    for n, (x, y) in enumerate(zip(a, b, strict=True)):
        out += text_differences(x, y, first_line=line,
                                slack=SVG_SLACK if n % 2 else SCORE_TOLERANCE)
        line += x.count("\n")
    return out


def _differences(name: str, pinned: str, text: str) -> list[str]:
    """Where ``text`` (output ``name``) differs from its pinned copy (see the module)."""
    if name.endswith(".json"):
        return list(json_differences(json.loads(pinned), json.loads(text)))
    if name.endswith(".html"):
        return _html_differences(pinned, text)
    return text_differences(pinned, text)


def _check(name: str, text: str) -> None:
    text = text.replace(str(ROOT), "<checkout>")  # the suite's path is in the report
    path = PINNED / name
    drawn_by = PINNED / "matplotlib-version.txt"
    if _UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        drawn_by.write_text(matplotlib.__version__ + "\n", encoding="utf-8")
    assert path.exists(), f"{path} is missing (GI_UPDATE_PINNED=1 writes it)"
    pinned = path.read_text(encoding="utf-8")
    if name.endswith(".html") and drawn_by.read_text().strip() != matplotlib.__version__:
        # another matplotlib places the charts' points differently (the lowest versions'
        # run); everything else on the page must still be the same
        text, pinned = _without_charts(text), _without_charts(pinned)
    diffs = _differences(name, pinned, text)
    assert not diffs, (
        f"{name} differs from its pinned copy (tests/plugin/pinned/); if the change is meant, "
        "rerun with GI_UPDATE_PINNED=1 and review the diff:\n" + summarize(diffs))


@pytest.mark.parametrize("kind", ["oracle", "replay"])
def test_every_output_is_as_pinned(pytester: pytest.Pytester, kind: str,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # pytest's short summary lines are cut to the terminal's width, except on CI
    for name in ("CI", "BUILD_NUMBER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    run = [f"--gi-suite={ROOT / 'instructions'}", f"--gi-pools={ROOT / 'references' / 'pools'}",
           "--gi-per-level=2", "--gi-report=r.json", "--gi-markdown=r.md", "--gi-html=r.html",
           "--junitxml=j.xml", "-p", "no:cacheprovider", "-p", "no:randomly", "-rA"]
    if kind == "oracle":
        run.append("--gi-model=oracle")
    else:
        _replay_answers(pytester.path / "answers.jsonl")
        run.append("--gi-replay=answers.jsonl")
    result = pytester.runpytest(*run)
    assert result.ret == (0 if kind == "oracle" else 1), result.stdout.str()
    out = pytester.path
    _check(f"{kind}.json", without_provenance(out / "r.json") + "\n")
    _check(f"{kind}.md", (out / "r.md").read_text(encoding="utf-8"))
    _check(f"{kind}.html", (out / "r.html").read_text(encoding="utf-8"))
    _check(f"{kind}.junit.xml", _normalized_junit((out / "j.xml").read_text(encoding="utf-8")))
    _check(f"{kind}.terminal.txt", _normalized_terminal(result.stdout.str(), out))
