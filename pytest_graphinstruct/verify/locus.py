"""A verdict's locus: where in the graph a check fails, as typed, named lists.

A check builds its :class:`Locus` entry by entry with the builder of each entry's kind
(:meth:`Locus.with_nodes`, :meth:`Locus.with_edges`, …), whose name parameter admits only the
names of that kind; :data:`LOCUS_KEYS` says what every name holds, so a reader (the HTML report
marks the nodes and edges it names) never guesses a shape.  Entries keep the order the check
added them in, so the JSON written (:meth:`Locus.to_json`) is the locus as built;
:meth:`Locus.of` reads that JSON back.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

LocusKind = Literal["nodes", "edges", "groups", "numbers", "sides", "count"]
"""What a locus entry holds: node ids; edges ``[u, v]``; groups of node ids (components,
triangles: they name no one node as wrong); numbers (degrees, sizes); per component the sizes
of its two sides ``[p, q]``; one count."""

NodesName = Literal["nodes", "self_loops", "odd_cycle", "missing_nodes", "extra_nodes",
                    "unreached_nodes"]
"""The names of entries that list node ids."""
EdgesName = Literal["edges", "cycle", "kuratowski_edges", "antiparallel", "cut_edges",
                    "missing_edges", "extra_edges", "bridges"]
"""The names of entries that list edges ``[u, v]``."""
GroupsName = Literal["components", "triangles"]
"""The names of entries that list groups of node ids."""
SidesName = Literal["component_sides"]
"""The names of entries that list per-component side sizes ``[p, q]``."""
NumbersName = Literal["degrees", "component_sizes"]
"""The names of entries that list numbers."""
CountName = Literal["count", "cycle_length", "odd_cycle_length"]
"""The names of entries that hold one count."""
ListName = NodesName | EdgesName | GroupsName | SidesName | NumbersName
"""The names of entries that hold a list (each may be followed by its ``<name>_count``)."""


def _named(kind: LocusKind, names: Any) -> dict[str, LocusKind]:
    return {name: kind for name in get_args(names)}


LOCUS_KEYS: Mapping[str, LocusKind] = {
    **_named("nodes", NodesName), **_named("edges", EdgesName), **_named("groups", GroupsName),
    **_named("sides", SidesName), **_named("numbers", NumbersName),
    **_named("count", CountName),
}
"""Every name a locus may hold and what it holds (the names of each kind are its ``…Name``
type); a list's name with ``_count`` appended is its full length (the list itself is capped)."""

NodeId = str | int
LocusValue = int | tuple[NodeId, ...] | tuple[tuple[NodeId, ...], ...]


def locus_kind(name: str) -> LocusKind | None:
    """What the entry ``name`` holds (``None``: not a locus name)."""
    kind = LOCUS_KEYS.get(name)
    if kind is None and name.endswith("_count") and LOCUS_KEYS.get(name[:-6], "count") != "count":
        return "count"
    return kind


def _at(name: str, index: int | None) -> str:
    return name if index is None else f"{name}[{index}]"


_NODE_TYPES = frozenset({str, int})
_COUNT_TYPES = frozenset({int})


def _nodes(items: Sequence[Any], name: str, index: int | None = None) -> tuple[NodeId, ...]:
    """``items`` as node ids; an error names ``name[index]``, or each item's own index."""
    if _NODE_TYPES.issuperset(map(type, items)):  # the common case, checked at C speed
        return tuple(items)
    for k, x in enumerate(items):
        if isinstance(x, bool) or not isinstance(x, str | int):
            raise ValueError(f"{_at(name, k if index is None else index)}: a node id is a "
                             f"string or an integer, not {x!r}")
    return tuple(items)


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{where}: expected a count, got {value!r}")
    return value


def _counts(items: Sequence[Any], name: str, index: int | None = None) -> tuple[int, ...]:
    """``items`` as counts; an error names ``name[index]``, or each item's own index."""
    if _COUNT_TYPES.issuperset(map(type, items)) and (not items or min(items) >= 0):
        return tuple(items)
    for k, x in enumerate(items):
        if isinstance(x, bool) or not isinstance(x, int) or x < 0:
            raise ValueError(f"{_at(name, k if index is None else index)}: expected a count, "
                             f"got {x!r}")
    return tuple(items)


def _list(value: Any, name: str, index: int | None = None) -> Sequence[Any]:
    if not isinstance(value, list | tuple):
        raise ValueError(f"{_at(name, index)}: expected a list, got {value!r}")
    return value


def _entry(name: str, kind: LocusKind, value: Any) -> LocusValue:
    """``value`` in the typed form of ``kind`` (tuples), or a ValueError naming the entry."""
    if kind == "count":
        return _count(value, name)
    items = _list(value, name)
    if kind == "nodes":
        return _nodes(items, name)
    if kind == "numbers":
        return _counts(items, name)
    out = []
    for k, x in enumerate(items):
        if kind == "sides":
            group: tuple[NodeId, ...] = _counts(_list(x, name, k), name, k)
            if len(group) != 2:
                raise ValueError(f"{name}[{k}]: expected [p, q], got {x!r}")
        else:
            group = _nodes(_list(x, name, k), name, k)
            if kind == "edges" and len(group) != 2:
                raise ValueError(f"{name}[{k}]: an edge is [u, v], got {x!r}")
        out.append(group)
    return tuple(out)


