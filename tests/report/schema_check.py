"""Validating report JSON against the shipped schema (``pytest_graphinstruct/report/schema.json``).

Any test that produces a report can check it with :func:`assert_valid_report`::

    from tests.report.schema_check import assert_valid_report

    assert_valid_report(report.to_json())      # or json.loads(path.read_text())
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator


@cache
def report_schema() -> dict[str, Any]:
    """The ``graphinstruct-report/2`` JSON Schema, as shipped with the package."""
    text = resources.files("pytest_graphinstruct").joinpath("report/schema.json").read_text(
        encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator() -> Draft202012Validator:
    schema = report_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def report_errors(data: Any) -> list[str]:
    """Every schema violation of ``data``, one line each (``path: message``); empty if valid."""
    errors = sorted(_validator().iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{e.json_path}: {e.message}" for e in errors]


def assert_valid_report(data: Any) -> None:
    """Fail (``AssertionError`` listing every violation) unless ``data`` — a report as
    ``json.loads`` returns it or as ``RunReport.to_json()`` builds it — is a valid
    ``graphinstruct-report/2`` report."""
    errors = report_errors(data)
    if errors:
        shown = "\n  ".join(errors[:20])
        more = f"\n  … and {len(errors) - 20} more" if len(errors) > 20 else ""
        raise AssertionError(f"not a valid graphinstruct-report/2 report "
                             f"({len(errors)} error(s)):\n  {shown}{more}")


def load_valid_report(path: Any) -> Any:
    """The JSON of the report file at ``path``, after checking it against the schema."""
    from pathlib import Path

    data = json.loads(Path(path).read_text(encoding="utf-8"))
    assert_valid_report(data)
    return data


def without_provenance(path: Any) -> str:
    """The JSON text of the report file at ``path`` without its ``run`` record: when, where and
    from which cache a run ran differ between two runs with the same results."""
    from pathlib import Path

    data = json.loads(Path(path).read_text(encoding="utf-8"))
    data.pop("run", None)
    return json.dumps(data, indent=2, ensure_ascii=False)
