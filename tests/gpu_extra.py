"""Tests of D3's GPU path need torch and torch_geometric, which only the ``[gpu]`` extra installs
(``pip install -c ci/constraints.txt -e '.[test,gpu]'``): the default install and the README's
test command have neither.

A test that needs them carries the ``torch`` marker (``tests/conftest.py`` calls
:func:`require_torch` before it runs); a module that needs them throughout calls
:func:`require_torch` at its top as well.  Without them the test skips saying so; with
``GI_REQUIRE_TORCH=1`` (as ``.ci/run`` sets it for ``pytest -m torch`` after installing the
extra) it fails instead, so that run can never pass by skipping.  Tests of what happens
*without* torch (the refusal of ``cuda`` naming the extra) carry no marker: they hide torch
themselves and run in both environments.
"""

from __future__ import annotations

import os

import pytest

REQUIRE_ENV = "GI_REQUIRE_TORCH"

_MISSING: list[str | None] = []


def missing() -> str | None:
    """Why torch and torch_geometric cannot be used here, or ``None`` when they can (imported as
    the GPU path imports them, once per process)."""
    if not _MISSING:
        from pytest_graphinstruct.score import gcn_backend
        from pytest_graphinstruct.score.gcn_device import GPU_EXTRA, import_failure

        try:
            gcn_backend.load()
        except ImportError as exc:
            _MISSING.append(f"needs torch and torch_geometric, the [gpu] extra "
                            f"({GPU_EXTRA}): {import_failure(exc)}")
        else:
            _MISSING.append(None)
    return _MISSING[0]


def require_torch() -> None:
    """Skip (at a module's top too) when torch or torch_geometric is missing; fail instead under
    ``GI_REQUIRE_TORCH=1``."""
    reason = missing()
    if reason is None:
        return
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but the test {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)
