"""The project's own suite as the package carries it: what a run collects when the user names no
suite.

A wheel holds it inside the package, ``pytest_graphinstruct/_suite/`` (``instructions/`` and
``references/pools/``, mapped there from the repository by ``pyproject.toml``); a package that
runs from a checkout (an editable install, or the source tree on ``sys.path``) finds the same
folders beside it.  Either way it is the suite of this version of the package.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_graphinstruct import __version__

__all__ = ["NAME", "ShippedSuite", "default_suite", "describe_suite", "holds_levels", "same_folder",
           "shipped_suite"]

NAME = "pytest-graphinstruct"
"""The shipped suite's name in a report (its version is the package's)."""

_PACKAGE = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class ShippedSuite:
    """Where the shipped suite lies: ``root`` holds ``instructions/`` and
    ``references/pools/``; ``where`` is ``package`` (inside an installed wheel) or ``checkout``
    (the repository the package runs from)."""

    root: Path
    where: str

    @property
    def instructions(self) -> Path:
        return self.root / "instructions"

    @property
    def pools(self) -> Path | None:
        """The L3/L4 reference pools (``None``: not there)."""
        pools = self.root / "references" / "pools"
        return pools if pools.is_dir() else None


def holds_levels(folder: Path) -> bool:
    """Whether ``folder`` is a suite folder: a directory with ``level_<L>.json`` files."""
    return folder.is_dir() and any(folder.glob("level_*.json"))


def shipped_suite(package: Path = _PACKAGE) -> ShippedSuite | None:
    """The suite this package carries (module docstring), or ``None`` when it has none (a
    package installed without its data)."""
    inside = package / "_suite"
    if holds_levels(inside / "instructions"):
        return ShippedSuite(inside, "package")
    checkout = package.parent
    if holds_levels(checkout / "instructions") and (checkout / "pyproject.toml").is_file():
        return ShippedSuite(checkout, "checkout")
    return None


def describe_suite(folder: Path, package: Path = _PACKAGE) -> tuple[str, str | None]:
    """``(name, version)`` of the suite in ``folder``: the package's own suite (shipped, or the
    checkout's) is ``pytest-graphinstruct`` at the package's version; any other is named by
    its folder (the folder above an ``instructions`` folder: ``official-suite``) with no
    version (its files' hashes say which it is)."""
    own = shipped_suite(package)
    if own is not None and same_folder(folder, own.instructions):
        return NAME, __version__
    path = folder.resolve()
    return (path.parent.name if path.name == "instructions" and path.parent.name
            else path.name), None


def same_folder(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` resolve to one place (``False`` when either cannot resolve)."""
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def default_suite(rootdir: Path) -> tuple[Path, Path | None]:
    """The suite a run (and the ``gi_suite`` fixture) uses when the user names none, and the
    pools that come with it: ``instructions/`` under ``rootdir`` when it holds level files (a
    checkout, or a project that keeps a suite there; no pools of its own), else the suite the
    package ships with its pools; ``rootdir/instructions`` when there is neither (the caller
    says it is missing)."""
    own = rootdir / "instructions"
    if holds_levels(own):
        return own, None
    shipped = shipped_suite()
    return (shipped.instructions, shipped.pools) if shipped is not None else (own, None)
