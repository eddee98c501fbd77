from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.score.d5 import mean_instruction_tpv
from pytest_graphinstruct.score.pareto import (
    CellPoint,
    analyze,
    cost_at_quality,
    dominates,
    frontier_distance,
    frontier_quality,
    pareto_bonus,
    pareto_frontier,
    q_per_ktpv,
    s_final,
    sigma_strat,
)
from tests.score.published_results import (
    MODEL_FILES,
    SHORT,
    baseline_cells,
    load,
    requires_published,
    table,
)


def cell(label: str, q: float, c: float | None, model: str = "m", strategy: str = "zero-shot",
         method: str = "baseline") -> CellPoint:
    return CellPoint(label=label, model=model, strategy=strategy, quality=q, cost=c, method=method)


# ---------------------------------------------------------------- dominance and frontier


def test_dominance() -> None:
    a = cell("a", 0.8, 100)
    assert dominates(a, cell("b", 0.7, 100))  # same cost, lower quality
    assert dominates(a, cell("c", 0.8, 200))  # same quality, higher cost
    assert dominates(a, cell("d", 0.7, 200))
    assert not dominates(a, cell("e", 0.8, 100))  # a tie is not domination
    assert not dominates(a, cell("f", 0.9, 200))  # a trade-off
    assert not dominates(a, cell("g", 0.1, None))  # unknown cost is not comparable


def test_frontier_hand_example() -> None:
    pts = [
        cell("A", 0.80, 100),
        cell("B", 0.85, 200),
        cell("C", 0.84, 300),  # dominated by B
        cell("D", 0.70, 50),
        cell("E", 0.80, 100),  # exact duplicate of A: both stay
        cell("F", 0.75, 100),  # same cost as A, lower quality
        cell("G", 0.85, 250),  # same quality as B, dearer
        cell("H", 0.99, None),  # unknown cost: never on the frontier
    ]
    assert [p.label for p in pareto_frontier(pts)] == ["D", "A", "E", "B"]
    assert [pareto_bonus(p, pts) for p in pts] == [1, 1, 0, 1, 1, 0, 0, None]


def test_bonus_and_s_final() -> None:
    assert s_final(0.8, 1) == pytest.approx(0.92)
    assert s_final(0.8, 0) == 0.8
    assert s_final(0.8274, 1) == pytest.approx(0.95151)  # paper Tab. 16, GPT-4o zero-shot
    with pytest.raises(ValueError):
        s_final(0.8, 2)


def test_single_cell_is_its_own_frontier_and_says_so() -> None:
    r = analyze([cell("only", 0.6, 900)])
    (a,) = r.cells
    assert a.on_frontier and a.bonus == 1
    assert a.s_final == pytest.approx(0.69)
    assert a.pareto_compared_cells == 1
    assert a.frontier_distance == 0.0


def test_unknown_cost_is_excluded_not_guessed() -> None:
    r = analyze([cell("x", 0.9, None), cell("y", 0.5, 100), cell("z", 0.4, 200)])
    x, y, z = r.cells
    assert (x.bonus, x.s_final, x.q_per_ktpv, x.frontier_distance) == (None, None, None, None)
    assert x.on_frontier is None
    assert r.excluded == ("x",)
    assert y.pareto_compared_cells == 2
    assert (y.bonus, z.bonus) == (1, 0)


def test_labels_must_be_unique() -> None:
    with pytest.raises(ValueError):
        analyze([cell("a", 0.5, 1), cell("a", 0.6, 2)])


# ---------------------------------------------------------------- efficiency statistics


def test_q_per_ktpv() -> None:
    assert q_per_ktpv(0.9, 2000) == pytest.approx(0.45)
    assert q_per_ktpv(0.8591, 658) == pytest.approx(1.3056, abs=1e-4)  # paper: 1.305
    assert q_per_ktpv(0.9, 0) is None
    assert q_per_ktpv(0.9, None) is None
    assert q_per_ktpv(0.9, math.inf) == 0.0


