"""``caap`` (methods/kinds/caap.py): one call per sample of the prompt CAAP chooses — no chain;
its settings name the packaged table and the user's tiers."""

from __future__ import annotations

import pytest

from pytest_graphinstruct.methods.kinds.caap import CAAP, Caap
from pytest_graphinstruct.methods.registry import method_of, parse_method
from pytest_graphinstruct.methods.spec import MethodContext, MethodSpec

SPEC = MethodSpec("caap", "caap")


def test_flags() -> None:
    assert CAAP.name == "caap"
    assert (CAAP.selectable, CAAP.iterative, CAAP.feedback, CAAP.caap, CAAP.constrained) == \
        (True, False, False, True, False)


def test_the_option_caap_names_this_method() -> None:
    assert method_of(parse_method("caap")) is CAAP


@pytest.mark.parametrize("spec", [SPEC, MethodSpec("caap-as-written", "caap")])
def test_caap_has_no_chain_and_says_so_by_the_spec_as_written(spec: MethodSpec) -> None:
    context = MethodContext(chains=3, rounds=3, feedback="fine")
    with pytest.raises(ValueError, match=rf"^not an iterative method: '{spec.text}'$"):
        CAAP.chain(spec, None, (), None, None,  # type: ignore[arg-type]
                   chain=0, context=context)


@pytest.mark.parametrize(("tiers", "expected"), [
    ((), {}),
    ((("m", "T1"),), {"m": "T1"}),
    ((("m", "T1"), ("gpt-4o", "T3")), {"m": "T1", "gpt-4o": "T3"}),
])
def test_settings_are_chains_the_packaged_table_and_the_users_tiers(
        tiers: tuple[tuple[str, str], ...], expected: dict[str, str]) -> None:
    context = MethodContext(chains=4, rounds=2, feedback="coarse", temperature=0.3,
                            model_tiers=tiers)
    assert CAAP.settings(SPEC, context) == {"chains": 4, "caap_table": "packaged",
                                            "model_tiers": expected}


def test_settings_ignore_rounds_feedback_and_temperature() -> None:
    """CAAP makes one call per sample: the iterative knobs are not part of its cell."""
    a = MethodContext(chains=2, rounds=0, feedback="none", temperature=None)
    b = MethodContext(chains=2, rounds=9, feedback="fine", temperature=1.2)
    assert CAAP.settings(SPEC, a) == CAAP.settings(MethodSpec("caap@T9", "caap", "fine", 9), b)


def test_settings_hand_out_a_fresh_tier_mapping() -> None:
    context = MethodContext(chains=1, rounds=1, feedback="fine", model_tiers=(("m", "T1"),))
    first = CAAP.settings(SPEC, context)["model_tiers"]
    assert isinstance(first, dict)
    first["m"] = "T3"
    assert CAAP.settings(SPEC, context)["model_tiers"] == {"m": "T1"}


def test_a_later_tier_for_the_same_model_wins() -> None:
    context = MethodContext(chains=1, rounds=1, feedback="fine",
                            model_tiers=(("m", "T1"), ("m", "T2-open")))
    assert Caap().settings(SPEC, context)["model_tiers"] == {"m": "T2-open"}
