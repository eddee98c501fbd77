"""Batch input files within their limits; output and error lines read without ever raising."""

from __future__ import annotations

import json

import pytest

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.batch.files import (
    BatchLine,
    OutputDamage,
    input_files,
    read_results,
)


def lines(n: int) -> list[BatchLine]:
    return [BatchLine(f"id{i}", {"model": "m", "messages": [{"role": "user", "content": "x"}]})
            for i in range(n)]


def test_files_keep_within_requests_and_bytes_in_order() -> None:
    size = len(lines(1)[0].encoded())
    files = input_files(lines(10), max_requests=4, max_bytes=10 * size)
    assert [len(f.custom_ids) for f in files] == [4, 4, 2]
    files = input_files(lines(10), max_requests=100, max_bytes=3 * size)
    assert [len(f.custom_ids) for f in files] == [3, 3, 3, 1]
    assert all(len(f.data) <= 3 * size for f in files)
    assert [c for f in files for c in f.custom_ids] == [f"id{i}" for i in range(10)]
    first = json.loads(files[0].data.splitlines()[0])
    assert first["url"] == "/v1/chat/completions" and first["method"] == "POST"


def test_a_line_over_the_byte_limit_is_refused() -> None:
    with pytest.raises(ModelError, match="over the limit"):
        input_files(lines(1), max_bytes=10)


def test_results_say_answer_retry_or_final_error_and_skip_damage() -> None:
    ok = {"custom_id": "a", "response": {"status_code": 200, "body": {"choices": []}}}
    failed = {"custom_id": "b", "response": {"status_code": 500, "body": {
        "error": {"message": "boom\x1b[2J"}}}}
    refused = {"custom_id": "c", "response": {"status_code": 400, "body": {}}}
    expired = {"custom_id": "d", "response": None, "error": {"code": "batch_expired",
                                                             "message": "late"}}
    data = "\n".join(json.dumps(x) for x in (ok, failed, refused, expired)).encode()
    read = read_results([data + b"\nnot json\n[1]\n{\"custom_id\": 5}\n" + b"x" * 100],
                        max_line_bytes=50_000)
    r = read.results
    assert r["a"].body == {"choices": []} and r["a"].error is None
    assert r["b"].retry and "HTTP 500" in (r["b"].error or "") and "\x1b" not in r["b"].error
    assert not r["c"].retry and "HTTP 400" in (r["c"].error or "")
    assert r["d"].retry and "batch_expired" in (r["d"].error or "")
    assert read.skipped == 4


def test_an_output_line_wins_over_an_error_line_of_the_same_request() -> None:
    err = json.dumps({"custom_id": "a", "error": {"code": "x", "message": "y"}}).encode()
    ok = json.dumps({"custom_id": "a", "response": {"status_code": 200, "body": {}}}).encode()
    assert read_results([ok, err]).results["a"].body == {}
    assert read_results([err, ok]).results["a"].body == {}


def test_a_second_line_of_an_answered_request_is_damaged_and_the_first_kept() -> None:
    def answer(text: str) -> bytes:
        body = {"choices": [{"message": {"content": text}}]}
        return json.dumps({"custom_id": "a" * 80, "response": {"status_code": 200,
                                                                "body": body}}).encode()

    read = read_results([answer("first") + b"\n" + answer("second"), answer("third")])
    assert read.results["a" * 80].body == {"choices": [{"message": {"content": "first"}}]}
    assert (read.skipped, read.duplicates) == (2, 2)
    assert read.first_duplicate is not None and len(read.first_duplicate) == 64  # bounded
    damage = OutputDamage()
    assert damage.summary() is None
    damage.add(read)
    damage.add(read_results([b"not json"]))
    line = damage.summary()
    assert line is not None and line.startswith("batch output: 3 damaged line(s) skipped, 2 ")
    assert "\n" not in line
