"""Where an asked-for run begins: validate its options and register its plugins, one per
concern, over one :class:`~.state.RunState`."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.pytest_run.collection import CollectionPlugin
from pytest_graphinstruct.pytest_run.lifecycle import RunLifecyclePlugin
from pytest_graphinstruct.pytest_run.live import LiveLinePlugin
from pytest_graphinstruct.pytest_run.outcomes import OutcomePlugin
from pytest_graphinstruct.pytest_run.state import RunState
from pytest_graphinstruct.pytest_run.summary import SummaryPlugin
from pytest_graphinstruct.pytest_run.usage import refuse
from pytest_graphinstruct.run.config import build_run_config
from pytest_graphinstruct.suite.constraints import DOMAINS
from pytest_graphinstruct.vocab import PYTEST_PLUGIN_NAME

PLUGINS = (("collection", CollectionPlugin), ("outcomes", OutcomePlugin),
           ("live", LiveLinePlugin), ("summary", SummaryPlugin))
"""The run's plugins beside the lifecycle (registered as ``graphinstruct-<name>``)."""


def activate(config: pytest.Config, raw: dict[str, Any]) -> None:
    """Validate the options and register the run's plugins, and its xdist plugins only when
    xdist is loaded (pluggy refuses a hook whose spec was never registered); a bad value is a
    usage error, and the report of ``--gi-report`` says so.  A dry run registers only its own
    (:mod:`.dry_run`)."""
    for d in sorted(DOMAINS):
        config.addinivalue_line("markers", f"{d}: GraphInstruct L4 domain {d}")
    try:
        run = build_run_config(raw, rootdir=config.rootpath)
    except GraphInstructError as exc:
        raise refuse(config, raw, exc) from None
    if run is None:
        return
    manager = config.pluginmanager
    if run.dry_run:
        from pytest_graphinstruct.pytest_run.dry_run import DryRunPlugin, dry_run_config

        manager.register(DryRunPlugin(RunState(config, dry_run_config(run))), PYTEST_PLUGIN_NAME)
        return
    state = RunState(config, run)
    manager.register(RunLifecyclePlugin(state), PYTEST_PLUGIN_NAME)
    for name, plugin in PLUGINS:
        manager.register(plugin(state), f"graphinstruct-{name}")
    if manager.hasplugin("xdist"):
        from pytest_graphinstruct.pytest_run.service import AnswerServicePlugin
        from pytest_graphinstruct.pytest_run.xdist_hooks import XDIST_PLUGIN_NAME, XdistHooks

        manager.register(XdistHooks(state), XDIST_PLUGIN_NAME)
        manager.register(AnswerServicePlugin(state), "graphinstruct-service")
