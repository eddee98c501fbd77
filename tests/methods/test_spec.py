"""MethodSpec and MethodContext: what a method string holds, what the run lends."""

from __future__ import annotations

from pytest_graphinstruct.methods.registry import method_of, parse_method
from pytest_graphinstruct.methods.spec import MethodContext, MethodSpec

CONTEXT = MethodContext(chains=2, rounds=3, feedback="coarse", temperature=None,
                        model_tiers=(("m", "T3"),))


def test_a_spec_names_wins_over_the_runs_defaults() -> None:
    assert CONTEXT.rounds_of(MethodSpec("vgig@T1", "vgig", None, 1)) == 1
    assert CONTEXT.rounds_of(MethodSpec("vgig", "vgig")) == 3
    assert CONTEXT.feedback_of(MethodSpec("vgig-fine", "vgig", "fine")) == "fine"
    assert CONTEXT.feedback_of(MethodSpec("vgig", "vgig")) == "coarse"


def test_each_method_reports_its_settings_in_the_reports_key_order() -> None:
    def settings(text: str) -> dict[str, object]:
        spec = parse_method(text, internal=True)
        return dict(method_of(spec).settings(spec, CONTEXT))

    assert settings("baseline") == settings("constrained") == {}
    assert list(settings("vgig-fine@T2").items()) == [
        ("chains", 2), ("rounds", 2), ("temperature", 0.7), ("feedback", "fine")]
    assert list(settings("combined")) == ["chains", "rounds", "temperature", "feedback",
                                          "caap_table", "model_tiers"]
    assert settings("combined")["model_tiers"] == {"m": "T3"}
    assert list(settings("retry")) == ["chains", "rounds", "temperature"]
    assert settings("sc@T4")["samples_per_chain"] == 5
    assert settings("caap") == {"chains": 2, "caap_table": "packaged",
                                "model_tiers": {"m": "T3"}}
