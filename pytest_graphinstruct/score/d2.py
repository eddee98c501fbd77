"""D2 textual quality (weight only at L4; computed at L4 and L5).

Per valid sample ``g``::

    D2(g) = 0.5·presence(g) + 0.5·similarity(g)

**Meaningful text.**  A text (a label, a node id, a relation name) is *meaningful* unless, after
trimming, it is empty, a number (``'3'``, ``'-2.5'``), a single character (``'A'``), or a
placeholder: a generic graph word alone or followed by a number or single letter (``'node'``,
``'node1'``, ``'Node 7'``, ``'vertex_B'``, ``'item-3'``; the words are :data:`PLACEHOLDER_WORDS`)
or one letter followed by a number (``'n3'``, ``'v12'``, ``'A1'``).  One exception, for the
molecular domain only (the instruction's ``domain``, else a reference's ``domain`` attribute): a
one-letter element symbol, alone or indexed (``'C'``, ``'O_3'``, ``'H6'``), is meaningful, and its
one-letter token is kept — the references label atoms ``C_1``, ``N_2``, … .  A *relation* is
meaningful when its text is meaningful and it is not a generic graph word
(:data:`TRIVIAL_RELATIONS`: ``connected_to``, ``edge``, ``link``, ``adjacent``, … compared case-
and separator-insensitively; ``related_to`` and ``neighbors`` are real relations in the
references and count).

**presence(g)** (no reference; 0 for an empty graph) ``= 0.6·node + 0.4·edge``:

* node part = mean over nodes of: 1 when the node has a meaningful ``label`` (or ``name`` /
  ``title``) attribute, else 0.7 when its id is meaningful (``'Alice'``), else 0;
* edge part = 1 when the graph-level ``edge_type`` is a meaningful relation, else the share of
  edges whose ``type`` (or ``label`` / ``relation``) attribute is a meaningful relation (0 without
  edges).  The reference release gave 1 as soon as one edge had any label; a share rewards
  labelling the edges, not one edge.

**similarity(g)** = max over the references that carry text of the Dice coefficient (set F1)
``2·|T_g ∩ T_r| / (|T_g| + |T_r|)`` of the token sets.  Tokens: every meaningful node text (the
label, else a meaningful id) and every meaningful relation (graph ``edge_type`` and edge
attributes), split at non-alphanumerics, at camelCase and at letter/digit boundaries,
lower-cased; digit-only tokens, one-character tokens, the placeholder words and a few English stop
words (:data:`STOP_WORDS`) are dropped.  Sets, not multisets: a 50-node answer is not penalized
against a 10-node reference for repeating ``paper``, and labelling coverage is presence's job.
A reference without tokens has no similarity; when *no* reference has any, D2 is **absent**
(``value=None`` with the reason) — the caller decides; the presence mean is still reported.

Diagnostics (off by default, pure Python, against the closest reference): triples
``(head text, relation, tail text)`` over edges whose two ends have text (relation = the edge's,
else the graph's ``edge_type``, else ``connected_to``; undirected edges are ordered by text) —
**Text-F1** (set F1 of the triples), **G-BLEU** (BLEU up to 4-grams over the triples' token
sequences, n-grams never cross triples; clipped counts, brevity penalty; orders for which the
answer has no n-gram are skipped; a zero precision gives 0) and **G-ROUGE-2** (bigram recall).
Both sides without triples → the diagnostic is absent (``None``); one side without → 0.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

import networkx as nx

from pytest_graphinstruct.score.d4 import is_valid
from pytest_graphinstruct.score.levels import mean_present
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify.verdict import Verification

NODE_TEXT_KEYS: tuple[str, ...] = ("label", "name", "title")
EDGE_TEXT_KEYS: tuple[str, ...] = ("type", "label", "relation")
ID_CREDIT = 0.7
NODE_WEIGHT = 0.6
EDGE_WEIGHT = 0.4
ACTIVE_LEVELS = (4, 5)

PLACEHOLDER_WORDS: frozenset[str] = frozenset({
    "node", "nodes", "vertex", "vertices", "vert", "vtx", "nd", "id", "item", "element", "elem",
    "point", "pt", "obj", "object", "unnamed", "unknown", "label", "none", "null", "nan",
})
TRIVIAL_RELATIONS: frozenset[str] = frozenset({
    "connected_to", "connected", "connects", "connection", "connections", "connected_with",
    "edge", "edges", "link", "links", "linked", "linked_to", "linked_with", "adjacent",
    "adjacent_to", "none", "null", "default", "undirected", "directed",
})
ELEMENTS_1: frozenset[str] = frozenset("HBCNOFPSKVYIWU")  #: one-letter element symbols
STOP_WORDS: frozenset[str] = frozenset({
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "with", "and", "or", "is",
    "are", "from", "as",
})

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_PLACEHOLDER = re.compile(
    r"(?:(?:" + "|".join(sorted(PLACEHOLDER_WORDS, key=len, reverse=True)) + r")"
    r"(?:[\s_\-#.:]*(?:\d+|[a-z]))?|[a-z][\s_\-#.:]*\d+)", re.IGNORECASE)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_LETTER_DIGIT = re.compile(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])")
_WORD = re.compile(r"[^\W_]+")
_ELEMENT = re.compile(r"[" + "".join(sorted(ELEMENTS_1)) + r"](?:[\s_\-#.:]*\d+)?")


# -- text rules -----------------------------------------------------------------------------------

def is_meaningful(value: Any, *, molecular: bool = False) -> bool:
    """Whether a label/id text is meaningful (see the module docstring)."""
    if value is None or isinstance(value, bool):
        return False
    text = str(value).strip()
    if molecular and _ELEMENT.fullmatch(text):
        return True
    if len(text) <= 1 or _NUMBER.fullmatch(text):
        return False
    return _PLACEHOLDER.fullmatch(text) is None


def _relation_key(value: Any) -> str:
    return re.sub(r"[\s\-]+", "_", str(value).strip().lower())


def is_meaningful_relation(value: Any) -> bool:
    """Whether a relation name is meaningful and not a generic one (``connected_to``, …)."""
    return is_meaningful(value) and _relation_key(value) not in TRIVIAL_RELATIONS


def tokens(text: Any, *, molecular: bool = False) -> list[str]:
    """The word tokens of a text (see the module docstring); order kept, repeats kept."""
    s = _LETTER_DIGIT.sub(" ", _CAMEL.sub(" ", str(text)))
    out = []
    for w in _WORD.findall(s.lower()):
        if len(w) == 1 and molecular and w.upper() in ELEMENTS_1:
            out.append(w)
            continue
        if len(w) <= 1 or w.isdigit() or w in PLACEHOLDER_WORDS or w in STOP_WORDS:
            continue
        out.append(w)
    return out


def node_text(graph: nx.Graph, node: Any, *, molecular: bool = False) -> str | None:
    """The node's meaningful text: its first meaningful label attribute, else a meaningful id."""
    data = graph.nodes[node]
    for key in NODE_TEXT_KEYS:
        if key in data and is_meaningful(data[key], molecular=molecular):
            return str(data[key]).strip()
    return str(node).strip() if is_meaningful(node, molecular=molecular) else None


