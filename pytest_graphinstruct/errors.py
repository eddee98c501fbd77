"""Exception types shared across the package.

Every error a user can trigger with bad input derives from :class:`GraphInstructError`, so
callers (the CLI, the pytest plugin) can turn them into one clear message instead of a traceback.
"""

from __future__ import annotations


class GraphInstructError(Exception):
    """Base class of every user-facing error of the package."""


class ConstraintError(GraphInstructError, ValueError):
    """A constraint string is malformed, uses an unknown key, or a value/operator it forbids."""


class SuiteError(GraphInstructError, ValueError):
    """A suite file is unreadable or an instruction record is malformed.

    The message always names the file and, where known, the instruction id and the offending
    string.
    """


class GraphSyntaxError(GraphInstructError, ValueError):
    """A text that was required to be one well-formed graph (a reference, a base graph) is not."""


class ResponsesError(GraphInstructError, ValueError):
    """A recorded-responses file (raw-generation JSONL) is malformed."""


class ModelError(GraphInstructError):
    """A model backend cannot be set up (unknown model, missing API key variable, bad options).

    Messages name configuration (an environment variable's *name*, an option), never a secret.
    """


class OptionDeprecationWarning(DeprecationWarning):
    """An option spelled the way that goes in the next release (``options.Surface``): the
    run goes on as asked; the note says the spelling to use."""
