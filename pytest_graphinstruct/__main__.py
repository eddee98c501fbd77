"""Command line: ``python -m pytest_graphinstruct <command>``.

Commands:
    score         verify and score recorded answers (raw-generation JSONL) against a suite.
    show          one item of a report: outcome, samples, violations, tokens, raw answers.
    html          one self-contained HTML page of one or more reports (docs/REPORTS.md).
    merge         put the reports of --gi-shard runs back together (one report; ci/README.md).
    gate          the run's gates on a saved report against a baseline (exit 1 when one fails).
    plan          what the regression gate can detect with a report as baseline, per level.
    build         ``build suite``: instructions, references and pools (docs/SUITE.md);
                  ``build pools``: the L3/L4 reference pools (docs/POOLS.md).
    cache         ``cache export``: cached answers as raw-generation JSONL; ``cache merge``:
                  several caches (the shards') into one.
    analyze       the paper's analyses (tier gap, strategy effects, CoT, scaling, frontier,
                  methods), the leaderboard and the contamination probe (docs/ANALYSES.md).
    runs          ``runs list``: the run store of --gi-autosave; ``runs compare A B``: two runs
                  or report files, per cell and level (docs/RUNS.md).
    serve-oracle  an OpenAI-compatible endpoint on this machine answering a suite's prompts
                  with the oracle's answers: the plugin over HTTP without a key
                  (testing/oracle_server.py; docs/PLUGIN.md).

The names these replaced (``build suite``, ``build pools``, ``cache export``, ``cache merge``,
``leaderboard``, ``contamination``, ``pareto``, ``compare``) still work for one release, unlisted,
each with a one-line note on stderr (:data:`_RETIRED`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.graphs.model import Limits
from pytest_graphinstruct.options import (
    DEFAULT_CACHE_DIR,
    DEFAULT_MAX_ERROR_RATE,
    DEFAULT_MAX_REGRESSION,
    DEFAULT_STORE_DIR,
    OPTION_BY_DEST,
    CliArgument,
    add_arguments,
    cli_values,
    parse_levels,
)
from pytest_graphinstruct.report.analyses import registry
from pytest_graphinstruct.vocab import as_gate_test

if TYPE_CHECKING:
    from pytest_graphinstruct.run.overwrites import Input

# The run options a command takes, made from their rows of options.OPTIONS (the help is the
# command's own where it says more, or less, than the --gi-* option's).
SCORE_ARGUMENTS = (
    CliArgument("suite", "suite directory (level_<L>.json files; default: ./instructions when "
                "it holds them, else the suite the package ships, as in the plugin)"),
    CliArgument("replay", "raw-generation JSONL file", flag="--responses", required=True),
    CliArgument("report", "where to write the JSON report", required=True),
    CliArgument("levels", "comma list of levels to score, e.g. 0,2"),
)
SCORE_POOLS = CliArgument("pools", "reference pools for D1's MMD, D3 and L4 domain fit "
                          "(default: ./references/pools when present, as in the plugin; "
                          "'none': off)")
GATE_ARGUMENTS = (
    CliArgument("baseline", "the baseline report"),
    CliArgument("baseline_cell", "compare every cell with this baseline cell (on purpose "
                "across cells)"),
    CliArgument("max_regression", "allowed real drop of a level's quality (default "
                f"{DEFAULT_MAX_REGRESSION:g})"),
    CliArgument("fail_under", "fail a cell whose S_total over the levels run is below this"),
    CliArgument("min_pass_all", "fail a level of a cell whose pass^k (the share of items whose "
                "every sample passes) is below this"),
    CliArgument("max_error_rate", "allowed share of items without an answer (default "
                f"{DEFAULT_MAX_ERROR_RATE:g})"),
    CliArgument("markdown", "write the Markdown summary here (also appended to "
                "$GITHUB_STEP_SUMMARY when set)", metavar="FILE"),
    CliArgument("strict", "also fail on items that newly fail and on anything of the "
                "baseline not compared"),
    CliArgument("gate_test", flag="--test"),
)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m pytest_graphinstruct",
                                description="GraphInstruct benchmark tools.")
    # metavar: the usage line names no command, so the retired names stay unlisted
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _score_arguments(sub.add_parser("score", help="verify and score recorded answers "
                                    "(raw-generation JSONL) against a suite"))
    _show_arguments(sub.add_parser("show", help="one item of a report: cell, outcome, "
                                   "per-sample parse status, violations, tokens and raw "
                                   "answer (escaped)"))
    _html_arguments(sub.add_parser("html", help="one self-contained HTML page (tables, plots, "
                                   "every item) of one or more reports (docs/REPORTS.md)"))
    _add_ci_commands(sub)
    _add_plan_command(sub)
    build = sub.add_parser("build", help="build the project's suite (instructions, references, "
                           "pools) or only its reference pools (docs/SUITE.md, docs/POOLS.md)")
    verbs = build.add_subparsers(dest="verb", required=True)
    _build_suite_arguments(verbs.add_parser("suite", help=_BUILD_SUITE_HELP))
    _build_pools_arguments(verbs.add_parser("pools", help=_BUILD_POOLS_HELP))
    cache = sub.add_parser("cache", help="answer caches: export one as raw-generation JSONL, "
                           "merge several into one")
    verbs = cache.add_subparsers(dest="verb", required=True)
    _export_arguments(verbs.add_parser("export", help=_EXPORT_HELP))
    _merge_cache_arguments(verbs.add_parser("merge", help=_MERGE_CACHE_HELP))
    _add_analyze_command(sub)
    _add_runs_command(sub)
    _add_serve_oracle_command(sub)
    # the retired names (one release, each with a note): no help, so --help lists none of them
    _build_suite_arguments(sub.add_parser("build-suite"))
    _build_pools_arguments(sub.add_parser("build-pools"))
    _export_arguments(sub.add_parser("export-cache"))
    _merge_cache_arguments(sub.add_parser("merge-cache"))
    _leaderboard_arguments(sub.add_parser("leaderboard"))
    _contamination_arguments(sub.add_parser("contamination"))
    pa = sub.add_parser("pareto")
    pa.add_argument("reports", nargs="+")
    _compare_arguments(sub.add_parser("compare"))
    return p


_RETIRED: dict[str, str] = {
    "build-suite": "build suite", "build-pools": "build pools", "export-cache": "cache export",
    "merge-cache": "cache merge", "leaderboard": "analyze leaderboard",
    "contamination": "analyze contamination", "pareto": "analyze frontier",
    "compare": "runs compare (it takes report files; 'gate' for an exit status)",
}
"""The commands that go in the next release, with what replaces each (docs/PLUGIN.md)."""

_BUILD_SUITE_HELP = ("build instructions, references and pools (docs/SUITE.md); the default "
                     "seed reproduces the committed suite")
_BUILD_POOLS_HELP = "build the L3/L4 reference pools (docs/POOLS.md)"
_EXPORT_HELP = "write cached answers in the raw-generation JSONL format"
_MERGE_CACHE_HELP = "merge answer caches (directories holding answers.jsonl) into one"


def _score_arguments(s: argparse.ArgumentParser) -> None:
    add_arguments(s, SCORE_ARGUMENTS)
    s.add_argument("--max-nodes", type=int, default=None, help="parser node limit")
    s.add_argument("--max-edges", type=int, default=None, help="parser edge limit")
    s.add_argument("--max-chars", type=int, default=None, help="parser answer-length limit")
    add_arguments(s, (SCORE_POOLS,))
    s.add_argument("--jobs", default="auto", metavar="N", help="processes that score the "
                   "items: a number, or 'auto' (default: the usable cores, at most 8; one "
                   "where fork does not exist); the report is the same for any N")


def _export_arguments(e: argparse.ArgumentParser) -> None:
    e.add_argument("--cache", default=DEFAULT_CACHE_DIR,
                   help=f"cache directory (default {DEFAULT_CACHE_DIR})")
    e.add_argument("--out", required=True, help="JSONL file to write")
    e.add_argument("--cell", default=None, help="cell label, e.g. gpt-4o-zero-shot "
                   "(required when the cache holds several cells)")


def _merge_cache_arguments(mc: argparse.ArgumentParser) -> None:
    mc.add_argument("caches", nargs="+", help="cache directories")
    mc.add_argument("--out", required=True, help="the merged cache's directory (created; "
                    "answers it holds are kept)")


def _compare_arguments(co: argparse.ArgumentParser) -> None:
    """The retired ``compare`` command's arguments (``runs compare`` replaces it)."""
    co.add_argument("baseline", help="baseline report JSON")
    co.add_argument("candidate", help="candidate report JSON")
    co.add_argument("--cell", default=None)
    co.add_argument("--baseline-cell", default=None)
    co.add_argument("--candidate-cell", default=None)
    add_arguments(co, (CliArgument("max_regression", ""), CliArgument("gate_test", "",
                                                                       flag="--test")))
    co.add_argument("--fail-on-regression", action="store_true")


