"""A test-only reader of the GBNF subset our grammar uses: match texts and generate samples.

Supports one-line rules ``name ::= expr`` with literals ``"..."``, character classes
``[...]``, rule references, grouping, ``|`` and the quantifiers ``* + ? {m,n}``; ``#`` starts a
comment line.  The grammar must not be recursive (ours is not), so it compiles to one Python
regular expression.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

_TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|(\[(?:[^\]\\]|\\.)*\])|([A-Za-z0-9-]+)'
                    r'|(\{\d+,\d+\})|([()|*+?]))')
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'"}
_ALPHABET = "aZ0_9'\\ \n.,(){}[]=;:-éx"


def _unescape(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


@dataclass
class Node:
    kind: str  # lit | cls | ref | seq | alt | rep
    value: Any = None
    items: list[Node] | None = None
    low: int = 0
    high: int | None = None


class Grammar:
    """The parsed rules; :meth:`matches` and :meth:`sample` start at ``root``."""

    def __init__(self, text: str) -> None:
        self.rules: dict[str, Node] = {}
        for line in text.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            name, _, expr = line.partition("::=")
            self.rules[name.strip()] = self._parse(expr)
        self._regex = re.compile(self._compile(self.rules["root"], ()), re.DOTALL)

    # -- parsing ---------------------------------------------------------------------------

    def _parse(self, expr: str) -> Node:
        tokens = []
        pos = 0
        while pos < len(expr.rstrip()):
            m = _TOKEN.match(expr, pos)
            if m is None:
                raise ValueError(f"cannot read {expr[pos:]!r}")
            tokens.append(next((i, g) for i, g in enumerate(m.groups()) if g is not None))
            pos = m.end()
        node, rest = self._alt(tokens)
        if rest:
            raise ValueError(f"unexpected {rest[0]!r}")
        return node

    def _alt(self, tokens: list[tuple[int, str]]) -> tuple[Node, list[tuple[int, str]]]:
        options = []
        seq, tokens = self._seq(tokens)
        options.append(seq)
        while tokens and tokens[0] == (4, "|"):
            seq, tokens = self._seq(tokens[1:])
            options.append(seq)
        return (options[0] if len(options) == 1 else Node("alt", items=options)), tokens

    def _seq(self, tokens: list[tuple[int, str]]) -> tuple[Node, list[tuple[int, str]]]:
        items: list[Node] = []
        while tokens and tokens[0] not in ((4, "|"), (4, ")")):
            kind, text = tokens[0]
            tokens = tokens[1:]
            if kind == 0:
                node = Node("lit", _unescape(text[1:-1]))
            elif kind == 1:
                node = Node("cls", text)
            elif kind == 2:
                node = Node("ref", text)
            elif text == "(":
                node, tokens = self._alt(tokens)
                tokens = tokens[1:]  # ")"
            else:
                raise ValueError(f"unexpected {text!r}")
            while tokens and (tokens[0][0] == 3 or tokens[0][1] in ("*", "+", "?")):
                q = tokens[0][1]
                tokens = tokens[1:]
                low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}.get(q, (0, 0))
                if q.startswith("{"):
                    low, high = (int(x) for x in q[1:-1].split(","))
                node = Node("rep", items=[node], low=low, high=high)
            items.append(node)
        return Node("seq", items=items), tokens

    # -- matching --------------------------------------------------------------------------

    def _compile(self, node: Node, stack: tuple[str, ...]) -> str:
        if node.kind == "lit":
            return re.escape(node.value)
        if node.kind == "cls":
            return node.value
        if node.kind == "ref":
            if node.value in stack:
                raise ValueError(f"recursive rule {node.value}")
            return f"(?:{self._compile(self.rules[node.value], (*stack, node.value))})"
        assert node.items is not None
        if node.kind == "seq":
            return "".join(self._compile(n, stack) for n in node.items)
        if node.kind == "alt":
            return "(?:" + "|".join(self._compile(n, stack) for n in node.items) + ")"
        inner = f"(?:{self._compile(node.items[0], stack)})"
        high = "" if node.high is None else str(node.high)
        return f"{inner}{{{node.low},{high}}}"

    def matches(self, text: str) -> bool:
        return self._regex.fullmatch(text) is not None

    # -- sampling --------------------------------------------------------------------------

    def sample(self, rng: random.Random, node: Node | None = None) -> str:
        """A random text the grammar accepts (repetitions kept short)."""
        node = node or self.rules["root"]
        if node.kind == "lit":
            return str(node.value)
        if node.kind == "cls":
            return rng.choice([c for c in _ALPHABET if re.fullmatch(node.value, c)])
        if node.kind == "ref":
            return self.sample(rng, self.rules[node.value])
        assert node.items is not None
        if node.kind == "seq":
            return "".join(self.sample(rng, n) for n in node.items)
        if node.kind == "alt":
            return self.sample(rng, rng.choice(node.items))
        high = node.low + 4 if node.high is None else min(node.high, node.low + 4)
        return "".join(self.sample(rng, node.items[0])
                       for _ in range(rng.randint(node.low, high)))
