"""Names a package imports on first use (PEP 562): the one body of the packages'
``__getattr__`` (the package itself, ``graphs``, ``models``, ``prompts``), so that importing a
package loads none of its heavy modules until a name from one is asked for."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from importlib import import_module
from typing import Any


def lazy_attribute(package: str, table: Mapping[str, str], namespace: MutableMapping[str, Any],
                   name: str) -> Any:
    """The object ``name`` of ``package``, imported from the module ``table[name]`` (an absolute
    module path, or one relative to ``package`` such as ``".parse"``) and kept in ``namespace``
    (the package's ``globals()``), so that later lookups never come here again.

    Raises:
        AttributeError: ``table`` does not name ``name`` (the message a plain module gives).
    """
    source = table.get(name)
    if source is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(import_module(source, package), name)
    namespace[name] = value
    return value
