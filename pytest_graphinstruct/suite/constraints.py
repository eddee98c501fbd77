"""The constraint language: ``key OP value`` strings parsed into typed :class:`Constraint` objects.

Grammar: ``key`` is a lower-case identifier from :data:`KEYS`; ``OP`` is one of ``= == != <= >= <
>`` (``==`` is read as ``=``); ``value`` is typed by the key (see :class:`ValueKind`).  Parsing
never guesses: an unknown key, an operator the key does not allow, or a value of the wrong type
raises :class:`~pytest_graphinstruct.errors.ConstraintError` naming the string.

Semantics of each key live in ``verify/checks.py`` and docs/CONSTRAINTS.md; this module only
knows syntax and types.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass

from pytest_graphinstruct.errors import ConstraintError


class Op(enum.Enum):
    """Comparison operators, by their canonical spelling."""

    EQ = "="
    NE = "!="
    LE = "<="
    GE = ">="
    LT = "<"
    GT = ">"

    def compare(self, observed: float, bound: float) -> bool:
        """``observed OP bound`` with plain float semantics (NaN compares false except ``!=``)."""
        if self is Op.EQ:
            return observed == bound
        if self is Op.NE:
            return observed != bound
        if self is Op.LE:
            return observed <= bound
        if self is Op.GE:
            return observed >= bound
        if self is Op.LT:
            return observed < bound
        return observed > bound


class ValueKind(enum.Enum):
    """The value type a key takes."""

    INT = "int"  #: non-negative integer
    FLOAT = "float"  #: finite real number
    BOOL = "bool"  #: ``true``/``false`` (any case)
    PAIR = "pair"  #: two non-negative integers ``p,q``
    NAME = "name"  #: an identifier from the key's vocabulary (or any identifier if open)


GRAPH_TYPES: frozenset[str] = frozenset(
    {
        "tree", "forest", "path", "cycle", "star", "wheel", "grid", "complete",
        "complete_bipartite", "bipartite", "dag", "connected", "regular", "planar", "acyclic",
    }
)

DOMAINS: frozenset[str] = frozenset(
    {
        "social", "citation", "biological", "ecological", "communication", "infrastructure",
        "knowledge_graph", "molecular", "general",
    }
)

_ALL_OPS = frozenset(Op)
_EQ_NE = frozenset({Op.EQ, Op.NE})
_EQ = frozenset({Op.EQ})


@dataclass(frozen=True)
class KeySpec:
    """What a key accepts: its value kind, operators and (for names) vocabulary."""

    kind: ValueKind
    ops: frozenset[Op]
    vocabulary: frozenset[str] | None = None  # None: any identifier
    metadata: bool = False  # describes the task rather than the graph (always satisfied)


KEYS: dict[str, KeySpec] = {
    "num_nodes": KeySpec(ValueKind.INT, _ALL_OPS),
    "num_edges": KeySpec(ValueKind.INT, _ALL_OPS),
    "directed": KeySpec(ValueKind.BOOL, _EQ_NE),
    "connected": KeySpec(ValueKind.BOOL, _EQ_NE),
    "acyclic": KeySpec(ValueKind.BOOL, _EQ_NE),
    "planar": KeySpec(ValueKind.BOOL, _EQ_NE),
    "bipartite": KeySpec(ValueKind.BOOL, _EQ_NE),
    "bipartite_sides": KeySpec(ValueKind.PAIR, _EQ),
    "graph_type": KeySpec(ValueKind.NAME, _EQ_NE, GRAPH_TYPES),
    "degree": KeySpec(ValueKind.INT, _ALL_OPS),
    "min_degree": KeySpec(ValueKind.INT, _ALL_OPS),
    "max_degree": KeySpec(ValueKind.INT, _ALL_OPS),
    "diameter": KeySpec(ValueKind.INT, _ALL_OPS),
    "density": KeySpec(ValueKind.FLOAT, _ALL_OPS),
    "modularity": KeySpec(ValueKind.FLOAT, _ALL_OPS),
    "clustering_coefficient": KeySpec(ValueKind.FLOAT, _ALL_OPS),
    "average_path_length": KeySpec(ValueKind.FLOAT, _ALL_OPS),
    "num_components": KeySpec(ValueKind.INT, _ALL_OPS),
    "edge_connectivity": KeySpec(ValueKind.INT, _ALL_OPS),
    "task_type": KeySpec(ValueKind.NAME, _EQ, None, metadata=True),
    "domain": KeySpec(ValueKind.NAME, _EQ, DOMAINS, metadata=True),
}

#: Float keys whose ``<=``/``>=`` bounds are relaxed by 5 % of the bound's magnitude (reference
#: semantics, so scores stay comparable with the paper).
TOLERANT_KEYS: frozenset[str] = frozenset(
    {"density", "modularity", "clustering_coefficient", "average_path_length"}
)
TOLERANCE = 0.05

_CONSTRAINT_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(==|<=|>=|!=|=|<|>)\s*(.*?)\s*$", re.S)
_INT_RE = re.compile(r"^[+]?\d+$")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")

Value = int | float | bool | str | tuple[int, int]


@dataclass(frozen=True)
class Constraint:
    """One parsed constraint.

    ``text`` is the string exactly as written in the instruction (or, for derived constraints,
    the derived form), ``value`` the typed value: ``int`` for INT keys, ``float`` for FLOAT keys,
    ``bool``, ``str`` (names, lower-case) or a sorted ``(p, q)`` pair for ``bipartite_sides``.
    """

    text: str
    key: str
    op: Op
    value: Value

    @property
    def spec(self) -> KeySpec:
        return KEYS[self.key]

    @property
    def canonical(self) -> str:
        """A normal form used to compare constraints (``'num_edges=4'``, ``'directed=false'``)."""
        return f"{self.key}{self.op.value}{format_value(self.value)}"

    def __str__(self) -> str:
        return self.text


def format_value(value: Value) -> str:
    """Render a typed value the way the constraint language writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return f"{value[0]},{value[1]}"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def parse_constraint(text: str) -> Constraint:
    """Parse one constraint string.

    Args:
        text: e.g. ``"num_nodes=10"``, ``"density<=0.45"``, ``"bipartite_sides=3,4"``.

    Returns:
        The typed constraint; ``text`` is kept verbatim.

    Raises:
        ConstraintError: not a string, no operator, unknown key, operator not allowed for the
            key, or a value that is not of the key's type (the message quotes ``text``).
    """
    if not isinstance(text, str):
        raise ConstraintError(f"constraint must be a string, got {type(text).__name__}: {text!r}")
    m = _CONSTRAINT_RE.match(text)
    if m is None:
        raise ConstraintError(f"malformed constraint {text!r}: expected 'key OP value'")
    key, op_text, raw = m.group(1), m.group(2), m.group(3)
    spec = KEYS.get(key)
    if spec is None:
        known = ", ".join(sorted(KEYS))
        raise ConstraintError(f"unknown constraint key {key!r} in {text!r} (known keys: {known})")
    op = Op.EQ if op_text == "==" else Op(op_text)
    if op not in spec.ops:
        allowed = " ".join(sorted(o.value for o in spec.ops))
        raise ConstraintError(f"operator {op.value!r} not allowed for {key!r} in {text!r} "
                              f"(allowed: {allowed})")
    if raw == "":
        raise ConstraintError(f"missing value in constraint {text!r}")
    return Constraint(text=text, key=key, op=op, value=_parse_value(key, spec, raw, text))


