"""The failure text of an item (report/render/failures.py): the instruction
line, cut with an ellipsis."""

from __future__ import annotations

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.report.render.failures import format_failure
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.run.evaluate import check
from pytest_graphinstruct.suite.loader import instruction_from_record

CYCLE = ("Graph[name='c', nodes=4] { node_list = ['0','1','2','3']; "
         "edge_list = [('0','1'), ('1','2'), ('2','3'), ('3','0')]; }")


def _instruction_line(text: str) -> str:
    inst = instruction_from_record({
        "id": "L1-001", "level": 1, "instruction": text,
        "explicit_constraints": ["graph_type=tree", "num_nodes=4"],
        "implicit_constraints": ["num_edges=3"], "graph_sizes": ["small"]})
    assert inst is not None
    message = format_failure(check(inst, [Answer(text=CYCLE)], cell=Cell("m", "zero-shot")),
                             "all")
    return next(line for line in message.splitlines() if line.startswith("  instruction: "))


def test_a_long_instruction_is_cut_with_an_ellipsis() -> None:
    line = _instruction_line("Generate a tree with 4 nodes. " + "Pad " * 200 + "END")
    shown = line.removeprefix("  instruction: ")
    assert shown.endswith("…") and "END" not in shown
    assert len(shown) == 300


def test_a_short_instruction_is_whole_and_an_escape_is_not_split() -> None:
    assert _instruction_line("Generate a tree with 4 nodes.") == \
        "  instruction: Generate a tree with 4 nodes."
    shown = _instruction_line("x" * 298 + "\x1b[2J" + "y" * 10).removeprefix("  instruction: ")
    assert "\x1b" not in shown and shown.endswith("…")
    assert shown.startswith("x" * 298 + "\\x1b")  # escaped whole, then the ellipsis
