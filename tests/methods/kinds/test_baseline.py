"""One-call methods (methods/kinds/baseline.py): ``baseline`` and the :class:`OneCall` shape
``constrained`` shares — one call per sample, no chain, no settings."""

from __future__ import annotations

import pytest

from pytest_graphinstruct.methods.kinds.baseline import BASELINE, OneCall
from pytest_graphinstruct.methods.spec import MethodContext, MethodSpec

CONTEXT = MethodContext(chains=3, rounds=2, feedback="fine", temperature=0.4,
                        model_tiers=(("m", "T1"),))


def test_the_baseline_is_one_call_and_not_selectable_by_name() -> None:
    assert BASELINE.name == "baseline"
    assert (BASELINE.selectable, BASELINE.iterative, BASELINE.feedback, BASELINE.caap,
            BASELINE.constrained) == (False, False, False, False, False)


def test_a_one_call_method_has_no_settings_whatever_the_run() -> None:
    spec = MethodSpec("baseline", "baseline")
    assert BASELINE.settings(spec, CONTEXT) == {}


def test_a_one_call_method_has_no_chain() -> None:
    spec = MethodSpec("baseline", "baseline")
    with pytest.raises(ValueError, match=r"^not an iterative method: 'baseline'$"):
        BASELINE.chain(spec, None, (), None, None,  # type: ignore[arg-type]
                       chain=0, context=CONTEXT)


def test_one_call_keeps_its_own_name_and_flags() -> None:
    method = OneCall("x", selectable=True, constrained=True)
    assert (method.name, method.selectable, method.constrained, method.iterative) == \
        ("x", True, True, False)
    assert OneCall("y", selectable=False).constrained is False
    assert BASELINE.constrained is False  # another instance's flags are its own
