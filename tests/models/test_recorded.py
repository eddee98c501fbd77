from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_graphinstruct.errors import ResponsesError
from pytest_graphinstruct.models.recorded import read_responses


def line(iid: str, *outs: str, **extra: object) -> str:
    samples = [{"raw_output": o, "input_tokens": 10, "output_tokens": 5, "api_calls": 1}
               for o in outs]
    return json.dumps({"instruction_id": iid, "level": 1, "samples": samples, **extra})


def test_reads_records_last_line_wins(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_text("\n".join([line("L1-001", "a"), "", line("L1-002", "b", "c"),
                            line("L1-001", "z")]) + "\n", encoding="utf-8")
    r = read_responses(p)
    assert len(r) == 2
    assert [x.instruction_id for x in r] == ["L1-002", "L1-001"]
    rec = r.get("L1-001")
    assert rec is not None and rec.samples[0].raw_output == "z"
    assert rec.samples[0].input_tokens == 10 and rec.samples[0].api_calls == 1
    assert r.skipped == ()


def test_optional_usage_fields(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_text(json.dumps({"instruction_id": "L0-001",
                             "samples": [{"raw_output": "x", "input_tokens": None}]}) + "\n",
                 encoding="utf-8")
    s = read_responses(p).records["L0-001"].samples[0]
    assert s.input_tokens is None and s.output_tokens is None and s.api_calls == 1


def test_torn_last_line_is_skipped_and_reported(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_text(line("L1-001", "a") + "\n" + line("L1-002", "b")[:25], encoding="utf-8")
    r = read_responses(p)
    assert list(r.records) == ["L1-001"]
    assert len(r.skipped) == 1 and "torn last line" in r.skipped[0] and ":2:" in r.skipped[0]


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{bad json}\n" + line("L1-001", "a") + "\n", ":1: not valid JSON"),
        ("[1, 2]\n", ":1: expected a JSON object"),
        (json.dumps({"samples": []}) + "\n", "'instruction_id' must be a non-empty string"),
        (json.dumps({"instruction_id": "x", "samples": {}}) + "\n", "'samples' must be a list"),
        (json.dumps({"instruction_id": "x", "samples": [{"raw_output": 3}]}) + "\n",
         "'raw_output' must be a string"),
        (json.dumps({"instruction_id": "x", "level": "1", "samples": []}) + "\n",
         "'level' must be an integer"),
    ],
)
def test_errors_name_file_and_line(tmp_path: Path, content: str, fragment: str) -> None:
    p = tmp_path / "r.jsonl"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(ResponsesError) as info:
        read_responses(p)
    assert fragment in str(info.value) and str(p) in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ResponsesError, match="cannot read"):
        read_responses(tmp_path / "nope.jsonl")


# -- impossible usage (issue 11) ------------------------------------------------------------


@pytest.mark.parametrize(("value", "why"), [
    (-1, "-1 (negative)"),
    (2.5, "2.5 (not an integer)"),
    ("12", "'12' (not an integer)"),
    (True, "True (not an integer)"),
    (10**8 + 1, "100000001 (above 100000000 tokens for one call)"),
], ids=["negative", "fraction", "string", "bool", "absurd"])
def test_impossible_counts_skip_the_line_with_a_reason(tmp_path: Path, value: object,
                                                       why: str) -> None:
    p = tmp_path / "r.jsonl"
    bad = {"instruction_id": "L1-002", "level": 1,
           "samples": [{"raw_output": "x", "input_tokens": 3, "output_tokens": value}]}
    p.write_text("\n".join([line("L1-001", "a"), json.dumps(bad), line("L1-003", "c")]) + "\n",
                 encoding="utf-8")
    r = read_responses(p)
    assert list(r.records) == ["L1-001", "L1-003"]
    assert len(r.skipped) == 1
    note = r.skipped[0]
    assert note.startswith(f"{p}:2: L1-002: samples[0]: 'output_tokens' is impossible: {why}")
    assert "line skipped" in note and "\n" not in note


def test_an_impossible_line_does_not_replace_an_earlier_good_one(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    bad = {"instruction_id": "L1-001", "samples": [{"raw_output": "y", "input_tokens": -3}]}
    p.write_text(line("L1-001", "a") + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    r = read_responses(p)
    assert r.records["L1-001"].samples[0].raw_output == "a" and len(r.skipped) == 1


def test_integral_float_counts_are_read_as_integers(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_text(json.dumps({"instruction_id": "L0-001", "samples": [
        {"raw_output": "x", "input_tokens": 120.0, "output_tokens": 8}]}) + "\n",
        encoding="utf-8")
    s = read_responses(p).records["L0-001"].samples[0]
    assert s.input_tokens == 120 and isinstance(s.input_tokens, int)