def _show_arguments(sh: argparse.ArgumentParser) -> None:
    sh.add_argument("id", help="instruction id, e.g. L1-001")
    sh.add_argument("--report", required=True, help="report file (what --gi-report or score "
                    "--report wrote)")
    sh.add_argument("--cell", default=None, help="cell label, when several cells hold the id")


def _html_arguments(hp: argparse.ArgumentParser) -> None:
    hp.add_argument("reports", nargs="+", help="report files: ours, or the release's "
                    "*.quality.json")
    hp.add_argument("--out", required=True, help="HTML file to write")
    hp.add_argument("--baseline", default=None, help="a report whose outcomes the page's "
                    "'different from baseline' filter compares with")
    hp.add_argument("--suite", default=None, help="suite directory, to show instruction texts "
                    "and draw L5 edits on their base graphs")
    hp.add_argument("--title", default=None, help="the page's title")


def _build_pools_arguments(bp: argparse.ArgumentParser) -> None:
    bp.add_argument("--seed", type=int, default=0, help="pool seed (default 0: the committed "
                    "references/pools)")
    bp.add_argument("--out", required=True, help="pools root to write (l3/ and l4/)")
    bp.add_argument("--scale", type=float, default=1.0, help="fraction of each subgroup's "
                    "graph count (default 1)")


