from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.__main__ import main
from tests.report.schema_check import load_valid_report

pytestmark = pytest.mark.slow  # subprocesses / whole-suite runs: the full tier (.ci/run)

TREE = "Graph[name='t', nodes=4] { node_list = [0, 1, 2, 3]; edge_list = [(0,1), (1,2), (1,3)]; }"


def suite(root: Path) -> Path:
    recs = [
        {"id": "L1-001", "level": 1, "instruction": "Generate a tree with 4 nodes.",
         "explicit_constraints": ["graph_type=tree", "num_nodes=4"],
         "implicit_constraints": ["num_edges=3"], "graph_sizes": ["small"]},
        {"id": "L1-002", "level": 1, "instruction": "Generate a cycle with 4 nodes.",
         "explicit_constraints": ["graph_type=cycle", "num_nodes=4"],
         "implicit_constraints": [], "graph_sizes": ["small"]},
    ]
    (root / "level_1.json").write_text(json.dumps(recs), encoding="utf-8")
    return root


def responses(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def sample(raw: str) -> dict[str, Any]:
    return {"raw_output": raw, "input_tokens": 50, "output_tokens": 20, "api_calls": 1}


def test_score_writes_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = suite(tmp_path)
    r = responses(tmp_path / "r.jsonl", [
        {"instruction_id": "L1-001", "level": 1,
         "samples": [sample(TREE), sample("```\n" + TREE.replace("(1,3)", "(2,3), (3,0)")
                                          + "\n```"), sample("garbage")]},
        {"instruction_id": "L9-999", "level": 9, "samples": []},
    ])
    out = tmp_path / "out" / "report.json"
    assert main(["score", "--suite", str(s), "--responses", str(r), "--report", str(out)]) == 0
    report = load_valid_report(out)
    (cell,) = report["cells"]
    assert cell["metadata"]["model"] == "r" and cell["metadata"]["strategy"] == "zero-shot"
    (entry,) = cell["per_instruction"]
    assert entry["instruction_id"] == "L1-001" and entry["level"] == 1
    ok, cyc, bad = entry["samples"]
    assert ok["parsed"] and not ok["refusal"] and ok["error"] is None
    assert ok["violations"] == [] and ok["derived_violations"] == []
    assert cyc["parsed"] and "graph_type=tree" in cyc["violations"]
    assert "num_edges=3" in cyc["violations"]
    assert bad["parsed"] is False and bad["error"]
    # D4: only the valid sample counts (the cycle fails graph_type, garbage did not parse)
    assert entry["d4_instruction_score"] == pytest.approx(1.0)
    assert entry["valid_samples"] == 1
    assert "scored 1 of 2 instructions (1 without answers, 1 unknown ids)" in (
        capsys.readouterr().out)
    run = report["run"]
    assert run["replay"] == str(r) and run["suite_hash"].startswith("sha256:")
    assert run["filter"]["selected"] == 1 and run["endpoints"] == {"r": None}
    # deterministic output, but for the times of the run record
    again = tmp_path / "again.json"
    main(["score", "--suite", str(s), "--responses", str(r), "--report", str(again)])
    second = load_valid_report(again)
    for data in (report, second):
        data["run"]["started"] = data["run"]["finished"] = None
    assert second == report


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--suite", "NOPE"], "suite not found"),
        (["--responses", "NOPE.jsonl"], "cannot read responses file"),
        (["--levels", "1,x"], "--levels must be a comma list"),
        (["--max-nodes", "0"], "max_nodes must be a positive integer"),
    ],
)
def test_bad_input_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], fragment: str
) -> None:
    s = suite(tmp_path)
    r = responses(tmp_path / "r.jsonl", [{"instruction_id": "L1-001", "samples": []}])
    base = {"--suite": str(s), "--responses": str(r), "--report": str(tmp_path / "o.json")}
    for i in range(0, len(args), 2):
        base[args[i]] = args[i + 1]
    argv = ["score"] + [x for kv in base.items() for x in kv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and fragment in err


def test_module_entry_point(tmp_path: Path) -> None:
    s = suite(tmp_path)
    r = responses(tmp_path / "r.jsonl", [{"instruction_id": "L1-001", "samples": [sample(TREE)]}])
    out = tmp_path / "o.json"
    proc = subprocess.run([sys.executable, "-m", "pytest_graphinstruct", "score", "--suite",
                           str(s), "--responses", str(r), "--report", str(out)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert load_valid_report(out)["cells"][0]["per_instruction"][0][
        "d4_instruction_score"] == pytest.approx(1.0)


def test_official_references_as_answers_score_d4_one(
    official_suite_dir: Path, tmp_path: Path
) -> None:
    from pytest_graphinstruct.suite.loader import load_suite

    s = load_suite(official_suite_dir, levels=[0, 1, 2, 3, 4])
    rows = []
    for inst in s:
        raws = list(inst.references) or ["No such graph exists: the constraints are infeasible."]
        rows.append({"instruction_id": inst.id, "level": inst.level,
                     "samples": [sample(x) for x in raws]})
    r = responses(tmp_path / "r.jsonl", rows)
    out = tmp_path / "o.json"
    assert main(["score", "--suite", str(official_suite_dir), "--levels", "0,1,2,3,4",
                 "--responses", str(r), "--report", str(out)]) == 0
    report = load_valid_report(out)
    items = report["cells"][0]["per_instruction"]
    below = {e["instruction_id"]: e["d4_instruction_score"] for e in items
             if e["d4_instruction_score"] < 1.0 - 1e-9}
    # Known data defects (docs/CONSTRAINTS.md): references with self-loops fail no-contradiction.
    assert set(below) <= KNOWN_IMPERFECT_REFERENCES, below


# L4 communication references with self-loops (reference-release-notes §1.2 / §7.20).
KNOWN_IMPERFECT_REFERENCES = {f"L4-0{n}" for n in range(66, 74)}


def test_export_cache_round_trips_to_score(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_graphinstruct.answers import Answer, Message, Usage
    from pytest_graphinstruct.models.base import Request
    from pytest_graphinstruct.models.caching.cache import AnswerCache

    cache = AnswerCache(tmp_path / "cache")
    req = Request(model="m", messages=(Message("user", "tree please"),), instruction_id="L1-001",
                  cell="m-zero-shot")
    cache.put(req.cache_key("http://x"), req,
              Answer(text=TREE, usage=Usage(7, 9), calls=2, finish_reason="stop"),
              endpoint="http://x")
    out = tmp_path / "raw.jsonl"
    assert main(["cache", "export", "--cache", str(tmp_path / "cache"), "--out", str(out)]) == 0
    (line,) = out.read_text(encoding="utf-8").splitlines()
    rec = json.loads(line)
    assert rec["instruction_id"] == "L1-001" and rec["level"] == 1
    assert rec["samples"] == [{"raw_output": TREE, "input_tokens": 7, "output_tokens": 9,
                               "api_calls": 2}]
    report = tmp_path / "r.json"
    assert main(["score", "--suite", str(suite(tmp_path)), "--responses", str(out),
                 "--report", str(report)]) == 0
    assert main(["cache", "export", "--cache", str(tmp_path / "none"), "--out", str(out)]) == 2
    assert "no answer cache" in capsys.readouterr().err


def _cell_report(model: str, strategy: str, scores: dict[str, float], tpv: float | None,
                 path: Path) -> Path:
    from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
    from pytest_graphinstruct.run.records.results import CellMetadata, ItemResult

    label = f"{model}-{strategy}"
    items = [ItemResult(instruction_id=i, level=int(i[1]), cell=label, model=model,
                        strategy=strategy, level_score=s, tokens=None if tpv is None
                        else int(tpv), d5_valid=1) for i, s in scores.items()]
    report = with_pareto([build_cell(CellMetadata(model, strategy), items)])
    path.write_text(json.dumps(report.to_json()), encoding="utf-8")
    return path


def test_pareto_and_compare_commands(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    ids = [f"L2-{n:03d}" for n in range(40)]
    a = _cell_report("m", "zero-shot", dict.fromkeys(ids, 0.9), 500.0, tmp_path / "a.json")
    b = _cell_report("m", "few-shot", dict.fromkeys(ids, 0.6), 900.0, tmp_path / "b.json")
    c = _cell_report("n", "zero-shot", dict.fromkeys(ids, 0.95), None, tmp_path / "c.json")
    assert main(["pareto", str(a), str(b), str(c)]) == 0
    out = capsys.readouterr().out
    assert "m-zero-shot *" in out and "m-few-shot *" not in out
    assert "1.0350" in out  # S_final = 0.9 * 1.15 on the frontier
    assert "unknown cost (no token usage), left out: n-zero-shot" in out
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "L2 level score -0.300 [-0.300, -0.300]; Holm p(no drop)=" in out
    assert main(["pareto", str(a), str(a)]) == 2
    assert "is also in" in capsys.readouterr().err


MOST_COMMANDS = 11
"""Issue 33: the commands ``--help`` lists fit in a head (ten then; issue 49 §3 added
``serve-oracle``, the endpoint a newcomer tries the plugin on)."""


def test_help_lists_at_most_eleven_commands_and_no_retired_name(
        capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_graphinstruct.__main__ import _RETIRED

    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    # a name as long as serve-oracle has its help on the next line
    listed = re.findall(r"^    ([a-z-]+)(?: |$)", out, flags=re.M)
    assert listed == ["score", "show", "html", "merge", "gate", "plan", "build", "cache",
                      "analyze", "runs", "serve-oracle"]
    assert len(listed) <= MOST_COMMANDS
    assert not set(listed) & set(_RETIRED)
    assert out.startswith("usage: python -m pytest_graphinstruct [-h] COMMAND ...")


def test_a_retired_command_works_with_one_note_and_its_replacement_says_the_same(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = [f"L2-{n:03d}" for n in range(40)]
    a = _cell_report("m", "zero-shot", dict.fromkeys(ids, 0.9), 500.0, tmp_path / "a.json")
    b = _cell_report("m", "few-shot", dict.fromkeys(ids, 0.6), 900.0, tmp_path / "b.json")
    assert main(["compare", str(a), str(b)]) == 0
    old = capsys.readouterr()
    assert old.err == ("warning: 'compare' is deprecated and goes in the next release: use runs "
                       "compare (it takes report files; 'gate' for an exit status)\n")
    assert main(["runs", "compare", str(a), str(b)]) == 0
    new = capsys.readouterr()
    assert new.err == ""
    assert "cell m-zero-shot (A) vs m-few-shot (B)" in new.out  # one cell each: paired
    for line in ("L2 level score -0.300 [-0.300, -0.300]; Holm p(no drop)=",
                 "verdict: regression"):
        assert line in old.out and line in new.out
    assert main(["leaderboard", str(a), str(b), "--format", "csv"]) == 0
    old = capsys.readouterr()
    assert main(["analyze", "leaderboard", str(a), str(b), "--format", "csv"]) == 0
    new = capsys.readouterr()
    assert old.out == new.out and new.err == ""
    assert old.err.startswith("warning: 'leaderboard' is deprecated")


def test_runs_compare_pairs_named_cells_and_refuses_a_missing_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ids = [f"L2-{n:03d}" for n in range(40)]
    a = _cell_report("m", "zero-shot", dict.fromkeys(ids, 0.9), 500.0, tmp_path / "a.json")
    b = _cell_report("n", "zero-shot", dict.fromkeys(ids, 0.9), 500.0, tmp_path / "b.json")
    assert main(["runs", "compare", str(a), str(b), "--a-cell", "m-zero-shot",
                 "--b-cell", "n-zero-shot", "--test", "templates"]) == 0
    assert "verdict: no significant change" in capsys.readouterr().out
    assert main(["runs", "compare", str(a), str(b), "--cell", "x-zero-shot"]) == 2
    assert "has no cell 'x-zero-shot' (its cells: m-zero-shot)" in capsys.readouterr().err
