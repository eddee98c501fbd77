"""The pytest entry point of pytest-graphinstruct: options, markers and fixtures, nothing heavy.

Installing the package registers this module with every pytest run in the environment, so it
imports only pytest, the package's vocabulary, its option table (:mod:`.options`) and error
type: a project that passes no ``--gi-*`` option
pays nothing (no networkx, numpy, torch or openai is imported; docs/PLUGIN.md gives the
measured figure).  When a benchmark run is asked for, ``pytest_configure`` hands over to
:mod:`pytest_graphinstruct.pytest_run`, which holds the run's hooks and items; every rule (what
an outcome is, gates, exit status) lives below it in :mod:`pytest_graphinstruct.run`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from pytest_graphinstruct.errors import OptionDeprecationWarning
from pytest_graphinstruct.options import OPTIONS, parse_levels, split_words
from pytest_graphinstruct.vocab import LEVELS, PYTEST_PLUGIN_NAME, SIZE_BUCKETS

if TYPE_CHECKING:  # the fixtures' types; nothing of them is imported when pytest loads us
    from pytest_graphinstruct.answers import Answer
    from pytest_graphinstruct.run.records.results import ItemResult
    from pytest_graphinstruct.run.suites import Suite
    from pytest_graphinstruct.suite.instruction import Instruction
    from pytest_graphinstruct.verify.verifier import Verifier


def pytest_addoption(parser: pytest.Parser) -> None:
    """Every row of :data:`~pytest_graphinstruct.options.OPTIONS` as a ``--gi-*`` option and,
    where the row says so, an ini key of the flag's name."""
    group = parser.getgroup("graphinstruct", "GraphInstruct benchmark (pytest-graphinstruct)")
    for option in OPTIONS:
        # a tuning knob's or an old spelling's flag still works, unlisted (options.Surface)
        shown = option.help if option.surface == "flag" else argparse.SUPPRESS
        ini_help = (option.help if option.surface != "old"
                    else f"deprecated ({option.instead}): {option.help}")
        if option.kind == "flag":
            group.addoption(option.flag, dest=option.attr, action="store_true", default=False,
                            help=shown)
            if option.ini:
                parser.addini(option.ini_name, ini_help, type="bool", default=False)
        else:
            group.addoption(option.flag, dest=option.attr, default=None, help=shown)
            if option.ini:
                parser.addini(option.ini_name, ini_help, default=None)


def deprecated_spellings(config: pytest.Config) -> list[str]:
    """The one-line notes of the options this run spells in a way that goes in the next
    release: a tuning knob's flag (it is an ini key now), an old flag or ini key."""
    notes = []
    for option in OPTIONS:
        if option.surface == "flag":
            continue
        if config.getoption(option.attr) not in (None, False):
            notes.append(option.deprecation())
        elif (option.surface == "old" and option.ini
              and config.getini(option.ini_name) not in (None, False, "", [])):
            notes.append(option.deprecation(via_ini=True))
    return [n for n in notes if n is not None]


def raw_options(config: pytest.Config) -> dict[str, str | bool | None]:
    """The ``--gi-*`` values as given, by dest (command line first, then ini; ``None`` = not
    given; a flag is on when either turns it on)."""
    raw: dict[str, str | bool | None] = {}
    for option in OPTIONS:
        value = config.getoption(option.attr)
        if option.kind == "flag":
            raw[option.dest] = bool(value or (option.ini and config.getini(option.ini_name)))
            continue
        if value is None and option.ini:
            value = config.getini(option.ini_name)
        raw[option.dest] = value if value not in ("", []) else None
    return raw


_EMPTY_EXAMPLES = {
    "model": "e.g. --gi-model=gpt-4o, --gi-model=oracle or --gi-replay=answers.jsonl",
    "replay": "e.g. --gi-model=gpt-4o, --gi-model=oracle or --gi-replay=answers.jsonl",
    "levels": "e.g. --gi-levels=0,2; leave the option out to run every level",
}


def _given_no_value(config: pytest.Config) -> str | None:
    """The usage error of an option given on the command line with nothing in it
    (``--gi-model=``, ``--gi-model=,``, ``--gi-levels=``), which would otherwise mean "not
    given" without a word — no run at all, or every level — else ``None``."""
    for dest, example in _EMPTY_EXAMPLES.items():
        value = config.getoption(f"gi_{dest}")
        if value is None:
            continue
        if str(value).strip() == "":
            return f"--gi-{dest} was given no value ({example})"
        if dest == "model" and not split_words(value):
            return f"--gi-model={value!r} names no model ({example})"
    return None


