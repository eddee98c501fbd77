"""The batch ledger: written atomically, read back by the next run, damage never fatal."""

from __future__ import annotations

from pathlib import Path

from pytest_graphinstruct.models.batch_ledger import BatchLedger, LedgerBatch, RequestMeta


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


def test_a_damaged_ledger_reads_as_empty_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "batches.json").write_text("{torn", encoding="utf-8")
    ledger = BatchLedger(tmp_path)
    assert ledger.batches() == [] and "unreadable" in (ledger.warning or "")
