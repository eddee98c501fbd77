"""Recorded model answers in the GraphInstruct raw-generation JSONL format: the one reader that
``score`` and ``--gi-replay`` share.

One JSON object per line::

    {"instruction_id": "L1-001", "level": 1,
     "samples": [{"raw_output": "...", "input_tokens": 120, "output_tokens": 80,
                  "api_calls": 1}, ...]}

Token fields may be absent or null (usage unknown); ``api_calls`` defaults to 1; ``level`` may be
absent (no claim).  A float with an integral value (``120.0``, as some tools write) is read as
that integer.

The file is read against the suite (:func:`read_responses`).  Every line that is not used is
named once, with its 1-based line number, as a :class:`RecordProblem` of one kind
(:data:`PROBLEM_KINDS`):

* ``unknown_id`` — the suite has no such instruction;
* ``level_contradiction`` — the record's ``level`` is not the suite's level of that id;
* ``impossible_usage`` — a token count that cannot be true (negative, not a whole number, above
  :data:`~.tokens.MAX_TOKENS_PER_CALL`; :func:`~.tokens.check_token_count`): a record whose
  bookkeeping cannot be true is not trusted for its text either;
* ``duplicate`` — the id appears again on a later usable line: the **last** usable line wins
  (checkpoint files are appended on resume), and each line it replaced is named with the
  winner's line number;
* ``torn_last_line`` — a last line without its newline that is not JSON (a crash mid-write);
* ``malformed`` — any other line that is not a record (not JSON, not an object, a field of the
  wrong type).  One malformed line is skipped, not fatal: a crash mid-write followed by a resume
  leaves a torn line in the middle of a checkpoint file, and the answers around it are good.  A
  file where no line at all is a record is not a responses file: :class:`ResponsesError`.

A skipped line never replaces an earlier line of the same instruction; an instruction without a
usable line has no recorded answer.  A record of a level the run did not load (``--gi-levels``)
is neither used nor a problem: it is counted as *not asked*.  Text from the file (ids, values)
is escaped (:func:`~pytest_graphinstruct.escaping.escape`) and bounded in every problem.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pytest_graphinstruct.errors import ResponsesError
from pytest_graphinstruct.escaping import escape
from pytest_graphinstruct.models.backends.tokens import check_token_count
from pytest_graphinstruct.vocab import RECORDED_PROBLEMS_SHOWN


class _Leveled(Protocol):
    @property
    def level(self) -> int: ...


class Suite(Protocol):
    """What reading recorded answers needs of the run's suite: each instruction's level by
    id (``suite.loader.Suite`` is one; the model layer does not import the suite layer)."""

    def get(self, instruction_id: str) -> _Leveled | None: ...

PROBLEM_KINDS: Mapping[str, tuple[str, str]] = {
    "unknown_id": ("unknown id", "unknown ids"),
    "level_contradiction": ("level contradiction", "level contradictions"),
    "duplicate": ("duplicate (later lines win)", "duplicates (later lines win)"),
    "impossible_usage": ("impossible usage", "impossible usages"),
    "torn_last_line": ("torn last line", "torn last lines"),
    "malformed": ("malformed", "malformed"),
}
"""Each kind of skipped line → how the count line names one and several of them."""

MAX_ID_CHARS = 80
"""An instruction id from the file is shown escaped and cut to this many characters."""
MAX_MESSAGE_CHARS = 240
"""A problem's message is escaped and cut to this many characters."""
LISTED_IN_REPORT = 100
"""The report's ``run.replay_problems`` lists at most this many problems (all are counted)."""
SHOWN = RECORDED_PROBLEMS_SHOWN
"""The terminal (``--gi-replay``, ``score``) shows at most this many problems, then a count."""


def bounded(text: str, limit: int) -> str:
    """``text`` escaped onto one line and cut to ``limit`` characters (``…`` marks a cut)."""
    safe = escape(text)
    return safe if len(safe) <= limit else safe[:limit - 1] + "…"


