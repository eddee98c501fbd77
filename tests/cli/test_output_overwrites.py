"""Every command of ``python -m pytest_graphinstruct`` that writes a file refuses, in one line and
with exit status 2, an output that is one of its inputs — the same path, another spelling of it,
a symlink or a hard link to it — or one of the answer cache's files, before it writes anything;
the input is left byte-identical (issue 47 §5: ``gate --markdown`` onto the baseline turned it
into Markdown, ``html --out`` onto its report replaced it, ``cache export --out`` onto the
cache's ``answers.jsonl`` emptied the cache).  Each case runs the command as a user would, in a
subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_graphinstruct.answers import Answer, Message, Usage
from pytest_graphinstruct.models.base import Request
from pytest_graphinstruct.models.caching.cache import AnswerCache
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    Coverage,
    ItemResult,
    RunInfo,
    RunReport,
)
from pytest_graphinstruct.run.records.writer import write_report

pytestmark = pytest.mark.slow  # a subprocess per case: the full tier (.ci/run)

ROOT = Path(__file__).resolve().parents[2]


def _report() -> RunReport:
    """A complete report of one cell (20 items at L0), which can serve as a baseline."""
    items = [ItemResult(instruction_id=f"L0-{k:03d}", level=0, cell="m-zero-shot", model="m",
                        strategy="zero-shot", level_score=1.0 if k % 2 else 0.8,
                        outcome="passed" if k % 2 else "failed") for k in range(20)]
    run = with_pareto([build_cell(CellMetadata("m", "zero-shot", samples_per_instruction=1),
                                  items)])
    return replace(run, coverage=Coverage(), run=RunInfo(level_hashes={0: "sha256:" + "0" * 64}))


def _saved(path: Path) -> Path:
    write_report(_report(), path)
    return path


def _cache(folder: Path) -> Path:
    """An answer cache at ``folder`` holding one answer of cell ``m-zero-shot``."""
    cache = AnswerCache(folder)
    request = Request(model="m", messages=(Message("user", "a tree please"),),
                      instruction_id="L1-001", cell="m-zero-shot", sample_index=0)
    assert cache.put(request.cache_key("http://a"), request,
                     Answer(text="Graph[nodes=1] {}", usage=Usage(7, 9), finish_reason="stop"),
                     endpoint="http://a")
    return folder


def _command(cwd: Path, *args: str, env: dict[str, str] | None = None,
             ) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), environ.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "pytest_graphinstruct", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**environ, **(env or {})})


def _refused(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """The one error line of a refused command (exit 2), which says ``words``."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr
    assert "writing it would overwrite" in lines[0] and "write it to another file" in lines[0]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def _spelled(tmp_path: Path, target: Path, spelling: str) -> Path:
    """``target`` named another way: as given, through ``..``, a symlink, a hard link."""
    if spelling == "same":
        return target
    if spelling == "dotted":
        return target.parent / ".." / target.parent.name / target.name
    link = tmp_path / f"{spelling}-{target.name}"
    if spelling == "symlink":
        link.symlink_to(target)
    else:
        os.link(target, link)
    return link


SPELLINGS = ["same", "dotted", "symlink", "hardlink"]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_gate_markdown_onto_the_baseline_is_refused(tmp_path: Path, spelling: str) -> None:
    (tmp_path / "in").mkdir()
    report, base = _saved(tmp_path / "in" / "c.json"), _saved(tmp_path / "in" / "X.json")
    before = base.read_bytes()
    done = _command(tmp_path, "gate", str(report), "--baseline", str(base), "--markdown",
                    str(_spelled(tmp_path, base, spelling)))
    _refused(done, "--markdown", "the --baseline report X.json")
    assert base.read_bytes() == before


def test_gate_markdown_onto_its_report_or_the_step_summary_onto_an_input_is_refused(
        tmp_path: Path) -> None:
    report, base = _saved(tmp_path / "c.json"), _saved(tmp_path / "X.json")
    before = report.read_bytes()
    _refused(_command(tmp_path, "gate", str(report), "--markdown", str(report)),
             "--markdown", "the report c.json")
    # $GITHUB_STEP_SUMMARY, which --markdown appends to, naming the baseline
    done = _command(tmp_path, "gate", str(report), "--baseline", str(base), "--markdown",
                    str(tmp_path / "s.md"), env={"GITHUB_STEP_SUMMARY": str(base)})
    _refused(done, "$GITHUB_STEP_SUMMARY", "the --baseline report X.json")
    assert report.read_bytes() == before and not (tmp_path / "s.md").exists()
    assert base.read_bytes() == before


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_html_out_onto_its_report_is_refused(tmp_path: Path, spelling: str) -> None:
    (tmp_path / "in").mkdir()
    report = _saved(tmp_path / "in" / "c.json")
    before = report.read_bytes()
    done = _command(tmp_path, "html", str(report), "--out",
                    str(_spelled(tmp_path, report, spelling)))
    _refused(done, "--out", "the report c.json")
    assert report.read_bytes() == before


