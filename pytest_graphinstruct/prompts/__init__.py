"""Prompt construction: strategies, template texts, few-shot exemplars.

- :func:`build_messages` — ``(system, user)`` chat messages for one instruction and strategy;
- :data:`STRATEGIES` — ``zero-shot``, ``few-shot``, ``zero-cot``, ``few-cot``;
- :class:`ExemplarPool` / :class:`Exemplar` — worked examples, chosen deterministically from
  ``(seed, instruction id)``, never containing the instruction asked.

The wording lives in ``prompts/templates/*.txt``; rules and differences from the reference
release: docs/PROMPTS.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_graphinstruct.lazy import lazy_attribute
from pytest_graphinstruct.vocab import COT_STRATEGIES, FEW_SHOT_STRATEGIES, STRATEGIES

if TYPE_CHECKING:
    from pytest_graphinstruct.prompts.builder import (
        INFEASIBILITY_LEVELS,
        build_messages,
        check_strategy,
        needs_exemplars,
    )
    from pytest_graphinstruct.prompts.exemplars import (
        DEFAULT_K,
        MAX_EXEMPLAR_CHARS,
        Exemplar,
        ExemplarPool,
    )

# Loaded on first use (PEP 562): ``prompts.texts``, which methods read their texts from, must
# not pull in the builder and its verifier, numpy and scipy.
_LAZY = {"INFEASIBILITY_LEVELS": ".builder", "build_messages": ".builder",
         "check_strategy": ".builder", "needs_exemplars": ".builder", "DEFAULT_K": ".exemplars",
         "MAX_EXEMPLAR_CHARS": ".exemplars", "Exemplar": ".exemplars",
         "ExemplarPool": ".exemplars"}


def __getattr__(name: str) -> object:
    return lazy_attribute(__name__, _LAZY, globals(), name)


__all__ = [
    "COT_STRATEGIES",
    "DEFAULT_K",
    "FEW_SHOT_STRATEGIES",
    "INFEASIBILITY_LEVELS",
    "MAX_EXEMPLAR_CHARS",
    "STRATEGIES",
    "Exemplar",
    "ExemplarPool",
    "build_messages",
    "check_strategy",
    "needs_exemplars",
]