@dataclass(frozen=True)
class Locus:
    """Where a check fails: ``(name, value)`` entries in the order the check gave them, each
    name one of :data:`LOCUS_KEYS` (or a list's ``<name>_count``).  Empty when the check holds
    or no locus applies.

    Build one with the ``with_*`` builder of each entry's kind (each returns a new locus with
    the entry appended); read one from its JSON with :meth:`of`.

    Raises:
        ValueError: an entry whose name is no locus name or is given twice, or whose value is
            not of its name's kind in typed form (tuples, node ids as strings or integers,
            counts as non-negative integers); the message names the entry.
    """

    entries: tuple[tuple[str, LocusValue], ...] = ()

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for name, value in self.entries:
            kind = locus_kind(name)
            if kind is None:
                raise ValueError(f"{name}: not a locus name")
            if name in seen:
                raise ValueError(f"{name}: named twice")
            seen.add(name)
            if _entry(name, kind, value) != value:
                raise ValueError(f"{name}: expected the typed form (tuples), got {value!r}")

    @classmethod
    def of(cls, where: object) -> Locus:
        """The locus of its JSON (a report's ``where``).

        Raises:
            ValueError: ``where`` is not an object, a name is no locus name, or a value is
                not of its name's kind (the message names the entry).
        """
        if not isinstance(where, Mapping):
            raise ValueError(f"a locus is an object of named lists, got {type(where).__name__}")
        entries = []
        for name, value in where.items():
            kind = locus_kind(name)
            if kind is None:
                raise ValueError(f"{name}: not a locus name")
            entries.append((name, _entry(name, kind, value)))
        return cls._checked(tuple(entries))  # a mapping names each entry once

    def with_nodes(self, name: NodesName, ids: Iterable[Hashable], *,
                   cap: int | None = None) -> Locus:
        """This locus and the node ids ``ids`` (strings or integers) under ``name``; with
        ``cap``, only when there are any: the first ``cap`` and ``<name>_count``, how many."""
        return self._listed(name, "nodes", ids, cap)

    def with_edges(self, name: EdgesName, edges: Iterable[Sequence[Hashable]], *,
                   cap: int | None = None) -> Locus:
        """This locus and the edges ``[u, v]`` under ``name``; with ``cap``, only when there
        are any: the first ``cap`` and ``<name>_count``, how many."""
        return self._listed(name, "edges", edges, cap)

    def with_groups(self, name: GroupsName, groups: Iterable[Sequence[Hashable]], *,
                    cap: int | None = None) -> Locus:
        """This locus and the groups of node ids under ``name``; with ``cap``, only when there
        are any: the first ``cap`` and ``<name>_count``, how many."""
        return self._listed(name, "groups", groups, cap)

    def with_numbers(self, name: NumbersName, numbers: Iterable[int], *,
                     cap: int | None = None) -> Locus:
        """This locus and the non-negative ``numbers`` under ``name``; with ``cap``, only when
        there are any: the first ``cap`` and ``<name>_count``, how many."""
        return self._listed(name, "numbers", numbers, cap)

    def with_sides(self, name: SidesName, sides: Iterable[Sequence[int]]) -> Locus:
        """This locus and the side sizes ``[p, q]`` under ``name``."""
        return self._with(name, "sides", list(sides))

    def with_count(self, name: CountName, count: int) -> Locus:
        """This locus and the non-negative ``count`` under ``name``."""
        return self._with(name, "count", count)

    def with_total(self, name: ListName, total: int) -> Locus:
        """This locus and ``<name>_count``: the full length of the (capped) list ``name``."""
        return self._with(f"{name}_count", "count", total)

    def _listed(self, name: ListName, kind: LocusKind, items: Iterable[Any],
                cap: int | None) -> Locus:
        """The list ``items`` under ``name``; with ``cap``: nothing when ``items`` is empty,
        else its first ``cap`` items followed by ``<name>_count``, its full length."""
        listed = list(items)
        if cap is None:
            return self._with(name, kind, listed)
        if not listed:
            return self
        return self._with(name, kind, listed[:cap]).with_total(name, len(listed))

    def _with(self, name: str, kind: LocusKind, value: Any) -> Locus:
        if locus_kind(name) != kind:  # the name types say so, but not to an untyped caller
            raise ValueError(f"{name}: not a locus name of kind {kind}")
        if any(name == known for known, _ in self.entries):
            raise ValueError(f"{name}: named twice")
        return Locus._checked((*self.entries, (name, _entry(name, kind, value))))

    @classmethod
    def _checked(cls, entries: tuple[tuple[str, LocusValue], ...]) -> Locus:
        """A locus of ``entries`` already validated (a builder checks only the entry it adds,
        not every entry again)."""
        locus = object.__new__(cls)
        object.__setattr__(locus, "entries", entries)
        return locus

    def __bool__(self) -> bool:
        return bool(self.entries)

    def to_json(self) -> dict[str, Any]:
        """The JSON of the locus: each entry under its name, in order, tuples as lists."""
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
