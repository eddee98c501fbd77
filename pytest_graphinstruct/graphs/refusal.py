"""Detecting an answer that says the task cannot be done.

A refusal is a sentence stating that the requested graph is impossible, infeasible,
unsatisfiable, cannot be constructed/satisfied, or does not exist, or that the constraints are
contradictory/incompatible (e.g. "Since 3·5 is odd, no 3-regular graph on 5 nodes exists.").
A bare "contradiction" only counts as "leads to a contradiction" (chain-of-thought often says
"wait, that's a contradiction" while it goes on to build a graph).  A negated statement ("this
is not impossible", "no contradiction") is not a refusal.  Generic declines ("I cannot help
with that") are not refusals either: they say nothing about the task's feasibility.

The parser consults this only when an answer holds no usable graph.
"""

from __future__ import annotations

import re
from typing import Final

_NOUN = r"(?:graphs?|solutions?|configurations?|constructions?|networks?|trees?|answers?)"
_REFUSAL_RE: Final = re.compile(
    r"\b(?:impossible|infeasible|unsatisfiable|unreali[sz]able|unachievable|unconstructible)\b"
    r"|\bnot\s++(?:be\s++)?(?:possible|feasible|satisfiable|reali[sz]able|achievable)\b"
    r"|\b(?:cannot|can\s?not|can[’']t|could\s++not|couldn[’']t|is\s++no\s++way\s++to)\s++"
    r"(?:[\w-]++\s++){0,3}?(?:be\s++)?"
    r"(?:satisf(?:y|ied)|met|meet|fulfill?(?:ed)?|construct(?:ed)?|buil[td]|build|creat(?:e|ed)"
    r"|generat(?:e|ed)|reali[sz]ed?|exist|achiev(?:e|ed)|simultaneously)\b"
    r"|\b(?:does|do|did)\s?n(?:o|[’'])t\s++exist\b"
    rf"|\bno\s++such\s++{_NOUN}"
    rf"|\bno\s++(?:[\w-]++\s++){{0,6}}?{_NOUN}\s++(?:[\w,-]++\s++){{0,8}}?(?:can\s++)?exists?\b"
    rf"|\bthere\s++(?:is|are|exists?)\s++no\s++(?:[\w-]++\s++){{0,4}}?{_NOUN}\b"
    r"|\b(?:constraints?|requirements?|conditions?|specifications?|task|request|instructions?"
    r"|parameters)\b[^.\n]{0,60}?"
    r"\b(?:contradict\w*+|inconsistent|incompatible|mutually\s++exclusive|conflict\w*+)"
    r"|\bcontradict(?:s|ory)?\s++(?:each\s++other|one\s++another)"
    r"|\b(?:leads?|led)\s++to\s++a\s++contradiction"
    r"|\bviolat\w*+\s++(?:the\s++)?handshak",
    re.IGNORECASE,
)
# Every alternative of _REFUSAL_RE starts with one of these stems.  Searching for the stems in
# an ASCII-lowered bytes copy (same offsets: one byte per character) and only then trying the
# full case-insensitive pattern there is ~10x faster than searching with the full pattern.
_STEM_RE: Final = re.compile(
    rb"(?<![a-z0-9_])(?:impossib|infeasib|unsatisf|unreali|unachiev|unconstruct|not\s|can|could"
    rb"|is\s|do|did|no\s|there|constraint|requirement|condition|specification|task|request"
    rb"|instruction|parameter|contradict|lead|led|violat)"
)
_NEGATION_RE: Final = re.compile(
    r"\b(?:not|no|never|without|isn[’']t|wasn[’']t|aren[’']t|nothing)\s++(?:\w++\s++)?$",
    re.IGNORECASE,
)
_SENTENCE_END_RE: Final = re.compile(r"[.!?](?=\s|$)|\n")
_MAX_SENTENCE: Final = 300


def find_refusal(text: str) -> str | None:
    """The first sentence of ``text`` stating that the task cannot be done, else ``None``.

    The sentence is returned with whitespace collapsed; a very long one is cut to about 150
    characters either side of the statement, marked with ``…``.  Never raises for a ``str``;
    returns ``None`` for anything else.
    """
    if not isinstance(text, str):
        return None
    lowered = text.encode("ascii", "replace").lower()
    for stem in _STEM_RE.finditer(lowered):
        m = _REFUSAL_RE.match(text, stem.start())
        if m is None:
            continue
        start = m.start()
        before = text[max(0, start - 40) : start]
        if _NEGATION_RE.search(before):
            continue
        return _sentence(text, start, m.end())
    return None


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence around ``text[start:end]``; at most ~300 characters around the match."""
    half = _MAX_SENTENCE // 2
    lo = max(0, start - half)
    head = text[lo:start]
    cut = max(head.rfind(". "), head.rfind("! "), head.rfind("? "), head.rfind("\n"))
    begin = lo + cut + 1 if cut >= 0 else lo
    m = _SENTENCE_END_RE.search(text, end, end + half)
    stop = m.end() if m else min(len(text), end + half)
    sentence = " ".join(text[begin:stop].split())
    if cut < 0 and lo > 0:
        sentence = "…" + sentence
    if m is None and stop < len(text):
        sentence += "…"
    return sentence
