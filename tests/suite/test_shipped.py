"""suite.shipped: the suite the package carries, inside a wheel or beside it in a checkout."""

from __future__ import annotations

from pathlib import Path

from pytest_graphinstruct import __version__
from pytest_graphinstruct.suite.shipped import NAME, default_suite, describe_suite, shipped_suite
from tests.packaging import ROOT, wheel_config


def _package(tmp_path: Path, *, inside: bool) -> Path:
    """A package folder whose suite lies inside it (a wheel) or beside it (a checkout)."""
    package = tmp_path / "site" / "pytest_graphinstruct"
    package.mkdir(parents=True)
    root = package / "_suite" if inside else tmp_path / "site"
    (root / "instructions").mkdir(parents=True)
    (root / "instructions" / "level_0.json").write_text("[]", encoding="utf-8")
    (root / "references" / "pools" / "l3").mkdir(parents=True)
    if not inside:
        (root / "pyproject.toml").write_text("", encoding="utf-8")
    return package


def test_the_wheel_maps_the_suite_where_the_package_looks() -> None:
    mapped = wheel_config()["force-include"]
    assert isinstance(mapped, dict)
    assert mapped == {"instructions": "pytest_graphinstruct/_suite/instructions",
                      "references/pools": "pytest_graphinstruct/_suite/references/pools"}
    assert all((ROOT / source).is_dir() for source in mapped)


def test_a_wheel_carries_the_suite_inside_the_package(tmp_path: Path) -> None:
    package = _package(tmp_path, inside=True)
    found = shipped_suite(package)
    assert found is not None and found.where == "package"
    assert found.instructions == package / "_suite" / "instructions"
    assert found.pools == package / "_suite" / "references" / "pools"


def test_a_checkout_carries_it_beside_the_package(tmp_path: Path) -> None:
    package = _package(tmp_path, inside=False)
    found = shipped_suite(package)
    assert found is not None and found.where == "checkout"
    assert found.instructions == tmp_path / "site" / "instructions"
    this = shipped_suite()  # these tests run from the checkout
    assert this is not None and this.instructions == ROOT / "instructions"


def test_a_package_without_its_data_has_none(tmp_path: Path) -> None:
    package = tmp_path / "pytest_graphinstruct"
    package.mkdir()
    assert shipped_suite(package) is None


def test_a_suite_is_named_by_what_it_is(tmp_path: Path) -> None:
    package = _package(tmp_path, inside=True)
    assert describe_suite(package / "_suite" / "instructions", package) == (NAME, __version__)
    official = tmp_path / "official-suite" / "instructions"
    official.mkdir(parents=True)
    assert describe_suite(official, package) == ("official-suite", None)
    assert describe_suite(tmp_path / "mine", package) == ("mine", None)


def test_the_default_suite_is_the_rootdirs_own_only_when_it_holds_level_files(
        tmp_path: Path) -> None:
    shipped = shipped_suite()
    assert shipped is not None
    assert default_suite(tmp_path) == (shipped.instructions, shipped.pools)
    (tmp_path / "instructions").mkdir()  # an empty folder is not a suite: the shipped one runs
    assert default_suite(tmp_path) == (shipped.instructions, shipped.pools)
    (tmp_path / "instructions" / "level_0.json").write_text("[]")
    assert default_suite(tmp_path) == (tmp_path / "instructions", None)
