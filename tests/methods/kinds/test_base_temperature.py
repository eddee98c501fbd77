"""The base temperature of the iterative methods (methods/kinds/base_temperature.py)."""

from __future__ import annotations

import pytest

from pytest_graphinstruct.methods.iterative import DEFAULT_TEMPERATURE
from pytest_graphinstruct.methods.kinds.base_temperature import base_temperature
from pytest_graphinstruct.methods.spec import MethodContext


@pytest.mark.parametrize(("run", "expected"), [(None, DEFAULT_TEMPERATURE), (0.0, 0.0),
                                               (0.3, 0.3), (1.5, 1.5)])
def test_the_runs_temperature_else_the_default(run: float | None, expected: float) -> None:
    context = MethodContext(chains=1, rounds=1, feedback="fine", temperature=run)
    assert base_temperature(context) == expected


def test_the_default_is_the_papers() -> None:
    assert DEFAULT_TEMPERATURE == 0.7
