"""The official references' report, pinned (issue 22: speed work changes no verdict, no score
and no report; issue 32: the pin holds on any machine).

The references as answers (``bench/reference_answers.py``: k samples cycling each instruction's
references, a refusal for an infeasible one) go through the one evaluation path (``check`` +
``score``: every verdict, D1–D5, the level scores; the project's pools) and the run report's
aggregation, in a child process (under ``PINNED_ENV`` where the CPU has AVX2).  The written
report must hold the pins in ``tests/run/score_digest.json``: every item's outcome, verdicts,
strings and integers exactly, its floats and the aggregates (summary, per-level rows, Pareto,
coverage) within the tolerances of ``tests/pinning.py``.  A failure names each item and field
that moved, expected vs observed, and leaves the report in the test's ``tmp_path``.

Why a tolerance and how large: the last digits of D3 (the GCN embedding score) follow the
numeric kernels the CPU or GPU runs.  Measured on the fast and full variants (``docs/SCORING.md``,
"Pinned scores"): an item's D3 moves by at most 9.1e-9 between this AMD EPYC's AVX-512, AVX2 and
generic kernels, 2.6e-9 between two CPUs, 1.2e-6 between a CPU and an H200 GPU; its GCN part by
6.7× as much; every aggregate by less than the items.  Nothing else moves: no outcome, verdict,
count or string, and every float outside D3 is the same to the last digit.  A per-item score may
move by 1e-5 (eight times the GPU spread; once allowed to a faster GCN), every aggregate derived
from it by what its formula passes on; a real scoring change moves something by far more.

To the last digit: the pins keep the report's sha256 with the machine that wrote it (CPU model
and flags, Python and numeric libraries' versions, kernel environment).  With
``GI_EXACT_DIGESTS=1`` the report must be that one byte for byte — on that machine only; on
another the check is skipped, saying what differs.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.reference_answers import (
    VARIANTS,
    ItemPin,
    Pins,
    Variant,
    kernel_env,
    machine,
    machine_differences,
    pinned,
    pins_text,
)
from pytest_graphinstruct.score.gcn_store import ENV as D3_CACHE_ENV
from tests.pinning import summarize

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "reference_answers.py"
EXACT_ENV = "GI_EXACT_DIGESTS"


def _write(name: str, suite_dir: Path, out: Path, *, store: Path | None = None) -> Path:
    """Run the script for variant ``name``; the path of the report it wrote under ``out``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # D3's GCN result store: off (conftest.py)
    if store is not None:
        env[D3_CACHE_ENV] = str(store)
    proc = subprocess.run([sys.executable, str(SCRIPT), "--variant", name, "--suite",
                           str(suite_dir), "--out", str(out)],
                          capture_output=True, text=True, check=False, timeout=1800, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out / f"{name}.json"


def _assert_as_pinned(name: str, path: Path) -> None:
    diffs = pinned(name).differences(path.read_text(encoding="utf-8"))
    assert not diffs, (f"the {name} reference report is not the pinned one (written to {path}; "
                       "if the change is meant, `python bench/reference_answers.py --write`):\n"
                       + summarize(diffs))


@pytest.fixture(scope="module")
def report_of(official_suite_dir: Path,
              tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """The report of a variant, written once per module (the tolerant and the exact test)."""
    written: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in written:
            written[name] = _write(name, official_suite_dir, tmp_path_factory.mktemp(name))
        return written[name]

    return get


@pytest.mark.official
def test_a_few_references_per_level_score_as_pinned(report_of: Callable[[str], Path]) -> None:
    """Two instructions per level (the first infeasible one, where a level has one), k = 2,
    D1 by its formula (no pools: their features take seconds to compute)."""
    assert VARIANTS["fast"] == Variant(2, 2, pools=False)
    _assert_as_pinned("fast", report_of("fast"))


@pytest.mark.slow
@pytest.mark.official
def test_the_official_references_score_as_pinned(report_of: Callable[[str], Path]) -> None:
    """All 800 instructions × k = 5, the project's pools: the 4,000 answers
    bench/score_bench.py times, scored as ``score`` scores them."""
    assert VARIANTS["full"] == Variant(None, 5, pools=True)
    _assert_as_pinned("full", report_of("full"))


@pytest.mark.official
def test_gcn_results_read_from_the_store_score_as_pinned(official_suite_dir: Path,
                                                         tmp_path: Path) -> None:
    """The fast variant twice with D3's GCN result store: once filling it, once reading it (a
    new process: nothing trained).  Both hold the pins, and the two reports are the same to
    the last digit: one machine, one kind of process, so reading a result is computing it."""
    store = tmp_path / "store"
    texts = []
    for run in ("fill", "read"):
        (tmp_path / run).mkdir()
        path = _write("fast", official_suite_dir, tmp_path / run, store=store)
        assert any(store.glob("gcn-*.jsonl"))
        _assert_as_pinned("fast", path)
        texts.append(path.read_text(encoding="utf-8"))
    assert texts[0] == texts[1], "the report read from the GCN store is not the computed one"


@pytest.mark.official
@pytest.mark.parametrize("name", ["fast", pytest.param("full", marks=pytest.mark.slow)])
def test_the_report_is_the_pinned_one_to_the_last_digit(
        name: str, report_of: Callable[[str], Path]) -> None:
    """Opt-in (``GI_EXACT_DIGESTS=1``), on the machine that wrote the pins: the report's
    sha256 is the pinned one; otherwise each float that moved at all is named."""
    if os.environ.get(EXACT_ENV) != "1":
        pytest.skip(f"the exact digests are an opt-in check ({EXACT_ENV}=1) on the machine "
                    "that wrote them")
    pins = pinned(name)
    other = machine_differences(pins.machine, machine({**os.environ, **kernel_env()}))
    if other:
        pytest.skip("the exact digests were written on another machine: " + "; ".join(other))
    path = report_of(name)
    text = path.read_text(encoding="utf-8")
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != pins.report:
        diffs = pins.differences(text, exact=True) or [
            "every value is the same: the report's bytes differ (formatting or key order)"]
        pytest.fail(f"the {name} reference report is not the pinned one to the last digit on "
                    f"the machine that wrote it (written to {path}):\n" + summarize(diffs))


#: a report with two items and an aggregate, for the unit tests of :class:`Pins`
REPORT = ('{"cells": [{"summary": {"s_total": 0.5, "items": 2}, "per_instruction": ['
          '{"instruction_id": "L0-001", "outcome": "passed", "valid_samples": 2, '
          '"dimension_scores": {"D1": 0.5, "D3": 0.25}, "details": {"d3": {"gcn": 0.75}}},'
          '{"instruction_id": "L3-001", "outcome": "failed", "valid_samples": 1, '
          '"dimension_scores": {"D1": 0.0, "D3": null}, "details": {}}]}]}')


def _pins() -> Pins:
    return Pins.of_text(REPORT, {"cpu": "test"})


def _report(*changes: tuple[str, str]) -> str:
    """:data:`REPORT` with each ``(old, new)`` replaced, first occurrence, in turn."""
    text = REPORT
    for old, new in changes:
        assert old in text
        text = text.replace(old, new, 1)
    return text


def test_the_report_the_pins_were_made_from_holds_them() -> None:
    pins = _pins()
    assert pins.differences(_report()) == []
    assert pins.differences(_report(), exact=True) == []
    assert pins.items["L0-001"] == ItemPin("passed", pins.items["L0-001"].shape,
                                           (0.5, 0.25, 0.75))


def test_floats_within_their_tolerance_hold_the_pins_and_not_to_the_last_digit() -> None:
    text = _report(('"D3": 0.25', '"D3": 0.250004'), ('0.75', '0.75006'),
                   ('"s_total": 0.5', '"s_total": 0.500009'))
    assert _pins().differences(text) == []
    assert _pins().differences(text, exact=True) == [
        "item L0-001 dimension_scores.D3: expected 0.25, observed 0.250004 (|Δ| 4e-06 > 0)",
        "item L0-001 details.d3.gcn: expected 0.75, observed 0.75006 (|Δ| 6e-05 > 0)",
        "aggregate cells[0].summary.s_total: expected 0.5, observed 0.500009 (|Δ| 9e-06 > 0)"]


def test_a_changed_outcome_integer_or_float_is_named() -> None:
    text = _report(('"outcome": "failed"', '"outcome": "passed"'),
                   ('"valid_samples": 2', '"valid_samples": 3'), ('"D1": 0.5', '"D1": 0.501'),
                   ('"items": 2', '"items": 3'))
    assert _pins().differences(text) == [
        "item L0-001: a verdict, string or integer differs (its floats are not compared)",
        "item L3-001 outcome: expected 'failed', observed 'passed'",
        "aggregate cells[0].summary.items: expected 2, observed 3"]
    assert _pins().differences(_report(('"D1": 0.5', '"D1": 0.501'))) == [
        "item L0-001 dimension_scores.D1: expected 0.5, observed 0.501 (|Δ| 0.001 > 1e-05)"]
    assert _pins().differences(_report(('0.75', '0.7503'))) == [
        "item L0-001 details.d3.gcn: expected 0.75, observed 0.7503 (|Δ| 0.0003 > 0.0001)"]


def test_a_missing_or_unpinned_item_is_named() -> None:
    text = _report(('"L3-001"', '"L3-002"'))
    assert _pins().differences(text) == ["item L3-001: missing", "item L3-002: not pinned"]


def test_the_pins_file_reads_back_as_written() -> None:
    pins = {"fast": _pins(), "full": _pins()}
    text = pins_text(pins)
    data = json.loads(text)
    assert {n: Pins.from_json(d) for n, d in data.items()} == pins
    assert '   "L0-001": {"outcome": "passed"' in text  # one line per item


def test_another_machine_is_told_apart() -> None:
    here = machine({})
    assert machine_differences(here, dict(here)) == []
    there = {**here, "cpu": "Other CPU", "cpu_flags": here["cpu_flags"] + " avx_test_flag"}
    assert machine_differences(there, here) == [
        f"cpu 'Other CPU' there, {here['cpu']!r} here", "CPU flags -avx_test_flag"]
