"""The layers of docs/ARCHITECTURE.md hold: the import contracts pass, and pytest stays at the
edge."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pytest_graphinstruct"
PYTEST_EDGE = {"plugin.py"}  # and the package pytest_run/ (EDGE_PACKAGE)
EDGE_PACKAGE = "pytest_run"


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_import_contracts_hold() -> None:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.fail("import-linter is not installed (it is in the [test] extra)")
    proc = subprocess.run([exe, "--config", str(ROOT / "pyproject.toml")], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "0 broken" in proc.stdout


def test_the_layers_cover_every_module() -> None:
    """Each top-level module and subpackage sits in a layer of the contract (no module lies
    outside the rules)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    layers = config["tool"]["importlinter"]["contracts"][0]["layers"]
    named = {f"pytest_graphinstruct.{m.strip()}" for layer in layers for m in layer.split("|")}
    here = {f"pytest_graphinstruct.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    here |= {f"pytest_graphinstruct.{p.parent.name}" for p in PACKAGE.glob("*/__init__.py")}
    assert sorted(here - named) == []


def test_only_the_edge_imports_pytest() -> None:
    offenders = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                 if p.name not in PYTEST_EDGE and EDGE_PACKAGE not in p.relative_to(PACKAGE).parts
                 and any(m == "pytest" or m.startswith("_pytest") for m in _imports(p))]
    assert offenders == []


def test_no_class_in_the_package_is_over_250_lines() -> None:
    """Issue 21's rule for the whole package."""
    sizes = {f"{p.relative_to(PACKAGE).as_posix()}:{node.name}": node.end_lineno - node.lineno + 1
             for p in PACKAGE.rglob("*.py")
             for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
             if isinstance(node, ast.ClassDef) and node.end_lineno is not None}
    assert len(sizes) > 100
    assert {name: n for name, n in sizes.items() if n > 250} == {}
