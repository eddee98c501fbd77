"""Consistency over samples: pass@1, pass@k and pass^k of items each answered ``n`` times.

An item answered ``n`` times with ``c`` passing samples (a sample passes when its own
verification holds every constraint) contributes, for a ``k ≤ n``:

* pass@1 = ``c / n`` — the chance that one sample passes;
* pass@k = ``1 − C(n − c, k) / C(n, k)`` — the chance that at least one of ``k`` samples drawn
  without replacement passes (the unbiased estimator of Chen et al. 2021);
* pass^k = ``C(c, k) / C(n, k)`` — the chance that all ``k`` of them pass.

With ``k = n`` these are "at least one sample passes" and "every sample passes".  A set of items
is measured at ``k`` = the fewest samples any of them has (:func:`common_k`), so every item's
estimate is defined; each figure is the mean over the items, with a 95 % percentile bootstrap
interval over the items (:func:`~pytest_graphinstruct.score.regression.bootstrap.mean_interval`,
seeded:
the same items give the same intervals).  The three figures are resampled with the same draws,
so ``pass^k ≤ pass@1 ≤ pass@k`` holds for the estimates and for each end of the intervals.

>>> pass_at_k(3, 1, 3), pass_all_k(3, 1, 3), pass_all_k(3, 3, 3)
(1.0, 0.0, 1.0)
>>> round(pass_at_k(5, 2, 2), 4), round(pass_all_k(5, 2, 2), 4)
(0.7, 0.1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

from pytest_graphinstruct.score.regression.bootstrap import Interval, mean_interval

__all__ = ["Consistency", "Tally", "common_k", "consistency", "pass_all_k", "pass_at_k"]


@dataclass(frozen=True)
class Tally:
    """One item's samples: ``n`` answered, ``c`` of them passing (``0 ≤ c ≤ n``, ``n ≥ 1``)."""

    n: int
    c: int

    def __post_init__(self) -> None:
        if self.n < 1 or not 0 <= self.c <= self.n:
            raise ValueError(f"a tally needs 0 <= c <= n and n >= 1, got c={self.c}, n={self.n}")

    @property
    def flaky(self) -> bool:
        """Some samples pass and some fail (``0 < c < n``)."""
        return 0 < self.c < self.n


def _check_k(n: int, c: int, k: int) -> None:
    if not 1 <= k <= n or not 0 <= c <= n:
        raise ValueError(f"need 1 <= k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` of the item's ``n`` samples passes, ``c`` of them
    passing: ``1 − C(n − c, k) / C(n, k)``.

    Raises:
        ValueError: not ``1 ≤ k ≤ n`` and ``0 ≤ c ≤ n``.
    """
    _check_k(n, c, k)
    total = comb(n, k)
    return (total - comb(n - c, k)) / total  # one rounding: ordered as the exact values are


def pass_all_k(n: int, c: int, k: int) -> float:
    """The chance that all ``k`` of ``k`` of the item's ``n`` samples pass, ``c`` of them
    passing: ``C(c, k) / C(n, k)``.

    Raises:
        ValueError: not ``1 ≤ k ≤ n`` and ``0 ≤ c ≤ n``.
    """
    _check_k(n, c, k)
    return comb(c, k) / comb(n, k)


def common_k(tallies: Sequence[Tally]) -> int:
    """The ``k`` a set of items is measured at: the fewest samples any of them has.

    Raises:
        ValueError: no items.
    """
    if not tallies:
        raise ValueError("no items to measure")
    return min(t.n for t in tallies)


@dataclass(frozen=True)
class Consistency:
    """pass@1, pass@k and pass^k of a set of items, each with its 95 % interval, and how many
    of the items are flaky (``0 < c < n``)."""

    k: int
    items: int
    flaky: int
    pass_at_1: Interval
    pass_at_k: Interval
    pass_all_k: Interval


def consistency(tallies: Sequence[Tally], *, k: int | None = None,
                stream: int = 0) -> Consistency:
    """The figures of ``tallies`` at ``k`` (default :func:`common_k`), their intervals drawn
    from the bootstrap generator ``stream`` (a level's number for a level, so its intervals
    are reproducible on their own).

    Raises:
        ValueError: no items, or a ``k`` above an item's sample count.
    """
    k = common_k(tallies) if k is None else k
    ones = [t.c / t.n for t in tallies]
    at_k = [pass_at_k(t.n, t.c, k) for t in tallies]
    all_k = [pass_all_k(t.n, t.c, k) for t in tallies]
    return Consistency(
        k=k, items=len(tallies), flaky=sum(t.flaky for t in tallies),
        pass_at_1=mean_interval(ones, stream=stream),
        pass_at_k=mean_interval(at_k, stream=stream),
        pass_all_k=mean_interval(all_k, stream=stream),
    )