def _parse_value(key: str, spec: KeySpec, raw: str, text: str) -> Value:
    kind = spec.kind
    if kind is ValueKind.INT:
        if not _INT_RE.match(raw):
            raise ConstraintError(f"{key!r} needs a non-negative integer, got {raw!r} in {text!r}")
        return int(raw)
    if kind is ValueKind.FLOAT:
        try:
            value = float(raw)
        except ValueError:
            raise ConstraintError(f"{key!r} needs a number, got {raw!r} in {text!r}") from None
        if not math.isfinite(value):
            raise ConstraintError(f"{key!r} needs a finite number, got {raw!r} in {text!r}")
        return value
    if kind is ValueKind.BOOL:
        low = raw.strip("'\"").lower()
        if low not in ("true", "false"):
            raise ConstraintError(f"{key!r} needs true or false, got {raw!r} in {text!r}")
        return low == "true"
    if kind is ValueKind.PAIR:
        parts = [p.strip() for p in raw.strip("()[] ").split(",")]
        if len(parts) != 2 or not all(_INT_RE.match(p) for p in parts):
            raise ConstraintError(f"{key!r} needs two integers 'p,q', got {raw!r} in {text!r}")
        p, q = sorted(int(x) for x in parts)
        return (p, q)
    name = raw.strip("'\"").lower()
    if not _NAME_RE.match(name):
        raise ConstraintError(f"{key!r} needs a name, got {raw!r} in {text!r}")
    if spec.vocabulary is not None and name not in spec.vocabulary:
        known = ", ".join(sorted(spec.vocabulary))
        raise ConstraintError(f"unknown {key} {name!r} in {text!r} (known: {known})")
    return name


def derived(key: str, op: Op, value: Value) -> Constraint:
    """Build a constraint that no instruction wrote (inferred from a graph type, say).

    Its ``text`` is the canonical form, e.g. ``derived('num_edges', Op.EQ, 4).text ==
    'num_edges=4'``.
    """
    if key not in KEYS:
        raise ConstraintError(f"unknown constraint key {key!r}")
    c = Constraint(text="", key=key, op=op, value=value)
    return Constraint(text=c.canonical, key=key, op=op, value=value)
