"""Python code run in a new interpreter: for what only a fresh process shows (which modules an
import loads, what a first use imports)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def fresh_python(code: str, *, cwd: Path | None = None, timeout: float | None = None) -> str:
    """The standard output of ``code`` run by this interpreter in a new process (in ``cwd``),
    stripped.

    Raises:
        subprocess.CalledProcessError: the code exited with a non-zero status.
    """
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=cwd, timeout=timeout).stdout.strip()
