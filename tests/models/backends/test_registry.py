"""make_backend: model names and options → backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_graphinstruct.errors import ModelError, ResponsesError
from pytest_graphinstruct.models import OpenAIBackend, ReplayBackend
from pytest_graphinstruct.models.backends.local_server import LOCAL_TIMEOUT_S
from pytest_graphinstruct.models.backends.recorded import read_responses
from pytest_graphinstruct.models.backends.registry import DEFAULT_TIMEOUT_S, make_backend
from tests.models.helpers import req


def test_replay_from_a_path_or_responses(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"instruction_id": "L0-001", "samples": []}) + "\n")
    assert isinstance(make_backend("gpt-x", replay_path=path), ReplayBackend)
    assert isinstance(make_backend("gpt-x", replay=read_responses(path)), ReplayBackend)
    with pytest.raises(ResponsesError):
        make_backend("gpt-x", replay_path=tmp_path / "missing.jsonl")


def test_local_without_the_install_names_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_graphinstruct.models.backends import local_server

    monkeypatch.setattr(local_server, "_package_dir", lambda name: None)
    with pytest.raises(ModelError, match=r"pip install -e '\.\[local\]'"):
        make_backend("local")


def test_local_needs_the_running_servers_address(fake_openai, api_key) -> None:
    info = {"base_url": fake_openai.base_url, "endpoint_id": "local:model.gguf@x",
            "describe": "a model"}
    backend = make_backend("local", local=info, timeout_s=7)
    assert isinstance(backend, OpenAIBackend)
    # the port changes every run; the cache key names the model instead
    assert backend.endpoint == "local:model.gguf@x" and backend.timeout_s == 7
    assert backend.complete(req()).ok and fake_openai.request_count == 1
    # without gi_timeout a healthy serial server is never cut off mid-answer
    assert make_backend("local", local=info).timeout_s == LOCAL_TIMEOUT_S >= 600
    assert make_backend("gpt-x", base_url=fake_openai.base_url, api_key_env=api_key
                        ).timeout_s == DEFAULT_TIMEOUT_S


def test_openai_compatible(fake_openai, api_key) -> None:
    backend = make_backend("gpt-x", base_url=fake_openai.base_url, api_key_env=api_key,
                           timeout_s=3, response_format={"type": "json_object"})
    assert isinstance(backend, OpenAIBackend)
    assert backend.model == "gpt-x" and backend.timeout_s == 3
    with pytest.raises(ModelError, match="GI_UNSET_VAR"):
        make_backend("gpt-x", base_url=fake_openai.base_url, api_key_env="GI_UNSET_VAR")
    with pytest.raises(ModelError, match="no model"):
        make_backend("  ")
