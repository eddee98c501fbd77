"""The terminal summary of a run report: a row per cell and level, a row per cell, notes, and
(with two or more samples per item) the consistency over samples and the flaky items."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from tabulate import tabulate

from pytest_graphinstruct.report.untrusted import escape
from pytest_graphinstruct.run.records.results import ConsistencyRow, RunInfo, RunReport
from pytest_graphinstruct.vocab import DIMENSIONS
from pytest_graphinstruct.vocab import RECORDED_PROBLEMS_SHOWN as SHOWN


def _fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _ci(ci: Sequence[float] | None) -> str:
    return "—" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


DASH_LEGEND = ("— in a D column: not computed at that level — the dimension has weight 0 there "
               "(D2 counts at L4 only, D3 at L3–L5) or no scored item had a value (D2 without "
               "reference text, D5 without token usage)")
"""The line under the per-level table when a dimension column shows ``—``."""


def summary_lines(report: RunReport) -> list[str]:
    """The terminal summary: per cell and level (with :data:`DASH_LEGEND` when a dimension
    shows ``—``), then per cell (each interval beside the score it belongs to: ``S_level 95%
    CI``, ``S_total 95% CI``), then one note per caveat (an incomplete run says so first)."""
    rows = []
    for c in report.cells:
        for lv, row in sorted(c.per_level.items()):
            rows.append([escape(c.label), f"L{lv}", row.items, row.passed, row.failed, row.error,
                         _fmt(row.pass_rate), *(_fmt(row.dimensions.get(d)) for d in DIMENSIONS),
                         _fmt(row.level_score), _ci(row.level_score_ci95)])
    lines = tabulate(rows, headers=["cell", "level", "items", "pass", "fail", "error",
                                    "pass rate", *DIMENSIONS, "S_level", "S_level 95% CI"],
                     tablefmt="simple").splitlines()
    if any(row[7 + k] == "—" for row in rows for k in range(len(DIMENSIONS))):
        lines.append(DASH_LEGEND)
    lines.append("")
    crow = []
    for c in report.cells:
        s = c.summary
        crow.append([escape(c.label) + (" *" if s.pareto_optimal else ""), _fmt(s.s_total),
                     _ci(s.s_total_ci95), _fmt(s.s_total_renormalized), _fmt(s.s_final),
                     _fmt(s.tpv, 1), s.api_calls, _fmt(s.q_per_ktpv), s.infra_errors])
    lines += tabulate(crow, headers=["cell (* Pareto-optimal)", "S_total", "S_total 95% CI",
                                     "S_total (levels run)", "S_final", "TPV", "API calls",
                                     "Q/kTPV", "infra errors"], tablefmt="simple").splitlines()
    for c in report.cells:
        s, m = c.summary, c.metadata
        notes = []
        if s.levels_missing:
            notes.append(f"levels not run: {', '.join(f'L{x}' for x in s.levels_missing)} "
                         "(S_total counts them as 0; the renormalized column does not)")
        if m.missing_dimensions:
            notes.append(f"absent dimensions (level scores renormalized without them): "
                         f"{', '.join(m.missing_dimensions)}")
        if s.usage_missing_items:
            notes.append(f"{s.usage_missing_items} item(s) without token usage: TPV, D5 absent")
        counted = {k: v for k, v in s.usage_sources.items()
                   if "tiktoken" in k and "impossible" not in k}
        if counted:
            notes.append("token usage counted offline (the provider sent none) for " + ", ".join(
                f"{v} sample(s) with {k}" for k, v in counted.items()))
        distrusted = {k: v for k, v in s.usage_sources.items() if "impossible" in k}
        if distrusted:
            notes.append("token usage recounted offline (the provider's count was impossible) "
                         "for " + ", ".join(f"{v} sample(s) with {k}"
                                            for k, v in distrusted.items()))
        if len(report.cells) == 1:
            notes.append("one cell only: no Pareto comparison, S_final = S_total (no bonus)")
        if m.samples_per_instruction == 1 and s.items:
            notes.append("one sample per instruction: D1's uniqueness term is 0 by definition "
                         "(it needs 2+ samples), so D1 is at most 0.7 and S_total stays below 1 "
                         "even when every answer is right (the paper uses --gi-samples=5)")
        if s.error:
            notes.append(f"pass rate = pass / (pass + fail): the {s.error} errored item(s) "
                         "(no answer obtained) are left out of it and counted under 'error'")
        for n in notes:
            lines.append(f"{escape(c.label)}: {n}")
    lines += consistency_lines(report)
    lines += cache_lines(report.run)
    lines += spend_lines(report.run)
    if report.partial:
        lines.insert(0, f"INCOMPLETE RUN — {escape(report.coverage.describe())}")
    return lines


FLAKY_SHOWN = 10
"""Flaky items the terminal names per cell (the rest are counted; every one is in the JSON,
Markdown and HTML reports)."""


def _figure(x: float, ci: Sequence[float]) -> str:
    return f"{x:.3f} {_ci(ci)}"


def _consistency_row(label: str, level: str, row: ConsistencyRow) -> list[object]:
    return [label, level, row.k, row.items, row.left_out, _figure(row.pass_at_1,
            row.pass_at_1_ci95), _figure(row.pass_at_k, row.pass_at_k_ci95),
            _figure(row.pass_all_k, row.pass_all_k_ci95), row.flaky]


def consistency_lines(report: RunReport, limit: int = FLAKY_SHOWN) -> list[str]:
    """Consistency over samples (none: no cell of two or more samples per item, no line): a
    table of pass@1, pass@k and pass^k with their 95 % intervals per cell and level and for
    the cell, then per cell its flaky items (``id c/n``), ``limit`` of them named and the rest
    counted."""
    rows: list[list[object]] = []
    flaky: list[str] = []
    for c in report.cells:
        total = c.summary.consistency
        if total is None:
            continue
        label = escape(c.label)
        rows += [_consistency_row(label, f"L{lv}", row.consistency)
                 for lv, row in sorted(c.per_level.items()) if row.consistency is not None]
        rows.append(_consistency_row(label, "all", total))
        items = c.flaky or ()
        if items:
            named = ", ".join(f"{escape(x.instruction_id)} {x.passing}/{x.samples}"
                              for x in items[:limit])
            more = f" … and {len(items) - limit} more" if len(items) > limit else ""
            flaky.append(f"{label}: flaky (some samples pass, some fail): {named}{more}")
    if not rows:
        return []
    lines = ["", "consistency over samples (k samples per item; pass^k: every one passes; "
             "items without an answer left out)"]
    lines += tabulate(rows, headers=["cell", "level", "k", "items", "left out",
                                     "pass@1 95% CI", "pass@k 95% CI", "pass^k 95% CI",
                                     "flaky"], tablefmt="simple").splitlines()
    return lines + flaky


def replay_lines(run: RunInfo | None, limit: int = SHOWN) -> list[str]:
    """What reading the recorded answers found (``run.replay_problems``): the count line, then
    one line per skipped line up to ``limit`` and ``… and K more``; nothing without a
    responses file.  The text is the report's, escaped and bounded when it was read."""
    check = None if run is None else run.replay_problems
    return [] if check is None else check.lines_to_show(limit)


