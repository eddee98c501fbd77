"""Task parameters read from an L5 instruction's English text.

Every function here is a small, pure regex reader that returns ``None`` (or an empty value) when
the text does not state the parameter — callers then skip the verdict that needs it rather than
guess.  Node ids are returned as ``str``.  Matching is case-insensitive.
"""

from __future__ import annotations

import re

from pytest_graphinstruct.graphs.model import Edge

_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "a single": 1, "a": 1, "an": 1,
}
_NUM = r"(\d+|one|two|three|four|five|six|seven|eight|nine|ten|a single|an|a)"
_VERB = r"(add|remove|delete|reverse|flip)"
_ADJ = r"(?:[a-z][a-z-]*\s+){0,2}?"
_ID = r"['\"]?([A-Za-z0-9_]+)['\"]?"
_I = re.IGNORECASE

_VERB_CANON = {"add": "add", "remove": "remove", "delete": "remove", "reverse": "reverse",
               "flip": "reverse"}


def _num(tok: str) -> int:
    tok = tok.lower()
    return int(tok) if tok.isdigit() else _NUMBER_WORDS[tok]


# ------------------------------------------------------------------------------ edit verbs

_VERBS_RE = re.compile(
    r"\b(add|adds|adding|remove|removes|removing|delete|deletes|deleting|reverse|reverses|"
    r"reversing|flip|flipping)\b", _I)


_NEGATED_RE = re.compile(
    r"(?:\b(?:not|never|without|cannot)|n't)\s+(?:\w+\s+)?$", _I)


def verbs(text: str) -> frozenset[str]:
    """The edit verbs the text uses, canonical: a subset of ``{'add', 'remove', 'reverse'}``.

    A negated verb ("do not remove any edge", "without adding", "never reverse") forbids that
    edit rather than asking for it, so it is not counted.
    """
    out = set()
    for m in _VERBS_RE.finditer(text):
        if _NEGATED_RE.search(text[max(0, m.start() - 30):m.start()]):
            continue
        w = m.group(1).lower()
        for stem, canon in (("add", "add"), ("remov", "remove"), ("delet", "remove"),
                            ("revers", "reverse"), ("flip", "reverse")):
            if w.startswith(stem):
                out.add(canon)
    return frozenset(out)


_EXACT_RE = re.compile(
    rf"\b{_VERB}\s+(?:exactly\s+)?{_NUM}\s+(?:new\s+)?{_ADJ}(edges?|arcs?)\b", _I)
_EXACT_PAREN_RE = re.compile(
    rf"\b{_VERB}\s+the\s+(?:minimum|fewest|smallest)\s+(?:possible\s+)?number\s+of\s+{_ADJ}"
    rf"(?:edges?|arcs?)\s*\(\s*exactly\s+{_NUM}\s*\)", _I)


def stated_count(text: str) -> tuple[str, int] | None:
    """``(verb, N)`` for "Add exactly 2 edges", "Reverse exactly 2 edge(s)", "Remove 5 edges",
    "Add the minimum number of edges (exactly 4)"; verb in ``add/remove/reverse``.

    Only edge counts tied to an edit verb are read ("a spanning tree with exactly 5 edges"
    describes the result, not the edit, and is ignored).  Two different stated counts for the
    same verb → ``None`` (contradictory text).
    """
    found: set[tuple[str, int]] = set()
    for m in _EXACT_PAREN_RE.finditer(text):
        found.add((_VERB_CANON[m.group(1).lower()], _num(m.group(2))))
    for m in _EXACT_RE.finditer(text):
        found.add((_VERB_CANON[m.group(1).lower()], _num(m.group(2))))
    if len(found) != 1:
        return None
    return next(iter(found))


_MIN_RE = re.compile(
    rf"\b{_VERB}\s+(?:only\s+)?the\s+(minimum|fewest|smallest|maximum|largest|most)\s+"
    rf"(?:possible\s+)?(?:number\s+of\s+)?{_ADJ}(edges?|arcs?|nodes?|vertices|leaves)\b", _I)


