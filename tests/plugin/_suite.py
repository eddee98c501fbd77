"""A tiny suite (L0–L2, one infeasible instruction) and answers for the plugin tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_graphinstruct.models.backends.tokens import TokenCounter
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

TREE4 = ("Graph[name='L1-001-ref1', nodes=4] { node_list = ['0','1','2','3']; "
         "edge_list = [('0','1'), ('1','2'), ('1','3')]; }")
CYCLE4 = ("Graph[name='L1-002-ref1', nodes=4] { node_list = ['0','1','2','3']; "
          "edge_list = [('0','1'), ('1','2'), ('2','3'), ('3','0')]; }")
EMPTY3 = "Graph[name='L0-001-ref1', nodes=3] { node_list = ['0','1','2']; edge_list = []; }"


def suite_records() -> dict[int, list[dict[str, Any]]]:
    return {
        0: [{"id": "L0-001", "level": 0, "instruction": "Create a graph with 3 nodes.",
             "explicit_constraints": ["num_nodes=3"], "implicit_constraints": [],
             "graph_sizes": ["small"], "reference_solutions": [EMPTY3]}],
        1: [
            {"id": "L1-001", "level": 1, "instruction": "Generate a tree with 4 nodes.",
             "explicit_constraints": ["graph_type=tree", "num_nodes=4"],
             "implicit_constraints": ["num_edges=3"], "graph_sizes": ["small"],
             "reference_solutions": [TREE4]},
            {"id": "L1-002", "level": 1, "instruction": "Generate a cycle with 4 nodes.",
             "explicit_constraints": ["graph_type=cycle", "num_nodes=4"],
             "implicit_constraints": [], "graph_sizes": ["small"],
             "reference_solutions": [CYCLE4]},
        ],
        2: [{"id": "L2-001", "level": 2, "instruction": "A 3-regular graph with 5 nodes.",
             "explicit_constraints": ["degree=3", "num_nodes=5"], "implicit_constraints": [],
             "graph_sizes": ["small"], "reference_solutions": [], "feasible": False}],
    }


def write_suite(root: Path) -> Path:
    """Write the tiny suite as level files under ``root`` (created when missing)."""
    root.mkdir(parents=True, exist_ok=True)
    for lv, recs in suite_records().items():
        (root / f"level_{lv}.json").write_text(json.dumps(recs), encoding="utf-8")
    return root


#: fake-model at one unit of money per input token and two per output token
PRICES: dict[str, Any] = {
    "currency": "USD", "taken": "2025-01-01",
    "models": {"fake-model": {"input_per_1m": 1_000_000, "output_per_1m": 2_000_000}}}


def write_prices(path: Path, *, batch_discount: float | None = None) -> Path:
    """:data:`PRICES` as a ``--gi-prices`` file at ``path`` (fake-model's batch requests at
    ``batch_discount`` of the list price, when given); returns ``path``."""
    model = dict(PRICES["models"]["fake-model"])
    if batch_discount is not None:
        model["batch_discount"] = batch_discount
    path.write_text(json.dumps({**PRICES, "models": {"fake-model": model}}), encoding="utf-8")
    return path


def tree_server() -> FakeOpenAIServer:
    """A fake server (to enter with ``with``) answering :data:`TREE4` to every request and
    counting tokens with the package's own counter, as the cost tests compare them."""
    return FakeOpenAIServer(responder=lambda body: TREE4,
                            token_counter=TokenCounter("cl100k_base"))
