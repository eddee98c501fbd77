"""Level score and total quality (paper Table 4 and Eq. 2).

* Level score of one instruction: ``S = Σ_d w[level][d]·D_d`` with the Table 4 weights
  :data:`WEIGHTS`.  Quality-only mode (the leaderboard default) sets ``w_D5 = 0`` and divides
  the remaining weights by their sum (L0 → D1 1/7, D4 6/7).
* Missing dimensions: a dimension whose weight is non-zero but whose value is absent (``None``,
  or not in the mapping) is left out, the present weighted dimensions are renormalized to sum 1,
  and :attr:`LevelScore.missing` names what was left out — a missing value is never replaced by
  a number.  With no weighted dimension present the score itself is ``None``.
* Per-level score ``S_l``: arithmetic mean of the level scores of the level's instructions
  (:func:`level_means`); instructions whose score is ``None`` are left out and counted.
* ``S_total = Σ_l v_l·S_l`` with :data:`LEVEL_WEIGHTS_V` (:func:`s_total`).  The paper's form
  counts an absent level as 0 (``unnormalized``); ``renormalized`` divides by the weights of the
  levels present, so a run of L0–L2 alone is not read as a weak full run.  Both are reported,
  with the lists of present and missing levels.

All scores are in ``[0, 1]`` when the dimensions are.  Dimension values outside ``[0, 1]`` (by
more than 1e-9) or NaN raise ``ValueError``: they are bugs upstream, not data.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pytest_graphinstruct.vocab import DIMENSIONS, LEVELS, Level


def mean_present(values: Iterable[float | None]) -> float | None:
    """The mean of the values that are present (``None`` when none is).

    >>> mean_present([1.0, None, 0.0])
    0.5
    """
    present = [v for v in values if v is not None]
    return math.fsum(present) / len(present) if present else None

__all__ = [
    "DIMENSIONS",
    "LEVELS",
    "LEVEL_WEIGHTS_V",
    "WEIGHTS",
    "LevelMean",
    "LevelScore",
    "TotalScore",
    "effective_weights",
    "level_means",
    "level_score",
    "s_total",
]


#: Table 4: ``WEIGHTS[level] = (D1, D2, D3, D4, D5)``; each row sums to 1.
WEIGHTS: Mapping[int, tuple[float, float, float, float, float]] = {
    0: (0.10, 0.0, 0.0, 0.60, 0.30),
    1: (0.15, 0.0, 0.0, 0.70, 0.15),
    2: (0.15, 0.0, 0.0, 0.70, 0.15),
    3: (0.15, 0.0, 0.15, 0.50, 0.20),
    4: (0.10, 0.15, 0.05, 0.55, 0.15),
    5: (0.15, 0.0, 0.15, 0.50, 0.20),
}

#: Eq. 2: level weights ``v_0 … v_5``; they sum to 1.
LEVEL_WEIGHTS_V: tuple[float, ...] = (0.05, 0.10, 0.15, 0.20, 0.25, 0.25)

_TOL = 1e-9


def _check_level(level: int) -> None:
    if level not in WEIGHTS:
        raise ValueError(f"unknown level {level!r} (levels are 0..5)")


def effective_weights(level: int, quality_only: bool) -> dict[str, float]:
    """The non-zero weights of ``level`` after the quality-only renormalization (sum 1)."""
    _check_level(level)
    raw = dict(zip(DIMENSIONS, WEIGHTS[level], strict=True))
    if quality_only:
        raw["D5"] = 0.0
    total = math.fsum(raw.values())
    return {d: w / total for d, w in raw.items() if w > 0}


@dataclass(frozen=True)
class LevelScore:
    """One instruction's level score.

    ``score`` is ``None`` when no weighted dimension is present.  ``weights`` are the weights
    actually applied (renormalized over the present dimensions, summing to 1), ``missing`` the
    weighted dimensions that were absent (empty when the score is the plain Table 4 formula).
    """

    level: int
    score: float | None
    quality_only: bool
    weights: Mapping[str, float]
    missing: tuple[str, ...]

    @property
    def complete(self) -> bool:
        """True when every weighted dimension was present."""
        return not self.missing


def _check_value(name: str, x: float) -> float:
    x = float(x)
    if math.isnan(x) or x < -_TOL or x > 1 + _TOL:
        raise ValueError(f"{name} = {x!r} is not a score in [0, 1]")
    return x


def level_score(
    level: int, dims: Mapping[str, float | None], quality_only: bool = True
) -> LevelScore:
    """``Σ_d w[level][d]·D_d`` over the present weighted dimensions (see the module docstring).

    ``dims`` maps ``"D1"`` … ``"D5"`` to values or ``None``; keys with zero weight at this level
    may be absent.  Unknown keys raise ``ValueError``.
    """
    unknown = set(dims) - set(DIMENSIONS)
    if unknown:
        raise ValueError(f"unknown dimensions {sorted(unknown)} (expected {DIMENSIONS})")
    weights = effective_weights(level, quality_only)
    present: dict[str, float] = {}
    missing: list[str] = []
    for d in weights:
        v = dims.get(d)
        if v is None:
            missing.append(d)
        else:
            present[d] = _check_value(d, v)
    if not present:
        return LevelScore(level, None, quality_only, {}, tuple(missing))
    norm = math.fsum(weights[d] for d in present)
    used = {d: weights[d] / norm for d in present}
    score = math.fsum(used[d] * present[d] for d in present)
    score = min(1.0, max(0.0, score))
    return LevelScore(level, score, quality_only, used, tuple(missing))


@dataclass(frozen=True)
class LevelMean:
    """``S_l``: the mean over ``n`` instructions with a score; ``unscored`` had ``None``."""

    level: int
    mean: float | None
    n: int
    unscored: int


def level_means(items: Iterable[tuple[int, float | None]]) -> dict[int, LevelMean]:
    """Per-level arithmetic means of ``(level, level_score)`` pairs, keyed by level (sorted).

    Every instruction weighs equally (infeasible ones included); ``None`` scores are counted in
    ``unscored`` and left out of the mean (a level with no scored instruction has mean ``None``).
    """
    scores: dict[int, list[float]] = {}
    unscored: dict[int, int] = {}
    for level, s in items:
        _check_level(level)
        scores.setdefault(level, [])
        unscored.setdefault(level, 0)
        if s is None:
            unscored[level] += 1
        else:
            scores[level].append(_check_value(f"L{level} score", s))
    out: dict[int, LevelMean] = {}
    for level in sorted(scores):
        xs = scores[level]
        mean = math.fsum(xs) / len(xs) if xs else None
        out[level] = LevelMean(level, mean, len(xs), unscored[level])
    return out


@dataclass(frozen=True)
class TotalScore:
    """``S_total`` in both forms.

    ``unnormalized`` is the paper's ``Σ v_l·S_l`` with absent levels counting 0;
    ``renormalized`` is ``Σ v_l·S_l / Σ v_l`` over the present levels (``None`` when no level is
    present).  The two are equal when all six levels are present.
    """

    unnormalized: float
    renormalized: float | None
    levels_present: tuple[Level, ...]
    levels_missing: tuple[Level, ...]

    @property
    def complete(self) -> bool:
        """True when all six levels are present."""
        return not self.levels_missing


def s_total(level_means: Mapping[int, float | LevelMean | None]) -> TotalScore:
    """Eq. 2 from per-level scores (a level mapped to ``None`` counts as missing)."""
    values: dict[int, float] = {}
    for level, m in level_means.items():
        _check_level(level)
        v = m.mean if isinstance(m, LevelMean) else m
        if v is not None:
            values[level] = _check_value(f"S_{level}", v)
    present = tuple(lv for lv in LEVELS if lv in values)
    missing = tuple(lv for lv in LEVELS if lv not in values)
    unnormalized = math.fsum(LEVEL_WEIGHTS_V[lv] * values[lv] for lv in present)
    if not present:
        return TotalScore(0.0, None, present, missing)
    if not missing:
        return TotalScore(unnormalized, unnormalized, present, missing)
    vsum = math.fsum(LEVEL_WEIGHTS_V[lv] for lv in present)
    renormalized = min(1.0, unnormalized / vsum)
    return TotalScore(unnormalized, renormalized, present, missing)