def asks_extreme(text: str) -> tuple[str, str, str] | None:
    """``(verb, 'min'|'max', unit)`` for "Remove the minimum number of edges" and the like.

    ``unit`` is ``'edges'`` or ``'nodes'`` ("leaf nodes", "vertices" and "leaves" are nodes).
    """
    m = _MIN_RE.search(text)
    if m is None:
        return None
    kind = "min" if m.group(2).lower() in ("minimum", "fewest", "smallest") else "max"
    unit = "edges" if m.group(3).lower().startswith(("edge", "arc")) else "nodes"
    return (_VERB_CANON[m.group(1).lower()], kind, unit)


_CONNECTED_RE = re.compile(
    r"\b(?:keep|keeping|keeps|remain|remains|remaining|stay|stays|staying|preserv\w*|maintain\w*)"
    r"\s+(?:it|the\s+graph|the\s+result|the\s+tree|its\s+connectivity|connectivity)?\s*"
    r"(?:connected|connectivity)\b", _I)


def keeps_connected(text: str) -> bool:
    """True for "while keeping it connected", "the graph must remain connected", ..."""
    return _CONNECTED_RE.search(text) is not None


def mentions_triangles(text: str) -> bool:
    return re.search(r"\btriangles?\b", text, _I) is not None


# ------------------------------------------------------------------------------ structures


def _expand_ids(body: str) -> list[str] | None:
    toks = [t.strip().strip("'\"") for t in body.split(",")]
    out: list[str] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t in ("...", "…", ".."):
            if not out or i + 1 >= len(toks) or not (out[-1].isdigit() and toks[i + 1].isdigit()):
                return None
            lo, hi = int(out[-1]), int(toks[i + 1])
            out.extend(str(k) for k in range(lo + 1, hi))
        elif t:
            if not re.fullmatch(r"[A-Za-z0-9_]+", t):
                return None
            out.append(t)
        i += 1
    return out


_PARTITION_RE = re.compile(
    r"(?:partition\w*|sides?|parts?|bipartition)[^{}.]{0,40}?\{([^{}]*)\}\s*(?:and|,|/)\s*"
    r"\{([^{}]*)\}", _I)


