"""report.live: the status line never changes what pytest's output looks like on a terminal.

A tiny terminal model (the few sequences the live line and pytest use) replays what reaches
the stream; the screen with the live line, once it is stopped, must equal the screen without it.
"""

from __future__ import annotations

import io
import os
import re

import pytest

from pytest_graphinstruct.report.live.line import LiveLine, live_enabled, visible_width

WIDTH = 60
_TOKEN = re.compile(r"\x1b\[([0-9;]*)([A-Za-z])|.", re.S)


def screen(stream: str, width: int = WIDTH) -> list[str]:
    """The rows a VT100-like terminal shows after ``stream`` (``\\n`` moves to the next row's
    start, as a TTY's output processing does); trailing blank rows dropped."""
    rows: list[list[str]] = [[]]
    row = col = 0

    def put(ch: str) -> None:
        nonlocal row, col
        if col >= width:  # auto-wrap
            row, col = row + 1, 0
        while len(rows) <= row:
            rows.append([])
        line = rows[row]
        line.extend(" " * (col + 1 - len(line)))
        line[col] = ch
        col += 1

    for m in _TOKEN.finditer(stream):
        if m.group(2):
            arg, cmd = m.group(1), m.group(2)
            while len(rows) <= row:
                rows.append([])
            if cmd == "m":
                continue
            if cmd == "A":
                row = max(0, row - int(arg or 1))
            elif cmd == "B":  # cursor down: never past the last row there is (no scrolling)
                row = min(len(rows) - 1, row + int(arg or 1))
            elif cmd == "K" and arg == "2":
                rows[row] = []
            else:
                raise AssertionError(f"unexpected sequence {m.group(0)!r}")
            continue
        ch = m.group(0)
        if ch == "\n":
            row, col = row + 1, 0
            while len(rows) <= row:
                rows.append([])
        elif ch == "\r":
            col = 0
        elif ch == "\x1b":
            raise AssertionError("unexpected escape")
        else:
            put(ch)
    out = ["".join(r).rstrip() for r in rows]
    while out and not out[-1]:
        out.pop()
    return out


# what pytest writes in a run: fspath prefixes, coloured letters, [ NN%] columns, newlines
PYTEST_WRITES = [
    "collected 4 items", "\n", "\n", "L1-001[m] ", "\x1b[32m.\x1b[0m",
    "\x1b[32m" + " " * 20 + "[ 25%]\x1b[0m", "\n", "L1-002[m] ", "\x1b[31mF\x1b[0m",
    "\x1b[31m" + " " * 20 + "[ 50%]\x1b[0m", "\n", "tests/test_x.py ", "\x1b[32m.\x1b[0m",
    "\x1b[32m.\x1b[0m", "\r", "coll 3", "\n",
]


class Status:
    """A render callback whose text the test changes."""

    def __init__(self) -> None:
        self.text = "GraphInstruct: answers 0/4"
        self.widths: list[int] = []

    def __call__(self, width: int) -> str:
        self.widths.append(width)
        return self.text


def test_the_screen_is_pytests_own_once_the_line_stops() -> None:
    plain = io.StringIO()
    out = io.StringIO()
    status = Status()
    live = LiveLine(out, status, width=lambda: WIDTH, interval_s=3600)
    live.start()
    live.refresh()
    for n, w in enumerate(PYTEST_WRITES):
        plain.write(w)
        live.write(w)
        status.text = f"GraphInstruct: answers {n}/4"
        live.refresh()
        # pytest's rows are exactly as without the line; the line is the row below them
        expected = screen(plain.getvalue())
        cursor_row = plain.getvalue().count("\n")
        expected += [""] * (cursor_row + 1 - len(expected))
        assert screen(out.getvalue()) == [*expected, status.text]
    assert status.widths and set(status.widths) == {WIDTH}
    live.stop()
    assert screen(out.getvalue()) == screen(plain.getvalue())
    assert "answers" not in "\n".join(screen(out.getvalue()))