def test_html_out_onto_its_baseline_is_refused(tmp_path: Path) -> None:
    report, base = _saved(tmp_path / "c.json"), _saved(tmp_path / "X.json")
    before = base.read_bytes()
    done = _command(tmp_path, "html", str(report), "--baseline", str(base), "--out", str(base))
    _refused(done, "--out", "the --baseline report X.json")
    assert base.read_bytes() == before


def test_merge_out_onto_a_shard_report_is_refused(tmp_path: Path) -> None:
    report = _saved(tmp_path / "shard-1.json")
    before = report.read_bytes()
    _refused(_command(tmp_path, "merge", str(report), "--out", str(report)),
             "--out", "the shard report shard-1.json")
    assert report.read_bytes() == before


def test_analyze_out_onto_its_report_is_refused(tmp_path: Path) -> None:
    report = _saved(tmp_path / "c.json")
    before = report.read_bytes()
    _refused(_command(tmp_path, "analyze", "leaderboard", str(report), "--out", str(report)),
             "--out", "the report c.json")
    assert report.read_bytes() == before


def test_score_report_onto_its_responses_is_refused(tmp_path: Path) -> None:
    responses = tmp_path / "r.jsonl"
    responses.write_text(json.dumps({"instruction_id": "L0-001", "level": 0, "samples": [
        {"raw_output": "Graph[nodes=3] {}"}]}) + "\n", encoding="utf-8")
    before = responses.read_bytes()
    done = _command(tmp_path, "score", "--responses", str(responses), "--report",
                    str(responses))
    _refused(done, "--report", "the --responses file r.jsonl")
    assert responses.read_bytes() == before


def _into_cache(cache: Path) -> dict[str, Callable[[Path], Path]]:
    """Ways to name the cache's answers file as the export's output."""
    def linked_folder(tmp: Path) -> Path:
        (tmp / "via").symlink_to(cache)
        return tmp / "via" / "answers.jsonl"
    return {"same": lambda tmp: cache / "answers.jsonl",
            "relative": lambda tmp: Path(os.path.relpath(cache / "answers.jsonl", tmp)),
            "symlinked folder": linked_folder,
            "hardlink": lambda tmp: _spelled(tmp, cache / "answers.jsonl", "hardlink")}


@pytest.mark.parametrize("spelling", ["same", "relative", "symlinked folder", "hardlink"])
def test_cache_export_onto_the_cache_file_is_refused(tmp_path: Path, spelling: str) -> None:
    cache = _cache(tmp_path / "c")
    answers = cache / "answers.jsonl"
    before = answers.read_bytes()
    out = _into_cache(cache)[spelling](tmp_path)
    done = _command(tmp_path, "cache", "export", "--cache", str(cache), "--out", str(out))
    _refused(done, "--out", "the answer cache's answers.jsonl")
    assert answers.read_bytes() == before


@pytest.mark.parametrize("name", ["batches.json", "pools/l3.npz"])
def test_cache_export_onto_another_file_of_the_cache_is_refused(tmp_path: Path,
                                                                 name: str) -> None:
    cache = _cache(tmp_path / "c")
    done = _command(tmp_path, "cache", "export", "--cache", str(cache), "--out",
                    str(cache / name))
    _refused(done, "--out", "the answer cache's")
    assert not (cache / name).exists()


def test_cache_merge_into_one_of_its_sources_is_refused(tmp_path: Path) -> None:
    first, second = _cache(tmp_path / "a"), _cache(tmp_path / "b")
    before = (first / "answers.jsonl").read_bytes()
    done = _command(tmp_path, "cache", "merge", str(first), str(second), "--out", str(first))
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: --out ") and "is the source cache" in line, line
    assert (first / "answers.jsonl").read_bytes() == before


def test_an_output_elsewhere_is_written_as_before(tmp_path: Path) -> None:
    report, base = _saved(tmp_path / "c.json"), _saved(tmp_path / "X.json")
    done = _command(tmp_path, "gate", str(report), "--baseline", str(base), "--markdown",
                    str(tmp_path / "summary.md"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "summary.md").read_text(encoding="utf-8").startswith("## GraphInstruct")
    cache = _cache(tmp_path / "c")
    done = _command(tmp_path, "cache", "export", "--cache", str(cache), "--out",
                    str(tmp_path / "raw.jsonl"))
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "raw.jsonl").read_text(encoding="utf-8"))["samples"]
