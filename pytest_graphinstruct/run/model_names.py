"""The backend of a model name, the oracle included.

The algorithmic oracle answers from the suite's own references, so it belongs to the run layer
(beside the session that owns the suite); every other name goes to
:func:`pytest_graphinstruct.models.backends.registry.make_backend`.

Two newcomer conveniences live here, before the registry sees the name:

* a name close to a built-in one (``orcale``, ``lcoal``) with no base URL is a usage error that
  says which name was meant, instead of an API-key error for an OpenAI model of that name;
* an endpoint on a loopback host (``127.0.0.0/8``, ``::1``, ``localhost``) whose API key
  variable is unset gets :data:`PLACEHOLDER_KEY` (local servers such as llama.cpp and vLLM do
  not check keys); any other host still needs the key.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
from typing import Any
from urllib.parse import urlsplit

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.base import Backend
from pytest_graphinstruct.options import DEFAULT_API_KEY_ENV
from pytest_graphinstruct.suite.loader import Suite

BUILT_IN_MODELS = ("oracle", "local")
"""The model names that are not names at an OpenAI-compatible endpoint."""

PLACEHOLDER_KEY = "no-key"
"""The key sent to a loopback endpoint when the API key variable is unset."""

_CLOSE = 0.75  # difflib ratio: orcale/oracle 0.83, lcoal/local 0.8; gpt-4o/o1/llama < 0.45


def backend_for(model: str, *, suite: Suite | None = None, **options: Any) -> Backend:
    """Recorded answers (``replay`` or ``replay_path`` in ``options``) → their replay backend,
    whatever ``model`` is (``--gi-replay-label`` names their cell, never a backend: a label
    ``oracle`` still grades the recorded answers); else ``oracle`` →
    :class:`~pytest_graphinstruct.run.oracle.OracleBackend` over ``suite``; anything else →
    :func:`pytest_graphinstruct.models.backends.registry.make_backend` with ``options``
    (``api_key=`` :data:`PLACEHOLDER_KEY` added for a loopback endpoint whose key variable is
    unset).

    Raises:
        ModelError: ``oracle`` without a suite; a name close to a built-in one with no base
            URL (``unknown model 'orcale' — did you mean 'oracle'?``); or whatever the model
            registry raises.
    """
    replaying = options.get("replay") is not None or options.get("replay_path") is not None
    if (model or "").strip() == "oracle" and not replaying:
        if suite is None:
            raise ModelError("--gi-model=oracle needs a suite to take reference answers from")
        from pytest_graphinstruct.run.oracle import OracleBackend

        return OracleBackend(suite)
    from pytest_graphinstruct.models.backends.registry import make_backend as model_backend

    if not replaying:
        base_url = options.get("base_url") or os.environ.get("OPENAI_BASE_URL")
        if not base_url:
            _refuse_typo(model, options.get("api_key_env") or DEFAULT_API_KEY_ENV)
        elif _placeholder_key_applies(base_url, options):
            options = {**options, "api_key": PLACEHOLDER_KEY}
    return model_backend(model, **options)


def close_built_in(model: str) -> str | None:
    """The built-in model name ``model`` is probably a typo of (difflib, case ignored), or
    ``None`` (an exact built-in name, or nothing close)."""
    name = (model or "").strip().lower()
    if not name or name in BUILT_IN_MODELS:
        return None
    close = difflib.get_close_matches(name, BUILT_IN_MODELS, n=1, cutoff=_CLOSE)
    return close[0] if close else None


def _refuse_typo(model: str, api_key_env: str) -> None:
    """Raise when ``model`` (to go to the OpenAI API: no base URL) looks like a typo of a
    built-in name; the message also says what the name would need as an OpenAI model."""
    meant = close_built_in(model)
    if meant is None:
        return
    key = "" if os.environ.get(api_key_env, "").strip() else \
        f"; the API key environment variable {api_key_env} is not set either"
    raise ModelError(
        f"unknown model {model.strip()!r} — did you mean {meant!r}? (a model of that name at "
        f"an OpenAI-compatible endpoint needs --gi-base-url{key})")


def is_loopback(base_url: str) -> bool:
    """Whether ``base_url``'s host is this machine: ``localhost`` (or a name under it), an
    address in ``127.0.0.0/8``, or ``::1``.  A malformed URL is not loopback."""
    try:
        host = urlsplit(base_url.strip()).hostname
    except ValueError:
        return False
    if not host:
        return False
    host = host.rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _placeholder_key_applies(base_url: str, options: dict[str, Any]) -> bool:
    """A loopback endpoint, no key passed in, and the key variable unset or empty."""
    if options.get("api_key") is not None or not is_loopback(base_url):
        return False
    env = options.get("api_key_env") or DEFAULT_API_KEY_ENV
    return not os.environ.get(env, "").strip()
