"""The text of a failing item: per sample, every violated verdict with its source and category,
expected vs observed, and for counts, degrees and numeric properties the signed gap."""

from __future__ import annotations

import json
from typing import Any

from pytest_graphinstruct.report.untrusted import escape, escape_block
from pytest_graphinstruct.run.evaluate import Checked
from pytest_graphinstruct.run.records.results import bounded_answer
from pytest_graphinstruct.vocab import PassRule


def format_failure(checked: Checked, pass_rule: PassRule, *, raw: bool = False) -> str:
    """The failure message of one item.

    The instruction text is cut at 300 characters (a cut text ends with ``…``) and every shown
    value at 120, so a hostile answer cannot flood the terminal; every value is escaped
    (:mod:`..untrusted`), so it cannot act on it either.  With ``raw`` (pytest's ``-v``), each
    sample that did not pass also shows its raw answer, bounded as the report keeps it
    (:func:`~.results.bounded_answer`) and escaped line by line behind a ``|`` gutter.
    """
    inst = checked.instruction
    vs = checked.verifications
    lines = [f"{inst.id} [{checked.cell.label}]: {checked.passing_samples}/{len(vs)} sample(s) "
             f"pass (--gi-pass={pass_rule})", f"  instruction: {_cut(inst.text, 300)}"]
    for k, v in enumerate(vs):
        if v.passed:
            lines.append(f"  sample {k}: ok")
            continue
        lines.append(f"  sample {k}: {v.outcome.value}, {len(v.violations)} violation(s)")
        for x in v.violations:
            where = ""
            if x.where:
                items = "; ".join(f"{escape(str(key))}={_short(val)}"
                                  for key, val in x.where.entries)
                where = f"  [where: {items}]"
            gap = x.gap
            shown_gap = f", gap {gap.gap:+.4g}" if gap is not None else ""
            lines.append(f"    assert {escape(x.constraint)}  ({x.source.value}, {x.category}): "
                         f"expected {_clip(str(x.expected))}, observed "
                         f"{_clip(str(x.observed))}{shown_gap}{where}")
        if raw and k < len(checked.answers):
            lines += raw_answer_lines(checked.answers[k].text, indent="    ")
    return "\n".join(lines)


def raw_answer_lines(text: str | None, *, indent: str) -> list[str]:
    """A raw answer for a terminal: a heading with its length, then its lines bounded by
    :func:`~.results.bounded_answer` and escaped, each behind ``indent + '  | '``."""
    if text is None:
        return [f"{indent}raw answer: none"]
    if not text:
        return [f"{indent}raw answer: empty"]
    kept = bounded_answer(text) or ""
    return [f"{indent}raw answer ({len(text)} characters):",
            *(f"{indent}  | {line}" for line in escape_block(kept))]


def _short(value: Any) -> str:
    return _clip(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                                 default=str))


def _cut(text: str, limit: int) -> str:
    """``text`` escaped, or, when longer than ``limit`` characters, its first ``limit - 1``
    escaped and ``…`` (cut before escaping, so an escape is never split)."""
    return escape(text) if len(text) <= limit else escape(text[: limit - 1]) + "…"


def _clip(text: str, limit: int = 120) -> str:
    text = escape(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
