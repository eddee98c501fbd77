"""BatchBackend and its runner against the fake Batch API: bodies equal the ordinary request's,
one batch per round, retries (later batch, or ordinary requests), final errors, resume from the
ledger without resubmitting, a ledger batch the endpoint forgot (HTTP 404), cancel."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

import pytest

from pytest_graphinstruct.answers import Answer, Message
from pytest_graphinstruct.models.backends.openai_backend import OpenAIBackend
from pytest_graphinstruct.models.base import DecodingParams, Request
from pytest_graphinstruct.models.batch.api import BatchApi, BatchNotFound, BatchStatus
from pytest_graphinstruct.models.batch.backend import BatchBackend
from pytest_graphinstruct.models.batch.files import BatchLine, input_files
from pytest_graphinstruct.models.batch.ledger import (
    GONE_STATE,
    NOT_CREATED_STATE,
    BatchLedger,
    LedgerBatch,
    RequestMeta,
)
from pytest_graphinstruct.models.batch.runner import BatchSettings
from pytest_graphinstruct.models.caching.cache import AnswerCache
from pytest_graphinstruct.models.caching.lease import CacheBusy
from pytest_graphinstruct.testing.batch_server import FakeBatchAPI
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

FAST = BatchSettings(poll_s=0.02, quiet_s=0.05)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


def inner(server: FakeOpenAIServer) -> OpenAIBackend:
    return OpenAIBackend(server.base_url, "fake-model", api_key="sk-test", max_retries=0,
                         extra_body={"top_k": 3})


def requests(n: int, tag: str = "q") -> list[Request]:
    return [Request("fake-model", (Message("user", f"{tag} {i}"),),
                    DecodingParams(temperature=0.5, max_tokens=50), instruction_id=f"L1-{i:03d}")
            for i in range(n)]


def ask_all(backend: BatchBackend, reqs: list[Request]) -> list[str]:
    with ThreadPoolExecutor(len(reqs)) as pool:
        answers = list(pool.map(backend.complete, reqs))
    return [a.text if a.ok else f"ERROR {a.error}" for a in answers]  # type: ignore[misc]


def test_a_batch_line_is_the_ordinary_request_and_its_answer_the_ordinary_answer(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    api = FakeBatchAPI(server)
    plain = inner(server)
    request = requests(1)[0]
    ordinary = plain.complete(request)
    backend = BatchBackend(inner(server), AnswerCache(tmp_path), FAST)
    batched = backend.complete(request)
    (line,) = api.batches["batch_1"].lines
    assert line["body"] == server.requests[0].body
    assert line["custom_id"] == request.cache_key(backend.endpoint)
    assert (batched.text, batched.usage, batched.calls) == (ordinary.text, ordinary.usage, 1)
    backend.close()


def test_each_round_forms_one_batch_and_failed_or_expired_lines_go_in_the_next(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    api = FakeBatchAPI(server, line_fault=lambda c, n: ("failed" if c < "4" else "expired"
                                                        if c < "8" else None) if n == 1 else None)
    backend = BatchBackend(inner(server), AnswerCache(tmp_path), FAST)
    assert ask_all(backend, requests(12)) == [f"echo: q {i}" for i in range(12)]
    assert ask_all(backend, requests(5, "r")) == [f"echo: r {i}" for i in range(5)]
    first = {x["custom_id"] for x in api.batches["batch_1"].lines}
    assert len(first) == 12 and len(api.batches) in (3, 4)  # round 1, its retries, round 2
    assert all(n <= 2 for n in api.submitted.values()) and server.request_count == 0
    backend.close()


def test_a_batch_not_created_leaves_no_request_of_the_later_files_behind(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    """Four requests of one round in two input files (the byte limit fits two lines); creating
    the first file's batch fails once: that file is in the ledger (its batch is created at the
    next poll) and the second file goes in a later submit — every request is answered (before,
    the second file's requests waited for ever), each line submitted once."""
    api = FakeBatchAPI(server)
    reqs = requests(4)
    backend = BatchBackend(inner(server), AnswerCache(tmp_path), FAST)
    line = max(len(f.data) for r in reqs for f in input_files(
        [BatchLine(r.cache_key(backend.endpoint), backend.inner.chat.body(r))]))
    backend.close()
    backend = BatchBackend(inner(server), AnswerCache(tmp_path / "2"), BatchSettings(
        poll_s=0.02, quiet_s=0.5, max_bytes=2 * line + 1))
    real, calls = backend.runner.api.create, []

    def flaky_create(file_id: str, metadata: dict[str, str] | None = None) -> object:
        calls.append(file_id)
        if len(calls) == 1:
            raise ConnectionError("the endpoint hung up")
        return real(file_id, metadata)

    backend.runner.api.create = flaky_create  # type: ignore[method-assign]
    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(backend.complete, r) for r in reqs]
        done, _ = wait(futures, timeout=120)  # a hang fails here instead of hanging the suite
        if len(done) < 4:
            backend.close()  # answers the stuck requests, so the pool can end
        assert len(done) == 4, "requests of a later file were left waiting"
    assert [f.result().text for f in futures] == [f"echo: q {i}" for i in range(4)]
    assert sorted(len(b.lines) for b in api.batches.values()) == [2, 2]  # two files
    assert len(api.submitted) == 4 and set(api.submitted.values()) == {1}
    backend.close()


