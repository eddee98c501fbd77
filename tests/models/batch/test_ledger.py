"""The batch ledger: written atomically, read back by the next run; a damaged one is refused,
never read as empty (its live batches would be submitted again); a gone batch (HTTP 404) said
once, a plain run's refusal over live batches — ids escaped and bounded."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.models.batch.ledger import (
    GONE_STATE,
    BatchLedger,
    GoneBatches,
    LedgerBatch,
    LedgerUnreadable,
    LedgerUnwritable,
    RequestMeta,
    describe_batches,
    live_message,
)


def test_entries_survive_a_new_process_and_updates(tmp_path: Path) -> None:
    ledger = BatchLedger(tmp_path)
    ledger.add(LedgerBatch("http://e/v1", "file-1", ("k1", "k2"),
                           {"k1": RequestMeta("m", "L1-001", "c", 2)}))
    ledger.update("file-1", batch_id="batch_1", state="in_progress", counts=(1, 0, 2))
    again = BatchLedger(tmp_path)
    (batch,) = again.live("http://e/v1")
    assert batch.batch_id == "batch_1" and batch.custom_ids == ("k1", "k2")
    assert batch.requests["k1"] == RequestMeta("m", "L1-001", "c", 2)
    assert batch.counts == (1, 0, 2) and again.live("http://other/v1") == []
    again.update("file-1", collected=True)
    assert BatchLedger(tmp_path).live("http://e/v1") == []
    assert not list(tmp_path.glob(".batches-*"))  # no temporary file left


@pytest.mark.parametrize("text", ["{torn", '{"v": 99, "batches": []}',
                                  '{"v": 1, "batches": [{"endpoint": "e"}]}', "[]"])
def test_a_damaged_ledger_is_refused_in_one_line_naming_the_file_and_the_way_out(
        tmp_path: Path, text: str) -> None:
    path = tmp_path / "batches.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LedgerUnreadable) as caught:
        BatchLedger(tmp_path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith("--gi-batch: the batch ledger ")
    assert str(path) in message and "cannot be read" in message
    assert f"move it aside (mv {path} {path}.damaged)" in message
    assert path.read_text(encoding="utf-8") == text  # left as it was


def test_a_missing_ledger_is_empty(tmp_path: Path) -> None:
    assert BatchLedger(tmp_path).batches() == [] and BatchLedger(None).batches() == []


def test_an_entry_that_cannot_be_written_is_refused_and_not_kept(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    ledger = BatchLedger(blocker / "cache")  # its folder cannot be made
    with pytest.raises(LedgerUnwritable, match="cannot write the batch ledger"):
        ledger.add(LedgerBatch("http://e/v1", "file-1", ("k1",), {}))
    assert ledger.batches() == [] and ledger.warning is not None


def test_a_gone_batch_is_no_longer_live_for_the_next_run(tmp_path: Path) -> None:
    ledger = BatchLedger(tmp_path)
    ledger.add(LedgerBatch("http://e/v1", "file-1", ("k1",), {}, batch_id="batch_1"))
    ledger.update("file-1", state=GONE_STATE, collected=True)
    (batch,) = BatchLedger(tmp_path).batches("http://e/v1")
    assert batch.state == GONE_STATE and not batch.live


def test_gone_batches_are_said_in_one_line_naming_the_ledger_and_the_first() -> None:
    gone = GoneBatches()
    assert gone.summary(Path("/c/batches.json")) is None
    gone.add(LedgerBatch("e", "file-1", ("a", "b"), batch_id="batch_9"))
    assert gone.summary(Path("/c/batches.json")) == (
        "batch batch_9 of the batch ledger /c/batches.json is unknown to the endpoint (HTTP "
        "404: deleted, or made with another account or endpoint): marked gone in the ledger; "
        "its 2 request(s) are asked again, in a new batch, as this run needs them")
    gone.add(LedgerBatch("e", "file-2", ("c",)))  # killed before its batch was created
    line = gone.summary(None)
    assert line is not None and line.startswith(
        "2 batches of this run (no cache folder) (first: batch_9) are unknown to the endpoint")
    assert line.endswith("their 3 request(s) are asked again, in a new batch, as this run "
                         "needs them")
    fallback = gone.summary(None, fallback=True)
    assert fallback is not None and fallback.endswith(
        "are asked again, as ordinary requests (gi_batch_fallback), "
        "as this run needs them")


def test_batch_ids_are_escaped_and_bounded_and_many_batches_counted() -> None:
    hostile = LedgerBatch("e", "file-1", ("k",), batch_id="b\x1b[2J\n" + "x" * 200)
    assert "\x1b" not in hostile.shown_id and len(hostile.shown_id) == 64
    assert hostile.shown_id.startswith("b\\x1b[2J")
    assert LedgerBatch("e", "file-7", ()).shown_id == "input file file-7"
    many = [LedgerBatch("e", f"f{n}", ("k",) * n, batch_id=f"batch_{n}") for n in range(1, 6)]
    assert describe_batches(many) == ("batch_1: 1 request(s), batch_2: 2 request(s), "
                                      "batch_3: 3 request(s), and 2 more")
    line = live_message(Path("/c/batches.json"), "m\x1b", many[:1])
    assert "\n" not in line and "\x1b" not in line
    assert line.startswith("the batch ledger /c/batches.json names 1 batch still live for "
                           "m\\x1b (batch_1: 1 request(s)): a run without --gi-batch would "
                           "send (and pay for) their requests again")
    assert "Rerun with --gi-batch to resume it;" in line
    assert line.endswith("(mv /c/batches.json /c/batches.json.set-aside) and run again")
    assert "names 5 batches still live" in live_message(Path("/c/b"), "m", many)
    assert "resume them;" in live_message(Path("/c/b"), "m", many)
