"""Level 5 of the suite: multi-step editing of a given base graph.

:func:`build_level5` returns ``count`` instruction records ``L5-001``, ``L5-002``, … in the
GraphInstruct schema, each with ``base_graph`` (code-style), two verified
``reference_solutions``, one ``graph_edits`` entry per reference (the GraphEdit that turns the
base into it), ``reasoning_steps`` and ``solution_verification``.  The task templates live in
:mod:`.l5_templates` (constructions with planted, provable answers).

Promises:

* **Deterministic.**  The records are a pure function of ``(seed, count)``: all randomness comes
  from :func:`~.common.rng_for` (``rng_for(seed, "L5", "schedule", bucket)`` for the template
  order, ``rng_for(seed, "L5", index, template, bucket)`` for one record), and JSON output of two
  builds is byte-identical.
* **Stratified.**  Record ``i`` (0-based) serves size bucket ``("small", "medium", "large")[i %
  3]`` — by the *result* graph's node count — so every bucket holds ``⌊count/3⌋`` or
  ``⌈count/3⌉`` records (17/17/16 for 50, 50/50/50 for 150); templates are spread evenly over
  the buckets and overall (:func:`schedule`).
* **Verified.**  Every reference passes the whole verifier against its own instruction and
  round-trips through the serializer (:func:`~.common.check_reference`); every GraphEdit,
  applied to the base graph the way the verifier applies answers, gives exactly its reference
  and passes the verifier too.  The two references are non-isomorphic unless the task's answer
  is unique (``solution_verification.has_unique_solution``), in which case they coincide.
  A record that cannot meet all this raises :class:`~.common.BuildError`; nothing is skipped.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import networkx as nx

from pytest_graphinstruct.build.common import (
    BuildError,
    as_instruction,
    check_reference,
    invariant,
    make_record,
)
from pytest_graphinstruct.build.l5_graphs import nkey, pair_key
from pytest_graphinstruct.build.l5_templates import TEMPLATES, Draft
from pytest_graphinstruct.build.streams import rng_for
from pytest_graphinstruct.graphs.parse import parse_graph
from pytest_graphinstruct.graphs.serialize import quote, serialize
from pytest_graphinstruct.suite.constraints import parse_constraint
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify.implicit import infer_implicit
from pytest_graphinstruct.verify.verifier import DEFAULT_VERIFIER
from pytest_graphinstruct.vocab import SIZE_BUCKETS, size_bucket

BUCKETS: tuple[str, ...] = SIZE_BUCKETS
#: Fresh constructions a record may try before the build fails.
DRAFT_TRIES = 30
#: Draws per answer (first answer, then a non-isomorphic second one) before re-drafting.
ANSWER_TRIES = 60
_WIDTH = 72


def schedule(seed: int, count: int) -> list[tuple[str, str]]:
    """``(template, bucket)`` for records ``1..count``.

    Buckets cycle small, medium, large.  Each record takes, among the templates serving its
    bucket, the one with the fewest records in that bucket so far, then the fewest overall,
    then the earliest in an order shuffled by the seed; so within a bucket every template
    appears before any appears twice, and overall counts differ by little.
    """
    rank = list(TEMPLATES)
    rng_for(seed, "L5", "schedule").shuffle(rank)
    total = dict.fromkeys(rank, 0)
    per_bucket = {b: dict.fromkeys(rank, 0) for b in BUCKETS}
    out = []
    for i in range(count):
        bucket = BUCKETS[i % len(BUCKETS)]
        eligible = [t for t in rank if bucket in TEMPLATES[t][1]]
        pick = min(eligible, key=lambda t: (per_bucket[bucket][t], total[t], rank.index(t)))
        per_bucket[bucket][pick] += 1
        total[pick] += 1
        out.append((pick, bucket))
    return out


def build_level5(seed: int, count: int = 50) -> list[dict[str, Any]]:
    """``count`` verified L5 records (see the module docstring for the promises).

    Raises:
        ValueError: ``count`` is negative.
        BuildError: a template could not produce a verified record (a builder bug).
    """
    if count < 0:
        raise ValueError(f"count must be non-negative, got {count}")
    return [_build_one(seed, i, template, bucket)
            for i, (template, bucket) in enumerate(schedule(seed, count), start=1)]


def _build_one(seed: int, index: int, template: str, bucket: str) -> dict[str, Any]:
    iid = f"L5-{index:03d}"
    rng = rng_for(seed, "L5", index, template, bucket)
    make, _ = TEMPLATES[template]
    why = "construction rejected"
    for _ in range(DRAFT_TRIES):
        draft = make(rng, bucket)
        if draft is None:
            why = "construction rejected"
            continue
        answers = _answers(draft, rng)
        if answers is None:
            why = "no two non-isomorphic answers"
            continue
        got = size_bucket(answers[0].number_of_nodes())
        if got != bucket:
            raise BuildError(f"{iid} ({template}): result has {answers[0].number_of_nodes()} "
                             f"nodes ({got}), scheduled for {bucket}")
        return _record(iid, template, bucket, draft, answers)
    raise BuildError(f"{iid} ({template}, {bucket}): no draft after {DRAFT_TRIES} tries: {why}")


def _answers(draft: Draft, rng: random.Random) -> list[nx.Graph] | None:
    """Two correct results, provably non-isomorphic (:func:`~.common.invariant` differs)
    unless the draft's answer is unique; ``None`` when the draws do not give that."""
    first = None
    for _ in range(ANSWER_TRIES):
        first = draft.draw(rng)
        if first is not None:
            break
    if first is None:
        return None
    if draft.unique:
        return [first, first]
    # Non-isomorphism is proved by a cheap invariant; a draw it cannot tell apart is redrawn
    # rather than settled by VF2, which is very slow on the regular graphs of make_regular.
    key = invariant(first)
    for _ in range(ANSWER_TRIES):
        g = draft.draw(rng)
        if g is not None and invariant(g) != key:
            return [first, g]
    return None


