"""Writing a run report as JSON (atomically: a crash never leaves half a file)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pytest_graphinstruct.run.records.results import RunReport


def report_json(report: RunReport) -> str:
    """The report's JSON text (indented, UTF-8, newline-terminated; deterministic)."""
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"


def write_report(report: RunReport, path: str | Path) -> None:
    """Write ``report`` to ``path`` through a temporary file, synced and renamed into place (a
    crash leaves the old file or the new one, never a mix); the folder is created when
    missing."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(report_json(report))
            fh.flush()
            os.fsync(fh.fileno())  # the bytes are on disk before the name points at them
        tmp.replace(p)
    finally:
        tmp.unlink(missing_ok=True)


def unwritable_reason(path: str | Path) -> str | None:
    """Why a report cannot be written to ``path`` (``None`` when it can): a directory in its
    place, a folder that cannot be created or written, or a read-only file.  Creates the folder
    when missing, as :func:`write_report` would."""
    p = Path(path)
    if p.is_dir():
        return f"cannot write a report to {p}: it is a directory"
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"cannot create the folder of {p}: {exc.strerror or exc}"
    if not os.access(p.parent, os.W_OK | os.X_OK):
        return f"cannot write a report to {p}: its folder is not writable"
    if p.exists() and not os.access(p, os.W_OK):
        return f"cannot write a report to {p}: the file is read-only"
    return None


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether ``a`` and ``b`` name one file: the same path once ``~``, relative parts and
    symlinks are resolved, or two names (hard links) of one existing file.  Never raises."""
    left, right = Path(a).expanduser(), Path(b).expanduser()
    try:
        if left.resolve() == right.resolve():
            return True
    except (OSError, RuntimeError):  # a symlink loop
        pass
    try:
        return os.path.samefile(left, right)
    except OSError:  # either is missing or unreadable: not one existing file
        return False
