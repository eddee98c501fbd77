"""D2: meaningful-text rules, presence and similarity by hand, absences, diagnostics."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from pytest_graphinstruct.score.d2 import (
    dice,
    graphs_d2,
    instruction_d2,
    is_meaningful,
    is_meaningful_relation,
    sample_d2,
    text_diagnostics,
    text_presence,
    text_tokens,
    tokens,
    triples,
)
from pytest_graphinstruct.suite.loader import instruction_from_record
from pytest_graphinstruct.verify.verifier import Verifier

OFFICIAL = Path(__file__).resolve().parents[3] / "shared" / "official-suite" / "instructions"


def labelled(labels: dict[str, str | None], edges: list[tuple[str, str]], **graph: Any) -> nx.Graph:
    g = nx.Graph(**graph)
    for v, lab in labels.items():
        g.add_node(v, **({} if lab is None else {"label": lab}))
    g.add_edges_from(edges)
    return g


@pytest.mark.parametrize(("text", "expected"), [
    ("Alice", True), ("Station_1", True), ("NLP_paper_1", True), ("MDM2", True), ("xy", True),
    ("Person_1", True), ("Cl_8", True),
    ("A", False), ("7", False), ("", False), ("   ", False), ("-2.5", False), ("1e3", False),
    ("node1", False), ("Node 7", False), ("node", False), ("n3", False), ("v_12", False),
    ("A1", False), ("vertex_B", False), ("item-3", False), ("ID", False), (None, False),
    (True, False), (3, False), ("C_1", False),
])
def test_meaningful_text_rule(text: Any, expected: bool) -> None:
    assert is_meaningful(text) is expected


def test_molecular_exception_for_element_symbols() -> None:
    assert is_meaningful("C_1", molecular=True) and is_meaningful("O", molecular=True)
    assert not is_meaningful("A", molecular=True) and not is_meaningful("X_2", molecular=True)
    assert tokens("C_1", molecular=True) == ["c"] and tokens("C_1") == []


def test_relations() -> None:
    assert is_meaningful_relation("cites") and is_meaningful_relation("located in")
    assert is_meaningful_relation("related_to") and is_meaningful_relation("neighbors")
    for trivial in ("connected_to", "Connected To", "connected-to", "edge", "link", "", "3"):
        assert not is_meaningful_relation(trivial)


def test_tokens() -> None:
    assert tokens("NLP_paper_1") == ["nlp", "paper"]
    assert tokens("DataScientist") == ["data", "scientist"]
    assert tokens("Station12") == ["station"]
    assert tokens("the Node of Alice") == ["alice"]  # stop words and placeholder words dropped


def test_presence_by_hand() -> None:
    g = labelled({"a": "Alice", "b": "Bob", "Carol": None, "3": None},
                 [("a", "b"), ("b", "Carol"), ("Carol", "3")], edge_type="friends")
    # nodes: 1 + 1 + 0.7 (meaningful id) + 0 -> 2.7 / 4; edge part 1 (graph edge_type)
    assert text_presence(g) == pytest.approx(0.6 * 2.7 / 4 + 0.4 * 1.0)


def test_presence_edge_share_and_trivial_edge_type() -> None:
    g = labelled({"a": "Alice", "b": "Bob", "c": "Carol"}, [], edge_type="connected_to")
    g.add_edge("a", "b", type="manages")
    g.add_edge("b", "c", label="connected_to")
    assert text_presence(g) == pytest.approx(0.6 * 1.0 + 0.4 * 0.5)
    empty_edges = labelled({"a": "Alice"}, [])
    assert text_presence(empty_edges) == pytest.approx(0.6)
    assert text_presence(nx.Graph()) == 0.0


def test_placeholder_labels_earn_nothing() -> None:
    g = labelled({"0": "node1", "1": "n3", "2": "A", "3": "Node 7"}, [("0", "1")])
    assert text_presence(g) == 0.0
    assert text_tokens(g) == frozenset()


def test_similarity_is_dice_over_token_sets() -> None:
    gen = labelled({"0": "Alice", "1": "Bob"}, [("0", "1")], edge_type="friends")
    ref = labelled({"0": "Alice", "1": "Carol"}, [("0", "1")], edge_type="friends")
    assert text_tokens(gen) == {"alice", "bob", "friends"}
    s = sample_d2(gen, [ref])
    assert s.similarity == pytest.approx(2 * 2 / 6)
    assert s.value == pytest.approx(0.5 * text_presence(gen) + 0.5 * 2 / 3)
    assert dice(frozenset(), frozenset()) == 0.0


def test_closest_reference_and_references_without_text() -> None:
    gen = labelled({"0": "Alice", "1": "Bob"}, [("0", "1")])
    bare = nx.path_graph(2)
    far = labelled({"0": "Zed", "1": "Yan"}, [("0", "1")])
    near = labelled({"0": "Alice", "1": "Bob"}, [("0", "1")])
    s = sample_d2(gen, [bare, far, near])
    assert (s.reference, s.similarity) == (2, 1.0)


def test_no_reference_with_text_is_absent_not_presence_alone() -> None:
    gen = labelled({"0": "Alice", "1": "Bob"}, [("0", "1")], edge_type="friends")
    res = graphs_d2([gen], [nx.path_graph(2), nx.relabel_nodes(nx.path_graph(3), str)])
    assert res.value is None and res.similarity is None
    assert res.presence == pytest.approx(text_presence(gen))
    assert "no reference carries text" in (res.reason or "")
    assert graphs_d2([gen], []).reason == "no reference"


def test_no_valid_sample_and_generated_without_text() -> None:
    ref = labelled({"0": "Alice", "1": "Bob"}, [("0", "1")])
    assert (graphs_d2([], [ref]).value, graphs_d2([], [ref]).reason) == (0.0, "no valid sample")
    res = graphs_d2([nx.relabel_nodes(nx.path_graph(3), str)], [ref])
    assert (res.value, res.similarity, res.presence) == (0.0, 0.0, 0.0)


def test_scores_lie_in_unit_interval() -> None:
    ref = labelled({"0": "Alice", "1": "Bob", "2": "Cy"}, [("0", "1"), ("1", "2")],
                   edge_type="knows")
    for gen in (ref, nx.Graph(), labelled({"x": "node1"}, []),
                labelled({"0": "Alice"}, [("0", "0")], edge_type="knows")):
        res = graphs_d2([gen], [ref], diagnostics=True)
        assert res.value is not None and 0.0 <= res.value <= 1.0
        assert 0.0 <= (res.presence or 0.0) <= 1.0


# -- diagnostics -----------------------------------------------------------------------------------

def test_diagnostics_are_off_by_default() -> None:
    ref = labelled({"0": "Alice", "1": "Bob"}, [("0", "1")])
    assert graphs_d2([ref], [ref]).diagnostics is None
    assert graphs_d2([ref], [ref]).samples[0].diagnostics is None


def test_diagnostics_identical_graph_is_one() -> None:
    ref = labelled({"0": "Alice", "1": "Bob", "2": "Carol"}, [("0", "1"), ("1", "2")],
                   edge_type="works_with")
    d = text_diagnostics(ref, ref)
    assert (d.text_f1, d.g_bleu, d.g_rouge2) == (1.0, 1.0, 1.0)


def test_diagnostics_absent_and_zero() -> None:
    bare = nx.path_graph(3)
    text = labelled({"0": "Alice", "1": "Bob"}, [("0", "1")])
    assert text_diagnostics(bare, bare).text_f1 is None
    d = text_diagnostics(bare, text)
    assert (d.text_f1, d.g_bleu, d.g_rouge2) == (0.0, 0.0, 0.0)


def test_triples_are_order_free_for_undirected_graphs() -> None:
    a = labelled({"0": "Bob", "1": "Alice"}, [("0", "1")], edge_type="knows")
    b = labelled({"x": "Alice", "y": "Bob"}, [("x", "y")], edge_type="knows")
    assert triples(a) == triples(b) == [(("alice",), ("knows",), ("bob",))]


def test_diagnostics_by_hand() -> None:
    gen = labelled({"0": "Alice", "1": "Bob", "2": "Dan"}, [("0", "1"), ("1", "2")],
                   edge_type="knows")
    ref = labelled({"0": "Alice", "1": "Bob", "2": "Carol"}, [("0", "1"), ("1", "2")],
                   edge_type="knows")
    d = text_diagnostics(gen, ref)
    # triples: gen {alice-knows-bob, bob-knows-dan}, ref {alice-knows-bob, bob-knows-carol}
    assert d.text_f1 == pytest.approx(0.5)
    # sequences: gen [alice knows bob] [bob knows dan]; ref [alice knows bob] [bob knows carol]
    # p1 = 5/6, p2 = 3/4, p3 = 1/2, no 4-grams (skipped); equal lengths -> BP = 1
    assert d.g_bleu == pytest.approx(math.exp((math.log(5 / 6) + math.log(3 / 4)
                                               + math.log(1 / 2)) / 3))
    assert d.g_rouge2 == pytest.approx(3 / 4)


# -- instruction level and the official data -------------------------------------------------------

V = Verifier()


def _instruction(level: int, refs: list[str], **over: Any) -> Any:
    rec: dict[str, Any] = {
        "id": f"L{level}-001", "level": level, "instruction": "A social network.",
        "explicit_constraints": ["num_nodes=3"], "implicit_constraints": [],
        "reference_solutions": refs, "domain": "social",
    }
    rec.update(over)
    inst = instruction_from_record(rec)
    assert inst is not None
    return inst


REF = ("Graph[name='r', nodes=3, domain='social'] { node_list = ['0', '1', '2']; "
       "edge_list = [('0','1'), ('1','2')]; 0.label = 'Alice'; 1.label = 'Bob'; "
       "2.label = 'Carol'; edge_type = 'friends'; }")


def test_instruction_level() -> None:
    inst = _instruction(4, [REF])
    same = V.verify(inst, REF)
    plain = V.verify(inst, "Graph[name='g'] { node_list = ['0','1','2']; "
                           "edge_list = [('0','1'), ('1','2')]; }")
    res = instruction_d2(inst, [same, plain, V.verify(inst, "garbage")])
    assert res.n_valid == 2
    assert res.samples[0].value == 1.0 and res.samples[1].value == 0.0
    assert res.value == pytest.approx(0.5)
    assert instruction_d2(_instruction(3, [REF]), [same]).reason == "D2 is not computed at L3"


@pytest.mark.official
def test_official_l4_references_have_text_and_match_themselves() -> None:
    if not OFFICIAL.exists():
        pytest.skip("official suite not available")
    from pytest_graphinstruct.suite.loader import load_suite

    for inst in load_suite(OFFICIAL, levels=[4]):
        refs = [r.graph for r in inst.reference_graphs]
        res = graphs_d2(refs, refs, domain=inst.domain)
        assert res.similarity == 1.0, inst.id
        assert res.presence is not None and res.presence >= 0.6, inst.id
