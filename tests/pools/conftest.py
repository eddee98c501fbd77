from __future__ import annotations

import networkx as nx
import pytest

from tests.score._d1graphs import synthetic_pool_graphs


@pytest.fixture(scope="module")
def graphs() -> list[nx.Graph]:
    gs = synthetic_pool_graphs(40)
    gs.append(nx.DiGraph(nx.gnp_random_graph(14, 0.3, seed=9, directed=True)))
    return gs
