from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.errors import GraphInstructError, SuiteError
from pytest_graphinstruct.suite.constraints import Op
from pytest_graphinstruct.suite.loader import check_id, instruction_from_record, load_suite

TREE_REF = ("Graph[name='r', nodes=3] { node_list = ['0','1','2']; "
            "edge_list = [('0','1'),('1','2')]; }")


def record(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "L1-001",
        "level": 1,
        "instruction": "Generate a tree with 3 nodes.",
        "explicit_constraints": ["graph_type=tree", "num_nodes=3"],
        "implicit_constraints": ["num_edges=2"],
        "graph_sizes": ["small"],
        "reference_solutions": [TREE_REF],
        "feasible": True,
    }
    base.update(over)
    return base


def write_suite(root: Path, levels: dict[int, list[Any]]) -> Path:
    for lv, recs in levels.items():
        (root / f"level_{lv}.json").write_text(json.dumps(recs), encoding="utf-8")
    return root


def test_load_small_suite(tmp_path: Path) -> None:
    write_suite(tmp_path, {1: [record(), record(id="L1-002")], 0: [record(id="L0-001", level=0)]})
    suite = load_suite(tmp_path)
    assert [i.id for i in suite] == ["L0-001", "L1-001", "L1-002"]
    inst = suite["L1-001"]
    assert inst.graph_type == "tree" and inst.num_nodes == 3 and inst.size == "small"
    assert inst.explicit[1].op is Op.EQ and inst.implicit[0].value == 2
    assert inst.feasible and inst.references == (TREE_REF,)
    assert len(inst.reference_graphs) == 1
    assert suite.levels == (0, 1) and suite.num_references == 3


def test_levels_filter_and_missing_level(tmp_path: Path) -> None:
    write_suite(tmp_path, {1: [record()]})
    assert len(load_suite(tmp_path, levels=[1])) == 1
    with pytest.raises(SuiteError, match=r"missing level_2\.json"):
        load_suite(tmp_path, levels=[1, 2])
    with pytest.raises(SuiteError, match="unknown level 9"):
        load_suite(tmp_path, levels=[9])


def test_errors_name_file_id_and_string(tmp_path: Path) -> None:
    bad = record(explicit_constraints=["num_nodes=3", "colour=red"])
    write_suite(tmp_path, {1: [bad, record(id="L1-002", implicit_constraints=["density<=x"])]})
    with pytest.raises(SuiteError) as info:
        load_suite(tmp_path)
    msg = str(info.value)
    assert "level_1.json: L1-001" in msg and "'colour=red'" in msg
    assert "L1-002" in msg and "'density<=x'" in msg
    assert "2 problem(s)" in msg


@pytest.mark.parametrize(
    ("over", "fragment"),
    [
        ({"level": "1"}, "'level' must be an integer"),
        ({"level": 7}, "'level' must be an integer 0-5"),
        ({"instruction": ""}, "'instruction' must be a non-empty string"),
        ({"explicit_constraints": "num_nodes=3"}, "must be a list of strings"),
        ({"graph_sizes": ["huge"]}, "unknown size 'huge'"),
        ({"feasible": "yes"}, "'feasible' must be true or false"),
        ({"base_graph": "Graph[name='b'] { edge_list = [(0,"}, "base_graph is not a valid graph"),
        ({"reasoning_steps": [1, 2]}, "'reasoning_steps' must be a list of objects"),
    ],
)
def test_field_errors(tmp_path: Path, over: dict[str, Any], fragment: str) -> None:
    write_suite(tmp_path, {1: [record(**over)]})
    with pytest.raises(SuiteError, match=fragment):
        load_suite(tmp_path)


def test_missing_field_and_non_object(tmp_path: Path) -> None:
    rec = record()
    del rec["explicit_constraints"]
    write_suite(tmp_path, {1: [rec, 5]})
    with pytest.raises(SuiteError) as info:
        load_suite(tmp_path)
    assert "missing field 'explicit_constraints'" in str(info.value)
    assert "record #1: expected an object" in str(info.value)


def test_duplicate_ids_bad_json_and_empty_dir(tmp_path: Path) -> None:
    write_suite(tmp_path, {1: [record(), record()]})
    with pytest.raises(SuiteError, match="duplicate id"):
        load_suite(tmp_path)
    (tmp_path / "level_1.json").write_text("[{", encoding="utf-8")
    with pytest.raises(SuiteError, match="not valid JSON"):
        load_suite(tmp_path)
    (tmp_path / "level_1.json").write_text("{}", encoding="utf-8")
    with pytest.raises(SuiteError, match="expected a JSON array"):
        load_suite(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SuiteError, match=r"no level_<L>\.json files"):
        load_suite(empty)
    with pytest.raises(SuiteError, match="suite not found"):
        load_suite(tmp_path / "nope")


