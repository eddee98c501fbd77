"""models.recorded: the one reader of recorded answers, read against the suite — every line not
used is named once with its line number and why; every usable record is used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.errors import ResponsesError
from pytest_graphinstruct.models.backends.recorded import (
    LISTED_IN_REPORT,
    MAX_ID_CHARS,
    MAX_MESSAGE_CHARS,
    PROBLEM_KINDS,
    ReplayCheck,
    parse_responses,
    read_responses,
)
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import Suite

SUITE = Suite(tuple(Instruction(iid, int(iid[1]), "x", ()) for iid in
                    ("L0-001", "L1-001", "L1-002", "L1-003", "L2-001")))


def line(iid: str, *outs: str, level: int | None = 1, **extra: object) -> str:
    samples = [{"raw_output": o, "input_tokens": 10, "output_tokens": 5, "api_calls": 1}
               for o in outs]
    rec: dict[str, object] = {"instruction_id": iid, "samples": samples, **extra}
    if level is not None:
        rec["level"] = level
    return json.dumps(rec)


def write(tmp_path: Path, *lines: str, end: str = "\n") -> Path:
    p = tmp_path / "r.jsonl"
    p.write_text("\n".join(lines) + end, encoding="utf-8")
    return p


def kinds(r: object) -> list[tuple[int, str]]:
    return [(p.line, p.kind) for p in r.problems]  # type: ignore[attr-defined]


def test_a_clean_file_is_used_whole(tmp_path: Path) -> None:
    r = read_responses(write(tmp_path, line("L1-001", "a"), "", line("L1-002", "b", "c")), SUITE)
    assert [x.instruction_id for x in r] == ["L1-001", "L1-002"]
    rec = r.get("L1-002")
    assert rec is not None and [s.raw_output for s in rec.samples] == ["b", "c"]
    assert rec.samples[0].input_tokens == 10 and rec.samples[0].api_calls == 1
    assert r.problems == () and r.lines == 2
    assert r.check().summary_line() == f"replay {r.path}: 2 lines, 2 records used; nothing skipped"


def test_optional_usage_fields(tmp_path: Path) -> None:
    p = write(tmp_path, json.dumps({"instruction_id": "L0-001",
                                    "samples": [{"raw_output": "x", "input_tokens": None}]}))
    s = read_responses(p, SUITE).records["L0-001"].samples[0]
    assert s.input_tokens is None and s.output_tokens is None and s.api_calls == 1


def test_integral_float_counts_are_read_as_integers(tmp_path: Path) -> None:
    p = write(tmp_path, json.dumps({"instruction_id": "L0-001", "samples": [
        {"raw_output": "x", "input_tokens": 120.0, "output_tokens": 8}]}))
    s = read_responses(p, SUITE).records["L0-001"].samples[0]
    assert s.input_tokens == 120 and isinstance(s.input_tokens, int)


def test_an_unknown_id_is_named(tmp_path: Path) -> None:
    r = read_responses(write(tmp_path, line("L1-001", "a"), line("L9-404", "b", level=None)),
                       SUITE)
    assert list(r.records) == ["L1-001"]
    (p,) = r.problems
    assert (p.line, p.kind, p.instruction_id) == (2, "unknown_id", "L9-404")
    assert r.skipped == (f"{r.path}:2: unknown instruction id 'L9-404': not in the suite",)


def test_a_level_contradiction_is_named_and_the_record_not_used(tmp_path: Path) -> None:
    r = read_responses(write(tmp_path, line("L1-001", "a", level=2), line("L1-002", "b")),
                       SUITE)
    assert list(r.records) == ["L1-002"]
    (p,) = r.problems
    assert (p.line, p.kind, p.instruction_id) == (1, "level_contradiction", "L1-001")
    assert p.message == "L1-001: the record says level 2, the suite says level 1"


def test_duplicates_name_the_winning_line_and_each_line_it_replaced(tmp_path: Path) -> None:
    r = read_responses(write(tmp_path, line("L1-001", "a"), line("L1-002", "b"),
                             line("L1-001", "y"), line("L1-001", "z")), SUITE)
    rec = r.get("L1-001")
    assert rec is not None and rec.samples[0].raw_output == "z"  # the last line wins
    assert [x.instruction_id for x in r] == ["L1-002", "L1-001"]  # in winning-line order
    assert kinds(r) == [(1, "duplicate"), (3, "duplicate")]
    assert r.problems[0].message == ("L1-001: replaced by line 4 (lines 1, 3, 4 hold this id; "
                                     "the last wins)")
    assert r.check().summary_line() == (
        f"replay {r.path}: 4 lines, 2 records used; skipped 2: 2 duplicates (later lines win) "
        "— see the report's run.replay_problems")


def test_an_id_on_many_lines_is_named_in_short_messages(tmp_path: Path) -> None:
    r = read_responses(write(tmp_path, *(line("L1-001", str(k)) for k in range(2000))), SUITE)
    assert len(r.problems) == 1999 and r.get("L1-001") is not None
    assert r.problems[0].message == ("L1-001: replaced by line 2000 (lines 1, 2, 3, 4, 5 and "
                                     "1,995 more hold this id; the last wins)")


def test_a_torn_last_line_is_named(tmp_path: Path) -> None:
    p = write(tmp_path, line("L1-001", "a"), line("L1-002", "b")[:25], end="")
    r = read_responses(p, SUITE)
    assert list(r.records) == ["L1-001"] and kinds(r) == [(2, "torn_last_line")]
    assert r.skipped[0].startswith(f"{p}:2: torn last line: not valid JSON (")


def test_a_malformed_middle_line_is_a_named_skip(tmp_path: Path) -> None:
    """The decision (docs/MODELS.md): one malformed line among records is skipped and named —
    a crash mid-write and a resume leave exactly that in a checkpoint file."""
    r = read_responses(write(tmp_path, line("L1-001", "a"), '{"instruction_id": "L1-0{"x',
                             "[1, 2]", line("L1-002", "b")), SUITE)
    assert list(r.records) == ["L1-001", "L1-002"]
    assert kinds(r) == [(2, "malformed"), (3, "malformed")]
    assert r.problems[1].message == "malformed: expected a JSON object, got list"


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{bad json}\n", ":1: malformed: not valid JSON"),
        ("[1, 2]\n", ":1: malformed: expected a JSON object"),
        ("a,b,c\n1,2,3\n", ":1: malformed: not valid JSON"),
        (json.dumps({"samples": []}) + "\n", "'instruction_id' must be a non-empty string"),
        (json.dumps({"instruction_id": "x", "samples": {}}) + "\n", "'samples' must be a list"),
        (json.dumps({"instruction_id": "x", "samples": [{"raw_output": 3}]}) + "\n",
         "'raw_output' must be a string"),
        (json.dumps({"instruction_id": "x", "level": "1", "samples": []}) + "\n",
         "'level' must be an integer"),
        (json.dumps({"custom_id": "a", "response": {}}) + "\n" + line("L1-001", "a")[:20],
         "'instruction_id' must be a non-empty string"),
    ],
    ids=["not-json", "array", "csv", "no-id", "samples", "raw-output", "level", "other-jsonl"],
)
def test_a_file_without_any_record_is_an_error_naming_file_and_line(
        tmp_path: Path, content: str, fragment: str) -> None:
    p = tmp_path / "r.jsonl"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(ResponsesError) as info:
        read_responses(p, SUITE)
    message = str(info.value)
    assert fragment in message and str(p) in message and "not a raw-generation JSONL" in message


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ResponsesError, match="cannot read"):
        read_responses(tmp_path / "nope.jsonl", SUITE)


def test_records_of_levels_not_asked_are_neither_used_nor_problems(tmp_path: Path) -> None:
    l1 = Suite(tuple(i for i in SUITE if i.level == 1))
    r = read_responses(write(tmp_path, line("L1-001", "a"), line("L2-001", "b", level=2),
                             line("L1-404", "c")), l1, levels=[1])
    assert list(r.records) == ["L1-001"] and r.not_asked == 1
    assert kinds(r) == [(3, "unknown_id")]
    assert "not in the levels 1 of suite" in r.problems[0].message
    check = r.check()
    assert check.lines == check.used + check.not_asked + check.total == 3


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
    bad = {"instruction_id": "L1-002", "level": 1,
           "samples": [{"raw_output": "x", "input_tokens": 3, "output_tokens": value}]}
    p = write(tmp_path, line("L1-001", "a"), json.dumps(bad), line("L1-003", "c"))
    r = read_responses(p, SUITE)
    assert list(r.records) == ["L1-001", "L1-003"]
    assert r.skipped == (f"{p}:2: L1-002: samples[0]: 'output_tokens' is impossible: {why}",)
    assert r.problems[0].kind == "impossible_usage"


def test_an_impossible_line_does_not_replace_an_earlier_good_one(tmp_path: Path) -> None:
    bad = {"instruction_id": "L1-001", "samples": [{"raw_output": "y", "input_tokens": -3}]}
    r = read_responses(write(tmp_path, line("L1-001", "a"), json.dumps(bad)), SUITE)
    assert r.records["L1-001"].samples[0].raw_output == "a"
    assert kinds(r) == [(2, "impossible_usage")]  # not a duplicate: the bad line never won


# -- untrusted text -------------------------------------------------------------------------


def test_text_from_the_file_is_escaped_and_bounded(tmp_path: Path) -> None:
    hostile = "\x1b]0;pwned\x07\x1b[2J" + "L" * 5000
    r = read_responses(write(tmp_path, line(hostile, "a", level=None),
                             line("L1-001", "b", level=None)), SUITE)
    (p,) = r.problems
    assert p.kind == "unknown_id" and p.instruction_id is not None
    for text in (p.instruction_id, p.message, r.check().lines_to_show()[1]):
        assert "\x1b" not in text and "\x07" not in text and "\\x1b]0;pwned\\x07" in text
    assert len(p.instruction_id) == MAX_ID_CHARS and p.instruction_id.endswith("…")
    assert len(p.message) <= MAX_MESSAGE_CHARS


# -- the summary the report keeps -----------------------------------------------------------


def test_the_check_counts_everything_and_lists_a_bounded_number(tmp_path: Path) -> None:
    bad = [line(f"L9-{k:03d}", "x", level=None) for k in range(LISTED_IN_REPORT + 5)]
    r = read_responses(write(tmp_path, line("L1-001", "a"), *bad), SUITE)
    check = r.check()
    assert check.total == LISTED_IN_REPORT + 5 and len(check.problems) == LISTED_IN_REPORT
    shown = check.lines_to_show(limit=20)
    assert len(shown) == 1 + 20 + 1 and shown[-1] == f"… and {check.total - 20} more"
    assert shown[0] == (f"replay {r.path}: {check.lines} lines, 1 record used; skipped "
                        f"{check.total}: {check.total} unknown ids — see the report's "
                        "run.replay_problems")
    assert ReplayCheck.from_json(json.loads(json.dumps(check.to_json()))) == check


def test_without_a_suite_ids_and_levels_are_not_checked(tmp_path: Path) -> None:
    r = read_responses(write(tmp_path, line("L9-404", "a", level=3)))
    assert list(r.records) == ["L9-404"] and r.problems == ()


# -- the property: every bad line named once, every good line's answer used ------------------

GOOD_IDS = ("L1-001", "L1-002", "L1-003")
BAD = ("unknown_id", "level_contradiction", "impossible_usage", "malformed")


def _bad_line(kind: str, iid: str, k: int) -> str:
    if kind == "unknown_id":
        return line(f"L7-{k:03d}", "u")
    if kind == "level_contradiction":
        return line(iid, "l", level=3)
    if kind == "impossible_usage":
        return json.dumps({"instruction_id": iid, "samples": [
            {"raw_output": "i", "output_tokens": -k - 1}]})
    return ["{not json", "[1]", '{"instruction_id": 5}', '{"instruction_id": "x"}'][k % 4]


LINES = st.lists(st.tuples(st.sampled_from(("good", "blank", *BAD)), st.sampled_from(GOOD_IDS)),
                 min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(LINES, st.booleans())
def test_every_bad_line_is_named_once_and_every_good_answer_used(
        spec: list[tuple[str, str]], torn: bool) -> None:
    text: list[str] = []
    expected: dict[int, str] = {}  # line -> kind
    good: dict[str, list[int]] = {}
    for no, (kind, iid) in enumerate(spec, start=1):
        if kind == "good":
            text.append(line(iid, f"answer of line {no}"))
            good.setdefault(iid, []).append(no)
        elif kind == "blank":
            text.append("  ")
        else:
            text.append(_bad_line(kind, iid, no))
            expected[no] = kind
    for lines_of in good.values():
        expected.update({no: "duplicate" for no in lines_of[:-1]})
    data = "\n".join(text) + "\n"
    if torn:
        data += line("L1-001", "torn")[:17]
        expected[len(text) + 1] = "torn_last_line"
    if not good and not any(k in ("unknown_id", "level_contradiction", "impossible_usage")
                            for k in expected.values()) and "malformed" in expected.values():
        with pytest.raises(ResponsesError, match="not a raw-generation JSONL file"):
            parse_responses(data.encode(), "r.jsonl", SUITE)
        return
    r = parse_responses(data.encode(), "r.jsonl", SUITE)
    assert {p.line: p.kind for p in r.problems} == expected
    assert len(r.problems) == len(expected)  # each named once
    assert {iid: rec.samples[0].raw_output for iid, rec in r.records.items()} == {
        iid: f"answer of line {nos[-1]}" for iid, nos in good.items()}
    check = r.check()
    assert check.lines == check.used + check.not_asked + check.total
    assert set(check.counts) <= set(PROBLEM_KINDS)
