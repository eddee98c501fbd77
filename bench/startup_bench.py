"""What a process pays before it works: the plugin's start with and without D3, and the CLI.

Every case runs in a fresh process, ``--runs`` times, the cases taking turns (so a burst of
load on a shared machine spreads over all of them), after one warm-up round; the median, min
and max wall time of each are printed, and whether the process imported torch.  The processes
run without ``PYTHONDONTWRITEBYTECODE`` (as users have it): the warm-up writes the bytecode.

- ``plain pytest``: one empty test in a folder of its own, the plugin installed but not asked
  for — what any pytest process pays; the next two are compared with it (issue 35's targets:
  within 1 s and 2 s of it).
- ``collect 800``: ``pytest --collect-only --gi-model=oracle`` over the whole suite — what an
  xdist worker pays before its first item.
- ``oracle 12``: the oracle over 2 instructions per level (12 items), D3's result store off
  (``GI_D3_CACHE=off``): one process's whole run, setup included — what every xdist worker and
  every CI shard pays beside its own items.  Reference pools read from their cache (the
  warm-up round verifies them once, as a machine's first run does).
- ``oracle L0`` / ``oracle L3``: ``pytest --gi-model=oracle`` over the first instruction of
  level 0 (no D3) or level 3 (D3): from process start to the first item started, and the whole
  run (D3's backend is imported when the first batch of items is scored, after they ran).
- ``score --help``, ``gate`` (a report against itself as baseline), ``html`` (one report): the
  whole command, on ``tests/plugin/pinned/oracle.json`` (800 items' worth is not needed: the
  import cost is what is measured).
- imports: ``import torch``; ``import torch_geometric`` as such (it loads ``torch._dynamo``);
  and D3's GPU backend import, ``score.gcn_backend.load()``, which avoids ``torch._dynamo``
  (a run that trains on the CPU imports no torch: "imports torch: no" above says so).

Usage::

    python bench/startup_bench.py [--runs 5] [--suite DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "tests" / "plugin" / "pinned" / "oracle.json"

# Loaded with -p: when the first item starts, and whether torch was imported.
PROBE = """
import json, os, sys, time

_seen = {}

def pytest_runtest_logstart(nodeid, location):
    _seen.setdefault("start", time.time())

def pytest_sessionfinish(session):
    _seen["torch"] = "torch" in sys.modules
    _seen["dynamo"] = "torch._dynamo" in sys.modules
    with open(os.environ["STARTUP_PROBE"], "w") as f:
        json.dump(_seen, f)
"""

# Runs one CLI command in-process and says on stderr whether it imported torch.
CLI = ("import sys\n"
       "from pytest_graphinstruct.__main__ import main\n"
       "try:\n"
       "    code = main(sys.argv[1:])\n"
       "except SystemExit as exc:\n"
       "    code = exc.code\n"
       "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH', file=sys.stderr)\n"
       "sys.exit(code)\n")

IMPORTS = {
    "import torch": "import torch",
    "import torch_geometric": "import torch_geometric",
    "gcn_backend.load()": "from pytest_graphinstruct.score import gcn_backend; "
                          "gcn_backend.load()",
}


class Sample:
    """The times of one case over its runs (seconds), and whether it imported torch."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {}
        self.torch: set[bool] = set()

    def add(self, what: str, seconds: float) -> None:
        self.times.setdefault(what, []).append(seconds)


def _env(tmp: Path) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(tmp), str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _oracle(tmp: Path, suite: Path, level: int) -> Callable[[Sample], None]:
    def run(sample: Sample) -> None:
        probe = tmp / f"probe-{level}.json"
        env = {**_env(tmp), "STARTUP_PROBE": str(probe)}
        t0 = time.time()
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "startup_probe",
                        "-p", "no:cacheprovider", "--gi-model=oracle", f"--gi-suite={suite}",
                        f"--gi-levels={level}", "--gi-per-level=1"],
                       cwd=tmp, env=env, check=True, capture_output=True)
        t1 = time.time()
        seen = json.loads(probe.read_text(encoding="utf-8"))
        sample.add("first item started", seen["start"] - t0)
        sample.add("whole run", t1 - t0)
        sample.torch.add(bool(seen["torch"]))
    return run


def _pytest(folder: Path, env: dict[str, str], *argv: str) -> Callable[[Sample], None]:
    probe = folder / "probe.json"

    def run(sample: Sample) -> None:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-p", "startup_probe", *argv], cwd=folder,
                       env={**env, "STARTUP_PROBE": str(probe)}, check=True,
                       capture_output=True)
        sample.add("whole run", time.perf_counter() - t0)
        sample.torch.add(bool(json.loads(probe.read_text(encoding="utf-8"))["torch"]))
    return run


