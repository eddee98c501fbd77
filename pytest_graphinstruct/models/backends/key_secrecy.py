"""What of the API key is kept secret, and how, without ever changing an answer that is scored.

Promises:

* **A key is a secret when it can be one**: at least :data:`MIN_SECRET_CHARS` characters.  A
  shorter one is a local server's placeholder (``x``, ``1``, ``EMPTY``, ``dummy``, ``no-key``,
  ``sk-test``): nothing is redacted for it, since replacing every ``e`` of a text with
  ``[REDACTED]`` protects nothing and destroys the text.
* **Every occurrence of a secret counts**, not only whole tokens: an echo glues the key to
  what precedes it as often as not (``key%3Dsk-…`` in a URL-encoded query, ``Bearersk-…``),
  and a key of 8+ characters inside an ordinary word of a graph answer does not happen.
* **Error texts** (an endpoint's error message, a connection error, a probe's line) have each
  occurrence replaced by :data:`REDACTED`: they are read, never scored.
* **Answers are never rewritten.**  An answer whose text holds the key is not a graph but an
  endpoint echoing its request: :meth:`KeySecrecy.withhold` turns it into an error saying so
  (its usage and calls kept: it was generated and is paid for), so it is neither scored,
  cached, nor written or shown anywhere.  Every other answer is returned as it came.
"""

from __future__ import annotations

from dataclasses import replace

from pytest_graphinstruct.answers import Answer

MIN_SECRET_CHARS = 8
"""The shortest key treated as a secret (``sk-test``, 7, is a placeholder; real keys are 20+)."""
REDACTED = "[REDACTED]"


class KeySecrecy:
    """The secrecy rule of one key (see the module).

    Args:
        key: the API key the client sends.
        variable: the name of the environment variable it came from (said in the error of a
            withheld answer; never its value).
    """

    def __init__(self, key: str, variable: str) -> None:
        self.variable = variable
        self._key = key if len(key) >= MIN_SECRET_CHARS else None

    def __repr__(self) -> str:
        return f"KeySecrecy(variable={self.variable!r}, secret={self.secret})"

    @property
    def secret(self) -> bool:
        """Whether the key is long enough to be a secret (anything is redacted at all)."""
        return self._key is not None

    def holds(self, text: str) -> bool:
        """Whether ``text`` holds the key (``False`` for a key too short to be a secret)."""
        return self._key is not None and self._key in text

    def scrub(self, text: str) -> str:
        """``text`` with every occurrence of the key replaced by :data:`REDACTED` (for error
        texts; ``text`` itself when the key is no secret)."""
        return text if self._key is None else text.replace(self._key, REDACTED)

    def withhold(self, answer: Answer) -> Answer:
        """``answer`` as it came, or — when its text holds the key — an error saying the
        endpoint's answer held it (usage, calls and latency kept; the text gone)."""
        if answer.text is None or not self.holds(answer.text):
            return answer
        return replace(answer, text=None, finish_reason=None, failure_kind="error",
                       error=(f"the endpoint's answer holds the API key (the value of "
                              f"{self.variable}): withheld, not scored, cached or shown; an "
                              "endpoint that echoes its request's headers is misconfigured"))
