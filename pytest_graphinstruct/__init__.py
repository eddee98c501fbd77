"""pytest-graphinstruct: benchmark and regression-test graph-generating LLMs (GraphInstruct).

The public API is what :data:`__all__` names (docs/API.md): load a suite, build an instruction
of your own, verify an answer, score it, read a report, and the Hypothesis strategies
(:mod:`pytest_graphinstruct.strategies`).  The names are imported on first use, so importing
the package (as pytest does for the plugin) loads nothing heavy.  Every other module is internal
and may change without notice.

>>> import pytest_graphinstruct as gi
>>> suite = gi.load_suite(gi.shipped_suite().instructions, levels=[1])
>>> inst = suite.level(1)[0]
>>> gi.Verifier().verify(inst, inst.references[0]).passed
True
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from pytest_graphinstruct.lazy import lazy_attribute

__version__ = "0.1.0"

#: public name → the module that defines it
_PUBLIC = {
    "Answer": "pytest_graphinstruct.answers",
    "Instruction": "pytest_graphinstruct.suite.instruction",
    "ItemResult": "pytest_graphinstruct.run.records.results",
    "RunReport": "pytest_graphinstruct.run.records.results",
    "Suite": "pytest_graphinstruct.suite.loader",
    "Verification": "pytest_graphinstruct.verify.verdict",
    "Verifier": "pytest_graphinstruct.verify.verifier",
    "evaluate": "pytest_graphinstruct.run.evaluate",
    "instruction_from_record": "pytest_graphinstruct.suite.loader",
    "load_suite": "pytest_graphinstruct.suite.loader",
    "read_report": "pytest_graphinstruct.run.records.reader",
    "shipped_suite": "pytest_graphinstruct.suite.shipped",
}

__all__ = [  # the names of _PUBLIC, and the two below (tests/test_public_api.py)
    "Answer", "Instruction", "ItemResult", "RunReport", "Suite", "Verification", "Verifier",
    "__version__", "evaluate", "instruction_from_record", "load_suite", "read_report",
    "shipped_suite", "strategies",
]

def __getattr__(name: str) -> Any:
    """A public name, imported on first use (PEP 562)."""
    if name == "strategies":
        return import_module("pytest_graphinstruct.strategies")
    return lazy_attribute(__name__, _PUBLIC, globals(), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