def cache_lines(run: RunInfo | None) -> list[str]:
    """What the run took from the answer cache (none: no line): how many answers, from which
    model snapshots, how old the oldest was when the run finished; and a second line when
    answers of another snapshot than the one served were reused on purpose.  Snapshot names
    come from the endpoint: they are :func:`escape`-d."""
    if run is None:
        return []
    uses = list(run.cache.values())
    cached, samples = sum(u.cached for u in uses), sum(u.samples for u in uses)
    if not cached:
        return []
    snapshots = list(dict.fromkeys(s for u in uses if u.cached for s in u.snapshots))
    names = ", ".join(escape(s) if s is not None else "snapshot not recorded"
                      for s in [*sorted(x for x in snapshots if x is not None),
                                *([None] if None in snapshots else [])])
    oldest = min((u.oldest for u in uses if u.cached and u.oldest), default=None)
    age = _age(oldest, run.finished)
    detail = ", ".join(x for x in (names, f"oldest {age}" if age else "") if x)
    share = f"all {cached}" if cached == samples else f"{cached} of {samples}"
    lines = [f"{share} answers came from the cache" + (f" ({detail})" if detail else "")]
    stale: dict[str, set[str]] = {}
    for u in uses:
        if u.cached and u.served is not None and u.stale:
            stale.setdefault(u.served, set()).update(u.stale)
    if stale:
        which = "; ".join(f"cached from {', '.join(escape(x) for x in sorted(olds))}, served "
                          f"now {escape(served)}" for served, olds in sorted(stale.items()))
        lines.append(f"stale cached answers reused on purpose (gi_reuse_stale_cache): {which}")
    return lines


