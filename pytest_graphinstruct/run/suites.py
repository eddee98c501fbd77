"""The suite the ``gi_suite`` fixture gives when no run is configured: the one ``--gi-suite``
names, else the default one (:func:`~pytest_graphinstruct.suite.shipped.default_suite`).
The pytest edge reaches the suite layer through here."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pytest_graphinstruct.suite.loader import Suite, load_suite
from pytest_graphinstruct.suite.shipped import default_suite

__all__ = ["Suite", "fixture_suite"]


def fixture_suite(named: str | None, levels: Sequence[int] | None,
                  rootdir: Path) -> Suite | Path:
    """The suite ``named`` (a folder), else the default one under ``rootdir``, loaded with
    ``levels``; the folder looked at when no suite is named and there is none (the caller
    skips).

    Raises:
        GraphInstructError, ValueError: the suite cannot be read (the message says why).
    """
    root = Path(named).expanduser() if named else default_suite(rootdir)[0]
    if not named and not root.is_dir():
        return root
    return load_suite(root, levels=levels)