def _edge_relation(data: dict[str, Any]) -> str | None:
    for key in EDGE_TEXT_KEYS:
        if key in data and is_meaningful_relation(data[key]):
            return str(data[key]).strip()
    return None


def _graph_relation(graph: nx.Graph) -> str | None:
    value = graph.graph.get("edge_type")
    return str(value).strip() if is_meaningful_relation(value) else None


# -- presence and similarity ----------------------------------------------------------------------

def text_presence(graph: nx.Graph, *, molecular: bool = False) -> float:
    """``0.6·node part + 0.4·edge part`` in [0, 1] (see the module docstring)."""
    n = graph.number_of_nodes()
    if n == 0:
        return 0.0
    node_part = 0.0
    for v, data in graph.nodes(data=True):
        if any(k in data and is_meaningful(data[k], molecular=molecular)
               for k in NODE_TEXT_KEYS):
            node_part += 1.0
        elif is_meaningful(v, molecular=molecular):
            node_part += ID_CREDIT
    node_part /= n
    if _graph_relation(graph) is not None:
        edge_part = 1.0
    elif graph.number_of_edges():
        labelled = sum(1 for _, _, d in graph.edges(data=True) if _edge_relation(d) is not None)
        edge_part = labelled / graph.number_of_edges()
    else:
        edge_part = 0.0
    return NODE_WEIGHT * node_part + EDGE_WEIGHT * edge_part


