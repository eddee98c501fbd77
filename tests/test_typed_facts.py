"""Facts travel as typed records, not as strings read back (issue 34): what happened to a
request is its ``Answer.failure_kind``, a baseline xfail is a user property, a limit that refused
requests travels in the worker payload, how two cells differ is a ``Difference``, what an output
came to is a ``Written``.  This test greps the package for the string tests they replaced, so
none comes back."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_graphinstruct"

FORBIDDEN = {
    r"\berror\b[^\n]*\.startswith\(": "an answer's error text decides a branch",
    r"startswith\(\(?\s*(COST_CAP_REACHED|BUDGET_EXHAUSTED|CIRCUIT_OPEN)": "a refusal's prefix "
    "decides a branch",
    r"def is_(cost_capped|budget_exhausted)\b|def is_circuit_open\(answer": "a helper that reads "
    "an answer's text",
    r"\"NOT\" in": "an output's line decides its colour",
    r"wasxfail[^\n]*startswith": "an xfail's reason decides what it was",
    r"\blimit_reasons\b": "the limits are read back from notes",
    r"differences[^\n]*startswith|startswith\(\"suite \(\"": "a difference is read back from its "
    "text",
}


def _sources() -> list[tuple[str, str]]:
    return [(p.relative_to(PACKAGE).as_posix(), p.read_text(encoding="utf-8"))
            for p in sorted(PACKAGE.rglob("*.py"))]


@pytest.mark.parametrize("pattern", sorted(FORBIDDEN))
def test_no_string_read_back_decides_a_branch(pattern: str) -> None:
    found = [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
             for name, text in _sources() for m in re.finditer(pattern, text)]
    assert found == [], f"{FORBIDDEN[pattern]}: {found}"


def test_the_patterns_find_what_they_were_written_for() -> None:
    """Each pattern matches the code it forbids (so an empty result means something)."""
    samples = {
        r"\berror\b[^\n]*\.startswith\(": 'answer.error.startswith("cost cap")',
        r"startswith\(\(?\s*(COST_CAP_REACHED|BUDGET_EXHAUSTED|CIRCUIT_OPEN)":
            "n.startswith((COST_CAP_REACHED, BUDGET_EXHAUSTED))",
        r"def is_(cost_capped|budget_exhausted)\b|def is_circuit_open\(answer":
            "def is_cost_capped(answer: Answer) -> bool:",
        r"\"NOT\" in": 'write_line(line, red="NOT" in line)',
        r"wasxfail[^\n]*startswith": 'str(getattr(report, "wasxfail", "")).startswith("x")',
        r"\blimit_reasons\b": "limits=limit_reasons(driver.notes)",
        r"differences[^\n]*startswith|startswith\(\"suite \(\"":
            '[d for d in self.differences if not d.startswith("suite (")]',
    }
    assert set(samples) == set(FORBIDDEN)
    for pattern, code in samples.items():
        assert re.search(pattern, code), pattern
