"""ScoreDetails: the item's ``details`` record, in a module that imports nothing heavy."""

from __future__ import annotations

from dataclasses import fields

from pytest_graphinstruct.score.details import ScoreDetails
from tests.fresh_python import fresh_python


def test_every_field_defaults_to_none_and_is_omitted_when_none() -> None:
    details = ScoreDetails()
    assert all(getattr(details, f.name) is None for f in fields(ScoreDetails))
    assert all(f.metadata.get("omit_none") for f in fields(ScoreDetails))


def test_instruction_score_hands_out_the_same_class() -> None:
    from pytest_graphinstruct.score import instruction_score

    assert instruction_score.ScoreDetails is ScoreDetails


def test_importing_it_loads_no_scientific_library() -> None:
    code = ("import sys\nimport pytest_graphinstruct.score.details\n"
            "print(sorted(m for m in ('scipy', 'networkx', 'torch', 'numpy') if m in sys.modules))")
    out = fresh_python(code)
    assert out == "[]"
