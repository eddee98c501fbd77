"""Outputs that would overwrite an input: the one check every writer of files runs before it
writes anything — the pytest run (its report, HTML page, Markdown summary, the
``$GITHUB_STEP_SUMMARY`` file and the baseline) and each command of
``python -m pytest_graphinstruct`` that writes a file.

An input (:class:`Input`) is a file the run or the command reads — a report, the baseline,
recorded answers, a price table, a suite's level files, a models table — or one of the answer
cache's files (:func:`cache_inputs`: ``answers.jsonl``, the batch ledger ``batches.json`` and
the pool features under ``pools/``), which a later run reads.  An output *overwrites* an input
when it names the same file (:func:`~.records.writer.same_file`: the same path once ``~``,
relative parts and symlinks are resolved, or a hard link of it) or, for an input that is a
folder (the cache's ``pools/``), lies inside it.

The check is a usage error, one line, before anything is written: before, ``gate --markdown``
onto the baseline turned it into Markdown, ``html --out`` onto its report replaced it, ``cache
export --out`` onto ``answers.jsonl`` emptied the cache, and ``--gi-report`` onto the cache
file replaced every cached answer (issue 47).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.escaping import escape
from pytest_graphinstruct.run.records.writer import same_file

AnyPath = str | os.PathLike[str]
"""A path as the callers hold it: a text, or a :class:`~pathlib.Path`."""

CACHE_POOLS = "pools"
"""The answer cache's folder of the reference pools' cached features (``<cache>/pools``)."""


@dataclass(frozen=True)
class Input:
    """A file (``folder``: every file under a folder) that an output may not replace.

    ``what`` names it in words (``the baseline file``, ``the answer cache's answers.jsonl``);
    ``loses`` says what writing over it would lose; ``hint`` ends the refusal (with its own
    leading space or punctuation)."""

    what: str
    path: Path
    loses: str = "an input of this command"
    hint: str = ""
    folder: bool = False

    def holds(self, output: AnyPath) -> bool:
        """Whether writing ``output`` would replace this input: the same file, or (a folder)
        a path inside it.  Never raises."""
        if same_file(Path(output), self.path):
            return True
        if not self.folder:
            return False
        try:
            inner = Path(output).expanduser().resolve()
            return inner.is_relative_to(self.path.expanduser().resolve())
        except (OSError, RuntimeError):  # a symlink loop: not inside
            return False


def overwrite_problem(flag: str, output: AnyPath, inputs: Iterable[Input]) -> str | None:
    """Why ``output`` (named by the option ``flag``) may not be written — it would overwrite
    one of ``inputs``, the first such — in one line with the paths escaped; ``None`` when it
    overwrites none."""
    for found in inputs:
        if found.holds(output):
            where = (f"({escape(str(output))}) lies in" if found.folder
                     and not same_file(Path(output), found.path) else "names")
            return (f"{flag} {where} {found.what} ({escape(str(found.path))}): writing it "
                    f"would overwrite {found.loses}; write it to another file{found.hint}")
    return None


def refuse_overwrite(flag: str, output: AnyPath | None, inputs: Iterable[Input]) -> None:
    """Refuse ``output`` when it would overwrite one of ``inputs`` (nothing when it is
    ``None``).

    Raises:
        GraphInstructError: the line of :func:`overwrite_problem`.
    """
    if output is None:
        return
    problem = overwrite_problem(flag, output, inputs)
    if problem is not None:
        raise GraphInstructError(problem)


def file_inputs(what: str, paths: Iterable[AnyPath | None], *,
                loses: str = "an input of this command") -> list[Input]:
    """One :class:`Input` per given path (``None`` left out), each named ``what`` and its
    file name (``the report c.json``)."""
    return [Input(f"{what} {Path(p).name}", Path(p), loses) for p in paths if p is not None]


def cache_inputs(directory: AnyPath,
                 loses: str = "the answer cache (a later run would ask again for every answer "
                              "it held)") -> list[Input]:
    """The answer cache's files at ``directory``: its answers (``answers.jsonl``), its batch
    ledger (``batches.json``) and its folder of pool features (``pools/``)."""
    from pytest_graphinstruct.models.batch.ledger import LEDGER_NAME
    from pytest_graphinstruct.models.caching.cache import CACHE_FILE

    root = Path(directory).expanduser()
    return [Input(f"the answer cache's {CACHE_FILE}", root / CACHE_FILE, loses),
            Input(f"the answer cache's batch ledger {LEDGER_NAME}", root / LEDGER_NAME,
                  "the record of the batches the endpoint still runs (they would be paid for "
                  "again)"),
            Input(f"the answer cache's folder {CACHE_POOLS}/", root / CACHE_POOLS,
                  "the pool features cached there", folder=True)]


def suite_inputs(suite: AnyPath | None, *, loses: str = "the suite") -> list[Input]:
    """The level files of a suite (``suite``: a folder of ``level_<L>.json`` files, or one
    such file; ``None``: none)."""
    if suite is None:
        return []
    root = Path(suite).expanduser()
    files: Sequence[Path] = sorted(root.glob("level_*.json")) if root.is_dir() else [root]
    return [Input(f"the suite's {f.name}", f, loses) for f in files]
