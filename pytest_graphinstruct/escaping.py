"""Untrusted text made safe to show: the one escaping every layer uses.

Text from outside — a model's answer, an endpoint's error message, a server header, a model
name — can hold ANSI escape sequences (clear the screen, recolour, fake a ``PASSED``), bells,
carriage returns that overwrite a line, bidirectional overrides that reorder what is read, and
invisible format characters.  :func:`escape` writes every such character as a visible
Python-style escape (``\\x1b``, ``\\r``, ``\\u202e``), so the text can neither act on a terminal
nor forge lines; ordinary text, tabs and non-ASCII letters are unchanged.  The escaping is for
reading, not reversible (a literal backslash is not doubled).  It lives at the bottom layer so
that ``models`` escapes endpoint text where it enters (:func:`~.models.base.one_line`) with the
same function ``report`` uses for model answers (:mod:`~.report.untrusted`).
"""

from __future__ import annotations

import unicodedata

# Cc: C0/C1 controls (ESC, CR, BEL, NUL, CSI U+009B, NEL); Cf: format characters (bidi
# overrides, zero-width, tag characters); Cs: lone surrogates (cannot be printed at all);
# Zl/Zp: line and paragraph separators (a terminal or editor may break the line there).
_UNSAFE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_NAMED = {"\n": "\\n", "\r": "\\r"}


def escape(text: str) -> str:
    """``text`` on one line: newlines and every control, format or separator character written
    as an escape (tabs kept)."""
    if text.isprintable():
        return text
    return "".join(_escaped(ch) if ch != "\t" and unicodedata.category(ch) in _UNSAFE else ch
                   for ch in text)


def escape_block(text: str) -> list[str]:
    """``text`` as lines (split at ``\\n`` only), each escaped by :func:`escape` — so a ``\\r``
    or a separator character stays visible inside its line."""
    return [escape(line) for line in text.split("\n")]


def _escaped(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
