"""The D3 device's names and their resolution (score/gcn_device.py)."""

from __future__ import annotations

import pytest

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


def test_auto_is_cuda_only_where_torch_sees_a_gpu() -> None:
    torch = pytest.importorskip("torch")
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
