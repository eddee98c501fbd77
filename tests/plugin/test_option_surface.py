"""The options a user sees: ``pytest --help`` lists at most 40 ``--gi-*`` options, the tuning
knobs are ini keys, and every spelling that goes in the next release still works for this one,
with one deprecation note (options.Surface; docs/PLUGIN.md "Options")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_graphinstruct.options import OPTIONS

pytest_plugins = ["pytester"]

MOST_LISTED = 40
"""Issue 33: what ``pytest --help`` lists fits in a head."""


def _listed(help_text: str) -> list[str]:
    """The ``--gi-*`` options a help text lists (each once, where its entry starts)."""
    return sorted(set(re.findall(r"^  (--gi-[a-z0-9-]+)", help_text, flags=re.M)))


def test_pytest_help_lists_at_most_forty_options_and_only_the_flag_rows(
        pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    assert result.ret == 0
    listed = _listed(result.stdout.str())
    assert listed == sorted(o.flag for o in OPTIONS if o.surface == "flag")
    assert len(listed) <= MOST_LISTED, len(listed)
    # docs/PLUGIN.md states the count: a figure CI checks, so it cannot drift (issue 49 §4)
    plugin_md = (Path(__file__).resolve().parents[2] / "docs" / "PLUGIN.md").read_text(
        encoding="utf-8")
    assert f"`pytest --help` lists {len(listed)} `--gi-*` options" in plugin_md
    text = result.stdout.str()
    for option in OPTIONS:  # a tuning knob is listed as its ini key
        if option.surface == "ini":
            assert re.search(rf"^  {option.ini_name} \(", text, flags=re.M), option.ini_name


def _run(pytester: pytest.Pytester, *extra: str) -> pytest.RunResult:
    return pytester.runpytest("--gi-model=oracle", "--gi-levels=0", "--gi-per-level=2",
                              "-p", "no:cacheprovider", "--gi-report=r.json", *extra)


def _notes(result: pytest.RunResult) -> list[str]:
    return [line.strip() for line in result.stdout.lines
            if "is deprecated and goes in the next release" in line]


@pytest.mark.parametrize(("old", "new", "says"), [
    (["--gi-no-cache"], ["--gi-cache=none"], "--gi-no-cache is deprecated and goes in the next "
     "release: use --gi-cache=none"),
    (["--gi-timeout=30"], ["-o", "gi_timeout=30"], "--gi-timeout is deprecated and goes in the "
     "next release: it is an ini setting now (gi_timeout = VALUE in the ini file, or "
     "-o gi_timeout=VALUE on the command line)"),
    (["--gi-benchmark"], ["--gi-violations=report"], "--gi-benchmark is deprecated and goes in "
     "the next release: use --gi-violations=report"),
])
def test_an_old_spelling_still_works_with_one_note_and_the_new_one_says_nothing(
        pytester: pytest.Pytester, old: list[str], new: list[str], says: str) -> None:
    before = _run(pytester, *old)
    report_old = json.loads((pytester.path / "r.json").read_text())
    after = _run(pytester, *new)
    report_new = json.loads((pytester.path / "r.json").read_text())
    assert before.ret == after.ret == 0, before.stdout.str()
    assert [says] == [n.split("OptionDeprecationWarning: ")[-1] for n in _notes(before)]
    assert _notes(after) == []
    # the same run either way
    assert [c["summary"]["passed"] for c in report_old["cells"]] == [
        c["summary"]["passed"] for c in report_new["cells"]]


def test_the_old_strict_and_benchmark_cannot_be_given_with_their_replacement(
        pytester: pytest.Pytester) -> None:
    result = _run(pytester, "--gi-benchmark", "--gi-violations=fail")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--gi-benchmark and --gi-violations say the same thing twice" in result.stderr.str()


def test_violations_report_turns_a_violation_into_an_xfail(pytester: pytest.Pytester,
                                                         tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"  # every L0 answer an empty graph: each violates
    from pytest_graphinstruct.suite.shipped import shipped_suite

    shipped = shipped_suite()
    assert shipped is not None
    records = json.loads((shipped.instructions / "level_0.json").read_text())[:2]
    answers.write_text("".join(json.dumps({"instruction_id": r["id"], "level": 0,
                                           "samples": [{"raw_output": "no graph"}]}) + "\n"
                               for r in records))
    base = ("--gi-levels=0", "--gi-per-level=2", "-p", "no:cacheprovider",
            f"--gi-replay={answers}")
    failing = pytester.runpytest(*base)
    reported = pytester.runpytest(*base, "--gi-violations=report")
    failing.assert_outcomes(failed=2)
    reported.assert_outcomes(xfailed=2)
    assert reported.ret == 0
