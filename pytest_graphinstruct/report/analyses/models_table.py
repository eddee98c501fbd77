"""The models table: what the leaderboard and the paper's analyses know about a model.

A model has a key, a display name, a family, a size, an optional ``scale`` (its order within
the family, for the same-family scaling analysis) and aliases: the API ids and file names it
goes by.  The packaged table is ``report/data/models.toml``; :func:`load_models_table` reads it
and, on top, users' files of the same shape (``--models-table FILE``): a user entry whose key or
an alias matches a packaged entry replaces it.

Names match as :func:`pytest_graphinstruct.methods.caap.normalise` compares them (lower case,
letters and digits only), so ``gpt-4o-mini``, ``GPT_4o_Mini`` and the reference release's file
name ``gpt4omini`` are one model.

**One tier source.**  A model's capability tier is the CAAP decision table's
(``methods/data/caap.toml``), read through :func:`~pytest_graphinstruct.methods.caap.model_tier`;
the paper's three tiers (§3.1: T1, T2, T3) are CAAP's four with ``T2-GPT`` and ``T2-open`` read
as ``T2``.  An entry may state ``tier`` (a CAAP tier) only for a model the CAAP table does not
list; it then reaches CAAP's lookup as an extension (``extra``), never as a second opinion.  A
model neither table knows has no tier (``None``): the analyses leave it out of tier
comparisons and say so, rather than guess CAAP's default.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.methods.caap import (
    TIERS,
    CaapTable,
    canonical_tier,
    default_table,
    model_tier,
    normalise,
)

PAPER_TIERS = ("T1", "T2", "T3")
"""The paper's capability tiers (§3.1)."""

_TOP_KEYS = frozenset({"version", "model"})
_ENTRY_KEYS = frozenset({"key", "display", "family", "size", "scale", "aliases", "tier"})


class ModelsTableError(GraphInstructError, ValueError):
    """A models table file is malformed; the message is one line naming the file and entry."""


def paper_tier(caap_tier: str | None) -> str | None:
    """A CAAP tier as the paper's: ``T2-GPT``/``T2-open`` → ``T2``; ``None`` stays ``None``."""
    if caap_tier is None:
        return None
    return "T2" if caap_tier.startswith("T2") else caap_tier


@dataclass(frozen=True)
class ModelInfo:
    """What the table says about one model (``known`` is false for a model no table lists:
    its display name is then the name as given, and family, size, scale and tier are absent)."""

    key: str
    display: str
    family: str | None = None
    size: str | None = None
    scale: float | None = None
    aliases: tuple[str, ...] = ()
    caap_tier: str | None = None
    known: bool = True

    @property
    def tier(self) -> str | None:
        """The paper's tier (T1, T2, T3), ``None`` when no table knows the model."""
        return paper_tier(self.caap_tier)

    def names(self) -> tuple[str, ...]:
        """Every name of the model: key, display name and aliases."""
        return (self.key, self.display, *self.aliases)


def _forms(name: str) -> list[str]:
    """The normalised forms a name is looked up by: whole, and the part after the last ``/``."""
    forms = [normalise(name)]
    if "/" in name:
        forms.append(normalise(name.rsplit("/", 1)[1]))
    return [f for f in forms if f]


def _listed_tier(names: Iterable[str], table: CaapTable) -> str | None:
    """The CAAP table's tier of the first of ``names`` it lists, else ``None``."""
    for name in names:
        for form in _forms(name):
            if form in table.tiers:
                return table.tiers[form]
    return None


@dataclass(frozen=True)
class ModelsTable:
    """The loaded table: :meth:`info` finds a model by any of its names."""

    entries: tuple[ModelInfo, ...]

    @functools.cached_property
    def _index(self) -> dict[str, ModelInfo]:
        index: dict[str, ModelInfo] = {}
        for entry in self.entries:
            for name in entry.names():
                for form in _forms(name):
                    index.setdefault(form, entry)
        return index

    def info(self, name: str) -> ModelInfo:
        """The entry of ``name`` (matched by key, display name or alias); for a model no entry
        names, a :class:`ModelInfo` with ``known=False``, its tier the CAAP table's when that
        table lists the name."""
        for form in _forms(name):
            if form in self._index:
                return self._index[form]
        tier = _listed_tier([name], default_table())
        return ModelInfo(key=name, display=name, caap_tier=tier, known=tier is not None)