def pytest_configure(config: pytest.Config) -> None:
    for lv in LEVELS:
        config.addinivalue_line("markers", f"level{lv}: GraphInstruct level {lv} item")
    for size in SIZE_BUCKETS:
        config.addinivalue_line("markers", f"{size}: GraphInstruct size bucket {size}")
    config.addinivalue_line("markers", "infeasible: a deliberately infeasible instruction")
    config.addinivalue_line("markers", "graphinstruct: a GraphInstruct benchmark item")
    if not hasattr(config, "workerinput"):  # xdist's workers: the controller says it once
        for note in deprecated_spellings(config):
            config.issue_config_time_warning(OptionDeprecationWarning(note), stacklevel=2)
    empty = _given_no_value(config)
    if empty is not None:
        from pytest_graphinstruct.pytest_run.usage import refuse  # loaded for the error only

        raise refuse(config, raw_options(config), empty)
    raw = raw_options(config)
    if not (raw.get("model") or raw.get("replay")):
        return  # no benchmark run asked for: load nothing
    from pytest_graphinstruct.pytest_run.entry import activate

    activate(config, raw)


# -- fixtures ----------------------------------------------------------------------------------

def _active(request: pytest.FixtureRequest) -> Any:
    plugin = request.config.pluginmanager.get_plugin(PYTEST_PLUGIN_NAME)
    if plugin is None:
        pytest.skip("no GraphInstruct run configured (pass --gi-model or --gi-replay)")
    return plugin


@pytest.fixture
def gi_verifier() -> Verifier:
    """The verifier (parse answers, check them against an instruction)."""
    from pytest_graphinstruct.verify.verifier import Verifier

    return Verifier()


@pytest.fixture(scope="session")
def gi_suite(request: pytest.FixtureRequest) -> Suite:
    """The suite: the run's when a run is configured, else ``--gi-suite`` (or the ``gi_suite``
    ini key, or ``instructions/`` under the rootdir, or the suite the package ships) and
    ``--gi-levels`` — no model needed.  Skips when none of them is there.

    Raises:
        pytest.UsageError: the named suite cannot be read (the message says why).
    """
    plugin = request.config.pluginmanager.get_plugin(PYTEST_PLUGIN_NAME)
    if plugin is not None:
        return plugin.run_session().suite
    from pathlib import Path

    from pytest_graphinstruct.errors import GraphInstructError
    from pytest_graphinstruct.run.suites import fixture_suite

    raw = raw_options(request.config)
    levels = parse_levels(raw["levels"]) if raw.get("levels") else None
    try:
        found = fixture_suite(str(raw["suite"]) if raw.get("suite") else None, levels,
                              request.config.rootpath)
    except (GraphInstructError, ValueError) as exc:
        raise pytest.UsageError(f"pytest-graphinstruct: gi_suite: {exc} (pass --gi-suite=DIR, "
                                "or build one with 'python -m pytest_graphinstruct "
                                "build suite')") from None
    if isinstance(found, Path):
        pytest.skip(f"no GraphInstruct suite at {found} (pass --gi-suite=DIR, or build one "
                    "with 'python -m pytest_graphinstruct build suite')")
    return found


@pytest.fixture
def gi_instruction(request: pytest.FixtureRequest) -> Instruction:
    """The instruction of the current benchmark item (only inside a GraphInstruct item)."""
    instruction = getattr(request.node, "instruction", None)
    if instruction is None:
        pytest.skip("gi_instruction is only available to GraphInstruct items")
    return instruction


@pytest.fixture
def gi_query(request: pytest.FixtureRequest) -> Callable[..., Answer]:
    """``gi_query(instruction, strategy='zero-shot', sample=0) -> Answer`` from the run's model.

    Uses the session's backend, cache and concurrency limits, so answers obtained here are
    cached like the benchmark's own.
    """
    return _active(request).query


@pytest.fixture
def gi_results(request: pytest.FixtureRequest) -> list[ItemResult]:
    """The typed results (:class:`~pytest_graphinstruct.run.records.results.ItemResult`: verdicts
    per sample, D1–D5, level score) of the benchmark items that already ran in this process, in
    run order; items still held for D3's batch are scored first."""
    return list(_active(request).run_session().flush())


@pytest.fixture
def gi_evaluate(request: pytest.FixtureRequest) -> Callable[..., ItemResult]:
    """``gi_evaluate(instruction, answers, strategy='zero-shot') -> ItemResult`` (verdicts and
    every dimension, through the same evaluation path as the benchmark's items)."""
    return _active(request).evaluate
