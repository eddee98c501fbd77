"""``combined`` (methods/kinds/combined.py): VGIG over CAAP's prompt, its feedback the run's."""

from __future__ import annotations

from pytest_graphinstruct.methods.kinds.combined import COMBINED
from pytest_graphinstruct.methods.kinds.vgig import VGIG, Vgig
from pytest_graphinstruct.methods.spec import MethodContext, MethodSpec


def test_combined_is_vgig_with_caap_and_no_feedback_in_its_name() -> None:
    assert isinstance(COMBINED, Vgig) and COMBINED is not VGIG
    assert COMBINED.name == "combined"
    assert (COMBINED.selectable, COMBINED.iterative, COMBINED.caap, COMBINED.feedback,
            COMBINED.constrained) == (True, True, True, False, False)


def test_its_settings_add_the_caap_table_and_the_users_tiers() -> None:
    context = MethodContext(chains=2, rounds=3, feedback="coarse", temperature=None,
                            model_tiers=(("m", "T1"), ("n", "T3")))
    assert COMBINED.settings(MethodSpec("combined@T1", "combined", None, 1), context) == {
        "chains": 2, "rounds": 1, "temperature": 0.7, "feedback": "coarse",
        "caap_table": "packaged", "model_tiers": {"m": "T1", "n": "T3"}}
