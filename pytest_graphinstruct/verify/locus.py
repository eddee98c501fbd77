"""A verdict's locus: where in the graph a check fails, as typed, named lists.

The checks build a locus as a JSON-ready mapping (``{"nodes": [...], "count": 3}``); a
:class:`Locus` is that mapping read once against :data:`LOCUS_KEYS`, which says what every name
holds, so a reader (the HTML report marks the nodes and edges it names) never guesses a shape.
Names keep the order the check gave them, so the JSON written is the mapping as built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

LocusKind = Literal["nodes", "edges", "groups", "numbers", "sides", "count"]
"""What a locus entry holds: node ids; edges ``[u, v]``; groups of node ids (components,
triangles: they name no one node as wrong); numbers (degrees, sizes); per component the sizes
of its two sides ``[p, q]``; one count."""

LOCUS_KEYS: Mapping[str, LocusKind] = {
    "nodes": "nodes", "self_loops": "nodes", "odd_cycle": "nodes", "missing_nodes": "nodes",
    "extra_nodes": "nodes", "unreached_nodes": "nodes",
    "edges": "edges", "cycle": "edges", "kuratowski_edges": "edges", "antiparallel": "edges",
    "cut_edges": "edges", "missing_edges": "edges", "extra_edges": "edges", "bridges": "edges",
    "components": "groups", "triangles": "groups", "component_sides": "sides",
    "degrees": "numbers", "component_sizes": "numbers",
    "count": "count", "cycle_length": "count", "odd_cycle_length": "count",
}
"""Every name a locus may hold and what it holds; a list's name with ``_count`` appended is
its full length (the list itself is capped)."""

NodeId = str | int
LocusValue = int | tuple[NodeId, ...] | tuple[tuple[NodeId, ...], ...]


def locus_kind(name: str) -> LocusKind | None:
    """What the entry ``name`` holds (``None``: not a locus name)."""
    kind = LOCUS_KEYS.get(name)
    if kind is None and name.endswith("_count") and LOCUS_KEYS.get(name[:-6], "count") != "count":
        return "count"
    return kind


def _node(value: Any, where: str) -> NodeId:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError(f"{where}: a node id is a string or an integer, not {value!r}")
    return value


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{where}: expected a count, got {value!r}")
    return value


def _list(value: Any, where: str) -> Sequence[Any]:
    if not isinstance(value, list | tuple):
        raise ValueError(f"{where}: expected a list, got {value!r}")
    return value


def _entry(name: str, kind: LocusKind, value: Any) -> LocusValue:
    if kind == "count":
        return _count(value, name)
    items = _list(value, name)
    if kind == "nodes":
        return tuple(_node(x, f"{name}[{k}]") for k, x in enumerate(items))
    if kind == "numbers":
        return tuple(_count(x, f"{name}[{k}]") for k, x in enumerate(items))
    if kind == "sides":
        return tuple(_sides(x, f"{name}[{k}]") for k, x in enumerate(items))
    out = []
    for k, x in enumerate(items):
        group = tuple(_node(y, f"{name}[{k}]") for y in _list(x, f"{name}[{k}]"))
        if kind == "edges" and len(group) != 2:
            raise ValueError(f"{name}[{k}]: an edge is [u, v], got {x!r}")
        out.append(group)
    return tuple(out)


def _sides(value: Any, where: str) -> tuple[int, ...]:
    sides = tuple(_count(x, where) for x in _list(value, where))
    if len(sides) != 2:
        raise ValueError(f"{where}: expected [p, q], got {value!r}")
    return sides


@dataclass(frozen=True)
class Locus:
    """Where a check fails: ``(name, value)`` entries in the order the check gave them, each
    name one of :data:`LOCUS_KEYS` (or a list's ``<name>_count``).  Empty when the check holds
    or no locus applies."""

    entries: tuple[tuple[str, LocusValue], ...] = ()

    @classmethod
    def of(cls, where: Mapping[str, Any]) -> Locus:
        """The locus of a check's JSON-ready mapping (also its JSON in a report).

        Raises:
            ValueError: a name that is no locus name, or a value not of its name's kind (the
                message names the entry).
        """
        entries = []
        for name, value in where.items():
            kind = locus_kind(name)
            if kind is None:
                raise ValueError(f"{name}: not a locus name")
            entries.append((name, _entry(name, kind, value)))
        return cls(tuple(entries))

    def __bool__(self) -> bool:
        return bool(self.entries)

    def to_json(self) -> dict[str, Any]:
        return {name: _json(value) for name, value in self.entries}

    @property
    def nodes(self) -> tuple[NodeId, ...]:
        """The node ids the locus names as wrong, in order (edges' endpoints not included)."""
        return tuple(x for name, value in self.entries
                     if LOCUS_KEYS.get(name) == "nodes" and isinstance(value, tuple)
                     for x in value if not isinstance(x, tuple))

    @property
    def edges(self) -> tuple[tuple[NodeId, NodeId], ...]:
        """The edges ``(u, v)`` the locus names as wrong, in order."""
        return tuple((x[0], x[1]) for name, value in self.entries
                     if LOCUS_KEYS.get(name) == "edges" and isinstance(value, tuple)
                     for x in value if isinstance(x, tuple))


def _json(value: LocusValue) -> Any:
    if isinstance(value, int):
        return value
    return [list(x) if isinstance(x, tuple) else x for x in value]


def locus_schema() -> dict[str, Any]:
    """The JSON Schema of a locus, from :data:`LOCUS_KEYS`."""
    node: dict[str, Any] = {"type": ["string", "integer"]}
    count: dict[str, Any] = {"type": "integer", "minimum": 0}
    shapes: dict[LocusKind, dict[str, Any]] = {
        "nodes": {"type": "array", "items": node},
        "edges": {"type": "array", "items": {"type": "array", "items": node,
                                             "minItems": 2, "maxItems": 2}},
        "groups": {"type": "array", "items": {"type": "array", "items": node}},
        "numbers": {"type": "array", "items": count},
        "sides": {"type": "array", "items": {"type": "array", "items": count,
                                             "minItems": 2, "maxItems": 2}},
        "count": count,
    }
    properties = {name: shapes[kind] for name, kind in LOCUS_KEYS.items()}
    lists = "|".join(name for name, kind in LOCUS_KEYS.items() if kind != "count")
    first = (Locus.__doc__ or "").strip().split("\n\n")[0]
    return {"type": "object", "description": " ".join(first.split()), "properties": properties,
            "patternProperties": {f"^({lists})_count$": count},
            "additionalProperties": False}
