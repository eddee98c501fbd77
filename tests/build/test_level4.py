"""Level 4 builder: domains, buckets, calibrated constraints, domain-labelled references."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from pytest_graphinstruct.build import labels as vocab
from pytest_graphinstruct.build.common import as_instruction, isomorphic
from pytest_graphinstruct.build.domains import DIRECTED_DOMAINS, DOMAINS
from pytest_graphinstruct.build.level4 import (
    CLAUSES,
    KINDS,
    TEMPLATES,
    build_level4,
)
from pytest_graphinstruct.graphs.parse import parse_graph
from pytest_graphinstruct.pools import Pool
from pytest_graphinstruct.suite.constraints import parse_constraint
from pytest_graphinstruct.verify.verifier import DEFAULT_VERIFIER
from pytest_graphinstruct.vocab import size_bucket
from tests.suite.agreement import disagreements

ROOT = Path(__file__).resolve().parents[2]
#: Node nouns a domain's text may count its nodes with.
NOUNS: dict[str, tuple[str, ...]] = {
    "social": ("users",), "citation": ("papers",), "biological": ("proteins",),
    "ecological": ("species",), "communication": ("routers", "devices"),
    "infrastructure": ("stations", "intersections"), "knowledge_graph": ("entities",),
    "molecular": ("atoms",),
}


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return build_level4(0, 100)


@pytest.fixture(scope="module")
def parsed(records: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[nx.Graph]]]:
    return [(r, [parse_graph(ref).graph for ref in r["reference_solutions"]]) for r in records]


def _n(rec: dict[str, Any]) -> int:
    inst = as_instruction(rec)
    assert inst.num_nodes is not None
    return inst.num_nodes


def _structural(rec: dict[str, Any]) -> list[str]:
    return [s for s in rec["explicit_constraints"]
            if parse_constraint(s).key not in ("num_nodes", "directed")]


def test_ids_levels_and_templates(records: list[dict[str, Any]]) -> None:
    assert [r["id"] for r in records] == [f"L4-{i:03d}" for i in range(1, 101)]
    names = {t.name: t.domain for ts in TEMPLATES.values() for t in ts}
    for r in records:
        assert r["level"] == 4 and r["feasible"] is True
        assert names[r["template"]] == r["domain"]


def test_every_bucket_holds_at_least_fifteen(records: list[dict[str, Any]]) -> None:
    buckets = Counter(r["graph_sizes"][0] for r in records)
    assert set(buckets) == {"small", "medium", "large"}
    assert min(buckets.values()) >= 15, buckets
    for r in records:
        n = _n(r)
        assert r["graph_sizes"] == [size_bucket(n)]
        assert 8 <= n <= (30 if r["domain"] == "molecular" else 60), r["id"]


def test_all_domains_balanced_with_their_directedness(records: list[dict[str, Any]]) -> None:
    domains = Counter(r["domain"] for r in records)
    assert set(domains) == set(DOMAINS) and min(domains.values()) >= 10, domains
    for r in records:
        directed = r["domain"] in DIRECTED_DOMAINS
        assert f"directed={'true' if directed else 'false'}" in r["explicit_constraints"]


def test_one_to_three_structural_constraints(records: list[dict[str, Any]]) -> None:
    counts = Counter(len(_structural(r)) for r in records)
    assert set(counts) <= {1, 2, 3} and len(counts) == 3, counts
    for r in records:
        keys = {parse_constraint(s).key for s in _structural(r)}
        if r["domain"] == "citation":
            assert "acyclic=true" in r["explicit_constraints"], r["id"]
        if r["domain"] == "molecular":
            assert "max_degree=4" in r["explicit_constraints"], r["id"]
        assert keys <= {"connected", "acyclic", "planar", "density", "clustering_coefficient",
                        "modularity", "min_degree", "max_degree", "num_edges"}


def test_text_agrees_and_names_domain_and_node_noun(records: list[dict[str, Any]]) -> None:
    for r in records:
        assert disagreements(r) == [], r["id"]
        # the reader checks the domain noun when a domain= constraint is present
        named = dict(r, explicit_constraints=[*r["explicit_constraints"],
                                              f"domain={r['domain']}"])
        assert disagreements(named) == [], r["id"]
        nouns = "|".join(NOUNS[r["domain"]])
        assert re.search(rf"\b{_n(r)} (?:[\w-]+ )?(?:{nouns})\b", r["instruction"]), r["id"]


def test_references_pass_the_verifier_and_differ(records: list[dict[str, Any]],
                                                 parsed: list[tuple[dict[str, Any],
                                                                    list[nx.Graph]]]) -> None:
    for r, graphs in parsed:
        inst = as_instruction(r)
        assert len(r["reference_solutions"]) == 2
        for ref in r["reference_solutions"]:
            assert DEFAULT_VERIFIER.verify(inst, ref).passed, r["id"]
        assert not isomorphic(graphs[0], graphs[1]), r["id"]


def test_references_carry_domain_text(parsed: list[tuple[dict[str, Any],
                                                         list[nx.Graph]]]) -> None:
    for r, graphs in parsed:
        for g in graphs:
            assert g.graph.get("domain") == r["domain"], r["id"]
            assert g.is_directed() == (r["domain"] in DIRECTED_DOMAINS)
            names = [d.get("label") for _, d in g.nodes(data=True)]
            assert all(isinstance(x, str) and x for x in names), r["id"]
            assert len(set(names)) == len(names), f"{r['id']}: repeated labels"
            relations = {d.get("relation") for _, _, d in g.edges(data=True)}
            assert relations and all(isinstance(x, str) and len(x) > 2 for x in relations)


def test_molecular_references_respect_valence(parsed: list[tuple[dict[str, Any],
                                                                 list[nx.Graph]]]) -> None:
    seen = 0
    for r, graphs in parsed:
        if r["domain"] != "molecular":
            continue
        for g in graphs:
            for v, d in g.nodes(data=True):
                element = d["element"]
                assert element in vocab.VALENCE
                assert re.fullmatch(rf"{element}\d+", d["label"]), d["label"]
                bonds = [g.edges[v, u] for u in g[v]]
                assert all(b["relation"] == "bond" and b["order"] in (1, 2, 3) for b in bonds)
                assert sum(b["order"] for b in bonds) <= vocab.VALENCE[element], (r["id"], v)
                seen += 1
    assert seen > 0


def test_domain_semantics_of_references(parsed: list[tuple[dict[str, Any],
                                                           list[nx.Graph]]]) -> None:
    relations_by_types = {(a, b): set(rs) for (a, b), rs in vocab.KG_RELATIONS.items()}
    for r, graphs in parsed:
        for g in graphs:
            if r["domain"] == "citation":  # a paper never cites a later one
                assert all(g.nodes[u]["year"] >= g.nodes[v]["year"] for u, v in g.edges())
                assert {d["relation"] for *_, d in g.edges(data=True)} == {"cites"}
            elif r["domain"] == "knowledge_graph":
                for u, v, d in g.edges(data=True):
                    types = (g.nodes[u]["type"], g.nodes[v]["type"])
                    assert d["relation"] in relations_by_types[types], (r["id"], types)
                    assert g.nodes[u]["label"] in vocab.KG_ENTITIES[types[0]]
            elif r["domain"] == "ecological":  # producers eat nothing; edges run prey → predator
                for v, d in g.nodes(data=True):
                    assert (d["role"] == "producer") == (g.in_degree(v) == 0)
                assert {d["relation"] for *_, d in g.edges(data=True)} == {"eaten_by"}


def test_every_instruction_matches_pool_graphs_of_its_domain(
        records: list[dict[str, Any]]) -> None:
    pool = Pool.load(ROOT / "references" / "pools" / "l4")
    counts = []
    for r in records:
        m = pool.match_instruction(as_instruction(r))
        assert m.count >= 1, r["id"]
        assert all(pg.domain == r["domain"] for pg in m.graphs)
        counts.append(m.count)
    assert sorted(counts)[len(counts) // 2] >= 2  # the median instruction has several


def test_same_seed_same_bytes_under_another_hash_seed(records: list[dict[str, Any]]) -> None:
    code = ("import json, sys; from pytest_graphinstruct.build.level4 import "
            "build_level4; sys.stdout.write(json.dumps(build_level4(0, 100)))")
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout
    assert out == json.dumps(records)


def test_other_seed_other_records(records: list[dict[str, Any]]) -> None:
    other = build_level4(1, 8)
    assert len(other) == 8 and sorted(r["domain"] for r in other) == sorted(DOMAINS)
    assert [r["instruction"] for r in other] != [r["instruction"] for r in records[:8]]


def test_templates_have_three_phrasings_per_part() -> None:
    for domain, templates in TEMPLATES.items():
        assert len(templates) >= 2
        for t in templates:
            assert t.domain == domain and len(t.openers) >= 3
            for opener in t.openers:
                assert "{n}" in opener
                if domain in DIRECTED_DOMAINS:
                    assert re.search(r"(?<![-\w])directed\b", opener), opener
                else:
                    assert "undirected" in opener, opener
            for k in t.kinds:
                assert k in KINDS and len(CLAUSES[domain][k]) >= 3, (t.name, k)


def test_vocabularies_are_large_and_digit_free() -> None:
    pools = [vocab.PEOPLE, vocab.PAPER_TITLES, vocab.PROTEINS, vocab.CONSUMERS, vocab.PRODUCERS,
             vocab.DEVICES, vocab.STATIONS, vocab.INTERSECTIONS,
             tuple(x for names in vocab.KG_ENTITIES.values() for x in names)]
    for names in pools:
        assert len(set(names)) == len(names) >= vocab.MIN_DISTINCT
        assert not any(re.search(r"\d", x) for x in names)
