"""Recorded model answers in the GraphInstruct raw-generation JSONL format.

One JSON object per line::

    {"instruction_id": "L1-001", "level": 1,
     "samples": [{"raw_output": "...", "input_tokens": 120, "output_tokens": 80,
                  "api_calls": 1}, ...]}

Token fields may be absent or null (usage unknown); ``api_calls`` defaults to 1.  When an
instruction appears on several lines the last line wins (checkpoint files are appended on resume).
A torn last line — a crash mid-write — is skipped and reported in :attr:`Responses.skipped`; a
malformed line anywhere else is an error naming the file and line.

A line whose token count is impossible (negative, not a whole number, or above
:data:`~.tokens.MAX_TOKENS_PER_CALL` — see :func:`~.tokens.check_token_count`) is not trusted: it
is skipped, with one line in :attr:`Responses.skipped` naming the file, line, instruction, sample,
field and value, and does not replace an earlier line of the same instruction.  Its answers are
then missing (an error outcome), never scored with a cost nobody can believe.  A float with an
integral value (``120.0``, as some tools write) is read as that integer.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_graphinstruct.errors import ResponsesError
from pytest_graphinstruct.models.tokens import check_token_count


class _ImpossibleUsage(ResponsesError):
    """A record whose token count cannot be true: the line is skipped, not the file."""


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
    """All records of a responses file, keyed by instruction id (file order kept)."""

    records: Mapping[str, Record]
    path: str = ""
    skipped: tuple[str, ...] = field(default=())

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records.values())

    def __len__(self) -> int:
        return len(self.records)

    def get(self, instruction_id: str) -> Record | None:
        return self.records.get(instruction_id)


def read_responses(path: str | os.PathLike[str]) -> Responses:
    """Read a raw-generation JSONL file.

    Raises:
        ResponsesError: the file cannot be read, or a line (other than a torn last line or a
            line with an impossible token count, both skipped and listed in
            :attr:`Responses.skipped`) is not a valid record; the message names the file and the
            1-based line number.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ResponsesError(f"cannot read responses file {p}: {exc}") from None
    lines = data.split(b"\n")
    torn_candidate = len(lines) - 1 if lines and lines[-1].strip() else None
    records: dict[str, Record] = {}
    skipped: list[str] = []
    for no, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            if no - 1 == torn_candidate:
                skipped.append(f"{p}:{no}: torn last line skipped ({exc.__class__.__name__})")
                continue
            raise ResponsesError(f"{p}:{no}: not valid JSON: {exc}") from None
        try:
            rec = _record(obj, f"{p}:{no}")
        except _ImpossibleUsage as exc:
            skipped.append(f"{exc}; line skipped")
            continue
        records.pop(rec.instruction_id, None)
        records[rec.instruction_id] = rec
    return Responses(records=records, path=str(p), skipped=tuple(skipped))


def _record(obj: Any, where: str) -> Record:
    if not isinstance(obj, Mapping):
        raise ResponsesError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    iid = obj.get("instruction_id")
    if not isinstance(iid, str) or not iid:
        raise ResponsesError(f"{where}: 'instruction_id' must be a non-empty string")
    level = obj.get("level")
    if level is not None and (isinstance(level, bool) or not isinstance(level, int)):
        raise ResponsesError(f"{where}: {iid}: 'level' must be an integer")
    samples = obj.get("samples")
    if not isinstance(samples, list):
        raise ResponsesError(f"{where}: {iid}: 'samples' must be a list")
    return Record(iid, level, tuple(_sample(s, f"{where}: {iid}: samples[{k}]")
                                    for k, s in enumerate(samples)))


def _sample(obj: Any, where: str) -> Sample:
    if not isinstance(obj, Mapping):
        raise ResponsesError(f"{where}: expected an object")
    raw = obj.get("raw_output")
    if not isinstance(raw, str):
        raise ResponsesError(f"{where}: 'raw_output' must be a string, got {type(raw).__name__}")
    counts = {}
    for key in ("input_tokens", "output_tokens"):
        count, why = check_token_count(obj.get(key))
        if why is not None:
            raise _ImpossibleUsage(f"{where}: {key!r} is impossible: {why}")
        counts[key] = count
    calls = obj.get("api_calls", 1)
    if isinstance(calls, bool) or not isinstance(calls, int) or calls < 0:
        raise ResponsesError(f"{where}: 'api_calls' must be a non-negative integer")
    return Sample(raw, counts["input_tokens"], counts["output_tokens"], calls)
