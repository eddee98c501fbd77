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
from pytest_graphinstruct.suite.loader import instruction_from_record
from pytest_graphinstruct.verify.checks import check_constraint
from pytest_graphinstruct.verify.properties import GraphFacts
from pytest_graphinstruct.verify.verdict import Source
from pytest_graphinstruct.verify.verifier import Verifier
from tests.fresh_python import fresh_python
from tests.packaging import ROOT

pytest_plugins = ["pytester"]


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


def _same_graph(got: nx.Graph, expected: nx.Graph) -> bool:
    return (got.is_directed() == expected.is_directed()
            and set(got.nodes()) == set(expected.nodes())
            and _edge_set(got) == _edge_set(expected))


@given(st.data(), st.booleans(), st.booleans(), st.booleans(), st.sampled_from([None, False, True]))
def test_every_drawn_graph_parses_back_from_every_format_that_can_spell_it(
        data: st.DataObject, hostile: bool, self_loops: bool, labels: bool,
        directed: bool | None) -> None:
    g = data.draw(gis.graphs(hostile=hostile, self_loops=self_loops, labels=labels,
                             directed=directed))
    fmt = data.draw(st.sampled_from(gis.formats_for(g)))
    text = data.draw(gis.render(g, fmt))
    result = parse_answer(text)
    assert result.outcome is Outcome.GRAPH, (fmt, result.reason, text)
    assert result.graph is not None
    assert _same_graph(result.graph.graph, g), (fmt, text)


@given(st.data())
def test_a_drawn_format_parses_back_too(data: st.DataObject) -> None:
    g = data.draw(gis.graphs(hostile=True, self_loops=True, max_nodes=6))
    parsed = parse_answer(data.draw(gis.render(g))).graph
    assert parsed is not None and _same_graph(parsed.graph, g)


def test_formats_for_says_which_formats_can_spell_a_graph() -> None:
    assert gis.formats_for(nx.Graph()) == ("code", "code_typographic", "json")
    assert gis.formats_for(nx.path_graph(["a", "b1", "7"])) == gis.FORMATS
    for hostile in ("a b", "Nodes", "etc", "ETC", "vertices", "links", "x;y", "é"):
        assert "edgelist" not in gis.formats_for(nx.path_graph(["a", hostile])), hostile
        assert "adjacency" not in gis.formats_for(nx.path_graph(["a", hostile])), hostile
        assert "json" in gis.formats_for(nx.path_graph(["a", hostile]))


@pytest.mark.parametrize(("g", "fmt", "message"), [
    (nx.path_graph(["a", "x'y"]), "edgelist", "render(g, 'edgelist'): it cannot carry the node "
     "id \"x'y\" (it takes [A-Za-z0-9_] tokens that are no word it reserves, such as 'nodes' or "
     "'etc'); formats that can spell this graph: code, code_typographic, json, networkx "
     "(formats_for(g))"),
    (nx.path_graph(["a", "etc"]), "adjacency", "it cannot carry the node id 'etc'"),
    (nx.Graph(), "networkx", "render(g, 'networkx'): it cannot spell the empty graph"),
    (nx.Graph(), "edgelist", "formats that can spell this graph: code, code_typographic, json"),
    (nx.path_graph(["a", "b"]), "yaml", "render: unknown format 'yaml'; the formats are code, "),
])
def test_render_refuses_a_format_that_cannot_spell_the_graph(g: nx.Graph, fmt: str,
                                                            message: str) -> None:
    with pytest.raises(ValueError) as caught:
        gis.render(g, fmt)  # at once: before anything is drawn
    assert message in str(caught.value)


@given(gis.graphs(self_loops=True, hostile=True, min_nodes=1, max_nodes=6), st.data())
def test_a_drawn_self_loop_is_always_rejected_by_the_default_verifier(
        g: nx.Graph, data: st.DataObject) -> None:
    """What graphs(self_loops=True) documents: any graph with a self-loop fails the default
    verifier's no_self_loops check, even against the constraints that hold on it."""
    text = data.draw(gis.render(g))
    instruction = instruction_from_record({"id": "L1-001", "level": 1, "instruction": "A graph.",
                                           "explicit_constraints": gis.true_constraints(g)})
    verification = Verifier().verify(instruction, text)
    loops = nx.number_of_selfloops(g)
    failed = {v.key for v in verification.violations}
    assert ("no_self_loops" in failed) == (loops > 0), (failed, text)
    if loops:
        assert not verification.passed


