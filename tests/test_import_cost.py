"""Who pays for torch: only a process that scores D3 (levels 3 and 4) imports torch and
torch_geometric, and even that one never loads ``torch._dynamo`` (score/gcn_backend.py).

Each check runs in a fresh process and reads its ``sys.modules`` at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fresh_python import fresh_python
from tests.plugin._suite import TREE4, write_suite

ROOT = Path(__file__).resolve().parent.parent
PINNED_REPORT = ROOT / "tests" / "plugin" / "pinned" / "oracle.json"
TORCH = ("torch", "torch_geometric", "torch._dynamo")

# The scoring side: what a process needs to verify and score items, never to write the report.
SCORING = ("pytest_graphinstruct.run.evaluate", "pytest_graphinstruct.verify.verifier",
           "pytest_graphinstruct.pools.cache", "pytest_graphinstruct.score.gcn_cpu",
           "pytest_graphinstruct.graphs.parse", "networkx", "scipy")

# A pytest plugin, loaded with -p, that writes which of the modules named by GI_PROBE_MODULES
# (default: TORCH) the session loaded, after its last hook (the report is written by then);
# under xdist each process writes its own file.
PROBE = f"""
import json, os, sys

import pytest

@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    name = os.environ.get("PYTEST_XDIST_WORKER", "controller")
    wanted = json.loads(os.environ.get("GI_PROBE_MODULES", "null")) or {TORCH!r}
    with open(os.path.join(os.environ["GI_PROBE_DIR"], name + ".json"), "w") as f:
        json.dump([m for m in wanted if m in sys.modules], f)
