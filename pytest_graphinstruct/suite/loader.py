"""Loading suites in the GraphInstruct JSON schema into :class:`Suite` objects.

A suite directory holds ``level_0.json`` … ``level_5.json`` (a subset is fine), each a JSON
array of instruction records.  Everything is validated at load time — field types, ids, levels,
every constraint string, every L5 base graph — and all problems of a suite are reported in one
:class:`~pytest_graphinstruct.errors.SuiteError` whose lines each name the file, the instruction
id and the offending value.  A suite that loads never fails later because of its own data.

An instruction id is untrusted text that becomes a pytest node id (``ID[cell]``), shown on the
terminal, in reports and selected with ``-k``: an id holding a character that
:func:`~pytest_graphinstruct.escaping.escape` would change (a newline, ``ESC``, a bidi
override, any control, format or line-separator character) or ``::`` (which reads as a file
and a test) is refused (:func:`check_id`); every other id is kept exactly as written.  A
problem line shows the id escaped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pytest_graphinstruct.errors import ConstraintError, GraphInstructError, SuiteError
from pytest_graphinstruct.escaping import escape
from pytest_graphinstruct.suite.constraints import Constraint, parse_constraint
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.vocab import LEVELS, SIZE_BUCKETS

_REQUIRED = ("id", "level", "instruction", "explicit_constraints")
_MAX_REPORTED = 25


@dataclass(frozen=True)
class Suite:
    """An ordered, immutable collection of instructions with lookup by id."""

    instructions: tuple[Instruction, ...]
    root: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", MappingProxyType({i.id: i for i in self.instructions}))

    def __iter__(self) -> Iterator[Instruction]:
        return iter(self.instructions)

    def __len__(self) -> int:
        return len(self.instructions)

    def __getitem__(self, instruction_id: str) -> Instruction:
        return self._by_id[instruction_id]  # type: ignore[attr-defined]

    def __contains__(self, instruction_id: object) -> bool:
        return instruction_id in self._by_id  # type: ignore[attr-defined]

    def get(self, instruction_id: str) -> Instruction | None:
        return self._by_id.get(instruction_id)  # type: ignore[attr-defined]

    def level(self, level: int) -> tuple[Instruction, ...]:
        return tuple(i for i in self.instructions if i.level == level)

    @property
    def levels(self) -> tuple[int, ...]:
        return tuple(sorted({i.level for i in self.instructions}))

    @property
    def num_references(self) -> int:
        return sum(len(i.references) for i in self.instructions)


def load_suite(root: str | Path, levels: Iterable[int] | None = None, *,
               parse_bases: bool = True) -> Suite:
    """Load the suite under ``root``.

    Args:
        root: a directory holding ``level_<L>.json`` files, or one such file.
        levels: restrict to these levels (default: every level file present).
        parse_bases: parse every L5 base graph now (a malformed one is a problem of the
            suite); ``False``: each is parsed on its first use (:attr:`Instruction.base`),
            and the parser (and networkx) is not imported for them — the xdist controller's,
            which starts its workers after loading the suite and seldom needs a base graph.

    Returns:
        The suite, instructions ordered by level then file order.

    Raises:
        SuiteError: the directory has no level files, a requested level file is missing, a file
            is not valid JSON, or any record is malformed (all problems listed, each naming file,
            instruction id and value).
    """
    path = Path(root)
    if path.is_file():
        files = [path]
    elif path.is_dir():
        wanted = sorted(set(levels)) if levels is not None else list(LEVELS)
        for lv in wanted:
            if lv not in LEVELS:
                raise SuiteError(f"unknown level {lv!r}: levels are 0-5")
        files = [path / f"level_{lv}.json" for lv in wanted]
        if levels is not None:
            missing = [f.name for f in files if not f.is_file()]
            if missing:
                raise SuiteError(f"{path}: missing {', '.join(missing)}")
        files = [f for f in files if f.is_file()]
        if not files:
            raise SuiteError(f"{path}: no level_<L>.json files found (expected level_0.json … "
                             "level_5.json in the GraphInstruct schema)")
    else:
        raise SuiteError(f"suite not found: {path}")

    errors: list[str] = []
    instructions: list[Instruction] = []
    seen: dict[str, str] = {}
    for f in files:
        for inst in _load_file(f, errors, parse_bases):
            if inst.id in seen:
                errors.append(f"{f}: {inst.id}: duplicate id (also in {seen[inst.id]})")
                continue
            seen[inst.id] = str(f)
            instructions.append(inst)
    if errors:
        shown = errors[:_MAX_REPORTED]
        more = len(errors) - len(shown)
        tail = f"\n  … and {more} more" if more else ""
        raise SuiteError(f"invalid suite {path} ({len(errors)} problem(s)):\n  "
                         + "\n  ".join(shown) + tail)
    if not instructions:
        raise SuiteError(f"{path}: the suite holds no instructions (its level files are empty)")
    instructions.sort(key=lambda i: i.level)  # stable: file order within a level
    return Suite(tuple(instructions), root=str(path))


def _load_file(f: Path, errors: list[str], parse_bases: bool = True) -> list[Instruction]:
    try:
        data = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        errors.append(f"{f}: cannot read: {exc}")
        return []
    except json.JSONDecodeError as exc:
        errors.append(f"{f}: not valid JSON: {exc}")
        return []
    if not isinstance(data, list):
        errors.append(f"{f}: expected a JSON array of instruction records, got "
                      f"{type(data).__name__}")
        return []
    m = re.fullmatch(r"level_(\d+)\.json", f.name)
    file_level = int(m.group(1)) if m else None
    out = []
    for pos, record in enumerate(data):
        inst = instruction_from_record(record, source=str(f), position=pos, errors=errors,
                                       parse_base=parse_bases)
        if inst is None:
            continue
        if file_level is not None and inst.level != file_level:
            # a record in the wrong file would run under --gi-levels filters it is not part of
            errors.append(f"{f}: {inst.id}: level {inst.level} in {f.name} (a level_"
                          f"{file_level}.json record must have level {file_level})")
            continue
        out.append(inst)
    return out


def instruction_from_record(
    record: Any, *, source: str = "<record>", position: int = 0, errors: list[str] | None = None,
    parse_base: bool = True,
) -> Instruction | None:
    """Build one :class:`Instruction` from a JSON record.

    Problems are appended to ``errors`` (and ``None`` returned) when a list is given; otherwise
    the first problem raises :class:`SuiteError`.  ``parse_base``: parse an L5 base graph now
    (a malformed one is a problem), else on its first use (:attr:`Instruction.base`).
    """
    problems: list[str] = []
    inst = _build(record, source, position, problems, parse_base)
    if problems:
        if errors is None:
            raise SuiteError("\n".join(problems))
        errors.extend(problems)
        return None
    return inst


def check_id(rid: str) -> str | None:
    """Why ``rid`` cannot be an instruction id (``None``: it can): it holds a character that
    would act on a terminal or break a line where the id is shown — in its node id above all
    (:func:`~pytest_graphinstruct.escaping.escape` changes it) —, or ``::``, pytest's
    separator of a file and a test, with which the run could not tell the item's node id
    (``ID[cell]``) from another test's.  One line, the id escaped."""
    shown = escape(rid)
    if shown != rid:
        return (f"'id' must be printable text (no control, format or line-separator "
                f"character: it becomes the node id pytest shows), got '{shown}'")
    if "::" in rid:
        return (f"'id' must not hold '::' (pytest's separator of a file and a test: the node "
                f"id would read as another test's), got '{rid}'")
    return None


