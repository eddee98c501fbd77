"""The methods, chosen in one place: name → :class:`~.protocol.Method`, and the one parser of
method strings (:func:`parse_method`).

A new method is one module under ``methods/kinds/`` and one entry in :data:`REGISTRY` (plus its
test and its doc in docs/METHODS.md).  The order of :data:`REGISTRY` is the order the
``--gi-method`` errors list the methods in.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Final

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.methods.kinds.baseline import BASELINE
from pytest_graphinstruct.methods.kinds.caap import CAAP
from pytest_graphinstruct.methods.kinds.combined import COMBINED
from pytest_graphinstruct.methods.kinds.constrained import CONSTRAINED
from pytest_graphinstruct.methods.kinds.retry import RETRY
from pytest_graphinstruct.methods.kinds.self_consistency import SELF_CONSISTENCY
from pytest_graphinstruct.methods.kinds.vgig import VGIG
from pytest_graphinstruct.methods.protocol import Method
from pytest_graphinstruct.methods.spec import ROUNDS_MARK, MethodSpec
from pytest_graphinstruct.options import MAX_ROUNDS
from pytest_graphinstruct.vocab import FEEDBACK_LEVELS, METHOD_BASELINE, FeedbackLevel

REGISTRY: Final[Mapping[str, Method]] = MappingProxyType({m.name: m for m in (
    VGIG, RETRY, SELF_CONSISTENCY, CAAP, COMBINED, BASELINE, CONSTRAINED)})
"""Every method by name: the selectable ones in ``--gi-method``'s order, then the baseline
(``none``) and ``constrained`` (made by ``--gi-constrained``)."""

SELECTABLE: Final = tuple(name for name, m in REGISTRY.items() if m.selectable)
"""Every ``--gi-method`` besides ``none``."""

ITERATIVE: Final = tuple(name for name, m in REGISTRY.items() if m.iterative)
"""Methods that make several calls per sample (they may name their rounds ``@T``)."""

CONSTRAINED_METHOD: Final = next(name for name, m in REGISTRY.items() if m.constrained)
"""The method of ``--gi-constrained``'s cells: the baseline's prompts, sent with a decoding
constraint (each baseline cell gets a twin of it)."""


def method_of(spec: MethodSpec) -> Method:
    """The registry's method of ``spec``."""
    return REGISTRY[spec.base]


@cache
def parse_method(text: str, *, internal: bool = False) -> MethodSpec:
    """The one parser of method strings: ``none`` / ``baseline``, a selectable method
    (:data:`SELECTABLE`), ``vgig-<feedback>``, any of them iterative with ``@T<rounds>``
    (``vgig-fine@T2``).  With ``internal``, also the exact name of a method the user cannot
    select (``constrained``, a cell's method).

    Raises:
        GraphInstructError: the ``--gi-method`` error users see, in one line — an unknown
            method, or rounds on a method that takes none or not written ``@T<0..MAX>``.
    """
    if text in ("none", METHOD_BASELINE):
        return MethodSpec(METHOD_BASELINE, METHOD_BASELINE)
    if internal and text in REGISTRY and not REGISTRY[text].selectable:
        return MethodSpec(text, text)
    head, mark, rounds_text = text.partition(ROUNDS_MARK)
    base, _, level = head.partition("-")
    feedback: FeedbackLevel | None = None
    if base in REGISTRY and REGISTRY[base].feedback and level in FEEDBACK_LEVELS:
        feedback = level
    else:
        base = head
    if base not in SELECTABLE:
        raise GraphInstructError(
            f"unknown --gi-method {text!r} (choose from none, "
            f"{', '.join(SELECTABLE)}, or vgig-<feedback> with feedback "
            f"{'/'.join(FEEDBACK_LEVELS)}; an iterative method may end in "
            f"{ROUNDS_MARK}<rounds>)")
    rounds = None
    if mark:
        rounds = int(rounds_text) if rounds_text.isdigit() and rounds_text.isascii() else None
        if base not in ITERATIVE or rounds is None or rounds > MAX_ROUNDS:
            raise GraphInstructError(
                f"--gi-method {text!r}: only {', '.join(ITERATIVE)} take rounds, "
                f"written {ROUNDS_MARK}<0..{MAX_ROUNDS}> (e.g. vgig-fine{ROUNDS_MARK}2)")
    return MethodSpec(text, base, feedback, rounds)
