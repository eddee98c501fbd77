"""The benchmark's shared vocabulary, defined once: levels, size buckets, strategies, methods,
feedback levels, pass rules, item outcomes, dimension names, and the natural order of node ids.

A closed vocabulary is a ``Literal`` type with its values as a tuple, and an ``as_…`` function
that narrows a value read from outside (an option, a file) to it or raises ``ValueError``.
Everything here is plain data with no imports from the package, so every layer (and the pytest
entry point, which must stay cheap to import) can use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Literal, TypeVar, get_args

_Word = TypeVar("_Word", bound=str | int)


def _one_of(value: object, vocabulary: tuple[_Word, ...], what: str) -> _Word:
    """The member of ``vocabulary`` equal to ``value`` (of the same type: ``True`` is no level).

    Raises:
        ValueError: ``value`` is none of them (the message names ``what`` it should be).
    """
    for word in vocabulary:
        if value == word and type(value) is type(word):
            return word
    raise ValueError(f"unknown {what} {value!r} (one of {', '.join(map(str, vocabulary))})")


Level = Literal[0, 1, 2, 3, 4, 5]
"""A GraphInstruct level: L0 format … L5 multi-step editing."""

LEVELS: Final[tuple[Level, ...]] = get_args(Level)
"""GraphInstruct's six levels, in order."""


def as_level(value: object) -> Level:
    """``value`` as a :data:`Level`.

    Raises:
        ValueError: ``value`` is not one of :data:`LEVELS` (an int 0–5).
    """
    return _one_of(value, LEVELS, "level")

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

FeedbackLevel = Literal["none", "coarse", "fine"]
"""A granularity of VGIG's verifier feedback (``--gi-feedback``, ``vgig-<feedback>``)."""

FEEDBACK_LEVELS: Final[tuple[FeedbackLevel, ...]] = get_args(FeedbackLevel)


def as_feedback_level(text: object) -> FeedbackLevel:
    """``text`` as a :data:`FeedbackLevel`.

    Raises:
        ValueError: ``text`` is not one of :data:`FEEDBACK_LEVELS`.
    """
    return _one_of(text, FEEDBACK_LEVELS, "feedback level")


D3Device = Literal["cpu", "cuda", "auto"]
"""Where D3's GCNs train (``--gi-d3-device``): the CPU (bit-reproducible on one machine), the GPU
(the ``[gpu]`` extra's torch; an error without it or without CUDA), or the GPU when there is
one."""

D3_DEVICES: Final[tuple[D3Device, ...]] = get_args(D3Device)


def as_d3_device(text: object) -> D3Device:
    """``text`` as a :data:`D3Device`.

    Raises:
        ValueError: ``text`` is not one of :data:`D3_DEVICES`.
    """
    return _one_of(text, D3_DEVICES, "D3 device")


PassRule = Literal["all", "majority", "any"]
"""How an item's outcome follows from its samples (:data:`PASS_RULES`)."""

PASS_RULES: Final[dict[PassRule, Callable[[int, int], bool]]] = {
    "all": lambda ok, k: ok == k,
    "majority": lambda ok, k: 2 * ok > k,
    "any": lambda ok, k: ok >= 1,
}
"""Item outcome over samples: ``rule(passing samples, samples) -> passed``."""


def as_pass_rule(text: object) -> PassRule:
    """``text`` as a :data:`PassRule`.

    Raises:
        ValueError: ``text`` is not a key of :data:`PASS_RULES`.
    """
    return _one_of(text, get_args(PassRule), "pass rule")


GateTest = Literal["suite", "templates"]
"""What the regression gate's test claims (:data:`GATE_TESTS`): ``suite`` — this run is worse
than the baseline on this suite beyond sampling noise (the default; ``score.regression.paired``);
``templates`` — it would be worse on new instructions of the same templates (the
template-clustered test, ``score.regression.bootstrap.paired_bootstrap``)."""

GATE_TESTS: Final[tuple[GateTest, ...]] = get_args(GateTest)


def as_gate_test(text: object) -> GateTest:
    """``text`` as a :data:`GateTest`.

    Raises:
        ValueError: ``text`` is not one of :data:`GATE_TESTS`.
    """
    return _one_of(text, GATE_TESTS, "gate test")


Outcome = Literal["passed", "failed", "error", "skipped"]
"""An item's outcome: passed/failed are scored; error (no answer) and skipped are not."""

OUTCOMES: Final[tuple[Outcome, ...]] = get_args(Outcome)

SCORED_OUTCOMES: Final[frozenset[Outcome]] = frozenset({"passed", "failed"})

Dimension = Literal["D1", "D2", "D3", "D4", "D5"]
"""D1 structural, D2 textual, D3 embedding, D4 instruction match, D5 token efficiency."""

DIMENSIONS: Final[tuple[Dimension, ...]] = get_args(Dimension)


def as_dimension(text: object) -> Dimension:
    """``text`` as a :data:`Dimension`.

    Raises:
        ValueError: ``text`` is not one of :data:`DIMENSIONS`.
    """
    return _one_of(text, DIMENSIONS, "dimension")


def natural_key(node: object) -> tuple[int, int | str]:
    """Sort key of a node id: ASCII-numeric ids in numeric order first, then the rest by text.

    >>> sorted(["10", "b", "2", "a"], key=natural_key)
    ['2', '10', 'a', 'b']
    """
    s = str(node)
    return (0, int(s)) if s.isascii() and s.isdigit() else (1, s)

PYTEST_PLUGIN_NAME: Final = "graphinstruct-session"
"""The name the active run's hooks are registered under in pytest's plugin manager."""

EMBEDDED_MODEL: Final = "local"
"""The model name of the embedded offline model (``--gi-model=local``)."""
RECORDED_PROBLEMS_SHOWN: Final = 20
"""How many of a recorded-answers file's skipped lines a run shows (the rest are counted)."""
