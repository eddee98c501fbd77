"""One item of a report, for people: the ``show`` command.

Everything shown that came from a model or a report file (violations, errors, the raw answer)
is escaped (:mod:`..untrusted`), so a report can neither act on the terminal nor forge lines.
"""

from __future__ import annotations

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.untrusted import escape, escape_block
from pytest_graphinstruct.run.records.results import (
    CellReport,
    ItemResult,
    RunReport,
    SampleResult,
    ViolationDetail,
)
from pytest_graphinstruct.vocab import DIMENSIONS


def find_item(report: RunReport, instruction_id: str, *, cell: str | None = None,
              name: str = "the report") -> tuple[CellReport, ItemResult]:
    """The cell and item of ``instruction_id`` (``name``: the report's file, for messages).

    Without ``cell``, the one cell that holds the id.

    Raises:
        GraphInstructError: no such cell, no such id, or the id is in several cells and no
            ``cell`` was given (the message names ``--cell`` and the cells).
    """
    cells = report.cells
    if cell is not None:
        try:
            cells = (report.cell(cell),)
        except KeyError as exc:
            raise GraphInstructError(f"{name}: {exc.args[0]} (--cell)") from None
    found = [(c, r) for c in cells for r in c.per_instruction
             if r.instruction_id == instruction_id]
    if not found:
        where = f"cell {cells[0].label}" if cell is not None else \
            f"cells: {', '.join(report.labels) or 'none'}"
        raise GraphInstructError(f"{name}: no instruction {instruction_id!r} ({where})")
    if len(found) > 1:
        raise GraphInstructError(f"{name}: {instruction_id} is in several cells; pass --cell "
                                 f"({', '.join(c.label for c, _ in found)})")
    return found[0]


def item_lines(cell: CellReport, item: ItemResult, *, name: str = "") -> list[str]:
    """The ``show`` text of one item: cell, outcome and scores, tokens, then per sample its
    parse status, violations (each violated constraint with its expected value, observed value
    and gap where the report holds them), tokens and raw answer (as the report keeps it,
    escaped)."""
    source = f" ({name})" if name else ""
    lines = [f"{escape(item.instruction_id)} in cell {escape(cell.label)}{source}"]
    head = f"  level {item.level}, outcome {item.outcome}"
    if item.expected_failure:
        head += " (expected: failed in the baseline)"
    head += f", level score {_num(item.level_score)}"
    lines.append(head)
    if item.scored:
        lines.append("  " + ", ".join(f"{d} {_num(item.dimension_scores.get(d))}"
                                      for d in DIMENSIONS))
    tokens = "unknown" if item.tokens is None else str(item.tokens)
    tpv = "" if item.tpv is None else f", {item.tpv:.1f} per valid sample"
    lines.append(f"  tokens {tokens}{tpv}, {item.api_calls} API call(s)")
    if item.error:
        lines.append(f"  error: {escape(item.error)}")
    if not item.samples:
        lines.append("  no sample")
    for k, s in enumerate(item.samples):
        lines += _sample_lines(k, s)
    return lines


def _sample_lines(k: int, s: SampleResult) -> list[str]:
    if s.refusal:
        status = "refusal"
    elif s.parsed:
        status = "parsed"
    else:
        status = "not parsed" + (f": {escape(s.error)}" if s.error else "")
    flags = " (truncated at the token limit)" if s.truncated else ""
    lines = [f"  sample {k}: {status}{flags}"]
    if s.violations:
        lines.append(f"    violations: {escape(', '.join(s.violations))}")
    if s.derived_violations:
        lines.append(f"    derived violations: {escape(', '.join(s.derived_violations))}")
    lines += [f"      {_detail(d)}" for d in s.violation_details]
    if not (s.violations or s.derived_violations) and (s.parsed or s.refusal):
        lines.append("    no violation")
    source = f" ({escape(s.usage_source)})" if s.usage_source else ""
    lines.append(f"    tokens {_count(s.input_tokens)} in + {_count(s.output_tokens)} out"
                 f"{source}, {s.api_calls} API call(s)")
    if s.raw_answer is None:
        lines.append("    raw answer: not in the report (no answer, or a report written "
                     "before answers were kept)")
    else:
        lines.append("    raw answer:")
        lines += [f"      | {line}" for line in escape_block(str(s.raw_answer))]
    return lines


def _detail(d: ViolationDetail) -> str:
    """One violated constraint as ``constraint (category): expected E, observed O, gap G``
    (escaped; parts the report does not hold are left out)."""
    parts = []
    if d.expected is not None:
        parts.append(f"expected {escape(str(d.expected))}")
    if d.observed is not None:
        parts.append(f"observed {escape(str(d.observed))}")
    if d.gap is not None:
        parts.append(f"gap {d.gap:+g}")
    text = f"{escape(d.constraint)} ({escape(d.category)})"
    return f"{text}: {', '.join(parts)}" if parts else text


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.4f}"


def _count(x: int | None) -> str:
    return "?" if x is None else str(x)