def _build_suite_arguments(bs: argparse.ArgumentParser) -> None:
    bs.add_argument("--seed", type=int, default=0, help="suite seed (default 0: the committed "
                    "instructions/ and references/)")
    bs.add_argument("--out", required=True, help="root to write instructions/ and references/ "
                    "into")
    bs.add_argument("--l5-size", type=int, default=None, help="number of L5 instructions "
                    "(default 50)")
    bs.add_argument("--levels", default=None, help="comma list of levels to build (default all)")
    bs.add_argument("--no-pools", action="store_true", help="do not rebuild references/pools")


def _contamination_arguments(ct: argparse.ArgumentParser) -> None:
    ct.add_argument("report_seed0", help="report of the run on the committed suite")
    ct.add_argument("report_fresh", help="report of the run on a fresh suite (another seed)")
    ct.add_argument("--suite-seed0", default=None, help="suite the first report ran on "
                    "(default: the suite its cell records)")
    ct.add_argument("--suite-fresh", default=None, help="suite the second report ran on "
                    "(default: the suite its cell records)")
    ct.add_argument("--cell", default=None, help="cell label, when the reports hold several")
    ct.add_argument("--resamples", type=int, default=None, help="bootstrap resamples "
                    "(default 2000)")
    ct.add_argument("--seed", type=int, default=None, help="bootstrap seed (default 0)")
    ct.add_argument("--threshold", type=float, default=None, help="smallest gap called real "
                    "(default 0.005, the paper's stability band)")


def _add_plan_command(sub: Any) -> None:
    """``plan`` (report/commands/plan.py; docs/PLUGIN.md, "How much the gate can see")."""
    pl = sub.add_parser("plan", help="per cell and level of a report used as a baseline: the "
                        "smallest drop the regression gate detects at 80%% power, and what a "
                        "given drop needs")
    pl.add_argument("report", help="the (baseline) report: ours, or the release's "
                    "*.quality.json")
    pl.add_argument("--samples", type=int, default=None, help="samples per instruction of the "
                    "gated runs (default: the report's)")
    pl.add_argument("--drop", type=float, default=None, help="a drop to detect: print the "
                    "samples per instruction and the instructions it needs")
    add_arguments(pl, (CliArgument("max_regression", "the gate's allowed drop (default "
                                   f"{DEFAULT_MAX_REGRESSION:g}, as --gi-max-regression)"),
                       CliArgument("gate_test", flag="--test")))
    pl.add_argument("--suite", default=None, help="suite directory: clusters for instructions "
                    "the report records none for")


def _add_serve_oracle_command(sub: Any) -> None:
    """``serve-oracle`` (testing/oracle_server.py; docs/PLUGIN.md, "Trying it without a
    key")."""
    so = sub.add_parser("serve-oracle", help="an OpenAI-compatible endpoint on this machine "
                        "that answers every prompt of a suite with the oracle's answer, to "
                        "try the plugin over HTTP without a key (Ctrl-C stops it)")
    so.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000; "
                    "0: any free port)")
    so.add_argument("--host", default="127.0.0.1", help="loopback address to listen on "
                    "(default 127.0.0.1; ::1 and localhost too, never a network address)")
    add_arguments(so, (CliArgument("suite", "suite directory whose prompts are answered "
                                   "(default: the suite the package ships)"),))


def _serve_oracle(args: argparse.Namespace) -> int:
    from pytest_graphinstruct.testing.oracle_server import serve

    if not 0 <= args.port <= 65535:
        raise GraphInstructError(f"--port must be 0 to 65535, got {args.port}")
    return serve(args.suite, host=args.host, port=args.port)


