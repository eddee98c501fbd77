"""The cache knows the model, end to end (issue 19): a provider redeploys another snapshot
under the same model name and answers worse; a rerun on the same cache asks the new snapshot
and says so in one line, ``--override-ini=gi_reuse_stale_cache=true`` reuses the old answers
and says so, and a run whose answers all came from the cache says that plainly — without
xdist and with ``-n 2`` (the controller learns the snapshot, the workers get it through
``workerinput``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.report.schema_check import load_valid_report

from ._suite import EMPTY3, TREE4

pytestmark = pytest.mark.slow  # whole runs through pytester (subprocesses for -n 2)

pytest_plugins = ["pytester"]

OLD, NEW = "fake-2024-01-25", "fake-2024-06-13"
SAMPLES = 2
ANSWERS = 4 * SAMPLES  # 4 instructions in the tiny suite


def good(body: dict[str, Any]) -> str:
    """The old snapshot: the tree, the 3-node graph and the refusal right, the cycle wrong."""
    user = body["messages"][-1]["content"]
    if "tree with 4 nodes" in user:
        return TREE4
    if "3-regular" in user:
        return "No such graph exists: 3*5 is odd, so this is impossible."
    return EMPTY3


def worse(body: dict[str, Any]) -> str:
    """The new snapshot: three nodes and no edges, whatever is asked."""
    return EMPTY3


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test-snapshot-0123")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    with FakeOpenAIServer(responder=good) as srv:
        srv.served_model, srv.system_fingerprint = OLD, "fp_old"
        yield srv


def _run(pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer, xdist: bool,
         *extra: str) -> Any:
    args = [f"--gi-suite={suite_dir}", "--gi-model=fake-model",
            f"--gi-base-url={server.base_url}", "--gi-api-key-env=GI_TEST_KEY",
            f"--gi-cache={pytester.path / 'cache'}", f"--gi-samples={SAMPLES}",
            f"--gi-report={pytester.path / 'r.json'}", "-p", "no:cacheprovider", *extra]
    server.reset()
    if xdist:
        return pytester.runpytest_subprocess(*args, "-n", "2")
    return pytester.runpytest(*args)


def _lines(result: Any, text: str) -> list[str]:
    return [line for line in result.stdout.lines if text in line]


def _report(pytester: pytest.Pytester) -> dict[str, Any]:
    return load_valid_report(pytester.path / "r.json")


@pytest.mark.parametrize("xdist", [False, True], ids=["single", "xdist"])
def test_a_redeployed_snapshot_is_asked_again_unless_stale_answers_are_reused_on_purpose(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer,
        xdist: bool) -> None:
    first = _run(pytester, suite_dir, server, xdist)
    first.assert_outcomes(passed=3, failed=1)
    assert server.request_count == ANSWERS and len(server.probes) == 1  # the controller's
    report = _report(pytester)
    assert report["cells"][0]["metadata"]["model_version"] == OLD
    assert report["run"]["cache"]["fake-model-zero-shot"] == {
        "cached": 0, "samples": ANSWERS, "snapshots": [], "oldest": None, "served": OLD}
    assert not _lines(first, "came from the cache")  # every answer was asked for

    # the same snapshot: every answer from the cache, and the summaries say so plainly
    summary = pytester.path / "summary.md"
    again = _run(pytester, suite_dir, server, xdist, f"--gi-markdown={summary}")
    again.assert_outcomes(passed=3, failed=1)
    assert server.request_count == 0
    (line,) = _lines(again, "came from the cache")
    assert line.startswith(f"all {ANSWERS} answers came from the cache ({OLD}, oldest ")
    assert f"- all {ANSWERS} answers came from the cache ({OLD}, oldest " in summary.read_text(
        encoding="utf-8")
    use = _report(pytester)["run"]["cache"]["fake-model-zero-shot"]
    assert use.pop("oldest") is not None
    assert use == {"cached": ANSWERS, "samples": ANSWERS, "snapshots": [OLD], "served": OLD}

    # the provider redeploys the name: another snapshot, worse answers
    server.served_model, server.system_fingerprint, server.responder = NEW, "fp_new", worse
    reused = _run(pytester, suite_dir, server, xdist, "--override-ini=gi_reuse_stale_cache=true")
    reused.assert_outcomes(passed=3, failed=1)  # the old snapshot's answers, on purpose
    assert server.request_count == 0
    (said,) = _lines(reused, "another snapshot")
    assert said == (f"WARNING: fake-model: reusing stale cached answers on purpose "
                    f"(gi_reuse_stale_cache): the cache holds {ANSWERS} answer(s) of another "
                    f"snapshot ({ANSWERS} from {OLD}) than the one the endpoint serves now "
                    f"({NEW})")
    assert _lines(reused, "stale cached answers reused on purpose") == [
        "stale cached answers reused on purpose (gi_reuse_stale_cache): "
        f"cached from {OLD}, served now {NEW}"]
    report = _report(pytester)
    assert report["cells"][0]["metadata"]["model_version"] == NEW
    assert report["run"]["cache"]["fake-model-zero-shot"]["snapshots"] == [OLD]

    asked = _run(pytester, suite_dir, server, xdist)
    asked.assert_outcomes(passed=1, failed=3)  # the new snapshot's own answers
    assert server.request_count == ANSWERS  # every stale answer asked again, once
    (said,) = _lines(asked, "another snapshot")
    assert said == (f"WARNING: fake-model: the cache holds {ANSWERS} answer(s) of another "
                    f"snapshot ({ANSWERS} from {OLD}) than the one the endpoint serves now "
                    f"({NEW}): this run asks again for those it needs "
                    "(the ini setting gi_reuse_stale_cache = true reuses them)")
    assert not _lines(asked, "came from the cache")
    assert _report(pytester)["run"]["cache"]["fake-model-zero-shot"]["cached"] == 0

    # the new answers replaced the stale ones: the next run asks nothing and says nothing
    settled = _run(pytester, suite_dir, server, xdist)
    settled.assert_outcomes(passed=1, failed=3)
    assert server.request_count == 0 and not _lines(settled, "another snapshot")
    (line,) = _lines(settled, "came from the cache")
    assert line.startswith(f"all {ANSWERS} answers came from the cache ({NEW}, oldest ")


def test_the_version_named_is_part_of_the_key_and_of_the_cells(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer) -> None:
    _run(pytester, suite_dir, server, False).assert_outcomes(passed=3, failed=1)
    named = _run(pytester, suite_dir, server, False, "--gi-model-version=prod-2024-q1")
    named.assert_outcomes(passed=3, failed=1)
    assert server.request_count == ANSWERS  # answers cached under no version are not reused
    assert _report(pytester)["cells"][0]["metadata"]["model_version"] == "prod-2024-q1"
    assert _lines(named, "--gi-model-version=prod-2024-q1, but the endpoint serves") == [
        f"WARNING: fake-model: --gi-model-version=prod-2024-q1, but the endpoint serves {OLD} "
        "(fp_old)"]
    again = _run(pytester, suite_dir, server, False, "--gi-model-version=prod-2024-q1")
    again.assert_outcomes(passed=3, failed=1)
    assert server.request_count == 0
    records = [json.loads(x) for x in
               (pytester.path / "cache" / "answers.jsonl").read_text().splitlines()]
    assert [x["endpoint"] for x in records] == (
        [server.base_url] * ANSWERS + [f"{server.base_url}#version=prod-2024-q1"] * ANSWERS)
    assert {x["served_model"] for x in records} == {OLD}


def test_a_changed_fingerprint_of_the_same_snapshot_is_shown_and_the_answers_reused(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer) -> None:
    # issue 32 §4: the docs promised the fingerprint is shown; nothing showed a change of it
    first = _run(pytester, suite_dir, server, False)
    first.assert_outcomes(passed=3, failed=1)
    assert not _lines(first, "system_fingerprint")
    server.system_fingerprint = "fp_moved"
    again = _run(pytester, suite_dir, server, False)
    again.assert_outcomes(passed=3, failed=1)
    assert server.request_count == 0  # shown, never compared: every answer reused
    (said,) = _lines(again, "system_fingerprint")
    assert said == (f"WARNING: fake-model: the endpoint serves {OLD} (fp_moved), and {ANSWERS} "
                    f"answer(s) cached from {OLD} came with another system_fingerprint "
                    f"({ANSWERS} with fp_old): reused (a fingerprint is shown, never "
                    "compared), but the provider's backend configuration changed since")


@pytest.mark.parametrize("xdist", [False, True], ids=["single", "xdist"])
def test_a_changed_fingerprint_is_carried_by_the_report_and_the_markdown(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer,
        xdist: bool) -> None:
    """Issue 47 §9: the change was warned on the terminal only; the report and the Markdown
    summary (a pull request's comment) now say it too, with the same fact."""
    markdown = pytester.path / "summary.md"
    first = _run(pytester, suite_dir, server, xdist, f"--gi-markdown={markdown}")
    first.assert_outcomes(passed=3, failed=1)
    assert "fingerprint_changes" not in _report(pytester)["run"]  # nothing changed: not written
    assert "fingerprint" not in markdown.read_text(encoding="utf-8")
    server.system_fingerprint = "fp_moved"
    again = _run(pytester, suite_dir, server, xdist, f"--gi-markdown={markdown}")
    again.assert_outcomes(passed=3, failed=1)
    assert server.request_count == 0  # shown, never compared: every answer reused
    assert _report(pytester)["run"]["fingerprint_changes"] == {
        "fake-model": {"snapshot": OLD, "served": "fp_moved", "cached": {"fp_old": ANSWERS}}}
    line = (f"fake-model: the endpoint serves {OLD} (fp_moved), and {ANSWERS} answer(s) cached "
            f"from {OLD} came with another system_fingerprint ({ANSWERS} with fp_old): reused "
            "(a fingerprint is shown, never compared), but the provider's backend "
            "configuration changed since")
    assert _lines(again, "system_fingerprint") == [f"WARNING: {line}"]  # the terminal's, once
    summary = markdown.read_text(encoding="utf-8")
    (shown,) = [x for x in summary.splitlines() if "fingerprint" in x]
    assert "(fp\\_moved)" in shown  # Markdown-escaped
    assert shown.replace("\\", "") == f"- {line}"  # Markdown-escaped, the same words