def _entry(raw: Any, i: int, source: str, table: CaapTable) -> ModelInfo:
    where = f"{source}: model #{i + 1}"
    if not isinstance(raw, Mapping):
        raise ModelsTableError(f"{where}: expected a table of key = value")
    unknown = sorted(set(raw) - _ENTRY_KEYS)
    if unknown:
        raise ModelsTableError(f"{where}: unknown field(s) {', '.join(unknown)} (known: "
                               f"{', '.join(sorted(_ENTRY_KEYS))})")
    key = raw.get("key")
    if not isinstance(key, str) or not normalise(key):
        raise ModelsTableError(f"{where}: 'key' must be a non-empty name")
    where = f"{source}: model {key!r}"
    texts: dict[str, str | None] = {}
    for name in ("display", "family", "size"):
        value = raw.get(name)
        if value is not None and not isinstance(value, str):
            raise ModelsTableError(f"{where}: {name!r} must be text")
        texts[name] = value
    aliases = raw.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and normalise(a)
                                                for a in aliases):
        raise ModelsTableError(f"{where}: 'aliases' must be a list of names")
    scale = raw.get("scale")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, int | float)
                              or scale <= 0):
        raise ModelsTableError(f"{where}: 'scale' must be a positive number")
    names = [key, *(t for t in (texts["display"],) if t), *aliases]
    listed = _listed_tier(names, table)
    tier = listed
    if "tier" in raw:
        stated = canonical_tier(raw["tier"])
        if stated is None:
            raise ModelsTableError(f"{where}: tier {raw['tier']!r} is not one of "
                                   f"{', '.join(TIERS)}")
        if listed is not None:
            raise ModelsTableError(
                f"{where}: states tier {stated}, but the CAAP table (methods/data/caap.toml) "
                f"already lists it as {listed}; a model's tier has one source")
        tier = model_tier(key, {key: stated}, table=table)
    return ModelInfo(key=key, display=texts["display"] or key, family=texts["family"],
                     size=texts["size"], scale=None if scale is None else float(scale),
                     aliases=tuple(aliases), caap_tier=tier)


def parse_models_table(text: str, *, source: str = "<models table>",
                       caap: CaapTable | None = None) -> tuple[ModelInfo, ...]:
    """The entries of one models-table TOML text, checked.

    Raises:
        ModelsTableError: not TOML, an unknown field, a wrong type, two entries sharing a
            name, or a ``tier`` for a model the CAAP table lists.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ModelsTableError(f"{source}: not TOML ({exc})") from None
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise ModelsTableError(f"{source}: unknown top-level key(s) {', '.join(unknown)}")
    raw = data.get("model", [])
    if not isinstance(raw, list):
        raise ModelsTableError(f"{source}: 'model' must be an array of tables ([[model]])")
    table = caap or default_table()
    entries = tuple(_entry(r, i, source, table) for i, r in enumerate(raw))
    owner: dict[str, str] = {}
    for entry in entries:
        for name in entry.names():
            for form in _forms(name):
                if owner.setdefault(form, entry.key) != entry.key:
                    raise ModelsTableError(f"{source}: the name {name!r} belongs to both "
                                           f"{owner[form]!r} and {entry.key!r}")
    return entries


def merge(base: Sequence[ModelInfo], override: Sequence[ModelInfo]) -> tuple[ModelInfo, ...]:
    """``base`` with every entry that shares a name with an ``override`` entry replaced by it
    (overrides come first, in their order; the rest of ``base`` keeps its order)."""
    taken = {form for entry in override for name in entry.names() for form in _forms(name)}
    kept = [e for e in base
            if not any(form in taken for name in e.names() for form in _forms(name))]
    return (*override, *kept)


@functools.cache
def packaged_entries() -> tuple[ModelInfo, ...]:
    """The packaged table's entries (``report/data/models.toml``), read and checked once."""
    text = (resources.files("pytest_graphinstruct.report") / "data" / "models.toml"
            ).read_text(encoding="utf-8")
    return parse_models_table(text, source="models.toml")


def load_models_table(paths: Sequence[str | Path] = ()) -> ModelsTable:
    """The packaged table, extended and overridden by each file of ``paths`` in turn.

    Raises:
        ModelsTableError: a file cannot be read or is malformed (one line naming it).
    """
    entries = packaged_entries()
    for path in paths:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ModelsTableError(f"{p}: cannot be read ({type(exc).__name__}: {exc})") \
                from None
        entries = merge(entries, parse_models_table(text, source=str(p)))
    return ModelsTable(entries)
