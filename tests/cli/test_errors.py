"""Bad input to the command line: one line on stderr, ``error: `` and the file, exit status 2,
never a traceback.  And ``pareto``/``compare`` on good input: the release's files and ours.

Every command runs as ``python -m pytest_graphinstruct`` in a subprocess (no network: these
commands read and write local files only), from a temporary directory.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.records.results import CellMetadata, ItemResult, RunReport
from pytest_graphinstruct.run.records.writer import write_report

pytestmark = pytest.mark.slow  # subprocesses / whole-suite runs: the full tier (.ci/run)

PUBLISHED = Path(__file__).resolve().parents[2].parent / "shared" / "published-results"
QUALITY = PUBLISHED / "quality"

TREE = ("Graph[name='t', nodes=4] { node_list = [0, 1, 2, 3]; "
        "edge_list = [(0,1), (1,2), (1,3)]; }")


def cli(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """The command's run; a retired command's (``compare``, ``pareto``: one more release) with
    the deprecation note it starts its stderr with taken off."""
    proc = subprocess.run([sys.executable, "-m", "pytest_graphinstruct", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    note = f"warning: '{args[0]}' is deprecated and goes in the next release: use "
    if str(args[0]) in ("compare", "pareto"):
        first, _, rest = proc.stderr.partition("\n")
        assert first.startswith(note), proc.stderr
        proc.stderr = rest
    return proc


def assert_error(proc: subprocess.CompletedProcess[str], names: Path | str) -> str:
    """Exit status 2, exactly one stderr line ``error: …`` naming ``names``, no traceback."""
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    (line,) = lines
    assert line.startswith("error: ") and str(names) in line, line
    assert proc.returncode == 2, (proc.returncode, line)
    return line


# -- report files: pareto, compare ---------------------------------------------------------------


def our_report(*cells: tuple[str, str, float, int | None]) -> RunReport:
    """A report of cells ``(model, strategy, level score, tokens per item or None)``."""
    built = []
    for model, strategy, score, tokens in cells:
        items = [ItemResult(instruction_id=f"L{lv}-{k:03d}", level=lv,
                            cell=f"{model}-{strategy}", model=model, strategy=strategy,
                            level_score=min(1.0, score + k / 100), tokens=tokens, d5_valid=1,
                            api_calls=1)
                 for lv in (1, 2) for k in range(10)]
        built.append(build_cell(CellMetadata(model, strategy), items))
    return with_pareto(built)


def v2_with_string_tpv(path: Path) -> None:
    data = our_report(("m", "zero-shot", 0.8, 100)).to_json()
    data["cells"][0]["summary"]["tpv"] = "cheap"
    path.write_text(json.dumps(data), encoding="utf-8")


BAD_REPORTS: dict[str, Callable[[Path], object]] = {
    "missing": lambda p: None,
    "empty": lambda p: p.write_text("", encoding="utf-8"),
    "whitespace": lambda p: p.write_text("  \n", encoding="utf-8"),
    "not JSON": lambda p: p.write_text("{'cells': [", encoding="utf-8"),
    "JSON array": lambda p: p.write_text("[]", encoding="utf-8"),
    "empty object": lambda p: p.write_text("{}", encoding="utf-8"),
    "unknown schema": lambda p: p.write_text('{"schema": "x/3"}', encoding="utf-8"),
    "v2 missing cells": lambda p: p.write_text('{"schema": "graphinstruct-report/2"}',
                                               encoding="utf-8"),
    "v2 TPV a string": v2_with_string_tpv,
    "quality.json level 9": lambda p: p.write_text(json.dumps(
        {"per_instruction": [], "per_level_scores": {"9": 0.5}, "total_score": 0.5}),
        encoding="utf-8"),
    "a directory": lambda p: p.mkdir(),
}


@pytest.fixture()
def good(tmp_path: Path) -> Path:
    path = tmp_path / "good.json"
    write_report(our_report(("m", "zero-shot", 0.8, 100)), path)
    return path


@pytest.mark.parametrize("kind", list(BAD_REPORTS))
def test_pareto_bad_report(tmp_path: Path, good: Path, kind: str) -> None:
    bad = tmp_path / "bad.json"
    BAD_REPORTS[kind](bad)
    assert_error(cli(tmp_path, "pareto", good, bad), bad)


@pytest.mark.parametrize("kind", ["missing", "empty", "not JSON", "JSON array", "empty object",
                                  "v2 TPV a string", "a directory"])
@pytest.mark.parametrize("position", ["baseline", "candidate"])
def test_compare_bad_report(tmp_path: Path, good: Path, kind: str, position: str) -> None:
    bad = tmp_path / "bad.json"
    BAD_REPORTS[kind](bad)
    args = (bad, good) if position == "baseline" else (good, bad)
    assert_error(cli(tmp_path, "compare", *args), bad)


def test_compare_a_level_score_that_is_not_a_number(tmp_path: Path, good: Path) -> None:
    bad = tmp_path / "bad.json"
    data = json.loads(good.read_text(encoding="utf-8"))
    data["cells"][0]["per_instruction"][3]["level_score"] = "high"
    bad.write_text(json.dumps(data), encoding="utf-8")
    line = assert_error(cli(tmp_path, "compare", good, bad), bad)
    assert "per_instruction[3].level_score: is not a finite number" in line


def test_compare_needs_cell_for_a_report_of_several(tmp_path: Path, good: Path) -> None:
    several = tmp_path / "several.json"
    write_report(our_report(("m", "zero-shot", 0.8, 100), ("m", "few-shot", 0.7, 300)), several)
    line = assert_error(cli(tmp_path, "compare", good, several), several)
    assert "pass --cell (m-zero-shot, m-few-shot)" in line
    assert_error(cli(tmp_path, "compare", "--cell", "m-zero-cot", good, several), good)
    ok = cli(tmp_path, "compare", "--cell", "m-zero-shot", several, several)
    assert ok.returncode == 0 and "n=20" in ok.stdout, ok.stderr


def test_pareto_refuses_a_cell_twice(tmp_path: Path, good: Path) -> None:
    copy = tmp_path / "copy.json"
    copy.write_bytes(good.read_bytes())
    line = assert_error(cli(tmp_path, "pareto", good, copy), copy)
    assert "cell m-zero-shot is also in" in line


def test_pareto_and_compare_on_our_reports(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_report(our_report(("m", "zero-shot", 0.9, 100), ("m", "few-shot", 0.6, 900)), a)
    write_report(our_report(("n", "zero-shot", 0.95, None)), b)
    proc = cli(tmp_path, "pareto", a, b)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert "m-zero-shot *" in proc.stdout and "m-few-shot *" not in proc.stdout
    assert "unknown cost (no token usage), left out: n-zero-shot" in proc.stdout
    one, other = tmp_path / "one.json", tmp_path / "other.json"
    write_report(our_report(("m", "zero-shot", 0.9, 100)), one)
    write_report(our_report(("m", "few-shot", 0.6, 900)), other)
    proc = cli(tmp_path, "compare", one, other)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert "candidate m-few-shot - baseline m-zero-shot" in proc.stdout
    assert ("L1 level score -0.300 [-0.300, -0.300]; Holm p(no drop)=0.001: regressed; 10 "
            "instructions") in proc.stdout
    assert "S_total: " in proc.stdout and "n=20" in proc.stdout


@pytest.fixture()
def quality() -> Path:
    if not QUALITY.is_dir():
        pytest.skip(f"published results not found ({PUBLISHED})")
    return QUALITY


def test_compare_published_files_pairs_instructions_by_id(tmp_path: Path,
                                                            quality: Path) -> None:
    proc = cli(tmp_path, "compare", quality / "gpt4o-zero-shot.quality.json",
               quality / "gpt4o-few-shot.quality.json")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    out = proc.stdout
    assert out.startswith("candidate gpt4o-few-shot - baseline gpt4o-zero-shot")
    for lv, n in {0: 100, 1: 200, 2: 200, 3: 150, 4: 100, 5: 50}.items():
        line = next(x for x in out.splitlines() if x.startswith(f"  L{lv} level score "))
        assert line.endswith(f"; {n} instructions") and "Holm p(no " in line, line
    assert "n=800" in out and "unpaired" not in out


def test_pareto_published_files(tmp_path: Path, quality: Path) -> None:
    files = [quality / f"gpt4o-{s}.quality.json"
             for s in ("zero-shot", "few-shot", "zero-cot", "few-cot")]
    proc = cli(tmp_path, "pareto", *files)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("cell (* Pareto-optimal)")
    rows = {line.split()[0]: line for line in lines[2:6]}
    assert set(rows) == {"gpt4o-zero-shot", "gpt4o-few-shot", "gpt4o-zero-cot",
                         "gpt4o-few-cot"}
    assert "0.8443" in rows["gpt4o-few-shot"] and "2349.8" in rows["gpt4o-few-shot"]
    assert "gpt4o: Cost@Q=0.8: 577.5" in proc.stdout


def test_pareto_all_published_files_and_ours_together(tmp_path: Path, quality: Path,
                                                      good: Path) -> None:
    files = sorted(quality.glob("*.quality.json"))
    proc = cli(tmp_path, "pareto", *files, good)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    labels = {line.split()[0] for line in proc.stdout.splitlines()[2:2 + len(files) + 1]}
    assert len(labels) == len(files) + 1 and "m-zero-shot" in labels


# -- score: --responses and --suite ---------------------------------------------------------------


def suite_dir(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "level_1.json").write_text(json.dumps([
        {"id": "L1-001", "level": 1, "instruction": "Generate a tree with 4 nodes.",
         "explicit_constraints": ["graph_type=tree", "num_nodes=4"],
         "implicit_constraints": ["num_edges=3"], "graph_sizes": ["small"]}]),
        encoding="utf-8")
    return root


def responses_file(path: Path) -> Path:
    path.write_text(json.dumps({"instruction_id": "L1-001", "level": 1, "samples": [
        {"raw_output": TREE, "input_tokens": 10, "output_tokens": 20}]}) + "\n",
        encoding="utf-8")
    return path


def score(tmp_path: Path, suite: Path, responses: Path) -> subprocess.CompletedProcess[str]:
    return cli(tmp_path, "score", "--suite", suite, "--responses", responses,
               "--report", tmp_path / "out" / "report.json", "--pools", "none")


BAD_RESPONSES: dict[str, str | None] = {
    "missing": None,
    "empty": "",
    "whitespace": "\n  \n",
    "not JSON": "{'instruction_id': 'L1-001'}\n",
    "not JSON, no newline": "{'instruction_id'",
    "a JSON array line": "[1, 2]\n",
    "no instruction_id": '{"samples": []}\n',
    "samples not a list": '{"instruction_id": "L1-001", "samples": {}}\n',
    "raw_output not a string": '{"instruction_id": "L1-001", "samples": [{"raw_output": 1}]}\n',
}


@pytest.mark.parametrize("kind", list(BAD_RESPONSES))
def test_score_bad_responses(tmp_path: Path, kind: str) -> None:
    responses = tmp_path / "responses.jsonl"
    if BAD_RESPONSES[kind] is not None:
        responses.write_text(str(BAD_RESPONSES[kind]), encoding="utf-8")
    assert_error(score(tmp_path, suite_dir(tmp_path / "suite"), responses), responses)
    assert not (tmp_path / "out" / "report.json").exists()


BAD_SUITES: dict[str, str | None] = {
    "missing": None,
    "no level file": "",
    "empty level file": "",
    "whitespace level file": "  \n",
    "not JSON": "[{'id': 'L1-001'",
    "an object, not a list": '{"id": "L1-001"}',
    "records not objects": '[1, "L1-001"]',
    "record without id": '[{"level": 1, "instruction": "x"}]',
}


@pytest.mark.parametrize("kind", list(BAD_SUITES))
def test_score_bad_suite(tmp_path: Path, kind: str) -> None:
    suite = tmp_path / "suite"
    content = BAD_SUITES[kind]
    names: Path = suite
    if content is not None:
        suite.mkdir()
        if kind != "no level file":
            names = suite / "level_1.json"
            names.write_text(content, encoding="utf-8")
    assert_error(score(tmp_path, suite, responses_file(tmp_path / "r.jsonl")), names)


def test_score_good_input(tmp_path: Path) -> None:
    proc = score(tmp_path, suite_dir(tmp_path / "suite"), responses_file(tmp_path / "r.jsonl"))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert "scored 1 of 1 instructions" in proc.stdout


# -- export-cache ---------------------------------------------------------------------------------


BAD_CACHES: dict[str, str | None] = {
    "missing directory": None,
    "empty answers.jsonl": "",
    "garbage answers.jsonl": "garbage{\nmore garbage\n",
    "wrong-shaped answers.jsonl": '[1, 2]\n{"key": 1}\n',
}


@pytest.mark.parametrize("kind", list(BAD_CACHES))
def test_export_cache_bad_cache(tmp_path: Path, kind: str) -> None:
    cache = tmp_path / "cache"
    names: Path = cache
    if BAD_CACHES[kind] is not None:
        cache.mkdir()
        names = cache / "answers.jsonl"
        names.write_text(str(BAD_CACHES[kind]), encoding="utf-8")
    out = tmp_path / "raw.jsonl"
    assert_error(cli(tmp_path, "cache", "export", "--cache", cache, "--out", out), names)
    assert not out.exists()
