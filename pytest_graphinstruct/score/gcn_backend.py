"""D3's GCN backend: torch and torch_geometric's ``gcn_norm``, imported without ``torch._dynamo``.

``import torch_geometric`` runs ``torch_geometric/isinstance.py``, whose module body says
``import torch._dynamo`` (for ``is_torch_instance``, which looks up
``torch._dynamo.OptimizedModule`` only when called).  Loading ``torch._dynamo`` — torch.compile's
tracer, about a hundred modules — costs about as much as torch itself (1.5–3 s), and the GCN never
uses it: its training is plain eager torch.

While torch_geometric imports, :func:`load` therefore puts a placeholder in
``sys.modules["torch._dynamo"]`` carrying the real module's spec: the import statement finds it
and is satisfied (it reads ``__spec__`` only), and torch_geometric keeps a reference to ``torch``,
not to the placeholder.  The placeholder is taken out again right after, so the process is then
exactly as if ``torch._dynamo`` had never been imported: the first later use of it
(``torch._dynamo.X`` through torch's own lazy attribute, ``torch.compile``, ``import
torch._dynamo``) imports the real module as usual.

The standard library's ``importlib.util.LazyLoader`` does not serve here: on Python 3.11 the
import statement reads the module's ``__spec__``, which a lazy module treats as a use, so the real
module loads at once.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import threading
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DYNAMO = "torch._dynamo"
_IMPORTING = threading.Lock()  # sys.modules is shared: one placeholder at a time


@dataclass(frozen=True)
class GcnBackend:
    """The modules the GCN trains with: ``torch`` and torch_geometric's ``gcn_norm``."""

    torch: Any
    gcn_norm: Callable[..., Any]


class Placeholder(types.ModuleType):
    """Stands for a module (here ``torch._dynamo``) in ``sys.modules`` without loading it.

    Made with the real module's spec, it satisfies an import statement, which reads only
    ``__spec__``.  Any other attribute — including ``__path__``, which a submodule import reads —
    imports the real module in its place and answers from it, so whoever uses it gets the real,
    fully loaded module.

    One limit: ``import torch._dynamo.x`` through the placeholder loads the real package, which
    may import ``x`` itself, and the import system then executes ``x`` a second time (it read
    ``__path__`` before looking for ``x``).  torch_geometric's import imports no submodule of
    ``torch._dynamo`` (tests/score/test_gcn_backend.py finds none loaded after :func:`load`).
    """

    def __init__(self, spec: importlib.machinery.ModuleSpec) -> None:
        super().__init__(spec.name)
        self.__spec__ = spec

    def __getattr__(self, name: str) -> object:
        module = self.__name__
        if sys.modules.get(module) is self:
            del sys.modules[module]
        return getattr(importlib.import_module(module), name)


def load() -> GcnBackend:
    """Import torch and torch_geometric (the whole package, as its users get it) and return the
    GCN's backend; ``torch._dynamo`` is not loaded by this unless it already was.

    Raises:
        ImportError: torch or torch_geometric cannot be imported.
    """
    import torch

    with _IMPORTING:
        placeholder = _placeholder()
        if placeholder is not None:
            sys.modules[DYNAMO] = placeholder
        try:
            # torch_geometric's import calls torch.jit.script, deprecated in this torch: the
            # warning is about the library, not the user's run, so it is not shown on the first
            # scored item.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                import torch_geometric  # noqa: F401  (the package itself must import)
                from torch_geometric.nn.conv.gcn_conv import gcn_norm
        finally:
            if placeholder is not None:
                if sys.modules.get(DYNAMO) is placeholder:
                    del sys.modules[DYNAMO]
                if torch.__dict__.get("_dynamo") is placeholder:
                    delattr(torch, "_dynamo")
    return GcnBackend(torch, gcn_norm)


def _placeholder() -> Placeholder | None:
    """A placeholder for ``torch._dynamo``, or ``None`` when none is needed or possible
    (torch_geometric or ``torch._dynamo`` already imported — or marked missing —, or this torch
    has no ``torch._dynamo``)."""
    if "torch_geometric" in sys.modules or DYNAMO in sys.modules:
        return None
    spec = importlib.util.find_spec(DYNAMO)
    if spec is None:
        return None
    return Placeholder(spec)