@dataclass(frozen=True)
class RecordProblem:
    """One line of a responses file that was not used, and why (text escaped and bounded)."""

    line: int  #: 1-based line number in the file
    kind: str  #: one of :data:`PROBLEM_KINDS`
    instruction_id: str | None  #: the record's id when the line has one
    message: str  #: one line, without the file and line number

    def describe(self, path: str) -> str:
        """``path:line: message``."""
        return f"{path}:{self.line}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "kind": self.kind, "instruction_id": self.instruction_id,
                "message": self.message}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RecordProblem:
        iid = data.get("instruction_id")
        return cls(int(data["line"]), str(data["kind"]), None if iid is None else str(iid),
                   str(data["message"]))


@dataclass(frozen=True)
class ReplayCheck:
    """What reading a responses file found, as the report keeps it (``run.replay_problems``):
    non-blank ``lines``, records ``used``, records of levels ``not_asked``, every problem
    counted by kind, and the first :data:`LISTED_IN_REPORT` problems in line order.
    ``lines == used + not_asked + total``."""

    path: str
    lines: int
    used: int
    not_asked: int = 0
    counts: Mapping[str, int] = field(default_factory=dict)
    problems: tuple[RecordProblem, ...] = ()

    @property
    def total(self) -> int:
        """Problems of every kind (listed or not)."""
        return sum(self.counts.values())

    def summary_line(self) -> str:
        """The one-line count: ``replay FILE: 812 lines, 800 records used; skipped 12: 3 unknown
        ids, …, 1 malformed — see the report's run.replay_problems``."""
        head = (f"replay {self.path}: {_n(self.lines, 'line', 'lines')}, "
                f"{_n(self.used, 'record', 'records')} used")
        if self.not_asked:
            head += f", {self.not_asked} of levels not asked"
        if not self.total:
            return head + "; nothing skipped"
        parts = [_n(self.counts[kind], *PROBLEM_KINDS[kind])
                 for kind in PROBLEM_KINDS if self.counts.get(kind)]
        return (f"{head}; skipped {self.total}: {', '.join(parts)} — see the report's "
                "run.replay_problems")

    def lines_to_show(self, limit: int = SHOWN) -> list[str]:
        """The count line, then one line per problem up to ``limit``, then ``… and K more``."""
        shown = self.problems[:limit]
        out = [self.summary_line(), *(p.describe(self.path) for p in shown)]
        if self.total > len(shown):
            out.append(f"… and {self.total - len(shown)} more")
        return out

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "lines": self.lines, "used": self.used,
                "not_asked": self.not_asked, "total": self.total,
                "by_kind": {k: self.counts[k] for k in PROBLEM_KINDS if self.counts.get(k)},
                "problems": [p.to_json() for p in self.problems]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReplayCheck:
        return cls(str(data["path"]), int(data["lines"]), int(data["used"]),
                   int(data.get("not_asked") or 0),
                   {str(k): int(v) for k, v in (data.get("by_kind") or {}).items()},
                   tuple(RecordProblem.from_json(p) for p in data.get("problems") or ()))


def _n(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


@dataclass(frozen=True)
class Sample:
    """One recorded answer and what it cost (``None`` = usage not reported)."""

    raw_output: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    api_calls: int = 1


@dataclass(frozen=True)
class Record:
    """The k recorded samples of one instruction."""

    instruction_id: str
    level: int | None
    samples: tuple[Sample, ...]


@dataclass(frozen=True)
class Responses:
    """The usable records of a responses file, keyed by instruction id (in the order of their
    winning lines), and every line that was not used (:attr:`problems`, in line order)."""

    records: Mapping[str, Record]
    path: str = ""
    problems: tuple[RecordProblem, ...] = ()
    lines: int = 0  #: non-blank lines read
    not_asked: int = 0  #: records of levels the run did not load

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records.values())

    def __len__(self) -> int:
        return len(self.records)

    def get(self, instruction_id: str) -> Record | None:
        return self.records.get(instruction_id)

    def skipped_for(self, instruction_id: str) -> tuple[RecordProblem, ...]:
        """The skipped lines that held ``instruction_id`` (its duplicates excepted: they were
        replaced by a usable line)."""
        shown = bounded(instruction_id, MAX_ID_CHARS)
        return tuple(p for p in self.problems
                     if p.instruction_id == shown and p.kind != "duplicate")

    @property
    def skipped(self) -> tuple[str, ...]:
        """Each problem as ``path:line: message``."""
        return tuple(p.describe(self.path) for p in self.problems)

    def check(self, listed: int = LISTED_IN_REPORT) -> ReplayCheck:
        """The summary the report keeps: counts of everything, the first ``listed`` problems."""
        counts: dict[str, int] = {}
        for p in self.problems:
            counts[p.kind] = counts.get(p.kind, 0) + 1
        return ReplayCheck(self.path, self.lines, len(self.records), self.not_asked, counts,
                           self.problems[:listed])


