"""graphs.extract: finding the candidate blocks of an answer and the one that counts."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.graphs.extract import Attempt, Spans, choose, find_attempts
from pytest_graphinstruct.graphs.model import DEFAULT_LIMITS, Limits
from pytest_graphinstruct.graphs.parse_errors import LimitExceeded, ParseError
from tests.graphs._answers import BASIC, edges, failure, graph_of

# --------------------------------------------------------------------------- extraction


def test_code_fence_and_prose_around() -> None:
    text = f"Sure! Here it is:\n\n```python\n{BASIC}\n```\n\nHope this helps."
    assert graph_of(text).num_edges == 2


def test_braces_in_trailing_prose_do_not_corrupt_the_graph() -> None:
    text = BASIC + "\n\nNote: the set {0, 1} } and } more braces { and a 'quote."
    pg = graph_of(text)
    assert pg.graph.graph == {} and pg.num_edges == 2


def test_braces_inside_strings_and_comments_do_not_end_the_block() -> None:
    text = (
        "Graph[name='a}b'] { node_list = ['}', '{']; # } not the end\n edge_list = [('}', '{')]; }"
    )
    pg = graph_of(text)
    assert pg.name == "a}b" and edges(pg) == {("}", "{")}


def test_last_complete_graph_wins() -> None:
    text = (
        "Draft:\nGraph[name='draft'] { node_list = [0, 1]; edge_list = [(0, 1)]; }\n"
        "Wait, that is wrong. Final answer:\n"
        "Graph[name='final'] { node_list = [0, 1, 2]; edge_list = [(0, 1), (1, 2)]; }\n"
        "Done {"
    )
    assert graph_of(text).name == "final"


def test_truncated_last_block_falls_back_to_last_complete_one() -> None:
    text = (
        "Graph[name='draft'] { node_list = [0, 1]; edge_list = [(0, 1)]; }\n"
        "Final:\nGraph[name='final'] { node_list = [0, 1, 2]; edge_list = [(0, 1),"
    )
    assert graph_of(text).name == "draft"


def test_only_a_truncated_block_fails_as_truncated() -> None:
    reason = failure("Let me write it:\nGraph[name='g'] { node_list = [0, 1, 2]; edge_list = [(0,")
    assert reason.startswith("truncated")
    assert "line 2" in reason


def test_truncated_inside_string_or_header() -> None:
    assert failure("Graph[name='g'] { reasoning = 'abc").startswith(("truncated", "code-style"))
    assert failure("Graph[name='g', nod").startswith("truncated")
    assert failure("Graph[name='g']").startswith("truncated")


def test_abandoned_block_then_complete_block() -> None:
    text = (
        "Graph[name='a'] { node_list = [0, 1, 2\n\nHmm, let me restart.\n\n"
        "Graph[name='b'] { node_list = [0, 1]; edge_list = [(0, 1)]; }"
    )
    assert graph_of(text).name == "b"


def test_header_written_where_a_statement_belongs_starts_a_new_block() -> None:
    text = "Graph[name='a'] {\nGraph[name='b'] { node_list = [0]; edge_list = []; }"
    assert graph_of(text).name == "b"


def test_header_inside_a_string_of_a_block_is_not_a_block() -> None:
    text = (
        "Graph[name='outer'] { node_list = [0]; "
        "reasoning = \"not this: Graph[name='inner'] { node_list = [9]; }\"; }"
    )
    assert graph_of(text).name == "outer"


def test_graph_mentioned_in_prose_is_not_a_block() -> None:
    text = "Use the Graph[name=..., nodes=N] format. " + BASIC
    assert graph_of(text).name == "g"


def test_malformed_last_block_is_a_failure_not_the_draft() -> None:
    text = BASIC + "\nFinal:\nGraph[name='f'] { node_list = [0, 1; }"
    reason = failure(text)
    assert reason.startswith("code-style graph at line 3")


def test_syntax_error_reports_position() -> None:
    reason = failure("Graph[] {\n  node_list = [0 1];\n}")
    assert "line 2" in reason and "column" in reason


def test_unquoted_word_ids_are_accepted() -> None:
    pg = graph_of("Graph[] { node_list = [A, B, node_1]; edge_list = [(A, B)]; }")
    assert set(pg.graph.nodes) == {"A", "B", "node_1"}


# --------------------------------------------------------------------------- the module's parts


def test_attempts_are_found_in_every_format_and_sorted_by_start() -> None:
    text = ('Graph[] { edge_list = [(0, 1)]; }\n'
            '{"nodes": [0, 1], "edges": [[0, 1]]}\n'
            'G = nx.Graph()\nG.add_edge(0, 1)\n'
            'Edges:\n0 1\n1 2\n')
    attempts = find_attempts(text, DEFAULT_LIMITS)
    assert [a.fmt for a in attempts] == ["code", "json", "python", "edgelist"]
    assert [a.start for a in attempts] == sorted(a.start for a in attempts)
    assert [a.weak for a in attempts] == [False, False, False, True]
    assert attempts[-1].label == "edge list"


def test_a_limit_exceeded_anywhere_raises() -> None:
    with pytest.raises(LimitExceeded):
        find_attempts("Graph[] { node_list = [0, 1, 2]; }", Limits(max_nodes=2))


def _attempt(start: int, complete: bool) -> Attempt:
    return Attempt("code", start, start + 1, complete)


def test_choose_the_last_complete_else_the_last_incomplete() -> None:
    assert choose([]) is None
    done, cut, late = _attempt(0, True), _attempt(5, False), _attempt(9, False)
    assert choose([done, cut, late]) is done
    assert choose([cut, late]) is late


def test_an_attempt_drops_its_error_traceback() -> None:
    try:
        raise ParseError("bad")
    except ParseError as exc:
        error = exc
    assert error.__traceback__ is not None
    Attempt("code", 0, 1, True, error=error)
    assert error.__traceback__ is None


spans = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)).map(sorted).map(tuple),
                 max_size=8)


@given(spans, st.integers(0, 45))
def test_spans_membership_and_gaps_match_brute_force(ranges: list[tuple[int, int]],
                                                     length: int) -> None:
    s = Spans(ranges)
    covered = {p for a, b in ranges for p in range(a, b)}
    assert {p for p in range(-2, 50) if p in s} == covered
    gaps = s.gaps(length)
    assert all(a < b for a, b in gaps)  # non-empty
    assert all(b1 < a2 for (_, b1), (a2, _) in itertools.pairwise(gaps))  # disjoint
    assert {p for a, b in gaps for p in range(a, b)} == set(range(length)) - covered
