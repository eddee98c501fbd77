"""An independent reader of instruction texts, for the text ↔ constraint agreement tests.

It does not share code with the builder's wording: it reads an English instruction the way a
reviewer would — every number and every property word — and lists where the text and the
explicit constraints disagree.  Rules (docs/SUITE.md, "Text and constraints agree"):

* **Numbers.**  The multiset of numbers in the text equals the multiset of the numeric values of
  the explicit constraints (a ``p,q`` pair counts as two numbers).  At L5, node ids (``node 7``,
  ``nodes 3 and 9``, ``(3,9)``, the bracketed base-graph listing, ``0→a`` mappings) are not
  numbers of the text, and a number the verifier's own task readers extract from the text
  (``exactly N``, ``k-core``, ``G^k``, depth, diameter, connectivity, degree, component count) is
  a stated task parameter, allowed on the text side.
* **Properties.**  Each explicit boolean, graph-type and domain constraint is named by the text
  (``connected``/``disconnected``, ``directed``/``undirected``, ``acyclic``, ``planar``,
  ``bipartite``, the type noun, the domain noun).  Below L5 the converse holds too: a property
  word in the text has a constraint on that key with the same truth value.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from pytest_graphinstruct.suite.constraints import parse_constraint
from pytest_graphinstruct.verify.tasks import text as task_text

_NUM_RE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]*\d)")
_LISTING_RE = re.compile(r"\[[^\[\]]*\]")
_NODE_REF_RE = re.compile(
    r"\b(?:nodes?|vertex|vertices|root)\s+'?\w+'?(?:\s*(?:,|and|or|to)\s*(?:node\s+)?'?\w+'?)*",
    re.I)
_PAIR_RE = re.compile(r"\(\s*'?\w+'?\s*,\s*'?\w+'?\s*(?:,\s*w\s*=\s*[\d.]+\s*)?\)")
_MAPPING_RE = re.compile(r"\b\w+\s*(?:→|->)\s*\w+")

#: key → (regex for a true statement, regex for a false statement)
_BOOL_WORDS: dict[str, tuple[str, str | None]] = {
    "connected": (r"(?<![-\w])(?<!not )(?<!weakly )connected\b",
                  r"\bdisconnected\b|\bnot connected\b"),
    "directed": (r"(?<![-\w])directed\b", r"\bundirected\b"),
    "acyclic": (r"\bacyclic\b|\bno cycles?\b|\bwithout (?:any )?cycles?\b",
                r"\b(?:contains?|has|have|with) (?:at least one |a )?cycles?\b"),
    "planar": (r"(?<![-\w])planar\b", r"\bnon-planar\b|\bnot planar\b"),
    "bipartite": (r"(?<![-\w])bipartite\b", r"\bnon-bipartite\b|\bnot bipartite\b"),
}
_TYPE_WORDS: dict[str, str] = {
    "tree": r"\btree\b", "forest": r"\bforest\b", "path": r"\bpath graph\b|\bpath\b",
    "cycle": r"\bcycle graph\b|\bcycle\b|\bring\b", "star": r"\bstar\b", "wheel": r"\bwheel\b",
    "grid": r"\bgrid\b|\blattice\b", "complete": r"\bcomplete graph\b|\bcomplete\b",
    "complete_bipartite": r"\bcomplete bipartite\b", "bipartite": r"\bbipartite\b",
    "dag": r"\bDAG\b|\bdirected acyclic graph\b", "connected": r"\bconnected\b",
    "regular": r"\bregular\b", "planar": r"\bplanar\b", "acyclic": r"\bacyclic\b",
}
_DOMAIN_WORDS: dict[str, str] = {
    "social": r"\bsocial\b", "citation": r"\bcitation\b",
    "biological": r"\bprotein|\bbiolog|\bgene",
    "ecological": r"\bfood web\b|\becolog|\bspecies\b", "communication": r"\bcommunication\b",
    "infrastructure": r"\binfrastructure\b|\bstations?\b|\bgrid\b|\btransit\b|\broad\b",
    "knowledge_graph": r"\bknowledge graph\b", "molecular": r"\bmolecul|\batoms?\b",
}
_TASK_READERS = ("k_core", "graph_power", "depth_bound", "diameter_bound", "edge_connectivity",
                 "regular_degree", "component_count")


def _norm(x: Any) -> str:
    d = Decimal(str(x)).normalize()
    return format(d, "f")


def _constraint_numbers(explicit: list[str]) -> Counter[str]:
    out: Counter[str] = Counter()
    for s in explicit:
        c = parse_constraint(s)
        v = c.value
        if isinstance(v, bool | str):
            continue
        if isinstance(v, tuple):
            out.update(_norm(x) for x in v)
        else:
            out[_norm(v)] += 1
    return out


def text_numbers(text: str, *, level: int) -> Counter[str]:
    """The numbers a reader finds in ``text`` (node ids removed at L5)."""
    if level == 5:
        for rx in (_LISTING_RE, _PAIR_RE, _MAPPING_RE, _NODE_REF_RE):
            text = rx.sub(" ", text)
    return Counter(_norm(m.group()) for m in _NUM_RE.finditer(text))


def _task_parameters(text: str) -> Counter[str]:
    out: Counter[str] = Counter()
    sc = task_text.stated_count(text)
    if sc is not None:
        out[_norm(sc[1])] += 1
    for name in _TASK_READERS:
        v = getattr(task_text, name)(text)
        if v is not None:
            out[_norm(v)] += 1
    return out


def disagreements(record: Mapping[str, Any]) -> list[str]:
    """Every way the record's text and its explicit constraints disagree (empty: they agree)."""
    text: str = record["instruction"]
    level: int = record["level"]
    explicit: list[str] = list(record["explicit_constraints"])
    problems: list[str] = []

    want = _constraint_numbers(explicit)
    got = text_numbers(text, level=level)
    extra = got - want
    if level == 5:
        extra -= _task_parameters(text)
    missing = want - got
    if missing:
        problems.append(f"constraint numbers not stated in the text: {sorted(missing.elements())}")
    if extra:
        problems.append(f"numbers in the text with no constraint: {sorted(extra.elements())}")

    stated: dict[str, bool] = {}
    for s in explicit:
        c = parse_constraint(s)
        if c.key in _BOOL_WORDS and isinstance(c.value, bool):
            truth = c.value if c.op.value == "=" else not c.value
            stated[c.key] = truth
            yes, no = _BOOL_WORDS[c.key]
            rx = yes if truth else no
            implied = (c.key in ("connected", "acyclic", "planar", "bipartite")
                       and any(parse_constraint(t).key == "graph_type" for t in explicit))
            if rx is None or not (re.search(rx, text, re.I) or (implied and truth)):
                problems.append(f"{s}: not stated in the text")
        elif c.key == "graph_type":
            if not re.search(_TYPE_WORDS[str(c.value)], text, re.I):
                problems.append(f"{s}: type not named in the text")
        elif c.key == "domain" and not re.search(_DOMAIN_WORDS[str(c.value)], text, re.I):
            problems.append(f"{s}: domain not named in the text")
    if level < 5:
        types = {str(parse_constraint(s).value) for s in explicit
                 if parse_constraint(s).key == "graph_type"}
        for key, (yes, no) in _BOOL_WORDS.items():
            said_no = bool(no and re.search(no, text, re.I))
            said_yes = bool(re.search(yes, text, re.I))
            if key in types or (key == "bipartite" and "complete_bipartite" in types):
                continue
            if key == "acyclic" and "dag" in types:
                continue
            if key == "directed" and "dag" in types and said_yes and not said_no:
                continue
            if (said_yes or said_no) and key not in stated:
                problems.append(f"the text says {key!r} but no {key}= constraint exists")
            elif said_no and stated.get(key) is True:
                problems.append(f"the text negates {key!r} but the constraint says true")
            elif said_yes and not said_no and stated.get(key) is False:
                problems.append(f"the text says {key!r} but the constraint says false")
    return problems
