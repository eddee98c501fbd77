"""The live progress line of a run: what it says, from counts and a clock (pure; no I/O).

A :class:`ProgressMeter` is fed snapshots — the answer counts
(:class:`~pytest_graphinstruct.run.tally.ProgressCounts`), the items done and selected, the
time — and returns a :class:`ProgressView`; :func:`progress_line` says it in fewer than
``width`` plain characters (no escape codes)::

    GraphInstruct: answers 312/800 (120 cached) | items 290/800 | 4.1 answers/s |
      ETA 2m05s | tokens 1.23M | 2 errors | 1m16s elapsed        (one line, cut here)

A batch run (``--gi-batch``) also says where each model's batches stand, kept as long as the
answers and items when the line is too narrow (in batch mode the answers come a batch at a
time, so the batch's own counts are the progress to watch)::

    GraphInstruct: answers 0/500 | items 0/500 | batch 1/1 in_progress 340/500 | ...

Rates are the change over a sliding window (:data:`RATE_WINDOW_S`), not medians of
instantaneous rates: answers arrive in bursts of up to ``--gi-concurrency`` at once, so
instantaneous rates are mostly zero or spikes.  The answer rate counts answers obtained from
the model only (cache hits arrive all at once when the run starts and would make the ETA of
the answers still to come far too short); once every answer is in, the line shows the item
rate instead.  The ETA is the longer of the two that can be computed: the answers still to come
at the answer rate, the items still to run at the item rate; it is unknown (``ETA ?``) while the
answers still to come have no rate yet.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_graphinstruct.escaping import escape
from pytest_graphinstruct.run.tally import BatchProgress, ProgressCounts

RATE_WINDOW_S = 60.0
"""The rates are the change of the counts over the last this many seconds."""
MIN_RATE_SPAN_S = 1.0
"""No rate is given before the window spans this long (the first second is noise)."""


@dataclass(frozen=True)
class ProgressView:
    """Everything the line shows, at one moment."""

    counts: ProgressCounts
    items_done: int
    items_selected: int | None  #: ``None`` while unknown (an xdist run before collection)
    elapsed_s: float
    answer_rate: float | None  #: answers from the model per second; ``None``: not yet known
    item_rate: float | None
    eta_s: float | None
    batches: tuple[BatchProgress, ...] = ()  #: batch mode: each model's batches (else empty)


class ProgressMeter:
    """Turns snapshots taken at any pace into rates and an ETA (the caller passes the time,
    so a test drives it with a fake clock)."""

    def __init__(self, start: float, *, window_s: float = RATE_WINDOW_S) -> None:
        self.start = start
        self.window_s = window_s
        # (time, answers from the model, items done) of recent snapshots, oldest first
        self._samples: deque[tuple[float, int, int]] = deque()

    def observe(self, now: float, counts: ProgressCounts, items_done: int,
                items_selected: int | None,
                batches: Sequence[BatchProgress] = ()) -> ProgressView:
        """Record a snapshot taken at ``now`` and return what the line shows then (with the
        batch run's ``batches`` as they stand)."""
        fresh = counts.received - counts.cached
        samples = self._samples
        samples.append((now, fresh, items_done))
        # keep one sample at or before the window's start, so the window is fully covered
        while len(samples) > 2 and samples[1][0] <= now - self.window_s:
            samples.popleft()
        t0, fresh0, done0 = samples[0]
        span = now - t0
        answer_rate = item_rate = None
        if span >= MIN_RATE_SPAN_S:
            answer_rate = (fresh - fresh0) / span
            item_rate = (items_done - done0) / span
        return ProgressView(counts=counts, items_done=items_done,
                            items_selected=items_selected, elapsed_s=max(0.0, now - self.start),
                            answer_rate=answer_rate, item_rate=item_rate,
                            eta_s=_eta(counts, items_done, items_selected, answer_rate,
                                       item_rate), batches=tuple(batches))


def _eta(counts: ProgressCounts, items_done: int, items_selected: int | None,
         answer_rate: float | None, item_rate: float | None) -> float | None:
    """Seconds until the run ends, or ``None`` when it cannot be said."""
    etas = []
    answers_left = max(0, counts.requested - counts.received)
    if answers_left:
        if not answer_rate:
            return None
        etas.append(answers_left / answer_rate)
    if items_selected is not None:
        items_left = max(0, items_selected - items_done)
        if items_left:
            if item_rate:
                etas.append(items_left / item_rate)
            elif not answers_left:
                return None  # every answer is in, but no item ran lately: cannot tell
    else:
        return None
    return max(etas, default=0.0)


def format_duration(seconds: float) -> str:
    """``42s``, ``2m05s``, ``1h03m`` (rounded up to whole seconds; an ETA never says 0s
    while something is left)."""
    s = max(0, math.ceil(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def format_count(n: int) -> str:
    """``987``, ``12.3k``, ``1.23M``, ``4.5G`` (three significant digits above 9,999)."""
    if n < 10_000:
        return str(n)
    for scale, unit in ((1e3, "k"), (1e6, "M")):
        if n / scale < 999.5:  # else it would print as 1e+03
            return f"{n / scale:.3g}{unit}"
    return f"{n / 1e9:.3g}G" if n / 1e9 < 999.5 else f"{n / 1e9:.0f}G"


MAX_STATE_CHARS = 24
"""A batch state longer than this (from the endpoint: untrusted) is cut."""


def batch_text(batch: BatchProgress, *, named: bool = False) -> str:
    """``batch 2/3 in_progress 340/500`` (``, 12 failed`` when some failed; the model's name
    first with ``named``).  The state and the counts came from the endpoint: the state is
    escaped to printable ASCII (no control, format or wide character acts on the terminal or
    changes the line's width), its whitespace runs made one space, and cut to
    :data:`MAX_STATE_CHARS`; counts below zero show as 0, large ones shortened
    (:func:`format_count`).  The model's name is escaped the same way and cut to 40."""
    state = " ".join(escape(batch.state).encode("ascii", "backslashreplace").decode().split())
    if len(state) > MAX_STATE_CHARS:
        state = state[: MAX_STATE_CHARS - 3] + "..."
    done, failed, total = (format_count(max(0, n)) for n in
                           (batch.completed, batch.failed, batch.requests))
    text = (f"batch {format_count(max(0, batch.index))}/{format_count(max(0, batch.total))} "
            f"{state or '?'} {done}/{total}")
    if batch.failed > 0:
        text += f", {failed} failed"
    if named:
        model = " ".join(escape(batch.model).encode("ascii", "backslashreplace").decode().split())
        text = f"{model[:40]} {text}"
    return text


_PREFIX = "GraphInstruct: "
_SEP = " | "


def progress_line(view: ProgressView, width: int) -> str:
    """The line for ``view`` in fewer than ``width`` characters: fields are dropped from the
    least important (elapsed time, rate, tokens) while it is too wide, then it is cut."""
    c = view.counts
    answers = f"answers {c.received}/{c.requested}"
    if c.cached:
        answers += f" ({c.cached} cached)"
    selected = "?" if view.items_selected is None else str(view.items_selected)
    if c.received < c.requested or view.item_rate is None:
        rate = ("? answers/s" if view.answer_rate is None
                else f"{view.answer_rate:.1f} answers/s")
    else:  # every answer is in: what is left is the items' pace
        rate = f"{view.item_rate:.1f} items/s"
    eta = "ETA ?" if view.eta_s is None else f"ETA {format_duration(view.eta_s)}"
    # (importance, text): 0 is kept longest
    fields = [
        (0, answers),
        (0, f"items {view.items_done}/{selected}"),
        *((0, batch_text(b, named=len(view.batches) > 1)) for b in view.batches),
        (3, rate),
        (1, eta),
        (2, f"tokens {format_count(c.tokens)}"),
        (1, f"{c.errors} error{'' if c.errors == 1 else 's'}"),
        (4, f"{format_duration(view.elapsed_s)} elapsed"),
    ]
    limit = max(1, width - 1)
    for drop_from in (5, 4, 3, 2, 1):
        text = _PREFIX + _SEP.join(t for rank, t in fields if rank < drop_from)
        if len(text) <= limit:
            return text
    return text[:limit]
