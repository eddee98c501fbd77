"""Constrained decoding: the endpoint may only emit text of the answer format.

``--gi-constrained`` adds, next to every baseline cell, a cell whose requests carry a decoding
constraint (method ``constrained``, label ``<model>-<strategy>-constrained``), so its effect on
validity, quality and cost shows side by side in one report.  The prompts are the baseline's.

Two forms (``gi_constrained_format``):

* ``gbnf`` — a GBNF grammar of the code-style graph format (``grammars/graph_code.gbnf``) sent
  as ``"grammar"`` in the request body, as llama.cpp servers (the embedded ``local`` model)
  accept it.  Levels 0-4 allow ``Graph[...]``/``DiGraph[...]`` or a refusal; level 5 also a
  ``GraphEdit[...]``.  A refusal must start with "No such graph exists" (the parser reads it as
  a refusal), so infeasible instructions can still be answered correctly.
* ``json-schema`` — an OpenAI structured-output ``response_format`` (``json_schema``, strict)
  for the JSON graph form ``{"answer": {"directed", "nodes", "edges"}}`` or
  ``{"answer": {"refusal": "..."}}``; the parser reads both.  It carries no node or edge
  attributes and no edits (an L5 answer is the complete result graph).
* ``auto`` (default) — ``gbnf`` for ``local``, ``json-schema`` for every other model.

The constraint leaves no room for reasoning text: a chain-of-thought cell that is constrained
answers with the graph directly.  Constraints travel in :attr:`Request.extra`, so they are part of
the cache key and a constrained answer is never served to the baseline cell.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any, Final

from pytest_graphinstruct.options import CONSTRAINED_FORMATS

FORMATS: Final = CONSTRAINED_FORMATS

_ROOT_GRAPH: Final = "root ::= graph | refusal"
_ROOT_EDIT: Final = "root ::= edit | graph | refusal"


def resolve_format(fmt: str, model: str) -> str:
    """``gbnf`` or ``json-schema`` for ``model`` (``auto``: ``gbnf`` for ``local`` only).

    Raises:
        ValueError: ``fmt`` is not one of :data:`FORMATS`.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown constrained format {fmt!r} (choose from {', '.join(FORMATS)})")
    if fmt != "auto":
        return fmt
    return "gbnf" if model == "local" else "json-schema"


@functools.cache
def _grammar_rules() -> str:
    return (resources.files("pytest_graphinstruct.methods") / "grammars" / "graph_code.gbnf"
            ).read_text(encoding="utf-8")


def grammar(level: int) -> str:
    """The GBNF grammar for an instruction of ``level`` (edits allowed on level 5 only)."""
    root = _ROOT_EDIT if level == 5 else _ROOT_GRAPH
    return f"{root}\n{_grammar_rules()}"


def _obj(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": list(properties),
            "properties": properties}


def response_format() -> dict[str, Any]:
    """The strict JSON-schema ``response_format`` of the JSON graph form (see module doc)."""
    edge = _obj({"source": {"type": "string"}, "target": {"type": "string"}})
    graph = _obj({
        "directed": {"type": "boolean"},
        "nodes": {"type": "array", "items": {"type": "string"},
                  "description": "every node id"},
        "edges": {"type": "array", "items": edge, "description": "every edge"},
    })
    refusal = _obj({"refusal": {
        "type": "string",
        "description": "only when no graph can meet the requirements: 'No such graph exists "
                       "because ...'"}})
    return {"type": "json_schema", "json_schema": {
        "name": "graph_answer", "strict": True,
        "schema": _obj({"answer": {"anyOf": [graph, refusal]}})}}


def request_extra(fmt: str, level: int) -> tuple[tuple[str, Any], ...]:
    """The request-body fields that constrain one request (``fmt`` already resolved)."""
    if fmt == "gbnf":
        return (("grammar", grammar(level)),)
    if fmt == "json-schema":
        return (("response_format", response_format()),)
    raise ValueError(f"unresolved constrained format {fmt!r}")
