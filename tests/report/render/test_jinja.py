"""The one Jinja environment of the HTML outputs: its ``num`` filter and its templates."""

from __future__ import annotations

import math

from pytest_graphinstruct.report.render.jinja import environment, num


def test_num_shows_absent_nan_and_infinite() -> None:
    assert [num(None), num(math.nan), num(math.inf), num(0.5), num(2, 1)] == \
        ["—", "—", "∞", "0.5000", "2.0"]


def test_one_environment_holds_every_template() -> None:
    env = environment()
    assert env is environment()
    assert {"report.html.j2", "leaderboard.html.j2"} <= set(env.list_templates())
    assert env.autoescape is True
