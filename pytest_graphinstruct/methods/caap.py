"""CAAP, capability-aware adaptive prompting (paper App. E, Alg. 2, Tab. 8–9).

For each instruction CAAP picks one prompting strategy and, in some cells, prompt extras, from a
decision table over (row, model tier).  The table is data, ``methods/data/caap.toml``, checked
as a whole when loaded; :func:`load_table` also reads a user's own file of the same shape.

Rows: ``L0``; ``L1-simple`` (``graph_type`` is one of the table's simple types: tree, cycle,
star, path, complete) and ``L1-complex`` (every other L1 instruction, with or without a graph
type); ``L2`` … ``L5``.  Tiers: ``T1``, ``T2-GPT`` (CoT-negative GPT family), ``T2-open``
(CoT-positive open-weight models), ``T3``.  A model no tier lists gets the table's
``default_tier`` (``T2-GPT``, as in the reference release).

Extras, always in this order and each only when it has content:

* ``checklist`` — every explicit constraint as written, as numbered ``[ ]`` lines, then a line
  asking the model to count before answering;
* ``formula`` — how each numeric property the explicit constraints name (density, clustering,
  average path length, diameter, modularity) is computed, as the verifier computes it; omitted
  when none is named;
* ``domain`` — the rendered domain prior (:mod:`.priors`); omitted when the instruction has no
  domain with a prior.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, NamedTuple

from pytest_graphinstruct.answers import Message
from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.methods.priors import render_prior
from pytest_graphinstruct.prompts.texts import PACKAGED, TemplateSet
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.vocab import STRATEGIES

TIERS: Final[tuple[str, ...]] = ("T1", "T2-GPT", "T2-open", "T3")
ROWS: Final[tuple[str, ...]] = ("L0", "L1-simple", "L1-complex", "L2", "L3", "L4", "L5")
EXTRAS: Final[tuple[str, ...]] = ("checklist", "formula", "domain")
"""The prompt extras, in the order a decision lists them."""

_TOP_KEYS: Final = frozenset({"version", "default_tier", "l1_simple_graph_types", "tiers", "cell"})
_CELL_KEYS: Final = frozenset({"row", "tiers", "strategy", "extras", "rationale"})
_DATED: Final = re.compile(r"[-_@](\d{4}-\d{2}-\d{2}|\d{8})$")

# Suite constraint key -> name in the prompt; how the verifier computes it is the section of
# that key in prompts/templates/caap_extras.txt.
_FORMULAS: Final = (
    ("density", "density"),
    ("clustering_coefficient", "clustering coefficient"),
    ("average_path_length", "average path length"),
    ("diameter", "diameter"),
    ("modularity", "modularity"),
)


class CaapTableError(GraphInstructError, ValueError):
    """A CAAP table (or a model-tier mapping) is malformed; the message is one line naming the
    source and the problem."""


class Cell(NamedTuple):
    """One cell of the decision table: ``(row, tier)``, e.g. ``Cell('L2', 'T3')``."""

    row: str
    tier: str

    def __str__(self) -> str:
        return f"{self.row}/{self.tier}"


@dataclass(frozen=True)
class Rule:
    """What a cell prescribes: a strategy, the extras to attach (in :data:`EXTRAS` order) and
    why."""

    strategy: str
    extras: tuple[str, ...]
    rationale: str


@dataclass(frozen=True)
class CaapTable:
    """A checked decision table: a rule for every (row, tier), the model-name → tier map
    (names normalised, see :func:`model_tier`), the default tier and L1's simple types."""

    rules: Mapping[Cell, Rule]
    tiers: Mapping[str, str]
    default_tier: str
    simple_graph_types: frozenset[str]
    source: str = field(default="", compare=False)


@dataclass(frozen=True)
class CaapDecision:
    """CAAP's choice for one instruction and model.

    Attributes:
        strategy: one of ``vocab.STRATEGIES``.
        extras: ``(name, text)`` pairs in :data:`EXTRAS` order; an extra the cell asks for but
            the instruction gives no content to (no numeric property, no known domain) is left
            out.
        rationale: why (the cell's rationale; never empty).
        cell: the table cell that decided.
    """

    strategy: str
    extras: tuple[tuple[str, str], ...]
    rationale: str
    cell: Cell


# -- the table ---------------------------------------------------------------------------------

@functools.cache
def default_table() -> CaapTable:
    """The packaged table (``methods/data/caap.toml``), loaded and checked once."""
    text = (resources.files("pytest_graphinstruct.methods") / "data" / "caap.toml"
            ).read_text(encoding="utf-8")
    return parse_table(text, source="caap.toml")


def load_table(path: str | Path) -> CaapTable:
    """Read and check a CAAP table file of the packaged table's shape.

    Raises:
        CaapTableError: unreadable, not TOML, or not a complete, valid table.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise CaapTableError(f"CAAP table {path}: cannot read: {e.strerror or e}") from None
    return parse_table(text, source=str(path))


def parse_table(text: str, *, source: str = "<caap table>") -> CaapTable:
    """Parse and check a CAAP table from TOML text.

    Raises:
        CaapTableError: the first problem found, in one line (``CAAP table <source>: ...``).
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise CaapTableError(f"CAAP table {source}: not valid TOML: {e}") from None
    try:
        return _check(data, source)
    except _Bad as e:
        raise CaapTableError(f"CAAP table {source}: {e}") from None


