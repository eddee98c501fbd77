"""Reading the prompt texts in ``prompts/templates/*.txt``.

Every sentence a model is shown lives in one of those files; code only picks and fills them.

- A *plain* template is one whole file.  Its text is the file content with trailing whitespace
  removed (inner blank lines and indentation are kept).
- A *sectioned* file groups small related texts (per graph type, per infeasibility reason).  A
  line ``=== name ===`` starts the section ``name``; each section's text is its lines up to the
  next header, trailing whitespace removed.
- Placeholders are :class:`string.Template` names (``$n``, ``${n}``); ``$$`` is a literal
  dollar.  :meth:`TemplateSet.render` substitutes strictly: a missing value raises
  :class:`KeyError` and an unused value raises :class:`ValueError`, so templates and code
  cannot drift apart silently.

Packaged files are read once per process (``importlib.resources``, so an installed wheel
works) and the results are cached; the returned objects are immutable.

A run's texts are a :class:`TemplateSet`: the packaged templates, with the overrides of a
``--gi-prompts=DIR`` folder (``<name>.txt`` files) over them — the way to gate a prompt change in
CI.  The run holds its set (``RunConfig.templates``) and hands it to whatever renders a prompt;
nothing here is process-wide state.  A sectioned override replaces the sections it holds; the
others stay packaged.  An overridden text may use some or all of the packaged text's
placeholders but no other (a prompt change may drop a sentence and its value), checked when the
folder is read (:meth:`TemplateSet.from_folder`), before any request; only packaged texts are
filled strictly both ways.  The cell's label does not change, so the run compares with the same
baseline; the report records the set (its folder's name and :meth:`TemplateSet.sha256`), so
runs of different sets are told apart.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class TemplateSet:
    """The prompt texts of one run: the packaged templates, with ``overrides`` (``(name,
    text)`` pairs) over them.  :data:`PACKAGED` is the set without overrides.  Building a set
    checks every override, so a set never holds a text that fails when filled.

    Raises:
        ValueError: an override names no packaged template, or does not fit it (a malformed
            sectioned text, a section or placeholder the packaged text does not have).

    Attributes:
        overrides: the overriding files' texts by template name, in name order.
        folder: the ``--gi-prompts`` folder they were read from (``None``: none).
    """

    overrides: tuple[tuple[str, str], ...] = ()
    folder: Path | None = None
    _parsed: Mapping[str, Template | Mapping[str, Template]] = field(
        init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        parsed: dict[str, Template | Mapping[str, Template]] = {}
        for name, text in self.overrides:
            _check_override(name, text)
            if _is_sectioned(name):  # the override's sections over the packaged ones
                merged = dict(_packaged_sections(name))
                merged.update({key: _Override(t.template) for key, t in
                               parse_sections(text, f"{name}.txt (--gi-prompts)").items()})
                parsed[name] = MappingProxyType(merged)
            else:
                parsed[name] = _Override(text)
        object.__setattr__(self, "_parsed", MappingProxyType(parsed))

    @classmethod
    def from_folder(cls, directory: str | Path) -> TemplateSet:
        """The packaged templates with those in ``directory`` (``<name>.txt`` files) over the
        packaged ones of the same names.  Every override is checked at once (see the module).

        Raises:
            ValueError: not a folder, a file that is no known template (the message lists the
                known names), a file that cannot be read as UTF-8 text, a malformed sectioned
                file, a section the packaged file does not have, a text with a placeholder the
                packaged one does not have, or no template file at all.
        """
        folder = Path(directory)
        if not folder.is_dir():
            raise ValueError(f"--gi-prompts: {folder} is not a folder")
        found: dict[str, str] = {}
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
        if not found:
            raise ValueError(f"--gi-prompts: {folder} holds no <template>.txt file")
        return cls(tuple(found.items()), folder)

    @property
    def names(self) -> tuple[str, ...]:
        """The names of the overridden templates."""
        return tuple(name for name, _ in self.overrides)

    def sha256(self) -> str | None:
        """``sha256:<hex>`` of the overrides — each template's name and text, in name order —
        so two sets hash alike exactly when they override the same templates with the same
        texts (wherever their folders are); ``None`` for the packaged set."""
        if not self.overrides:
            return None
        digest = hashlib.sha256()
        for name, text in sorted(self.overrides):
            for part in (name, text):
                data = part.encode("utf-8")
                digest.update(len(data).to_bytes(8, "big") + data)
        return "sha256:" + digest.hexdigest()

    def template(self, name: str) -> Template:
        """The plain template ``<name>.txt`` of this set.

        Raises:
            KeyError: there is no such file.
        """
        own = self._parsed.get(name)
        if isinstance(own, Template):
            return own
        return _packaged_template(name)

    def sections(self, name: str) -> Mapping[str, Template]:
        """The sections of the sectioned file ``<name>.txt`` of this set, by section name.

        Raises:
            KeyError: there is no such file.
            ValueError: the file is malformed (see :func:`parse_sections`).
        """
        own = self._parsed.get(name)
        if own is not None and not isinstance(own, Template):
            return own
        return _packaged_sections(name)

    def render(self, name: str, /, **values: object) -> str:
        """The plain template ``name`` filled with ``values`` (strict, see module doc)."""
        return fill(self.template(name), values)

    def render_section(self, file: str, section: str, /, **values: object) -> str:
        """Section ``section`` of the sectioned file ``file`` filled with ``values`` (strict).

        Raises:
            KeyError: no such file or section (or a missing value).
        """
        secs = self.sections(file)
        if section not in secs:
            raise KeyError(f"no section {section!r} in {file}.txt (known: {', '.join(secs)})")
        return fill(secs[section], values)


def _is_sectioned(name: str) -> bool:
    return _packaged(name).lstrip().startswith("===")


def _check_override(name: str, text: str) -> None:
    """Refuse an override that would fail when filled (see the module).

    Raises:
        ValueError: the override's placeholders or sections do not fit the packaged text.
    """
    where = f"--gi-prompts: {name}.txt"
    if name not in available():
        raise ValueError(f"{where} is not a prompt template (known: {', '.join(available())})")
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


@cache
def _packaged(name: str) -> str:
    if name not in available():
        raise KeyError(f"no prompt template {name!r} (known: {', '.join(available())})")
    path = resources.files(__package__).joinpath(_DIR, f"{name}.txt")
    return path.read_text(encoding="utf-8").replace("\r\n", "\n").rstrip()


@cache
def _packaged_template(name: str) -> Template:
    return Template(_packaged(name))


@cache
def _packaged_sections(name: str) -> Mapping[str, Template]:
    return MappingProxyType(parse_sections(_packaged(name), f"{name}.txt"))


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


PACKAGED: Final = TemplateSet()
"""The packaged templates, without overrides: the texts of a run without ``--gi-prompts``."""