def _plan(args: argparse.Namespace) -> int:
    from pytest_graphinstruct.report.commands.plan import plan

    delta = DEFAULT_MAX_REGRESSION if args.max_regression is None else args.max_regression
    print("\n".join(plan(args.report, samples=args.samples, drop=args.drop,
                         max_regression=delta, suite=args.suite,
                         test=as_gate_test(args.gate_test))))
    return 0


def _add_ci_commands(sub: Any) -> None:
    """``merge`` and ``gate`` (report/commands/merge.py, report/commands/gate.py;
    ci/README.md)."""
    mg = sub.add_parser("merge", help="merge the reports of --gi-shard runs (a missing shard "
                        "makes the merged report partial)")
    mg.add_argument("reports", nargs="+", help="shard report files")
    mg.add_argument("--out", required=True, help="the merged report's file")
    ga = sub.add_parser("gate", help="apply the gates to a saved report: exit 0 when all pass, "
                        "1 when one fails, 2 on bad input")
    ga.add_argument("report", help="a report file (e.g. merged shards)")
    add_arguments(ga, GATE_ARGUMENTS)


def _merge(args: argparse.Namespace) -> int:
    from pytest_graphinstruct.report.commands.merge import merge_reports
    from pytest_graphinstruct.run.records.reader import read_whole_report
    from pytest_graphinstruct.run.records.results import ReportError
    from pytest_graphinstruct.run.records.writer import write_report

    _refuse_overwrite("--out", args.out, _files("the shard report", args.reports))
    inputs = []
    for path in args.reports:
        try:
            inputs.append((path, read_whole_report(path)))
        except ReportError as exc:
            raise GraphInstructError(str(exc)) from None
    merged = merge_reports(inputs)
    write_report(merged.report, args.out)
    shards = (f" ({len(merged.present)} of {merged.shard_count} shards)"
              if merged.shard_count else "")
    items = sum(len(c.per_instruction) for c in merged.report.cells)
    print(f"merged {len(inputs)} report(s){shards}: {items} item(s) in "
          f"{len(merged.report.cells)} cell(s) -> {args.out}")
    for note in merged.notes:
        print(f"WARNING: {note}", file=sys.stderr)
    return 0


def _merge_cache(args: argparse.Namespace) -> int:
    from pytest_graphinstruct.run.cache_merge import merge_caches

    result = merge_caches(args.caches, args.out)
    added = sum(n for _, n in result.added)
    print(f"added {added} answer(s) from {len(result.added)} cache(s); {args.out} holds "
          f"{result.total}")
    for line in result.damaged:
        print(f"WARNING: {line}", file=sys.stderr)
    return 0


def _gate(args: argparse.Namespace) -> int:
    from pytest_graphinstruct.report.commands.gate import gate
    from pytest_graphinstruct.report.render.markdown import write_markdown

    for name in ("max_regression", "fail_under", "max_error_rate", "min_pass_all"):
        value, option = getattr(args, name), OPTION_BY_DEST[name]  # the --gi-* option's bounds
        if value is not None and not option.within(value):
            raise GraphInstructError(f"--{name.replace('_', '-')} must be within "
                                     f"{option.low}..{option.high}, got {value}")
    if args.markdown:
        read = _files("the report", [args.report]) + _files("the --baseline report",
                                                            [args.baseline])
        _refuse_overwrite("--markdown", args.markdown, read)
        step = os.environ.get("GITHUB_STEP_SUMMARY")
        if step:
            _refuse_overwrite("$GITHUB_STEP_SUMMARY (--markdown appends to it)", step, read)
    result = gate(args.report, args.baseline,
                  max_regression=(DEFAULT_MAX_REGRESSION if args.max_regression is None
                                  else args.max_regression),
                  fail_under=args.fail_under, max_error_rate=args.max_error_rate,
                  baseline_cell=args.baseline_cell, strict=args.strict,
                  min_pass_all=args.min_pass_all, test=as_gate_test(args.gate_test))
    for line in result.lines():
        print(line)
    if args.markdown:
        write_markdown(args.markdown, result.markdown)
    return 1 if result.failed else 0


