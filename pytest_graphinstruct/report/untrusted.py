"""Showing untrusted text (a model's answer, values taken from it) on a terminal, safely.

Model output can hold ANSI escape sequences (clear the screen, recolour, fake a ``PASSED``),
carriage returns that overwrite a line, bidirectional overrides that reorder what is read, and
invisible format characters.  :func:`escape` writes every such character as a visible Python-style
escape (``\\x1b``, ``\\r``, ``\\u202e``), so the text can neither act on the terminal nor forge
lines; ordinary text, tabs and non-ASCII letters are unchanged.  The escaping is for reading, not
reversible (a literal backslash is not doubled).  The escaping itself is
:mod:`pytest_graphinstruct.escaping` (shared with ``models``, which escapes endpoint text where it
enters); this module adds the Markdown and CSV forms.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_graphinstruct.escaping import escape, escape_block

__all__ = ["csv_safe", "escape", "escape_block", "escape_markdown"]

# What can act inside a Markdown line: emphasis, code, links and images ([ ]), HTML (< > &),
# table cells (|), strikethrough (~), and the backslash itself.
_MARKDOWN = re.compile(r"([\\`*_\[\]<>|&~])")


def escape_markdown(text: str) -> str:
    """``text`` (:func:`escape`-d) with every character Markdown or HTML would act on inside a
    line or a table cell backslash-escaped: no link, image, tag, emphasis or cell break can be
    injected.  Line-start syntax (``#``, ``-``) is left to the caller's prefix."""
    return _MARKDOWN.sub(r"\\\1", escape(text))


def csv_safe(value: Any) -> Any:
    """A CSV cell a spreadsheet will not run as a formula: text is :func:`escape`-d and gets a
    leading ``'`` when it starts with ``=``, ``+``, ``-`` or ``@``; other values pass."""
    if isinstance(value, str):
        value = escape(value)
        if value[:1] in ("=", "+", "-", "@"):
            return "'" + value
    return value