def test_cost_at_quality() -> None:
    pts = [cell("a", 0.79, 100), cell("b", 0.80, 500), cell("c", 0.95, 300),
           cell("d", 0.99, None)]
    assert cost_at_quality(pts) == 300
    assert cost_at_quality(pts, 0.80) == 300
    assert cost_at_quality(pts, 0.5) == 100
    assert cost_at_quality(pts, 0.96) is None  # d reaches it but its cost is unknown


def test_cost_at_quality_per_model() -> None:
    pts = [cell("a1", 0.85, 700, model="a"), cell("a2", 0.82, 600, model="a", strategy="few"),
           cell("b1", 0.7, 100, model="b")]
    r = analyze(pts)
    assert r.cost_at_q == {"a": 600, "b": None}
    assert r.cheapest_at_q == {"a": "a2", "b": None}


def test_frontier_interpolation_in_log_and_linear_cost() -> None:
    front = [cell("lo", 0.5, 100), cell("hi", 0.9, 10_000)]
    assert frontier_quality(1000, front) == pytest.approx(0.7)  # halfway in log10
    assert frontier_quality(5050, front, log_cost=False) == pytest.approx(0.7)
    assert frontier_quality(50, front) == 0.5  # cheaper than the frontier: its first quality
    assert frontier_quality(20_000, front) == 0.9  # dearer: its last quality
    assert frontier_quality(0, front) == 0.5


def test_frontier_distance_hand_values() -> None:
    front = [cell("lo", 0.5, 100), cell("hi", 0.9, 10_000)]
    assert frontier_distance(cell("p", 0.6, 1000), front) == pytest.approx(0.1)
    assert frontier_distance(cell("p", 0.6, 1000), front, log_cost=False) == 0.0  # above
    assert frontier_distance(cell("q", 0.95, 1000), front) == 0.0  # clipped at 0
    assert frontier_distance(cell("r", 0.1, None), front) is None
    with pytest.raises(ValueError):
        frontier_quality(10, [])


def test_frontier_distance_in_linear_cost() -> None:
    front = [cell("lo", 0.5, 100), cell("hi", 0.9, 10_000)]
    expected = 0.5 + 0.4 * (1000 - 100) / (10_000 - 100) - 0.3
    assert frontier_distance(cell("p", 0.3, 1000), front, log_cost=False) == pytest.approx(expected)


def test_frontier_with_an_infinite_cost_point() -> None:
    front = [cell("a", 0.5, 100), cell("b", 0.6, math.inf)]
    assert frontier_quality(1e6, front) == 0.5
    assert frontier_quality(math.inf, front) == 0.6


def test_analyze_frontier_distances() -> None:
    # mid is dominated by lo; the frontier at its cost (log-halfway) is 0.7
    pts = [cell("lo", 0.5, 100), cell("hi", 0.9, 10_000), cell("mid", 0.45, 1000)]
    r = analyze(pts)
    fd = {a.point.label: a.frontier_distance for a in r.cells}
    assert fd["lo"] == fd["hi"] == 0.0
    assert fd["mid"] == pytest.approx(0.25)
    assert [p.label for p in r.frontiers["*"]] == ["lo", "hi"]


def test_sigma_strat_is_the_population_std() -> None:
    pts = [cell(f"a-{s}", q, 1, model="a", strategy=s)
           for s, q in zip(("zs", "fs", "zc", "fc"), (0.80, 0.82, 0.84, 0.86), strict=True)]
    pts.append(cell("a-fc-vgig", 0.99, 1, model="a", strategy="fc", method="vgig"))  # ignored
    pts.append(cell("b-zs", 0.7, 1, model="b"))
    sig = sigma_strat(pts)
    assert sig["a"] == pytest.approx(math.sqrt(0.0005))
    assert sig["b"] is None
    assert list(sig) == ["a", "b"]


