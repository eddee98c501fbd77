"""The report's JSON Schema, generated from the records (:mod:`.results`, :mod:`.codec`).

``report/schema.json`` is this module's output, committed; ``.ci/run`` checks that it is
current::

    python -m pytest_graphinstruct.run.records.schema --check   # exit 1 when it differs
    python -m pytest_graphinstruct.run.records.schema --write   # rewrite it

Each record is a ``$defs`` entry named by its class: its fields (written under their JSON
names) are its properties, required unless written only when set, no others allowed; its
description is the first paragraph of its docstring.
"""

from __future__ import annotations

import argparse
import json
import sys
import types
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Union, get_args

from pytest_graphinstruct.run.records.codec import (
    Bounds,
    EveryKey,
    MaxItems,
    MinLength,
    OneOf,
    Pattern,
    Unique,
    _origin,
    is_record,
    json_fields,
    split,
    vocabulary,
)

SCHEMA_PATH = "report/schema.json"
"""Where the generated schema is shipped, inside the package."""


def _describe(cls: type) -> str:
    doc = (cls.__doc__ or "").strip().split("\n\n")[0]
    return " ".join(line.strip() for line in doc.splitlines())


class _Builder:
    def __init__(self) -> None:
        self.defs: dict[str, dict[str, Any]] = {}

    def record(self, cls: type) -> dict[str, Any]:
        properties = {}
        for f in json_fields(cls):
            properties[f.key] = (self._hoisted(f.custom.schema()) if f.custom is not None
                                 else self.value(f.hint))
            if f.custom is not None and self._nullable(f.hint):
                properties[f.key] = _or_null(properties[f.key])
        required = [f.key for f in json_fields(cls) if not f.omit_none]
        return {"type": "object", "description": _describe(cls), "properties": properties,
                "required": required, "additionalProperties": False}

    def _hoisted(self, schema: dict[str, Any]) -> dict[str, Any]:
        """A custom field's schema with the records it defines moved to the top ``$defs``
        (its ``$ref`` s point there)."""
        nested = schema.get("$defs")
        if not nested:
            return schema
        for name, body in nested.items():
            self.defs.setdefault(name, body)
        return {k: v for k, v in schema.items() if k != "$defs"}

    @staticmethod
    def _nullable(hint: Any) -> bool:
        return split(hint)[2]

    def ref(self, cls: type) -> dict[str, Any]:
        name = cls.__name__.lstrip("_")
        if name not in self.defs:
            self.defs[name] = {}  # reserved first: a record may (indirectly) hold itself
            self.defs[name] = self.record(cls)
        return {"$ref": f"#/$defs/{name}"}

    def value(self, hint: Any) -> dict[str, Any]:
        base, marks, nullable = split(hint)
        out = self._base(base, marks)
        for m in marks:
            if isinstance(m, Bounds):
                if m.minimum is not None:
                    out["minimum"] = _number(m.minimum)
                if m.maximum is not None:
                    out["maximum"] = _number(m.maximum)
            elif isinstance(m, Pattern):
                out["pattern"] = m.regex
            elif isinstance(m, MinLength):
                out["minLength"] = m.length
            elif isinstance(m, MaxItems):
                out["maxItems"] = m.count
            elif isinstance(m, Unique):
                out["uniqueItems"] = True
            elif isinstance(m, OneOf):
                out = {"enum": list(m.values)}
        return _or_null(out) if nullable else out

    def _base(self, hint: Any, marks: tuple[Any, ...]) -> dict[str, Any]:
        if hint is Any:
            return {}
        if is_record(hint):
            return self.ref(hint)
        scalar = {bool: "boolean", int: "integer", float: "number", str: "string"}
        if hint in scalar:
            return {"type": scalar[hint]}
        origin = _origin(hint)
        if origin is Literal:
            values = list(get_args(hint))
            return {"const": values[0]} if len(values) == 1 else {"enum": values}
        if origin in (Union, types.UnionType):
            return {"anyOf": [self.value(a) for a in get_args(hint)]}
        if origin is tuple:
            args = get_args(hint)
            if len(args) == 2 and args[1] is Ellipsis:
                return {"type": "array", "items": self.value(args[0])}
            return {"type": "array", "prefixItems": [self.value(a) for a in args],
                    "items": False, "minItems": len(args)}
        if origin in (Mapping, dict):
            key, value = get_args(hint)
            return self._mapping(key, value, any(isinstance(m, EveryKey) for m in marks))
        raise TypeError(f"no JSON Schema for {hint!r}")

    def _mapping(self, key: Any, value: Any, every: bool) -> dict[str, Any]:
        key_type, key_marks, _ = split(key)
        if every:
            names = [str(k) for k in vocabulary(key)]
            return {"type": "object", "properties": {k: self.value(value) for k in names},
                    "required": names, "additionalProperties": False}
        out: dict[str, Any] = {"type": "object"}
        if _origin(key_type) is Literal or any(isinstance(m, OneOf) for m in key_marks):
            out["propertyNames"] = {"enum": [str(k) for k in vocabulary(key)]}
        elif key_type is int:
            bounds = next((m for m in key_marks if isinstance(m, Bounds)), None)
            if bounds is not None and bounds.minimum == 0 and bounds.maximum is not None \
                    and bounds.maximum < 10:
                out["propertyNames"] = {"pattern": f"^[0-{int(bounds.maximum)}]$"}
            else:
                out["propertyNames"] = {"pattern": "^-?[0-9]+$"}
        out["additionalProperties"] = self.value(value)
        return out


