"""RunConfig: constrained decoding, methods and their rounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.run.config import Cell, build_run_config
from pytest_graphinstruct.suite.shipped import shipped_suite
from tests.plugin._suite import write_suite


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path)


def test_constrained_adds_a_twin_after_every_baseline_cell(suite: Path) -> None:
    run = build_run_config({"model": "local,gpt-x", "strategy": "zero-shot,few-cot",
                            "suite": str(suite), "constrained": True}, rootdir=suite)
    assert run is not None and run.constrained_format == "auto"
    assert [c.label for c in run.cells] == [
        "local-zero-shot", "local-zero-shot-constrained", "local-few-cot",
        "local-few-cot-constrained", "gpt-x-zero-shot", "gpt-x-zero-shot-constrained",
        "gpt-x-few-cot", "gpt-x-few-cot-constrained"]
    assert run.models == ("local", "gpt-x")


def test_without_the_flag_only_baseline_cells(suite: Path) -> None:
    run = build_run_config({"model": "local", "suite": str(suite),
                            "constrained_format": "gbnf"}, rootdir=suite)
    assert run is not None and run.cells == (Cell("local", "zero-shot"),)
    assert run.constrained_format == "gbnf"


def test_unknown_constrained_format_is_a_usage_error(suite: Path) -> None:
    with pytest.raises(GraphInstructError, match="gi_constrained_format must be one of"):
        build_run_config({"model": "local", "suite": str(suite), "constrained": True,
                          "constrained_format": "regex"}, rootdir=suite)


def test_timeout_is_left_to_the_backend_unless_given(suite: Path) -> None:
    run = build_run_config({"model": "local", "suite": str(suite)}, rootdir=suite)
    assert run is not None and run.timeout_s is None
    run = build_run_config({"model": "local", "suite": str(suite), "timeout": "30"},
                           rootdir=suite)
    assert run is not None and run.timeout_s == 30.0


def test_json_schema_is_refused_for_the_local_model(suite: Path) -> None:
    with pytest.raises(GraphInstructError, match="cannot be used with --gi-model=local"):
        build_run_config({"model": "local", "suite": str(suite), "constrained": True,
                          "constrained_format": "json-schema"}, rootdir=suite)


def test_several_rounds_make_one_cell_per_value_for_iterative_methods(suite: Path) -> None:
    run = build_run_config({"model": "m", "suite": str(suite), "method": "none,vgig-fine,caap,sc",
                            "vgig_rounds": "1, 3,1"}, rootdir=suite)
    assert run is not None
    assert [c.method for c in run.cells] == [
        "baseline", "vgig-fine@T1", "vgig-fine@T3", "caap", "sc@T1", "sc@T3"]
    assert run.vgig_rounds == 1  # the first value: the rounds of a method that names none
    assert [run.rounds(c.method) for c in run.cells] == [1, 1, 3, 1, 1, 3]
    assert [c.label for c in run.cells][1] == "m-zero-shot-vgig-fine@T1"


def test_a_method_may_name_its_rounds(suite: Path) -> None:
    run = build_run_config({"model": "m", "suite": str(suite), "method": "vgig@T0,retry@T5,vgig",
                            "vgig_rounds": "2"}, rootdir=suite)
    assert run is not None
    assert [(c.method, run.rounds(c.method)) for c in run.cells] == [
        ("vgig@T0", 0), ("retry@T5", 5), ("vgig", 2)]


@pytest.mark.parametrize(("method", "rounds", "message"), [
    ("caap@T2", None, "only vgig, retry, sc, combined take rounds"),
    ("vgig@Tx", None, "only vgig, retry, sc, combined take rounds"),
    ("vgig@T99", None, "@T<0..50>"),
    ("vgig", "2,-1", "--gi-vgig-rounds must be >= 0"),
    ("vgig", "2,x", "--gi-vgig-rounds must be an integer"),
])
def test_bad_rounds_are_usage_errors(suite: Path, method: str, rounds: str | None,
                                     message: str) -> None:
    raw = {"model": "m", "suite": str(suite), "method": method}
    if rounds is not None:
        raw["vgig_rounds"] = rounds
    with pytest.raises(GraphInstructError, match=message.replace("+", r"\+")):
        build_run_config(raw, rootdir=suite)


@pytest.mark.parametrize(("first", "second"), [("html", "report"), ("markdown", "report"),
                                                ("html", "markdown")])
def test_two_outputs_naming_one_file_are_refused(suite: Path, tmp_path: Path, first: str,
                                                 second: str) -> None:
    same = tmp_path / "out.txt"
    with pytest.raises(GraphInstructError, match=f"--gi-{second}.*name the same file|"
                                                 f"--gi-{first}.*name the same file"):
        build_run_config({"model": "oracle", "suite": str(suite), first: str(same),
                          second: str(tmp_path / "." / "out.txt")}, rootdir=suite)


@pytest.mark.parametrize("shard", [f"1/{10**20}", "1/" + "7" * 5000])
def test_an_absurd_shard_count_is_refused_with_the_options(suite: Path, shard: str) -> None:
    with pytest.raises(GraphInstructError, match="--gi-shard: N may be at most 100,000"):
        build_run_config({"model": "oracle", "suite": str(suite), "shard": shard},
                         rootdir=suite)


def test_the_run_holds_its_prompt_texts(suite: Path, tmp_path: Path) -> None:
    from pytest_graphinstruct.prompts.texts import PACKAGED

    run = build_run_config({"model": "m", "suite": str(suite)}, rootdir=suite)
    assert run is not None and run.templates is PACKAGED
    assert run.method_context.templates is PACKAGED
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "cot_suffix.txt").write_text("Think hard.\n", encoding="utf-8")
    run = build_run_config({"model": "m", "suite": str(suite), "prompts": "prompts"},
                           rootdir=tmp_path)
    assert run is not None and run.templates.folder == folder
    assert run.templates.render("cot_suffix") == "Think hard."
    assert run.method_context.templates == run.templates


@pytest.mark.parametrize(("name", "text", "message"), [
    (None, "", "--gi-prompts: .* is not a folder"),
    ("system_default.txt", "Be a $poet.\n", r"system_default.txt: unknown \$poet"),
])
def test_bad_prompt_overrides_are_refused_with_the_options(suite: Path, tmp_path: Path,
                                                          name: str | None, text: str,
                                                          message: str) -> None:
    folder = tmp_path / "prompts"
    if name is not None:
        folder.mkdir()
        (folder / name).write_text(text, encoding="utf-8")
    with pytest.raises(GraphInstructError, match=message):
        build_run_config({"model": "m", "suite": str(suite), "prompts": str(folder)},
                         rootdir=suite)


def test_cost_options_are_read_and_checked(suite: Path, tmp_path: Path) -> None:
    run = build_run_config({"model": "gpt-4o,oracle", "suite": str(suite), "max_cost": "2.5",
                            "max_tokens": "100", "dry_run": True}, rootdir=suite)
    assert run is not None and run.max_cost == 2.5 and run.dry_run and run.prices is None
    with pytest.raises(GraphInstructError, match="--gi-max-cost needs --gi-max-tokens"):
        build_run_config({"model": "gpt-4o", "suite": str(suite), "max_cost": "1"},
                         rootdir=suite)
    with pytest.raises(GraphInstructError, match=r"no price for my-model in prices\.json; "
                                                  "give one with --gi-prices"):
        build_run_config({"model": "my-model", "suite": str(suite), "max_cost": "1",
                          "max_tokens": "10"}, rootdir=suite)
    bad = tmp_path / "mine.json"
    bad.write_text('{"currency": "USD", "taken": "2025-01-01", "models": {"m": {}}}',
                   encoding="utf-8")
    with pytest.raises(GraphInstructError, match=r"mine\.json: models\.m\.input_per_1m is missing"):
        build_run_config({"model": "m", "suite": str(suite), "prices": str(bad)},
                         rootdir=suite)


def test_batch_mode_is_read_and_checked(tmp_path: Path) -> None:
    from pytest_graphinstruct.run.config import BatchMode

    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "level_1.json").write_text("[]", encoding="utf-8")
    base = {"suite": str(suite), "base_url": "http://127.0.0.1:1/v1"}
    run = build_run_config({**base, "model": "gpt-4o", "batch": True, "batch_poll": 5.0,
                            "batch_fallback": True}, rootdir=tmp_path)
    assert run is not None and run.batch == BatchMode(poll_s=5.0, quiet_s=2.0, fallback=True)
    plain = build_run_config({**base, "model": "gpt-4o"}, rootdir=tmp_path)
    assert plain is not None and plain.batch is None
    with pytest.raises(GraphInstructError, match="oracle has no Batch API"):
        build_run_config({**base, "model": "oracle", "batch": True}, rootdir=tmp_path)
    with pytest.raises(GraphInstructError,
                       match="gi_batch_fallback needs --gi-batch"):
        build_run_config({**base, "model": "gpt-4o", "batch_fallback": True}, rootdir=tmp_path)


def test_replace_baseline_is_an_update_that_may_narrow_the_baseline(suite: Path) -> None:
    base = str(suite / "b.json")
    run = build_run_config({"model": "oracle", "suite": str(suite), "baseline": base,
                            "replace_baseline": True}, rootdir=suite)
    assert run is not None and run.update_baseline and run.replace_baseline
    run = build_run_config({"model": "oracle", "suite": str(suite), "baseline": base,
                            "update_baseline": True}, rootdir=suite)
    assert run is not None and run.update_baseline and not run.replace_baseline
    with pytest.raises(GraphInstructError, match="--gi-replace-baseline needs --gi-baseline"):
        build_run_config({"model": "oracle", "suite": str(suite), "replace_baseline": True},
                         rootdir=suite)


@pytest.mark.parametrize("given", [",", " , ", ",,"])
def test_a_model_list_of_no_names_is_a_usage_error(suite: Path, given: str) -> None:
    with pytest.raises(GraphInstructError, match="names no model"):
        build_run_config({"model": given, "suite": str(suite)}, rootdir=suite)
    assert build_run_config({"model": None, "suite": str(suite)}, rootdir=suite) is None


def test_auto_samples_are_a_cap_against_a_baseline(suite: Path, tmp_path: Path) -> None:
    base = str(tmp_path / "base.json")
    run = build_run_config({"model": "m", "suite": str(suite), "samples": "auto",
                            "baseline": base}, rootdir=suite)
    assert run is not None and (run.samples, run.auto_samples) == (None, 5)
    run = build_run_config({"model": "m", "suite": str(suite), "samples": "auto:3",
                            "baseline": base}, rootdir=suite)
    assert run is not None and run.auto_samples == 3
    run = build_run_config({"model": "m", "suite": str(suite), "samples": "4"}, rootdir=suite)
    assert run is not None and (run.samples, run.auto_samples) == (4, None)


@pytest.mark.parametrize(("given", "message"), [
    ({}, "needs a baseline to be compared with"),
    ({"update_baseline": True}, r"cannot write one \(--gi-update-baseline\)"),
    ({"method": "vgig"}, "cannot run a method"),
    ({"shard": "1/2"}, "decides over a whole level"),
], ids=["no-baseline", "update", "method", "shard"])
def test_what_auto_samples_cannot_do_is_refused(suite: Path, tmp_path: Path,
                                                given: dict[str, object], message: str) -> None:
    options: dict[str, object] = {"model": "m", "suite": str(suite), "samples": "auto", **given}
    if given:
        options["baseline"] = str(tmp_path / "base.json")
    with pytest.raises(GraphInstructError, match=message):
        build_run_config(options, rootdir=suite)


def test_without_a_suite_a_run_takes_the_one_the_package_ships(tmp_path: Path) -> None:
    empty = tmp_path / "project"
    empty.mkdir()
    run = build_run_config({"model": "oracle"}, rootdir=empty)
    shipped = shipped_suite()
    assert run is not None and shipped is not None
    assert run.suite == shipped.instructions and run.pools == shipped.pools


def test_a_projects_own_instructions_folder_comes_first(tmp_path: Path) -> None:
    own = write_suite(tmp_path / "project" / "instructions")
    run = build_run_config({"model": "oracle"}, rootdir=own.parent)
    assert run is not None and run.suite == own


def test_a_run_that_writes_the_baseline_asks_the_baseline_samples(suite: Path,
                                                                   tmp_path: Path) -> None:
    """Issue 48: no baseline file yet, or --gi-update-baseline, and no --gi-samples: five
    samples per instruction (gi_baseline_samples); a gated run keeps one, an explicit count
    wins, recorded answers keep theirs."""
    base = tmp_path / "base.json"

    def samples(**given: str) -> int | None:
        run = build_run_config({"model": "m", "suite": str(suite), **given}, rootdir=suite)
        assert run is not None
        return run.samples

    assert samples(baseline=str(base)) == 5  # missing: this run writes it
    assert samples(baseline=str(base), baseline_samples="3") == 3
    assert samples(baseline=str(base), samples="1") == 1
    base.write_text("{}", encoding="utf-8")
    assert samples(baseline=str(base)) == 1  # there: a gated run of the default count
    assert samples(baseline=str(base), update_baseline="true") == 5
    assert samples() == 1
