"""The public strategies, and the verifier properties they exist to check."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct import strategies as gis
from pytest_graphinstruct.graphs.model import Outcome
from pytest_graphinstruct.graphs.parse import parse_answer
from pytest_graphinstruct.suite.constraints import parse_constraint
from pytest_graphinstruct.verify.checks import check_constraint
from pytest_graphinstruct.verify.properties import GraphFacts
from pytest_graphinstruct.verify.verdict import Source


def _edge_set(g: nx.Graph) -> set:
    if g.is_directed():
        return set(g.edges())
    return {frozenset(e) for e in g.edges()}


@given(gis.answers())
@pytest.mark.slow
def test_parser_recovers_every_rendered_answer(case: tuple[str, nx.Graph]) -> None:
    text, expected = case
    result = parse_answer(text)
    assert result.outcome is Outcome.GRAPH, (result.reason, text)
    assert result.graph is not None
    got = result.graph.graph
    assert got.is_directed() == expected.is_directed(), text
    assert set(got.nodes()) == set(expected.nodes()), text
    assert _edge_set(got) == _edge_set(expected), text


@given(gis.hostile_texts())
@settings(max_examples=80)
def test_parser_never_raises_on_hostile_text(text: str) -> None:
    result = parse_answer(text)
    assert result.outcome in (Outcome.GRAPH, Outcome.REFUSAL, Outcome.FAILURE)
    if result.outcome is Outcome.FAILURE:
        assert result.reason


@given(gis.constraint_texts())
def test_constraint_texts_are_valid(text: str) -> None:
    assert parse_constraint(text).text == text


@given(gis.graphs(max_nodes=9))
def test_true_constraints_hold_through_the_checks(g: nx.Graph) -> None:
    facts = GraphFacts(g)
    for text in gis.true_constraints(g):
        v = check_constraint(parse_constraint(text), facts, Source.EXPLICIT)
        assert v.satisfied, v.describe()


@given(gis.graphs(hostile=True, labels=True, max_nodes=6), st.data())
def test_graphs_have_string_ids_and_respect_bounds(g: nx.Graph, data: st.DataObject) -> None:
    assert all(isinstance(n, str) for n in g.nodes())
    assert g.number_of_nodes() <= 6
    assert not any(u == v for u, v in g.edges())
    text = data.draw(gis.render(g, "code"))
    assert text.startswith("Graph[")


_WITHOUT_HYPOTHESIS = textwrap.dedent("""
    import sys
    sys.modules["hypothesis"] = None  # any import of hypothesis now raises ImportError
    import networkx as nx
    from pytest_graphinstruct import strategies as gis
    assert gis.true_constraints(nx.path_graph(3))[0] == "num_nodes=3"
    assert [m for m in sys.modules if m.startswith("hypothesis.")] == []
    try:
        gis.graphs()
    except ImportError:
        print("graphs() needs hypothesis")
    print("imported without hypothesis")
""")


def test_the_module_imports_without_hypothesis() -> None:
    """Hypothesis is a test extra: importing the module (and its plain functions) must not need
    it; building a strategy does."""
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-c", _WITHOUT_HYPOTHESIS], cwd=root,
                          capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["graphs() needs hypothesis",
                                            "imported without hypothesis"]


@given(gis.node_ids(hostile=True))
def test_hostile_ids_are_never_blank(name: str) -> None:
    assert name.strip(), repr(name)  # a blank id is an answer's fault (no_blank_ids)
