"""Answer caches put back together: the ``cache merge`` command (the shards' caches of a
sharded CI run, ci/README.md)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.models.caching.cache import CACHE_FILE, AnswerCache


@dataclass(frozen=True)
class CacheMerge:
    """``cache merge``: answers added from each source, and the sources' damaged lines."""

    added: tuple[tuple[str, int], ...]
    damaged: tuple[str, ...]
    total: int


def merge_caches(sources: Sequence[str | os.PathLike[str]],
                 out: str | os.PathLike[str]) -> CacheMerge:
    """Merge the answer caches in ``sources`` (directories holding ``answers.jsonl``) into
    the cache at ``out`` (created when missing; answers it already holds are kept).  Nothing
    is written unless every source is a cache other than ``out``.

    Raises:
        GraphInstructError: a source is not a cache, is ``out`` itself (:func:`_refuse_itself`),
            or the target cannot be written.
    """
    import warnings

    from pytest_graphinstruct.errors import ModelError
    from pytest_graphinstruct.models.caching.cache import CacheWarning

    if not sources:
        raise GraphInstructError("cache merge needs at least one cache directory")
    added, damaged = [], []
    try:
        with warnings.catch_warnings():  # damaged lines are counted in the result instead
            warnings.simplefilter("ignore", CacheWarning)
            for src in sources:
                if not (Path(src) / CACHE_FILE).is_file():
                    raise GraphInstructError(f"no answer cache at {src} (no {CACHE_FILE})")
                _refuse_itself(src, out)
            target = AnswerCache(out)
            for src in sources:
                source = AnswerCache(src)
                added.append((str(src), target.merge_from(source)))
                summary = source.damage_summary()
                if summary:
                    damaged.append(summary)
            return CacheMerge(tuple(added), tuple(damaged), len(target))
    except ModelError as exc:
        raise GraphInstructError(str(exc)) from None


def _refuse_itself(source: str | os.PathLike[str], out: str | os.PathLike[str]) -> None:
    """Refuse a ``source`` that is the target cache ``out``: the same folder, or its
    ``answers.jsonl`` the target's (a symlink or a hard link: :mod:`.overwrites`) — the merge
    would append to the file it reads.

    Raises:
        GraphInstructError: one line naming both (escaped).
    """
    from pytest_graphinstruct.escaping import escape
    from pytest_graphinstruct.run.records.writer import same_file

    if same_file(Path(source), Path(out)) or same_file(Path(source) / CACHE_FILE,
                                                     Path(out) / CACHE_FILE):
        raise GraphInstructError(
            f"--out {escape(str(out))} is the source cache {escape(str(source))}: a cache is "
            "not merged into itself; name only the other caches (the answers --out holds are "
            "kept)")
