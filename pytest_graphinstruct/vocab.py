"""The benchmark's shared vocabulary, defined once: levels, size buckets, strategies, methods,
pass rules, item outcomes, dimension names, and the natural order of node ids.

Everything here is plain data with no imports from the package, so every layer (and the pytest
entry point, which must stay cheap to import) can use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Literal, get_args

Level = Literal[0, 1, 2, 3, 4, 5]
"""A GraphInstruct level: L0 format … L5 multi-step editing."""

LEVELS: Final[tuple[int, ...]] = get_args(Level)
"""GraphInstruct's six levels, in order."""

SIZE_BUCKETS: Final[tuple[str, ...]] = ("small", "medium", "large")
"""Instruction size buckets (by node count of the asked-for graph, :func:`size_bucket`)."""


def size_bucket(num_nodes: int) -> str:
    """The paper's size bucket: small ≤ 20 nodes, medium 21–50, large > 50.

    >>> [size_bucket(n) for n in (20, 21, 50, 51)]
    ['small', 'medium', 'medium', 'large']
    """
    return "small" if num_nodes <= 20 else "medium" if num_nodes <= 50 else "large"


STRATEGIES: Final[tuple[str, ...]] = ("zero-shot", "few-shot", "zero-cot", "few-cot")
"""Prompting strategies (§4.1)."""

FEW_SHOT_STRATEGIES: Final = frozenset({"few-shot", "few-cot"})
COT_STRATEGIES: Final = frozenset({"zero-cot", "few-cot"})

METHOD_BASELINE: Final = "baseline"
"""The method of a plain cell: one generation per sample, no verifier in the loop."""

METHOD_CONSTRAINED: Final = "constrained"
"""Constrained decoding (a grammar or JSON schema of the answer format)."""

METHOD_VGIG: Final = "vgig"
METHOD_RETRY: Final = "retry"
METHOD_SC: Final = "sc"
METHOD_CAAP: Final = "caap"
METHOD_COMBINED: Final = "combined"
MethodName = Literal["baseline", "constrained", "vgig", "retry", "sc", "caap", "combined"]
"""A method's name (a cell's method string starts with it: ``vgig`` in ``vgig-fine@T2``)."""

METHODS: Final = (METHOD_VGIG, METHOD_RETRY, METHOD_SC, METHOD_CAAP, METHOD_COMBINED)
"""Every ``--gi-method`` besides ``none`` (the names of ``methods.registry.SELECTABLE``; what
each method does, and how a method string is read, is the registry's)."""

FEEDBACK_LEVELS: Final[tuple[str, ...]] = ("none", "coarse", "fine")
"""Granularities of VGIG's verifier feedback (``--gi-feedback``)."""


PassRule = Literal["all", "majority", "any"]
"""How an item's outcome follows from its samples (:data:`PASS_RULES`)."""

PASS_RULES: Final[dict[str, Callable[[int, int], bool]]] = {
    "all": lambda ok, k: ok == k,
    "majority": lambda ok, k: 2 * ok > k,
    "any": lambda ok, k: ok >= 1,
}
"""Item outcome over samples: ``rule(passing samples, samples) -> passed``."""

Outcome = Literal["passed", "failed", "error", "skipped"]
"""An item's outcome: passed/failed are scored; error (no answer) and skipped are not."""

OUTCOMES: Final[tuple[Outcome, ...]] = get_args(Outcome)

SCORED_OUTCOMES: Final[frozenset[Outcome]] = frozenset({"passed", "failed"})


def as_outcome(text: str) -> Outcome:
    """``text`` as an :data:`Outcome`.

    Raises:
        ValueError: ``text`` is not one of :data:`OUTCOMES`.
    """
    for outcome in OUTCOMES:
        if text == outcome:
            return outcome
    raise ValueError(f"unknown outcome {text!r}")

Dimension = Literal["D1", "D2", "D3", "D4", "D5"]
"""D1 structural, D2 textual, D3 embedding, D4 instruction match, D5 token efficiency."""

DIMENSIONS: Final[tuple[str, ...]] = get_args(Dimension)


def natural_key(node: object) -> tuple[int, int | str]:
    """Sort key of a node id: ASCII-numeric ids in numeric order first, then the rest by text.

    >>> sorted(["10", "b", "2", "a"], key=natural_key)
    ['2', '10', 'a', 'b']
    """
    s = str(node)
    return (0, int(s)) if s.isascii() and s.isdigit() else (1, s)

PYTEST_PLUGIN_NAME: Final = "graphinstruct-session"
"""The name the active run's hooks are registered under in pytest's plugin manager."""
