"""A status line kept just below the terminal's current line while pytest writes above it.

:class:`LiveLine` stands in for the stream pytest's terminal writer writes to.  A background
thread redraws the status line at most every ``interval_s`` seconds; every write that passes
through first erases the status line (so pytest's text lands exactly where it would have), then
draws it again below the new current line.  All of it happens under one lock, so pytest's output
and the status line never interleave.

How the line is drawn (an ANSI/VT100 terminal is assumed; :func:`live_enabled` decides when):
``\\n``, erase that row, the status text, cursor up one row, ``\\r`` and the current line's own
text again (identical to what is on screen, so the cursor ends exactly where it was, whatever
the characters' widths and colours).  Erasing is cursor down, erase that row, cursor up (the
column is kept, and nothing on the current row is touched, even right of the cursor after a
``\r``).  The line is not drawn while the current line
holds anything but text and colour codes, or is too wide for the terminal (a wrapped line
cannot be re-drawn from its start).

The status line is written through a duplicate of the stream's file descriptor: while an item
runs, pytest's output capturing redirects file descriptor 1 to a file, and the status line must
still reach the terminal.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import unicodedata
from collections.abc import Callable
from typing import Any, TextIO

ERASE_STATUS = "\x1b[1B\x1b[2K\x1b[1A"
"""Erase the row below the cursor's and come back (cursor down and up keep the column)."""
_SGR = re.compile(r"\x1b\[[0-9;]*m")
_INTERVAL_S = 0.25


def live_enabled(mode: str, *, isatty: bool, hasmarkup: bool, verbosity: int,
                 capture_off: bool) -> bool:
    """Whether a run shows the live line: never with ``off``, under ``-q`` (``verbosity`` < 0)
    or ``-s`` (``capture_off``: a test's own prints would land on the status line, which is why
    pytest drops its ``[ NN%]`` column then too); with ``auto`` only on an interactive terminal
    (a TTY that takes escape codes); ``on`` also when the stream is not a TTY."""
    if mode == "off" or verbosity < 0 or capture_off:
        return False
    return mode == "on" or (isatty and hasmarkup)


def visible_width(text: str) -> int | None:
    """Columns ``text`` takes on a terminal (colour codes take none, East Asian wide characters
    two, combining marks none); ``None`` when it holds another escape or control character."""
    text = _SGR.sub("", text).expandtabs(8)
    width = 0
    for ch in text:
        if ch < " " or ch == "\x7f":
            return None
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


class LiveLine:
    """The stream a terminal writer writes to, with a status line kept below its text.

    Args:
        stream: the terminal stream (pytest's terminal writer's file).
        render: the status text for a terminal ``width`` columns wide (fewer than ``width``
            characters, no escape codes); called from the background thread.
        width: the terminal's width now.
        interval_s: the longest time between two redraws.
    """

    def __init__(self, stream: TextIO, render: Callable[[int], str],
                 width: Callable[[], int], *, interval_s: float = _INTERVAL_S) -> None:
        self.stream = stream
        self._render = render
        self._width = width
        self._interval_s = interval_s
        self._lock = threading.Lock()
        self._current = ""  # raw text of the terminal's current line (after the last \n, \r)
        self._text = ""  # the latest status text
        self._shown = False
        self._running = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._fd: int | None = None
        with contextlib.suppress(AttributeError, OSError, ValueError):
            self._fd = os.dup(stream.fileno())
        self._encoding = getattr(stream, "encoding", None) or "utf-8"

    # -- the file protocol the terminal writer uses ------------------------------------------

    def write(self, text: str) -> int:
        with self._lock:
            self._raw(self._hide())
            n = self.stream.write(text)
            self.stream.flush()
            self._track(text)
            if self._running:
                self._raw(self._draw())
        return n

    def flush(self) -> None:
        with self._lock:
            self.stream.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, encoding, fileno, ...
        return getattr(self.stream, name)

    # -- the status line ---------------------------------------------------------------------

    def start(self) -> None:
        """Show the status line and keep it fresh until :meth:`stop`."""
        with self._lock:
            self._running = True
        self._thread = threading.Thread(target=self._loop, name="gi-progress", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Erase the status line and stop the thread (the stream is left as it was)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            self._running = False
            self._raw(self._hide())
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = None

    def refresh(self) -> None:
        """Render the status text now and redraw it when it changed."""
        try:
            text = self._render(self._width())
        except Exception:  # a progress display must never break a run: keep the old text
            return
        with self._lock:
            if not self._running:
                return
            changed = text != self._text
            self._text = text
            if changed or not self._shown:
                self._raw(self._hide() + self._draw())

    def _loop(self) -> None:
        self.refresh()
        while not self._stop.wait(self._interval_s):
            self.refresh()

    def _track(self, text: str) -> None:
        cut = max(text.rfind("\n"), text.rfind("\r"))
        self._current = text[cut + 1:] if cut >= 0 else self._current + text

    def _hide(self) -> str:
        if not self._shown:
            return ""
        self._shown = False
        return ERASE_STATUS

    def _draw(self) -> str:
        """The sequence that shows the status line below the current line (empty when it
        cannot be drawn safely)."""
        text = self._text
        width = self._width()
        used = visible_width(self._current)
        if not text or used is None or used >= width - 1 or len(text) >= width:
            return ""
        self._shown = True
        return f"\n\x1b[2K{text}\x1b[1A\r{self._current}"

    def _raw(self, sequence: str) -> None:
        if not sequence:
            return
        if self._fd is None:  # a stream without a file descriptor: through it, in order
            self.stream.write(sequence)
            self.stream.flush()
            return
        data = sequence.encode(self._encoding, errors="replace")
        with contextlib.suppress(OSError):
            while data:
                data = data[os.write(self._fd, data):]