def _add_runs_command(sub: Any) -> None:
    """``runs list`` and ``runs compare`` (report/commands/runs.py; docs/RUNS.md)."""
    ru = sub.add_parser("runs", help="the run store of --gi-autosave: list the saved runs; "
                        "compare two runs or report files (docs/RUNS.md)")
    verbs = ru.add_subparsers(dest="runs_command", required=True)
    store_help = f"run store folder (default {DEFAULT_STORE_DIR} in the current folder)"
    ls = verbs.add_parser("list", help="one row per saved run: time, cells, models, items, "
                          "S_total per cell, partial, git commit, suite hash")
    ls.add_argument("--store", default=DEFAULT_STORE_DIR, metavar="DIR", help=store_help)
    cp = verbs.add_parser("compare", help="paired per-level comparison (B - A) of every cell "
                          "of two runs, with newly failing and newly passing items")
    cp.add_argument("a", help="run A: a number (3, 0003), latest, -1, -2, ... or a report file")
    cp.add_argument("b", help="run B, as A")
    cp.add_argument("--store", default=DEFAULT_STORE_DIR, metavar="DIR", help=store_help)
    cp.add_argument("--cell", default=None, help="compare only this cell of both runs")
    cp.add_argument("--a-cell", default=None, help="the cell of A to compare (on purpose "
                    "across labels: a candidate model against the production one)")
    cp.add_argument("--b-cell", default=None, help="the cell of B to compare")
    add_arguments(cp, (CliArgument("max_regression", "verdict threshold: a level regressed "
                                   "when the gate's test finds a real drop (Holm over the "
                                   "cell's levels) and its mean change is below -DELTA; "
                                   "improved when the mean change is above +DELTA and the "
                                   "whole 95%% CI above 0 (default "
                                   f"{DEFAULT_MAX_REGRESSION:g}, as --gi-max-regression)"),
                       CliArgument("gate_test", flag="--test")))
    # retired: the exit status of a comparison is gate's job (one release, with a note)
    cp.add_argument("--fail-on-regression", action="store_true", help=argparse.SUPPRESS)


def _runs_arguments(cmd: argparse.ArgumentParser, formats: Sequence[str]) -> None:
    """What every analysis over a set of runs takes: reports or a store, format, output."""
    cmd.add_argument("reports", nargs="*", help="report files: ours, or the release's "
                     "*.quality.json")
    cmd.add_argument("--store", nargs="?", const=DEFAULT_STORE_DIR, default=None,
                     metavar="DIR", help="read every report of the run store instead "
                     f"(default DIR {DEFAULT_STORE_DIR}; the latest run of a cell counts)")
    cmd.add_argument("--format", choices=formats, default="markdown", help="output format "
                     "(default markdown)")
    cmd.add_argument("--out", default=None, help="write to FILE instead of stdout")
    cmd.add_argument("--models-table", action="append", default=[], metavar="FILE",
                     help="a models table (TOML, as report/data/models.toml) extending or "
                     "overriding the packaged one; may be repeated")


def _leaderboard_arguments(lb: argparse.ArgumentParser) -> None:
    _runs_arguments(lb, registry.formats("leaderboard"))
    lb.add_argument("--strategies-only", action="store_true", help="only the plain prompting "
                    "cells (no method, no oracle): the paper's 45-cell leaderboard")


def _add_analyze_command(sub: Any) -> None:
    """``analyze NAME``: each analysis of the registry (report/analyses/registry.py), the
    leaderboard and the contamination probe among them."""
    an = sub.add_parser("analyze", help="the paper's analyses over a set of runs (tier gap, "
                        "strategy effects, CoT, scaling, Pareto frontier, methods), the "
                        "leaderboard and the contamination probe (docs/ANALYSES.md)")
    names = an.add_subparsers(dest="analysis", required=True)
    for analysis in registry.choices():
        one = names.add_parser(analysis.name, help=analysis.summary)
        _runs_arguments(one, registry.formats(registry.ANALYZE))
        one.add_argument("--rule", default=None, help="tier-gap: how a model's level score is "
                         "taken (best-profile, best-per-level, all-cells; default "
                         "best-profile)")
        one.add_argument("--pair", nargs=2, default=None, metavar=("A", "B"), help="scaling: "
                         "compare model A with model B (A - B) instead of every same-family "
                         "pair")
        one.add_argument("--strategy", action="append", default=[], help="scaling: only this "
                         "strategy (may be repeated; default every strategy both models ran)")
        one.add_argument("--resamples", type=int, default=None, help="bootstrap resamples "
                         "(sensitivity default 10000, scaling 1000)")
        one.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    _leaderboard_arguments(names.add_parser("leaderboard",
                                            help=registry.find("leaderboard").summary))
    _contamination_arguments(names.add_parser("contamination",
                                              help=registry.find("contamination").summary))


def _write_out(text: str, out: str | None) -> None:
    if out is None:
        sys.stdout.write(text)
        return
    from pathlib import Path

    Path(out).write_text(text, encoding="utf-8")
    print(f"wrote {out}")


