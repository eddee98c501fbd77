"""The HTML report's charts: matplotlib figures rendered to inline SVG at build time.

Each chart is drawn on its own :class:`matplotlib.figure.Figure` (no pyplot, no global figure
state) and written by the SVG backend with a fixed ``svg.hashsalt`` and no date, so the same
report always gives the same bytes.  Text stays text (``svg.fonttype: none``; matplotlib
escapes it), which keeps the charts small.  Charts that would be unreadable with many cells
show the first :data:`MAX_SERIES` cells by S_total and say so.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure

from pytest_graphinstruct.report.render.html.cells import PageCell
from pytest_graphinstruct.report.render.html.taxonomy import CLASSES, Taxonomy
from pytest_graphinstruct.score.pareto import CellPoint, analyze
from pytest_graphinstruct.vocab import LEVELS, METHOD_BASELINE, Level

MAX_SERIES = 10
"""Cells drawn in the per-level bars and profiles (the best by S_total)."""

MAX_HEAT_ROWS = 40
"""Rows of the delta heatmap."""

_RC: Any = {"svg.hashsalt": "pytest-graphinstruct", "svg.fonttype": "none", "font.size": 9.0,
             "axes.spines.top": False, "axes.spines.right": False}
_TAXONOMY_COLOURS = {"no answer": "#7f7f7f", "refusal": "#9467bd", "truncated": "#8c564b",
                     "unparseable": "#d62728", "violations": "#ff7f0e", "passed": "#2ca02c",
                     "unknown": "#c7c7c7"}


@dataclass(frozen=True)
class Plot:
    """One chart: its title, its SVG element (markup made by matplotlib) and a note on what it
    leaves out (empty when nothing)."""

    key: str
    title: str
    svg: str
    note: str = ""


def to_svg(fig: Figure) -> str:
    """``fig`` as an ``<svg>`` element (no XML prolog or doctype), deterministic."""
    FigureCanvasSVG(fig)
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": _RC["svg.hashsalt"],
                                "svg.fonttype": _RC["svg.fonttype"]}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None},
                    bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _figure(width: float, height: float) -> Figure:
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(width, height), layout="constrained")
    return fig


def _best(cells: Sequence[PageCell]) -> tuple[list[PageCell], str]:
    ranked = sorted(cells, key=lambda c: -(c.cell.summary.s_total_renormalized or -1.0))
    if len(ranked) <= MAX_SERIES:
        return list(cells), ""
    keep = {c.key for c in ranked[:MAX_SERIES]}
    return ([c for c in cells if c.key in keep],
            f"the {MAX_SERIES} cells with the highest S_total of {len(cells)}")


def _levels(cells: Sequence[PageCell]) -> list[Level]:
    return sorted({lv for c in cells for lv in c.cell.per_level} & set(LEVELS))


def _legend_below(ax: Any, ncols: int = 3) -> None:
    """The axes' legend below the whole chart: a figure legend placed ``outside`` by the
    constrained layout, which makes room for it under the tick labels and the axis label (a
    legend anchored at a fixed offset below the axes overlapped them on short charts)."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.figure.legend(handles, labels, fontsize=7, ncols=ncols, loc="outside lower center",
                         frameon=False)


def _level_score(pc: PageCell, level: Level) -> float | None:
    row = pc.cell.per_level.get(level)
    return None if row is None else row.level_score


def level_bars(cells: Sequence[PageCell]) -> Plot | None:
    """Grouped bars: each level's score per cell, with its 95% CI as an error bar."""
    shown, note = _best(cells)
    levels = _levels(shown)
    if not shown or not levels:
        return None
    with matplotlib.rc_context(_RC):
        fig = _figure(7.5, 3.2)
        ax = fig.add_subplot()
        width = 0.8 / len(shown)
        for k, pc in enumerate(shown):
            xs, ys, lo, hi = [], [], [], []
            for i, lv in enumerate(levels):
                row = pc.cell.per_level.get(lv)
                if row is None or row.level_score is None:
                    continue
                xs.append(i - 0.4 + width * (k + 0.5))
                ys.append(row.level_score)
                ci = row.level_score_ci95
                lo.append(row.level_score - ci[0] if ci else 0.0)
                hi.append(ci[1] - row.level_score if ci else 0.0)
            ax.bar(xs, ys, width * 0.95, yerr=[lo, hi], capsize=2, label=pc.key,
                   error_kw={"elinewidth": 0.8})
        ax.set_xticks(range(len(levels)), [f"L{lv}" for lv in levels])
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("level score (95% CI)")
        _legend_below(ax)
        return Plot("level-bars", "Quality per level", to_svg(fig), note)


def profiles(cells: Sequence[PageCell]) -> Plot | None:
    """One line per cell through its level scores (its profile across L0–L5)."""
    shown, note = _best(cells)
    levels = _levels(shown)
    if not shown or not levels:
        return None
    with matplotlib.rc_context(_RC):
        fig = _figure(7.5, 3.0)
        ax = fig.add_subplot()
        for pc in shown:
            pts = [(i, y) for i, lv in enumerate(levels)
                   if (y := _level_score(pc, lv)) is not None]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3,
                    linewidth=1.2, label=pc.key)
        ax.set_xticks(range(len(levels)), [f"L{lv}" for lv in levels])
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("level score")
        _legend_below(ax)
        return Plot("profiles", "Per-level profile of each cell", to_svg(fig), note)


