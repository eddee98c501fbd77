"""The README is true (issue 33): its Quickstart holds exactly two commands, both of which
``.ci/run`` runs as written, and every other command in it is run as written, by ``.ci/run`` or
by the test below (against a local fake endpoint: ``OPENAI_BASE_URL``, which the openai client
reads, points there, so ``--gi-model=gpt-4o`` needs no network)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.suite.shipped import shipped_suite
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CI_RUN = ROOT / ".ci" / "run"

# What the test runs, in this order, in one empty project folder, with what each must exit.
RUN_HERE: tuple[tuple[str, int], ...] = (
    ("pytest --gi-model=gpt-4o --gi-baseline=ci/baseline.json", 1),  # writes the baseline
    ("pytest --gi-model=gpt-4o --gi-baseline=ci/baseline.json", 0),  # gated against it
    ("python -m pytest_graphinstruct plan ci/baseline.json", 0),
    ("pytest --gi-model=gpt-4o --gi-dry-run", 0),
    ("pytest --gi-model=gpt-4o --gi-max-tokens=1024 --gi-max-cost=5", 0),
    ("pytest --gi-model=gpt-4o --gi-batch", 0),
    ("python -m pytest_graphinstruct score --responses answers.jsonl --report report.json", 0),
    ("pytest --gi-model=gpt-4o --gi-autosave", 0),
    ("pytest --gi-model=gpt-4o --gi-autosave", 0),
    ("python -m pytest_graphinstruct runs compare -2 -1", 0),
    ("python -m pytest_graphinstruct analyze leaderboard --store", 0),
)
ADDOPTS = "--gi-per-level=1 -p no:cacheprovider -o gi_batch_poll=0.05 -o gi_batch_quiet=0.2"
"""Added to every pytest run through ``PYTEST_ADDOPTS`` (the commands' text stays as written):
one instruction per level, and a batch polled every 50 ms instead of 30 s."""


def readme_commands() -> list[tuple[str, str]]:
    """(section, command) of every line of the README's ``bash`` blocks, continuation lines
    joined, in order."""
    out, section, block = [], "", None
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        if line.startswith("```"):
            block = [] if line.strip() == "```bash" and block is None else None
            continue
        if block is not None:
            block.append(line)
            if not line.endswith("\\"):
                command = " ".join(x.rstrip("\\").strip() for x in block)
                out.append((section, re.sub(r"\s+", " ", command).strip()))
                block = []
    return [(s, c) for s, c in out if c]


def ci_lines() -> set[str]:
    return {line.strip() for line in CI_RUN.read_text(encoding="utf-8").splitlines()}


def test_the_quickstart_holds_two_commands_and_ci_runs_both_as_written() -> None:
    quick = [c for s, c in readme_commands() if s == "Quickstart"]
    assert len(quick) == 2, quick
    missing = [c for c in quick if c not in ci_lines()]
    assert not missing, f".ci/run does not run these as written: {missing}"
    assert "-m pytest -n 2" in quick[1]  # command 2 is the test suite


def test_every_readme_command_is_run_by_ci_or_by_this_test() -> None:
    here = {c for c, _ in RUN_HERE}
    ci = ci_lines()  # a command .ci/run runs inside a longer line counts (the install's)
    unrun = [c for _, c in readme_commands()
             if c not in here and not any(c in line for line in ci)]
    assert not unrun, f"README commands nothing runs: {unrun}"
    assert here <= {c for _, c in readme_commands()}, "RUN_HERE names a command not in README"


def _references() -> dict[str, str]:
    """Each shipped instruction's text → its first reference (a refusal for an infeasible
    one): what the fake endpoint answers, so that the runs pass as a good model's would."""
    suite = shipped_suite()
    assert suite is not None
    out = {}
    for level in range(6):
        for rec in json.loads((suite.instructions / f"level_{level}.json").read_text()):
            out[rec["instruction"]] = (rec.get("reference_solutions")
                                       or ["No such graph exists."])[0]
    return out


@pytest.mark.slow  # a dozen pytest and CLI runs in subprocesses
def test_the_readme_commands_run_as_written(tmp_path: Path) -> None:
    answers = _references()

    def respond(body: dict[str, Any]) -> str:
        text = " ".join(str(m.get("content", "")) for m in body.get("messages") or [])
        return next((ref for inst, ref in answers.items() if inst in text), "no graph")

    project = tmp_path / "project"
    project.mkdir()
    suite = shipped_suite()
    assert suite is not None
    with (project / "answers.jsonl").open("w", encoding="utf-8") as out:
        for level in range(6):
            for rec in json.loads((suite.instructions / f"level_{level}.json").read_text())[:2]:
                out.write(json.dumps({"instruction_id": rec["id"], "level": level, "samples": [
                    {"raw_output": answers[rec["instruction"]]}]}) + "\n")
    with FakeOpenAIServer(responder=respond, model="gpt-4o") as server:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GI_", "PYTEST_", "OPENAI_"))}
        env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
                   OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test-key",
                   PYTEST_ADDOPTS=ADDOPTS)
        for command, status in RUN_HERE:
            proc = subprocess.run(command, shell=True, cwd=project, env=env, text=True,
                                  capture_output=True, timeout=600, check=False)
            shown = f"{command}\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}"
            assert proc.returncode == status, shown
            assert "INTERNALERROR" not in proc.stdout + proc.stderr, shown
            assert "Traceback" not in proc.stdout + proc.stderr, shown
    assert (project / "ci" / "baseline.json").is_file()
    (cell,) = json.loads((project / "report.json").read_text())["cells"]
    assert cell["summary"]["passed"] == 12