def test_single_record_raises_without_error_list() -> None:
    with pytest.raises(SuiteError, match="colour"):
        instruction_from_record(record(explicit_constraints=["colour=red"]))
    errors: list[str] = []
    assert instruction_from_record(record(level=None), errors=errors) is None
    assert errors


def test_official_suite_loads_unchanged(official_suite_dir: Path) -> None:
    suite = load_suite(official_suite_dir)
    assert len(suite) == 800
    assert suite.num_references == 1582
    counts = {lv: len(suite.level(lv)) for lv in suite.levels}
    assert counts == {0: 100, 1: 200, 2: 200, 3: 150, 4: 100, 5: 50}
    assert sum(1 for i in suite if not i.feasible) == 9
    l5 = suite.level(5)
    assert all(i.base is not None and i.task_type for i in l5)
    assert {i.domain for i in suite.level(4)} == {
        "social", "infrastructure", "knowledge_graph", "citation", "biological",
        "communication", "ecological", "molecular"}
    # the loader keeps what it does not interpret
    assert all(len(i.graph_edits) == 2 and i.reasoning_steps for i in l5)


def test_base_graphs_can_wait_for_their_first_use(tmp_path: Path) -> None:
    base = "Graph[name='b'] { node_list = [0, 1, 2]; edge_list = [(0, 1), (1, 2)]; }"
    write_suite(tmp_path, {1: [record(base_graph=base)]})
    (now,) = load_suite(tmp_path)
    assert "base" in now.__dict__  # parsed at load
    (later,) = load_suite(tmp_path, parse_bases=False)
    assert "base" not in later.__dict__
    assert now == later
    assert later.base is not None and now.base is not None
    edges = sorted(later.base.graph.edges())
    assert edges == sorted(now.base.graph.edges()) == [("0", "1"), ("1", "2")]
    assert later.base is later.base  # parsed once
    (tmp_path / "plain").mkdir()
    (none,) = load_suite(write_suite(tmp_path / "plain", {1: [record()]}), parse_bases=False)
    assert none.base is None


def test_a_malformed_base_graph_not_parsed_at_load_fails_its_first_use(tmp_path: Path) -> None:
    write_suite(tmp_path, {1: [record(base_graph="Graph[name='b'] { edge_list = [(0,")]})
    (inst,) = load_suite(tmp_path, parse_bases=False)  # the suite's other checks still ran
    with pytest.raises(GraphInstructError, match="where a value was expected"):
        _ = inst.base
    with pytest.raises(SuiteError, match="not a valid graph"):
        instruction_from_record(record(base_graph=inst.base_graph))
    lazy = instruction_from_record(record(base_graph=inst.base_graph), parse_base=False)
    assert lazy is not None and lazy.base_graph == inst.base_graph


@pytest.mark.parametrize("bad", ["L1-\x1b[31m001", "L1-001\nPASSED", "L1-\r001", "L1-\u202e001",
                                 "L1-\u2028001", "L1-\x00", "L1-\u200b001", "L1-\x9b2J"])
def test_an_id_that_would_act_on_a_terminal_is_refused_with_the_id_escaped(
        tmp_path: Path, bad: str) -> None:
    write_suite(tmp_path, {1: [record(), record(id=bad)]})
    with pytest.raises(SuiteError) as info:
        load_suite(tmp_path)
    (line,) = [x for x in str(info.value).splitlines() if "'id'" in x]
    assert line.strip().startswith(f"{tmp_path / 'level_1.json'}: record #1: 'id' must be "
                                   "printable text")
    assert bad not in str(info.value) and line.isprintable()
    assert check_id(bad) is not None and "\n" not in (check_id(bad) or "")


def test_a_bad_ids_other_problems_name_the_record_not_the_raw_id(tmp_path: Path) -> None:
    bad = record(id="L1-\x1b[2J", level=9)
    write_suite(tmp_path, {1: [bad]})
    with pytest.raises(SuiteError) as info:
        load_suite(tmp_path)
    text = str(info.value)
    assert "\x1b" not in text and "record #0: 'level' must be an integer 0-5" in text
    with pytest.raises(SuiteError, match="must be a non-empty string, got 7"):
        instruction_from_record(record(id=7))


def test_an_id_with_pytests_separator_is_refused() -> None:
    assert "must not hold '::'" in (check_id("a.py::test_b") or "")
    with pytest.raises(SuiteError, match=r"record #0: 'id' must not hold '::'"):
        instruction_from_record(record(id="L1::001"))


@pytest.mark.parametrize("fine", ["L1-001", "L1 tree #1", "ünïcode-ид-图", "L1-[002]", "a:b/c",
                                  "tab\there", "emoji-🙂"])
def test_every_other_id_is_kept_exactly(fine: str) -> None:
    assert check_id(fine) is None
    inst = instruction_from_record(record(id=fine))
    assert inst is not None and inst.id == fine