def _record(iid: str, template: str, bucket: str, draft: Draft,
            answers: Sequence[nx.Graph]) -> dict[str, Any]:
    implicit = [c.text for c in infer_implicit([parse_constraint(s) for s in draft.explicit])]
    rec = make_record(
        iid, 5, draft.text, draft.explicit, implicit, size=bucket, template=template,
        extra={
            "base_graph": serialize(draft.base, name=f"{iid}-base"),
            "graph_edits": [],
            "reasoning_steps": [{"step": i, "type": t, "description": d}
                                for i, (t, d) in enumerate(draft.steps, start=1)],
            "solution_verification": {
                "has_unique_solution": draft.unique,
                "verification_method": draft.method,
                "notes": draft.notes,
            },
        })
    inst = as_instruction(rec)
    refs, edits = [], []
    for j, g in enumerate(answers, start=1):
        text, why = check_reference(inst, g, f"{iid}-ref{j}")
        if text is None:
            raise BuildError(f"{iid} ({template}): reference {j} fails: {why}")
        refs.append(text)
        added, removed = edge_diff(draft.base, g)
        edit = edit_text(f"{iid}-edit{j}", draft.operation, added, removed,
                         _reason(draft.edit_reason, len(added), len(removed)))
        problem = edit_problem(inst, edit, text)
        if problem:
            raise BuildError(f"{iid} ({template}): edit {j} {problem}")
        edits.append(edit)
    rec["reference_solutions"] = refs
    rec["graph_edits"] = edits
    return rec


def _reason(lead: str, added: int, removed: int) -> str:
    parts = []
    if removed:
        parts.append(f"removed {removed} edge{'s' if removed != 1 else ''}")
    if added:
        parts.append(f"added {added} edge{'s' if added != 1 else ''}")
    return f"{lead} ({' and '.join(parts) or 'no change'})."


def edge_diff(base: nx.Graph, result: nx.Graph) -> tuple[list[tuple[str, str]],
                                                         list[tuple[str, str]]]:
    """``(added, removed)``: result edges not in the base and base edges not in the result,
    compared as arcs when both are directed, else as unordered pairs; sorted, numeric ids
    numerically, undirected pairs written smaller id first."""
    directed = base.is_directed() and result.is_directed()
    be = {pair_key(directed, str(u), str(v)) for u, v in base.edges()}
    re_ = {pair_key(directed, str(u), str(v)) for u, v in result.edges()}

    def order(edges: set[tuple[str, str]]) -> list[tuple[str, str]]:
        return sorted(edges, key=lambda e: (nkey(e[0]), nkey(e[1])))

    return order(re_ - be), order(be - re_)


def _edge_items(edges: Sequence[tuple[str, str]]) -> list[str]:
    return [f"({quote(u)},{quote(v)})" for u, v in edges]


def _wrapped(prefix: str, items: list[str]) -> list[str]:
    one = f"{prefix}[{', '.join(items)}];"
    if len(one) <= _WIDTH:
        return [one]
    lines, current = [f"{prefix}["], ""
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else "];")
        if current and 8 + len(current) + 1 + len(piece) > _WIDTH:
            lines.append(" " * 8 + current)
            current = piece
        else:
            current = f"{current} {piece}" if current else piece
    lines.append(" " * 8 + current)
    return lines


def edit_text(name: str, operation: str, added: Sequence[tuple[str, str]],
              removed: Sequence[tuple[str, str]], reasoning: str) -> str:
    """A ``GraphEdit[name=…, base='given-graph', operation=…] {…}`` block listing ``added`` and
    ``removed`` edges (in the given order) and a ``reasoning`` string."""
    lines = [f"GraphEdit[name={quote(name)}, base='given-graph', operation={quote(operation)}] {{"]
    lines += _wrapped("    add_edges = ", _edge_items(added))
    lines += _wrapped("    remove_edges = ", _edge_items(removed))
    lines.append(f"    reasoning = {quote(reasoning)};")
    lines.append("}")
    return "\n".join(lines)


def edit_problem(inst: Instruction, edit: str, reference: str) -> str:
    """Why ``edit`` is not a faithful, passing answer for ``reference`` ("" when it is): it must
    parse, applied to the base as the verifier applies answers (dropping nodes it isolates for
    node-removing tasks) give the reference's nodes and edges, and pass the verifier."""
    parsed = DEFAULT_VERIFIER.parse(inst, edit)
    if parsed.graph is None:
        return f"does not parse: {parsed.reason}"
    got, want = parsed.graph.graph, parse_graph(reference).graph
    if set(got.nodes()) != set(want.nodes()):
        return "gives other nodes than its reference"
    added, removed = edge_diff(want, got)
    if added or removed or got.is_directed() != want.is_directed():
        return "gives other edges than its reference"
    v = DEFAULT_VERIFIER.verify(inst, edit)
    if not v.passed:
        failed = [x.constraint for x in v.verdicts if not x.satisfied]
        return f"fails the verifier: {failed}"
    return ""