def partition(text: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """The two sides of a stated bipartition ("partition {0,2,4} and {1,3,5}",
    "partitions {0,...,6} and {7,...,13}"); ``None`` unless both are non-empty and disjoint."""
    m = _PARTITION_RE.search(text)
    if m is None:
        return None
    a, b = _expand_ids(m.group(1)), _expand_ids(m.group(2))
    if not a or not b:
        return None
    sa, sb = frozenset(a), frozenset(b)
    if sa & sb:
        return None
    return (sa, sb)


def k_core(text: str) -> int | None:
    """``k`` of "the 3-core" / "k-core with k=3"."""
    m = re.search(r"\b(\d+)-core\b", text, _I) or re.search(
        r"\bk\s*-?\s*core\b[^.]*?\bk\s*=\s*(\d+)", text, _I)
    return int(m.group(1)) if m else None


_SUPERSCRIPT = {"²": 2, "³": 3}


def graph_power(text: str) -> int | None:
    """``k`` of "G^2", "G²", "square graph" (2), "cube" (3), "3rd power", "power k=3"."""
    m = re.search(r"\bG\s*\^\s*\{?\s*(\d+)", text)
    if m:
        return int(m.group(1))
    m = re.search(r"\bG([²³])", text)
    if m:
        return _SUPERSCRIPT[m.group(1)]
    m = re.search(r"\b(\d+)\s*(?:st|nd|rd|th|-th)\s+power\b", text, _I) or re.search(
        r"\bpower\s+(?:of\s+)?(?:k\s*=\s*)?(\d+)\b", text, _I)
    if m:
        return int(m.group(1))
    if re.search(r"\bsquare(?:d)?\b", text, _I):
        return 2
    if re.search(r"\bcube(?:d)?\b", text, _I):
        return 3
    return None


def contracted_edge(text: str) -> Edge | None:
    """``(u, v)`` of "Contract edge (0,1)" / "contract the edge 0-1"."""
    m = re.search(
        rf"\bcontract(?:ing|ion\s+of)?\s+(?:the\s+)?edge\s*\(\s*{_ID}\s*,\s*{_ID}\s*\)", text, _I)
    if m is None:
        m = re.search(rf"\bcontract(?:ing|ion\s+of)?\s+(?:the\s+)?edge\s+{_ID}\s*-\s*{_ID}",
                      text, _I)
    return (m.group(1), m.group(2)) if m else None


def merged_name(text: str) -> str | None:
    """The stated name of a contracted node: "into a single node '01'"."""
    m = re.search(r"\binto\s+(?:a\s+|one\s+)?(?:single\s+|new\s+|merged\s+)*(?:node|vertex)\s+"
                  r"['\"]([A-Za-z0-9_]+)['\"]", text, _I)
    return m.group(1) if m else None


def path_endpoints(text: str) -> tuple[str, str] | None:
    """``(s, t)`` of "from node 0 to node 5" / "between nodes 0 and 5"."""
    m = re.search(rf"\bfrom\s+(?:node|vertex)\s+{_ID}\s+to\s+(?:node|vertex)\s+{_ID}", text, _I)
    if m is None:
        m = re.search(rf"\bbetween\s+(?:nodes|vertices)\s+{_ID}\s+and\s+{_ID}", text, _I)
    return (m.group(1), m.group(2)) if m else None


def all_shortest_paths(text: str) -> bool:
    return re.search(r"\ball\s+(?:the\s+)?shortest\s+paths?\b", text, _I) is not None


def single_shortest_path(text: str) -> bool:
    """True for "a/the shortest path" (and not "all shortest paths")."""
    return (not all_shortest_paths(text)
            and re.search(r"\b(?:a|the|one)\s+shortest\s+path\b(?!\s+tree)", text, _I)
            is not None)


def induced(text: str) -> bool:
    return re.search(r"\binduced\b", text, _I) is not None


def root(text: str) -> str | None:
    """The stated root/source: "rooted at node 0", "from the root 0", "source node 0"."""
    for pat in (rf"\brooted\s+at\s+(?:node\s+|vertex\s+)?{_ID}",
                rf"\b(?:root|source)\s+(?:node\s+|vertex\s+)?(?:is\s+)?{_ID}\b(?!\s*-)",
                rf"\bfrom\s+(?:the\s+)?(?:root|source)\s+(?:node\s+|vertex\s+)?{_ID}"):
        for m in re.finditer(pat, text, _I):
            if m.group(1).lower() not in ("node", "vertex", "the", "to", "is", "a"):
                return m.group(1)
    return None


def depth_bound(text: str) -> int | None:
    """``d`` of "reduce the tree's depth from 5 to at most 3" / "depth at most 3"."""
    m = re.search(r"\bdepth\b[^.]*?\b(?:at\s+most|<=|≤|no\s+more\s+than)\s*(\d+)", text, _I)
    return int(m.group(1)) if m else None


_WEIGHT_RE = re.compile(
    rf"\(\s*{_ID}\s*,\s*{_ID}\s*,\s*(?:w|weight)\s*[=:]\s*([-+]?\d+(?:\.\d+)?)\s*\)", _I)


def weights(text: str) -> dict[frozenset[str], float]:
    """Edge weights spelled ``(u,v,w=4)`` (or ``weight=4``), keyed by the unordered pair.

    An edge given two different weights is dropped (contradictory).
    """
    out: dict[frozenset[str], float] = {}
    bad: set[frozenset[str]] = set()
    for m in _WEIGHT_RE.finditer(text):
        key = frozenset((m.group(1), m.group(2)))
        w = float(m.group(3))
        if key in out and out[key] != w:
            bad.add(key)
        out[key] = w
    for key in bad:
        del out[key]
    return out


def tree_kind(text: str) -> str | None:
    """``'spt'`` for a shortest-path tree (or Dijkstra), ``'mst'`` for a minimum spanning tree."""
    if re.search(r"\bshortest[- ]paths?\s+tree\b|\bdijkstra", text, _I):
        return "spt"
    if re.search(r"\bminimum(?:[- ]weight|[- ]cost)?\s+spanning\s+tree\b|\bMST\b", text, _I):
        return "mst"
    return None


def relabel_mapping(text: str) -> dict[str, str] | None:
    """The stated relabelling ``0→a, 1→b`` (also ``->``, ``↦``, ``=>``); ``None`` when absent
    or when one id is mapped to two names or two ids to one name."""
    pairs = re.findall(r"\b([A-Za-z0-9_]+)\s*(?:→|->|↦|=>)\s*([A-Za-z0-9_]+)\b", text)
    if not pairs:
        return None
    mapping: dict[str, str] = {}
    for src, dst in pairs:
        if mapping.get(src, dst) != dst:
            return None
        mapping[src] = dst
    if len(set(mapping.values())) != len(mapping):
        return None
    return mapping


def equal_component_sizes(text: str) -> bool:
    return re.search(r"\b(?:equal|same)\s+size", text, _I) is not None


def no_isolated_nodes(text: str) -> bool:
    """True for "keeping each node with at least one edge" / "no isolated nodes"."""
    return re.search(
        r"\b(?:each|every|all)\s+(?:node|vertex|nodes|vertices)\s+(?:with|has|have|keeps?|"
        r"having|retains?)\s+at\s+least\s+one\s+(?:edge|neighbou?r)|\bno\s+isolated\s+"
        r"(?:nodes|vertices)", text, _I) is not None


def diameter_bound(text: str) -> int | None:
    """``d`` of "reduce the diameter to at most 14"."""
    m = re.search(r"\bdiameter\b[^.]*?\b(?:at\s+most|<=|≤|no\s+more\s+than)\s*(\d+)", text, _I)
    return int(m.group(1)) if m else None


def edge_connectivity(text: str) -> int | None:
    """``k`` of "k-edge-connected"; "no bridges" alone means 2."""
    m = re.search(r"\b(\d+)-edge-connected\b", text, _I)
    if m:
        return int(m.group(1))
    if re.search(r"\bno\s+bridges\b|\bbridgeless\b", text, _I):
        return 2
    return None


def regular_degree(text: str) -> int | None:
    m = re.search(r"\b(\d+)-regular\b", text, _I)
    return int(m.group(1)) if m else None


def component_count(text: str) -> int | None:
    """``k`` of "split into exactly 2 connected components"."""
    m = re.search(rf"\binto\s+(?:exactly\s+)?{_NUM}\s+(?:separate\s+|disjoint\s+)?"
                  r"(?:connected\s+)?components\b", text, _I)
    return _num(m.group(1)) if m else None


def unique_topological_order(text: str) -> bool:
    return re.search(r"\btopological\s+order\w*[^.]{0,30}?\bunique\b|\bunique\s+topological|"
                     r"\bhamiltonian\s+path\b", text, _I) is not None


def not_bipartite(text: str) -> bool:
    return re.search(r"\bno\s+longer\s+bipartite|\bnon-?\s?bipartite|\bnot\s+bipartite", text,
                     _I) is not None


def stated_added_edges(text: str) -> tuple[tuple[str, str], ...]:
    """Edges the text explicitly says to add, spelled ``u-v``: "add edges 0-1, 1-2 and 2-0"."""
    m = re.search(r"\badd\s+(?:the\s+)?edges?\s+((?:[A-Za-z0-9_]+\s*-\s*[A-Za-z0-9_]+"
                  r"(?:\s*,\s*(?:and\s+)?|\s+and\s+)?)+)", text, _I)
    if m is None:
        return ()
    return tuple((a, b) for a, b in re.findall(r"([A-Za-z0-9_]+)\s*-\s*([A-Za-z0-9_]+)",
                                              m.group(1)))
