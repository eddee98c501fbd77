"""The pytest edge is small plugins, one per concern (read from the source with ast): every
hook of ``pytest_graphinstruct.pytest_run`` is a method of a plugin class that :mod:`entry`
(or the dry run) registers, no hook is long, the xdist hooks live only in the plugins registered
with xdist, and the controller and its workers exchange one key each way."""

from __future__ import annotations

import ast
import re
from pathlib import Path

EDGE = Path(__file__).resolve().parents[2] / "pytest_graphinstruct" / "pytest_run"
MAX_HOOK_LINES = 30
XDIST_ONLY = {"pytest_configure_node", "pytest_testnodedown",
              "pytest_xdist_node_collection_finished"}
XDIST_PLUGINS = {"XdistHooks", "AnswerServicePlugin"}  # registered only when xdist is loaded


def _modules() -> list[Path]:
    found = sorted(EDGE.glob("*.py"))
    assert found, f"no modules under {EDGE}"
    return found


def _body_lines(fn: ast.FunctionDef) -> int:
    """Lines from the first statement after the docstring to the end of the function."""
    body = fn.body
    if (len(body) > 1 and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
        body = body[1:]
    end = body[-1].end_lineno
    assert end is not None
    return end - body[0].lineno + 1


def _hooks() -> list[tuple[str, str, ast.FunctionDef]]:
    """(module, class, function) for every ``pytest_*`` method of the package."""
    out = []
    for path in _modules():
        for cls in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(cls, ast.ClassDef):
                out.extend((path.name, cls.name, fn) for fn in cls.body
                           if isinstance(fn, ast.FunctionDef) and fn.name.startswith("pytest_"))
    return out


def test_every_hook_is_a_few_lines() -> None:
    hooks = _hooks()
    assert {fn.name for _, _, fn in hooks} >= {"pytest_sessionstart", "pytest_sessionfinish",
                                                "pytest_testnodedown"}
    long = [(f"{module}:{cls}.{fn.name}", _body_lines(fn)) for module, cls, fn in hooks
            if _body_lines(fn) > MAX_HOOK_LINES]
    assert long == []


def test_every_plugin_class_is_registered() -> None:
    registering = (EDGE / "entry.py").read_text(encoding="utf-8")
    owners = {cls for _, cls, _ in _hooks()}
    assert "RunLifecyclePlugin" in owners and len(owners) >= 6
    registered = set(re.findall(r"\b([A-Z]\w*Plugin|XdistHooks)\b", registering))
    assert owners - registered == set()


def test_the_xdist_hooks_are_only_in_the_xdist_plugins() -> None:
    owners = {cls for _, cls, fn in _hooks() if fn.name in XDIST_ONLY}
    assert owners == XDIST_PLUGINS
    entry = ast.parse((EDGE / "entry.py").read_text(encoding="utf-8"))
    guarded = next(node for node in ast.walk(entry) if isinstance(node, ast.If)
                   and "hasplugin" in ast.unparse(node.test))
    assert {node.id for node in ast.walk(guarded) if isinstance(node, ast.Name)} >= XDIST_PLUGINS


def test_one_key_each_way() -> None:
    """The only keys of ``workerinput``/``workeroutput`` the package defines or indexes with
    are payload's two (``run/payload.py``, the records that cross between processes)."""
    defined, indexed = set(), set()
    for path in [*_modules(), EDGE.parent / "run" / "payload.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                defined |= {t.id for t in targets
                            if isinstance(t, ast.Name) and t.id.endswith("_KEY")}
            elif isinstance(node, ast.Subscript) and (
                    ast.unparse(node.value).endswith(("workerinput", "workeroutput"))
                    or ast.unparse(node.slice).endswith("_KEY")):
                indexed.add(ast.unparse(node.slice))
    assert defined == {"INPUT_KEY", "OUTPUT_KEY"}
    assert indexed == {"INPUT_KEY", "OUTPUT_KEY"}
