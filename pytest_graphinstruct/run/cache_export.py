"""One cell of the answer cache in the raw-generation JSONL format: the ``cache export`` command.

Promises:

* one line per instruction (``{"instruction_id", "level", "samples": [...]}``), instructions in
  first-cached order, samples by sample index (a missing index leaves no gap) — every
  instruction the cache recorded a use of, also one whose messages were another's word for
  word (one key, one answer: :meth:`.AnswerCache.record_use`);
* when the cell holds several answers for one sample (a changed prompt or decoding, another
  endpoint: each is its own cache key), the **newest** is exported — the one appended last,
  since the cache file is append-only — and the others are counted;
* one warning when the cell's answers came from several endpoints, and one when the cache has
  damaged lines (never a Python warning with a source line);
* every message names the command's flags (``--cell``, ``--cache``);
* ``--out`` naming one of the cache's files (``answers.jsonl``, ``batches.json``, a file under
  ``pools/``; also through a symlink or a hard link) is refused before anything is read;
* the file is written under a temporary name, fsync-ed and renamed: readers never see half of it,
  and nothing is written when the export fails.
"""

from __future__ import annotations

import os
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.models.caching.cache import (
    CACHE_FILE,
    AnswerCache,
    CacheWarning,
    write_raw,
)
from pytest_graphinstruct.models.caching.entries import CacheEntry
from pytest_graphinstruct.run.overwrites import cache_inputs, refuse_overwrite
from pytest_graphinstruct.run.records.results import is_iterative_label


@dataclass(frozen=True)
class Export:
    """What :func:`export_cache` wrote: the cell, instruction and sample counts, how many older
    answers were left out, and the warnings (one line each)."""

    cell: str
    instructions: int
    samples: int
    superseded: int
    warnings: tuple[str, ...]


def export_cache(directory: str | os.PathLike[str], out: str | os.PathLike[str], *,
                 cell: str | None = None) -> Export:
    """Export one cell of the cache at ``directory`` to ``out`` (module docstring).

    ``cell`` may be left out when the cache holds one cell.

    Raises:
        GraphInstructError: no cache there, ``out`` is one of the cache's files (the same
            file, a symlink or a hard link: :mod:`.overwrites`), no readable answer in it,
            several cells and no ``cell``, or no answer of ``cell``.
        OSError: ``out`` cannot be written.
    """
    if not (Path(directory) / CACHE_FILE).is_file():
        raise GraphInstructError(f"no answer cache at {directory} (--cache)")
    refuse_overwrite("--out", out, cache_inputs(directory))
    # The cache reports damaged lines as a Python warning too; here they are one warning line.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CacheWarning)
        cache = AnswerCache(directory)
        entries = cache.all_entries()  # every record: also a second instruction's use of one
    if not entries:  # an empty file, or nothing in it could be read
        bad = cache.warnings
        why = (f"{len(bad)} corrupt or torn line(s) skipped, the first: {bad[0]}" if bad
               else "the file is empty")
        raise GraphInstructError(f"{cache.path}: no cached answer to export ({why})")
    label = _cell(entries, cell, cache.path)
    if is_iterative_label(label):
        raise GraphInstructError(
            f"cell {label} is an iterative method: its cache holds every call of its chains "
            "(each round, each discarded candidate), not the answers it kept, so it cannot be "
            "exported as samples; its kept answers are the samples of the run's report")
    chosen = [e for e in entries if e.cell == label]
    newest: dict[tuple[str, int], CacheEntry] = {}
    for e in chosen:  # file order is write order: a later entry replaces an earlier one
        newest[(e.instruction_id, e.sample_index)] = e
    by_instruction: dict[str, dict[int, CacheEntry]] = {}
    for e in chosen:  # instructions in first-cached order
        by_instruction.setdefault(e.instruction_id, {})
    for (iid, k), e in newest.items():
        by_instruction[iid][k] = e
    write_raw(out, by_instruction)
    notes = []
    damage = cache.damage_summary()
    if damage:
        notes.append(damage)
    endpoints = Counter(e.endpoint for e in chosen)
    if len(endpoints) > 1:
        shown = ", ".join(f"{name or '(not recorded)'}: {n}" for name, n in endpoints.items())
        notes.append(f"cell {label} holds answers from {len(endpoints)} endpoints ({shown}); "
                     "the export takes the newest answer of each sample, whichever endpoint "
                     "gave it")
    return Export(label, len(by_instruction), len(newest), len(chosen) - len(newest),
                  tuple(notes))


def _cell(entries: Sequence[CacheEntry], cell: str | None, path: Path) -> str:
    cells = list(dict.fromkeys(e.cell for e in entries))
    if cell is None:
        if len(cells) > 1:
            raise GraphInstructError(f"{path} holds answers of several cells; export one at a "
                                     f"time with --cell ({', '.join(cells)})")
        return cells[0]
    if cell not in cells:
        raise GraphInstructError(f"{path}: no answer of cell {cell!r} (--cell; the cache "
                                 f"holds: {', '.join(cells)})")
    return cell
