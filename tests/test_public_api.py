"""The public API (issue 33 §2): ``pytest_graphinstruct.__all__`` names the few things users
need, each resolves to the object its module defines, and importing the package (as pytest does
for the plugin) loads none of them."""

from __future__ import annotations

import importlib

import pytest_graphinstruct as gi
from tests.fresh_python import fresh_python
from tests.packaging import ROOT


def test_all_names_the_public_table() -> None:
    assert gi.__all__ == sorted(["__version__", "strategies", *gi._PUBLIC])
    assert set(dir(gi)) >= set(gi.__all__)


def test_every_public_name_is_its_modules_object() -> None:
    for name, module in gi._PUBLIC.items():
        assert getattr(gi, name) is getattr(importlib.import_module(module), name), name
    assert gi.strategies is importlib.import_module("pytest_graphinstruct.strategies")


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        gi.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")


def test_importing_the_package_loads_nothing_heavy() -> None:
    code = ("import sys, pytest_graphinstruct as gi; gi.__version__; "
            "print(sorted(m for m in ('numpy', 'networkx', 'torch', 'scipy', 'openai') "
            "if m in sys.modules))")
    out = fresh_python(code, cwd=ROOT, timeout=120)
    assert out == "[]"
