"""Names a package imports on first use (pytest_graphinstruct/lazy.py)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_graphinstruct.lazy import lazy_attribute
from tests.fresh_python import fresh_python


def test_a_name_is_imported_from_its_module_and_kept() -> None:
    namespace: dict[str, Any] = {}
    table = {"parse_graph": ".parse", "dumps": "json"}
    got = lazy_attribute("pytest_graphinstruct.graphs", table, namespace, "parse_graph")
    from pytest_graphinstruct.graphs.parse import parse_graph

    assert got is parse_graph and namespace == {"parse_graph": parse_graph}
    import json

    assert lazy_attribute("pytest_graphinstruct.graphs", table, namespace, "dumps") is json.dumps


def test_an_unknown_name_is_the_attribute_error_of_a_plain_module() -> None:
    with pytest.raises(AttributeError, match="module 'pkg' has no attribute 'nope'"):
        lazy_attribute("pkg", {}, {}, "nope")


def test_the_packages_import_their_heavy_parts_on_first_use() -> None:
    code = ("import sys\nimport pytest_graphinstruct as gi, pytest_graphinstruct.graphs as g\n"
            "import pytest_graphinstruct.models as m, pytest_graphinstruct.prompts as p\n"
            "before = [x for x in ('networkx', 'openai') if x in sys.modules]\n"
            "assert g.parse_graph is g.parse_graph and m.AnswerCache and p.build_messages\n"
            "assert gi.load_suite and gi.strategies\n"
            "print(before, 'networkx' in sys.modules, 'g' if 'parse_graph' in vars(g) else '')")
    out = fresh_python(code)
    assert out == "[] True g"
