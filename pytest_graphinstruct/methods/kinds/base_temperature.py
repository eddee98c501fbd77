"""The base temperature an iterative method samples around."""

from __future__ import annotations

from pytest_graphinstruct.methods.spec import MethodContext


def base_temperature(context: MethodContext) -> float:
    """The run's temperature, else the methods' default (``iterative.DEFAULT_TEMPERATURE``)."""
    from pytest_graphinstruct.methods.iterative import DEFAULT_TEMPERATURE

    return context.temperature if context.temperature is not None else DEFAULT_TEMPERATURE
