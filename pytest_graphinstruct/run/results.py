"""Typed, versioned results: one item, one cell, one run.

Every producer of results (the plugin, the ``score`` command, users' code) builds these frozen
records, and every consumer (terminal summary, gates, ``pareto``, ``compare``, the baseline)
reads them; no result travels as a loose dict.  ``to_json`` writes the report schema
``graphinstruct-report/2`` (shipped as ``report/schema.json``; the field names of the
GraphInstruct release's ``quality.json`` are kept, so a cell of ours is also a valid release
score file); ``from_json`` reads it back exactly.  Older shapes and the release's own files are
read by :mod:`pytest_graphinstruct.run.reader`.

A JSON value inside a record (``details``, ``decoding``) is diagnostic data for people, written,
shown and compared as a whole; code reads one key of it: ``details["pool_references"]``, which
:mod:`pytest_graphinstruct.report.contamination` reads to tell whether a run scored L3/L4
against pool graphs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_graphinstruct.answers import MethodStep
from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.methods.registry import ITERATIVE
from pytest_graphinstruct.models.recorded import ReplayCheck
from pytest_graphinstruct.run.shard import MAX_SHARDS
from pytest_graphinstruct.vocab import (
    DIMENSIONS,
    FEEDBACK_LEVELS,
    METHOD_BASELINE,
    OUTCOMES,
    SCORED_OUTCOMES,
    STRATEGIES,
)

SCHEMA = "graphinstruct-report/2"
"""The schema name (and version) written into every report."""

PREVIOUS_SCHEMA = "graphinstruct-report/1"


class ReportError(GraphInstructError, ValueError):
    """A file that is not a report this package can read (the message names the file)."""


def cell_label(model: str, strategy: str, method: str = METHOD_BASELINE) -> str:
    """``model-strategy``, with ``-method`` appended unless the method is the baseline."""
    base = f"{model}-{strategy}"
    return base if method == METHOD_BASELINE else f"{base}-{method}"


_ITERATIVE_LABEL = re.compile(
    "-(?:" + "|".join(map(re.escape, STRATEGIES)) + ")-(?:" + "|".join(ITERATIVE)
    + r")(?:-(?:" + "|".join(FEEDBACK_LEVELS) + ")" + r")?(?:@T\d+)?\Z")


def is_iterative_label(label: str) -> bool:
    """Whether a cell label (:func:`cell_label`) names an iterative method (vgig, retry, sc,
    combined, with a feedback or ``@T`` rounds): its cached calls are the chains' every call,
    not the kept answers."""
    return _ITERATIVE_LABEL.search(label) is not None


# -- items -------------------------------------------------------------------------------------

RAW_ANSWER_LIMIT = 2000
"""Characters of a sample's raw answer a report keeps (:func:`bounded_answer`)."""


def bounded_answer(text: str | None, limit: int = RAW_ANSWER_LIMIT) -> str | None:
    """``text`` as a report keeps it: whole up to ``limit`` characters, else its first
    ``limit`` characters and a line ``… [N more characters cut]``.  Lone surrogates (a JSON
    ``\\ud800`` in an answer) are written as ``\\ud800`` text, so the report stays UTF-8."""
    if text is None:
        return None
    if len(text) > limit:
        text = f"{text[:limit]}\n… [{len(text) - limit} more characters cut]"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


@dataclass(frozen=True)
class ViolationDetail:
    """One violated check of a sample: the constraint (as written or derived), its category
    (``verify.verdict.CATEGORIES``) and, for counts, degrees and numbers, ``observed − target``.

    ``expected``, ``observed`` and ``where`` (the verdict's locus, lists already capped by the
    verifier) are for people (the HTML report draws ``where``); ``None``/empty in reports
    written before they were kept, and not compared."""

    constraint: str
    category: str
    gap: float | None = None
    expected: str | None = field(default=None, compare=False)
    observed: str | None = field(default=None, compare=False)
    where: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"constraint": self.constraint, "category": self.category, "gap": self.gap,
                "expected": self.expected, "observed": self.observed,
                "where": dict(self.where)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ViolationDetail:
        gap = data.get("gap")
        return cls(str(data["constraint"]), str(data["category"]),
                   None if gap is None else float(gap), data.get("expected"),
                   data.get("observed"), dict(data.get("where") or {}))


