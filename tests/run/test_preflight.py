"""The preflight: one check of a run's inputs before any work (suite, recorded answers, shard,
backends, endpoints), the snapshot each endpoint serves against the cached answers
(:class:`Served`, :func:`snapshot_notes`), and ``--gi-per-level``'s cut."""

from __future__ import annotations

import json
import re
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.models.backends.bounded_calls import BoundedCalls
from pytest_graphinstruct.models.backends.openai_backend import OpenAIBackend
from pytest_graphinstruct.models.batch.ledger import (
    GONE_STATE,
    BatchLedger,
    LedgerBatch,
    LedgerUnreadable,
)
from pytest_graphinstruct.models.caching.cache import AnswerCache
from pytest_graphinstruct.models.caching.snapshot import Snapshot
from pytest_graphinstruct.run.config import BatchMode, RunConfig, build_run_config
from pytest_graphinstruct.run.preflight import (
    Served,
    check_live_batches,
    first_per_level,
    preflight,
    snapshot_notes,
)
from pytest_graphinstruct.run.session import BenchmarkSession
from pytest_graphinstruct.suite.loader import load_suite
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.models.helpers import req
from tests.run._gpt_x import config, suite_fixture  # noqa: F401  (the fixture `suite`)

KEY = "GI_SNAPSHOT_TEST_KEY"


# -- what every process agrees on ---------------------------------------------------------------


# -- the preflight ----------------------------------------------------------------------------

@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv(KEY, "sk-test-snapshot")
    with FakeOpenAIServer() as srv:
        yield srv


def _endpoint_config(suite: Path, server: FakeOpenAIServer, cache: Path,
                     **raw: Any) -> RunConfig:
    return config(suite, base_url=server.base_url, api_key_env=KEY, cache=str(cache), **raw)


def _cache_answers(run: RunConfig, cache: Path, snapshot: str | None, n: int,
                   prefix: str = "q") -> None:
    backend = OpenAIBackend(run.base_url, "gpt-x", api_key_env=KEY,
                            model_version=run.model_version("gpt-x"))
    store = AnswerCache(cache)
    for i in range(n):
        r = replace(req(f"{prefix}{i}"), model="gpt-x")
        store.put(r.cache_key(backend.endpoint), r, Answer(text="Graph[] {}"),
                  endpoint=backend.endpoint, served=Snapshot(snapshot))