def test_sigma_strat_rejects_duplicate_strategies() -> None:
    with pytest.raises(ValueError):
        sigma_strat([cell("x", 0.5, 1), cell("y", 0.6, 1)])


def test_within_model_scope() -> None:
    pts = [cell("a-zs", 0.80, 500, model="a"),
           cell("a-vgig", 0.85, 600, model="a", method="vgig"),
           cell("b-zs", 0.90, 400, model="b")]
    everyone = {a.point.label: a.bonus for a in analyze(pts).cells}
    assert everyone == {"a-zs": 0, "a-vgig": 0, "b-zs": 1}
    per_model = analyze(pts, scope="model")
    assert {a.point.label: a.bonus for a in per_model.cells} == {"a-zs": 1, "a-vgig": 1,
                                                                 "b-zs": 1}
    assert {a.point.label: a.pareto_compared_cells for a in per_model.cells} == {
        "a-zs": 2, "a-vgig": 2, "b-zs": 1}
    assert set(per_model.frontiers) == {"a", "b"}


# ---------------------------------------------------------------- properties

points_strategy = st.lists(
    st.tuples(st.integers(0, 20).map(lambda i: i / 20),  # coarse grids force ties
              st.one_of(st.none(), st.integers(0, 10).map(lambda i: 100.0 * i))),
    min_size=1, max_size=25,
).map(lambda xs: [cell(f"c{i}", q, c) for i, (q, c) in enumerate(xs)])


@given(points_strategy)
def test_frontier_is_exactly_the_non_dominated_set(pts: list[CellPoint]) -> None:
    front = pareto_frontier(pts)
    labels = {p.label for p in front}
    for a in front:
        assert not any(dominates(b, a) for b in front)
    for p in pts:
        if p.cost is not None and p.label not in labels:
            assert any(dominates(f, p) for f in front)  # dominated, by a frontier point
    brute = {p.label for p in pts if p.cost is not None and not any(dominates(o, p) for o in pts)}
    assert labels == brute
    assert [p.cost for p in front] == sorted(p.cost for p in front)


@given(points_strategy)
def test_cross_cell_numbers_are_bounded(pts: list[CellPoint]) -> None:
    r = analyze(pts)
    for a in r.cells:
        if a.point.cost is None:
            continue
        assert a.bonus == (1 if a.on_frontier else 0)
        assert a.s_final is not None
        assert a.point.quality <= a.s_final <= 1.15 * a.point.quality + 1e-12
        assert a.frontier_distance is not None and 0.0 <= a.frontier_distance <= 1.0
        if a.on_frontier:
            assert a.frontier_distance == 0.0


# ---------------------------------------------------------------- published results


def _published_points() -> list[CellPoint]:
    pts = []
    for (model, strategy), name in sorted(baseline_cells().items()):
        run = load(name)
        tpv = mean_instruction_tpv(r["d5_tokens_per_valid"] for r in run["per_instruction"])
        pts.append(CellPoint(label=name, model=model, strategy=strategy,
                             quality=run["total_score"], cost=tpv))
    return pts


@requires_published
def test_published_tables_reproduce_from_the_score_files() -> None:
    """Tab. 1/2 quality, per-level scores, TPV and Q/kTPV follow from the per-run files.

    TPV here is the release's leaderboard variant (mean of per-instruction TPVs); the files hold
    no token totals, so the project's own TPV (total tokens / total valid) cannot be formed.
    """
    for row in table("tab2_pareto_efficiency.csv"):
        run = load(f"{MODEL_FILES[row['Model']]}-{SHORT[row['Strategy']]}")
        tpv = mean_instruction_tpv(r["d5_tokens_per_valid"] for r in run["per_instruction"])
        assert tpv is not None
        assert round(tpv) == int(row["TPV"])
        assert round(run["total_score"], 4) == float(row["Quality"])
        assert float(row["Final"]) == float(row["Quality"])  # the release printed no bonus
        ratio = q_per_ktpv(run["total_score"], tpv)
        assert ratio is not None and round(ratio, 3) == float(row["Q/kTPV"])
    for row in table("tab1_quality_top15.csv"):
        run = load(f"{MODEL_FILES[row['Model']]}-{SHORT[row['Strategy']]}")
        for level in range(6):
            assert round(run["per_level_scores"][str(level)], 4) == float(row[f"L{level}"])


