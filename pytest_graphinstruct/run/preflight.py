"""One check of a run's inputs before any work starts (and before xdist starts its workers).

Without it each xdist worker finds a bad suite or a missing API key on its own, and pytest-xdist
reports that as an INTERNALERROR ("Unexpectedly no active workers available") that never names
the cause; a dead endpoint is found only after every request's retries.  :func:`preflight` finds
them once, in the controller (or the single process), so ``-n 2`` says what ``-n 0`` says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.run.backends import make_backend
from pytest_graphinstruct.run.config import RunConfig
from pytest_graphinstruct.suite.loader import Suite, load_suite

if TYPE_CHECKING:
    from pytest_graphinstruct.models.recorded import Responses


@dataclass(frozen=True)
class RunInputs:
    """What :func:`preflight` read, for the session of the same process to reuse."""

    suite: Suite
    replay: Responses | None = None


def preflight(config: RunConfig) -> RunInputs:
    """Load the suite, read the recorded answers, build every model's backend and ask each
    HTTP endpoint once whether it answers (``GET /models``; any HTTP status counts).

    The embedded ``local`` model is not checked here: the run starts its server itself.

    Returns:
        The suite and recorded answers read (a session of this process need not read them
        again).

    Raises:
        GraphInstructError: the suite is missing, malformed or empty; the baseline is of
            another suite or lacks a cell of the run; the recorded answers
            cannot be read; a backend cannot be built (an unset API key variable, a malformed
            base URL); or an endpoint does not answer (one line saying why).
    """
    suite = load_suite(config.suite, levels=config.levels)
    _check_baseline(config, suite)
    if config.replay is not None:
        from pytest_graphinstruct.models.recorded import read_responses

        return RunInputs(suite, read_responses(config.replay))
    for model in config.models:
        if model in ("local", "oracle"):
            if model == "oracle":
                make_backend(model, suite=suite)
            continue
        backend = make_backend(model, base_url=config.base_url, api_key_env=config.api_key_env,
                               timeout_s=config.timeout_s, max_retries=config.max_retries)
        check = getattr(backend, "preflight", None)
        reason = check() if callable(check) else None
        if reason:
            raise GraphInstructError(f"--gi-model={model}: {reason} (checked once before the "
                                     "run; nothing was asked)")
    return RunInputs(suite)


def _check_baseline(config: RunConfig, suite: Suite) -> None:
    """A ``--gi-baseline`` that exists must be of this suite and hold the run's cells
    (:func:`~.gates.match_baseline`), checked before any work."""
    baseline = config.baseline
    if baseline is None or config.update_baseline or not baseline.exists():
        return
    from pytest_graphinstruct.run.gates import match_baseline, read_baseline
    from pytest_graphinstruct.run.provenance import suite_hash

    match_baseline([c.label for c in config.cells], read_baseline(baseline), name=str(baseline),
                   baseline_cell=config.baseline_cell, suite_hash=suite_hash(suite))
