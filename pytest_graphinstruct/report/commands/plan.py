"""``plan``: how much the regression gate can see with a report as its baseline.

For each cell and level of the report: the instructions scored, the clusters they fall into,
the samples per instruction, and the smallest drop of the level's quality the gate flags in 80 %
of runs (:func:`pytest_graphinstruct.score.regression.power.detectable_drop`, with the Holm share
of the
family of every level of every cell in the report); with a drop to detect, the samples per
instruction and the instructions it would take.  docs/PLUGIN.md, "How much the gate can see".
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tabulate import tabulate

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.run.gate.comparison import baseline_items, baseline_samples
from pytest_graphinstruct.run.records.results import RunReport
from pytest_graphinstruct.score.regression.bootstrap import DEFAULT_MAX_REGRESSION
from pytest_graphinstruct.score.regression.multiple import FAMILY_ALPHA
from pytest_graphinstruct.score.regression.power import (
    POWER,
    LevelNoise,
    detectable_drop,
    instructions_needed,
    noise_by_level,
    samples_needed,
)
from pytest_graphinstruct.suite.clusters import cluster_of
from pytest_graphinstruct.suite.loader import Suite, load_suite
from pytest_graphinstruct.vocab import GateTest

__all__ = ["LevelPlan", "plan_lines", "plan_report"]


@dataclass(frozen=True)
class LevelPlan:
    """One level of one cell: its noise, what the gate can detect, and what a drop needs."""

    cell: str
    level: int
    noise: LevelNoise
    samples: int  # samples per instruction the figures are for
    detectable: float  # math.inf: nothing up to the whole score range
    samples_needed: int | None = None
    instructions_needed: int | None = None
    unknown_clusters: int = 0  # instructions without a recorded cluster (each its own)


def plan_report(report: RunReport, *, samples: int | None = None, drop: float | None = None,
                max_regression: float = DEFAULT_MAX_REGRESSION, suite: Suite | None = None,
                alpha: float = FAMILY_ALPHA, power: float = POWER,
                test: GateTest = "suite") -> list[LevelPlan]:
    """A :class:`LevelPlan` per scored level of every cell of ``report`` (``samples``: the
    figures for that many samples per instruction instead of the report's; ``suite``: clusters
    for instructions the report has none for).

    Raises:
        GraphInstructError: bad numbers, or a report without scored instructions.
    """
    if samples is not None and samples < 1:
        raise GraphInstructError(f"--samples must be >= 1, got {samples}")
    if drop is not None and not 0 < drop <= 1:
        raise GraphInstructError(f"--drop must be within (0, 1], got {drop:g}")
    if not 0 <= max_regression <= 1:
        raise GraphInstructError(f"--max-regression must be within 0..1, got {max_regression:g}")
    cells = []
    for cell in report.cells:
        items = [r for r in cell.per_instruction if r.scored and r.level_score is not None]
        if items:
            cells.append((cell, items))
    if not cells:
        raise GraphInstructError("the report holds no scored instruction to plan from")
    tests = sum(len({r.level for r in items}) for _, items in cells)
    out = []
    for cell, items in cells:
        k = baseline_samples(cell)
        derived = {r.instruction_id: cluster_of(suite[r.instruction_id]) for r in items
                   if r.cluster is None and suite is not None and r.instruction_id in suite}
        unknown: Counter[int] = Counter(r.level for r in items
                          if r.cluster is None and r.instruction_id not in derived)
        for lv, noise in noise_by_level(baseline_items(cell, derived), samples=k).items():
            at = k if samples is None else samples
            out.append(LevelPlan(
                cell=cell.label, level=lv, noise=noise, samples=at,
                detectable=detectable_drop(noise, delta=max_regression, alpha=alpha,
                                           tests=tests, power=power, samples=at, test=test),
                samples_needed=(None if drop is None else samples_needed(
                    noise, drop, delta=max_regression, alpha=alpha, tests=tests, power=power,
                    test=test)),
                instructions_needed=(None if drop is None else instructions_needed(
                    noise, drop, delta=max_regression, alpha=alpha, tests=tests, power=power,
                    samples=at, test=test)),
                unknown_clusters=unknown[lv]))
    return out


def _drop(x: float) -> str:
    return "none" if math.isinf(x) else f"{x:.3f}"


def plan_lines(plans: list[LevelPlan], *, name: str, drop: float | None = None,
               max_regression: float = DEFAULT_MAX_REGRESSION, alpha: float = FAMILY_ALPHA,
               power: float = POWER, test: GateTest = "suite") -> list[str]:
    """The ``plan`` command's output: a table per cell and one line saying the rule."""
    lines: list[str] = []
    headers = ["level", "instructions", "clusters", "samples", f"detectable drop ({power:.0%})"]
    if drop is not None:
        headers += [f"samples for {drop:g}", f"instructions for {drop:g}"]
    for label in dict.fromkeys(p.cell for p in plans):
        mine = [p for p in plans if p.cell == label]
        rows = []
        for p in mine:
            row: list[object] = [f"L{p.level}", p.noise.instructions,
                                 p.noise.clusters, p.samples, _drop(p.detectable)]
            if drop is not None:
                row += ["never" if p.samples_needed is None else p.samples_needed,
                        "never" if p.instructions_needed is None else p.instructions_needed]
            rows.append(row)
        lines.append(f"{label} ({name}; baseline: {mine[0].noise.samples} sample(s) per "
                     "instruction)")
        lines += tabulate(rows, headers=headers, disable_numparse=True).splitlines()
        conservative = [f"L{p.level}" for p in mine if p.noise.conservative]
        if conservative:
            lines.append(f"  conservative (no per-sample outcomes to measure run-to-run noise "
                         f"by): {', '.join(conservative)}")
        unknown = [f"L{p.level} {p.unknown_clusters}" for p in mine if p.unknown_clusters]
        if unknown:
            lines.append(f"  instructions without a cluster, each counted as its own (pass "
                         f"--suite to derive them): {', '.join(unknown)}")
        lines.append("")
    tests = len(plans)
    how = ("the paired sign-flip test per instruction on this suite" if test == "suite" else
           "one-sided t, the noise shared within a template pooled over every level, "
           "Satterthwaite df")
    caveat = ("where the noise is a bound (conservative levels), the figures err towards "
              "larger drops" if test == "suite" else
              "noise shared within a template, or a drop in a few templates, is harder to see")
    lines.append(
        f"rule: a level regresses when Holm over the {tests} level test(s) at family-wise "
        f"{alpha:g} rejects 'no drop' ({how}) and its mean drop exceeds --max-regression="
        f"{max_regression:g}; detectable = the smallest drop of a whole level flagged in "
        f"{power:.0%} of runs, counting the spread of the answers that flip, for noise "
        f"independent between instructions ({caveat})")
    if test == "suite" and any(p.noise.samples >= 2 for p in plans):
        lines.append("--gi-samples=auto against this baseline: about the detectable drops of "
                     "a fixed run of its samples per instruction, for about half the calls "
                     "(measured for k = 5 by bench/gate_calibration.py --auto; docs/PLUGIN.md "
                     "\"Ask more only where it matters\"); its --gi-max-regression is a pass "
                     "rate")
    return lines


def plan(path: str, *, samples: int | None = None, drop: float | None = None,
         max_regression: float = DEFAULT_MAX_REGRESSION, suite: str | None = None,
         test: GateTest = "suite") -> list[str]:
    """Read ``path`` (and ``suite``) and return :func:`plan_lines`.

    Raises:
        GraphInstructError: an unreadable report or suite, or bad numbers.
    """
    from pytest_graphinstruct.run.records.reader import read_report

    loaded = None
    if suite is not None:
        root = Path(suite).expanduser()
        if not root.exists():
            raise GraphInstructError(f"suite not found: {root}")
        loaded = load_suite(root)
    plans = plan_report(read_report(path), samples=samples, drop=drop,
                        max_regression=max_regression, suite=loaded, test=test)
    return plan_lines(plans, name=path, drop=drop, max_regression=max_regression, test=test)
