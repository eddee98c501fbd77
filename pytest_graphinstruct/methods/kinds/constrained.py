"""``constrained``: the baseline's prompts, the answer format enforced by the endpoint
(:mod:`pytest_graphinstruct.methods.constrained`); its cells come from ``--gi-constrained``."""

from __future__ import annotations

from typing import Final

from pytest_graphinstruct.methods.kinds.baseline import OneCall

CONSTRAINED: Final = OneCall("constrained", selectable=False, constrained=True)