@given(gis.graphs(hostile=True, labels=True, max_nodes=7), st.data())
def test_a_graph_without_self_loops_passes_with_the_constraints_that_hold(
        g: nx.Graph, data: st.DataObject) -> None:
    """What the module promises: what graphs() draws, rendered in any format that can spell it,
    passes the default verifier against true_constraints."""
    text = data.draw(gis.render(g))
    instruction = instruction_from_record({"id": "L1-001", "level": 1, "instruction": "A graph.",
                                           "explicit_constraints": gis.true_constraints(g)})
    verification = Verifier().verify(instruction, text)
    assert verification.passed, [v.describe() for v in verification.violations]


# --- the Hypothesis profiles the module registers (docs/STRATEGIES.md) ------------------------

_READ_BACK = """
from hypothesis import given, settings, strategies as st


@given(st.just(0))
def test_the_settings_in_force(_):
    print("PROFILE", settings.get_current_profile_name(), settings.default.max_examples,
          settings.get_profile("thorough").max_examples)
"""


def _profile_run(pytester: pytest.Pytester, first: str, conftest: str = "") -> str:
    """``PROFILE <active> <max_examples in a test> <thorough's max_examples>`` of a test file
    in a folder outside the checkout whose first import is ``first``, run by a fresh pytest."""
    assert not pytester.path.resolve().is_relative_to(ROOT)
    if conftest:
        pytester.makeconftest(conftest)
    pytester.makepyfile(test_profile=first + "\n" + _READ_BACK
                        + "\nfrom pytest_graphinstruct import strategies as gis  # noqa\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist", "-s",
                                           "test_profile.py")
    result.assert_outcomes(passed=1)
    (line,) = [x[x.index("PROFILE "):] for x in result.stdout.lines if "PROFILE " in x]
    return line


def test_hypothesis_profile_thorough_applies_outside_the_checkout(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HYPOTHESIS_PROFILE", "thorough")
    line = _profile_run(pytester, "from pytest_graphinstruct import strategies as gis\n"
                                  "import hypothesis")
    assert line == "PROFILE thorough 2000 2000"


@pytest.mark.slow  # three more pytest runs in subprocesses
def test_hypothesis_profile_order_and_what_it_leaves_alone(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HYPOTHESIS_PROFILE", "thorough")
    # Hypothesis imported first, the strategies after: the same
    assert _profile_run(pytester, "import hypothesis\nfrom pytest_graphinstruct import "
                                  "strategies as gis") == "PROFILE thorough 2000 2000"
    # a profile the user loaded stays, and a 'thorough' of their own is kept as it is
    conftest = ("from hypothesis import settings\n"
                "settings.register_profile('thorough', max_examples=5)\n"
                "settings.register_profile('mine', max_examples=7)\n"
                "settings.load_profile('mine')\n")
    assert _profile_run(pytester, "import hypothesis", conftest) == "PROFILE mine 7 5"
    # without the variable nothing is loaded (Hypothesis' own choice stays), but the
    # profile is registered for whoever loads it
    monkeypatch.delenv("HYPOTHESIS_PROFILE")
    (pytester.path / "conftest.py").unlink()
    _, active, in_test, thorough = _profile_run(pytester, "import hypothesis").split()
    assert active in ("default", "ci") and thorough == "2000"
    assert in_test != "2000"


def test_importing_the_module_alone_imports_no_hypothesis(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.delenv("HYPOTHESIS_PROFILE", raising=False)
    code = ("import sys; import pytest_graphinstruct.strategies as gis; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'hypothesis'))")
    assert fresh_python(code, cwd=ROOT, timeout=120) == "[]"
