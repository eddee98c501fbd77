"""Check a built wheel (and, when given, the sdist) before anyone installs it: the package with
every data file of the checkout's package (templates, grammars, tables, the report schema, the
HTML assets), the suite it ships (``_suite/``: six level files, the manifest, the L3/L4 pools),
the pytest entry point, and nothing of the repository that is not the package (tests, bench,
caches).  Used by ``.ci/run`` and ``ci/github/release.yml``.

Usage::

    python ci/check_wheel.py DIST_DIR [--checkout DIR]

Exits 1 naming every problem, 0 printing what it checked.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

PACKAGE = "pytest_graphinstruct"
SUITE = [f"{PACKAGE}/_suite/instructions/level_{lv}.json" for lv in range(6)] + [
    f"{PACKAGE}/_suite/instructions/manifest.json",
    f"{PACKAGE}/_suite/references/pools/l3/manifest.json",
    f"{PACKAGE}/_suite/references/pools/l4/manifest.json",
]
ENTRY_POINT = "graphinstruct = pytest_graphinstruct.plugin"
NOT_SHIPPED = ("tests/", "bench/", "docs/", "ci/", "__pycache__/", ".pyc")


def package_data(checkout: Path) -> list[str]:
    """Every file of the checkout's package that git tracks and that is not Python source."""
    listed = subprocess.run(["git", "ls-files", PACKAGE], cwd=checkout, capture_output=True,
                            text=True, check=True).stdout.split()
    return sorted(name for name in listed if not name.endswith(".py"))


def check_wheel(wheel: Path, checkout: Path) -> list[str]:
    names = set(zipfile.ZipFile(wheel).namelist())
    problems = [f"missing {name}" for name in [*SUITE, *package_data(checkout)]
                if name not in names]
    problems += [f"not part of the package: {name}" for name in sorted(names)
                 if any(part in name for part in NOT_SHIPPED)]
    entry = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry[0]).decode() if entry else ""
    if ENTRY_POINT not in text:
        problems.append(f"the pytest entry point '{ENTRY_POINT}' is missing")
    return problems


def check_sdist(sdist: Path) -> list[str]:
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    wanted = [f"instructions/level_{lv}.json" for lv in range(6)] + [
        "references/pools/l3/manifest.json", "pyproject.toml", f"{PACKAGE}/__init__.py"]
    return [f"sdist: missing {name}" for name in wanted if name not in names]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dist", type=Path, help="the folder the wheel (and sdist) was built into")
    ap.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parents[1],
                    help="the checkout the wheel was built from (default: this one)")
    args = ap.parse_args(argv)
    wheels = sorted(args.dist.glob("*.whl"))
    if len(wheels) != 1:
        print(f"expected one wheel in {args.dist}, found {len(wheels)}", file=sys.stderr)
        return 1
    problems = check_wheel(wheels[0], args.checkout)
    for sdist in sorted(args.dist.glob("*.tar.gz")):
        problems += check_sdist(sdist)
    for line in problems:
        print(line, file=sys.stderr)
    if not problems:
        print(f"{wheels[0].name}: the package, its {len(package_data(args.checkout))} data "
              f"files, the suite ({len(SUITE)} files) and the entry point; nothing else")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
