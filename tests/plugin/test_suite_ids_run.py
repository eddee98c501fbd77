"""Issue 47 §9: an instruction id comes from a suite file — untrusted text — and becomes the
pytest node id the terminal shows (``ID[cell]``).  An id holding a newline or ``ESC`` reached
the terminal raw (a forged ``PASSED`` line, a cleared screen); now the suite is refused at
load, with a line naming the file and the id escaped, before anything runs.  Every other id is
kept exactly as written: its node id is unchanged, unique and selectable with ``-k`` and by
node id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ._suite import suite_records

pytest_plugins = ["pytester"]


def write_ids(root: Path, ids: dict[str, str]) -> Path:
    """The tiny suite with the ids of ``ids`` (old id → new id) replaced."""
    root.mkdir(parents=True, exist_ok=True)
    for level, records in suite_records().items():
        for rec in records:
            rec["id"] = ids.get(rec["id"], rec["id"])
        (root / f"level_{level}.json").write_text(json.dumps(records), encoding="utf-8")
    return root


def oracle(pytester: pytest.Pytester, suite: Path, *extra: str) -> Any:
    return pytester.runpytest(f"--gi-suite={suite}", "--gi-model=oracle", "--gi-pools=none",
                              "--gi-cache=none", "-v", "-p", "no:cacheprovider",
                              "-p", "no:randomly", *extra)


@pytest.mark.parametrize("bad", ["L1-\x1b[2J\x1b[32m001", "L1-001 PASSED\nL1-009",
                                 "L1-\u202e100-1L", "L1-001\r"],
                         ids=["esc", "newline", "bidi", "cr"])
def test_an_id_that_would_act_on_the_terminal_is_refused_before_anything_runs(
        pytester: pytest.Pytester, bad: str) -> None:
    suite = write_ids(pytester.path / "suite", {"L1-001": bad})
    result = oracle(pytester, suite)
    said = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, said[-3000:]
    for raw in ("\x1b", "\u202e", "\r", "PASSED\nL1-009"):
        assert raw not in said
    (line,) = [x for x in said.splitlines() if "'id' must be printable text" in x]
    shown = bad.encode("unicode_escape").decode("ascii")  # \x1b, \n, \u202e, \r
    assert line.strip() == (f"{suite / 'level_1.json'}: record #0: 'id' must be printable "
                            "text (no control, format or line-separator character: it "
                            f"becomes the node id pytest shows), got '{shown}'")
    assert "collected" not in said and "L1-002[oracle-zero-shot]" not in said


def test_an_id_that_reads_as_a_file_and_a_test_is_refused(pytester: pytest.Pytester) -> None:
    """``a::b[cell]`` reads as test ``b[cell]`` of file ``a``: under xdist such an item was
    not counted as selected."""
    suite = write_ids(pytester.path / "suite", {"L1-002": "tests/x.py::test_y"})
    result = oracle(pytester, suite)
    said = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, said[-3000:]
    assert (f"{suite / 'level_1.json'}: record #1: 'id' must not hold '::' (pytest's separator "
            "of a file and a test: the node id would read as another test's), got "
            "'tests/x.py::test_y'") in said


def test_ids_that_are_fine_are_kept_unique_and_selectable(pytester: pytest.Pytester) -> None:
    odd = {"L1-001": "L1 tree #1 (ünïcode)", "L1-002": "L1-[002]:x/y"}
    suite = write_ids(pytester.path / "suite", odd)
    everything = oracle(pytester, suite)
    out = everything.stdout.str()
    assert everything.ret == pytest.ExitCode.OK, out[-3000:]
    for inst_id in ("L0-001", *odd.values(), "L2-001"):
        assert f"{inst_id}[oracle-zero-shot] " in out  # the node id, exactly the suite's id
    everything.assert_outcomes(passed=4)
    by_keyword = oracle(pytester, suite, "-k", "tree")
    by_keyword.assert_outcomes(passed=1)
    assert "L1 tree #1 (ünïcode)[oracle-zero-shot] PASSED" in by_keyword.stdout.str()
    by_node = oracle(pytester, suite, "--deselect", "L1-[002]:x/y[oracle-zero-shot]")
    by_node.assert_outcomes(passed=3, deselected=1)
    assert "L1-[002]:x/y[oracle-zero-shot] PASSED" not in by_node.stdout.str()
