"""What the wheel ships, read from ``pyproject.toml`` (hatchling: the package directory with
every file git does not ignore, and the suite force-included as ``_suite``); ``.ci/run`` builds
the real wheel and checks its contents with ``ci/check_wheel.py``."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wheel_config() -> dict[str, object]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return data["tool"]["hatch"]["build"]["targets"]["wheel"]


def wheel_ships(relative: str) -> bool:
    """Whether the wheel holds ``pytest_graphinstruct/<relative>``: the package is the wheel's,
    the file is there, and git does not ignore it (hatchling leaves ignored files out)."""
    path = ROOT / "pytest_graphinstruct" / relative
    if wheel_config().get("packages") != ["pytest_graphinstruct"] or not path.is_file():
        return False
    ignored = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=ROOT,
                             capture_output=True, check=False)
    return ignored.returncode != 0  # 0: ignored; 1: not ignored; 128: not a checkout
