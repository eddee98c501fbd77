"""suite.instruction: the Instruction's derived fields."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_graphinstruct.errors import GraphSyntaxError
from pytest_graphinstruct.graphs.parse import parse_graph
from pytest_graphinstruct.suite.constraints import parse_constraint
from pytest_graphinstruct.suite.instruction import Instruction

PATH = "Graph[name='p', nodes=3] { node_list = ['0','1','2']; edge_list = [('0','1'), ('1','2')]; }"


def inst(*constraints: str, **fields: object) -> Instruction:
    return Instruction(id="L1-001", level=1, text="Build a graph.",
                       explicit=tuple(parse_constraint(c) for c in constraints),
                       **fields)  # type: ignore[arg-type]


def test_first_finds_the_first_constraint_with_the_key() -> None:
    i = inst("num_nodes>=3", "num_nodes<=5", "connected=true")
    first = i.first("num_nodes")
    assert first is not None and first.text == "num_nodes>=3"
    assert i.first("degree") is None


def test_derived_values_come_from_equality_constraints_only() -> None:
    i = inst("graph_type=tree", "num_nodes=7", "task_type=prune_tree")
    assert (i.graph_type, i.num_nodes, i.task_type) == ("tree", 7, "prune_tree")
    ranged = inst("num_nodes>=7", "graph_type!=tree")
    assert ranged.num_nodes is None and ranged.graph_type is None


def test_an_implicit_constraint_is_not_an_explicit_value() -> None:
    i = inst(implicit=(parse_constraint("graph_type=tree"),))
    assert i.graph_type is None


@pytest.mark.parametrize(("constraints", "sizes", "size"), [
    (("num_nodes=20",), (), "small"),
    (("num_nodes=21",), (), "medium"),
    (("num_nodes=51",), (), "large"),
    (("num_nodes=5",), ("large",), "large"),  # graph_sizes as written wins
    (("num_nodes>=5",), (), None),
    ((), (), None),
])
def test_size(constraints: tuple[str, ...], sizes: tuple[str, ...], size: str | None) -> None:
    assert inst(*constraints, graph_sizes=sizes).size == size


def test_reference_graphs_are_parsed_once() -> None:
    i = inst(references=(PATH, PATH))
    graphs = i.reference_graphs
    assert len(graphs) == 2 and graphs[0].same_graph(parse_graph(PATH))
    assert i.reference_graphs is graphs


def test_a_bad_reference_raises_graph_syntax_error_when_read() -> None:
    i = inst(references=("not a graph",))
    with pytest.raises(GraphSyntaxError):
        _ = i.reference_graphs


def test_the_base_is_base_graph_parsed_on_first_use_and_not_compared() -> None:
    a = inst(base_graph=PATH)
    assert "base" not in a.__dict__ and "base=" not in repr(a)
    assert a.base is not None
    assert sorted(a.base.graph.edges()) == sorted(parse_graph(PATH).graph.edges())
    assert "base" in a.__dict__  # kept
    assert a == dataclasses.replace(a)  # one parsed, the other not: equal
    assert a != dataclasses.replace(a, base_graph=None)
    assert dataclasses.replace(a, base_graph=None).base is None