def _build(record: Any, source: str, position: int, problems: list[str],
           parse_base: bool = True) -> Instruction | None:
    where = f"{source}: record #{position}"
    if not isinstance(record, Mapping):
        problems.append(f"{where}: expected an object, got {type(record).__name__}")
        return None
    rid = record.get("id")
    if isinstance(rid, str) and rid and check_id(rid) is None:
        where = f"{source}: {rid}"
    for key in _REQUIRED:
        if key not in record:
            problems.append(f"{where}: missing field {key!r}")
    if problems:
        return None
    if not isinstance(rid, str) or not rid.strip():
        problems.append(f"{where}: 'id' must be a non-empty string, got {escape(repr(rid))}")
    elif (bad_id := check_id(rid)) is not None:
        problems.append(f"{where}: {bad_id}")
    level = record["level"]
    if isinstance(level, bool) or not isinstance(level, int) or level not in LEVELS:
        problems.append(f"{where}: 'level' must be an integer 0-5, got {level!r}")
    text = record["instruction"]
    if not isinstance(text, str) or not text.strip():
        problems.append(f"{where}: 'instruction' must be a non-empty string")
    explicit = _constraints(record, "explicit_constraints", where, problems)
    implicit = _constraints(record, "implicit_constraints", where, problems)
    sizes = _strings(record, "graph_sizes", where, problems)
    for s in sizes:
        if s not in SIZE_BUCKETS:
            problems.append(f"{where}: graph_sizes: unknown size {s!r} "
                            f"(expected one of {', '.join(SIZE_BUCKETS)})")
    refs = _strings(record, "reference_solutions", where, problems)
    feasible = record.get("feasible", True)
    if not isinstance(feasible, bool):
        problems.append(f"{where}: 'feasible' must be true or false, got {feasible!r}")
    domain = record.get("domain")
    if domain is not None and not isinstance(domain, str):
        problems.append(f"{where}: 'domain' must be a string, got {domain!r}")
    template = record.get("template")
    if template is not None and (not isinstance(template, str) or not template.strip()):
        problems.append(f"{where}: 'template' must be a non-empty string, got {template!r:.80}")
    base_text = record.get("base_graph")
    base = None
    if base_text is not None:
        if not isinstance(base_text, str):
            problems.append(f"{where}: 'base_graph' must be a string")
        elif parse_base:
            from pytest_graphinstruct.graphs.parse import parse_graph

            try:
                base = parse_graph(base_text)
            except GraphInstructError as exc:
                problems.append(f"{where}: base_graph is not a valid graph: {exc}")
    edits = _strings(record, "graph_edits", where, problems)
    steps = record.get("reasoning_steps", [])
    if not isinstance(steps, list) or not all(isinstance(s, Mapping) for s in steps):
        problems.append(f"{where}: 'reasoning_steps' must be a list of objects")
        steps = []
    verification = record.get("solution_verification") or {}
    if not isinstance(verification, Mapping):
        problems.append(f"{where}: 'solution_verification' must be an object")
        verification = {}
    if problems:
        return None
    assert isinstance(rid, str)  # else a problem was recorded above
    inst = Instruction(
        id=rid,
        level=level,
        text=text,
        explicit=explicit,
        implicit=implicit,
        graph_sizes=tuple(sizes),
        references=tuple(refs),
        feasible=feasible,
        domain=domain,
        base_graph=base_text,
        graph_edits=tuple(edits),
        reasoning_steps=tuple(MappingProxyType(dict(s)) for s in steps),
        solution_verification=MappingProxyType(dict(verification)),
        source=source,
        template=template,
    )
    if base is not None:
        inst.__dict__["base"] = base  # parsed here: Instruction.base (a cached property) keeps it
    return inst


def _strings(record: Mapping[str, Any], key: str, where: str, problems: list[str]) -> list[str]:
    value = record.get(key, [])
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"{where}: {key!r} must be a list of strings, got {value!r:.80}")
        return []
    return value


def _constraints(
    record: Mapping[str, Any], key: str, where: str, problems: list[str]
) -> tuple[Constraint, ...]:
    out = []
    for pos, text in enumerate(_strings(record, key, where, problems)):
        try:
            out.append(parse_constraint(text))
        except ConstraintError as exc:
            problems.append(f"{where}: {key}[{pos}] {text!r}: {exc}")
    return tuple(out)


def constraints_of(items: Sequence[str]) -> tuple[Constraint, ...]:
    """Parse a list of constraint strings (raises ConstraintError on the first bad one)."""
    return tuple(parse_constraint(t) for t in items)