def test_with_fallback_failed_lines_become_ordinary_requests(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    api = FakeBatchAPI(server, line_fault=lambda c, n: "failed" if c < "8" else None)
    settings = BatchSettings(poll_s=0.02, quiet_s=0.05, fallback=True)
    backend = BatchBackend(inner(server), AnswerCache(tmp_path), settings)
    assert ask_all(backend, requests(10)) == [f"echo: q {i}" for i in range(10)]
    failed = sum(1 for c in api.submitted if c < "8")
    assert len(api.batches) == 1 and server.request_count == failed
    backend.close()


@pytest.mark.parametrize(("fault", "says"), [("refused", "HTTP 400"),
                                             ("malformed", "no result line"),
                                             ("failed", "HTTP 500")])
def test_lines_that_never_answer_are_error_answers(server: FakeOpenAIServer, tmp_path: Path,
                                                   fault: str, says: str) -> None:
    api = FakeBatchAPI(server, line_fault=lambda c, n: fault)
    settings = BatchSettings(poll_s=0.02, quiet_s=0.05, max_tries=2)
    backend = BatchBackend(inner(server), AnswerCache(tmp_path), settings)
    (text,) = ask_all(backend, requests(1))
    assert text.startswith("ERROR") and says in text
    assert len(api.batches) == (1 if fault == "refused" else 2)
    backend.close()


def test_a_batch_the_ledger_cannot_record_is_never_created(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    api = FakeBatchAPI(server)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    settings = BatchSettings(poll_s=0.02, quiet_s=0.05, call_tries=2)
    backend = BatchBackend(inner(server), AnswerCache(tmp_path / "cache"), settings)
    backend.ledger.path = blocker / "batches.json"  # its folder is a file: no write succeeds
    (text,) = ask_all(backend, requests(1))
    assert text.startswith("ERROR") and "cannot write the batch ledger" in text
    assert api.batches == {} and server.request_count == 0  # nothing submitted, nothing billed
    backend.close()


def killed_run(api: FakeBatchAPI, server: FakeOpenAIServer, tmp_path: Path,
               reqs: list[Request]) -> list[Answer]:
    """A batch backend over the cache at ``tmp_path`` asked ``reqs``, cancelled once the
    endpoint holds their batch (``batch_1``) as a killed run is: the batch stays on the
    endpoint and in the ledger.  The answers the callers got."""
    first = BatchBackend(inner(server), AnswerCache(tmp_path), FAST)
    with ThreadPoolExecutor(len(reqs)) as pool:
        waiting = [pool.submit(first.complete, r) for r in reqs]
        assert api.wait_for_polls("batch_1", 1, 30)
        first.cancel("killed")
        return [w.result() for w in waiting]


def test_a_new_backend_resumes_the_live_batch_of_the_ledger(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    api = FakeBatchAPI(server, hold=True)
    reqs = requests(6)
    killed = killed_run(api, server, tmp_path, reqs)
    assert all((a.error or "").startswith("killed") for a in killed)
    second = BatchBackend(inner(server), AnswerCache(tmp_path), FAST)
    with ThreadPoolExecutor(6) as pool:
        waiting = [pool.submit(second.complete, r) for r in reqs]
        assert api.wait_for_polls("batch_1", 3, 30)
        api.finish("batch_1")
        assert [w.result().text for w in waiting] == [f"echo: q {i}" for i in range(6)]
    assert list(api.batches) == ["batch_1"] and set(api.submitted.values()) == {1}
    second.close()


def test_results_read_before_anyone_asks_are_cached_and_not_resubmitted(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    api = FakeBatchAPI(server, hold=True)
    first = BatchBackend(inner(server), AnswerCache(tmp_path), FAST)
    reqs = requests(3)
    with ThreadPoolExecutor(3) as pool:
        waiting = [pool.submit(first.complete, r) for r in reqs]
        assert api.wait_for_polls("batch_1", 1, 30)
        first.cancel("killed")
        assert all(not w.result().ok for w in waiting)
    api.finish("batch_1")
    cache = AnswerCache(tmp_path)
    second = BatchBackend(inner(server), cache, FAST)
    assert api.wait_for_polls("batch_1", 2, 30)
    stored = [r.cache_key(second.endpoint) for r in reqs]
    for _ in range(3000):  # until the runner has read the batch (a safety bound of 30 s)
        if all(AnswerCache(tmp_path).lookup(k) is not None for k in stored):
            break
        threading.Event().wait(0.01)
    assert all(AnswerCache(tmp_path).lookup(k) is not None for k in stored)
    assert [second.complete(r).text for r in reqs] == [f"echo: q {i}" for i in range(3)]
    assert list(api.batches) == ["batch_1"]
    second.close()


def test_a_ledger_batch_the_endpoint_forgot_is_marked_gone_and_asked_again(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    """Issue 32 §4: a 404 for a ledger batch errored every request after 5 polls, on every
    rerun.  Now the batch is marked gone (no later backend polls it) and its requests go in a
    new batch, said once."""
    api = FakeBatchAPI(server, hold=True)
    reqs = requests(3)
    assert all(not a.ok for a in killed_run(api, server, tmp_path, reqs))
    api.forget("batch_1")
    api.hold = False
    second = BatchBackend(inner(server), AnswerCache(tmp_path), FAST)
    assert ask_all(second, reqs) == [f"echo: q {i}" for i in range(3)]
    assert api.batch_ids() == ["batch_2"] and set(api.submitted.values()) == {2}
    summary = second.runner.gone.summary(second.ledger.path)
    assert summary is not None and summary.startswith("batch batch_1 of the batch ledger ")
    second.close()
    (gone, _) = BatchLedger(tmp_path).batches()
    assert (gone.batch_id, gone.state, gone.live) == ("batch_1", GONE_STATE, False)
    third = BatchBackend(inner(server), AnswerCache(tmp_path), FAST)
    assert third.runner.statuses() == [] and third.runner.gone.summary(None) is None
    third.close()


def test_an_endpoint_that_forgets_every_batch_ends_in_errors_not_a_loop(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    """A batch the endpoint answers 404 for is retried like a failed one: within
    ``max_tries`` batches, then each request is an error answer naming the 404."""
    api = FakeBatchAPI(server)

    class Forgetful(BatchApi):
        def retrieve(self, batch_id: str) -> BatchStatus:
            raise BatchNotFound(f"the endpoint does not know the batch {batch_id} (HTTP 404)")

    backend = BatchBackend(inner(server), AnswerCache(tmp_path), BatchSettings(
        poll_s=0.02, quiet_s=0.05, max_tries=2), api=Forgetful(inner(server).client, 10.0))
    (text,) = ask_all(backend, requests(1))
    assert text == "ERROR batch batch_2 is unknown to the endpoint (HTTP 404)"
    assert api.batch_ids() == ["batch_1", "batch_2"]
    backend.close()


def test_a_killed_runs_input_file_without_a_batch_is_never_made_into_one(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    """Issue 47 §2: a rerun made a batch of a killed run's uploaded input file — every request
    of it submitted, though the rerun's cost cap had let it ask none.  Now the file is marked
    not created, and only what the rerun asks is submitted (within its cap)."""
    api = FakeBatchAPI(server)
    reqs = requests(3)
    backend = BatchBackend(inner(server), AnswerCache(tmp_path / "probe"), FAST)
    lines = [BatchLine(r.cache_key(backend.endpoint), backend.inner.chat.body(r)) for r in reqs]
    backend.close()
    (file,) = input_files(lines)
    file_id = backend.runner.api.upload(file.data, "killed.jsonl")  # uploaded, then killed
    BatchLedger(tmp_path).add(LedgerBatch(backend.endpoint, file_id, file.custom_ids, {
        k: RequestMeta("fake-model", f"L1-{n:03d}") for n, k in enumerate(file.custom_ids)}))
    rerun = BatchBackend(inner(server), AnswerCache(tmp_path), FAST)
    assert rerun.complete(reqs[0]).text == "echo: q 0"  # the one request the rerun asks
    assert [len(b.lines) for b in api.batches.values()] == [1]  # only it was submitted
    summary = rerun.runner.never_created.summary(rerun.ledger.path)
    assert summary is not None and summary.startswith(f"input file {file_id} of the batch ")
    assert "of its 3 request(s), 1 were asked again, in a new batch" in summary
    assert "the other 2 were not asked again by this run" in summary
    rerun.close()
    (unmade, asked) = BatchLedger(tmp_path).batches()
    assert (unmade.state, unmade.live, asked.live) == (NOT_CREATED_STATE, False, False)


def test_a_restarted_endpoint_that_reuses_ids_keeps_the_gone_and_the_new_batch_apart(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    """A restarted server forgets its batches and numbers anew: the new batch is batch_1 of
    file-1 again.  Before, the ledger changed the gone entry (found by its input file) and left
    the new one live for ever: every later run polled it, and said it was in flight."""
    api = FakeBatchAPI(server, hold=True)
    reqs = requests(3)
    assert all(not a.ok for a in killed_run(api, server, tmp_path, reqs))
    api.restart()
    api.hold = False
    rerun = BatchBackend(inner(server), AnswerCache(tmp_path), FAST)
    assert ask_all(rerun, reqs[:2]) == ["echo: q 0", "echo: q 1"]
    assert api.batch_ids() == ["batch_1"]  # the id of the forgotten one
    assert rerun.runner.in_flight() == []
    summary = rerun.runner.gone.summary(rerun.ledger.path)
    assert summary is not None and "of its 3 request(s), 2 were asked again" in summary
    rerun.close()
    gone, new = BatchLedger(tmp_path).batches()
    assert (gone.state, gone.custom_ids) == (GONE_STATE, tuple(
        r.cache_key(rerun.endpoint) for r in reqs))
    assert (new.batch_id, new.state, new.live, len(new.custom_ids)) == (
        "batch_1", "completed", False, 2)
    assert BatchLedger(tmp_path).live(rerun.endpoint) == []


def test_a_line_out_at_the_endpoint_when_its_request_was_cancelled_is_unread(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    api = FakeBatchAPI(server, hold=True)
    reqs = requests(2)
    backend = BatchBackend(inner(server), AnswerCache(tmp_path), FAST)
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(backend.complete, reqs[0])
        assert api.wait_for_polls("batch_1", 1, 30)
        backend.cancel("killed")
        assert not waiting.result().ok
    assert backend.unread(reqs[0]) and not backend.unread(reqs[1])  # never submitted


def test_a_second_batch_run_on_the_folder_is_refused(server: FakeOpenAIServer,
                                                     tmp_path: Path) -> None:
    import subprocess
    import sys

    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; "
        "from pytest_graphinstruct.models.caching.lease import acquire; "
        "acquire(Path(sys.argv[1]), 'batch'); print('held', flush=True); time.sleep(600)"),
        str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(CacheBusy, match=f"another run is using the answer cache .*pid "
                                            f"{holder.pid}"):
            BatchBackend(inner(server), AnswerCache(tmp_path), FAST)
    finally:
        holder.kill()
        holder.wait(30)
    BatchBackend(inner(server), AnswerCache(tmp_path), FAST).close()
