"""The benchmark's shared vocabulary, defined once: levels, size buckets, strategies, methods,
pass rules, item outcomes, dimension names, and the natural order of node ids.

Everything here is plain data with no imports from the package, so every layer (and the pytest
entry point, which must stay cheap to import) can use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

LEVELS: Final[tuple[int, ...]] = (0, 1, 2, 3, 4, 5)
"""GraphInstruct's six levels: L0 format … L5 multi-step editing."""

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
METHODS: Final = (METHOD_VGIG, METHOD_RETRY, METHOD_SC, METHOD_CAAP, METHOD_COMBINED)
"""Every ``--gi-method`` besides ``none`` (the names of ``methods.registry.SELECTABLE``; what
each method does, and how a method string is read, is the registry's)."""

FEEDBACK_LEVELS: Final[tuple[str, ...]] = ("none", "coarse", "fine")
"""Granularities of VGIG's verifier feedback (``--gi-feedback``)."""


PASS_RULES: Final[dict[str, Callable[[int, int], bool]]] = {
    "all": lambda ok, k: ok == k,
    "majority": lambda ok, k: 2 * ok > k,
    "any": lambda ok, k: ok >= 1,
}
"""Item outcome over samples: ``rule(passing samples, samples) -> passed``."""

OUTCOMES: Final[tuple[str, ...]] = ("passed", "failed", "error", "skipped")
"""An item's outcome: passed/failed are scored; error (no answer) and skipped are not."""

SCORED_OUTCOMES: Final = frozenset({"passed", "failed"})

DIMENSIONS: Final[tuple[str, ...]] = ("D1", "D2", "D3", "D4", "D5")
"""D1 structural, D2 textual, D3 embedding, D4 instruction match, D5 token efficiency."""


def natural_key(node: object) -> tuple[int, int | str]:
    """Sort key of a node id: ASCII-numeric ids in numeric order first, then the rest by text.

    >>> sorted(["10", "b", "2", "a"], key=natural_key)
    ['2', '10', 'a', 'b']
    """
    s = str(node)
    return (0, int(s)) if s.isascii() and s.isdigit() else (1, s)

PYTEST_PLUGIN_NAME: Final = "graphinstruct-session"
"""The name the active run's hooks are registered under in pytest's plugin manager."""