class _Bad(Exception):
    pass


def _check(data: dict[str, Any], source: str) -> CaapTable:
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise _Bad(f"unknown key {unknown[0]!r} (known: {', '.join(sorted(_TOP_KEYS))})")
    if data.get("version") != 1:
        raise _Bad(f"version must be 1, got {data.get('version')!r}")
    default = _tier(data.get("default_tier"), "default_tier")
    simple = _names(data.get("l1_simple_graph_types"), "l1_simple_graph_types")
    raw_tiers = data.get("tiers", {})
    if not isinstance(raw_tiers, dict):
        raise _Bad("[tiers] must be a table of tier = [model names]")
    tiers: dict[str, str] = {}
    for tier_name, models in raw_tiers.items():
        tier = _tier(tier_name, "[tiers]")
        for model in _names(models, f"tiers.{tier_name}"):
            key = normalise(model)
            if tiers.get(key, tier) != tier:
                raise _Bad(f"model {model!r} is listed under both {tiers[key]} and {tier}")
            tiers[key] = tier
    cells = data.get("cell")
    if not isinstance(cells, list) or not cells:
        raise _Bad("no [[cell]] entries")
    rules: dict[Cell, Rule] = {}
    for i, entry in enumerate(cells, 1):
        for cell, rule in _cell(entry, i):
            if cell in rules:
                raise _Bad(f"cell {cell} is given twice (second time in [[cell]] #{i})")
            rules[cell] = rule
    missing = [str(Cell(r, t)) for r in ROWS for t in TIERS if Cell(r, t) not in rules]
    if missing:
        raise _Bad(f"no rule for cell {missing[0]}"
                   + (f" and {len(missing) - 1} more" if len(missing) > 1 else ""))
    return CaapTable(MappingProxyType(rules), MappingProxyType(tiers), default,
                     frozenset(s.lower() for s in simple), source)


def _cell(entry: Any, i: int) -> list[tuple[Cell, Rule]]:
    where = f"[[cell]] #{i}"
    if not isinstance(entry, dict):
        raise _Bad(f"{where} is not a table")
    unknown = sorted(set(entry) - _CELL_KEYS)
    if unknown:
        raise _Bad(f"{where}: unknown key {unknown[0]!r} "
                   f"(known: {', '.join(sorted(_CELL_KEYS))})")
    row = entry.get("row")
    if row not in ROWS:
        raise _Bad(f"{where}: row {row!r} is not one of {', '.join(ROWS)}")
    where = f"{where} (row {row})"
    tiers = [_tier(t, where) for t in _names(entry.get("tiers"), f"{where}: tiers")]
    strategy = entry.get("strategy")
    if strategy not in STRATEGIES:
        raise _Bad(f"{where}: strategy {strategy!r} is not one of {', '.join(STRATEGIES)}")
    extras = _names(entry.get("extras", []), f"{where}: extras", empty_ok=True)
    for x in extras:
        if x not in EXTRAS:
            raise _Bad(f"{where}: extra {x!r} is not one of {', '.join(EXTRAS)}")
    rationale = entry.get("rationale")
    if not isinstance(rationale, str) or not rationale.strip():
        raise _Bad(f"{where}: rationale must be a non-empty string")
    rule = Rule(strategy, tuple(x for x in EXTRAS if x in extras), rationale.strip())
    return [(Cell(row, t), rule) for t in tiers]


def _names(value: Any, where: str, *, empty_ok: bool = False) -> list[str]:
    if (not isinstance(value, list) or not (value or empty_ok)
            or not all(isinstance(v, str) and v.strip() for v in value)):
        raise _Bad(f"{where} must be a {'' if empty_ok else 'non-empty '}list of strings, "
                   f"got {value!r}")
    return [v.strip() for v in value]


def _tier(value: Any, where: str) -> str:
    tier = canonical_tier(value)
    if tier is None:
        raise _Bad(f"{where}: tier {value!r} is not one of {', '.join(TIERS)}")
    return tier


# -- model tiers -------------------------------------------------------------------------------

def canonical_tier(value: object) -> str | None:
    """``value`` as one of :data:`TIERS` (case-insensitive: ``'t2-gpt'`` → ``'T2-GPT'``), or
    ``None``."""
    if not isinstance(value, str):
        return None
    return next((t for t in TIERS if t.lower() == value.strip().lower()), None)


def normalise(model: str) -> str:
    """A model name as tier lookup compares it: lower case, letters and digits only
    (``'GPT-4.1'`` → ``'gpt41'``)."""
    return re.sub(r"[^a-z0-9]", "", model.lower())


def _candidates(model: str) -> list[str]:
    """The forms of ``model`` tried in order: as given, undated, the part after the last
    ``/``, that part undated."""
    name = model.strip().lower()
    forms = [name, _DATED.sub("", name)]
    if "/" in name:
        last = name.rsplit("/", 1)[1]
        forms += [last, _DATED.sub("", last)]
    return list(dict.fromkeys(normalise(f) for f in forms if f))


