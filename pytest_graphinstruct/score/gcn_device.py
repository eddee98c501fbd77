"""Which device D3's GCNs train on: the names a user may ask for and their resolution.

Kept apart from :mod:`.gcn` (which imports the trainers and SciPy) so that a process that only
records the device — the xdist controller writing the report — imports nothing heavy; only a
GPU device imports torch (:mod:`.gcn_torch`).
"""

from __future__ import annotations

from pytest_graphinstruct.errors import GraphInstructError

DEVICES = ("cpu", "cuda", "auto")


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
        raise GcnDeviceError(f"D3 on cuda needs torch and torch_geometric: {exc}") from None
    if torch.cuda.is_available():
        return "cuda"
    if device == "auto":
        return "cpu"
    raise GcnDeviceError(
        f"D3 on cuda: CUDA is not available to torch {torch.__version__} "
        f"({'no GPU visible' if torch.version.cuda else 'a CPU-only build'}); "
        "use --gi-d3-device=cpu or auto")
