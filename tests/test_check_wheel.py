"""ci/check_wheel.py: a wheel without the suite, a data file or the entry point, or with the
repository's tests in it, is refused naming each problem."""

from __future__ import annotations

import importlib.util
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from tests.packaging import ROOT


def _checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_wheel", ROOT / "ci" / "check_wheel.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _wheel(folder: Path, names: list[str], entry: str) -> Path:
    folder.mkdir()
    path = folder / "pytest_graphinstruct-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name in names:
            z.writestr(name, "x")
        z.writestr("pytest_graphinstruct-0.1.0.dist-info/entry_points.txt",
                   f"[pytest11]\n{entry}\n")
    return path


def test_a_complete_wheel_passes_and_each_gap_is_named(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    check = _checker()
    full = [*check.SUITE, *check.package_data(ROOT), "pytest_graphinstruct/__init__.py"]
    _wheel(tmp_path / "good", full, check.ENTRY_POINT)
    assert check.main([str(tmp_path / "good"), "--checkout", str(ROOT)]) == 0
    gaps = [n for n in full if not n.endswith("level_3.json")
            and not n.endswith("schema.json")] + ["tests/test_x.py"]
    _wheel(tmp_path / "bad", gaps, "other = x")
    assert check.main([str(tmp_path / "bad"), "--checkout", str(ROOT)]) == 1
    err = capsys.readouterr().err
    assert "missing pytest_graphinstruct/_suite/instructions/level_3.json" in err
    assert "missing pytest_graphinstruct/report/schema.json" in err
    assert "not part of the package: tests/test_x.py" in err
    assert "the pytest entry point" in err
