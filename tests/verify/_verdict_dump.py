"""Prints, as JSON, every verdict the verifier gives a fixed set of answers.

``tests/verify/test_determinism.py`` runs this module in processes with different
``PYTHONHASHSEED`` values and requires the same output from each: a verdict's text and locus
must not depend on the process (string hashes, hence set iteration order, do).

The answers: the committed suite's instructions, each answered with its own first reference and
with two other instructions' references (one as written, the other with its direction flipped or
with its node and edge lists written as set literals); and fixed graphs with many cycles, cuts,
components and triangles, in several formats, checked against structural constraints and L5
tasks.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import constraints_of, load_suite
from pytest_graphinstruct.verify.verifier import DEFAULT_VERIFIER

ROOT = Path(__file__).resolve().parents[2]

Edge = tuple[int, int]


def flipped(text: str) -> str:
    """The answer with its header's direction flipped."""
    return re.sub(r"directed=(true|false)",
                  lambda m: "directed=" + ("false" if m.group(1) == "true" else "true"),
                  text, count=1)


def as_sets(text: str) -> str:
    """The answer with its non-empty node and edge lists written as set literals."""
    return re.sub(r"(node_list|edge_list)(\s*=\s*)\[(\s*[^\]\s][^\]]*)\]", r"\1\2{\3}", text)


def suite_answers() -> Iterator[tuple[Instruction, str]]:
    suite = load_suite(ROOT / "instructions")
    for level in suite.levels:
        items = suite.level(level)
        refs = [i.references[0] for i in items if i.references]
        for k, ins in enumerate(items):
            if ins.references:
                yield ins, ins.references[0]
            if refs:
                yield ins, refs[(k + 1) % len(refs)]
                variant = flipped if k % 2 else as_sets
                yield ins, variant(refs[(k + 2) % len(refs)])


def code(edges: Iterable[Edge], *, directed: bool = False, sets: bool = False) -> str:
    """A code-style answer listing ``edges`` in the given order (as a set literal if ``sets``)."""
    items = ", ".join(f"('{u}', '{v}')" for u, v in edges)
    body = "{" + items + "}" if sets else "[" + items + "]"
    return (f"Graph[directed={'true' if directed else 'false'}] {{\n"
            f"    edge_list = {body};\n}}")


def snippet(edges: Iterable[Edge]) -> str:
    """A networkx snippet adding ``edges`` from a set literal."""
    items = ", ".join(f"({u}, {v})" for u, v in edges)
    return f"```python\nG = nx.Graph()\nG.add_edges_from({{{items}}})\n```"


def adjacency_of_sets(edges: Iterable[Edge]) -> str:
    """A JSON-like answer whose adjacency lists are set literals."""
    adj: dict[int, list[int]] = {}
    for u, v in edges:
        adj.setdefault(u, []).append(v)
    body = ", ".join(f'"{u}": {{{", ".join(f"{chr(34)}{v}{chr(34)}" for v in vs)}}}'
                     for u, vs in adj.items())
    return '{"directed": false, "adjacency": {' + body + "}}"


def scrambled(edges: list[Edge]) -> list[Edge]:
    """``edges`` in a fixed, non-sorted order (a stride through the list)."""
    n = len(edges)
    stride = next(s for s in (7, 11, 13, 17, 19) if n % s)
    return [edges[(i * stride) % n] for i in range(n)]


def many_cycles() -> list[Edge]:
    """A circular ladder with chords (cycles of every length, odd ones, a Kuratowski
    subgraph, many minimum edge cuts) plus three separate triangles."""
    r = 12
    out = [(i, (i + 1) % r) for i in range(r)]
    out += [(r + i, r + (i + 1) % r) for i in range(r)]
    out += [(i, r + i) for i in range(r)]
    out += [(0, 6), (3, 9), (1, 7), (4, 10), (2, 14)]
    for t in range(3):
        a = 100 + 3 * t
        out += [(a, a + 1), (a + 1, a + 2), (a + 2, a)]
    return out


def complete(n: int) -> list[Edge]:
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


_STRUCTURAL = ("acyclic=true", "bipartite=true", "planar=true", "connected=true",
               "num_components=1", "edge_connectivity>=4", "graph_type=tree",
               "graph_type=forest", "graph_type=path", "graph_type=cycle",
               "graph_type=complete_bipartite", "graph_type=wheel", "graph_type=dag",
               "bipartite_sides=12,15", "min_degree=4", "degree=3", "diameter<=2")


def _instruction(iid: str, text: str, explicit: Iterable[str], base: str | None = None,
                 ) -> Instruction:
    return Instruction(id=iid, level=5 if base else 2, text=text,
                       explicit=constraints_of(list(explicit)), base_graph=base)


def fixed_answers() -> Iterator[tuple[Instruction, str]]:
    edges = scrambled(many_cycles())
    structural = _instruction("F-structural", "A graph.", _STRUCTURAL)
    for text in (code(edges), code(edges, sets=True), code(edges, directed=True),
                 code(edges, directed=True, sets=True), snippet(edges),
                 adjacency_of_sets(edges)):
        yield structural, text
    base = code(edges)
    for task, text, answer_edges in (
        ("spanning_tree", "Find a spanning tree of the base graph.", edges),
        ("make_bipartite", "Remove the minimum number of edges to make the graph bipartite.",
         edges),
        ("break_cycles", "Remove edges so that no triangles remain.", scrambled(complete(20))),
        ("graph_power", "Return a power G^k of the base graph for some k.",
         [*edges, (0, 100), (5, 103), (7, 106), (100, 106), (2, 104)]),
        ("prune_tree", "Prune the tree to depth at most 2 from root 0.", edges),
    ):
        answer_base = code(scrambled(complete(20))) if task == "break_cycles" else base
        ins = _instruction(f"F-{task}", text, [f"task_type={task}"], answer_base)
        for directed in (False, True):
            yield ins, code(answer_edges, directed=directed)
            yield ins, code(answer_edges, directed=directed, sets=True)


def main() -> None:
    out = []
    for ins, text in (*suite_answers(), *fixed_answers()):
        v = DEFAULT_VERIFIER.verify(ins, text)
        out.append([ins.id, v.passed, [d.to_json() for d in v.verdicts]])
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