def model_tier(model: str, extra: Mapping[str, str] | None = None, *,
               table: CaapTable | None = None) -> str:
    """The tier of ``model``.

    Lookup is case-insensitive and ignores punctuation (``gpt-4o-mini`` = ``gpt4omini`` =
    ``GPT_4o_Mini``); a provider prefix (``openai/gpt-4o``) and a trailing date
    (``gpt-4o-mini-2024-07-18``) are tried away too.  ``extra`` (``{model: tier}``, names and
    tiers matched the same way) is consulted before the table, so it both extends and
    overrides it.  A model found nowhere gets the table's ``default_tier`` (``T2-GPT``).

    Raises:
        CaapTableError: ``extra`` maps a model to something that is not a tier.
    """
    table = table or default_table()
    user: dict[str, str] = {}
    for name, tier in (extra or {}).items():
        canon = canonical_tier(tier)
        if canon is None:
            raise CaapTableError(f"model tiers: {name!r} is mapped to {tier!r}, "
                                 f"which is not one of {', '.join(TIERS)}")
        user[normalise(name)] = canon
    forms = _candidates(model)
    for mapping in (user, table.tiers):
        for form in forms:
            if form in mapping:
                return mapping[form]
    return table.default_tier


# -- the decision ------------------------------------------------------------------------------

def row_of(instruction: Instruction, table: CaapTable | None = None) -> str:
    """The table row of ``instruction`` (one of :data:`ROWS`)."""
    table = table or default_table()
    if instruction.level == 1:
        simple = instruction.graph_type in table.simple_graph_types
        return "L1-simple" if simple else "L1-complex"
    if f"L{instruction.level}" not in ROWS:
        raise ValueError(f"instruction {instruction.id} has level {instruction.level}, not 0-5")
    return f"L{instruction.level}"


def select(instruction: Instruction, model: str, *, tiers: Mapping[str, str] | None = None,
           table: CaapTable | None = None, templates: TemplateSet = PACKAGED) -> CaapDecision:
    """CAAP's strategy and extras for ``instruction`` answered by ``model``.

    Args:
        tiers: the user's ``{model: tier}`` additions and overrides (see :func:`model_tier`).
        table: a decision table (default: the packaged one).
        templates: the run's prompt texts, which word the extras (default: the packaged ones).

    Raises:
        CaapTableError: ``tiers`` names something that is not a tier.
    """
    table = table or default_table()
    cell = Cell(row_of(instruction, table), model_tier(model, tiers, table=table))
    rule = table.rules[cell]
    extras = tuple((name, text) for name in rule.extras
                   if (text := _EXTRA_TEXT[name](instruction, templates)))
    return CaapDecision(rule.strategy, extras, rule.rationale, cell)


def checklist(instruction: Instruction, templates: TemplateSet = PACKAGED) -> str:
    """The explicit constraints as a numbered checklist ending with a request to count; ``''``
    when there are none."""
    if not instruction.explicit:
        return ""
    items = [f"{i}. [ ] {c.text}" for i, c in enumerate(instruction.explicit, 1)]
    return "\n".join([templates.render_section("caap_extras", "checklist_header"), *items,
                      templates.render_section("caap_extras", "checklist_footer")])


def formulas(instruction: Instruction, templates: TemplateSet = PACKAGED) -> str:
    """How each numeric property the explicit constraints name is computed (one bullet each,
    in a fixed order); ``''`` when none is named."""
    keys = {c.key for c in instruction.explicit}
    bullets = [f"- {label}: {templates.render_section('caap_extras', key)}"
               for key, label in _FORMULAS if key in keys]
    if not bullets:
        return ""
    return "\n".join([templates.render_section("caap_extras", "formulas_header"), *bullets])


def domain_prior(instruction: Instruction, templates: TemplateSet = PACKAGED) -> str:
    """The rendered prior of the instruction's domain (the ``domain`` field, else a
    ``domain=`` constraint); ``''`` when it has none."""
    domain = instruction.domain
    if domain is None:
        c = instruction.first("domain")
        domain = str(c.value) if c is not None else None
    return render_prior(domain, instruction.num_nodes, templates)


_EXTRA_TEXT: Final = MappingProxyType({
    "checklist": checklist, "formula": formulas, "domain": domain_prior,
})


def augment(messages: Sequence[Message], decision: CaapDecision) -> tuple[Message, ...]:
    """``messages`` (a strategy's prompt) with the decision's extras in the last user message:
    the domain prior before the prompt, formulas and the checklist after it, each set off by a
    blank line (the release's layout)."""
    extras = dict(decision.extras)
    out = list(messages)
    i = max(n for n, m in enumerate(out) if m.role == "user")
    parts = [extras.get("domain", ""), out[i].content, extras.get("formula", ""),
             extras.get("checklist", "")]
    out[i] = Message("user", "\n\n".join(p for p in parts if p))
    return tuple(out)
