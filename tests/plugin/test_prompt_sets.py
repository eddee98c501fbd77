"""Runs with different prompt templates (``--gi-prompts``) are told apart (issue 32, section 3),
end to end against a fake endpoint on the tiny suite: the report records the prompt set,
``pareto`` shows both runs' cells, shards of two prompt sets do not merge, and the gate says
the run and its baseline differ in their prompts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.report.schema_check import load_valid_report

from ._suite import CYCLE4, EMPTY3, TREE4

pytestmark = pytest.mark.slow  # whole pytester runs: the full tier (.ci/run)

pytest_plugins = ["pytester"]

SYSTEM = ("You draw graphs, tersely.\n\n$format\n\n$infeasibility\n\n$output_rule\n\n"
          "$completeness\n")


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    """Answers every request right, whatever its system prompt."""
    def answer(body: dict[str, Any]) -> str:
        user = body["messages"][-1]["content"]
        texts = {"3 nodes": EMPTY3, "tree": TREE4, "cycle": CYCLE4}
        return next((a for key, a in texts.items() if key in user),
                    "No such graph exists: the constraints are contradictory.")

    with FakeOpenAIServer(responder=answer) as srv:
        yield srv


@pytest.fixture
def prompts(pytester: pytest.Pytester) -> Path:
    folder = pytester.path / "terse"
    folder.mkdir()
    (folder / "system_default.txt").write_text(SYSTEM, encoding="utf-8")
    return folder


def _run(pytester: pytest.Pytester, suite: Path, server: FakeOpenAIServer, report: Path,
         *extra: str) -> Any:
    result = pytester.runpytest(
        f"--gi-suite={suite}", "--gi-model=m", f"--gi-base-url={server.base_url}",
        "--gi-api-key-env=GI_TEST_KEY", "--gi-cache=none", "--override-ini=gi_max_retries=0",
        "-p", "no:cacheprovider", f"--gi-report={report}", *extra)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-2000:]
    return result


def test_runs_of_two_prompt_sets_are_told_apart(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer, prompts: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    packaged, terse = pytester.path / "packaged.json", pytester.path / "terse.json"
    _run(pytester, suite_dir, server, packaged)
    gated = _run(pytester, suite_dir, server, terse, f"--gi-prompts={prompts}",
                 f"--gi-baseline={packaged}", f"--gi-markdown={pytester.path / 's.md'}")
    # the report records the prompt set; the packaged run records none
    recorded = load_valid_report(terse)["cells"][0]["metadata"]["prompts"]
    assert recorded["name"] == "terse" and recorded["templates"] == ["system_default"]
    assert recorded["sha256"].startswith("sha256:")
    assert "prompts" not in load_valid_report(packaged)["cells"][0]["metadata"]
    # the gate compares like with like, and says where the cells differ
    differ = (f"the cells differ in prompt set (the packaged templates vs terse "
              f"({recorded['sha256'][:19]}…))")
    out = gated.stdout.str()
    assert f"compared with baseline {packaged}: m-zero-shot: 4 instructions paired" in out
    assert differ in out, out[-2000:]
    assert differ in (pytester.path / "s.md").read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["gate", str(terse), "--baseline", str(packaged)]) == 0
    assert differ in capsys.readouterr().out
    # pareto sets the two runs side by side instead of refusing ("is also in")
    assert main(["pareto", str(packaged), str(terse)]) == 0
    table = capsys.readouterr().out
    assert "m-zero-shot [prompts terse (sha256:" in table
    assert sum(1 for line in table.splitlines() if line.startswith("m-zero-shot")) == 2


def test_shards_of_two_prompt_sets_do_not_merge(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer, prompts: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    one, two = pytester.path / "s1.json", pytester.path / "s2.json"
    _run(pytester, suite_dir, server, one, "--gi-shard=1/2")
    _run(pytester, suite_dir, server, two, "--gi-shard=2/2", f"--gi-prompts={prompts}")
    out = pytester.path / "merged.json"
    capsys.readouterr()
    assert main(["merge", str(one), str(two), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    digest = json.loads(two.read_text(encoding="utf-8"))["cells"][0]["metadata"]["prompts"][
        "sha256"]
    assert err == (f"error: cell m-zero-shot: prompts (--gi-prompts) is 'the packaged "
                   f"templates' in {one} but 'terse ({digest[:19]}…)' in {two}: not parts of one "
                   "run"), err
    assert not out.exists()
    # the same prompts in both shards merge, and the merged cell keeps the prompt set
    _run(pytester, suite_dir, server, one, "--gi-shard=1/2", f"--gi-prompts={prompts}")
    assert main(["merge", str(one), str(two), "--out", str(out)]) == 0
    assert load_valid_report(out)["cells"][0]["metadata"]["prompts"]["sha256"] == digest
