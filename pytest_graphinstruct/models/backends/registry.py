"""``make_backend``: a model name and options → a :class:`Backend`.

* recorded responses given (``replay=`` or ``replay_path=``) → the replay backend;
* ``local`` → the embedded llama.cpp server (:mod:`.local_server`) at the address in ``local``
  (the process that started the server hands it on), through the OpenAI-compatible backend
  with a stable endpoint name for the cache (the run's scheduler keeps one request in flight:
  the server answers one at a time, and only one process of a run asks it);
* anything else → the model name at an OpenAI-compatible endpoint.

The algorithmic oracle is not a model: it lives beside the session
(:func:`pytest_graphinstruct.run.model_names.backend_for` adds it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.backends.recorded import Responses
from pytest_graphinstruct.models.base import Backend
from pytest_graphinstruct.options import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT_S,
    LOCAL_TIMEOUT_S,
)


def make_backend(
    model: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = DEFAULT_API_KEY_ENV,
    replay: Responses | None = None,
    replay_path: str | os.PathLike[str] | None = None,
    timeout_s: float | None = None,
    max_retries: int = DEFAULT_MAX_RETRIES,
    extra_body: dict[str, Any] | None = None,
    response_format: dict[str, Any] | None = None,
    local: Mapping[str, str] | None = None,
    **openai_options: Any,
) -> Backend:
    """Build the backend for ``model``.

    ``local`` is :func:`.local_server.endpoint_info` of the running embedded server (needed
    for ``model == "local"``, ignored otherwise).  ``timeout_s=None`` means the backend's
    default: :data:`DEFAULT_TIMEOUT_S`, or ``LOCAL_TIMEOUT_S`` for the embedded model.

    Raises:
        ModelError: ``local`` when the ``[local]`` extra or the
            model package is missing (the message names the install command) or no server
            address was given; an empty model name; an OpenAI endpoint whose API key variable
            is unset.
        ResponsesError: ``replay_path`` is not a valid responses file.
    """
    name = (model or "").strip()
    if replay is not None or replay_path is not None:
        from pytest_graphinstruct.models.backends.replay import ReplayBackend

        if replay is None:
            from pytest_graphinstruct.models.backends.recorded import read_responses

            assert replay_path is not None
            replay = read_responses(replay_path)
        return ReplayBackend(replay)
    if not name:
        raise ModelError("no model given: pass --gi-model=<name>, 'oracle', or --gi-replay")
    from pytest_graphinstruct.models.backends.openai_backend import OpenAIBackend

    if name == "local":
        from pytest_graphinstruct.models.backends.local_server import ALIAS, find_local_model

        if local is None:
            find_local_model()  # says what to install when that is the problem
            raise ModelError("--gi-model=local: the local model server is not running")
        return OpenAIBackend(
            local["base_url"], ALIAS, api_key="local", endpoint_id=local["endpoint_id"],
            timeout_s=timeout_s if timeout_s is not None else LOCAL_TIMEOUT_S,
            max_retries=max_retries, extra_body=extra_body, response_format=response_format,
            **openai_options,
        )
    return OpenAIBackend(
        base_url, name,
        api_key_env=api_key_env or DEFAULT_API_KEY_ENV,
        timeout_s=timeout_s if timeout_s is not None else DEFAULT_TIMEOUT_S,
        max_retries=max_retries,
        extra_body=extra_body,
        response_format=response_format,
        **openai_options,
    )
