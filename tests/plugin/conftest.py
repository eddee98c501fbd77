from __future__ import annotations

import json
from pathlib import Path

import pytest

from ._suite import suite_records


@pytest.fixture
def suite_dir(pytester: pytest.Pytester) -> Path:
    """The tiny suite written as level files in the pytester directory."""
    root = pytester.path / "suite"
    root.mkdir()
    for lv, recs in suite_records().items():
        (root / f"level_{lv}.json").write_text(json.dumps(recs), encoding="utf-8")
    return root
