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
    entry = ledger.add(LedgerBatch("http://e/v1", "file-1", ("k1", "k2"),
                                   {"k1": RequestMeta("m", "L1-001", "c", 2)})).entry
    ledger.update(entry, batch_id="batch_1", state="in_progress", counts=(1, 0, 2))
    again = BatchLedger(tmp_path)
    (batch,) = again.live("http://e/v1")
    assert batch.batch_id == "batch_1" and batch.custom_ids == ("k1", "k2")
    assert batch.requests["k1"] == RequestMeta("m", "L1-001", "c", 2)
    assert batch.counts == (1, 0, 2) and again.live("http://other/v1") == []
    again.update(entry, collected=True)
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
    entry = ledger.add(LedgerBatch("http://e/v1", "file-1", ("k1",), {}, batch_id="batch_1"))
    ledger.update(entry.entry, state=GONE_STATE, collected=True)
    (batch,) = BatchLedger(tmp_path).batches("http://e/v1")
    assert batch.state == GONE_STATE and not batch.live


def test_gone_batches_say_how_many_of_their_requests_were_asked_again() -> None:
    gone = GoneBatches()
    assert gone.summary(Path("/c/batches.json")) is None
    gone.add(LedgerBatch("e", "file-1", ("a", "b", "c"), batch_id="batch_9", entry="x1"))
    gone.asked_again(["a", "z"])  # z was in no gone batch
    assert gone.summary(Path("/c/batches.json")) == (
        "batch batch_9 of the batch ledger /c/batches.json is unknown to the endpoint (HTTP "
        "404: deleted, or made with another account or endpoint): marked gone in the ledger, "
        "its answers never to be read; of its 3 request(s), 1 were asked again, in a new "
        "batch, within the run's limits like any other request; the other 2 were not asked "
        "again by this run (not needed, or not issued within its limits: a later run asks "
        "them as it needs them)")
    gone.asked_again(["b", "c"])
    line = gone.summary(Path("/c/batches.json"))
    assert line is not None and line.endswith(
        "of its 3 request(s), 3 were asked again, in a new batch, within the run's limits "
        "like any other request")
    gone.add(LedgerBatch("e", "file-2", ("d",), entry="x2"))  # killed before its batch
    line = gone.summary(None)
    assert line is not None and line.startswith(
        "2 batches of this run (no cache folder) (first: batch_9) are unknown to the endpoint")
    assert "of their 4 request(s), 3 were asked again" in line and gone.entries == {"x1", "x2"}
    fallback = gone.summary(None, fallback=True)
    assert fallback is not None and "3 were asked again, as ordinary requests " \
        "(gi_batch_fallback), within the run's limits" in fallback


def test_input_files_never_made_into_a_batch_are_said_as_such() -> None:
    unmade = GoneBatches(never_created=True)
    unmade.add(LedgerBatch("e", "file-3", ("a", "b"), entry="x"))
    assert unmade.summary(Path("/c/batches.json")) == (
        "input file file-3 of the batch ledger /c/batches.json, left by a run killed before "
        "it made its batch, has no batch at the endpoint (none was found by its input file): "
        "marked not created in the ledger, never submitted; of its 2 request(s), 0 were asked "
        "again, in a new batch, within the run's limits like any other request; the other 2 "
        "were not asked again by this run (not needed, or not issued within its limits: a "
        "later run asks them as it needs them)")


def test_two_processes_recording_at_once_keep_both_entries(tmp_path: Path) -> None:
    # issue 47 §7: two runs started together each wrote its own batch over the other's
    first, second = BatchLedger(tmp_path), BatchLedger(tmp_path)  # both read an empty ledger
    one = first.add(LedgerBatch("e", "file-1", ("a",)))
    two = second.add(LedgerBatch("e", "file-2", ("b",)))
    first.update(one.entry, batch_id="batch_1")
    assert [(b.input_file_id, b.batch_id) for b in BatchLedger(tmp_path).batches()] == [
        ("file-1", "batch_1"), ("file-2", "")]
    assert two.entry != one.entry and second.entry(two.entry) == two


def test_a_reused_input_file_id_changes_only_its_own_entry(tmp_path: Path) -> None:
    # a restarted endpoint numbers its files anew: a new batch's input file has an old id
    ledger = BatchLedger(tmp_path)
    old = ledger.add(LedgerBatch("e", "file-1", ("a",), batch_id="batch_1"))
    ledger.update(old.entry, state=GONE_STATE, collected=True)
    new = ledger.add(LedgerBatch("e", "file-1", ("b",)))
    ledger.update(new.entry, batch_id="batch_1", state="validating")
    again = BatchLedger(tmp_path)
    assert [(b.state, b.collected, b.custom_ids) for b in again.batches()] == [
        (GONE_STATE, True, ("a",)), ("validating", False, ("b",))]
    assert [b.entry for b in again.live("e")] == [new.entry]


def test_a_ledger_of_entries_without_ids_reads_with_ids_from_their_places(
        tmp_path: Path) -> None:
    (tmp_path / "batches.json").write_text(
        '{"v": 1, "batches": [{"endpoint": "e", "input_file_id": "file-1", "custom_ids": '
        '["a"], "batch_id": "batch_1"}, {"endpoint": "e", "input_file_id": "file-1", '
        '"custom_ids": ["b"]}]}', encoding="utf-8")
    ledger = BatchLedger(tmp_path)
    first, second = ledger.batches()
    assert first.entry != second.entry
    ledger.update(second.entry, collected=True)
    assert [b.custom_ids for b in BatchLedger(tmp_path).live("e")] == [("a",)]


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
