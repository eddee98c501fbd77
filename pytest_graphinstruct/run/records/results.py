"""Typed, versioned results: one item, one cell, one run.

Every producer of results (the plugin, the ``score`` command, users' code) builds these frozen
records, and every consumer (terminal summary, gates, ``pareto``, ``compare``, the baseline)
reads them; no result travels as a loose dict.

These records are the report schema ``graphinstruct-report/2``: each one's fields, in order,
are its JSON object's keys (:mod:`~pytest_graphinstruct.run.records.codec`: ``to_json`` writes it,
``from_json`` reads it back exactly and strictly), and ``report/schema.json`` is generated from
them (:mod:`~.schema`).  The field names of the GraphInstruct release's
``quality.json`` are kept, so a cell of ours is also a valid release score file.  Older shapes
and the release's own files become these records in :mod:`~.migrations`.

A free-form JSON value inside a record (``decoding``, ``method_settings``, the diagnostics in
``details``) is data for people, written, shown and compared as a whole; no code reads into it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, Literal

from pytest_graphinstruct.answers import MethodStep
from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.methods.registry import ITERATIVE
from pytest_graphinstruct.models.backends.recorded import LISTED_IN_REPORT, ReplayCheck
from pytest_graphinstruct.run.records.codec import (
    Bounds,
    Custom,
    EveryKey,
    JsonRecord,
    MaxItems,
    MinLength,
    Pattern,
    ShapeError,
    Unique,
    decode,
)
from pytest_graphinstruct.run.shard import MAX_SHARDS
from pytest_graphinstruct.score.details import ScoreDetails
from pytest_graphinstruct.verify.locus import Locus, locus_schema
from pytest_graphinstruct.verify.verdict import Category
from pytest_graphinstruct.vocab import (
    DIMENSIONS,
    FEEDBACK_LEVELS,
    METHOD_BASELINE,
    OUTCOMES,
    SCORED_OUTCOMES,
    STRATEGIES,
    Dimension,
    Level,
    Outcome,
    PassRule,
)

SCHEMA: Final = "graphinstruct-report/2"
"""The schema name (and version) written into every report."""

PREVIOUS_SCHEMA: Final = "graphinstruct-report/1"

# -- the value types of the schema --------------------------------------------------------------

Count = Annotated[int, Bounds(0)]
"""A count: an integer, 0 or more."""
Positive = Annotated[int, Bounds(1)]
Unit = Annotated[float, Bounds(0, 1)]
"""A share or a score in [0, 1]."""
NonNegative = Annotated[float, Bounds(0)]
Name = Annotated[str, MinLength(1)]
Sha256 = Annotated[str, Pattern(r"^sha256:[0-9a-f]{64}$")]
Levels = Annotated[tuple[Level, ...], Unique()]
Dimensions = Annotated[tuple[Dimension, ...], Unique()]
DimensionScores = Annotated[Mapping[Dimension, float | None], EveryKey()]
"""D1–D5, every one named (``None``: absent, not computed)."""
Interval = tuple[float, float]
"""A 95 % interval ``(low, high)``."""

_LOCUS = Custom(Locus.to_json, Locus.of, locus_schema)

ProblemKind = Literal["unknown_id", "level_contradiction", "duplicate", "impossible_usage",
                      "torn_last_line", "malformed"]
"""A kind of skipped line of a responses file (``models.recorded.PROBLEM_KINDS``)."""


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
class ViolationDetail(JsonRecord):
    """One violated check of a sample: the constraint (as written or derived), its category
    (``verify.verdict.CATEGORIES``) and, for counts, degrees and numbers, ``observed − target``.

    ``expected``, ``observed`` and ``where`` (the verdict's locus, lists already capped by the
    verifier) are for people (the HTML report draws ``where``); ``None``/empty in reports
    written before they were kept, and not compared."""

    constraint: str
    category: Category
    gap: float | None = None
    expected: str | None = field(default=None, compare=False)
    observed: str | None = field(default=None, compare=False)
    where: Locus = field(default_factory=Locus, compare=False, metadata={"codec": _LOCUS})


@dataclass(frozen=True)
class SampleResult(JsonRecord):
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
    input_tokens: Count | None = None
    output_tokens: Count | None = None
    usage_source: str | None = None
    api_calls: Count = 1
    truncated: bool = False
    cached: bool = field(default=False, compare=False, metadata={"json": None})
    raw_answer: str | None = None
    steps: tuple[MethodStep, ...] = ()
    violation_details: tuple[ViolationDetail, ...] = ()


@dataclass(frozen=True)
class ItemResult(JsonRecord):
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

    instruction_id: Name
    level: Level
    cell: Name
    model: Name
    strategy: Name
    method: Name = METHOD_BASELINE
    feasible: bool = True
    size: str | None = None
    outcome: Outcome = "passed"
    error: str | None = None
    expected_failure: bool = False
    valid_rate: Unit | None = field(default=None, metadata={"json": "d1_valid_rate"})
    d4_instruction_score: Unit | None = None
    tpv: NonNegative | None = field(default=None, metadata={"json": "d5_tokens_per_valid"})
    dimension_scores: DimensionScores = field(default_factory=lambda: dict.fromkeys(DIMENSIONS))
    absent_dimensions: Mapping[Dimension, str] = field(default_factory=dict)
    level_score: Unit | None = None
    level_score_with_d5: Unit | None = None
    missing_dimensions: Dimensions = ()
    valid_samples: Count = 0
    tokens: Count | None = None
    api_calls: Count = 0
    api_per_valid: NonNegative | None = None
    d5_valid: Count = 0
    samples: tuple[SampleResult, ...] = ()
    details: ScoreDetails = field(default_factory=ScoreDetails)
    cluster: Name | None = None
    #: how many samples passed their own verification (the count the pass rule combined);
    #: written for items of two or more samples, ``None`` otherwise and in older reports
    passing_samples: Count | None = field(default=None, metadata={"omit_none": True})

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
        return _passing(self.samples) / len(self.samples)

    @property
    def passing(self) -> int | None:
        """How many of the item's samples passed: ``passing_samples`` when the report kept
        it, else counted from the samples' recorded violations and parse errors (a report of
        one sample, or older); ``None`` without samples."""
        if self.passing_samples is not None:
            return self.passing_samples
        return _passing(self.samples) if self.samples else None


def sample_passed(sample: SampleResult) -> bool:
    """Whether a sample passed: no violation of any kind and no parse error."""
    return not sample.violations and not sample.derived_violations and sample.error is None


def _passing(samples: Sequence[SampleResult]) -> int:
    """Samples with no violation of any kind and no parse error."""
    return sum(1 for s in samples if sample_passed(s))


@dataclass(frozen=True)
class _Problem(JsonRecord):
    """One skipped line of a responses file (``models.recorded.RecordProblem``)."""

    line: Positive
    kind: ProblemKind
    instruction_id: str | None
    message: str


@dataclass(frozen=True)
class _Problems(JsonRecord):
    """What reading a responses file skipped (``models.recorded.ReplayCheck``'s JSON): its
    non-blank lines, the records used, the records of levels not asked, every skipped line
    counted by kind, and the first of them in line order.  ``lines = used + not_asked +
    total``."""

    path: str
    lines: Count
    used: Count
    not_asked: Count
    total: Count
    by_kind: Mapping[ProblemKind, Positive]
    problems: Annotated[tuple[_Problem, ...], MaxItems(LISTED_IN_REPORT)]


# -- cells -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PromptSet(JsonRecord):
    """The prompt texts a cell's requests were made from when ``--gi-prompts`` overrode the
    packaged templates: the folder's ``name``, ``sha256`` of the overrides (each template's
    name and text: :meth:`~pytest_graphinstruct.prompts.texts.TemplateSet.sha256`) and the
    ``templates`` overridden."""

    name: Name
    sha256: Sha256
    templates: tuple[Name, ...] = ()

    def describe(self) -> str:
        """``worse_prompts (sha256:1a2b3c4d5e6f…)``: the name and the start of the hash."""
        return f"{self.name} ({self.sha256[:19]}…)"


def describe_prompts(prompts: PromptSet | None) -> str:
    """A cell's prompt set in a few words: :meth:`PromptSet.describe`, or ``the packaged
    templates`` for ``None`` (no ``--gi-prompts``, or a report written before the prompt set
    was kept)."""
    return "the packaged templates" if prompts is None else prompts.describe()


@dataclass(frozen=True)
class CellMetadata(JsonRecord):
    """What produced a cell: model, strategy, method, suite, sampling and decoding.

    ``source`` says where the cell was read from when it was not written by this version
    (``graphinstruct-report/1``, ``release-quality-json``); ``None`` for our own reports.
    """

    tool: str | None = field(default=None, kw_only=True)
    model: Name
    strategy: Name
    method: Name = METHOD_BASELINE
    constraint: str | None = None
    model_info: str | None = None
    suite: str | None = None
    levels: Levels | None = None
    samples_per_instruction: Positive | None = None
    pass_rule: PassRule | None = None
    decoding: Mapping[str, Any] = field(default_factory=dict)
    partial: bool = False
    quality_only: bool = True
    missing_dimensions: Dimensions = ()
    source: str | None = None
    method_settings: Mapping[str, Any] = field(default_factory=dict)
    #: the model version its answers came from: ``--gi-model-version``, else the snapshot the
    #: endpoint said it served (the response's ``model`` field); ``None``: not known
    model_version: str | None = None
    #: the prompt set of ``--gi-prompts`` (``None``: the packaged templates, or a report
    #: written before it was kept; not written then)
    prompts: PromptSet | None = field(default=None, metadata={"omit_none": True})
    #: ``--gi-samples=auto``: the most samples an instruction was asked (its items' samples
    #: vary; ``samples_per_instruction`` is then ``None``); not written for a fixed count
    samples_cap: Positive | None = field(default=None, metadata={"omit_none": True})

    @property
    def label(self) -> str:
        return cell_label(self.model, self.strategy, self.method)

    @property
    def distinct_label(self) -> str:
        """The label, with the prompt set when ``--gi-prompts`` made one (``m-zero-shot
        [prompts worse (sha256:1a2b3c4d5e6f…)]``): cells of two runs that differ only in their
        prompts are told apart where cells of several reports are set side by side."""
        if self.prompts is None:
            return self.label
        return f"{self.label} [prompts {self.prompts.describe()}]"


@dataclass(frozen=True)
class ConsistencyRow(JsonRecord):
    """Consistency over samples of a level or a cell (docs/PLUGIN.md, "Consistency over
    samples"): over the ``items`` with samples, at ``k`` (the fewest samples any of them has),
    pass@1 (the mean share of passing samples), pass@k (at least one of ``k`` samples passes)
    and pass^k (``pass_all_k``: all ``k`` pass), each with its 95 % bootstrap interval over the
    items; ``flaky`` items passed some samples and failed others.  ``left_out`` items had no
    sample to count (errors, skipped) and are in no figure."""

    k: Positive
    items: Count
    left_out: Count
    flaky: Count
    pass_at_1: Unit
    pass_at_1_ci95: Interval
    pass_at_k: Unit
    pass_at_k_ci95: Interval
    pass_all_k: Unit
    pass_all_k_ci95: Interval


@dataclass(frozen=True)
class FlakyItem(JsonRecord):
    """An item whose samples disagree: ``passing`` of its ``samples`` passed (``0 < passing <
    samples``)."""

    instruction_id: Name
    level: Level
    passing: Count
    samples: Positive


@dataclass(frozen=True)
class LevelRow(JsonRecord):
    """One level of one cell: item counts by outcome, mean dimensions, level score and CI."""

    items: Count
    passed: Count
    failed: Count
    error: Count
    skipped: Count
    pass_rate: Unit | None
    dimensions: DimensionScores
    level_score: Unit | None
    level_score_ci95: Interval | None
    scored_items: Count
    #: pass@1, pass@k and pass^k over the level's items (``None``: one sample per item)
    consistency: ConsistencyRow | None = field(default=None, metadata={"omit_none": True})


@dataclass(frozen=True)
class CellSummary(JsonRecord):
    """A cell's totals: outcomes, S_total (paper form and renormalized over the levels run)
    with its CI, cost (tokens, TPV, calls), and — over the cells of a run — the Pareto view."""

    items: Count
    passed: Count
    failed: Count
    error: Count
    skipped: Count
    #: the same as ``error`` (items with no answer), under the release's name
    infra_errors: Count = field(init=False, repr=False, compare=False)
    s_total: NonNegative | None
    s_total_renormalized: Unit | None
    s_total_ci95: Interval | None = None
    levels_present: Levels = ()
    levels_missing: Levels = ()
    tokens_total: Count | None = None
    usage_missing_items: Count = 0
    usage_sources: Mapping[str, Count] = field(default_factory=dict)
    valid_outputs: Count = 0
    tpv: NonNegative | None = None
    api_calls: Count = 0
    pareto_optimal: bool | None = None
    pareto_bonus: Annotated[int, Bounds(0, 1)] | None = None
    pareto_compared_cells: Count | None = None
    s_final: NonNegative | None = None
    q_per_ktpv: NonNegative | None = None
    frontier_distance: NonNegative | None = None
    #: pass@1, pass@k and pass^k over the cell's items (``None``: one sample per item)
    consistency: ConsistencyRow | None = field(default=None, metadata={"omit_none": True})

    def __post_init__(self) -> None:
        object.__setattr__(self, "infra_errors", self.error)


@dataclass(frozen=True)
class CellReport(JsonRecord):
    """One cell of a run: metadata, summary, per-level rows, every item in suite order, and
    (with two or more samples per item) the flaky items."""

    metadata: CellMetadata
    summary: CellSummary
    per_level: Mapping[Level, LevelRow]
    per_instruction: tuple[ItemResult, ...]
    #: the items whose samples disagree, in suite order (``None``: one sample per item)
    flaky: tuple[FlakyItem, ...] | None = field(default=None, metadata={"omit_none": True})
    # The GraphInstruct release's quality.json fields, so a cell is a release file too.
    per_level_scores: Mapping[Level, Unit | None] = field(init=False, repr=False,
                                                                compare=False)
    total_score: NonNegative | None = field(init=False, repr=False, compare=False)
    final_score: NonNegative | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "per_level_scores",
                           {lv: row.level_score for lv, row in sorted(self.per_level.items())})
        object.__setattr__(self, "total_score", self.summary.s_total)
        object.__setattr__(self, "final_score", self.summary.s_final)

    @property
    def label(self) -> str:
        return self.metadata.label

    def scored_level_scores(self) -> dict[str, tuple[Level, float]]:
        """``{instruction id: (level, level score)}`` over the scored items with a score."""
        return {r.instruction_id: (r.level, r.level_score) for r in self.per_instruction
                if r.scored and r.level_score is not None}


# -- runs --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ParetoSummary(JsonRecord):
    """The run-wide part of the Pareto view (per-cell marks live in each cell's summary)."""

    excluded_unknown_cost: tuple[str, ...] = ()
    cost_at_q08: Mapping[str, NonNegative | None] = field(default_factory=dict)
    sigma_strat: Mapping[str, NonNegative | None] = field(default_factory=dict)


MISSING_SHOWN = 200
"""At most this many missing item names are written into a report's coverage."""


@dataclass(frozen=True)
class Coverage(JsonRecord):
    """What a run covers: complete, or partial with the reason and the items it lacks.

    A partial report never passes a gate and never becomes a baseline.  ``selected`` is the
    number of items the run selected (``None`` when it stopped before it knew); ``missing``
    names items (``ID[cell]``) that have no result, at most :data:`MISSING_SHOWN` of
    ``missing_count``.
    """

    complete: bool = True
    reason: str | None = None
    selected: Count | None = None
    missing: Annotated[tuple[str, ...], MaxItems(MISSING_SHOWN)] = ()
    missing_count: Count = 0

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


@dataclass(frozen=True)
class Machine(JsonRecord):
    """The machine a run ran on (no user name)."""

    hostname: str | None = None
    platform: str | None = None
    python: str | None = None
    cpu_count: Positive | None = None


@dataclass(frozen=True)
class GitState(JsonRecord):
    """The commit of the rootdir's git work tree and whether tracked files differed from it
    (``dirty``: ``None`` when unknown)."""

    commit: Annotated[str, Pattern(r"^[0-9a-f]{7,64}$")]
    dirty: bool | None = None


@dataclass(frozen=True)
class ShardSelection(JsonRecord):
    """``--gi-shard=K/N``: this run is shard ``index`` of ``count``, chosen from ``universe``
    — every ``(instruction id, level)`` the unsharded run would have selected (before ``-k`` /
    ``-m``), in suite order — so a merge can tell which instructions a missing shard held."""

    index: Positive
    count: Positive
    universe: tuple[tuple[str, Level], ...] = ()

    def __post_init__(self) -> None:
        """Raises ValueError for a shard no run can have been (``1 <= index <= count <=
        MAX_SHARDS``), so a report file cannot make ``merge`` list billions of missing
        shards."""
        if not 1 <= self.index <= self.count <= MAX_SHARDS:
            raise ValueError(f"shard {self.index}/{self.count} is impossible (1 <= K <= N <= "
                             f"{MAX_SHARDS:,})")


@dataclass(frozen=True)
class ItemFilter(JsonRecord):
    """How a run chose its items: pytest's ``-k`` and ``-m``, ``--gi-levels``,
    ``--gi-per-level``, ``--gi-shard``, and how many items it selected (``None``: not given /
    not known)."""

    keyword: str | None = None
    markers: str | None = None
    levels: tuple[Level, ...] | None = None
    per_level: Positive | None = None
    selected: Count | None = None
    shard: ShardSelection | None = None


@dataclass(frozen=True)
class CacheUse(JsonRecord):
    """A cell's samples and how many of their answers came from the answer cache (cached
    before the run began), with where those came from: the model snapshots they were cached
    from (``None`` in the list: not recorded), when the oldest was cached (UTC ISO 8601), and
    the snapshot the endpoint said it served during the run (``served``; ``None``: not known,
    or no endpoint).  Reports written before these were kept read as empty and ``None``."""

    cached: Count
    samples: Count
    snapshots: tuple[str | None, ...] = ()
    oldest: str | None = None
    served: str | None = None

    @property
    def stale(self) -> tuple[str, ...]:
        """The snapshots of cached answers other than the one served during the run (reused
        on purpose, ``gi_reuse_stale_cache``); empty when either side is not known."""
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


@dataclass(frozen=True)
class Spend(JsonRecord):
    """What a run really sent to one model's endpoint, each request once however many cells
    asked for it (the cells' ``api_calls`` and tokens charge a shared request to each of them):
    ``requests`` — HTTP requests, ``retries`` of them beyond a request's first call;
    ``input_tokens`` and ``output_tokens`` — the usage of the answers obtained (the
    provider's, or counted offline where it sent none); ``cost`` — those tokens at the price
    table's prices, in its ``currency`` (``None``: the table has no price for the model): the
    batch price for the answers of batch lines, the list price for the rest; ``cached`` —
    answers an earlier run's answer cache served, for which nothing was sent; ``batched`` — the
    requests a batch line answered (``--gi-batch``; not written without batch mode);
    ``in_flight`` — request lines in batches still live at the endpoint when the run ended (an
    interrupted batch run's: submitted, billed when they finish, counted in none of the other
    fields; not written when none).  Under xdist each process counts its own and the report
    holds their sum."""

    requests: Count
    retries: Count
    input_tokens: Count
    output_tokens: Count
    cost: NonNegative | None
    currency: Name | None
    cached: Count
    batched: Count | None = field(default=None, metadata={"omit_none": True})
    in_flight: Count | None = field(default=None, metadata={"omit_none": True})

    def combined(self, other: Spend) -> Spend:
        """Both records as one (shards of one run): counts and costs summed; the cost is
        ``None`` when either is, or when their currencies differ."""
        same = self.cost is not None and other.cost is not None and \
            self.currency == other.currency
        return Spend(self.requests + other.requests, self.retries + other.retries,
                     self.input_tokens + other.input_tokens,
                     self.output_tokens + other.output_tokens,
                     (self.cost or 0.0) + (other.cost or 0.0) if same else None,
                     self.currency if same else None, self.cached + other.cached,
                     _sum_or_none(self.batched, other.batched),
                     _sum_or_none(self.in_flight, other.in_flight))


@dataclass(frozen=True)
class FingerprintChange(JsonRecord):
    """A model whose endpoint's ``system_fingerprint`` (the provider's backend configuration)
    changed under the snapshot it serves: when the run began the endpoint served ``snapshot``
    with the fingerprint ``served``, and answers the cache held from that snapshot had come
    with other fingerprints (``cached``: fingerprint → how many).  Shown, never compared:
    those answers are reused, but a score that moved may be why (docs/PLUGIN.md "Cache and
    model snapshots").  Names are the endpoint's, escaped when they were read."""

    snapshot: Name
    served: Name
    cached: Mapping[str, Positive]

    def line(self, model: str) -> str:
        """The one line a run says about it (the terminal's warning, the Markdown's line)."""
        olds = ", ".join(f"{n} with {name}" for name, n in sorted(self.cached.items()))
        return (f"{model}: the endpoint serves {self.snapshot} ({self.served}), and "
                f"{sum(self.cached.values())} answer(s) cached from {self.snapshot} came with "
                f"another system_fingerprint ({olds}): reused (a fingerprint is shown, never "
                "compared), but the provider's backend configuration changed since")


def _sum_or_none(a: int | None, b: int | None) -> int | None:
    """``a + b``, ``None`` standing for 0 unless both are ``None``."""
    return None if a is None and b is None else (a or 0) + (b or 0)


def _replay_check(data: Any) -> ReplayCheck:
    """A ``replay_problems`` object read strictly (its JSON form is ``ReplayCheck``'s own)."""
    check = _Problems.from_json(data)
    if check.total != sum(check.by_kind.values()):
        raise ValueError(f"total {check.total} is not the sum of by_kind")
    return ReplayCheck.from_json(data)


def _replay_schema() -> dict[str, Any]:
    from pytest_graphinstruct.run.records.schema import record_schema

    return record_schema(_Problems)


_REPLAY = Custom(ReplayCheck.to_json, _replay_check, _replay_schema)


@dataclass(frozen=True)
class RunInfo(JsonRecord):
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
    suite_hash: Sha256 | None = None
    git: GitState | None = None
    endpoints: Mapping[str, str | None] = field(default_factory=dict)
    filter: ItemFilter = field(default_factory=ItemFilter)
    pools: str | None = None
    replay: str | None = None
    cache_dir: str | None = None
    cache: Mapping[str, CacheUse] = field(default_factory=dict)
    replay_sha256: Sha256 | None = None  #: ``sha256:<hex>`` of the ``--gi-replay`` file
    #: level → ``sha256:<hex>`` of the suite file it came from (a baseline of the same suite
    #: matches on the levels both ran; empty in reports written before it was kept)
    level_hashes: Mapping[Level, Sha256] = field(default_factory=dict)
    #: what reading the ``--gi-replay`` file skipped, line by line (``None``: no replay file,
    #: or a report written before it was kept)
    replay_problems: ReplayCheck | None = field(default=None, metadata={"codec": _REPLAY})
    #: model → what the run really sent to its endpoint (:class:`Spend`); not written when no
    #: model had an endpoint (the oracle, recorded answers) or in reports written before it
    #: was kept (``None``: not recorded)
    spend: Mapping[str, Spend] | None = field(default=None, metadata={"omit_none": True})
    #: which suite ran: ``pytest-graphinstruct`` at the package's version for the suite the
    #: package ships (suite.shipped), else the suite folder's name and no version (its
    #: ``suite_hash`` says which files); not written in reports from before it was kept
    suite_name: str | None = field(default=None, metadata={"omit_none": True})
    suite_version: str | None = field(default=None, metadata={"omit_none": True})
    #: where D3's GCNs trained: ``cpu`` or ``cuda`` (``--gi-d3-device``; ``auto`` is recorded
    #: as what it chose); not written in reports from before it was kept
    d3_device: str | None = field(default=None, metadata={"omit_none": True})
    #: model → the ``system_fingerprint`` its endpoint served when the run began, where answers
    #: cached from the same snapshot came with another (:class:`FingerprintChange`: the run's
    #: warning of it); not written when none changed, or in reports from before it was kept
    fingerprint_changes: Mapping[str, FingerprintChange] | None = field(
        default=None, metadata={"omit_none": True})

    @property
    def spent(self) -> Spend | None:
        """Every model's :attr:`spend` added (``None``: not recorded, or no model)."""
        spends = list((self.spend or {}).values())
        if not spends:
            return None
        total = spends[0]
        for one in spends[1:]:
            total = total.combined(one)
        return total

    @property
    def cached_samples(self) -> int:
        """Samples of the whole run whose answer came from the cache."""
        return sum(c.cached for c in self.cache.values())


@dataclass(frozen=True)
class LevelChange(JsonRecord):
    """One compared level of a gated cell: paired instructions, the change (``current −
    baseline``) with its unadjusted 95 % interval, the one-sided p-values of "no drop" and "no
    rise" (as tested, and Holm-adjusted over the gate's family of ``tests`` level tests), whether
    the gate called it a regression or an improvement, the gate's words for it, and the
    smallest drop it can detect at 80 % power, of ``measure`` (``None``: not estimated, or no
    drop at all is detectable there).

    ``change``/``low``/``high`` are of ``measure``: the level score, or the pass rate where
    level scores are not comparable (other sample counts; ``paired_samples``: the adaptive
    mode's pass rate on paired samples).  Beside a level-score change, ``pass_change``,
    ``pass_low``, ``pass_high`` are the same instructions' pass-rate change and its interval,
    where both cells keep every sample's verdict.  ``verdict`` is what every view prints for
    the level and ``note`` why the interval beside it does not read like it, when it does not
    (the interval is unadjusted and over instructions; the verdict is the test's, Holm-adjusted).
    Reports written before issue 48 hold only the fields up to ``detectable`` (their ``p_drop``
    is the unadjusted one); the methods below show them as they can.
    """

    level: Level
    n: Count
    change: float
    low: float
    high: float
    p_drop: float | None
    regressed: bool
    detectable: float | None = None
    measure: Literal["level score", "pass rate"] = "level score"
    paired_samples: bool = False
    pass_change: float | None = None
    pass_low: float | None = None
    pass_high: float | None = None
    p_drop_holm: Unit | None = None
    p_rise: Unit | None = None
    p_rise_holm: Unit | None = None
    tests: Count | None = None
    improved: bool = False
    verdict: str | None = None
    note: str | None = None

    def change_texts(self) -> list[tuple[str, str]]:
        """``(what, "−0.059 [−0.133, +0.015]")`` for each change shown: the level score and the
        pass rate where both are known, else the one measured."""
        what = ("pass rate on paired samples" if self.paired_samples
                else str(self.measure))
        out = [(what, _interval_text(self.change, self.low, self.high))]
        if self.pass_change is not None and self.pass_low is not None \
                and self.pass_high is not None:
            out.append(("pass rate", _interval_text(self.pass_change, self.pass_low,
                                                    self.pass_high)))
        return out

    def changes_text(self) -> str:
        """``level score −0.059 [−0.133, +0.015], pass rate −0.100 [−0.214, +0.014]``."""
        return ", ".join(f"{what} {text}" for what, text in self.change_texts())

    @property
    def rose(self) -> bool:
        """Whether the change measured went up (the p-value shown is then of "no rise")."""
        return self.change > 0

    def p_text(self) -> str:
        """The p-value shown beside the verdict, labelled: of "no drop" (of "no rise" when the
        change went up), ``Holm p(no drop)=1.2e-07`` when the report holds the Holm-adjusted
        one, else ``p(no drop)=0.0001 unadjusted`` (a report written before issue 48), ``p —``
        when it holds none."""
        rise = self.rose and self.p_rise_holm is not None
        what = "no rise" if rise else "no drop"
        held = self.p_rise_holm if rise else self.p_drop_holm
        if held is not None:
            return f"Holm p({what})={format_p(held)}"
        if self.p_drop is not None:
            return f"p(no drop)={format_p(self.p_drop)} unadjusted"
        return "p —"

    def verdict_text(self) -> str:
        """The gate's words for the level, with the note when there is one (``regressed`` or
        ``—`` for a report that kept no words)."""
        word = self.verdict or ("regressed" if self.regressed else "—")
        return f"{word} ({self.note})" if self.note else word

    def describe(self) -> str:
        """``L2 level score −0.059 [−0.133, +0.015], pass rate −0.100 [−0.214, +0.014];
        Holm p(no drop)=1.2e-07: regressed (…)`` — the one text of the level every view
        shows."""
        return f"L{self.level} {self.changes_text()}; {self.p_text()}: {self.verdict_text()}"

    def short_text(self) -> str:
        """The changes without intervals, e.g. ``−0.059, pass rate −0.100`` (a level-score
        change first, unnamed) or ``pass rate −0.100``."""
        what = self.change_texts()[0][0]
        texts = [f"{self.change:+.3f}" if what == "level score" else f"{what} {self.change:+.3f}"]
        if self.pass_change is not None:
            texts.append(f"pass rate {self.pass_change:+.3f}")
        return ", ".join(texts)


def format_p(p: float) -> str:
    """A p-value as every view prints it: two significant digits (``0.0006``, ``1.2e-07``,
    ``1``)."""
    return f"{p:.2g}"


def _interval_text(x: float, low: float, high: float) -> str:
    return f"{x:+.3f} [{low:+.3f}, {high:+.3f}]"


@dataclass(frozen=True)
class LevelOmission(JsonRecord):
    """Items of one level that a gated run and its baseline do not both score, on the side
    ``missing_from``: ``run`` — baseline items the run has no score for, ``items`` of the
    baseline's ``of``; ``baseline`` — run items the baseline has no score for, ``items`` of the
    run's ``of`` (a whole level when equal); and why (that side's filter, or no result).
    Reports written before the baseline's side was named hold only the run's (``run``)."""

    level: Level
    items: Count
    of: Count
    reason: str
    missing_from: Literal["run", "baseline"] = "run"

    @property
    def whole_level(self) -> bool:
        return self.items == self.of

    def describe(self) -> str:
        """``L2 (left out by -k)``, ``L1: 8 of 200 instructions (no result in this run)``;
        the baseline's side: ``L2 (not in the baseline: left out by --gi-levels)``, ``L1: 3
        of 200 instructions not in the baseline (no score in the baseline …)``."""
        if self.missing_from == "baseline":
            if self.whole_level:
                return f"L{self.level} (not in the baseline: {self.reason})"
            return (f"L{self.level}: {self.items} of {self.of} instructions not in the "
                    f"baseline ({self.reason})")
        if self.whole_level:
            return f"L{self.level} ({self.reason})"
        return f"L{self.level}: {self.items} of {self.of} instructions ({self.reason})"


@dataclass(frozen=True)
class CellGate(JsonRecord):
    """One cell of a gated run against its baseline cell: what was compared and changed."""

    cell: str
    baseline_cell: str
    levels: tuple[LevelChange, ...] = ()
    not_compared: tuple[LevelOmission, ...] = ()
    newly_failing: tuple[str, ...] = ()
    newly_passing: tuple[str, ...] = ()
    now_errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class GateRecord(JsonRecord):
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


@dataclass(frozen=True)
class RunReport(JsonRecord):
    """A whole run: its cells (in configured order), the run-wide Pareto summary, what the
    run covers (``partial`` is ``not coverage.complete``, kept as the release's flag) and what
    produced it (``run``; ``None`` in reports written before it was kept, and for reports
    built outside a pytest run)."""

    schema: Literal["graphinstruct-report/2"] = field(default=SCHEMA, init=False, repr=False,
                                                      compare=False)
    tool: str | None = field(default=None, kw_only=True)
    partial: bool = field(default=False, kw_only=True)
    coverage: Coverage = field(default_factory=Coverage, kw_only=True)
    run: RunInfo | None = field(default=None, kw_only=True)
    #: the run's verdict (``None``: not judged, or older)
    gate: GateRecord | None = field(default=None, kw_only=True)
    pareto: ParetoSummary = field(default_factory=ParetoSummary, kw_only=True)
    cells: tuple[CellReport, ...]

    @classmethod
    def from_json(cls, data: Any) -> RunReport:
        """Read a ``graphinstruct-report/2`` object, checking every field.

        Raises:
            ReportError: another schema, or a field missing, unknown or of the wrong type or
                range (the message names its path: ``cells[0].summary.tpv``).
        """
        if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
            got = data.get("schema") if isinstance(data, Mapping) else type(data).__name__
            raise ReportError(f"not a {SCHEMA} report (schema: {got!r})")
        try:
            return decode(cls, data)
        except ShapeError as exc:
            raise ReportError(f"malformed {SCHEMA} report at {exc}") from None

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


def items_in_order(items: Sequence[ItemResult], order: Mapping[str, int]) -> tuple[ItemResult, ...]:
    """``items`` sorted by ``order`` (instruction id → position; unknown ids last, stable)."""
    return tuple(sorted(items, key=lambda r: order.get(r.instruction_id, 1 << 30)))
