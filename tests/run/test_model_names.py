"""run.model_names.backend_for: the oracle beside the session, other names to the registry."""

from __future__ import annotations

import pytest

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.backends.openai_backend import OpenAIBackend
from pytest_graphinstruct.models.backends.recorded import Responses
from pytest_graphinstruct.models.backends.replay import ReplayBackend
from pytest_graphinstruct.run.model_names import PLACEHOLDER_KEY, backend_for, is_loopback
from pytest_graphinstruct.run.oracle import OracleBackend
from pytest_graphinstruct.suite.loader import Suite


def test_oracle_needs_a_suite() -> None:
    assert isinstance(backend_for("oracle", suite=Suite(())), OracleBackend)
    with pytest.raises(ModelError, match="suite"):
        backend_for("oracle")


@pytest.mark.parametrize("label", ["oracle", "local", "m"])
def test_recorded_answers_are_replayed_whatever_their_label(label: str) -> None:
    """--gi-replay-label names the cell of recorded answers, never a backend."""
    responses = Responses({}, path="answers.jsonl")
    backend = backend_for(label, suite=Suite(()), replay=responses)
    assert isinstance(backend, ReplayBackend) and backend.responses is responses


def test_other_names_go_to_the_model_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "k")
    backend = backend_for("gpt-x", suite=Suite(()), base_url="http://127.0.0.1:9/v1",
                           api_key_env="GI_TEST_KEY")
    assert isinstance(backend, OpenAIBackend)


@pytest.mark.parametrize(("typo", "meant"), [("orcale", "oracle"), ("Oracel", "oracle"),
                                             ("lcoal", "local")])
def test_a_typo_of_a_built_in_name_without_a_base_url_says_which_was_meant(
        typo: str, meant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ModelError) as exc:
        backend_for(typo, suite=Suite(()), api_key_env="OPENAI_API_KEY")
    message = str(exc.value)
    assert message.startswith(f"unknown model {typo!r} — did you mean {meant!r}?")
    assert "--gi-base-url" in message and "OPENAI_API_KEY is not set" in message


def test_a_typo_is_refused_even_with_a_key_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "k")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ModelError, match="did you mean 'oracle'") as exc:
        backend_for("orcale", api_key_env="GI_TEST_KEY")
    assert "not set" not in str(exc.value)


def test_an_unknown_name_far_from_built_ins_stays_an_openai_model_needing_a_key(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GI_TEST_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ModelError, match="GI_TEST_KEY is not set") as exc:
        backend_for("gpt-4o-mini", api_key_env="GI_TEST_KEY")
    assert "did you mean" not in str(exc.value)


def test_a_typo_at_a_given_base_url_is_a_served_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "k")
    backend = backend_for("orcale", base_url="http://10.1.2.3:9/v1", api_key_env="GI_TEST_KEY")
    assert isinstance(backend, OpenAIBackend) and backend.model == "orcale"


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/v1", "http://127.1.2.3/v1",
                                 "http://localhost:8000/v1", "http://[::1]:8000/v1",
                                 "http://LOCALHOST./v1"])
def test_a_loopback_endpoint_without_a_key_gets_a_placeholder(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GI_TEST_KEY", raising=False)
    backend = backend_for("llama", base_url=url, api_key_env="GI_TEST_KEY")
    assert isinstance(backend, OpenAIBackend)
    assert is_loopback(url)


@pytest.mark.parametrize("url", ["http://10.0.0.5:8080/v1", "https://api.example.com/v1",
                                 "http://localhost.example.com/v1", "http://128.0.0.1/v1"])
def test_a_non_loopback_endpoint_still_needs_the_key(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GI_TEST_KEY", raising=False)
    assert not is_loopback(url)
    with pytest.raises(ModelError, match="GI_TEST_KEY is not set"):
        backend_for("llama", base_url=url, api_key_env="GI_TEST_KEY")


def test_the_placeholder_key_is_sent_and_a_set_key_wins(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_graphinstruct.answers import Message
    from pytest_graphinstruct.models.base import Request
    from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

    request = Request("m", (Message("user", "hi"),))

    with FakeOpenAIServer() as server:
        monkeypatch.delenv("GI_TEST_KEY", raising=False)
        backend_for("m", base_url=server.base_url, api_key_env="GI_TEST_KEY",
                     max_retries=0).complete(request)
        monkeypatch.setenv("GI_TEST_KEY", "real-key")
        backend_for("m", base_url=server.base_url, api_key_env="GI_TEST_KEY",
                     max_retries=0).complete(request)
        keys = [{k.lower(): v for k, v in r.headers.items()}.get("authorization")
                for r in server.requests]
    assert keys == [f"Bearer {PLACEHOLDER_KEY}", "Bearer real-key"]
