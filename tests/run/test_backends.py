"""run.backends.make_backend: the oracle beside the session, other names to the registry."""

from __future__ import annotations

import pytest

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.openai_backend import OpenAIBackend
from pytest_graphinstruct.run.backends import make_backend
from pytest_graphinstruct.run.oracle import OracleBackend
from pytest_graphinstruct.suite.loader import Suite


def test_oracle_needs_a_suite() -> None:
    assert isinstance(make_backend("oracle", suite=Suite(())), OracleBackend)
    with pytest.raises(ModelError, match="suite"):
        make_backend("oracle")


def test_other_names_go_to_the_model_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "k")
    backend = make_backend("gpt-x", suite=Suite(()), base_url="http://127.0.0.1:9/v1",
                           api_key_env="GI_TEST_KEY")
    assert isinstance(backend, OpenAIBackend)