def _cli(tmp: Path, *argv: str) -> Callable[[Sample], None]:
    def run(sample: Sample) -> None:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", CLI, *argv], cwd=tmp, env=_env(tmp),
                              check=True, capture_output=True, text=True)
        sample.add("whole command", time.perf_counter() - t0)
        sample.torch.add(not proc.stderr.strip().endswith("NO-TORCH"))
    return run


def _import(tmp: Path, code: str) -> Callable[[Sample], None]:
    timed = ("import time; t = time.perf_counter(); " + code
             + "; import sys; print(time.perf_counter() - t, 'torch._dynamo' in sys.modules)")

    def run(sample: Sample) -> None:
        out = subprocess.run([sys.executable, "-c", timed], cwd=tmp, env=_env(tmp), check=True,
                             capture_output=True, text=True).stdout.split()
        sample.add("import", float(out[-2]))
        sample.torch.add(True)
        sample.add("torch._dynamo loaded", float(out[-1] == "True"))
    return run


def _line(name: str, what: str, times: list[float]) -> str:
    return (f"{name:<24} {what:<22} median {statistics.median(times):6.2f} s  "
            f"(min {min(times):.2f}, max {max(times):.2f}, n={len(times)})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--suite", default=str(ROOT / "instructions"),
                    help="a suite with levels 0 and 3 (default: the project's instructions/)")
    args = ap.parse_args()
    suite = Path(args.suite).resolve()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        (tmp / "startup_probe.py").write_text(PROBE, encoding="utf-8")
        for sub in ("plain", "collect", "oracle12"):
            (tmp / sub).mkdir()
        (tmp / "plain" / "test_one.py").write_text("def test_one():\n    pass\n",
                                                   encoding="utf-8")
        env = _env(tmp)
        cases: dict[str, Callable[[Sample], None]] = {
            "plain pytest": _pytest(tmp / "plain", env),
            "collect 800": _pytest(tmp / "collect", env, "--collect-only", "--gi-model=oracle",
                                   f"--gi-suite={suite}"),
            "oracle 12": _pytest(tmp / "oracle12", {**env, "GI_D3_CACHE": "off"},
                                 "--gi-model=oracle", f"--gi-suite={suite}",
                                 "--gi-per-level=2"),
            "oracle L0 (no D3)": _oracle(tmp, suite, 0),
            "oracle L3 (D3)": _oracle(tmp, suite, 3),
            "score --help": _cli(tmp, "score", "--help"),
            "gate": _cli(tmp, "gate", str(REPORT), "--baseline", str(REPORT)),
            "html": _cli(tmp, "html", str(REPORT), "--out", str(tmp / "r.html")),
            **{label: _import(tmp, code) for label, code in IMPORTS.items()},
        }
        samples = {label: Sample() for label in cases}
        for case in cases.values():  # warm the file system cache and bytecode
            case(Sample())
        for _ in range(args.runs):
            for label, case in cases.items():
                case(samples[label])
    print(f"fresh processes, median of {args.runs} runs each, cases taking turns")
    for label, sample in samples.items():
        for what, times in sample.times.items():
            if what == "torch._dynamo loaded":
                continue
            print(_line(label, what, times))
        if label in IMPORTS:
            dynamo = sample.times["torch._dynamo loaded"]
            print(f"{'':<24} torch._dynamo loaded: {'yes' if all(dynamo) else 'no'}")
        else:
            print(f"{'':<24} imports torch: {'yes' if True in sample.torch else 'no'}")
    base = statistics.median(samples["plain pytest"].times["whole run"])
    for label, target in (("collect 800", 1.0), ("oracle 12", 2.0)):
        mine = statistics.median(samples[label].times["whole run"])
        print(f"{label}: plain pytest + {mine - base:.2f} s (target: + {target:.0f} s)")
    plain = statistics.median(samples["import torch_geometric"].times["import"])
    ours = statistics.median(samples["gcn_backend.load()"].times["import"])
    torch_only = statistics.median(samples["import torch"].times["import"])
    print(f"D3's GPU backend import (paid only with --gi-d3-device=cuda/auto; the CPU trains "
          f"in NumPy): {ours:.2f} s instead of {plain:.2f} s ({plain - ours:.2f} s of "
          f"torch._dynamo avoided); torch alone {torch_only:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
