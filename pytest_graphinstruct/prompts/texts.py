"""Reading the prompt texts in ``prompts/templates/*.txt``.

Every sentence a model is shown lives in one of those files; code only picks and fills them.

- A *plain* template is one whole file.  Its text is the file content with trailing whitespace
  removed (inner blank lines and indentation are kept).
- A *sectioned* file groups small related texts (per graph type, per infeasibility reason).  A
  line ``=== name ===`` starts the section ``name``; each section's text is its lines up to the
  next header, trailing whitespace removed.
- Placeholders are :class:`string.Template` names (``$n``, ``${n}``); ``$$`` is a literal
  dollar.  :func:`render` substitutes strictly: a missing value raises :class:`KeyError` and an
  unused value raises :class:`ValueError`, so templates and code cannot drift apart silently.

Files are read once per process (``importlib.resources``, so an installed wheel works) and the
results are cached; the returned objects are immutable.

:func:`use_overrides` (``--gi-prompts=DIR``) makes a folder of ``<name>.txt`` files replace the
packaged templates of the same names for the rest of the process — the way to gate a prompt
change in CI.  A sectioned override replaces the sections it holds; the others stay packaged.
An overridden text may use some or all of the packaged text's placeholders but no other (a
prompt change may drop a sentence and its value), checked when the folder is read, before any
request; only packaged texts are filled strictly both ways.  The cell's label does
not change, so the run compares with the same baseline.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from string import Template
from types import MappingProxyType
from typing import Final

_DIR: Final = "templates"
_SECTION_RE: Final = re.compile(r"^=== ([A-Za-z0-9_]+) ===$")


@cache
def available() -> tuple[str, ...]:
    """Names (without ``.txt``) of every template file shipped with the package, sorted."""
    root = resources.files(__package__).joinpath(_DIR)
    return tuple(sorted(p.name[:-4] for p in root.iterdir() if p.name.endswith(".txt")))


_overrides: dict[str, str] = {}


def use_overrides(directory: str | Path | None) -> tuple[str, ...]:
    """Read the templates in ``directory`` (``<name>.txt`` files) instead of the packaged
    ones of the same names from now on in this process; ``None`` restores the packaged ones.
    Returns the names overridden.  Every override is checked at once (see the module).

    Raises:
        ValueError: not a folder, a file that is no known template (the message lists the
            known names), a file that cannot be read as UTF-8 text, a malformed sectioned file,
            a section the packaged file does not have, or a text with a placeholder the
            packaged one does not have.
    """
    found: dict[str, str] = {}
    if directory is not None:
        folder = Path(directory)
        if not folder.is_dir():
            raise ValueError(f"--gi-prompts: {folder} is not a folder")
        for f in sorted(folder.iterdir()):
            if f.suffix != ".txt":
                continue
            if f.stem not in available():
                raise ValueError(f"--gi-prompts: {f.name} is not a prompt template (known: "
                                 f"{', '.join(available())})")
            try:
                found[f.stem] = f.read_text(encoding="utf-8").replace("\r\n", "\n").rstrip()
            except (OSError, UnicodeDecodeError) as exc:
                raise ValueError(f"--gi-prompts: cannot read {f}: {exc}") from None
            _check_override(f.stem, found[f.stem])
        if not found:
            raise ValueError(f"--gi-prompts: {folder} holds no <template>.txt file")
    _overrides.clear()
    _overrides.update(found)
    _read.cache_clear()
    template.cache_clear()
    sections.cache_clear()
    return tuple(found)


def _is_sectioned(name: str) -> bool:
    return _packaged(name).lstrip().startswith("===")


def _check_override(name: str, text: str) -> None:
    """Refuse an override that would fail when filled (see :func:`use_overrides`)."""
    where = f"--gi-prompts: {name}.txt"
    if not _is_sectioned(name):
        _same_placeholders(where, Template(text), Template(_packaged(name)))
        return
    mine = parse_sections(text, f"{where}")
    packaged = parse_sections(_packaged(name), f"{name}.txt")
    unknown = [k for k in mine if k not in packaged]
    if unknown:
        raise ValueError(f"{where}: no packaged section {', '.join(map(repr, unknown))} (its "
                         f"sections: {', '.join(packaged)})")
    for key, text_template in mine.items():
        _same_placeholders(f"{where}, section {key!r}", text_template, packaged[key])


def _same_placeholders(where: str, mine: Template, packaged: Template) -> None:
    if not mine.is_valid():
        raise ValueError(f"{where}: a '$' that is no placeholder (write '$$' for a dollar)")
    unknown = set(mine.get_identifiers()) - set(packaged.get_identifiers())
    if unknown:
        allowed = ", ".join("$" + n for n in packaged.get_identifiers()) or "no placeholder"
        raise ValueError(f"{where}: unknown {', '.join('$' + n for n in sorted(unknown))} "
                         f"(the packaged text may use {allowed})")


class _Override(Template):
    """A text from ``--gi-prompts``: filled with the values it uses (it may drop some)."""


def _packaged(name: str) -> str:
    path = resources.files(__package__).joinpath(_DIR, f"{name}.txt")
    return path.read_text(encoding="utf-8").replace("\r\n", "\n").rstrip()


@cache
def _read(name: str) -> str:
    if name not in available():
        raise KeyError(f"no prompt template {name!r} (known: {', '.join(available())})")
    if name in _overrides:
        return _overrides[name]
    return _packaged(name)


@cache
def template(name: str) -> Template:
    """The plain template ``templates/<name>.txt``.

    Raises:
        KeyError: there is no such file.
    """
    return (_Override if name in _overrides else Template)(_read(name))


@cache
def sections(name: str) -> Mapping[str, Template]:
    """The sections of the sectioned file ``templates/<name>.txt``, by section name.

    Raises:
        KeyError: there is no such file.
        ValueError: the file is malformed (see :func:`parse_sections`).
    """
    if name in _overrides and name in available():  # the override's sections over the rest
        merged = parse_sections(_packaged(name), f"{name}.txt")
        merged.update({key: _Override(t.template) for key, t in
                       parse_sections(_overrides[name], f"{name}.txt (--gi-prompts)").items()})
        return MappingProxyType(merged)
    return MappingProxyType(parse_sections(_read(name), f"{name}.txt"))


def parse_sections(text: str, where: str = "<text>") -> dict[str, Template]:
    """Split a sectioned text into ``{section name: template}``, in file order.

    Raises:
        ValueError: text (other than blank lines) before the first ``=== name ===`` header, or
            a section name used twice; the message names ``where`` and the line.
    """
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for lineno, line in enumerate(text.split("\n"), 1):
        m = _SECTION_RE.match(line)
        if m is not None:
            if m.group(1) in out:
                raise ValueError(f"{where}:{lineno}: section {m.group(1)!r} repeated")
            current = out[m.group(1)] = []
        elif current is None:
            if line.strip():
                raise ValueError(f"{where}:{lineno}: text before the first section header")
        else:
            current.append(line)
    return {k: Template("\n".join(v).strip("\n").rstrip()) for k, v in out.items()}


def placeholders(t: Template) -> frozenset[str]:
    """The placeholder names used in ``t``."""
    return frozenset(t.get_identifiers())


def fill(t: Template, values: Mapping[str, object]) -> str:
    """``t`` with ``values`` substituted, strictly (see module doc).

    Raises:
        KeyError: a placeholder of ``t`` has no value.
        ValueError: ``values`` holds a name ``t`` does not use (allowed for a text from
            ``--gi-prompts``), or ``t`` is malformed.
    """
    extra = set(values) - placeholders(t)
    if isinstance(t, _Override):  # a user's text may leave a value out
        values = {k: v for k, v in values.items() if k not in extra}
    elif extra:
        raise ValueError(f"values not used by the template: {', '.join(sorted(extra))}")
    return t.substitute({k: str(v) for k, v in values.items()})


def render(name: str, /, **values: object) -> str:
    """The plain template ``name`` filled with ``values`` (strict, see module doc)."""
    return fill(template(name), values)


def render_section(file: str, section: str, /, **values: object) -> str:
    """Section ``section`` of the sectioned file ``file`` filled with ``values`` (strict).

    Raises:
        KeyError: no such file or section (or a missing value).
    """
    secs = sections(file)
    if section not in secs:
        raise KeyError(f"no section {section!r} in {file}.txt (known: {', '.join(secs)})")
    return fill(secs[section], values)
