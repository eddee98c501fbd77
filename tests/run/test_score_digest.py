"""The official references' report, pinned to the last digit (issue 22: speed work changes no
verdict, no score and no report).

The references as answers (``bench/reference_answers.py``: k samples cycling each instruction's
references, a refusal for an infeasible one) go through the one evaluation path (``check`` +
``score``: every verdict, D1–D5, the level scores; the project's pools) and the run report's
aggregation, in a child process under ``PINNED_ENV``; the written report's sha256 must equal the
committed one in ``tests/run/score_digest.json``.  On a difference the test names the items
that changed and leaves the report in its ``tmp_path``.

Machine independence: the report's floats are ``repr`` (exact), its metadata names no path,
machine or version; D3's GCN trains on one torch thread and its spectra use one BLAS thread
(``score/gcn.py``, ``kernels/blas.py``).  The last digits still follow the CPU's instruction
set (AVX-512 and AVX2 kernels of OpenBLAS, MKL and torch differ by ~1e-16 to ~1e-10), so the
child holds every library to AVX2 (``bench/reference_answers.py``): the same digest under
``PYTHONHASHSEED`` 1 and 2 and one or two threads; skipped on a CPU without AVX2.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.reference_answers import VARIANTS, Digest, Variant, pinned, unpinnable_reason
from pytest_graphinstruct.score.gcn_store import ENV as D3_CACHE_ENV

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "reference_answers.py"


def _check(name: str, suite_dir: Path, tmp_path: Path, *, store: Path | None = None) -> None:
    reason = unpinnable_reason()
    if reason is not None:
        pytest.skip(reason)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # D3's GCN result store: off (conftest.py)
    if store is not None:
        env[D3_CACHE_ENV] = str(store)
    proc = subprocess.run([sys.executable, str(SCRIPT), "--variant", name, "--suite",
                           str(suite_dir), "--out", str(tmp_path)],
                          capture_output=True, text=True, check=False, timeout=1800, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    path = tmp_path / f"{name}.json"
    digest = Digest.of_text(path.read_text(encoding="utf-8"))
    expected = pinned(name)
    assert digest.report == expected.report, (
        f"the {name} reference report changed (written to {path}):\n"
        + "\n".join(digest.differences(expected)))


@pytest.mark.official
def test_a_few_references_per_level_score_as_pinned(official_suite_dir: Path,
                                                    tmp_path: Path) -> None:
    """Two instructions per level (the first infeasible one, where a level has one), k = 2,
    D1 by its formula (no pools: their features take seconds to compute)."""
    assert VARIANTS["fast"] == Variant(2, 2, pools=False)
    _check("fast", official_suite_dir, tmp_path)


@pytest.mark.slow
@pytest.mark.official
def test_the_official_references_score_as_pinned(official_suite_dir: Path,
                                                 tmp_path: Path) -> None:
    """All 800 instructions × k = 5, the project's pools: the 4,000 answers
    bench/score_bench.py times, scored as ``score`` scores them."""
    assert VARIANTS["full"] == Variant(None, 5, pools=True)
    _check("full", official_suite_dir, tmp_path)


@pytest.mark.official
def test_gcn_results_read_from_the_store_score_as_pinned(official_suite_dir: Path,
                                                         tmp_path: Path) -> None:
    """The fast variant twice with D3's GCN result store: once filling it, once reading it (a
    new process: nothing trained); both reports are the pinned one."""
    store = tmp_path / "store"
    for run in ("fill", "read"):
        (tmp_path / run).mkdir()
        _check("fast", official_suite_dir, tmp_path / run, store=store)
        assert any(store.glob("gcn-*.jsonl"))


def test_a_changed_item_is_named() -> None:
    pin = Digest("a" * 64, {"L0-001": "1" * 16, "L1-002": "2" * 16})
    assert Digest("b" * 64, {"L0-001": "1" * 16, "L1-002": "3" * 16}).differences(pin) == [
        "item L1-002 differs"]
    assert Digest("b" * 64, dict(pin.items)).differences(pin) == [
        "every item is the same: the summary, per-level rows or Pareto differ"]
    assert Digest("b" * 64, {"L0-001": "1" * 16}).differences(pin) == ["item L1-002 differs"]