def read_responses(path: str | os.PathLike[str], suite: Suite | None = None, *,
                   levels: Collection[int] | None = None) -> Responses:
    """Read a raw-generation JSONL file against ``suite`` (see the module docstring).

    Args:
        path: the file.
        suite: the instructions of the run (``None``: ids and levels are not checked).
        levels: the levels the run loaded (``--gi-levels``; ``None``: all): a record of
            another level is not asked, not unknown.

    Raises:
        ResponsesError: the file cannot be read, or no line of it is a record (not a responses
            file at all); the message names the file and the first bad line.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ResponsesError(f"cannot read responses file {p}: {exc}") from None
    return parse_responses(data, str(p), suite, levels=levels)


@dataclass
class _Reading:
    """The state of one pass over a file."""

    suite: Suite | None
    levels: frozenset[int] | None
    problems: list[RecordProblem] = field(default_factory=list)
    usable: dict[str, list[tuple[int, Record]]] = field(default_factory=dict)
    lines: int = 0
    records_seen: int = 0  # lines that were records at all (usable or not)
    not_asked: int = 0

    def skip(self, line: int, kind: str, iid: str | None, message: str) -> None:
        self.problems.append(RecordProblem(line, kind, iid, bounded(message, MAX_MESSAGE_CHARS)))


def parse_responses(data: bytes, path: str, suite: Suite | None = None, *,
                    levels: Collection[int] | None = None) -> Responses:
    """:func:`read_responses` of the bytes ``data`` of the file ``path``."""
    lines = data.split(b"\n")
    torn_at = len(lines) if lines[-1].strip() else None  # a last line without its newline
    state = _Reading(suite, None if levels is None else frozenset(levels))
    for no, raw in enumerate(lines, start=1):
        if raw.strip():
            state.lines += 1
            _read_line(state, no, raw, torn=no == torn_at)
    if not state.records_seen and state.problems and any(
            p.kind == "malformed" for p in state.problems):
        first = next(p for p in state.problems if p.kind == "malformed")
        raise ResponsesError(f"{first.describe(path)} — not a raw-generation JSONL file (no "
                             "line of it is a response record)")
    records: dict[str, tuple[int, Record]] = {}
    for iid, seen in state.usable.items():
        win = seen[-1][0]
        # bounded: an id on 10^5 lines must not make each of its messages 10^5 numbers long
        all_lines = ", ".join(str(no) for no, _ in seen[:5]) + (
            f" and {len(seen) - 5:,} more" if len(seen) > 5 else "")
        for no, _ in seen[:-1]:
            state.skip(no, "duplicate", _id(iid),
                       f"{_id(iid)}: replaced by line {win} (lines {all_lines} hold this id; "
                       "the last wins)")
        records[iid] = seen[-1]
    ordered = dict(sorted(((iid, rec) for iid, (_, rec) in records.items()),
                          key=lambda kv: records[kv[0]][0]))
    return Responses(ordered, path, tuple(sorted(state.problems, key=lambda p: p.line)),
                     state.lines, state.not_asked)


def _read_line(state: _Reading, no: int, raw: bytes, *, torn: bool) -> None:
    """Read line ``no``: keep its record as usable, count it as not asked, or skip it."""
    try:
        obj = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        kind = "torn_last_line" if torn else "malformed"
        state.skip(no, kind, None, f"{PROBLEM_KINDS[kind][0]}: not UTF-8 ({exc.reason} at byte "
                                   f"{exc.start})")
        return
    except json.JSONDecodeError as exc:
        kind = "torn_last_line" if torn else "malformed"
        state.skip(no, kind, None, f"{PROBLEM_KINDS[kind][0]}: not valid JSON ({exc.msg}, "
                                   f"column {exc.colno})")
        return
    try:
        rec, impossible = _record(obj)
    except _BadRecord as exc:
        state.skip(no, "malformed", exc.iid, f"malformed: {exc}")
        return
    state.records_seen += 1
    iid = _id(rec.instruction_id)
    known = state.suite.get(rec.instruction_id) if state.suite is not None else None
    if state.suite is not None and known is None:
        if state.levels is not None and rec.level is not None and rec.level not in state.levels:
            state.not_asked += 1
            return
        where = ("" if state.levels is None
                 else f" levels {', '.join(map(str, sorted(state.levels)))} of")
        state.skip(no, "unknown_id", iid, f"unknown instruction id '{iid}': not in the"
                                          f"{where} suite")
        return
    if known is not None and rec.level is not None and rec.level != known.level:
        state.skip(no, "level_contradiction", iid,
                   f"{iid}: the record says level {rec.level}, the suite says level "
                   f"{known.level}")
        return
    if impossible is not None:
        state.skip(no, "impossible_usage", iid, f"{iid}: {impossible}")
        return
    state.usable.setdefault(rec.instruction_id, []).append((no, rec))


def _id(iid: str) -> str:
    return bounded(iid, MAX_ID_CHARS)


class _BadRecord(ResponsesError):
    """A line that is JSON but not a record (``iid``: its id when it has a valid one)."""

    def __init__(self, message: str, iid: str | None = None) -> None:
        super().__init__(message)
        self.iid = iid


def _record(obj: Any) -> tuple[Record, str | None]:
    """The record of one parsed line, and why its usage is impossible (``None``: plausible).

    Raises:
        _BadRecord: the object is not a record.
    """
    if not isinstance(obj, Mapping):
        raise _BadRecord(f"expected a JSON object, got {type(obj).__name__}")
    iid = obj.get("instruction_id")
    if not isinstance(iid, str) or not iid:
        raise _BadRecord("'instruction_id' must be a non-empty string")
    shown = _id(iid)
    level = obj.get("level")
    if level is not None and (isinstance(level, bool) or not isinstance(level, int)):
        raise _BadRecord(f"{shown}: 'level' must be an integer", shown)
    samples = obj.get("samples")
    if not isinstance(samples, list):
        raise _BadRecord(f"{shown}: 'samples' must be a list", shown)
    read = [_sample(s, k, shown) for k, s in enumerate(samples)]
    impossible = next((why for _, why in read if why is not None), None)
    return Record(iid, level, tuple(s for s, _ in read)), impossible


def _sample(obj: Any, k: int, iid: str) -> tuple[Sample, str | None]:
    """Sample ``k`` of a record, and why its usage is impossible (``None``: plausible)."""
    where = f"{iid}: samples[{k}]"
    if not isinstance(obj, Mapping):
        raise _BadRecord(f"{where}: expected an object", iid)
    raw = obj.get("raw_output")
    if not isinstance(raw, str):
        raise _BadRecord(f"{where}: 'raw_output' must be a string, got {type(raw).__name__}",
                         iid)
    counts: dict[str, int | None] = {}
    impossible = None
    for key in ("input_tokens", "output_tokens"):
        count, why = check_token_count(obj.get(key))
        if why is not None and impossible is None:
            impossible = f"samples[{k}]: {key!r} is impossible: {why}"
        counts[key] = count
    calls = obj.get("api_calls", 1)
    if isinstance(calls, bool) or not isinstance(calls, int) or calls < 0:
        raise _BadRecord(f"{where}: 'api_calls' must be a non-negative integer", iid)
    return Sample(raw, counts["input_tokens"], counts["output_tokens"], calls), impossible
