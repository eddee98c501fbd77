"""Where an asked-for run begins: validate its options and register its hooks."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.pytest_run.driver import RunDriver
from pytest_graphinstruct.pytest_run.hooks import GraphInstructPlugin
from pytest_graphinstruct.pytest_run.usage import refuse
from pytest_graphinstruct.pytest_run.xdist_hooks import XDIST_PLUGIN_NAME, XdistHooks
from pytest_graphinstruct.run.config import build_run_config
from pytest_graphinstruct.suite.constraints import DOMAINS
from pytest_graphinstruct.vocab import PYTEST_PLUGIN_NAME


def activate(config: pytest.Config, raw: dict[str, Any]) -> None:
    """Validate the options and register the run's hooks, and its xdist hooks only when xdist
    is loaded (a bad value is a usage error, and the report of ``--gi-report`` says so); a dry
    run registers only its own (:mod:`.dry_run`)."""
    for d in sorted(DOMAINS):
        config.addinivalue_line("markers", f"{d}: GraphInstruct L4 domain {d}")
    try:
        run = build_run_config(raw, rootdir=config.rootpath)
    except GraphInstructError as exc:
        raise refuse(config, raw, exc) from None
    if run is None:
        return
    if run.dry_run:
        from pytest_graphinstruct.pytest_run.dry_run import DryRunPlugin, dry_run_config

        driver = RunDriver(config, dry_run_config(run))
        config.pluginmanager.register(DryRunPlugin(driver), PYTEST_PLUGIN_NAME)
        return
    driver = RunDriver(config, run)
    config.pluginmanager.register(GraphInstructPlugin(driver), PYTEST_PLUGIN_NAME)
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistHooks(driver), XDIST_PLUGIN_NAME)
