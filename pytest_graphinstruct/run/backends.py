"""The backend of a model name, the oracle included.

The algorithmic oracle answers from the suite's own references, so it belongs to the run layer
(beside the session that owns the suite); every other name goes to
:func:`pytest_graphinstruct.models.registry.make_backend`.
"""

from __future__ import annotations

from typing import Any

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.base import Backend
from pytest_graphinstruct.suite.loader import Suite


def make_backend(model: str, *, suite: Suite | None = None, **options: Any) -> Backend:
    """``oracle`` → :class:`~pytest_graphinstruct.run.oracle.OracleBackend` over ``suite``;
    anything else → :func:`pytest_graphinstruct.models.registry.make_backend` with ``options``.

    Raises:
        ModelError: ``oracle`` without a suite, or whatever the model registry raises.
    """
    if (model or "").strip() == "oracle":
        if suite is None:
            raise ModelError("--gi-model=oracle needs a suite to take reference answers from")
        from pytest_graphinstruct.run.oracle import OracleBackend

        return OracleBackend(suite)
    from pytest_graphinstruct.models.registry import make_backend as model_backend

    return model_backend(model, **options)
