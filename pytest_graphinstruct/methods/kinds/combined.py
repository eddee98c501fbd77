"""``combined``: CAAP chooses the prompt, then VGIG refines (its feedback from the run)."""

from __future__ import annotations

from typing import Final

from pytest_graphinstruct.methods.kinds.vgig import Vgig

COMBINED: Final = Vgig("combined", caap=True, feedback=False)
