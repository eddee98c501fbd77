"""The answer cache's file format (``answers.jsonl``, see :mod:`.cache`): one record per line,
what an entry read back holds, and which record of a key wins."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_graphinstruct.answers import USAGE_PROVIDER, Answer, Usage
from pytest_graphinstruct.models.backends.tokens import check_token_count
from pytest_graphinstruct.models.base import Request
from pytest_graphinstruct.models.caching.snapshot import Snapshot

FORMAT_VERSION = 1
_LEVEL_RE = re.compile(r"^L(\d+)-")


@dataclass(frozen=True)
class CacheEntry:
    """One cached answer and the metadata of the request that obtained it."""

    key: str
    answer: Answer
    endpoint: str
    model: str
    instruction_id: str
    level: int | None
    cell: str
    sample_index: int
    created: float | None = None  #: when it was cached (Unix time; ``None``: not recorded)
    snapshot: str | None = None  #: the response's ``model`` field (``None``: not recorded)
    fingerprint: str | None = None  #: the response's ``system_fingerprint``
    offset: int | None = None  #: byte offset of its line (``None``: written by this process)

    @property
    def use(self) -> Use:
        """Which sample of which cell's instruction this record answers."""
        return self.instruction_id, self.cell, self.sample_index


Use = tuple[str, str, int]
"""A sample an answer was used for: (instruction id, cell, sample index).  Two instructions
(or cells) sending identical messages share one key, hence one answer, and each is a use."""


def use_of(request: Request) -> Use:
    """The use ``request`` makes of its key's answer."""
    return request.instruction_id, request.cell, request.sample_index


def use_record(key: str, request: Request, kept: CacheEntry) -> dict[str, object]:
    """The record saying that ``request`` (of ``key``) used the answer ``kept`` holds: the
    kept answer, snapshot and caching time under ``request``'s metadata.  Read back it is an
    ordinary record of ``key`` that never replaces ``kept`` (the same snapshot:
    :func:`supersedes`), so readers that know nothing of uses keep the first answer."""
    out = record(key, request, kept.answer, kept.endpoint,
                 Snapshot(kept.snapshot, kept.fingerprint))
    out["created"] = kept.created
    return out


def supersedes(new: CacheEntry, kept: CacheEntry) -> bool:
    """Whether ``new`` replaces ``kept`` (the same key): it came from another snapshot and was
    cached later (an unknown time counts as later)."""
    if new.snapshot == kept.snapshot:
        return False
    return new.created is None or kept.created is None or new.created > kept.created


def level_of(instruction_id: str) -> int | None:
    """The level encoded in an instruction id (``L3-012`` → 3), else ``None``."""
    m = _LEVEL_RE.match(instruction_id)
    return int(m.group(1)) if m else None


def record(key: str, request: Request, answer: Answer, endpoint: str,
            served: Snapshot) -> dict[str, Any]:
    """The record of ``answer`` for ``key`` (what :meth:`.AnswerCache.store` writes), cached
    now."""
    return {
        "v": FORMAT_VERSION,
        "key": key,
        "endpoint": endpoint,
        "model": request.model,
        "instruction_id": request.instruction_id,
        "level": level_of(request.instruction_id),
        "cell": request.cell,
        "sample_index": request.sample_index,
        "text": answer.text,
        "usage": None if answer.usage is None else {
            "input_tokens": answer.usage.input_tokens,
            "output_tokens": answer.usage.output_tokens,
            "source": answer.usage.source},
        "calls": answer.calls,
        "finish_reason": answer.finish_reason,
        "latency_s": round(answer.latency_s, 6),
        "created": round(time.time(), 6),  # to the microsecond: "later" orders two answers
        # of one key cached within the same millisecond (supersedes)
        "served_model": served.model,
        "system_fingerprint": served.fingerprint,
    }


def records(path: Path) -> Iterator[dict[str, Any]]:
    """The valid records of a cache file in file order (damaged lines skipped)."""
    with open(path, "rb") as fh:
        for line in fh:
            if not line.endswith(b"\n"):
                return  # a torn last record
            try:
                obj = json.loads(line.decode("utf-8"))
                entry_of(obj)
            except (UnicodeDecodeError, ValueError, TypeError, KeyError):
                continue
            yield obj


def entry_of(obj: Any, offset: int | None = None) -> CacheEntry:
    """The entry of a record read back (its line at byte ``offset``; ``None``: written by this
    process).

    Raises:
        TypeError, ValueError, KeyError: ``obj`` is not a record (no string key and text).
    """
    if not isinstance(obj, dict):
        raise TypeError("record is not an object")
    key, text = obj["key"], obj["text"]
    if not isinstance(key, str) or not key or not isinstance(text, str):
        raise ValueError("record needs a string 'key' and 'text'")
    u = obj.get("usage")
    usage = None
    if isinstance(u, dict):
        source = u.get("source")
        usage = Usage(_count(u.get("input_tokens")), _count(u.get("output_tokens")),
                      source if isinstance(source, str) and source else USAGE_PROVIDER)
    calls = obj.get("calls", 1)
    finish = obj.get("finish_reason")
    latency = obj.get("latency_s", 0.0)
    answer = Answer(
        text=text, usage=usage,
        calls=calls if isinstance(calls, int) and not isinstance(calls, bool) else 1,
        finish_reason=finish if isinstance(finish, str) else None,
        cached=True,
        latency_s=float(latency) if isinstance(latency, (int, float)) else 0.0,
    )
    level = obj.get("level")
    sample = obj.get("sample_index", 0)
    created = obj.get("created")
    served = Snapshot.from_json({"model": obj.get("served_model"),
                                 "fingerprint": obj.get("system_fingerprint")})
    return CacheEntry(
        key=key, answer=answer, endpoint=str(obj.get("endpoint", "")),
        model=str(obj.get("model", "")), instruction_id=str(obj.get("instruction_id", "")),
        level=level if isinstance(level, int) and not isinstance(level, bool) else None,
        cell=str(obj.get("cell", "")),
        sample_index=sample if isinstance(sample, int) and not isinstance(sample, bool) else 0,
        created=(float(created) if isinstance(created, (int, float))
                 and not isinstance(created, bool) else None),
        snapshot=served.model, fingerprint=served.fingerprint, offset=offset)


def _count(v: Any) -> int | None:
    return check_token_count(v)[0]
