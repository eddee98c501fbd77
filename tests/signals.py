"""Children that take Ctrl+C even when the test run itself ignores it."""

from __future__ import annotations

import signal


def take_sigint() -> None:
    """A ``preexec_fn``: SIGINT at its default in the child, so Python installs its
    KeyboardInterrupt handler there.  A test run started as a background job of a
    non-interactive shell (``script &``: a CI step, a loop with a CPU hog) ignores SIGINT, and
    a child inherits that: it would never see the Ctrl+C the test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
