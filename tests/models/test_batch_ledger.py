"""The batch ledger: written atomically, read back by the next run; a damaged one is refused,
never read as empty (its live batches would be submitted again)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.models.batch_ledger import (
    BatchLedger,
    LedgerBatch,
    LedgerUnreadable,
    LedgerUnwritable,
    RequestMeta,
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