def _analysis(args: argparse.Namespace) -> int:
    """``analyze NAME`` (and the retired ``leaderboard``, ``contamination``): the analysis
    the registry names."""
    command = args.command if args.command != registry.ANALYZE else (
        args.analysis if args.analysis in _OWN_COMMAND else registry.ANALYZE)
    analysis = registry.find(command, args.analysis if command == registry.ANALYZE else None)
    if command == "contamination":
        reports, store = (args.report_seed0, args.report_fresh), None
    else:
        reports, store = tuple(args.reports), args.store
    options = registry.AnalysisOptions(
        format=getattr(args, "format", "markdown"), rule=getattr(args, "rule", None),
        pair=None if getattr(args, "pair", None) is None else tuple(args.pair),
        strategies=tuple(getattr(args, "strategy", ())),
        resamples=getattr(args, "resamples", None), seed=getattr(args, "seed", None),
        threshold=getattr(args, "threshold", None),
        models_tables=tuple(getattr(args, "models_table", ())),
        strategies_only=getattr(args, "strategies_only", False),
        cell=getattr(args, "cell", None),
        suites=(getattr(args, "suite_seed0", None), getattr(args, "suite_fresh", None)))
    out = getattr(args, "out", None)
    if out is not None:
        _refuse_overwrite("--out", out, _files("the report", reports)
                          + _files("the models table", options.models_tables)
                          + _store_files(store))
    output = analysis.run(registry.AnalysisRequest(reports, store, options))
    for warning in output.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    _write_out(output.text, out)
    return 0