def text_tokens(graph: nx.Graph, *, molecular: bool = False) -> frozenset[str]:
    """The token set of a graph's node texts and relation names."""
    out: set[str] = set()
    for v in graph.nodes():
        t = node_text(graph, v, molecular=molecular)
        if t is not None:
            out.update(tokens(t, molecular=molecular))
    rel = _graph_relation(graph)
    if rel is not None:
        out.update(tokens(rel))
    for _, _, d in graph.edges(data=True):
        r = _edge_relation(d)
        if r is not None:
            out.update(tokens(r))
    return frozenset(out)


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    """Set F1 ``2|a∩b| / (|a|+|b|)`` (0 when both are empty)."""
    total = len(a) + len(b)
    return 2.0 * len(a & b) / total if total else 0.0


# -- diagnostics ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class TextDiagnostics:
    """Triple-based diagnostics (``None`` = absent: neither graph has a triple)."""

    text_f1: float | None
    g_bleu: float | None
    g_rouge2: float | None


Triple = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def triples(graph: nx.Graph, *, molecular: bool = False) -> list[Triple]:
    """``(head tokens, relation tokens, tail tokens)`` of every edge whose ends have text."""
    default = _graph_relation(graph) or "connected_to"
    texts = {}
    for v in graph.nodes():
        t = node_text(graph, v, molecular=molecular)
        toks = tuple(tokens(t, molecular=molecular)) if t is not None else ()
        if toks:
            texts[v] = toks
    out: list[Triple] = []
    for u, v, d in graph.edges(data=True):
        if u not in texts or v not in texts:
            continue
        head, tail = texts[u], texts[v]
        if not graph.is_directed() and tail < head:
            head, tail = tail, head
        rel = tuple(tokens(_edge_relation(d) or default)) or ("connected",)
        out.append((head, rel, tail))
    return sorted(out)


def _ngrams(seqs: Iterable[tuple[str, ...]], n: int) -> Counter[tuple[str, ...]]:
    c: Counter[tuple[str, ...]] = Counter()
    for s in seqs:
        for i in range(len(s) - n + 1):
            c[s[i:i + n]] += 1
    return c


def text_diagnostics(graph: nx.Graph, reference: nx.Graph, *,
                     molecular: bool = False) -> TextDiagnostics:
    """Text-F1, G-BLEU and G-ROUGE-2 of ``graph`` against ``reference`` (module docstring)."""
    cand, ref = triples(graph, molecular=molecular), triples(reference, molecular=molecular)
    if not cand and not ref:
        return TextDiagnostics(None, None, None)
    if not cand or not ref:
        return TextDiagnostics(0.0, 0.0, 0.0)
    cs, rs = set(cand), set(ref)
    f1 = 2.0 * len(cs & rs) / (len(cs) + len(rs))
    cseq = [h + r + t for h, r, t in cand]
    rseq = [h + r + t for h, r, t in ref]
    logs: list[float] = []
    for n in range(1, 5):
        cn, rn = _ngrams(cseq, n), _ngrams(rseq, n)
        total = sum(cn.values())
        if total == 0:
            continue
        matched = sum(min(c, rn[g]) for g, c in cn.items())
        if matched == 0:
            logs = []
            break
        logs.append(math.log(matched / total))
    if logs:
        c_len, r_len = sum(map(len, cseq)), sum(map(len, rseq))
        bp = 1.0 if c_len > r_len else math.exp(1.0 - r_len / c_len)
        bleu = bp * math.exp(fmean(logs))
    else:
        bleu = 0.0
    cb, rb = _ngrams(cseq, 2), _ngrams(rseq, 2)
    ref_bigrams = sum(rb.values())
    rouge = (sum(min(c, cb[g]) for g, c in rb.items()) / ref_bigrams) if ref_bigrams else None
    return TextDiagnostics(f1, bleu, rouge)