@requires_published
def test_published_pareto_view_matches_the_paper() -> None:
    pts = _published_points()
    assert len(pts) == 45
    r = analyze(pts)
    # Tab. 16: the 6-point frontier by ascending TPV, with S_final
    front = [(p.model, p.strategy) for p in r.frontiers["*"]]
    assert front == [("gpt4o", "zero-shot"), ("claudesonnet420250514", "zero-shot"),
                     ("claudesonnet46", "zero-shot"), ("claudesonnet46", "zero-cot"),
                     ("claudesonnet46", "few-shot"), ("claudesonnet46", "few-cot")]
    by = {(a.point.model, a.point.strategy): a for a in r.cells}
    paper_sfinal = [0.9515, 0.9594, 0.9880, 1.0097, 1.0161, 1.0371]
    for key, expected in zip(front, paper_sfinal, strict=True):
        assert by[key].s_final == pytest.approx(expected, abs=5e-5)
    assert all(a.pareto_compared_cells == 45 for a in r.cells)
    # Frontier Distance (App. F.3): near-Pareto points, median and maximum
    fd = {k: a.frontier_distance for k, a in by.items()}
    assert fd[("metallamaLlama3370BInstructTurbo", "zero-shot")] == pytest.approx(0.013, abs=5e-4)
    assert fd[("gpt41", "zero-shot")] == pytest.approx(0.018, abs=5e-4)
    assert fd[("gpt35turbo", "few-cot")] == pytest.approx(0.189, abs=5e-4)
    assert fd[("gpt4omini", "few-cot")] == pytest.approx(0.187, abs=5e-4)
    assert fd[("gpt35turbo", "few-shot")] == pytest.approx(0.159, abs=5e-4)
    assert fd[("metallamaMetaLlama318BInstruct", "few-shot")] == pytest.approx(0.219, abs=1e-3)
    assert fd[("metallamaMetaLlama318BInstruct", "few-cot")] == pytest.approx(0.219, abs=1e-3)
    off = [v for v in fd.values() if v]
    assert len(off) == 39
    assert statistics.median(off) == pytest.approx(0.062, abs=5e-4)
    # Tab. 18: Cost@Q=0.8 per model (cheapest strategy: zero-shot in every row) or never
    paper_cost = {"claudesonnet46": 658, "qwen35122ba10b": 892, "qwen35397ba17b": 916,
                  "gpt4o": 578, "metallamaLlama3370BInstructTurbo": 590, "gpt41": 599,
                  "deepseekaiDeepSeekV3": 673, "qwen3535ba3b": 1019,
                  "claudesonnet420250514": 625, "gpt35turbo": None, "gpt4omini": None,
                  "metallamaMetaLlama318BInstruct": None}
    assert {m: (None if c is None else round(c)) for m, c in r.cost_at_q.items()} == paper_cost
    assert all(lbl is None or lbl.endswith("zero-shot") for lbl in r.cheapest_at_q.values())
    # σ_strat (§5.2): population std of Q across the four strategies
    paper_sigma = {"metallamaMetaLlama318BInstruct": 0.022, "gpt4omini": 0.025,
                   "gpt35turbo": 0.027, "metallamaLlama3370BInstructTurbo": 0.007,
                   "deepseekaiDeepSeekV3": 0.008, "claudesonnet46": 0.015,
                   "qwen35122ba10b": 0.015, "qwen35397ba17b": 0.018}
    for model, expected in paper_sigma.items():
        assert r.sigma_strat[model] == pytest.approx(expected, abs=5e-4)
    assert r.sigma_strat["claudesonnet420250514"] is None  # zero-shot only
