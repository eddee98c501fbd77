"""ci/check_resolve.py: a pip report whose default install resolves torch or its CUDA stack is
refused naming each package; one without them passes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from tests.packaging import ROOT


def _checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_resolve",
                                                  ROOT / "ci" / "check_resolve.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _report(path: Path, names: list[str]) -> Path:
    path.write_text(json.dumps({"version": "1", "install": [
        {"metadata": {"name": n, "version": "1.0"}, "download_info": {"url": f"https://x/{n}"}}
        for n in names]}), encoding="utf-8")
    return path


def test_a_light_install_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    check = _checker()
    light = ["pytest-graphinstruct", "numpy", "scipy", "networkx", "torchvision-free-name"]
    assert check.main([str(_report(tmp_path / "ok.json", light))]) == 0
    assert "5 packages resolved, none of torch" in capsys.readouterr().out


def test_each_package_of_the_gpu_stack_is_named(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    check = _checker()
    heavy = ["numpy", "torch", "torch_geometric", "Triton", "nvidia-cublas", "cuda-bindings",
             "cuda.pathfinder"]
    assert check.main([str(_report(tmp_path / "bad.json", heavy))]) == 1
    err = capsys.readouterr().err
    for name in heavy[1:]:
        assert f"resolves {name}==1.0" in err
    assert "numpy" not in err
    assert "[gpu] extra" in err


def test_a_file_that_is_not_a_report_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="not a pip installation report"):
        _checker().main([str(tmp_path / "r.json")])
