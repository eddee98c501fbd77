"""Which instruction of a suite a chat prompt asks, and the oracle's answer to it: what the
oracle endpoint (``python -m pytest_graphinstruct serve-oracle``,
:mod:`pytest_graphinstruct.testing.oracle_server`) answers over HTTP.

The endpoint sees only the messages a run sends, not instruction ids, so it finds the
instruction by what every prompt quotes verbatim (:func:`~.prompts.builder.task_text`): the
instruction's text (stripped) and, for an instruction with a base graph (L5), the base graph's
canonical text.  :meth:`OracleLookup.find` promises:

- the user messages are searched from the last one back; the first that quotes an instruction
  decides (a method's follow-up turn quotes none; its first turn does);
- within a message, the instruction whose text ends LAST wins — the asked task follows any
  few-shot exemplars, which quote other instructions of the same suite; a tie goes to the
  longer text, then to the instruction whose base graph stands nearest that text (so an L5 task
  whose wording an exemplar shares is told apart by its own base graph);
- instructions that are quoted identically (same text, same base graph) are one prompt: they get
  one answer, the first of their oracle answers that the verifier accepts for every one of them
  (else the first one's), so whichever the run asked, the answer is as right as it can be;
- the answer is :meth:`~.oracle.OracleBackend.answer`'s (the suite's first passing reference, a
  repaired one, the refusal for an infeasible instruction, a synthesized graph), computed for
  the whole suite when the lookup is built, so a request never waits on the verifier;
- a prompt that quotes no instruction is ``None`` (the endpoint's HTTP 400), never an error;
  message contents that are not text (or text parts) are ignored.

The same prompt asked again (samples, retries) is found once: results are kept by the SHA-256
of the user messages, for the last :data:`REMEMBERED` prompts.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.prompts.builder import base_graph_text
from pytest_graphinstruct.run.oracle import OracleBackend
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import Suite
from pytest_graphinstruct.verify.verifier import Verifier

__all__ = ["REMEMBERED", "Asked", "OracleLookup", "message_texts"]

REMEMBERED: Final = 4096
"""How many prompts' results :class:`OracleLookup` keeps (by hash)."""


@dataclass(frozen=True)
class Asked:
    """What a prompt asks: the instruction ids it stands for (one, or several quoted
    identically; suite order) and the oracle's answer (``answer.error`` set: the oracle has
    none, e.g. a feasible instruction without a reference it could make pass)."""

    instruction_ids: tuple[str, ...]
    answer: Answer


@dataclass(frozen=True)
class _Quote:
    """What a prompt of one instruction (or of several quoted identically) always holds."""

    text: str
    base: str | None
    asked: Asked


class OracleLookup:
    """The oracle's answer to a chat prompt of ``suite`` (module docstring).  Thread-safe.

    Args:
        suite: the instructions a prompt may ask.
        verifier: grades the oracle's answers (default: the default :class:`Verifier`).
    """

    def __init__(self, suite: Suite, verifier: Verifier | None = None) -> None:
        self.suite = suite
        verifier = verifier or Verifier()
        oracle = OracleBackend(suite, verifier)
        groups: dict[tuple[str, str | None], list[Instruction]] = {}
        for inst in suite:
            groups.setdefault((inst.text.strip(), base_graph_text(inst)), []).append(inst)
        self._quotes = tuple(
            _Quote(text, base, _asked(group, oracle, verifier))
            for (text, base), group in groups.items() if text)
        self._seen: OrderedDict[bytes, Asked | None] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """How many different prompts the lookup answers (instructions quoted identically count
        once)."""
        return len(self._quotes)

    @property
    def shared(self) -> tuple[tuple[str, ...], ...]:
        """The groups of instruction ids that are quoted identically (one answer each)."""
        return tuple(q.asked.instruction_ids for q in self._quotes
                     if len(q.asked.instruction_ids) > 1)

    @property
    def unanswered(self) -> tuple[str, ...]:
        """The instruction ids the oracle has no answer for (``Asked.answer.error``)."""
        return tuple(i for q in self._quotes if q.asked.answer.error is not None
                     for i in q.asked.instruction_ids)

    def find(self, messages: object) -> Asked | None:
        """What the chat ``messages`` (a request body's ``messages``, as sent: a list of
        ``{"role", "content"}`` objects) ask, or ``None`` when they quote no instruction of the
        suite."""
        texts = message_texts(messages, role="user")
        digest = hashlib.sha256(json.dumps(texts).encode("ascii")).digest()
        with self._lock:
            if digest in self._seen:
                self._seen.move_to_end(digest)
                return self._seen[digest]
        found = next((a for a in map(self._in_message, reversed(texts)) if a is not None), None)
        with self._lock:
            self._seen[digest] = found
            while len(self._seen) > REMEMBERED:
                self._seen.popitem(last=False)
        return found

    def _in_message(self, message: str) -> Asked | None:
        best: tuple[int, int, float] | None = None
        chosen: Asked | None = None
        for quote in self._quotes:
            start = message.rfind(quote.text)
            if start < 0:
                continue
            end = start + len(quote.text)
            if quote.base is None:
                distance = math.inf  # ranked after an equal text with its base graph near
            else:
                distance = _distance(message, quote.base, start, end)
                if distance == math.inf:
                    continue  # the text without its base graph: another instruction's prompt
            rank = (end, len(quote.text), -distance)
            if best is None or rank > best:
                best, chosen = rank, quote.asked
        return chosen


def _distance(message: str, base: str, start: int, end: int) -> float:
    """Characters between ``message[start:end]`` and the nearest whole occurrence of ``base``
    before or after it (``inf``: none)."""
    before = message.rfind(base, 0, start)
    after = message.find(base, end)
    gaps = [start - (before + len(base))] if before >= 0 else []
    gaps += [after - end] if after >= 0 else []
    return float(min(gaps)) if gaps else math.inf


def _asked(group: Sequence[Instruction], oracle: OracleBackend, verifier: Verifier) -> Asked:
    """One answer for instructions quoted identically: the first of their oracle answers that
    every one of them accepts, else the first one's."""
    answers = [oracle.answer(inst) for inst in group]
    ids = tuple(inst.id for inst in group)
    if len(group) > 1:
        for answer in answers:
            if answer.text is not None and all(verifier.verify(inst, answer.text).passed
                                               for inst in group):
                return Asked(ids, answer)
    return Asked(ids, answers[0])


def message_texts(messages: object, *, role: str | None = None) -> list[str]:
    """The text of each message of a chat request's ``messages`` (untrusted JSON), in order,
    of ``role`` only when given: a string ``content``, or the ``text`` of its text parts
    joined; anything else (not a list, not an object, no text) is left out."""
    if not isinstance(messages, list):
        return []
    out = []
    for message in messages:
        if not isinstance(message, Mapping) or (role is not None
                                                and message.get("role") != role):
            continue
        text = _content_text(message.get("content"))
        if text:
            out.append(text)
    return out


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_parts(content))
    return ""


def _parts(parts: Iterable[object]) -> Iterable[str]:
    for part in parts:
        if isinstance(part, Mapping) and isinstance(part.get("text"), str):
            yield part["text"]
