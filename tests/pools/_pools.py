"""Shared helpers of the pools tests: a brute-force matcher to compare against."""

from __future__ import annotations

from pytest_graphinstruct.pools import Pool
from pytest_graphinstruct.suite.constraints import parse_constraint
from pytest_graphinstruct.verify.checks import check_constraint, is_checkable
from pytest_graphinstruct.verify.properties import GraphFacts
from pytest_graphinstruct.verify.verdict import Source


def brute_force(pool: Pool, texts: list[str], domain: str | None = None) -> tuple[int, ...]:
    cs = [parse_constraint(t) for t in texts]
    out = []
    for i, pg in enumerate(pool.graphs):
        if domain is not None and pg.domain != domain:
            continue
        facts = GraphFacts(pg.graph)  # fresh facts: nothing cached or seeded
        if all(check_constraint(c, facts, Source.EXPLICIT).satisfied
               for c in cs if is_checkable(c)):
            out.append(i)
    return tuple(out)