"""


def _cli_loaded(argvs: list[list[str]], cwd: Path) -> tuple[list[object], list[str]]:
    """Run ``python -m pytest_graphinstruct`` commands in one fresh process: their exit codes
    and which of :data:`TORCH` it loaded."""
    script = (
        "import json, sys\n"
        "from pytest_graphinstruct.__main__ import main\n"
        "codes = []\n"
        f"for argv in {argvs!r}:\n"
        "    try:\n"
        "        codes.append(main(argv))\n"
        "    except SystemExit as exc:\n"
        "        codes.append(exc.code)\n"
        f"print(json.dumps([codes, [m for m in {TORCH!r} if m in sys.modules]]))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, cwd=cwd).stdout.strip().splitlines()
    codes, loaded = json.loads(out[-1])
    return codes, loaded


def _plugin_run_loaded(tmp_path: Path, *args: str, modules: tuple[str, ...] = TORCH
                       ) -> tuple[subprocess.CompletedProcess[str], dict[str, list[str]]]:
    """A pytest run of the plugin in ``tmp_path``: the finished process and, per process of
    the run, which of ``modules`` it loaded."""
    (tmp_path / "gi_probe.py").write_text(PROBE, encoding="utf-8")
    probes = tmp_path / "probes"
    probes.mkdir()
    # not this process's xdist identity (PYTEST_XDIST_WORKER …): the run names its own
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},
           "GI_PROBE_DIR": str(probes), "GI_PROBE_MODULES": json.dumps(modules),
           "PYTHONPATH": f"{tmp_path}:{ROOT}"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "gi_probe",
                           "-p", "no:cacheprovider", "-p", "no:randomly", *args],
                          capture_output=True, text=True, check=False, cwd=tmp_path, env=env)
    return proc, {p.stem: json.loads(p.read_text(encoding="utf-8"))
                  for p in probes.glob("*.json")}


def test_report_commands_never_import_torch(tmp_path: Path) -> None:
    report = str(PINNED_REPORT)
    (tmp_path / "store").mkdir()
    codes, loaded = _cli_loaded([
        ["score", "--help"],
        ["gate", report, "--baseline", report],
        ["html", report, "--out", str(tmp_path / "r.html")],
        ["runs", "compare", report, report],
        ["show", "L1-001", "--report", report],
        ["plan", report],
        ["analyze", "tier-gap", report],
        ["analyze", "leaderboard", report],
        ["runs", "list", "--store", str(tmp_path / "store")],
    ], tmp_path)
    assert codes == [0] * 9
    assert (tmp_path / "r.html").stat().st_size > 0
    assert loaded == []


@pytest.mark.slow  # a whole scoring run in a subprocess
def test_score_without_d3_levels_never_imports_torch(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"instruction_id": "L1-001", "level": 1, "samples": [
        {"raw_output": TREE4, "input_tokens": 5, "output_tokens": 5, "api_calls": 1}]}) + "\n",
        encoding="utf-8")
    codes, loaded = _cli_loaded([["score", "--suite", str(suite), "--responses", str(answers),
                                  "--report", str(tmp_path / "report.json")]], tmp_path)
    assert codes == [0]
    assert loaded == []


@pytest.mark.slow  # pytest runs in subprocesses
def test_a_run_of_levels_0_to_2_never_imports_torch(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    proc, loaded = _plugin_run_loaded(tmp_path, "--gi-model=oracle", f"--gi-suite={suite}",
                                      "--gi-levels=0,1,2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert loaded == {"controller": []}


@pytest.mark.slow  # pytest runs in subprocesses, two xdist workers
def test_xdist_workers_of_levels_0_to_2_never_import_torch(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    proc, loaded = _plugin_run_loaded(tmp_path, "-n", "2", "--gi-model=oracle",
                                      f"--gi-suite={suite}", "--gi-levels=0,1,2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert loaded == {"controller": [], "gw0": [], "gw1": []}


@pytest.mark.slow  # pytest runs in subprocesses, two xdist workers
@pytest.mark.parametrize("shipped", [False, True], ids=["levels-0-1", "shipped-with-level-5"])
def test_the_xdist_controller_never_loads_the_scoring_side(tmp_path: Path,
                                                           shipped: bool) -> None:
    # The controller only merges the workers' results and writes the report: importing the
    # parser, the verifier, the pools and D1-D5 (networkx and SciPy among them, ~0.6 s) would
    # delay the workers' spawn or come after they finished, on the run's critical path.  Its
    # suite's L5 base graphs are parsed only where used (Instruction.base), not at its load.
    args = ([f"--gi-suite={ROOT / 'instructions'}", "--gi-levels=1,5", "--gi-per-level=2"]
            if shipped else [f"--gi-suite={write_suite(tmp_path / 'suite')}", "--gi-levels=0,1"])
    proc, loaded = _plugin_run_loaded(tmp_path, "-n", "2", "--gi-model=oracle", *args,
                                      "--gi-report=report.json", modules=SCORING)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "report.json").is_file()
    assert loaded["controller"] == []
    assert loaded["gw0"] == list(SCORING) == loaded["gw1"]  # the probe sees them


@pytest.mark.slow  # pytest runs in subprocesses
def test_a_run_of_level_3_on_the_cpu_imports_no_torch(tmp_path: Path) -> None:
    # D3's GCNs train in NumPy on the CPU (score/gcn_cpu.py); torch is the GPU's only
    proc, loaded = _plugin_run_loaded(tmp_path, "--gi-model=oracle",
                                      f"--gi-suite={ROOT / 'instructions'}", "--gi-levels=3",
                                      "--gi-per-level=1", "--gi-pools=none")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout
    assert loaded == {"controller": []}


def test_the_plugins_entry_point_never_imports_scipy_stats_or_torch() -> None:
    # What every process of a run imports before its first item (pytest_configure loads the
    # entry point and builds the run's state); an xdist controller starts its workers only
    # after that, so whatever it costs delays the whole run.  scipy.stats takes 0.3-1 s.
    code = ("import sys\nimport pytest_graphinstruct.pytest_run.entry\n"
            "import pytest_graphinstruct.pytest_run.state\n"
            "import pytest_graphinstruct.run.gate.verdict\n"
            "print(sorted(m for m in ('scipy.stats', 'torch', 'torch_geometric') "
            "if m in sys.modules))")
    out = fresh_python(code, cwd=ROOT)
    assert out == "[]"


def test_a_run_without_a_baseline_plans_it_without_numpy() -> None:
    # RunState plans the run's baseline when pytest configures (an xdist controller before it
    # spawns its workers): without --gi-baseline nothing is read, and the comparison and the
    # regression tests behind the verdict (NumPy, ~0.1 s) wait for the end of the run.
    code = ("import sys\nimport pytest_graphinstruct.pytest_run.entry\n"
            "import pytest_graphinstruct.pytest_run.state\n"
            "from pytest_graphinstruct.run.gate.plan import GateOptions, plan_baseline\n"
            "plan = plan_baseline(GateOptions(), ['oracle-zero-shot'])\n"
            "assert plan.expected_failures() == set()\n"
            "print(sorted(m for m in ('numpy', 'scipy', 'pytest_graphinstruct.run.gate.verdict')"
            " if m in sys.modules))")
    out = fresh_python(code, cwd=ROOT)
    assert out == "[]"


def test_the_preflight_of_an_oracle_run_loads_no_verifier(tmp_path: Path) -> None:
    # The xdist controller runs the preflight before it spawns its workers: the verifier
    # (networkx, scipy's sparse graphs; ~0.3 s) is the workers' to load, not the controller's.
    code = ("import sys\nfrom pathlib import Path\n"
            "from pytest_graphinstruct.run.config import build_run_config\n"
            "from pytest_graphinstruct.run.preflight import preflight\n"
            "run = build_run_config({'model': 'oracle', 'no_cache': True}, "
            f"rootdir=Path({str(ROOT)!r}))\n"
            "assert len(preflight(run, pools=False).suite) == 800\n"
            "print(sorted(m for m in sys.modules if m.startswith('pytest_graphinstruct.verify.')"
            " and m.rsplit('.', 1)[1] in ('verifier', 'checks', 'properties')))")
    out = fresh_python(code, cwd=tmp_path)
    assert out == "[]"


def test_the_preflight_of_the_scoring_process_reads_the_pools(tmp_path: Path) -> None:
    from pytest_graphinstruct.run.config import build_run_config
    from pytest_graphinstruct.run.preflight import preflight

    run = build_run_config({"model": "oracle", "no_cache": True}, rootdir=ROOT)
    assert preflight(run).pools is not None
    assert preflight(run, pools=False).pools is None
    only_l0 = build_run_config({"model": "oracle", "no_cache": True, "levels": "0"},
                               rootdir=ROOT)
    assert preflight(only_l0).pools is None  # no level that needs them
