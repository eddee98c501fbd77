"""What a run would cost before it is made (``--gi-dry-run``): per cell the requests, the input
tokens counted on the exact messages the run would send, the output tokens estimated, the cost
at list and at batch price, and the run's time (:func:`estimate_run`, :class:`RunEstimate`).

Promises:

* Nothing is sent and no backend is built: the requests are the run's own
  (:class:`~.requests.RequestBuilder`), counted with the model's ``tiktoken`` encoding by
  :meth:`~pytest_graphinstruct.models.backends.tokens.TokenCounter.count_messages` — the count the
  OpenAI-compatible backend falls back on, and the one the test server counts with.
  Identical requests (one cache key) count once, as the run sends them once.
* An iterative method's cell (VGIG, retry, self-consistency) counts the first call of each
  chain exactly; the follow-up calls depend on the answers and are not included (the cell says
  so: :attr:`CellEstimate.follow_ups`).
* Output tokens are the baseline report's average per sample and level (the same cell of the
  baseline when it has one, else all its cells; an iterative sample's first call) where it has
  them, else :data:`DEFAULT_OUTPUT_TOKENS`; never more than ``--gi-max-tokens``.
* Cost is ``None`` for a model the price table has no price for (never a guess).
* Time per model: its requests × the assumed latency of one (:data:`ASSUMED_OVERHEAD_S` +
  output tokens / :data:`ASSUMED_TOKENS_PER_S`) ÷ its concurrency, and at least its requests ÷
  ``gi_rate_limit``; the models run side by side, so the run takes the longest of them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pytest_graphinstruct.methods.registry import method_of
from pytest_graphinstruct.models.backends.tokens import TokenCounter, encoding_name_for
from pytest_graphinstruct.models.cost.prices import PriceTable, load_prices
from pytest_graphinstruct.run.config import Cell, RunConfig
from pytest_graphinstruct.run.method_runner import first_call
from pytest_graphinstruct.run.records.results import RunReport
from pytest_graphinstruct.run.requests import RequestBuilder
from pytest_graphinstruct.suite.instruction import Instruction

DEFAULT_OUTPUT_TOKENS: Final[Mapping[int, int]] = {0: 150, 1: 250, 2: 400, 3: 600, 4: 600,
                                                   5: 500}
"""Output tokens of one answer per level when no baseline says (a graph as an edge list, with
a sentence or two around it; chain-of-thought answers run longer)."""
ASSUMED_OVERHEAD_S: Final = 1.0
"""Assumed time of one request before its first output token (network, queue, prompt)."""
ASSUMED_TOKENS_PER_S: Final = 50.0
"""Assumed output speed of one request, tokens per second."""


@dataclass(frozen=True)
class CellEstimate:
    """One cell of the run as it would be asked: its requests, input tokens (counted), output
    tokens (estimated: from the baseline where ``from_baseline``), cost at list and at batch
    price (``None``: no price for the model), and whether follow-up calls are left out."""

    cell: str
    model: str
    requests: int
    input_tokens: int
    output_tokens: int
    cost: float | None
    batch_cost: float | None
    follow_ups: bool = False
    from_baseline: bool = False


@dataclass(frozen=True)
class RunEstimate:
    """The estimate of a whole run: its cells, the price table used, the time, what was
    assumed."""

    cells: tuple[CellEstimate, ...]
    currency: str
    prices_taken: str
    prices_origin: str
    time_s: float
    concurrency: int
    rate_limit: float | None

    @property
    def requests(self) -> int:
        return sum(c.requests for c in self.cells)

    @property
    def input_tokens(self) -> int:
        return sum(c.input_tokens for c in self.cells)

    @property
    def output_tokens(self) -> int:
        return sum(c.output_tokens for c in self.cells)

    @property
    def unpriced(self) -> tuple[str, ...]:
        """The models without a price, in order."""
        return tuple(dict.fromkeys(c.model for c in self.cells if c.cost is None))

    def total(self, *, batch: bool = False) -> float | None:
        """The run's cost (``None`` when a model has no price: a sum without it would be
        too low)."""
        costs = [c.batch_cost if batch else c.cost for c in self.cells]
        return None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)


def output_averages(baseline: RunReport, cell: str | None) -> dict[int, float]:
    """Level → the average output tokens of one answer in ``baseline``: over its cell
    ``cell`` when it has it, else over all its cells; an iterative sample counts its first
    call; samples without a count are left out."""
    cells = [c for c in baseline.cells if c.label == cell] or list(baseline.cells)
    counts: dict[int, list[int]] = defaultdict(list)
    for report_cell in cells:
        for item in report_cell.per_instruction:
            for sample in item.samples:
                out = sample.steps[0].output_tokens if sample.steps else sample.output_tokens
                if out is not None:
                    counts[item.level].append(out)
    return {level: sum(v) / len(v) for level, v in counts.items() if v}


def estimate_run(config: RunConfig, items: Sequence[tuple[Instruction, Cell]],
                 requests: RequestBuilder, samples: Callable[[Instruction, Cell], int],
                 prices: PriceTable, baseline: RunReport | None = None) -> RunEstimate:
    """The :class:`RunEstimate` of asking every sample of ``items`` (``samples``: how many an
    item asks) as ``requests`` builds them, priced by ``prices``, the output tokens from
    ``baseline`` where it has them (see the module's promises).

    Raises:
        ModelError: tokens cannot be counted offline (:class:`~.tokens.TokenCounter`).
    """
    counters: dict[str, TokenCounter] = {}
    seen: set[str] = set()
    tally: dict[str, list[int]] = {}  # cell label → [requests, input tokens, output tokens]
    latency: dict[str, float] = defaultdict(float)  # model → seconds of its requests
    averages: dict[str, dict[int, float]] = {}
    for inst, cell in items:
        if cell.label not in averages:
            averages[cell.label] = ({} if baseline is None
                                    else output_averages(baseline, cell.label))
        counter = counters.get(cell.model)
        if counter is None:
            counter = counters[cell.model] = TokenCounter(encoding_name_for(cell.model))
        iterative = method_of(cell.spec).iterative
        row = tally.setdefault(cell.label, [0, 0, 0])
        for k in range(samples(inst, cell)):
            request = requests.request(inst, cell, 0 if iterative else k)
            if iterative:  # at the chain's own temperature: not the plain cell's sample k
                request = first_call(request, k, config)
            key = request.cache_key(cell.model)
            if key in seen:
                continue
            seen.add(key)
            out = _output_tokens(averages[cell.label], inst.level, config.params.max_tokens)
            row[0] += 1
            row[1] += counter.count_messages((m.role, m.content) for m in request.messages)
            row[2] += out
            latency[cell.model] += ASSUMED_OVERHEAD_S + out / ASSUMED_TOKENS_PER_S
    cells = []
    for cell in config.cells:
        if cell.label not in tally:
            continue
        n, inp, out = tally[cell.label]
        price = prices.price(cell.model)
        cells.append(CellEstimate(
            cell.label, cell.model, n, inp, out,
            None if price is None else price.cost(inp, out),
            None if price is None else price.cost(inp, out, batch=True),
            follow_ups=method_of(cell.spec).iterative,
            from_baseline=bool(averages.get(cell.label))))
    return RunEstimate(tuple(cells), prices.currency, prices.taken, prices.origin,
                       _time_s(config, cells, latency), config.concurrency, config.rate_limit)


def _output_tokens(averages: Mapping[int, float], level: int, max_tokens: int | None) -> int:
    out = round(averages.get(level, DEFAULT_OUTPUT_TOKENS.get(level, 500)))
    return out if max_tokens is None else min(out, max_tokens)


def _time_s(config: RunConfig, cells: Sequence[CellEstimate],
            latency: Mapping[str, float]) -> float:
    """The run's time: the longest model's (see the module's promises)."""
    requests: dict[str, int] = defaultdict(int)
    for c in cells:
        requests[c.model] += c.requests
    longest = 0.0
    for model, n in requests.items():
        concurrency = 1 if model == "local" else config.concurrency
        seconds = latency[model] / concurrency
        if config.rate_limit:
            seconds = max(seconds, n / config.rate_limit)
        longest = max(longest, seconds)
    return longest


def price_table(run: RunConfig) -> PriceTable:
    """The run's price table: ``--gi-prices``, else the packaged snapshot.

    Raises:
        GraphInstructError: the file cannot be read or is not a price table (one line).
    """
    return load_prices(run.prices)
