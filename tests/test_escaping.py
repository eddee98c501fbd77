"""escaping: untrusted text written on one line, every control, format and separator character
shown as a visible escape."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.escaping import escape, escape_block

HOSTILE = "\x1b[2J\x1b[31mPASSED\x1b[0m\rall good\u202egnp\x07\x00"
UNSAFE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _acts(ch: str) -> bool:
    """True for a character that may act on a terminal or break a line (tab excepted)."""
    return ch != "\t" and unicodedata.category(ch) in UNSAFE


def test_escape_neutralises_controls_ansi_and_bidi() -> None:
    shown = escape(HOSTILE)
    assert not any(ch in shown for ch in "\x1b\r\x07\x00\u202e\n")
    assert "\\x1b[31mPASSED" in shown and "\\r" in shown and "\\u202e" in shown
    assert escape("a\tb é 图") == "a\tb é 图"  # ordinary text, tabs and non-ASCII unchanged
    assert escape("x\ud800y") == "x\\ud800y"


def test_escape_block_keeps_lines_apart_and_escapes_within_them() -> None:
    assert escape_block("one\ntwo\x1b[0m\r\nthree") == ["one", "two\\x1b[0m\\r", "three"]
    assert escape_block("") == [""]
    assert escape_block("a\u2028b\x85c") == ["a\\u2028b\\x85c"]


@pytest.mark.parametrize(("ch", "shown"), [
    ("\n", "\\n"), ("\r", "\\r"), ("\x00", "\\x00"), ("\x7f", "\\x7f"), ("\x9b", "\\x9b"),
    ("\u200b", "\\u200b"), ("\u2029", "\\u2029"), ("\ufeff", "\\ufeff"),
    ("\U000e0041", "\\U000e0041"),  # a tag character (Cf) beyond the BMP
])
def test_each_width_of_escape(ch: str, shown: str) -> None:
    assert escape(f"a{ch}b") == f"a{shown}b"


def test_a_literal_backslash_is_not_doubled() -> None:
    """The escaping is for reading, not reversible: text that looks like an escape stays."""
    assert escape("C:\\x1b\\n") == "C:\\x1b\\n"
    assert escape("\x1b") == escape("\\x1b")


@given(st.text())
def test_no_character_that_acts_survives(text: str) -> None:
    shown = escape(text)
    assert not any(_acts(ch) for ch in shown)
    assert "\n" not in shown and "\r" not in shown


@given(st.text())
def test_escape_is_idempotent(text: str) -> None:
    once = escape(text)
    assert escape(once) == once


@given(st.text().filter(lambda t: not any(_acts(ch) for ch in t)))
def test_safe_text_is_unchanged(text: str) -> None:
    assert escape(text) == text


@given(st.text())
def test_escape_block_has_one_safe_line_per_newline(text: str) -> None:
    lines = escape_block(text)
    assert len(lines) == text.count("\n") + 1
    assert all(not any(_acts(ch) for ch in line) for line in lines)