def pareto_scatter(cells: Sequence[PageCell]) -> Plot | None:
    """Cost (TPV, log scale) against S_total (over the levels run), every cell labelled, the
    Pareto frontier over the cells shown drawn as a step line."""
    points = [CellPoint(label=pc.key, model=pc.cell.metadata.model,
                        strategy=pc.cell.metadata.strategy, method=pc.cell.metadata.method,
                        quality=pc.cell.summary.s_total_renormalized or 0.0,
                        cost=pc.cell.summary.tpv) for pc in cells]
    known = [p for p in points if p.cost is not None and p.cost > 0]
    if not known:
        return None
    front = sorted(analyze(known).frontiers.get("*", ()), key=lambda p: p.cost or 0.0)
    on = {p.label for p in front}
    xy = {p.label: (float(p.cost or 0.0), p.quality) for p in known}
    with matplotlib.rc_context(_RC):
        fig = _figure(7.5, 3.8)
        ax = fig.add_subplot()
        rest = [xy[p.label] for p in known if p.label not in on]
        ax.scatter([x for x, _ in rest], [y for _, y in rest], s=18, color="#1f77b4",
                   label="cell")
        best = [xy[p.label] for p in front]
        ax.scatter([x for x, _ in best], [y for _, y in best], s=30, color="#d62728",
                   label="Pareto-optimal")
        if len(best) > 1:
            ax.step([x for x, _ in best], [y for _, y in best], where="post",
                    color="#d62728", linewidth=1, alpha=0.7)
        for label, point in xy.items():
            ax.annotate(label, point, fontsize=6, xytext=(3, 2), textcoords="offset points")
        ax.set_xscale("log")
        ax.set_xlabel("TPV (tokens per valid output, log scale)")
        ax.set_ylabel("S_total (levels run)")
        ax.legend(fontsize=7, frameon=False, loc="lower right")
    excluded = [p.label for p in points if p.cost is None or p.cost <= 0]
    note = f"left out, cost unknown: {', '.join(excluded)}" if excluded else ""
    return Plot("pareto", "Cost and quality (Pareto frontier)", to_svg(fig), note)


def delta_heatmap(cells: Sequence[PageCell]) -> Plot | None:
    """Strategy/method × level: each cell's level score minus the zero-shot baseline cell of
    the same model; ``None`` unless some model has a zero-shot cell and another cell."""
    zero = {pc.cell.metadata.model: pc for pc in cells
            if pc.cell.metadata.strategy == "zero-shot"
            and pc.cell.metadata.method == METHOD_BASELINE}
    rows = [pc for pc in cells if pc.cell.metadata.model in zero
            and pc is not zero[pc.cell.metadata.model]]
    if not rows:
        return None
    note = ""
    if len(rows) > MAX_HEAT_ROWS:
        note = f"the first {MAX_HEAT_ROWS} of {len(rows)} cells"
        rows = rows[:MAX_HEAT_ROWS]
    levels = _levels(cells)
    grid: list[list[float]] = []
    for pc in rows:
        ref = zero[pc.cell.metadata.model].cell.per_level
        line = []
        for lv in levels:
            a = pc.cell.per_level.get(lv)
            b = ref.get(lv)
            ok = a is not None and b is not None and a.level_score is not None \
                and b.level_score is not None
            line.append(a.level_score - b.level_score if ok else math.nan)  # type: ignore[union-attr,operator]
        grid.append(line)
    finite = [abs(v) for line in grid for v in line if not math.isnan(v)]
    span = max(finite, default=0.0) or 0.05
    with matplotlib.rc_context(_RC):
        fig = _figure(7.5, 1.0 + 0.28 * len(rows))
        ax = fig.add_subplot()
        image = ax.imshow(grid, cmap="RdBu", vmin=-span, vmax=span, aspect="auto")
        ax.set_xticks(range(len(levels)), [f"L{lv}" for lv in levels])
        ax.set_yticks(range(len(rows)), [pc.key for pc in rows], fontsize=7)
        for i, line in enumerate(grid):
            for j, v in enumerate(line):
                # white on the darkest third of the scale, where black text disappears
                dark = not math.isnan(v) and abs(v) > span * 2 / 3
                ax.text(j, i, "—" if math.isnan(v) else f"{v:+.3f}", ha="center",
                        va="center", fontsize=6, color="white" if dark else "black")
        fig.colorbar(image, ax=ax, label="Δ level score vs zero-shot", shrink=0.8)
        return Plot("heatmap", "Strategy/method × level: change vs zero-shot", to_svg(fig),
                    note)


def taxonomy_bars(cells: Sequence[PageCell], taxonomies: Sequence[Taxonomy]) -> Plot | None:
    """One stacked horizontal bar per cell: the share of its samples in each taxonomy class."""
    pairs = [(pc, t) for pc, t in zip(cells, taxonomies, strict=True) if t.total][:MAX_HEAT_ROWS]
    if not pairs:
        return None
    with matplotlib.rc_context(_RC):
        fig = _figure(7.5, 1.0 + 0.3 * len(pairs))
        ax = fig.add_subplot()
        left = [0.0] * len(pairs)
        for name in CLASSES:
            shares = [t.classes[name] / t.total for _, t in pairs]
            if not any(shares):
                continue
            ax.barh(range(len(pairs)), shares, left=left, label=name,
                    color=_TAXONOMY_COLOURS[name])
            left = [a + b for a, b in zip(left, shares, strict=True)]
        ax.set_yticks(range(len(pairs)), [pc.key for pc, _ in pairs], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of samples")
        _legend_below(ax, ncols=4)
        return Plot("taxonomy", "What became of the answers", to_svg(fig))


def all_plots(cells: Sequence[PageCell], taxonomies: Sequence[Taxonomy]) -> tuple[Plot, ...]:
    """Every chart that applies to ``cells``, in page order."""
    made = (level_bars(cells), pareto_scatter(cells), profiles(cells), delta_heatmap(cells),
            taxonomy_bars(cells, taxonomies))
    return tuple(p for p in made if p is not None)