@dataclass(frozen=True)
class SampleResult:
    """One sample of one item: how its answer parsed, what it violated, what it cost.

    ``violations`` are the instruction's constraints as written (explicit and implied by the
    graph type); ``derived_violations`` the checks the verifier adds (no-contradiction, L5 task,
    feasibility).  ``cached`` is true when the answer came from the answer cache; it is volatile
    (a rerun changes it), never written to a report, and not compared (a result read back from
    its report equals the one written).  ``raw_answer`` is the model's answer as
    :func:`bounded_answer` keeps it (``None``: no answer, or a report written before answers
    were kept); it is untrusted text, to be escaped wherever it is shown.  ``steps`` are the
    calls an iterative method made for this sample (empty for one plain call); ``api_calls`` and
    the token counts are then their sums.
    """

    parsed: bool
    refusal: bool
    violations: tuple[str, ...] = ()
    derived_violations: tuple[str, ...] = ()
    error: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    usage_source: str | None = None
    api_calls: int = 1
    truncated: bool = False
    cached: bool = field(default=False, compare=False)
    raw_answer: str | None = None
    steps: tuple[MethodStep, ...] = ()
    violation_details: tuple[ViolationDetail, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "parsed": self.parsed, "refusal": self.refusal,
            "violations": list(self.violations),
            "derived_violations": list(self.derived_violations),
            "error": self.error, "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens, "usage_source": self.usage_source,
            "api_calls": self.api_calls, "truncated": self.truncated,
            "raw_answer": self.raw_answer,
            "steps": [_step_json(x) for x in self.steps],
            "violation_details": [x.to_json() for x in self.violation_details],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SampleResult:
        return cls(
            parsed=bool(data["parsed"]), refusal=bool(data["refusal"]),
            violations=tuple(data.get("violations") or ()),
            derived_violations=tuple(data.get("derived_violations") or ()),
            error=data.get("error"), input_tokens=data.get("input_tokens"),
            output_tokens=data.get("output_tokens"), usage_source=data.get("usage_source"),
            api_calls=int(data.get("api_calls", 1)), truncated=bool(data.get("truncated")),
            raw_answer=data.get("raw_answer"),
            steps=tuple(_step_from_json(x) for x in data.get("steps") or ()),
            violation_details=tuple(ViolationDetail.from_json(x)
                                    for x in data.get("violation_details") or ()),
        )


def _step_json(step: MethodStep) -> dict[str, Any]:
    return {"round": step.round, "source": step.source, "temperature": step.temperature,
            "input_tokens": step.input_tokens, "output_tokens": step.output_tokens,
            "api_calls": step.calls, "d4": step.d4, "passed": step.passed, "kept": step.kept}


def _step_from_json(data: Mapping[str, Any]) -> MethodStep:
    return MethodStep(round=int(data["round"]), source=str(data["source"]),
                      temperature=float(data["temperature"]),
                      input_tokens=data.get("input_tokens"),
                      output_tokens=data.get("output_tokens"), calls=int(data["api_calls"]),
                      d4=data.get("d4"), passed=bool(data["passed"]), kept=bool(data["kept"]))


@dataclass(frozen=True)
class ItemResult:
    """One instruction in one cell: outcome, verdicts per sample, D1–D5 and the level score.

    ``outcome`` is one of :data:`~pytest_graphinstruct.vocab.OUTCOMES`; only ``passed`` and
    ``failed`` items are scored (an ``error`` means no answer could be obtained and is never
    the model's failure).  A dimension that could not be computed is ``None`` in
    ``dimension_scores`` with its reason in ``absent_dimensions``; ``level_score`` is the
    quality-only level score (renormalized over the present dimensions, naming the
    ``missing_dimensions``) and ``level_score_with_d5`` the one with D5.  ``valid_rate`` is
    the share of valid samples (the release's ``d1_valid_rate``); ``tpv`` the tokens per valid
    sample (the release's ``d5_tokens_per_valid``).  ``cluster`` is the instruction's cluster
    (its template, else a signature of its pattern:
    :func:`~pytest_graphinstruct.suite.clusters.cluster_of`), which the regression gate
    resamples together; ``None`` in reports written before it was kept and in the release's
    files.
    """

    instruction_id: str
    level: int
    cell: str
    model: str
    strategy: str
    method: str = METHOD_BASELINE
    feasible: bool = True
    size: str | None = None
    outcome: str = "passed"
    error: str | None = None
    samples: tuple[SampleResult, ...] = ()
    d4_instruction_score: float | None = None
    valid_samples: int = 0
    valid_rate: float | None = None
    tokens: int | None = None
    api_calls: int = 0
    dimension_scores: Mapping[str, float | None] = field(
        default_factory=lambda: dict.fromkeys(DIMENSIONS))
    absent_dimensions: Mapping[str, str] = field(default_factory=dict)
    level_score: float | None = None
    level_score_with_d5: float | None = None
    missing_dimensions: tuple[str, ...] = ()
    tpv: float | None = None
    api_per_valid: float | None = None
    d5_valid: int = 0
    details: Mapping[str, Any] = field(default_factory=dict)
    expected_failure: bool = False
    cluster: str | None = None

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {self.outcome!r}")

    @property
    def scored(self) -> bool:
        """Whether the item has scores (it passed or failed; errors and skips have none)."""
        return self.outcome in SCORED_OUTCOMES

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    @property
    def pass_share(self) -> float | None:
        """The share of the item's samples that passed (no violation of any kind, no parse
        error); ``None`` without samples."""
        if not self.samples:
            return None
        ok = sum(1 for s in self.samples
                 if not s.violations and not s.derived_violations and s.error is None)
        return ok / len(self.samples)

    def to_json(self) -> dict[str, Any]:
        return {
            "instruction_id": self.instruction_id, "level": self.level, "cell": self.cell,
            "model": self.model, "strategy": self.strategy, "method": self.method,
            "feasible": self.feasible, "size": self.size, "outcome": self.outcome,
            "error": self.error, "expected_failure": self.expected_failure,
            "d1_valid_rate": self.valid_rate,
            "d4_instruction_score": self.d4_instruction_score,
            "d5_tokens_per_valid": self.tpv,
            "dimension_scores": {d: self.dimension_scores.get(d) for d in DIMENSIONS},
            "absent_dimensions": dict(self.absent_dimensions),
            "level_score": self.level_score,
            "level_score_with_d5": self.level_score_with_d5,
            "missing_dimensions": list(self.missing_dimensions),
            "valid_samples": self.valid_samples, "tokens": self.tokens,
            "api_calls": self.api_calls, "api_per_valid": self.api_per_valid,
            "d5_valid": self.d5_valid,
            "samples": [s.to_json() for s in self.samples],
            "details": dict(self.details),
            "cluster": self.cluster,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ItemResult:
        dims = data.get("dimension_scores") or {}
        return cls(
            instruction_id=str(data["instruction_id"]), level=int(data["level"]),
            cell=str(data["cell"]), model=str(data["model"]), strategy=str(data["strategy"]),
            method=str(data.get("method") or METHOD_BASELINE),
            feasible=bool(data.get("feasible", True)), size=data.get("size"),
            outcome=str(data["outcome"]), error=data.get("error"),
            expected_failure=bool(data.get("expected_failure", False)),
            samples=tuple(SampleResult.from_json(s) for s in data.get("samples") or ()),
            d4_instruction_score=data.get("d4_instruction_score"),
            valid_samples=int(data.get("valid_samples") or 0),
            valid_rate=data.get("d1_valid_rate"),
            tokens=data.get("tokens"), api_calls=int(data.get("api_calls") or 0),
            dimension_scores={d: dims.get(d) for d in DIMENSIONS},
            absent_dimensions=dict(data.get("absent_dimensions") or {}),
            level_score=data.get("level_score"),
            level_score_with_d5=data.get("level_score_with_d5"),
            missing_dimensions=tuple(data.get("missing_dimensions") or ()),
            tpv=data.get("d5_tokens_per_valid"), api_per_valid=data.get("api_per_valid"),
            d5_valid=int(data.get("d5_valid") or 0), details=dict(data.get("details") or {}),
            cluster=data.get("cluster"),
        )


# -- cells -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CellMetadata:
    """What produced a cell: model, strategy, method, suite, sampling and decoding.

    ``source`` says where the cell was read from when it was not written by this version
    (``graphinstruct-report/1``, ``release-quality-json``); ``None`` for our own reports.
    """

    model: str
    strategy: str
    method: str = METHOD_BASELINE
    tool: str | None = None
    constraint: str | None = None
    model_info: str | None = None
    suite: str | None = None
    levels: tuple[int, ...] | None = None
    samples_per_instruction: int | None = None
    pass_rule: str | None = None
    decoding: Mapping[str, Any] = field(default_factory=dict)
    partial: bool = False
    quality_only: bool = True
    missing_dimensions: tuple[str, ...] = ()
    source: str | None = None
    method_settings: Mapping[str, Any] = field(default_factory=dict)
    #: the model version its answers came from: ``--gi-model-version``, else the snapshot the
    #: endpoint said it served (the response's ``model`` field); ``None``: not known
    model_version: str | None = None

    @property
    def label(self) -> str:
        return cell_label(self.model, self.strategy, self.method)

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool, "model": self.model, "strategy": self.strategy,
            "method": self.method, "constraint": self.constraint,
            "model_info": self.model_info, "suite": self.suite,
            "levels": None if self.levels is None else list(self.levels),
            "samples_per_instruction": self.samples_per_instruction,
            "pass_rule": self.pass_rule, "decoding": dict(self.decoding),
            "partial": self.partial, "quality_only": self.quality_only,
            "missing_dimensions": list(self.missing_dimensions), "source": self.source,
            "method_settings": dict(self.method_settings),
            "model_version": self.model_version,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CellMetadata:
        levels = data.get("levels")
        return cls(
            model=str(data["model"]), strategy=str(data["strategy"]),
            method=str(data.get("method") or METHOD_BASELINE), tool=data.get("tool"),
            constraint=data.get("constraint"), model_info=data.get("model_info"),
            suite=data.get("suite"),
            levels=None if levels is None else tuple(int(x) for x in levels),
            samples_per_instruction=data.get("samples_per_instruction"),
            pass_rule=data.get("pass_rule"), decoding=dict(data.get("decoding") or {}),
            partial=bool(data.get("partial", False)),
            quality_only=bool(data.get("quality_only", True)),
            missing_dimensions=tuple(data.get("missing_dimensions") or ()),
            source=data.get("source"),
            method_settings=dict(data.get("method_settings") or {}),
            model_version=data.get("model_version"),
        )


@dataclass(frozen=True)
class LevelRow:
    """One level of one cell: item counts by outcome, mean dimensions, level score and CI."""

    items: int
    passed: int
    failed: int
    error: int
    skipped: int
    pass_rate: float | None
    dimensions: Mapping[str, float | None]
    level_score: float | None
    level_score_ci95: tuple[float, float] | None
    scored_items: int

    def to_json(self) -> dict[str, Any]:
        return {
            "items": self.items, "passed": self.passed, "failed": self.failed,
            "error": self.error, "skipped": self.skipped, "pass_rate": self.pass_rate,
            "dimensions": {d: self.dimensions.get(d) for d in DIMENSIONS},
            "level_score": self.level_score,
            "level_score_ci95": None if self.level_score_ci95 is None
            else list(self.level_score_ci95),
            "scored_items": self.scored_items,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LevelRow:
        ci = data.get("level_score_ci95")
        dims = data.get("dimensions") or {}
        return cls(
            items=int(data["items"]), passed=int(data.get("passed", 0)),
            failed=int(data.get("failed", 0)), error=int(data.get("error", 0)),
            skipped=int(data.get("skipped", 0)), pass_rate=data.get("pass_rate"),
            dimensions={d: dims.get(d) for d in DIMENSIONS},
            level_score=data.get("level_score"),
            level_score_ci95=None if not ci else (float(ci[0]), float(ci[1])),
            scored_items=int(data.get("scored_items", 0)),
        )


@dataclass(frozen=True)
class CellSummary:
    """A cell's totals: outcomes, S_total (paper form and renormalized over the levels run)
    with its CI, cost (tokens, TPV, calls), and — over the cells of a run — the Pareto view."""

    items: int
    passed: int
    failed: int
    error: int
    skipped: int
    s_total: float | None
    s_total_renormalized: float | None
    s_total_ci95: tuple[float, float] | None = None
    levels_present: tuple[int, ...] = ()
    levels_missing: tuple[int, ...] = ()
    tokens_total: int | None = None
    usage_missing_items: int = 0
    usage_sources: Mapping[str, int] = field(default_factory=dict)
    valid_outputs: int = 0
    tpv: float | None = None
    api_calls: int = 0
    pareto_optimal: bool | None = None
    pareto_bonus: int | None = None
    pareto_compared_cells: int | None = None
    s_final: float | None = None
    q_per_ktpv: float | None = None
    frontier_distance: float | None = None

    @property
    def infra_errors(self) -> int:
        return self.error

    def to_json(self) -> dict[str, Any]:
        return {
            "items": self.items, "passed": self.passed, "failed": self.failed,
            "error": self.error, "skipped": self.skipped, "infra_errors": self.error,
            "s_total": self.s_total, "s_total_renormalized": self.s_total_renormalized,
            "s_total_ci95": None if self.s_total_ci95 is None else list(self.s_total_ci95),
            "levels_present": list(self.levels_present),
            "levels_missing": list(self.levels_missing),
            "tokens_total": self.tokens_total, "usage_missing_items": self.usage_missing_items,
            "usage_sources": dict(self.usage_sources), "valid_outputs": self.valid_outputs,
            "tpv": self.tpv, "api_calls": self.api_calls,
            "pareto_optimal": self.pareto_optimal, "pareto_bonus": self.pareto_bonus,
            "pareto_compared_cells": self.pareto_compared_cells, "s_final": self.s_final,
            "q_per_ktpv": self.q_per_ktpv, "frontier_distance": self.frontier_distance,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CellSummary:
        ci = data.get("s_total_ci95")
        return cls(
            items=int(data["items"]), passed=int(data.get("passed", 0)),
            failed=int(data.get("failed", 0)), error=int(data.get("error", 0)),
            skipped=int(data.get("skipped", 0)), s_total=data.get("s_total"),
            s_total_renormalized=data.get("s_total_renormalized"),
            s_total_ci95=None if not ci else (float(ci[0]), float(ci[1])),
            levels_present=tuple(data.get("levels_present") or ()),
            levels_missing=tuple(data.get("levels_missing") or ()),
            tokens_total=data.get("tokens_total"),
            usage_missing_items=int(data.get("usage_missing_items") or 0),
            usage_sources=dict(data.get("usage_sources") or {}),
            valid_outputs=int(data.get("valid_outputs") or 0), tpv=data.get("tpv"),
            api_calls=int(data.get("api_calls") or 0),
            pareto_optimal=data.get("pareto_optimal"), pareto_bonus=data.get("pareto_bonus"),
            pareto_compared_cells=data.get("pareto_compared_cells"),
            s_final=data.get("s_final"), q_per_ktpv=data.get("q_per_ktpv"),
            frontier_distance=data.get("frontier_distance"),
        )


@dataclass(frozen=True)
class CellReport:
    """One cell of a run: metadata, summary, per-level rows, and every item in suite order."""

    metadata: CellMetadata
    summary: CellSummary
    per_level: Mapping[int, LevelRow]
    per_instruction: tuple[ItemResult, ...]

    @property
    def label(self) -> str:
        return self.metadata.label

    def scored_level_scores(self) -> dict[str, tuple[int, float]]:
        """``{instruction id: (level, level score)}`` over the scored items with a score."""
        return {r.instruction_id: (r.level, r.level_score) for r in self.per_instruction
                if r.scored and r.level_score is not None}

    def to_json(self) -> dict[str, Any]:
        return {
            "metadata": self.metadata.to_json(),
            "summary": self.summary.to_json(),
            "per_level": {str(lv): row.to_json() for lv, row in sorted(self.per_level.items())},
            "per_instruction": [r.to_json() for r in self.per_instruction],
            # The GraphInstruct release's quality.json fields, so a cell is a release file too.
            "per_level_scores": {str(lv): row.level_score
                                 for lv, row in sorted(self.per_level.items())},
            "total_score": self.summary.s_total,
            "final_score": self.summary.s_final,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CellReport:
        return cls(
            metadata=CellMetadata.from_json(data["metadata"]),
            summary=CellSummary.from_json(data["summary"]),
            per_level={int(lv): LevelRow.from_json(row)
                       for lv, row in data["per_level"].items()},
            per_instruction=tuple(ItemResult.from_json(r) for r in data["per_instruction"]),
        )


# -- runs --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ParetoSummary:
    """The run-wide part of the Pareto view (per-cell marks live in each cell's summary)."""

    excluded_unknown_cost: tuple[str, ...] = ()
    cost_at_q08: Mapping[str, float | None] = field(default_factory=dict)
    sigma_strat: Mapping[str, float | None] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"excluded_unknown_cost": list(self.excluded_unknown_cost),
                "cost_at_q08": dict(self.cost_at_q08), "sigma_strat": dict(self.sigma_strat)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ParetoSummary:
        return cls(tuple(data.get("excluded_unknown_cost") or ()),
                   dict(data.get("cost_at_q08") or {}), dict(data.get("sigma_strat") or {}))


MISSING_SHOWN = 200
"""At most this many missing item names are written into a report's coverage."""


@dataclass(frozen=True)
class Coverage:
    """What a run covers: complete, or partial with the reason and the items it lacks.

    A partial report never passes a gate and never becomes a baseline.  ``selected`` is the
    number of items the run selected (``None`` when it stopped before it knew); ``missing``
    names items (``ID[cell]``) that have no result, at most :data:`MISSING_SHOWN` of
    ``missing_count``.
    """

    complete: bool = True
    reason: str | None = None
    selected: int | None = None
    missing: tuple[str, ...] = ()
    missing_count: int = 0

    @classmethod
    def partial(cls, reason: str, *, selected: int | None = None,
                missing: Sequence[str] = ()) -> Coverage:
        """An incomplete run's coverage (``missing`` is cut to :data:`MISSING_SHOWN`)."""
        return cls(False, reason, selected, tuple(missing[:MISSING_SHOWN]), len(missing))

    def describe(self) -> str:
        """One line: ``complete`` or ``partial: <reason>; N of M items have no result``."""
        if self.complete:
            return "complete"
        counts = ""
        if self.missing_count:
            of = f" of {self.selected}" if self.selected is not None else ""
            counts = f"; {self.missing_count}{of} items have no result"
        return f"partial: {self.reason or 'reason unknown'}{counts}"

    def to_json(self) -> dict[str, Any]:
        return {"complete": self.complete, "reason": self.reason, "selected": self.selected,
                "missing": list(self.missing), "missing_count": self.missing_count}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Coverage:
        return cls(bool(data["complete"]), data.get("reason"), data.get("selected"),
                   tuple(data.get("missing") or ()), int(data.get("missing_count") or 0))


@dataclass(frozen=True)
class Machine:
    """The machine a run ran on (no user name)."""

    hostname: str | None = None
    platform: str | None = None
    python: str | None = None
    cpu_count: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"hostname": self.hostname, "platform": self.platform, "python": self.python,
                "cpu_count": self.cpu_count}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Machine:
        cpus = data.get("cpu_count")
        return cls(data.get("hostname"), data.get("platform"), data.get("python"),
                   None if cpus is None else int(cpus))


@dataclass(frozen=True)
class GitState:
    """The commit of the rootdir's git work tree and whether tracked files differed from it
    (``dirty``: ``None`` when unknown)."""

    commit: str
    dirty: bool | None = None

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "dirty": self.dirty}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GitState:
        dirty = data.get("dirty")
        return cls(str(data["commit"]), None if dirty is None else bool(dirty))


@dataclass(frozen=True)
class ShardSelection:
    """``--gi-shard=K/N``: this run is shard ``index`` of ``count``, chosen from ``universe``
    — every ``(instruction id, level)`` the unsharded run would have selected (before ``-k`` /
    ``-m``), in suite order — so a merge can tell which instructions a missing shard held."""

    index: int
    count: int
    universe: tuple[tuple[str, int], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "count": self.count,
                "universe": [[i, lv] for i, lv in self.universe]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ShardSelection:
        """Raises ValueError for a shard no run can have been (``1 <= index <= count <=
        MAX_SHARDS``), so a report file cannot make ``merge`` list billions of missing shards."""
        index, count = int(data["index"]), int(data["count"])
        if not 1 <= index <= count <= MAX_SHARDS:
            raise ValueError(f"shard {index}/{count} is impossible (1 <= K <= N <= "
                             f"{MAX_SHARDS:,})")
        return cls(index, count,
                   tuple((str(i), int(lv)) for i, lv in data.get("universe") or ()))


@dataclass(frozen=True)
class ItemFilter:
    """How a run chose its items: pytest's ``-k`` and ``-m``, ``--gi-levels``,
    ``--gi-per-level``, ``--gi-shard``, and how many items it selected (``None``: not given /
    not known)."""

    keyword: str | None = None
    markers: str | None = None
    levels: tuple[int, ...] | None = None
    per_level: int | None = None
    selected: int | None = None
    shard: ShardSelection | None = None

    def to_json(self) -> dict[str, Any]:
        return {"keyword": self.keyword, "markers": self.markers,
                "levels": None if self.levels is None else list(self.levels),
                "per_level": self.per_level, "selected": self.selected,
                "shard": None if self.shard is None else self.shard.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ItemFilter:
        levels = data.get("levels")
        shard = data.get("shard")
        return cls(data.get("keyword"), data.get("markers"),
                   None if levels is None else tuple(int(x) for x in levels),
                   data.get("per_level"), data.get("selected"),
                   None if shard is None else ShardSelection.from_json(shard))


@dataclass(frozen=True)
class CacheUse:
    """A cell's samples and how many of their answers came from the answer cache (cached
    before the run began), with where those came from: the model snapshots they were cached
    from (``None`` in the list: not recorded), when the oldest was cached (UTC ISO 8601), and
    the snapshot the endpoint said it served during the run (``served``; ``None``: not known,
    or no endpoint).  Reports written before these were kept read as empty and ``None``."""

    cached: int
    samples: int
    snapshots: tuple[str | None, ...] = ()
    oldest: str | None = None
    served: str | None = None

    @property
    def stale(self) -> tuple[str, ...]:
        """The snapshots of cached answers other than the one served during the run (reused
        on purpose, ``--gi-reuse-stale-cache``); empty when either side is not known."""
        if self.served is None:
            return ()
        return tuple(s for s in self.snapshots if s is not None and s != self.served)

    def combined(self, other: CacheUse) -> CacheUse:
        """Both records as one (shards of one run): counts summed, snapshots joined, the
        older ``oldest``, ``served`` when both agree (else ``None``)."""
        snapshots = tuple(dict.fromkeys((*self.snapshots, *other.snapshots)))
        oldest = min((t for t in (self.oldest, other.oldest) if t is not None), default=None)
        return CacheUse(self.cached + other.cached, self.samples + other.samples, snapshots,
                        oldest, self.served if self.served == other.served else None)

    def to_json(self) -> dict[str, Any]:
        return {"cached": self.cached, "samples": self.samples,
                "snapshots": list(self.snapshots), "oldest": self.oldest,
                "served": self.served}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CacheUse:
        return cls(int(data["cached"]), int(data["samples"]),
                   tuple(None if s is None else str(s) for s in data.get("snapshots") or ()),
                   data.get("oldest"), data.get("served"))


@dataclass(frozen=True)
class RunInfo:
    """What produced a run (the report's ``run`` record; docs/RUNS.md).

    Times are UTC ISO 8601.  ``suite_hash`` is ``sha256:`` of the level files used;
    ``endpoints`` maps each model to its base URL without user, password or query (``None``:
    no endpoint — the oracle, recorded answers); ``cache`` per cell label says how many
    samples' answers came from the answer cache.  Any value not known is ``None``.
    """

    started: str | None = None
    finished: str | None = None
    machine: Machine | None = None
    suite: str | None = None
    suite_hash: str | None = None
    git: GitState | None = None
    endpoints: Mapping[str, str | None] = field(default_factory=dict)
    filter: ItemFilter = field(default_factory=ItemFilter)
    pools: str | None = None
    replay: str | None = None
    cache_dir: str | None = None
    cache: Mapping[str, CacheUse] = field(default_factory=dict)
    replay_sha256: str | None = None  #: ``sha256:<hex>`` of the ``--gi-replay`` file
    #: level → ``sha256:<hex>`` of the suite file it came from (a baseline of the same suite
    #: matches on the levels both ran; empty in reports written before it was kept)
    level_hashes: Mapping[int, str] = field(default_factory=dict)
    #: what reading the ``--gi-replay`` file skipped, line by line (``None``: no replay file,
    #: or a report written before it was kept)
    replay_problems: ReplayCheck | None = None

    @property
    def cached_samples(self) -> int:
        """Samples of the whole run whose answer came from the cache."""
        return sum(c.cached for c in self.cache.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "started": self.started, "finished": self.finished,
            "machine": None if self.machine is None else self.machine.to_json(),
            "suite": self.suite, "suite_hash": self.suite_hash,
            "git": None if self.git is None else self.git.to_json(),
            "endpoints": dict(self.endpoints), "filter": self.filter.to_json(),
            "pools": self.pools, "replay": self.replay, "cache_dir": self.cache_dir,
            "cache": {label: c.to_json() for label, c in self.cache.items()},
            "replay_sha256": self.replay_sha256,
            "level_hashes": {str(lv): h for lv, h in sorted(self.level_hashes.items())},
            "replay_problems": (None if self.replay_problems is None
                                else self.replay_problems.to_json()),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunInfo:
        machine, git = data.get("machine"), data.get("git")
        return cls(
            started=data.get("started"), finished=data.get("finished"),
            machine=None if machine is None else Machine.from_json(machine),
            suite=data.get("suite"), suite_hash=data.get("suite_hash"),
            git=None if git is None else GitState.from_json(git),
            endpoints=dict(data.get("endpoints") or {}),
            filter=ItemFilter.from_json(data.get("filter") or {}),
            pools=data.get("pools"), replay=data.get("replay"),
            cache_dir=data.get("cache_dir"),
            cache={str(k): CacheUse.from_json(v) for k, v in (data.get("cache") or {}).items()},
            replay_sha256=data.get("replay_sha256"),
            level_hashes={int(k): str(v) for k, v in (data.get("level_hashes") or {}).items()},
            replay_problems=(None if data.get("replay_problems") is None
                             else ReplayCheck.from_json(data["replay_problems"])),
        )


@dataclass(frozen=True)
class LevelChange:
    """One compared level of a gated cell: paired instructions, the change of the level score
    (``current − baseline``) with its 95 % interval, the one-sided p-value of "no drop", whether
    the gate called it a regression, and the smallest drop it can detect at 80 % power
    (``None``: not estimated, or no drop at all is detectable there)."""

    level: int
    n: int
    change: float
    low: float
    high: float
    p_drop: float | None
    regressed: bool
    detectable: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "n": self.n, "change": self.change, "low": self.low,
                "high": self.high, "p_drop": self.p_drop, "regressed": self.regressed,
                "detectable": self.detectable}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LevelChange:
        return cls(int(data["level"]), int(data["n"]), float(data["change"]),
                   float(data["low"]), float(data["high"]), data.get("p_drop"),
                   bool(data["regressed"]), data.get("detectable"))


@dataclass(frozen=True)
class LevelOmission:
    """Baseline items of one level that a gated run has no score for: ``items`` of the
    baseline's ``of`` (a whole level when equal), and why (the run's filter, or no result)."""

    level: int
    items: int
    of: int
    reason: str

    @property
    def whole_level(self) -> bool:
        return self.items == self.of

    def describe(self) -> str:
        """``L2 (left out by -k)`` or ``L1: 8 of 200 instructions (no result in this run)``."""
        if self.whole_level:
            return f"L{self.level} ({self.reason})"
        return f"L{self.level}: {self.items} of {self.of} instructions ({self.reason})"

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "items": self.items, "of": self.of, "reason": self.reason}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LevelOmission:
        return cls(int(data["level"]), int(data["items"]), int(data["of"]), str(data["reason"]))


@dataclass(frozen=True)
class CellGate:
    """One cell of a gated run against its baseline cell: what was compared and changed."""

    cell: str
    baseline_cell: str
    levels: tuple[LevelChange, ...] = ()
    not_compared: tuple[LevelOmission, ...] = ()
    newly_failing: tuple[str, ...] = ()
    newly_passing: tuple[str, ...] = ()
    now_errors: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"cell": self.cell, "baseline_cell": self.baseline_cell,
                "levels": [x.to_json() for x in self.levels],
                "not_compared": [x.to_json() for x in self.not_compared],
                "newly_failing": list(self.newly_failing),
                "newly_passing": list(self.newly_passing), "now_errors": list(self.now_errors)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CellGate:
        return cls(str(data["cell"]), str(data["baseline_cell"]),
                   tuple(LevelChange.from_json(x) for x in data.get("levels") or ()),
                   tuple(LevelOmission.from_json(x) for x in data.get("not_compared") or ()),
                   tuple(data.get("newly_failing") or ()), tuple(data.get("newly_passing") or ()),
                   tuple(data.get("now_errors") or ()))


@dataclass(frozen=True)
class GateRecord:
    """The verdict of a run as its report keeps it: the baseline it was compared with
    (``None``: no baseline gate), whether it passed, one line per reason it failed, one line
    per gated cell saying what was compared, and each cell's comparison.  ``baseline_update``
    is what ``--gi-update-baseline`` did (``None``: not asked)."""

    passed: bool
    baseline: str | None = None
    failures: tuple[str, ...] = ()
    compared: tuple[str, ...] = ()
    cells: tuple[CellGate, ...] = ()
    baseline_update: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "baseline": self.baseline,
                "failures": list(self.failures), "compared": list(self.compared),
                "cells": [c.to_json() for c in self.cells],
                "baseline_update": self.baseline_update}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GateRecord:
        return cls(bool(data["passed"]), data.get("baseline"),
                   tuple(data.get("failures") or ()), tuple(data.get("compared") or ()),
                   tuple(CellGate.from_json(c) for c in data.get("cells") or ()),
                   data.get("baseline_update"))


@dataclass(frozen=True)
class RunReport:
    """A whole run: its cells (in configured order), the run-wide Pareto summary, what the
    run covers (``partial`` is ``not coverage.complete``, kept as the release's flag) and what
    produced it (``run``; ``None`` in reports written before it was kept, and for reports
    built outside a pytest run)."""

    cells: tuple[CellReport, ...]
    pareto: ParetoSummary = field(default_factory=ParetoSummary)
    partial: bool = False
    tool: str | None = None
    coverage: Coverage = field(default_factory=Coverage)
    run: RunInfo | None = None
    gate: GateRecord | None = None  #: the run's verdict (``None``: not judged, or older)

    def __post_init__(self) -> None:
        if self.partial and self.coverage.complete:  # a partial flag with no coverage record
            object.__setattr__(self, "coverage", Coverage.partial("marked partial"))
        object.__setattr__(self, "partial", not self.coverage.complete)

    def cell(self, label: str) -> CellReport:
        """The cell called ``label``.

        Raises:
            KeyError: no such cell (the message lists the cells there are).
        """
        for c in self.cells:
            if c.label == label:
                return c
        raise KeyError(f"no cell {label!r} (has: {', '.join(self.labels) or 'none'})")

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(c.label for c in self.cells)

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "tool": self.tool, "partial": self.partial,
                "coverage": self.coverage.to_json(),
                "run": None if self.run is None else self.run.to_json(),
                "gate": None if self.gate is None else self.gate.to_json(),
                "pareto": self.pareto.to_json(),
                "cells": [c.to_json() for c in self.cells]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunReport:
        """Read a ``graphinstruct-report/2`` object.

        Raises:
            ReportError: another schema, or a field missing or of the wrong type.
        """
        if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
            got = data.get("schema") if isinstance(data, Mapping) else type(data).__name__
            raise ReportError(f"not a {SCHEMA} report (schema: {got!r})")
        try:
            return cls(cells=tuple(CellReport.from_json(c) for c in data["cells"]),
                       pareto=ParetoSummary.from_json(data.get("pareto") or {}),
                       partial=bool(data.get("partial", False)), tool=data.get("tool"),
                       coverage=(Coverage.from_json(data["coverage"]) if "coverage" in data
                                 else Coverage()),
                       run=(None if data.get("run") is None
                            else RunInfo.from_json(data["run"])),
                       gate=(None if data.get("gate") is None
                             else GateRecord.from_json(data["gate"])))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ReportError(f"malformed {SCHEMA} report: {describe_error(exc)}") from None


def describe_error(exc: BaseException) -> str:
    """What a failed read of a report object means, in a few words."""
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    return f"{type(exc).__name__}: {exc}"


def items_in_order(items: Sequence[ItemResult], order: Mapping[str, int]) -> tuple[ItemResult, ...]:
    """``items`` sorted by ``order`` (instruction id → position; unknown ids last, stable)."""
    return tuple(sorted(items, key=lambda r: order.get(r.instruction_id, 1 << 30)))
