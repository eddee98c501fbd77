"""What an install pulls in (issue 49): the default install and the ``test`` extra (the README's
test command) name no torch, torch_geometric, triton, nvidia-* or cuda-* package — from the
public index torch is a CUDA build of about 3 GB that the default D3 (NumPy on the CPU) never
imports —, and the ``gpu`` extra holds what ``--gi-d3-device=cuda`` needs.  ``.ci/run`` also
checks what pip resolves for the built wheel from the public index (``ci/check_resolve.py``)."""

from __future__ import annotations

import re
import tomllib

from packaging.requirements import Requirement
from packaging.version import Version

from tests.packaging import ROOT

GPU_STACK = re.compile(r"^(torch|torch-geometric|triton|nvidia-.*|cuda-.*)$")


def _project() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _names(requirements: list[str]) -> list[str]:
    return [re.sub(r"[-_.]+", "-", Requirement(r).name).lower() for r in requirements]


def _extras() -> dict[str, list[str]]:
    extras = _project()["optional-dependencies"]
    assert isinstance(extras, dict)
    return extras


def test_the_default_install_and_the_test_extra_name_no_gpu_stack() -> None:
    base = _project()["dependencies"]
    assert isinstance(base, list)
    for where, requirements in (("dependencies", base), ("test", _extras()["test"])):
        names = _names(requirements)
        assert names, where
        assert [n for n in names if GPU_STACK.match(n)] == [], where
        for r in requirements:  # nor through an extra of a dependency (pkg[torch])
            assert not Requirement(r).extras & {"gpu", "torch", "cuda"}, (where, r)


def test_the_gpu_extra_holds_torch_and_torch_geometric() -> None:
    gpu = _extras()["gpu"]
    assert sorted(_names(gpu)) == ["torch", "torch-geometric"]
    torch = next(Requirement(r) for r in gpu if Requirement(r).name == "torch")
    assert torch.specifier.contains("2.13.0") and not torch.specifier.contains("3.0")


def test_lowest_pins_every_declared_lower_bound() -> None:
    # ci/lowest.txt: .ci/run installs '.[test,gpu]' on it, so the gpu extra's bounds too
    pins = {}
    for line in (ROOT / "ci" / "lowest.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[re.sub(r"[-_.]+", "-", name.strip()).lower()] = version.strip()
    base = _project()["dependencies"]
    assert isinstance(base, list)
    declared = [*base, *_extras()["gpu"]]
    lower = {}
    for r in declared:
        req = Requirement(r)
        bound = next(s.version for s in req.specifier if s.operator == ">=")
        lower[_names([r])[0]] = bound
    assert pins.keys() == lower.keys()
    # at the bound, or above it where lowest.txt gives the reason (matplotlib)
    assert [n for n in lower if Version(pins[n]) < Version(lower[n])] == []
