"""``cache merge`` (run/cache_merge.py): the shards' answer caches put back together."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.models.caching.cache import AnswerCache
from pytest_graphinstruct.run.cache_merge import merge_caches
from tests.models.helpers import req


def test_merge_caches_unions_answers(tmp_path: Path) -> None:
    for k in (1, 2):
        cache = AnswerCache(tmp_path / f"s{k}")
        for i in range(3):
            r = req(f"q{k}-{i}", sample=i)
            cache.put(r.cache_key("ep"), r, Answer(text=f"a{k}{i}", usage=Usage(1, 1)))
        shared = req("shared")
        cache.put(shared.cache_key("ep"), shared, Answer(text="s", usage=Usage(1, 1)))
    result = merge_caches([tmp_path / "s1", tmp_path / "s2"], tmp_path / "out")
    assert [n for _, n in result.added] == [4, 3] and result.total == 7
    with pytest.raises(GraphInstructError, match="no answer cache at"):
        merge_caches([tmp_path / "nothing"], tmp_path / "out")


def test_a_source_that_is_the_target_is_refused_before_anything_is_written(
        tmp_path: Path) -> None:
    for k in (1, 2):
        cache = AnswerCache(tmp_path / f"s{k}")
        r = req(f"q{k}")
        cache.put(r.cache_key("ep"), r, Answer(text=f"a{k}", usage=Usage(1, 1)))
    before = (tmp_path / "s1" / "answers.jsonl").read_bytes()
    (tmp_path / "link").symlink_to(tmp_path / "s1")
    for out in (tmp_path / "s1", tmp_path / "link", tmp_path / "s2" / ".." / "s1"):
        with pytest.raises(GraphInstructError, match=r"is the source cache .*: a cache is not "
                           r"merged into itself"):
            merge_caches([tmp_path / "s2", tmp_path / "s1"], out)
    assert (tmp_path / "s1" / "answers.jsonl").read_bytes() == before
    # another folder whose answers file is a hard link of a source's: the same file
    (tmp_path / "twin").mkdir()
    os.link(tmp_path / "s1" / "answers.jsonl", tmp_path / "twin" / "answers.jsonl")
    with pytest.raises(GraphInstructError, match="is the source cache"):
        merge_caches([tmp_path / "s1", tmp_path / "s2"], tmp_path / "twin")
    assert (tmp_path / "s1" / "answers.jsonl").read_bytes() == before
