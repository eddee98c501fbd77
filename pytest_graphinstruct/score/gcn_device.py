"""Which device D3's GCNs train on: the names a user may ask for and their resolution.

Kept apart from :mod:`.gcn` (which imports the trainers and SciPy) so that a process that only
records the device — the xdist controller writing the report — imports nothing heavy; only a
GPU device imports torch (:mod:`.gcn_torch`).  torch and torch_geometric are not dependencies of
the default install: they come with the ``[gpu]`` extra (:data:`GPU_EXTRA`), and ``cuda``
without them is refused in one line that names it; ``auto`` without them is ``cpu``.
"""

from __future__ import annotations

from pytest_graphinstruct.errors import GraphInstructError

DEVICES = ("cpu", "cuda", "auto")

GPU_EXTRA = "pip install 'pytest-graphinstruct[gpu]'"
"""What installs the GPU path's torch and torch_geometric (pyproject.toml's ``gpu`` extra)."""

_GPU_MODULES = ("torch", "torch_geometric")


class GcnDeviceError(GraphInstructError, RuntimeError):
    """The device asked for cannot train (``cuda`` without CUDA, an unknown name)."""


def resolve_device(device: str) -> str:
    """``"cpu"`` or ``"cuda"`` for :attr:`.gcn.GcnConfig.device` (``"auto"`` looks for CUDA;
    only a GPU device imports torch).

    Raises:
        GcnDeviceError: ``device`` is unknown, or ``"cuda"`` and CUDA is not usable.
    """
    if device not in DEVICES:
        raise GcnDeviceError(f"unknown D3 device {device!r} (choose from {', '.join(DEVICES)})")
    if device == "cpu":
        return "cpu"
    from pytest_graphinstruct.score import gcn_torch

    try:
        torch, _ = gcn_torch.backend()
    except ImportError as exc:
        if device == "auto":
            return "cpu"
        raise GcnDeviceError(
            f"D3 on cuda needs the [gpu] extra: {GPU_EXTRA} ({import_failure(exc)})") from None
    if torch.cuda.is_available():
        return "cuda"
    if device == "auto":
        return "cpu"
    raise GcnDeviceError(
        f"D3 on cuda: CUDA is not available to torch {torch.__version__} "
        f"({'no GPU visible' if torch.version.cuda else 'a CPU-only build'}); "
        "use --gi-d3-device=cpu or auto")


def import_failure(exc: ImportError) -> str:
    """What failed to import, in a few words: ``torch is not installed``, or the error's first
    line where torch or torch_geometric is there but does not import."""
    missing = (exc.name or "").partition(".")[0]
    if isinstance(exc, ModuleNotFoundError) and missing in _GPU_MODULES:
        return f"{missing} is not installed"
    first = (str(exc).splitlines() or [type(exc).__name__])[0]
    return f"torch or torch_geometric does not import: {first}"
