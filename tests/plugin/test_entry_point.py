"""The pytest entry point is free: importing it (what every pytest run in an environment with
the package installed does) loads no heavy library, and a project that passes no ``--gi-*``
option never loads the benchmark."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.fresh_python import fresh_python

HEAVY = ("networkx", "numpy", "scipy", "torch", "torch_geometric", "openai", "tiktoken",
         "tabulate", "pytest_graphinstruct.run", "pytest_graphinstruct.verify")

pytest_plugins = ["pytester"]


def _loaded_after(code: str, cwd: Path) -> list[str]:
    probe = (f"{code}\nimport sys\nprint(','.join(m for m in {HEAVY!r} "
             "if m in sys.modules))")
    out = fresh_python(probe, cwd=cwd).splitlines()
    return [m for m in (out[-1] if out else "").split(",") if m]


def test_importing_the_entry_point_loads_nothing_heavy(tmp_path: Path) -> None:
    assert _loaded_after("import pytest_graphinstruct.plugin", tmp_path) == []


def test_a_plain_project_never_loads_the_benchmark(tmp_path: Path) -> None:
    (tmp_path / "test_one.py").write_text(
        "import sys\n\n"
        "def test_one():\n"
        f"    heavy = {HEAVY!r}\n"
        "    assert [m for m in heavy if m in sys.modules] == []\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:hypothesispytest", "-p", "no:xdist", "-p", "no:anyio",
                           "test_one.py"], capture_output=True, text=True, check=False,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert "1 passed" in proc.stdout


def test_the_plugin_is_registered_and_its_options_listed(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"],
                          capture_output=True, text=True, check=True, cwd=tmp_path)
    assert "--gi-model" in proc.stdout and "--gi-replay" in proc.stdout
