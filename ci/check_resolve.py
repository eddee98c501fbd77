"""Check what pip resolves for the plugin's default install: no GPU stack (issue 49).

D3 trains on NumPy by default; torch is the ``[gpu]`` extra's (``--gi-d3-device=cuda``), and
from the public index it is a CUDA build that brings nvidia-* and cuda-* wheels and triton
(about 3 GB).  ``.ci/run`` asks pip what the built wheel's default install resolves from the
public index alone (no find-links, no config, no constraints) and hands the report here::

    env -u PIP_FIND_LINKS pip install --isolated --dry-run --ignore-installed \\
        --report resolve.json dist/pytest_graphinstruct-*.whl
    python ci/check_resolve.py resolve.json

Exits 1 naming every resolved package that is torch, torch-geometric, triton, nvidia-* or
cuda-*; 0 printing how many packages resolved.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

FORBIDDEN = re.compile(r"^(torch|torch-geometric|triton|nvidia-.*|cuda-.*)$")


def normalize(name: str) -> str:
    """A distribution's name as the index compares it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def resolved(report: dict[str, object]) -> list[tuple[str, str]]:
    """(name, version) of every package a ``pip install --report`` would install."""
    install = report.get("install")
    if not isinstance(install, list):
        raise ValueError("not a pip installation report: no 'install' list")
    return [(str(item["metadata"]["name"]), str(item["metadata"]["version"]))
            for item in install]


def gpu_stack(packages: list[tuple[str, str]]) -> list[str]:
    """The packages of the GPU stack among ``packages``, as ``name==version``."""
    return [f"{name}=={version}" for name, version in packages
            if FORBIDDEN.match(normalize(name))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="pip's --report JSON")
    args = parser.parse_args(argv)
    packages = resolved(json.loads(args.report.read_text(encoding="utf-8")))
    bad = gpu_stack(packages)
    if bad:
        for line in bad:
            print(f"check_resolve: the default install resolves {line}", file=sys.stderr)
        print("check_resolve: torch and its CUDA stack belong in the [gpu] extra "
              "(pyproject.toml)", file=sys.stderr)
        return 1
    print(f"check_resolve: {len(packages)} packages resolved, none of torch, "
          "torch-geometric, triton, nvidia-*, cuda-*")
    return 0


if __name__ == "__main__":
    sys.exit(main())
