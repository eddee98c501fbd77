"""build/suite.py: writing a suite to disk, the manifest, other seeds, the CLI."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.build.suite import build_suite, level_json
from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.suite.loader import load_suite

ROOT = Path(__file__).resolve().parents[2]


def _committed(level: int) -> list[dict]:
    return json.loads((ROOT / "instructions" / f"level_{level}.json").read_text("utf-8"))


def test_another_seed_gives_a_fresh_suite_with_the_same_stratification(tmp_path: Path) -> None:
    manifest = build_suite(tmp_path, seed=5, levels=[0, 5], pools=False)
    assert manifest["seed"] == 5 and manifest["partial"]["levels"] == [0, 5]
    suite = load_suite(tmp_path / "instructions")
    assert len(suite) == 150 and not (tmp_path / "references").exists()
    for lv in (0, 5):
        fresh = json.loads((tmp_path / "instructions" / f"level_{lv}.json").read_text("utf-8"))
        old = _committed(lv)
        t_new, t_old = Counter(r["template"] for r in fresh), Counter(r["template"] for r in old)
        assert set(t_new) == set(t_old)  # the same templates, each used as often within one
        assert all(abs(t_new[t] - t_old[t]) <= 1 for t in t_old)
        same = sum(a["instruction"] == b["instruction"] for a, b in zip(fresh, old, strict=True))
        assert same <= len(old) // 10  # short L0 texts may coincide by chance
        buckets = Counter(r["graph_sizes"][0] for r in fresh)
        assert min(buckets[b] for b in ("small", "medium", "large")) >= 15
        info = manifest["levels"][str(lv)]
        assert info["instructions"] == len(fresh) and info["size_buckets"] == dict(buckets)


def test_l5_size_grows_level_five(tmp_path: Path) -> None:
    manifest = build_suite(tmp_path, levels=[5], l5_size=150, pools=False)
    assert manifest["levels"]["5"]["instructions"] == 150
    assert manifest["levels"]["5"]["size_buckets"] == {"small": 50, "medium": 50, "large": 50}
    with pytest.raises(GraphInstructError, match="l5-size"):
        build_suite(tmp_path, levels=[5], l5_size=1, pools=False)
    with pytest.raises(GraphInstructError, match="unknown level"):
        build_suite(tmp_path, levels=[7], pools=False)


def test_level_json_is_stable_text() -> None:
    recs = [{"id": "L0-001", "instruction": "Créez un graphe"}]
    assert level_json(recs) == (
        '[\n  {\n    "id": "L0-001",\n    "instruction": "Créez un graphe"\n  }\n]\n')


def test_cli_builds_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "suite", "--out", str(tmp_path), "--levels", "0", "--no-pools"]) == 0
    out = capsys.readouterr().out
    assert "level 0: 100 instructions" in out
    assert "built 100 instructions with 200 references" in out
    text = (tmp_path / "instructions" / "level_0.json").read_text("utf-8")
    assert text == (ROOT / "instructions" / "level_0.json").read_text("utf-8")
    assert main(["build", "suite", "--out", str(tmp_path), "--levels", "x"]) == 2
    assert "--levels" in capsys.readouterr().err
