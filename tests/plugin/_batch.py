"""What the batch-mode runs of the plugin tests share: their options and the fake server."""

from __future__ import annotations

from pathlib import Path

from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

BATCH = ("--gi-batch", "--override-ini=gi_batch_poll=0.05", "--override-ini=gi_batch_quiet=0.2")
ITEMS = 4  # the tiny suite's


def run_args(suite_dir: Path, server: FakeOpenAIServer, cache: Path, *extra: str) -> list[str]:
    """A run of the tiny suite against ``server`` (key in ``GI_TEST_KEY``) with its answer
    cache at ``cache``; ``extra`` last (``*BATCH`` for a batch run)."""
    return [f"--gi-suite={suite_dir}", "--gi-model=fake-model",
            f"--gi-base-url={server.base_url}", "--gi-api-key-env=GI_TEST_KEY",
            "--gi-pools=none", f"--gi-cache={cache}", "--override-ini=gi_max_retries=0",
            "-p", "no:cacheprovider", "-p", "no:randomly", *extra]
