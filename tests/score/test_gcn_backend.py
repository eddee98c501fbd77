"""score.gcn_backend: torch and torch_geometric for the GCN, without torch._dynamo."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from pytest_graphinstruct.score.gcn_backend import Placeholder
from tests.fresh_python import fresh_python

ROOT = Path(__file__).resolve().parents[2]


def _fresh(code: str) -> object:
    """Run ``code`` in a fresh interpreter; it prints one JSON value last."""
    out = fresh_python(code, cwd=ROOT).splitlines()
    return json.loads(out[-1])


@pytest.mark.slow  # imports torch in a subprocess
@pytest.mark.torch
def test_the_gpu_backend_loads_torch_geometric_but_never_torch_dynamo() -> None:
    """A CPU training imports neither; the GPU's backend (what --gi-d3-device=cuda loads)
    imports torch_geometric without torch._dynamo."""
    loaded = _fresh(
        "import json, sys\n"
        "import numpy as np\n"
        "from pytest_graphinstruct.score import gcn, gcn_backend\n"
        "g = gcn.gcn_graph(np.ones((4, 4), bool) ^ np.eye(4, dtype=bool), np.eye(4))\n"
        "labels = np.array([0, 0, 1, 1])\n"
        "task = gcn.GcnTask(g, labels, np.arange(4), g, labels, np.arange(4), 2)\n"
        "gcn.soft_accuracies([task], gcn.GcnConfig(epochs=2))\n"
        "cpu = sorted(m for m in sys.modules if m in ('torch', 'torch_geometric'))\n"
        "gcn_backend.load()\n"
        "print(json.dumps([cpu, sorted(m for m in sys.modules if m == 'torch_geometric'\n"
        "                        or m.startswith('torch._dynamo'))]))\n")
    assert loaded == [[], ["torch_geometric"]]


@pytest.mark.slow  # imports torch._dynamo and compiles
@pytest.mark.torch
def test_torch_compile_and_torch_geometric_still_find_the_real_dynamo() -> None:
    result = _fresh(
        "import json, sys\n"
        "from pytest_graphinstruct.score import gcn_backend\n"
        "torch = gcn_backend.load().torch\n"
        "from torch_geometric.isinstance import is_torch_instance\n"
        "lin = torch.nn.Linear(2, 2)\n"
        "compiled = torch.compile(lin, backend='eager')\n"
        "same = torch.equal(compiled(torch.ones(1, 2)), lin(torch.ones(1, 2)))\n"
        "print(json.dumps([same, is_torch_instance(compiled, torch.nn.Linear),\n"
        "                  type(torch._dynamo).__name__,\n"
        "                  'torch._dynamo.eval_frame' in sys.modules]))\n")
    assert result == [True, True, "module", True]


@pytest.mark.slow  # imports torch in a subprocess
@pytest.mark.torch
def test_a_failed_import_leaves_no_placeholder_behind() -> None:
    result = _fresh(
        "import json, sys\n"
        "class Refuse:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch_geometric':\n"
        "            raise ImportError('refused')\n"
        "sys.meta_path.insert(0, Refuse())\n"
        "from pytest_graphinstruct.score import gcn, gcn_backend\n"
        "try:\n"
        "    gcn_backend.load()\n"
        "except ImportError as exc:\n"
        "    error = str(exc)\n"
        "import torch\n"
        "print(json.dumps([error, gcn.unavailable_reason('cuda'), gcn.unavailable_reason(),\n"
        "                  'torch._dynamo' in sys.modules, '_dynamo' in vars(torch)]))\n")
    assert result == ["refused", "D3 on cuda needs the [gpu] extra: pip install "
                      "'pytest-graphinstruct[gpu]' (torch or torch_geometric does not import: "
                      "refused)", None, False, False]


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> Placeholder:
    """A package ``name`` under ``tmp_path`` (``VALUE = 42``, a submodule ``sub``) stood for by
    a placeholder in ``sys.modules``."""
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text("VALUE = 42\n", encoding="utf-8")
    (tmp_path / name / "sub.py").write_text("SUB = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = importlib.util.find_spec(name)
    assert spec is not None
    placeholder = Placeholder(spec)
    monkeypatch.setitem(sys.modules, name, placeholder)
    return placeholder


def test_a_placeholder_satisfies_an_import_without_loading(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    placeholder = _package(tmp_path, monkeypatch, "gi_placeholder_a")
    import gi_placeholder_a  # type: ignore[import-not-found]

    assert gi_placeholder_a is placeholder
    assert "VALUE" not in vars(placeholder)


def test_using_a_placeholder_loads_the_real_module(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    placeholder = _package(tmp_path, monkeypatch, "gi_placeholder_b")
    assert placeholder.VALUE == 42  # type: ignore[attr-defined]
    real = sys.modules["gi_placeholder_b"]
    assert real is not placeholder and vars(real)["VALUE"] == 42


def test_a_submodule_import_through_a_placeholder_loads_the_real_package(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    placeholder = _package(tmp_path, monkeypatch, "gi_placeholder_c")
    from gi_placeholder_c import sub  # type: ignore[import-not-found]

    assert sub.SUB == 1
    real = sys.modules["gi_placeholder_c"]
    assert real is not placeholder and vars(real)["VALUE"] == 42
