"""Choosing a report's cell (report/pick.py): by label, the only one, or an error that lists
them, escaped."""

from __future__ import annotations

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.pick import pick_cell
from pytest_graphinstruct.run.aggregate import build_run_report
from pytest_graphinstruct.run.records.results import CellMetadata, RunReport


def _report(*models: str) -> RunReport:
    return build_run_report([(CellMetadata(m, "zero-shot"), []) for m in models], suite_order={})


def test_the_only_cell_or_the_named_one() -> None:
    assert pick_cell(_report("a"), "r.json", None).label == "a-zero-shot"
    assert pick_cell(_report("a", "b"), "r.json", "b-zero-shot").label == "b-zero-shot"


def test_several_cells_and_no_label_lists_them_escaped() -> None:
    with pytest.raises(GraphInstructError) as err:
        pick_cell(_report("a", "b\x1b[2J"), "r.json", None, hint="pass --cell ({labels})")
    assert str(err.value) == ("r.json holds 2 cells; pass --cell (a-zero-shot, "
                              "b\\x1b[2J-zero-shot)")


def test_an_unknown_label_names_the_file() -> None:
    with pytest.raises(GraphInstructError, match=r"^r\.json: "):
        pick_cell(_report("a"), "r.json", "zzz")