def _pareto(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from tabulate import tabulate

    from pytest_graphinstruct.run.aggregate import cell_point
    from pytest_graphinstruct.run.records.reader import read_cells
    from pytest_graphinstruct.score.pareto import analyze

    report = analyze([replace(cell_point(c), label=key)  # runs told apart by their prompts
                      for key, c in read_cells(args.reports).items()])
    rows = [[a.point.label + (" *" if a.on_frontier else ""), f"{a.point.quality:.4f}",
             "—" if a.point.cost is None else f"{a.point.cost:.1f}",
             "—" if a.s_final is None else f"{a.s_final:.4f}",
             "—" if a.q_per_ktpv is None else f"{a.q_per_ktpv:.3f}",
             "—" if a.frontier_distance is None else f"{a.frontier_distance:.4f}"]
            for a in report.cells]
    print(tabulate(rows, headers=["cell (* Pareto-optimal)", "S_total", "TPV", "S_final",
                                  "Q/kTPV", "frontier distance"]))
    for model, cost in report.cost_at_q.items():
        sigma = report.sigma_strat.get(model)
        print(f"{model}: Cost@Q={report.threshold:g}: {'never' if cost is None else f'{cost:.1f}'}"
              f"; sigma_strat: {'—' if sigma is None else f'{sigma:.4f}'}")
    if report.excluded:
        print(f"unknown cost (no token usage), left out: {', '.join(report.excluded)}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from pytest_graphinstruct.report.commands.compare import compare_cells
    from pytest_graphinstruct.report.pick import pick_cell
    from pytest_graphinstruct.run.gate.comparison import REGRESSION
    from pytest_graphinstruct.run.records.reader import read_report
    from pytest_graphinstruct.run.records.results import CellReport

    def pick(path: str, side: str, label: str | None) -> CellReport:
        return pick_cell(read_report(path), path, label,
                         hint=f"pass --cell ({{labels}}) or --{side}-cell")

    base = pick(args.baseline, "baseline", args.baseline_cell or args.cell)
    cand = pick(args.candidate, "candidate", args.candidate_cell or args.cell)
    delta = DEFAULT_MAX_REGRESSION if args.max_regression is None else args.max_regression
    comparison = compare_cells(base, cand, max_regression=delta,
                               test=as_gate_test(args.gate_test))
    warning = comparison.warning()
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    print("\n".join(comparison.lines(args.baseline, args.candidate)))
    return 1 if args.fail_on_regression and comparison.verdict == REGRESSION else 0


def _runs(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pytest_graphinstruct.report.commands.runs import compare_runs, list_text, open_compared_run
    from pytest_graphinstruct.run.store import RunStore

    store = RunStore(Path(args.store).expanduser())
    if args.runs_command == "list":
        sys.stdout.write(list_text(store))
        return 0
    delta = DEFAULT_MAX_REGRESSION if args.max_regression is None else args.max_regression
    if args.fail_on_regression:
        _retired("runs compare --fail-on-regression", "gate B --baseline A (the gate's exit "
                 "status, with every gate of a run)")
    result = compare_runs(open_compared_run(store, args.a),
                          open_compared_run(store, args.b), max_regression=delta,
                          test=as_gate_test(args.gate_test),
                          cell_a=args.a_cell or args.cell, cell_b=args.b_cell or args.cell)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print("\n".join(result.lines))
    return result.exit_status(fail_on_regression=args.fail_on_regression)


def _html(args: argparse.Namespace) -> int:
    from pytest_graphinstruct.report.commands.html import page_from_files
    from pytest_graphinstruct.report.render.html import write_page

    _refuse_overwrite("--out", args.out, _files("the report", args.reports)
                      + _files("the --baseline report", [args.baseline])
                      + _suite_files(args.suite))
    page = page_from_files(args.reports, baseline=args.baseline, suite=args.suite,
                           title=args.title)
    write_page(page, args.out)
    print(f"html report of {page.cells} cell(s), {page.items} item(s) -> {args.out}")
    return 0


def _show(args: argparse.Namespace) -> int:
    from pytest_graphinstruct.report.commands.show import find_item, item_lines
    from pytest_graphinstruct.run.records.reader import read_report

    cell, item = find_item(read_report(args.report), args.id, cell=args.cell, name=args.report)
    print("\n".join(item_lines(cell, item, name=args.report)))
    return 0


def _export(args: argparse.Namespace) -> int:
    from pytest_graphinstruct.run.cache_export import export_cache

    done = export_cache(args.cache, args.out, cell=args.cell)
    for w in done.warnings:
        print(f"warning: {w}", file=sys.stderr)
    older = (f"; {done.superseded} older answer(s) of the same sample left out"
             if done.superseded else "")
    print(f"exported {done.instructions} instruction(s), {done.samples} sample(s) of cell "
          f"{done.cell}{older} -> {args.out}")
    return 0


def _build_pools(args: argparse.Namespace) -> int:
    from pytest_graphinstruct.build.pools import build_pools

    if args.scale <= 0:
        raise GraphInstructError(f"--scale must be positive, got {args.scale}")
    summary = build_pools(args.out, seed=args.seed, scale=args.scale)
    for level in ("l3", "l4"):
        info = summary[level]
        print(f"{level}: {info['graphs']} graphs, {info['bytes']} bytes, "
              f"content hash {info['content_hash'][:16]}")
    print(f"built in {summary['seconds']:.1f} s -> {args.out}")
    return 0


def _build_suite(args: argparse.Namespace) -> int:
    from pytest_graphinstruct.build.suite import build_suite

    manifest = build_suite(args.out, seed=args.seed, l5_size=args.l5_size,
                           levels=_levels(args.levels), pools=not args.no_pools,
                           progress=lambda line: print(line, flush=True))
    total = sum(v["instructions"] for v in manifest["levels"].values())
    refs = sum(v["references"] for v in manifest["levels"].values())
    print(f"built {total} instructions with {refs} references (seed {args.seed}) in "
          f"{manifest['seconds']:.1f} s -> {args.out}")
    return 0


def _levels(text: str | None) -> list[int] | None:
    """``--levels`` as level numbers in the order given (``None``: not given).

    Raises:
        GraphInstructError: an item is not an integer.
    """
    if text is None:
        return None
    try:
        return parse_levels(text)
    except ValueError:
        raise GraphInstructError(f"--levels must be a comma list of integers, got {text!r}") \
            from None


def _score(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pytest_graphinstruct.run.config import run_config
    from pytest_graphinstruct.run.records.writer import write_report
    from pytest_graphinstruct.run.score_recorded import score_recorded

    overrides = {k: v for k, v in (("max_nodes", args.max_nodes), ("max_edges", args.max_edges),
                                   ("max_chars", args.max_chars)) if v is not None}
    try:
        limits = Limits(**overrides)
    except ValueError as exc:
        raise GraphInstructError(str(exc)) from None
    suite, responses = Path(args.suite or ".").expanduser(), Path(args.replay).expanduser()
    if args.suite is not None and (not suite.is_dir() or not any(suite.glob("level_*.json"))):
        raise GraphInstructError(f"suite not found: {suite} (--suite needs a directory with "
                                 "level_<L>.json files)")
    if not responses.is_file():
        raise GraphInstructError(f"cannot read responses file {responses}: no such file")
    levels = _levels(args.levels)
    if args.pools and args.pools.strip().lower() != "none" and not Path(args.pools).is_dir():
        raise GraphInstructError(f"--pools directory not found: {args.pools}")
    values = cli_values(args, (*SCORE_ARGUMENTS, SCORE_POOLS), levels=levels, no_cache=True)
    run = run_config(values, rootdir=Path.cwd())
    assert run is not None  # a replay file was given
    _refuse_overwrite("--report", args.report, _files("the --responses file", [responses])
                      + _suite_files(run.suite))
    scored = score_recorded(run, limits=limits, rootdir=Path.cwd(), jobs=_jobs(args.jobs))
    why = scored.nothing_to_score()
    if why is not None:
        raise GraphInstructError(f"{responses}: no response record to score ({why})")
    write_report(scored.report, args.report)
    for line in scored.warnings:
        print(f"warning: {line}", file=sys.stderr)
    cell = scored.report.cells[0]
    print(f"scored {cell.summary.items} of {scored.suite_size} instructions "
          f"({len(scored.missing)} without answers, {len(scored.unknown)} unknown ids) "
          f"-> {args.report}")
    for lv, row in sorted(cell.per_level.items()):
        score = "—" if row.level_score is None else f"{row.level_score:.4f}"
        print(f"  L{lv}: {row.items} instructions, {row.passed} passed, level score {score}")
    if scored.recalled:
        print(f"{scored.recalled} item(s) scored before with the same answers were read from "
              "the item store (GI_D3_CACHE=off scores every item again)")
    return 0


def _jobs(text: str) -> int:
    """``--jobs``: a number >= 1, or ``auto`` (:func:`.score_recorded.auto_jobs`)."""
    from pytest_graphinstruct.run.score_recorded import auto_jobs

    if text.strip().lower() == "auto":
        return auto_jobs()
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise GraphInstructError(f"--jobs must be a number >= 1 or 'auto', got {text!r}")
    return jobs


def _refuse_overwrite(flag: str, out: str | None, inputs: Sequence[Input]) -> None:
    """Refuse the command before it writes ``out`` (named by ``flag``) over one of the files it
    reads (:mod:`pytest_graphinstruct.run.overwrites`: the same file once resolved, a symlink
    or a hard link of it).

    Raises:
        GraphInstructError: one line naming the option and the input (exit 2).
    """
    from pytest_graphinstruct.run.overwrites import refuse_overwrite

    refuse_overwrite(flag, out, inputs)


def _files(what: str, paths: Sequence[str | os.PathLike[str] | None]) -> list[Input]:
    """The files a command reads, each named ``what`` and its file name."""
    from pytest_graphinstruct.run.overwrites import file_inputs

    return file_inputs(what, paths)


def _suite_files(suite: str | os.PathLike[str] | None) -> list[Input]:
    """The level files of a suite folder a command reads (none without one)."""
    from pytest_graphinstruct.run.overwrites import suite_inputs

    return suite_inputs(None if suite is None else os.fspath(suite),
                        loses="an input of this command")


def _store_files(store: str | None) -> list[Input]:
    """The saved runs of a run store an analysis reads (none without one, or when the store
    cannot be read: the analysis says so itself)."""
    if store is None:
        return []
    from pathlib import Path

    from pytest_graphinstruct.run.store import RunStore, StoreError

    try:
        runs = RunStore(Path(store).expanduser()).runs()
    except StoreError:
        return []
    return _files("the saved run", [str(r.path) for r in runs])


def _one_line(message: str) -> str:
    """A multi-line message (a suite's list of problems) as one line: ``first: a; b; c``."""
    head, *rest = [line.strip() for line in message.splitlines() if line.strip()] or [""]
    return " ".join([head, "; ".join(rest)]) if rest else head


def _retired(old: str, new: str) -> None:
    """Say on stderr, in one line, that ``old`` goes in the next release and ``new`` does it."""
    print(f"warning: '{old}' is deprecated and goes in the next release: use {new}",
          file=sys.stderr)


_OWN_COMMAND: Final = ("leaderboard", "contamination")
"""Analyses with arguments of their own (``analyze leaderboard``, ``analyze contamination``)."""

_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "score": _score, "show": _show, "html": _html, "merge": _merge, "gate": _gate,
    "plan": _plan, "runs": _runs, "build suite": _build_suite, "build pools": _build_pools,
    "cache export": _export, "cache merge": _merge_cache, "serve-oracle": _serve_oracle,
    # retired names (_RETIRED)
    "build-suite": _build_suite, "build-pools": _build_pools, "export-cache": _export,
    "merge-cache": _merge_cache, "pareto": _pareto, "compare": _compare,
}
"""Each command that is not an analysis, by name (a group's verb after a space)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit status (2 on bad input)."""
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    command = args.command
    # analyses take report files before and after options (argparse gives files that follow
    # an option back as unknown); anything else unknown is the usual error.
    analysis = command in ("leaderboard", registry.ANALYZE) and getattr(
        args, "analysis", None) != "contamination"
    if extra and analysis and not any(x.startswith("-") for x in extra):
        args.reports = [*args.reports, *extra]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if command in _RETIRED:
        _retired(command, _RETIRED[command])
    try:
        if command in (registry.ANALYZE, *_OWN_COMMAND):
            return _analysis(args)
        verb = getattr(args, "verb", None)
        return _COMMANDS[f"{command} {verb}" if verb else command](args)
    except GraphInstructError as exc:
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file that cannot be written or read, said in one line
        print(f"error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
