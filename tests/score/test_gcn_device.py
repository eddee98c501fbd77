"""The D3 device's names and their resolution (score/gcn_device.py)."""

from __future__ import annotations

import sys
import types

import pytest

from pytest_graphinstruct.score import gcn_backend
from pytest_graphinstruct.score.gcn_device import DEVICES, GcnDeviceError, resolve_device
from pytest_graphinstruct.vocab import D3_DEVICES
from tests.fresh_python import fresh_python


def test_the_names_are_the_options_choices() -> None:
    assert DEVICES == D3_DEVICES


def test_cpu_is_cpu_without_asking_torch() -> None:
    code = ("import sys\nfrom pytest_graphinstruct.score.gcn_device import resolve_device\n"
            "assert resolve_device('cpu') == 'cpu'\n"
            "print(sorted(m for m in ('torch', 'scipy', 'pytest_graphinstruct.score.gcn') "
            "if m in sys.modules))")
    out = fresh_python(code)
    assert out == "[]"


def test_an_unknown_device_is_refused() -> None:
    with pytest.raises(GcnDeviceError, match="unknown D3 device 'tpu'"):
        resolve_device("tpu")


@pytest.mark.torch
def test_auto_is_cuda_only_where_torch_sees_a_gpu() -> None:
    import torch

    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")


@pytest.mark.parametrize("missing", ["torch", "torch_geometric"])
def test_without_the_gpu_extra_cuda_is_refused_naming_it_and_auto_is_cpu(
        monkeypatch: pytest.MonkeyPatch, missing: str) -> None:
    # the same whether or not this environment has them: the default install has neither
    # module; a torch of its own without torch_geometric gets a stand-in torch
    monkeypatch.setitem(sys.modules, "torch_geometric", None)
    monkeypatch.setitem(sys.modules, "torch", None if missing == "torch"
                        else types.ModuleType("torch"))
    with pytest.raises(GcnDeviceError) as refused:
        resolve_device("cuda")
    assert str(refused.value) == (
        "D3 on cuda needs the [gpu] extra: pip install 'pytest-graphinstruct[gpu]' "
        f"({missing} is not installed)")
    assert resolve_device("auto") == "cpu"
    assert resolve_device("cpu") == "cpu"


def test_a_gpu_module_that_fails_to_import_is_named_in_one_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise ImportError("libcudart.so.13: cannot open shared object file\nmore detail")

    monkeypatch.setattr(gcn_backend, "load", broken)
    with pytest.raises(GcnDeviceError) as refused:
        resolve_device("cuda")
    assert str(refused.value) == (
        "D3 on cuda needs the [gpu] extra: pip install 'pytest-graphinstruct[gpu]' "
        "(torch or torch_geometric does not import: libcudart.so.13: cannot open shared "
        "object file)")
    assert resolve_device("auto") == "cpu"
