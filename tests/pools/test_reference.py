"""Reference pools per level (pools/reference.py)."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest

from pytest_graphinstruct.pools import Pool, PoolError, ReferencePools, write_pool
from tests.pools._pools import brute_force
from tests.score._d1graphs import instruction


def test_reference_pools_layout(tmp_path: Path, graphs: list[nx.Graph]) -> None:
    write_pool(tmp_path / "l3", graphs[:10])
    pools = ReferencePools.load(tmp_path)
    assert set(pools.pools) == {3}
    assert pools.for_level(4) is None
    inst = instruction(id="L4-001", level=4, domain="social")
    assert pools.match(inst) is None
    l3 = instruction(id="L3-001", level=3)
    m = pools.match(l3)
    assert m is not None and isinstance(m.pool, Pool)
    assert m.indices == brute_force(m.pool, ["num_nodes=6"])
    with pytest.raises(PoolError, match="no pool found"):
        ReferencePools.load(tmp_path / "l3")
