"""Which levels of a gated run regressed: one decision over the whole family of tests.

A gated run tests every level of every cell against its baseline.  Tested one at a time at
2.5 % each, six levels give a false alarm in about one run in seven with nothing changed;
more cells, more alarms.  :func:`regressions` decides over the family at once:

1. Holm's step-down procedure on the levels' ``p_drop`` (the one-sided p-values of "no drop"
   from :func:`~pytest_graphinstruct.score.regression.bootstrap.paired_bootstrap`): sorted
   ascending,
   the ``j``-th smallest (``j = 1..m``) is rejected while ``p_(j) ≤ alpha / (m − j + 1)``;
   the first one kept stops the procedure.  The chance of any false rejection stays at most
   ``alpha`` whatever the dependence between the tests.
2. A rejected level counts as regressed only when its mean change is also below ``−delta``
   (``--gi-max-regression``): the drop is real *and* larger than the tolerance.

Ties in ``p_drop`` keep the mapping's order, so the result does not depend on anything else.

:func:`improvements` is the same decision the other way (issue 48 §6): Holm over the same family
on the levels' ``p_rise`` (the one-sided p-values of "no rise" from the same tests), and a mean
change above ``+delta``.  The two directions are two families, each held at ``alpha``: a gate
that says "improved" is wrong about a level at most as often as one that says "regressed".
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TypeVar

from pytest_graphinstruct.score.regression.bootstrap import PairedDiff

__all__ = ["FAMILY_ALPHA", "holm", "holm_adjusted", "improvements", "regressions"]

FAMILY_ALPHA = 0.05
"""The family-wise false-alarm rate of a gated run (all levels of all cells together)."""

K = TypeVar("K", bound=Hashable)


def _check(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")


def holm(p_values: Mapping[K, float], *, alpha: float = FAMILY_ALPHA) -> frozenset[K]:
    """The keys whose hypotheses Holm's step-down procedure rejects at family-wise ``alpha``.

    Raises:
        ValueError: ``alpha`` outside (0, 1), or a p-value outside [0, 1] (NaN included).
    """
    _check(alpha)
    for key, p in p_values.items():
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{key!r}: p-value must be within [0, 1], got {p}")
    m = len(p_values)
    order = sorted(p_values, key=lambda k: p_values[k])  # stable: ties keep mapping order
    rejected = []
    for j, key in enumerate(order):
        if p_values[key] > alpha / (m - j):
            break
        rejected.append(key)
    return frozenset(rejected)


def holm_adjusted(p_values: Mapping[K, float]) -> dict[K, float]:
    """Holm-adjusted p-values: ``p̃_(j) = max_{i ≤ j} min(1, (m − i + 1)·p_(i))`` in ascending
    order, so a key is rejected by :func:`holm` at ``alpha`` exactly when ``p̃ ≤ alpha``.

    Raises:
        ValueError: a p-value outside [0, 1] (NaN included).
    """
    for key, p in p_values.items():
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{key!r}: p-value must be within [0, 1], got {p}")
    m = len(p_values)
    out: dict[K, float] = {}
    running = 0.0
    for j, key in enumerate(sorted(p_values, key=lambda k: p_values[k])):
        running = max(running, min(1.0, (m - j) * p_values[key]))
        out[key] = running
    return out


def regressions(diffs: Mapping[K, PairedDiff], *, delta: float,
                alpha: float = FAMILY_ALPHA) -> frozenset[K]:
    """The keys (e.g. ``(cell label, level)`` over every cell and level of one gated run)
    whose level regressed: Holm rejects "no drop" at family-wise ``alpha`` *and* the mean
    change is below ``−delta``.

    Raises:
        ValueError: ``delta`` negative, ``alpha`` outside (0, 1), or a bad p-value.
    """
    if delta < 0:
        raise ValueError(f"delta must be >= 0, got {delta}")
    rejected = holm({k: d.p_drop for k, d in diffs.items()}, alpha=alpha)
    return frozenset(k for k in rejected if diffs[k].mean_diff < -delta)


def improvements(diffs: Mapping[K, PairedDiff], *, delta: float,
                 alpha: float = FAMILY_ALPHA) -> frozenset[K]:
    """The keys whose level improved: Holm rejects "no rise" (``p_rise``) over the family at
    ``alpha`` *and* the mean change is above ``+delta`` — :func:`regressions` the other way.

    Raises:
        ValueError: ``delta`` negative, ``alpha`` outside (0, 1), or a bad p-value.
    """
    if delta < 0:
        raise ValueError(f"delta must be >= 0, got {delta}")
    rejected = holm({k: d.p_rise for k, d in diffs.items()}, alpha=alpha)
    return frozenset(k for k in rejected if diffs[k].mean_diff > delta)
