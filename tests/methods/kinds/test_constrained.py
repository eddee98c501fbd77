"""``constrained`` (methods/kinds/constrained.py): the baseline's one call per sample with the
answer format enforced by the endpoint — a cell method, never an option."""

from __future__ import annotations

import pytest

from pytest_graphinstruct.methods.kinds.baseline import BASELINE, OneCall
from pytest_graphinstruct.methods.kinds.constrained import CONSTRAINED
from pytest_graphinstruct.methods.registry import CONSTRAINED_METHOD, method_of, parse_method
from pytest_graphinstruct.methods.spec import MethodContext, MethodSpec

SPEC = MethodSpec("constrained", "constrained")


def test_constrained_is_a_one_call_method_that_constrains() -> None:
    assert isinstance(CONSTRAINED, OneCall) and CONSTRAINED is not BASELINE
    assert CONSTRAINED.name == "constrained" == CONSTRAINED_METHOD
    assert (CONSTRAINED.selectable, CONSTRAINED.iterative, CONSTRAINED.feedback,
            CONSTRAINED.caap, CONSTRAINED.constrained) == (False, False, False, False, True)


def test_only_the_internal_parse_reaches_it() -> None:
    assert method_of(parse_method("constrained", internal=True)) is CONSTRAINED


def test_constrained_has_no_chain() -> None:
    context = MethodContext(chains=3, rounds=3, feedback="fine")
    with pytest.raises(ValueError, match=r"^not an iterative method: 'constrained'$"):
        CONSTRAINED.chain(SPEC, None, (), None, None,  # type: ignore[arg-type]
                          chain=0, context=context)


def test_constrained_has_no_settings_whatever_the_run() -> None:
    """The cell's constraint comes from ``--gi-constrained``, not from method settings."""
    for context in (MethodContext(chains=1, rounds=0, feedback="none"),
                    MethodContext(chains=5, rounds=4, feedback="fine", temperature=0.9,
                                  model_tiers=(("m", "T1"),))):
        assert CONSTRAINED.settings(SPEC, context) == {}
