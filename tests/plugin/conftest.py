from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

import pytest_graphinstruct

from ._suite import write_suite

# Import the whole package before any in-process pytester run: pytester restores sys.modules
# after each run, and a module loaded inside a run would be imported again by the next one —
# which crashes for numpy and torch ("cannot load module more than once per process").
for _module in pkgutil.walk_packages(pytest_graphinstruct.__path__, "pytest_graphinstruct."):
    importlib.import_module(_module.name)


@pytest.fixture
def suite_dir(pytester: pytest.Pytester) -> Path:
    """The tiny suite written as level files in the pytester directory."""
    root = pytester.path / "suite"
    return write_suite(root)
