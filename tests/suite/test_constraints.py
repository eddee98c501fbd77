from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.errors import ConstraintError
from pytest_graphinstruct.suite.constraints import KEYS, Op, derived, parse_constraint


@pytest.mark.parametrize(
    ("text", "key", "op", "value"),
    [
        ("num_nodes=10", "num_nodes", Op.EQ, 10),
        ("num_edges == 4", "num_edges", Op.EQ, 4),
        ("density<=0.451", "density", Op.LE, 0.451),
        ("modularity>=0.25", "modularity", Op.GE, 0.25),
        ("diameter<5", "diameter", Op.LT, 5),
        ("num_components>1", "num_components", Op.GT, 1),
        ("num_edges!=3", "num_edges", Op.NE, 3),
        ("directed=true", "directed", Op.EQ, True),
        ("directed=False", "directed", Op.EQ, False),
        ("connected='true'", "connected", Op.EQ, True),
        ("bipartite_sides=4,3", "bipartite_sides", Op.EQ, (3, 4)),
        ("graph_type=complete_bipartite", "graph_type", Op.EQ, "complete_bipartite"),
        ("task_type=spanning_tree", "task_type", Op.EQ, "spanning_tree"),
        ("domain=social", "domain", Op.EQ, "social"),
        ("  edge_connectivity >= 2 ", "edge_connectivity", Op.GE, 2),
    ],
)
def test_parse_valid(text: str, key: str, op: Op, value: object) -> None:
    c = parse_constraint(text)
    assert (c.key, c.op, c.value) == (key, op, value)
    assert c.text == text
    assert type(c.value) is type(value)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("num_nodes", "malformed"),
        ("=5", "malformed"),
        ("colour=red", "unknown constraint key 'colour'"),
        ("num_nodes=ten", "non-negative integer"),
        ("num_nodes=-1", "non-negative integer"),
        ("num_nodes=", "missing value"),
        ("density<=abc", "needs a number"),
        ("density<=nan", "finite"),
        ("directed=yes", "true or false"),
        ("directed<=true", "operator '<=' not allowed"),
        ("graph_type=hexagon", "unknown graph_type 'hexagon'"),
        ("bipartite_sides=3", "two integers"),
        ("domain=astrology", "unknown domain"),
    ],
)
def test_parse_errors_name_the_string(text: str, fragment: str) -> None:
    with pytest.raises(ConstraintError) as info:
        parse_constraint(text)
    assert fragment in str(info.value)
    if text.strip("= "):
        assert repr(text) in str(info.value) or text in str(info.value)


def test_non_string_is_an_error() -> None:
    with pytest.raises(ConstraintError, match="must be a string"):
        parse_constraint(5)  # type: ignore[arg-type]


def test_canonical_and_derived() -> None:
    assert parse_constraint("num_edges == 4").canonical == "num_edges=4"
    assert parse_constraint("directed=True").canonical == "directed=false".replace("false", "true")
    d = derived("num_edges", Op.EQ, 9)
    assert d.text == "num_edges=9" and d.canonical == d.text
    with pytest.raises(ConstraintError):
        derived("nope", Op.EQ, 1)


@pytest.mark.parametrize(
    ("op", "a", "b", "expected"),
    [(Op.EQ, 1, 1, True), (Op.NE, 1, 1, False), (Op.LE, 1, 2, True), (Op.GE, 1, 2, False),
     (Op.LT, 2, 2, False), (Op.GT, 3, 2, True), (Op.LE, float("nan"), 1, False)],
)
def test_compare(op: Op, a: float, b: float, expected: bool) -> None:
    assert op.compare(a, b) is expected


@given(st.text(max_size=60))
def test_parse_never_raises_anything_but_constraint_error(text: str) -> None:
    try:
        c = parse_constraint(text)
    except ConstraintError:
        return
    assert c.key in KEYS
    assert parse_constraint(c.canonical).canonical == c.canonical