def fingerprint_lines(run: RunInfo | None) -> list[str]:
    """One line per model whose endpoint's ``system_fingerprint`` changed under the snapshot
    it served, with answers cached under another reused (``run.fingerprint_changes``: the
    run's warning of it, :meth:`~.results.FingerprintChange.line`); none when nothing changed
    or the report does not record it.  Names come from the endpoint: :func:`escape`-d."""
    changes = {} if run is None else run.fingerprint_changes or {}
    return [escape(change.line(model)) for model, change in sorted(changes.items())]


def spend_lines(run: RunInfo | None) -> list[str]:
    """What the run really sent to the models' endpoints, all models added, in one line
    (none when the report does not record it: no model had an endpoint, or an older report):
    requests (and how many were retries), input and output tokens, the cost at list price
    (at batch and list prices when batch lines answered some; or the models without a price),
    the requests in batches still in flight at the endpoint (an interrupted batch run's: not
    counted in the rest, never a bare zero), and the answers an earlier run's cache served."""
    spent = None if run is None else run.spent
    if run is None or spent is None:
        return []
    if spent.cost is not None:
        prices = ("list price" if not spent.batched else
                  f"batch price for the {spent.batched:,} batch line(s), list price for the rest")
        cost = f"{_money(spent.cost)} {escape(spent.currency or '')} at {prices}".replace(
            "  ", " ")
    else:
        unpriced = [escape(m) for m, s in (run.spend or {}).items() if s.cost is None]
        cost = f"cost unknown (no price for {', '.join(unpriced)})"
    retries = f" ({spent.retries} of them retries)" if spent.retries else ""
    in_flight = (f"; {spent.in_flight:,} request(s) in batch(es) still in flight at the "
                 "endpoint, not counted above (billed when they finish; a rerun with "
                 "--gi-batch on this cache collects them)") if spent.in_flight else ""
    return [f"sent to the endpoints: {spent.requests:,} request(s){retries}, "
            f"{spent.input_tokens:,} input + {spent.output_tokens:,} output tokens, {cost}"
            f"{in_flight}; "
            f"{spent.cached:,} answer(s) from the cache (a request cells share is sent once "
            "and counted in each cell's API calls)"]


def _money(x: float) -> str:
    """An amount: two decimals from 1 up, else four significant digits (``0.0123``)."""
    return f"{x:,.2f}" if x >= 1 else f"{x:.4g}"


def warning_lines(notes: Sequence[str]) -> list[str]:
    """The run's notes as ``WARNING:`` lines, each :func:`escape`-d: they quote what an
    endpoint said (the snapshot it serves, an error text) and model names."""
    return [f"WARNING: {escape(note)}" for note in notes]


def _age(oldest: str | None, finished: str | None) -> str | None:
    """How long before ``finished`` (or now) ``oldest`` was: ``40 s``, ``12 min``, ``5 h``,
    ``3 days``; ``None`` when a time is missing or unreadable."""
    if oldest is None:
        return None
    try:
        then = datetime.fromisoformat(oldest)
        now = datetime.fromisoformat(finished) if finished else datetime.now(UTC)
    except ValueError:
        return None
    seconds = max(0.0, (now - then).total_seconds())
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days"
