"""The dry run's table (``--gi-dry-run``): one row per cell and a total, then one line per
thing the figures leave out or assume (:func:`estimate_lines`)."""

from __future__ import annotations

from tabulate import tabulate

from pytest_graphinstruct.run.estimate import (
    ASSUMED_OVERHEAD_S,
    ASSUMED_TOKENS_PER_S,
    RunEstimate,
)


def _money(value: float | None, currency: str) -> str:
    return "no price" if value is None else f"{value:.4f} {currency}"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def estimate_lines(estimate: RunEstimate) -> list[str]:
    """The estimate as text: the table (requests, input tokens, output tokens (estimated),
    cost at list and at batch price), the time, and its notes."""
    cur = estimate.currency
    rows = [[c.cell + (" *" if c.follow_ups else ""), c.requests, c.input_tokens,
             f"~{c.output_tokens}", _money(c.cost, cur), _money(c.batch_cost, cur)]
            for c in estimate.cells]
    rows.append(["total", estimate.requests, estimate.input_tokens,
                 f"~{estimate.output_tokens}", _money(estimate.total(), cur),
                 _money(estimate.total(batch=True), cur)])
    lines = ["GraphInstruct dry run: nothing was sent"]
    lines += tabulate(rows, headers=["cell", "requests", "input tokens",
                                     "output tokens (est.)", "cost (list)", "cost (batch)"],
                      disable_numparse=True).splitlines()
    pace = f"concurrency {estimate.concurrency}"
    if estimate.rate_limit:
        pace += f", at most {estimate.rate_limit:g} requests/s"
    lines.append(f"time: ~{_duration(estimate.time_s)} ({pace}; assumed {ASSUMED_OVERHEAD_S:g}s "
                 f"+ {ASSUMED_TOKENS_PER_S:g} output tokens/s per request)")
    lines.append(f"prices: {estimate.prices_origin}, taken {estimate.prices_taken} (list prices "
                 "change)")
    lines += [f"no price for {model}: give one with --gi-prices=FILE"
              for model in estimate.unpriced]
    if any(c.follow_ups for c in estimate.cells):
        lines.append("* iterative method: the first call of each chain only; its follow-up "
                     "calls depend on the answers and are not included")
    if not all(c.from_baseline for c in estimate.cells):
        lines.append("output tokens: default per level where no --gi-baseline report says "
                     "(docs/MODELS.md)")
    return lines
