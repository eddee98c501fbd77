"""The method protocol (methods/protocol.py): what every method of the registry provides, and
the error a one-call method's chain raises."""

from __future__ import annotations

import inspect

import pytest

from pytest_graphinstruct.methods.protocol import Method, not_iterative
from pytest_graphinstruct.methods.registry import REGISTRY
from pytest_graphinstruct.methods.spec import MethodContext, MethodSpec

FLAGS = ("selectable", "iterative", "feedback", "caap", "constrained")


def test_not_iterative_names_the_method_as_written() -> None:
    err = not_iterative(MethodSpec("vgig-fine@T2", "vgig", "fine", 2))
    assert isinstance(err, ValueError)
    assert str(err) == "not an iterative method: 'vgig-fine@T2'"


def test_the_protocols_members() -> None:
    members = {n for n, _ in inspect.getmembers(Method) if not n.startswith("_")}
    assert members == {"name", *FLAGS, "chain", "settings"}


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_registered_method_provides_the_protocol(name: str) -> None:
    method = REGISTRY[name]
    assert method.name == name
    assert all(isinstance(getattr(method, flag), bool) for flag in FLAGS)
    assert list(inspect.signature(method.chain).parameters) == [
        "spec", "instruction", "prompt", "ask", "grade", "chain", "context"]
    spec = MethodSpec(name, name)
    settings = method.settings(spec, MethodContext(chains=2, rounds=1, feedback="fine"))
    assert all(isinstance(k, str) for k in settings)
    if not method.iterative:  # a one-call method has no chain
        with pytest.raises(ValueError, match=f"^not an iterative method: '{name}'$"):
            method.chain(spec, None, (), None, None,  # type: ignore[arg-type]
                         chain=0, context=MethodContext(chains=1, rounds=1, feedback="fine"))
