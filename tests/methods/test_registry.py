"""The method registry and the one parser of method strings."""

from __future__ import annotations

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.methods.registry import (
    CONSTRAINED_METHOD,
    ITERATIVE,
    REGISTRY,
    SELECTABLE,
    method_of,
    parse_method,
)
from pytest_graphinstruct.methods.spec import MethodSpec
from pytest_graphinstruct.vocab import METHODS


def test_the_registry_names_every_method_once_in_option_order() -> None:
    assert SELECTABLE == METHODS
    assert ITERATIVE == ("vgig", "retry", "sc", "combined")
    assert all(name == m.name for name, m in REGISTRY.items())
    assert {m.name for m in REGISTRY.values() if m.caap} == {"caap", "combined"}
    assert [m.name for m in REGISTRY.values() if m.constrained] == [CONSTRAINED_METHOD]
    assert CONSTRAINED_METHOD == "constrained" and CONSTRAINED_METHOD not in SELECTABLE


@pytest.mark.parametrize(("text", "spec"), [
    ("none", MethodSpec("baseline", "baseline")),
    ("baseline", MethodSpec("baseline", "baseline")),
    ("vgig", MethodSpec("vgig", "vgig")),
    ("vgig-coarse", MethodSpec("vgig-coarse", "vgig", "coarse")),
    ("vgig-fine@T2", MethodSpec("vgig-fine@T2", "vgig", "fine", 2)),
    ("sc@T0", MethodSpec("sc@T0", "sc", None, 0)),
    ("combined@T5", MethodSpec("combined@T5", "combined", None, 5)),
    ("caap", MethodSpec("caap", "caap")),
])
def test_a_method_string_parses_into_its_spec(text: str, spec: MethodSpec) -> None:
    assert parse_method(text) == spec
    assert method_of(spec).name == spec.base


def test_constrained_is_a_cell_method_but_not_an_option() -> None:
    assert parse_method("constrained", internal=True) == MethodSpec("constrained",
                                                                    "constrained")
    with pytest.raises(GraphInstructError, match="unknown --gi-method 'constrained'"):
        parse_method("constrained")


UNKNOWN = ("unknown --gi-method {!r} (choose from none, vgig, retry, sc, caap, combined, or "
           "vgig-<feedback> with feedback none/coarse/fine; an iterative method may end in "
           "@T<rounds>)")
ROUNDS = ("--gi-method {!r}: only vgig, retry, sc, combined take rounds, written @T<0..50> "
          "(e.g. vgig-fine@T2)")


@pytest.mark.parametrize(("text", "message"), [
    ("vgig-bogus", UNKNOWN), ("retry-fine", UNKNOWN), ("combined-fine", UNKNOWN),
    ("baseline@T2", UNKNOWN), ("@T2", UNKNOWN), ("nope", UNKNOWN),
    ("caap@T2", ROUNDS), ("vgig@T", ROUNDS), ("vgig@Tx", ROUNDS), ("vgig@T51", ROUNDS),
    ("vgig@T²", ROUNDS), ("vgig-fine@T2@T3", ROUNDS),
])
def test_a_bad_method_string_gets_the_one_line_error(text: str, message: str) -> None:
    with pytest.raises(GraphInstructError) as err:
        parse_method(text)
    assert str(err.value) == message.format(text)

