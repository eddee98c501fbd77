"""Untrusted text made safe for Markdown and CSV (report/untrusted.py)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.report.untrusted import csv_safe, escape_markdown


def test_markdown_specials_are_escaped_and_controls_shown() -> None:
    assert escape_markdown("a|b <i>[x](y) *z* _w_ & ~s~ `c`\x1b") == (
        "a\\|b \\<i\\>\\[x\\](y) \\*z\\* \\_w\\_ \\& \\~s\\~ \\`c\\`\\\\x1b")
    assert escape_markdown("plain text 1.0") == "plain text 1.0"


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_no_markdown_special_is_left_active(text: str) -> None:
    out = escape_markdown(text)
    assert "\n" not in out and "\r" not in out
    unpaired = out.replace("\\\\", "")
    assert not re.search(r"(?<!\\)[`*_\[\]<>|&~]", unpaired)


def test_csv_cells_cannot_start_a_formula() -> None:
    assert [csv_safe(x) for x in ("=1+1", "+a", "-b", "@c", "ok", 3, None)] == [
        "'=1+1", "'+a", "'-b", "'@c", "ok", 3, None]
    assert csv_safe("x\ny") == "x\\ny"