def _or_null(schema: dict[str, Any]) -> dict[str, Any]:
    if "const" in schema:
        return {"enum": [schema["const"], None]}
    if "enum" in schema:
        return {**schema, "enum": [*schema["enum"], None]}
    kind = schema.get("type")
    if isinstance(kind, str) and "prefixItems" not in schema:
        return {**schema, "type": [kind, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def _number(x: float) -> int | float:
    return int(x) if float(x).is_integer() else x


def record_schema(cls: type) -> dict[str, Any]:
    """The JSON Schema of one record class, its nested records inline under ``$defs``."""
    builder = _Builder()
    body = builder.record(cls)
    return {**body, "$defs": builder.defs} if builder.defs else body


def report_schema() -> dict[str, Any]:
    """The JSON Schema of ``graphinstruct-report/2``: :class:`~.results.RunReport` at the
    top, every record it holds under ``$defs``."""
    from pytest_graphinstruct.run.records.results import SCHEMA, RunReport

    builder = _Builder()
    body = builder.record(RunReport)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "urn:pytest-graphinstruct:graphinstruct-report:2", "title": SCHEMA,
            **body, "$defs": dict(sorted(builder.defs.items()))}


def schema_text() -> str:
    """The schema as the committed file holds it (indented, newline-terminated)."""
    return json.dumps(report_schema(), indent=2, ensure_ascii=False) + "\n"


def shipped_path() -> Path:
    """The committed ``report/schema.json`` of this checkout."""
    return Path(str(resources.files("pytest_graphinstruct").joinpath(SCHEMA_PATH)))


def main(argv: list[str] | None = None) -> int:
    """``--check``: 0 when the committed schema is the generated one, else 1 with a line
    saying how to update it; ``--write``: write it."""
    parser = argparse.ArgumentParser(prog="python -m pytest_graphinstruct.run.records.schema")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="fail if report/schema.json is stale")
    mode.add_argument("--write", action="store_true", help="write report/schema.json")
    args = parser.parse_args(argv)
    path, text = shipped_path(), schema_text()
    if args.write:
        path.write_text(text, encoding="utf-8")
        return 0
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        print(f"{path} is not the schema the records give; run "
              "python -m pytest_graphinstruct.run.records.schema --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
