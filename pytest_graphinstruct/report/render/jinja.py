"""The one Jinja2 environment of every HTML output (the report page, the leaderboard): the
package's templates (``render/templates``), autoescaped, undefined names an error, and the
filters the templates share."""

from __future__ import annotations

import functools
import json
import math
from typing import Any

import jinja2
from markupsafe import Markup


def num(x: float | None, digits: int = 4) -> str:
    """A number shown with ``digits`` decimals: absent or NaN ``—``, infinite ``∞``."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if math.isinf(x):
        return "∞"
    return f"{x:.{digits}f}"


def json_script(value: Any) -> Markup:
    """``value`` as compact JSON for the body of a ``<script type="application/json">``
    element: every ``<`` written as ``\\u003c`` (a JSON string escape), so no string in it can
    end the element (``</script>``) or open a comment; nothing else needs escaping there."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return Markup(text.replace("<", "\\u003c"))


@functools.cache
def environment() -> jinja2.Environment:
    """The environment (made once): templates of ``render/templates``, autoescape on."""
    env = jinja2.Environment(loader=jinja2.PackageLoader(__package__ or "", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True)
    env.filters["num"] = num
    env.filters["json_script"] = json_script
    return env