def test_the_line_is_below_the_current_line_while_shown() -> None:
    out = io.StringIO()
    live = LiveLine(out, lambda width: "STATUS", width=lambda: WIDTH, interval_s=3600)
    live.start()
    live.write("L1-001[m] ")
    live.write("\x1b[32m.\x1b[0m")
    live.refresh()
    assert screen(out.getvalue()) == ["L1-001[m] .", "STATUS"]
    live.write("\x1b[32m.\x1b[0m")  # lands after the first dot, not on the status row
    assert screen(out.getvalue()) == ["L1-001[m] ..", "STATUS"]
    live.stop()
    assert screen(out.getvalue()) == ["L1-001[m] .."]


def test_not_drawn_over_a_line_it_cannot_redraw() -> None:
    out = io.StringIO()
    live = LiveLine(out, lambda width: "STATUS", width=lambda: 20, interval_s=3600)
    live.start()
    live.refresh()  # nothing on the current line yet: shown
    assert "STATUS" in out.getvalue()
    mark = len(out.getvalue())
    live.write("x" * 25)  # wrapped: its start is on another row
    live.refresh()
    assert "STATUS" not in out.getvalue()[mark:]
    live.write("\n\x1b[5Cabc")  # a cursor movement the line does not know how to repeat
    live.refresh()
    assert "STATUS" not in out.getvalue()[mark:]
    live.write("\nok")
    live.refresh()
    assert "STATUS" in out.getvalue()[mark:]
    live.stop()


def test_a_failing_render_keeps_the_run_going() -> None:
    out = io.StringIO()

    def broken(width: int) -> str:
        raise RuntimeError("boom")

    live = LiveLine(out, broken, width=lambda: WIDTH, interval_s=0.01)
    live.start()
    live.write("abc")
    live.stop()
    assert out.getvalue() == "abc"


def test_the_line_goes_through_a_duplicate_descriptor() -> None:
    """While an item runs, pytest's capture redirects fd 1: the line is written through a
    duplicate of the stream's descriptor, in order with the stream's own text."""
    read_end, write_end = os.pipe()  # like a terminal, a pipe has no file offset
    with open(write_end, "w", encoding="utf-8") as stream:
        live = LiveLine(stream, lambda width: "STATUS", width=lambda: WIDTH, interval_s=3600)
        live.start()
        live.write("a.py ")
        live.refresh()
        live.write(".")
        live.stop()
    with open(read_end, encoding="utf-8", newline="") as pipe:
        text = pipe.read()
    assert "STATUS" in text
    assert screen(text) == ["a.py ."]


@pytest.mark.parametrize(("mode", "tty", "markup", "verbosity", "capture_off", "shown"), [
    ("auto", True, True, 0, False, True),
    ("auto", True, True, 2, False, True),
    ("auto", False, False, 0, False, False),  # CI logs, redirected output
    ("auto", True, False, 0, False, False),  # TERM=dumb / --color=no: no escape codes
    ("auto", True, True, -1, False, False),  # -q
    ("auto", True, True, -2, False, False),  # -qq
    ("auto", True, True, 0, True, False),  # -s: tests print straight to the terminal
    ("on", False, False, 0, False, True),
    ("on", False, False, -1, False, False),
    ("off", True, True, 0, False, False),
])
def test_when_the_line_is_shown(mode: str, tty: bool, markup: bool, verbosity: int,
                                capture_off: bool, shown: bool) -> None:
    assert live_enabled(mode, isatty=tty, hasmarkup=markup, verbosity=verbosity,
                        capture_off=capture_off) is shown


def test_visible_width() -> None:
    assert visible_width("\x1b[32m.\x1b[0m..") == 3
    assert visible_width("a\tb") == 9
    assert visible_width("图表") == 4
    assert visible_width("e\u0301") == 1
    assert visible_width("\x1b[2Kx") is None
    assert visible_width("a\x08b") is None
