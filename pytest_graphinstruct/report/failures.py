"""The text of a failing item: per sample, every violated verdict with expected vs observed."""

from __future__ import annotations

import json
from typing import Any

from pytest_graphinstruct.run.evaluate import Checked


def format_failure(checked: Checked, pass_rule: str) -> str:
    """The failure message of one item (the instruction text is cut at 300 characters and
    every shown value at 120, so a hostile answer cannot flood the terminal)."""
    inst = checked.instruction
    vs = checked.verifications
    lines = [f"{inst.id} [{checked.cell.label}]: {checked.passing_samples}/{len(vs)} sample(s) "
             f"pass (--gi-pass={pass_rule})", f"  instruction: {inst.text[:300]}"]
    for k, v in enumerate(vs):
        if v.passed:
            lines.append(f"  sample {k}: ok")
            continue
        lines.append(f"  sample {k}: {v.outcome.value}, {len(v.violations)} violation(s)")
        for x in v.violations:
            where = ""
            if x.where:
                items = "; ".join(f"{key}={_short(val)}" for key, val in x.where.items())
                where = f"  [where: {items}]"
            lines.append(f"    assert {x.constraint}  ({x.source.value}): expected "
                         f"{_clip(str(x.expected))}, observed {_clip(str(x.observed))}{where}")
    return "\n".join(lines)


def _short(value: Any) -> str:
    return _clip(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                                 default=str))


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
