"""The contamination probe's rules: templates (not ids) are paired, the gap is seed0 − fresh,
a gap is real only when its interval excludes 0 *and* it exceeds the ±0.005 band, and an item
the suite does not hold is a one-line error naming it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.errors import GraphInstructError, SuiteError
from pytest_graphinstruct.report.analyses.contamination import (
    NO_GAP,
    REAL,
    REAL_REVERSED,
    UNDECIDED,
    dimension_mismatch,
    open_probe_cell,
    pool_mismatch,
    probe,
    side_warnings,
)
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.records.results import CellMetadata, CellReport, ItemResult
from pytest_graphinstruct.score.details import ScoreDetails
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import Suite, instruction_from_record, load_suite

ROOT = Path(__file__).resolve().parents[3]


def suite(templates: Mapping[str, str], root: str = "s") -> Suite:
    """A suite of ``{id: template}`` (level read from the id, ``L<level>-NNN``)."""
    return Suite(tuple(Instruction(id=i, level=int(i[1]), text="t", explicit=(), template=t)
                       for i, t in templates.items()), root=root)


def cell(scores: Mapping[str, float | None], *, model: str = "m",
         errors: Sequence[str] = ()) -> CellReport:
    """A cell whose item ``id`` has level score ``scores[id]`` (``errors``: items with none)."""
    items = [ItemResult(instruction_id=i, level=int(i[1]), cell=f"{model}-zero-shot",
                        model=model, strategy="zero-shot",
                        outcome="error" if i in errors else "passed",
                        level_score=None if i in errors else s)
             for i, s in scores.items()]
    return build_cell(CellMetadata(model, "zero-shot"), items)


def grid(levels: Mapping[int, int], per: int = 3) -> dict[str, str]:
    """``{id: template}``: ``levels[l]`` templates per level, ``per`` items each."""
    out = {}
    for lv, k in levels.items():
        for n in range(k * per):
            out[f"L{lv}-{n:03d}"] = f"t{lv}_{n % k}"
    return out


TEMPLATES = grid({1: 8, 2: 6})


def scores(offset: float, wobble: float = 0.02) -> dict[str, float]:
    """Level scores near 0.8 + ``offset``, varying by template and item (deterministic)."""
    return {i: 0.8 + offset + wobble * (((n * 7) % 5) - 2) / 2
            for n, i in enumerate(TEMPLATES)}


def test_higher_scores_on_the_committed_suite_are_a_real_gap() -> None:
    result = probe(cell(scores(0.05)), cell(scores(0.0)), suite(TEMPLATES), suite(TEMPLATES))
    assert result.verdict == REAL
    assert result.overall.gap == pytest.approx(0.05)
    assert result.overall.interval is not None and result.overall.interval.low > 0
    assert [(r.level, r.templates, r.items_seed0) for r in result.levels] == [(1, 8, 24),
                                                                               (2, 6, 18)]
    assert result.real_levels == (1, 2)
    line = result.verdict_line()
    assert line.startswith("verdict: real gap — the model scores higher on the committed suite")
    assert "seed0 − fresh = +0.0500" in line and "contamination" in line


def test_lower_scores_on_the_committed_suite_are_a_gap_but_not_contamination() -> None:
    result = probe(cell(scores(-0.03)), cell(scores(0.0)), suite(TEMPLATES), suite(TEMPLATES))
    assert result.verdict == REAL_REVERSED
    assert result.overall.gap == pytest.approx(-0.03)
    assert "not a sign of contamination" in result.verdict_line()


def test_a_narrow_interval_within_the_noise_band_is_no_real_gap() -> None:
    result = probe(cell(scores(0.002)), cell(scores(0.0)), suite(TEMPLATES), suite(TEMPLATES))
    d = result.overall.interval
    assert d is not None and d.low > 0  # the interval excludes 0 …
    assert result.verdict == NO_GAP  # … but 0.002 is inside the paper's ±0.005 band
    assert "within the ±0.005 noise floor" in result.verdict_line()
    assert result.real_levels == ()
    # a smaller stated threshold makes the same gap real
    assert probe(cell(scores(0.002)), cell(scores(0.0)), suite(TEMPLATES), suite(TEMPLATES),
                 threshold=0.001).verdict == REAL


def test_noise_either_way_is_no_real_gap() -> None:
    ids = list(TEMPLATES)
    fresh = scores(0.0)
    # every other template a little up, the others a little down: the mean gap is ~0
    seed0 = {i: s + (0.04 if int(TEMPLATES[i].rsplit("_", 1)[1]) % 2 else -0.04)
             for i, s in fresh.items()}
    result = probe(cell(seed0), cell(fresh), suite(TEMPLATES), suite(TEMPLATES))
    assert result.verdict == NO_GAP and "the CI includes 0" in result.verdict_line()
    assert len(ids) == sum(t.items_seed0 for t in result.templates)
    assert {abs(round(t.gap, 9)) for t in result.templates} == {0.04}


def test_templates_are_paired_not_ids() -> None:
    # the same ids carry other templates in the fresh suite (as at L4/L5 of a real fresh seed)
    committed = {"L4-001": "kg", "L4-002": "kg", "L4-003": "ppi", "L4-004": "ppi"}
    fresh = {"L4-001": "ppi", "L4-002": "ppi", "L4-003": "kg", "L4-004": "kg"}
    score = {"kg": 0.9, "ppi": 0.5}
    result = probe(cell({i: score[t] for i, t in committed.items()}),
                   cell({i: score[t] for i, t in fresh.items()}), suite(committed), suite(fresh))
    assert [(t.name, t.gap) for t in result.templates] == [("L4 kg", 0.0), ("L4 ppi", 0.0)]
    assert result.verdict == NO_GAP


def test_template_scores_are_means_of_scored_items_and_unpaired_templates_are_listed() -> None:
    committed = {"L1-001": "a", "L1-002": "a", "L1-003": "b", "L1-004": "c", "L1-005": "a"}
    fresh = {"L1-001": "a", "L1-002": "b", "L1-003": "b", "L1-004": "d"}
    seed0 = cell({"L1-001": 0.9, "L1-002": 0.6, "L1-003": 0.7, "L1-004": 0.1, "L1-005": None},
                 errors=["L1-005"])
    result = probe(seed0, cell({"L1-001": 0.5, "L1-002": 0.4, "L1-003": 0.6, "L1-004": 1.0}),
                   suite(committed), suite(fresh))
    by_name = {t.name: t for t in result.templates}
    assert set(by_name) == {"L1 a", "L1 b"}
    assert by_name["L1 a"].items_seed0 == 2  # the error item counts nowhere
    assert by_name["L1 a"].score_seed0 == pytest.approx(0.75)
    assert by_name["L1 b"].score_fresh == pytest.approx(0.5)
    assert result.overall.gap == pytest.approx(((0.75 - 0.5) + (0.7 - 0.5)) / 2)
    assert result.unpaired_seed0 == ("L1 c",) and result.unpaired_fresh == ("L1 d",)
    text = "\n".join(result.lines())
    assert "scored in the committed report only, left out (1): L1 c" in text
    assert "scored in the fresh report only, left out (1): L1 d" in text


def test_one_template_has_no_interval_and_no_verdict() -> None:
    one = {"L0-001": "nodes", "L0-002": "nodes"}
    result = probe(cell({"L0-001": 1.0, "L0-002": 1.0}), cell({"L0-001": 0.1, "L0-002": 0.1}),
                   suite(one), suite(one))
    assert result.overall.interval is None and result.verdict == UNDECIDED
    assert result.verdict_line() == ("verdict: undecided — 1 template(s) scored in both "
                                     "reports; the bootstrap by template needs at least 2")
    row = next(line for line in result.lines() if line.startswith("L0"))
    assert row.split()[-2:] == ["—", "—"]  # interval and "real" absent, not invented


def test_the_report_shows_levels_largest_gaps_and_escapes_template_names() -> None:
    names = {f"L2-{n:03d}": f"t{n}" for n in range(12)}
    names["L2-011"] = "evil\x1b[2Jname"
    gaps = {i: 0.5 + n / 100 for n, i in enumerate(names)}
    result = probe(cell(gaps), cell(dict.fromkeys(names, 0.5)), suite(names), suite(names),
                   b=500, seed=3)
    lines = result.lines("seed0.json", "fresh.json")
    assert lines[0] == ("contamination probe: seed0 − fresh, paired bootstrap by template "
                        "(500 resamples, 95% CI, seed 3)")
    assert lines[1] == "  committed: cell m-zero-shot — seed0.json"
    text = "\n".join(lines)
    assert "\x1b" not in text and "evil\\x1b[2Jname" in text
    assert "largest template gaps (10 of 12):" in text
    top = [t.template for t in result.largest(3)]
    assert top == ["evil\x1b[2Jname", "t10", "t9"]
    assert lines[-1] == result.verdict_line()


def test_results_are_deterministic_per_seed() -> None:
    a = probe(cell(scores(0.01)), cell(scores(0.0)), suite(TEMPLATES), suite(TEMPLATES), seed=7)
    b = probe(cell(scores(0.01)), cell(scores(0.0)), suite(TEMPLATES), suite(TEMPLATES), seed=7)
    assert a == b


@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=30))
def test_swapping_the_sides_negates_gap_and_interval(pairs: list[tuple[float, float]]) -> None:
    names = {f"L3-{n:03d}": f"t{n}" for n in range(len(pairs))}
    a = cell({i: x for i, (x, _) in zip(names, pairs, strict=True)})
    f = cell({i: y for i, (_, y) in zip(names, pairs, strict=True)})
    ab = probe(a, f, suite(names), suite(names), b=200)
    ba = probe(f, a, suite(names), suite(names), b=200)
    d, e = ab.overall.interval, ba.overall.interval
    assert d is not None and e is not None
    assert ab.overall.gap == pytest.approx(-ba.overall.gap, abs=1e-12)
    assert (d.low, d.high) == pytest.approx((-e.high, -e.low), abs=1e-9)
    assert d.low <= d.high
    assert {ab.verdict, ba.verdict} in ({NO_GAP}, {REAL, REAL_REVERSED})


# -- errors ------------------------------------------------------------------------------------

def test_an_item_missing_from_the_suite_is_one_line_naming_it() -> None:
    with pytest.raises(GraphInstructError) as info:
        probe(cell({"L1-001": 0.5, "L1-009": 0.5}), cell({"L1-001": 0.5}),
              suite({"L1-001": "a"}, root="/x/instructions"), suite({"L1-001": "a"}),
              names=("seed0.json", "fresh.json"))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("seed0.json: item L1-009 of cell m-zero-shot is not in the suite "
                              "/x/instructions")


def test_a_suite_without_templates_or_on_other_levels_is_an_error() -> None:
    bare = Suite((Instruction(id="L1-001", level=1, text="t", explicit=()),), root="official")
    with pytest.raises(GraphInstructError, match="instruction L1-001 has no 'template' field"):
        probe(cell({"L1-001": 0.5}), cell({"L1-001": 0.5}), bare, bare)
    wrong = Suite((Instruction(id="L1-001", level=2, text="t", explicit=(), template="a"),))
    with pytest.raises(GraphInstructError, match="on level 1 in the report but on level 2"):
        probe(cell({"L1-001": 0.5}), cell({"L1-001": 0.5}), wrong, wrong)


def test_nothing_in_common_and_bad_settings_are_errors() -> None:
    with pytest.raises(GraphInstructError, match="no template scored in both reports"):
        probe(cell({"L1-001": 0.5}), cell({"L1-001": 0.5}), suite({"L1-001": "a"}),
              suite({"L1-001": "b"}))
    ok = (cell({"L1-001": 0.5}), cell({"L1-001": 0.5}), suite({"L1-001": "a"}),
          suite({"L1-001": "a"}))
    with pytest.raises(GraphInstructError, match="--resamples must be at least 1"):
        probe(*ok, b=0)
    with pytest.raises(GraphInstructError, match="--threshold must be >= 0"):
        probe(*ok, threshold=-0.1)


# -- the suite side: templates loaded, suites found --------------------------------------------

def test_the_loader_keeps_the_template_field() -> None:
    base = {"id": "L0-001", "level": 0, "instruction": "Create a graph with 3 nodes.",
            "explicit_constraints": ["num_nodes=3"]}
    inst = instruction_from_record({**base, "template": "nodes"})
    assert inst is not None and inst.template == "nodes"
    plain = instruction_from_record(base)
    assert plain is not None and plain.template is None
    with pytest.raises(SuiteError, match="'template' must be a non-empty string"):
        instruction_from_record({**base, "template": 3})
    committed = load_suite(ROOT / "instructions", levels=[0, 5])
    assert all(i.template for i in committed)
    assert len({i.template for i in committed.level(0)}) == 4


def _report(path: Path, *cells: CellReport) -> str:
    from pytest_graphinstruct.run.records.writer import write_report

    write_report(with_pareto(list(cells)), path)
    return str(path)


def _suite_dir(root: Path, records: Mapping[str, str], seed: int) -> Path:
    root.mkdir(parents=True)
    by_level: dict[int, list[dict[str, object]]] = {}
    for i, t in records.items():
        by_level.setdefault(int(i[1]), []).append(
            {"id": i, "level": int(i[1]), "instruction": "Create a graph with 3 nodes.",
             "explicit_constraints": ["num_nodes=3"], "template": t})
    for lv, recs in by_level.items():
        (root / f"level_{lv}.json").write_text(json.dumps(recs), encoding="utf-8")
    (root / "manifest.json").write_text(json.dumps({"seed": seed}), encoding="utf-8")
    return root


def test_open_probe_cell_uses_the_recorded_suite_or_the_given_one(tmp_path: Path) -> None:
    from pytest_graphinstruct.run.records.reader import read_report

    names = {"L1-001": "a", "L1-002": "b"}
    s0 = _suite_dir(tmp_path / "s0", names, 0)
    s1 = _suite_dir(tmp_path / "s1", names, 12345)
    recorded = build_cell(CellMetadata("m", "zero-shot", suite=str(s0)),
                          list(cell({"L1-001": 0.5, "L1-002": 0.6}).per_instruction))
    path = _report(tmp_path / "r.json", recorded)
    side = open_probe_cell(read_report(path), path, None, None, "--suite-seed0")
    assert side.suite.root == str(s0) and side.suite_seed == 0
    assert side.describe() == f"{path}, suite {s0} (seed 0)"
    other = open_probe_cell(read_report(path), path, None, str(s1), "--suite-fresh")
    assert other.suite.root == str(s1) and other.suite_seed == 12345
    assert side_warnings(side, other) == []
    same = side_warnings(side, side)
    assert len(same) == 1 and "same suite" in same[0] and "run-to-run noise" in same[0]

    nowhere = _report(tmp_path / "n.json", cell({"L1-001": 0.5}))
    with pytest.raises(GraphInstructError, match="records no suite; pass --suite-seed0=DIR"):
        open_probe_cell(read_report(nowhere), nowhere, None, None, "--suite-seed0")
    with pytest.raises(GraphInstructError, match=r"suite not found: .*; pass --suite-fresh=DIR"):
        open_probe_cell(read_report(nowhere), nowhere, None, str(tmp_path / "gone"),
                        "--suite-fresh")


def test_open_probe_cell_picks_a_cell(tmp_path: Path) -> None:
    from pytest_graphinstruct.run.records.reader import read_report

    two = _report(tmp_path / "two.json", cell({"L1-001": 0.5}, model="m"),
                  cell({"L1-001": 0.5}, model="n"))
    with pytest.raises(GraphInstructError) as info:
        open_probe_cell(read_report(two), two, None, None, "--suite-seed0")
    assert str(info.value) == (f"{two} holds 2 cells; pick one with --cell (m-zero-shot, "
                               "n-zero-shot)")
    with pytest.raises(GraphInstructError, match="no cell 'x-zero-shot'"):
        open_probe_cell(read_report(two), two, "x-zero-shot", None, "--suite-seed0")
    s = _suite_dir(tmp_path / "s", {"L1-001": "a"}, 0)
    picked = open_probe_cell(read_report(two), two, "n-zero-shot", str(s), "--suite-seed0")
    assert picked.cell.label == "n-zero-shot"


def test_runs_scored_with_and_without_pools_are_told_apart() -> None:
    ids = {"L3-001": 0.9, "L3-002": 0.8, "L1-001": 1.0}
    plain = cell(ids)
    pooled = build_cell(plain.metadata, [
        replace(r, details=ScoreDetails(pool_references=("l3-x-0001",) if r.level == 3
                                        else None),
                dimension_scores={**r.dimension_scores, "D3": 0.9})
        for r in plain.per_instruction])
    assert pool_mismatch(pooled, plain) == ["L3: pool references only in the committed run"]
    assert pool_mismatch(plain, pooled) == ["L3: pool references only in the fresh run"]
    assert pool_mismatch(pooled, pooled) == []
    assert dimension_mismatch(plain, pooled) == ["L1: D3 only in the fresh run",
                                                 "L3: D3 only in the fresh run"]
    assert dimension_mismatch(pooled, pooled) == []
