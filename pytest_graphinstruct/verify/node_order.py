"""The natural order of node ids in every verdict (``'2' < '10' < 'a'``)."""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable
from typing import Any

Node = Hashable

_DIGITS = re.compile(r"(\d+)")


def node_sort_key(node: Node) -> tuple[Any, ...]:
    """A total, natural order on node ids: ``'2' < '10' < 'a'``; works for mixed types."""
    parts = _DIGITS.split(str(node))
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p != "")


def sorted_nodes(nodes: Iterable[Node]) -> list[Node]:
    """``nodes`` in :func:`node_sort_key` order."""
    return sorted(nodes, key=node_sort_key)