# -- results ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class D2Sample:
    """D2 of one valid sample.

    ``similarity``/``reference`` are ``None`` when no reference carries text (then ``value`` is
    ``None`` too); ``reference`` is the index of the closest reference.
    """

    value: float | None
    presence: float
    similarity: float | None
    reference: int | None
    diagnostics: TextDiagnostics | None = None


@dataclass(frozen=True)
class D2Result:
    """D2 of one instruction: means over the valid samples.

    ``value`` is ``None`` when D2 is absent (``reason`` says why: no reference with text, level
    without D2, infeasible); 0.0 when no sample is valid.  ``presence`` is reported even when
    the similarity is absent.  ``diagnostics`` holds the diagnostics' means (absent ones
    ``None``) when they were requested.
    """

    value: float | None
    presence: float | None
    similarity: float | None
    samples: tuple[D2Sample, ...] = ()
    n_valid: int = 0
    reason: str | None = None
    diagnostics: TextDiagnostics | None = None


def is_molecular(domain: str | None, references: Sequence[nx.Graph]) -> bool:
    """The molecular exception applies: ``domain`` is molecular, or (no domain given) a
    reference's ``domain`` attribute is."""
    if domain is not None:
        return domain == "molecular"
    return any(r.graph.get("domain") == "molecular" for r in references)


def sample_d2(graph: nx.Graph, references: Sequence[nx.Graph], *, domain: str | None = None,
              diagnostics: bool = False) -> D2Sample:
    """D2 of one graph against the references (see the module docstring)."""
    molecular = is_molecular(domain, references)
    presence = text_presence(graph, molecular=molecular)
    mine = text_tokens(graph, molecular=molecular)
    best: tuple[float, int] | None = None
    for i, r in enumerate(references):
        theirs = text_tokens(r, molecular=molecular)
        if not theirs:
            continue
        sim = dice(mine, theirs)
        if best is None or sim > best[0]:
            best = (sim, i)
    if best is None:
        return D2Sample(None, presence, None, None, None)
    diag = (text_diagnostics(graph, references[best[1]], molecular=molecular)
            if diagnostics else None)
    return D2Sample(0.5 * presence + 0.5 * best[0], presence, best[0], best[1], diag)


def graphs_d2(generated: Sequence[nx.Graph], references: Sequence[nx.Graph], *,
              domain: str | None = None, diagnostics: bool = False) -> D2Result:
    """D2 of the valid samples ``generated`` against ``references`` (``domain``: the
    instruction's, for the molecular exception)."""
    samples = tuple(sample_d2(g, references, domain=domain, diagnostics=diagnostics)
                    for g in generated)
    molecular = is_molecular(domain, references)
    if not any(text_tokens(r, molecular=molecular) for r in references):
        reason = ("no reference carries text: text similarity is absent" if references
                  else "no reference")
        presence = fmean(s.presence for s in samples) if samples else None
        return D2Result(None, presence, None, samples, len(samples), reason)
    if not samples:
        return D2Result(0.0, None, None, (), 0, "no valid sample")
    diag = None
    if diagnostics:
        diag = TextDiagnostics(*(mean_present(getattr(s.diagnostics, f) for s in samples)
                                 for f in ("text_f1", "g_bleu", "g_rouge2")))
    return D2Result(
        value=fmean(s.value for s in samples if s.value is not None),
        presence=fmean(s.presence for s in samples),
        similarity=fmean(s.similarity for s in samples if s.similarity is not None),
        samples=samples, n_valid=len(samples), diagnostics=diag)


def instruction_d2(instruction: Instruction, samples: Sequence[Verification], *,
                   diagnostics: bool = False) -> D2Result:
    """D2 of one instruction from its samples' verifications (valid samples only).

    Instructions below L4 and infeasible ones get ``value=None`` with a reason.
    """
    if instruction.level not in ACTIVE_LEVELS:
        return D2Result(None, None, None, reason=f"D2 is not computed at L{instruction.level}")
    if not instruction.feasible:
        return D2Result(None, None, None, reason="infeasible instruction")
    refs = [r.graph for r in instruction.reference_graphs]
    graphs = [s.parse.graph.graph for s in samples if is_valid(s) and s.parse.graph]
    return graphs_d2(graphs, refs, domain=instruction.domain, diagnostics=diagnostics)
