"""The domain generators shared by the L4 pool and the L4 suite (build/domains.py)."""

from __future__ import annotations

import random

import networkx as nx
import numpy as np
import pytest

from pytest_graphinstruct.build import domains as dm
from pytest_graphinstruct.build import labels as vocab
from pytest_graphinstruct.build import pools as pb


def _schema_ok(g: nx.DiGraph, u: int, v: int) -> bool:
    return (g.nodes[u]["type"], g.nodes[v]["type"]) in vocab.KG_RELATIONS


def test_typed_knowledge_graph_follows_the_schema() -> None:
    made = [g for g in (dm.typed_knowledge_graph(random.Random(i), 30) for i in range(20)) if g]
    assert made
    for g in made:
        assert g.number_of_nodes() == 30 and nx.is_weakly_connected(g)
        for u, v, d in g.edges(data=True):
            assert d["relation"] in vocab.KG_RELATIONS[(g.nodes[u]["type"], g.nodes[v]["type"])]


def test_pool_knowledge_graph_is_the_same_model_unnamed() -> None:
    """The pool's variant: every entity linked, edges unnamed, off-schema edges only where an
    entity found no partner (then from it to the biggest earlier hub)."""
    for i in range(20):
        g = dm.knowledge_graph(np.random.default_rng(i), 30)
        assert g.is_directed() and g.number_of_nodes() == 30 and nx.is_weakly_connected(g)
        assert all(d == {} for _, _, d in g.edges(data=True))
        assert {d["type"] for _, d in g.nodes(data=True)} <= set(vocab.KG_ENTITIES)
        off = [(u, v) for u, v in g.edges() if not _schema_ok(g, u, v)]
        assert all(u > v for u, v in off)


def test_growth_model_on_a_numpy_stream_can_name_relations() -> None:
    draws = dm._NumpyDraws(np.random.default_rng(3))
    g = dm.grow_knowledge_graph(draws, 25, rate_per_entity=False, named=True)
    assert g is not None
    for u, v, d in g.edges(data=True):
        assert d["relation"] in vocab.KG_RELATIONS[(g.nodes[u]["type"], g.nodes[v]["type"])]


@pytest.mark.parametrize("sub", pb.L4_SUBGROUPS, ids=lambda s: s.name)
def test_domain_generators_have_their_domain_directedness(sub: pb.DomainSubgroup) -> None:
    for i in range(3):
        g = sub.make(np.random.default_rng(i), 20)
        if g is not None:
            assert g.is_directed() == (sub.domain in dm.DIRECTED_DOMAINS)


def test_exact_niche_has_exactly_n_species() -> None:
    webs = [dm.exact_niche(np.random.default_rng(i), 20) for i in range(5)]
    assert any(w is not None for w in webs)
    for w in webs:
        assert w is None or (w.number_of_nodes() == 20 and w.is_directed())
