"""The test lists under bench/ name tests that exist (a test moved or renamed would otherwise
make ``bench/flaky_loop.sh`` collect nothing and fail with pytest's exit code 5)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LISTS = [ROOT / "bench" / "interrupt_tests.txt"]


def listed_ids(path: Path) -> list[str]:
    """The test ids in a list file: one a line, '#' starts a comment, ends trimmed."""
    ids = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            ids.append(line)
    return ids


def functions_in(path: Path) -> set[str]:
    """The names of the module-level test functions in ``path``."""
    tree = ast.parse(path.read_text())
    return {node.name for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_every_listed_test_exists() -> None:
    missing = []
    count = 0
    for listing in LISTS:
        for test_id in listed_ids(listing):
            count += 1
            file, _, name = test_id.partition("::")
            name = name.split("[", 1)[0]
            path = ROOT / file
            if not path.is_file() or (name and name not in functions_in(path)):
                missing.append(f"{listing.name}: {test_id}")
    assert count > 0
    assert not missing, "\n".join(missing)
