"""find_refusal: statements that the task cannot be done."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.graphs import find_refusal


@pytest.mark.parametrize(
    "text, sentence",
    [
        ("This is impossible.", "This is impossible."),
        (
            "Each node needs degree 3, so the degree sum is 15. Since 15 is odd, no 3-regular "
            "graph on 5 nodes exists. I will not output a graph.",
            "Since 15 is odd, no 3-regular graph on 5 nodes exists.",
        ),
        ("The task is infeasible!", "The task is infeasible!"),
        ("Sorry: there is no such graph.", "Sorry: there is no such graph."),
        ("The constraints are contradictory.", "The constraints are contradictory."),
        ("These requirements are mutually exclusive", "These requirements are mutually exclusive"),
        ("The two conditions contradict each other.", "The two conditions contradict each other."),
        ("Such a graph cannot exist.", "Such a graph cannot exist."),
        ("It can’t be constructed with 5 nodes.", "It can’t be constructed with 5 nodes."),
        ("All constraints cannot be satisfied simultaneously.", None),
        ("A 5-regular bipartite graph with parts 3 and 7 does not exist.", None),
        ("It is not possible to build it.", "It is not possible to build it."),
        ("This violates the handshake lemma.", "This violates the handshake lemma."),
        ("Assuming it exists leads to a contradiction.", None),
        ("UNSATISFIABLE", "UNSATISFIABLE"),
        ("there is no simple graph with these properties", None),
    ],
)
def test_refusals(text: str, sentence: str | None) -> None:
    found = find_refusal(text)
    assert found is not None
    assert found == (sentence if sentence is not None else text)


@pytest.mark.parametrize(
    "text",
    [
        "Here is the graph: Graph[name='g'] { node_list = [0]; }",
        "It is not impossible to do this.",
        "There is no contradiction: all constraints hold.",
        "Wait, that's a contradiction; let me fix node 3.",
        "I cannot help with that.",
        "ERROR: rate limit exceeded",
        "The graph exists and is connected.",
        "",
    ],
)
def test_not_refusals(text: str) -> None:
    assert find_refusal(text) is None


def test_sentence_is_trimmed_and_whitespace_collapsed() -> None:
    long = "word " * 200 + "so it is impossible " + "and more " * 200
    found = find_refusal(long)
    assert found is not None and len(found) <= 320 and "impossible" in found
    assert find_refusal("First line\n  This   is\timpossible  \nnext") == "This is impossible"


def test_non_string_input() -> None:
    assert find_refusal(None) is None  # type: ignore[arg-type]


@given(st.text(max_size=300))
def test_never_raises(text: str) -> None:
    found = find_refusal(text)
    assert found is None or isinstance(found, str)