def test_the_preflight_learns_the_snapshot_and_hands_over_the_cache(
        suite: Path, server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.served_model, server.system_fingerprint = "gpt-x-2024-08-06", "fp_1"
    run = _endpoint_config(suite, server, tmp_path / "c")
    _cache_answers(run, tmp_path / "c", "gpt-x-2024-08-06", 2)
    inputs = preflight(run)
    assert inputs.served.snapshots == {"gpt-x": Snapshot("gpt-x-2024-08-06", "fp_1")}
    assert inputs.cache is not None and inputs.served.cache_mark == inputs.cache.mark > 0
    assert inputs.notes == ()  # the cached answers are of the snapshot served: nothing to say
    assert len(server.probes) == 1 and server.request_count == 0
    bench = BenchmarkSession(run, inputs=inputs)
    assert bench.cache is inputs.cache
    assert bench.schedulers["gpt-x"].snapshot == "gpt-x-2024-08-06"
    report = bench.report([])
    assert report.cells[0].metadata.model_version == "gpt-x-2024-08-06"


def test_stale_answers_are_announced_in_one_line(suite: Path, server: FakeOpenAIServer,
                                                 tmp_path: Path) -> None:
    run = _endpoint_config(suite, server, tmp_path / "c")
    _cache_answers(run, tmp_path / "c", "gpt-x-2024-05-13", 3)
    _cache_answers(run, tmp_path / "c", None, 2, prefix="unknown")  # not stale: not counted
    server.served_model = "gpt-x-2024-08-06"
    (line,) = preflight(run).notes
    assert line == ("gpt-x: the cache holds 3 answer(s) of another snapshot (3 from "
                    "gpt-x-2024-05-13) than the one the endpoint serves now (gpt-x-2024-08-06): "
                    "this run asks again for those it needs (the ini setting "
                    "gi_reuse_stale_cache = true reuses them)")
    (line,) = preflight(_endpoint_config(suite, server, tmp_path / "c",
                                         reuse_stale_cache=True)).notes
    assert line.startswith("gpt-x: reusing stale cached answers on purpose "
                           "(gi_reuse_stale_cache): the cache holds 3 answer(s)")


def test_answers_of_another_version_are_not_counted(suite: Path, server: FakeOpenAIServer,
                                                    tmp_path: Path) -> None:
    plain = _endpoint_config(suite, server, tmp_path / "c")
    _cache_answers(plain, tmp_path / "c", "gpt-x-2024-05-13", 2)
    server.served_model = "gpt-x-2024-08-06"
    named = _endpoint_config(suite, server, tmp_path / "c", model_version="gpt-x-2024-08-06")
    assert preflight(named).notes == ()  # other keys: never reused for this version anyway


def test_an_endpoint_that_names_no_snapshot(suite: Path, server: FakeOpenAIServer,
                                            tmp_path: Path) -> None:
    run = _endpoint_config(suite, server, tmp_path / "c")
    assert preflight(run).notes == ()  # nothing cached: nothing to say
    _cache_answers(run, tmp_path / "c", "gpt-x-2024-05-13", 2)
    server.probe_status = 500
    inputs = preflight(run)
    assert inputs.served.snapshot("gpt-x") is None
    (line,) = inputs.notes
    assert line.startswith("gpt-x: the endpoint did not say which snapshot it serves (the "
                           "1-token probe failed: HTTP 500")
    assert line.endswith("nothing is known against the 2 answer(s) cached for it, which are "
                         "reused as before")


def test_a_version_the_endpoint_does_not_serve_is_said(suite: Path, tmp_path: Path) -> None:
    run = config(suite, model_version="gpt-x-2024-08-06")
    lines = snapshot_notes(run, "gpt-x", Snapshot("gpt-x-2024-11-20", "fp_2"), None, cache=None,
                           endpoint="ep")
    assert lines == ["gpt-x: --gi-model-version=gpt-x-2024-08-06, but the endpoint serves "
                     "gpt-x-2024-11-20 (fp_2)"]


def test_oracle_and_replay_need_no_probe(suite: Path, tmp_path: Path) -> None:
    inputs = preflight(config(suite, model="oracle", cache=str(tmp_path / "c")))
    assert inputs.served.snapshots == {} and inputs.notes == ()


def test_the_suite_and_recorded_answers_are_read_once(suite: Path, tmp_path: Path) -> None:
    replay = tmp_path / "a.jsonl"
    replay.write_text(json.dumps({"instruction_id": "L1-001", "level": 1, "samples": [
        {"raw_output": "Graph[] {}", "input_tokens": 1, "output_tokens": 1}]}) + "\n",
        encoding="utf-8")
    run = build_run_config({"replay": str(replay), "suite": str(suite)}, rootdir=tmp_path)
    assert run is not None
    inputs = preflight(run)
    assert [i.id for i in inputs.suite] == ["L0-001", "L1-001", "L1-002", "L2-001"]
    assert inputs.replay is not None and [r.instruction_id for r in inputs.replay] == ["L1-001"]
    assert inputs.served == Served() and inputs.cache is None and inputs.notes == ()


def test_a_suite_that_went_missing_is_said_before_any_work(suite: Path) -> None:
    run = config(suite, model="oracle")
    for level in suite.iterdir():
        level.unlink()
    with pytest.raises(GraphInstructError):
        preflight(run)


def test_an_endpoint_that_does_not_answer_is_said_once_before_the_run(
        suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY, "sk-test")
    # What the preflight's HTTP call returned or raised, for the failure message.
    seen: list[str] = []
    real_run = BoundedCalls.run

    def spy(self: BoundedCalls, fn: Any, deadline_s: float) -> Any:
        try:
            out = real_run(self, fn, deadline_s)
        except BaseException as exc:
            seen.append(f"raised {exc!r} (cause {exc.__cause__!r})"[:500])
            raise
        seen.append(f"returned {out!r}"[:500])
        return out

    monkeypatch.setattr(BoundedCalls, "run", spy)
    # A port bound and not listening, held for the whole test: a connect is refused, and no
    # other process can take the port meanwhile (a stopped server's port could be reused by a
    # test running beside this one, which then answered).
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        base_url = f"http://127.0.0.1:{held.getsockname()[1]}/v1"
        run = config(suite, base_url=base_url, api_key_env=KEY)
        try:
            preflight(run)
        except GraphInstructError as exc:
            assert re.match(r"^--gi-model=gpt-x: cannot reach .*\(checked once before the run; "
                            r"nothing was asked\)$", str(exc)), str(exc)
        else:
            pytest.fail(f"the preflight passed {base_url}; its calls: {seen}")


@pytest.mark.parametrize("shard", ["3/5", "5/5"])
def test_a_shard_that_does_not_fit_the_selection_is_refused(suite: Path, shard: str) -> None:
    # the tiny suite cut to one per level selects 3 instructions: 5 shards are too many
    with pytest.raises(GraphInstructError, match=(
            f"^--gi-shard={shard}: 5 shards of the 3 instructions this run selects would leave "
            "shards empty")):
        preflight(config(suite, model="oracle", shard=shard, per_level="1"))
    preflight(config(suite, model="oracle", shard="2/2"))  # 4 instructions: it fits


def test_first_per_level_keeps_the_first_n_of_each_level_in_order(suite: Path) -> None:
    instructions = list(load_suite(suite))
    assert [i.id for i in first_per_level(instructions, 1)] == ["L0-001", "L1-001", "L2-001"]
    assert first_per_level(instructions, None) == instructions
    assert first_per_level(instructions, 0) == []
    assert [i.id for i in first_per_level(reversed(instructions), 1)] == [
        "L2-001", "L1-002", "L0-001"]


def test_a_fingerprint_change_of_the_served_snapshot_is_one_line() -> None:
    from pytest_graphinstruct.answers import Answer
    from pytest_graphinstruct.models.caching.entries import CacheEntry
    from pytest_graphinstruct.models.caching.snapshot import Snapshot
    from pytest_graphinstruct.run.preflight import fingerprint_notes

    def entry(snapshot: str | None, fingerprint: str | None) -> CacheEntry:
        return CacheEntry("k", Answer(text="x"), "ep", "m", "L1-001", 1, "c", 0,
                          snapshot=snapshot, fingerprint=fingerprint)

    entries = [entry("s1", "fp_a"), entry("s1", "fp_a"), entry("s1", "fp_b"),
               entry("s1", None), entry("s0", "fp_z")]
    (line,) = fingerprint_notes("m", Snapshot("s1", "fp_b"), entries)
    assert "serves s1 (fp_b)" in line and "2 answer(s) cached from s1" in line
    assert "(2 with fp_a)" in line and "fp_z" not in line  # another snapshot: not this line
    assert fingerprint_notes("m", Snapshot("s1", None), entries) == []  # nothing known now
    assert fingerprint_notes("m", Snapshot("s1", "fp_a"), entries[:2]) == []


def test_a_fingerprint_change_is_one_record_and_its_note_is_its_line() -> None:
    """Issue 47 §9: the same fact the warning says is kept for the report's run record."""
    from pytest_graphinstruct.answers import Answer
    from pytest_graphinstruct.models.caching.entries import CacheEntry
    from pytest_graphinstruct.models.caching.snapshot import Snapshot
    from pytest_graphinstruct.run.preflight import fingerprint_change, fingerprint_notes
    from pytest_graphinstruct.run.records.results import FingerprintChange

    def entry(snapshot: str | None, fingerprint: str | None) -> CacheEntry:
        return CacheEntry("k", Answer(text="x"), "ep", "m", "L1-001", 1, "c", 0,
                          snapshot=snapshot, fingerprint=fingerprint)

    entries = [entry("s1", "fp_c"), entry("s1", "fp_a"), entry("s1", "fp_a"),
               entry("s1", "fp_b"), entry("s0", "fp_z")]
    change = fingerprint_change(Snapshot("s1", "fp_b"), entries)
    assert change == FingerprintChange("s1", "fp_b", {"fp_a": 2, "fp_c": 1})
    assert fingerprint_notes("m", Snapshot("s1", "fp_b"), entries) == [change.line("m")]
    assert fingerprint_change(Snapshot("s1", None), entries) is None
    assert fingerprint_change(Snapshot(None, "fp_b"), entries) is None
    assert fingerprint_change(Snapshot("s1", "fp_a"), entries[1:3]) is None


def test_the_preflight_keeps_the_fingerprint_change_beside_its_note(
        suite: Path, server: FakeOpenAIServer, tmp_path: Path) -> None:
    cache = tmp_path / "c"
    run = _endpoint_config(suite, server, cache)
    backend = OpenAIBackend(run.base_url, "gpt-x", api_key_env=KEY)
    server.served_model, server.system_fingerprint = "gpt-x-2024", "fp_now"
    r = replace(req("q0"), model="gpt-x")
    AnswerCache(cache).put(r.cache_key(backend.endpoint), r, Answer(text="Graph[] {}"),
                           endpoint=backend.endpoint, served=Snapshot("gpt-x-2024", "fp_then"))
    got = preflight(run)
    change = got.fingerprints["gpt-x"]
    assert (change.snapshot, change.served, dict(change.cached)) == (
        "gpt-x-2024", "fp_now", {"fp_then": 1})
    assert change.line("gpt-x") in got.notes
    server.system_fingerprint = "fp_then"
    assert preflight(run).fingerprints == {}


# -- a batch ledger's live batches and a run without --gi-batch --------------------------------

def test_a_plain_run_over_a_live_ledger_batch_is_refused_before_any_request(
        suite: Path, server: FakeOpenAIServer, tmp_path: Path) -> None:
    """Issue 32 §4: a plain rerun paid again, without a word, for a live batch's requests."""
    cache = tmp_path / "c"
    run = _endpoint_config(suite, server, cache)
    endpoint = OpenAIBackend(run.base_url, "gpt-x", api_key_env=KEY).endpoint
    ledger = BatchLedger(cache)
    ledger.add(LedgerBatch("http://elsewhere/v1", "file-0", ("k0",), batch_id="batch_0"))
    preflight(run)  # another endpoint's batch: nothing to say
    live = ledger.add(LedgerBatch(endpoint, "file-1", ("k1", "k2"), batch_id="batch_1"))
    probes = len(server.probes)
    with pytest.raises(GraphInstructError) as caught:
        preflight(run)
    line = str(caught.value)
    assert line.startswith(f"the batch ledger {cache / 'batches.json'} names 1 batch still live "
                           "for gpt-x (batch_1: 2 request(s))")
    assert len(server.probes) == probes and server.request_count == 0  # refused before it
    check_live_batches(replace(run, batch=BatchMode(30.0, 2.0)), "gpt-x", endpoint)  # resumes
    ledger.update(live.entry, state=GONE_STATE, collected=True)  # gone, or read: not live
    preflight(run)


@pytest.mark.parametrize("batch", [False, True], ids=["plain-run", "batch-run"])
def test_a_cache_folder_held_by_a_run_of_the_other_kind_is_refused_before_any_request(
        suite: Path, server: FakeOpenAIServer, tmp_path: Path, batch: bool) -> None:
    """Issue 47 §7: a --gi-batch run has its cache folder alone (the other run would pay a
    second time for requests the batch holds); said in one line naming the other run."""
    import subprocess
    import sys

    cache = tmp_path / "c"
    run = _endpoint_config(suite, server, cache)
    if batch:
        run = replace(run, batch=BatchMode(30.0, 2.0))
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; "
        "from pytest_graphinstruct.models.caching.lease import acquire; "
        "acquire(Path(sys.argv[1]), sys.argv[2]); print('held', flush=True); time.sleep(600)"),
        str(cache), "plain" if batch else "batch"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(GraphInstructError) as caught:
            preflight(run)
    finally:
        holder.kill()
        holder.wait(30)
    line = str(caught.value)
    assert "\n" not in line and f"the answer cache {cache} (pid {holder.pid}: " in line
    assert line.startswith("another run is using" if batch else "a --gi-batch run is using")
    assert server.request_count == 0 and not server.probes  # refused before it
    preflight(run)  # the holder is gone: nothing held any more


def test_a_plain_run_over_a_damaged_ledger_is_refused_as_a_batch_run_is(
        suite: Path, tmp_path: Path) -> None:
    cache = tmp_path / "c"
    cache.mkdir()
    (cache / "batches.json").write_text("{torn", encoding="utf-8")
    run = config(suite, base_url="http://127.0.0.1:9/v1", api_key_env=KEY, cache=str(cache))
    with pytest.raises(LedgerUnreadable, match="cannot be read"):
        check_live_batches(run, "gpt-x", "http://127.0.0.1:9/v1|gpt-x")
    check_live_batches(run, "gpt-x", None)  # a backend with no endpoint: nothing to check
    check_live_batches(config(suite, no_cache=True), "gpt-x", "e")  # no cache folder
