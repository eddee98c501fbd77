"""Command line: ``python -m pytest_graphinstruct <command>``.

Commands:
    score         verify and score recorded answers (raw-generation JSONL) against a suite.
    export-cache  write a run's cached answers in the raw-generation JSONL format.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.graphs.model import Limits


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m pytest_graphinstruct",
                                description="GraphInstruct benchmark tools.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("score", help="verify and score recorded answers against a suite")
    s.add_argument("--suite", required=True, help="suite directory (level_<L>.json files)")
    s.add_argument("--responses", required=True, help="raw-generation JSONL file")
    s.add_argument("--report", required=True, help="where to write the JSON report")
    s.add_argument("--levels", default=None, help="comma list of levels to score, e.g. 0,2")
    s.add_argument("--max-nodes", type=int, default=None, help="parser node limit")
    s.add_argument("--max-edges", type=int, default=None, help="parser edge limit")
    s.add_argument("--max-chars", type=int, default=None, help="parser answer-length limit")
    e = sub.add_parser("export-cache",
                       help="write cached answers in the raw-generation JSONL format")
    e.add_argument("--cache", default=".pytest_cache/graphinstruct",
                   help="cache directory (default .pytest_cache/graphinstruct)")
    e.add_argument("--out", required=True, help="JSONL file to write")
    e.add_argument("--cell", default=None, help="cell label, e.g. gpt-4o-zero-shot "
                   "(required when the cache holds several cells)")
    return p


def _export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pytest_graphinstruct.models.cache import AnswerCache

    if not (Path(args.cache) / "answers.jsonl").is_file():
        raise GraphInstructError(f"no answer cache at {args.cache}")
    cache = AnswerCache(args.cache)
    n = cache.export_raw(args.out, cell=args.cell)
    for w in cache.warnings:
        print(f"warning: {w}", file=sys.stderr)
    print(f"exported {n} instruction(s) -> {args.out}")
    return 0


def _levels(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise GraphInstructError(f"--levels must be a comma list of integers, got {text!r}") \
            from None


def _score(args: argparse.Namespace) -> int:
    from pytest_graphinstruct.models.recorded import read_responses
    from pytest_graphinstruct.report.json_report import build_report, level_lines, write_report
    from pytest_graphinstruct.suite.loader import load_suite
    from pytest_graphinstruct.verify.verifier import Verifier

    overrides = {k: v for k, v in (("max_nodes", args.max_nodes), ("max_edges", args.max_edges),
                                   ("max_chars", args.max_chars)) if v is not None}
    try:
        limits = Limits(**overrides)
    except ValueError as exc:
        raise GraphInstructError(str(exc)) from None
    suite = load_suite(args.suite, levels=_levels(args.levels))
    responses = read_responses(args.responses)
    report = build_report(suite, responses, Verifier(limits=limits))
    write_report(report, args.report)
    meta = report["metadata"]
    for line in responses.skipped:
        print(f"warning: {line}", file=sys.stderr)
    print(f"scored {meta['instructions_scored']} of {meta['instructions_in_suite']} instructions "
          f"({len(meta['missing_instructions'])} without answers, "
          f"{len(meta['unknown_instructions'])} unknown ids) -> {args.report}")
    for line in level_lines(report):
        print("  " + line)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit status (2 on bad input)."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "score":
            return _score(args)
        if args.command == "export-cache":
            return _export(args)
    except GraphInstructError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 2  # pragma: no cover - argparse enforces the command


if __name__ == "__main__":
    sys.exit(main())
