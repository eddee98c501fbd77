"""CacheIndex: reads only what was appended, keeps each key's winning entry, reports each
damaged line once."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_graphinstruct.models.caching.index import CacheIndex


def _line(key: str, text: str, **extra: object) -> str:
    return json.dumps({"key": key, "text": text, **extra}) + "\n"


def test_appends_are_read_once_and_the_first_record_of_a_key_wins(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    warned: list[tuple[str, int]] = []
    index = CacheIndex(path, lambda message, where, line: warned.append((message, line)))
    index.scan()  # no file yet: nothing
    path.write_text(_line("a", "first") + _line("a", "second"), encoding="utf-8")
    index.scan()
    assert index.entries["a"].answer.text == "first" and index.offset == path.stat().st_size
    with path.open("a", encoding="utf-8") as fh:
        fh.write(_line("b", "x", served_model="m2", created=2.0))
    index.scan()
    assert set(index.entries) == {"a", "b"} and warned == [] and index.damage_summary() is None


def test_damaged_lines_are_reported_once_with_one_warning(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text(_line("a", "ok") + "not json\n" + '{"key": "b", "te', encoding="utf-8")
    warned: list[tuple[str, int]] = []
    index = CacheIndex(path, lambda message, where, line: warned.append((message, line)))
    index.scan()
    index.scan()  # the same damage again: not reported twice
    assert len(index.damage) == 2 and len(warned) == 1
    assert "2 damaged line(s)" in warned[0][0] and warned[0][1] == 2
    summary = index.damage_summary()
    assert summary is not None and "corrupt record" in summary
