"""The pytest entry point of pytest-graphinstruct: options, markers and fixtures, nothing heavy.

Installing the package registers this module with every pytest run in the environment, so it
imports only pytest and the package's vocabulary: a project that passes no ``--gi-*`` option
pays nothing (no networkx, numpy, torch or openai is imported; docs/PLUGIN.md gives the
measured figure).  When a benchmark run is asked for, ``pytest_configure`` hands over to
:mod:`pytest_graphinstruct.pytest_run`, which holds the run's hooks and items; every rule (what
an outcome is, gates, exit status) lives below it in :mod:`pytest_graphinstruct.run`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pytest_graphinstruct.vocab import LEVELS, PYTEST_PLUGIN_NAME, SIZE_BUCKETS

# (option dest, flag, help); each flag has an ini key of the same name (``gi_max_tokens``).
_OPTIONS: list[tuple[str, str, str]] = [
    ("model", "--gi-model", "model(s) to benchmark, comma list: a model name at an OpenAI-"
     "compatible endpoint, 'oracle', or 'local'"),
    ("replay", "--gi-replay", "answer from a recorded raw-generation JSONL file (not with "
     "--gi-model)"),
    ("replay_label", "--gi-replay-label", "model name of the cell of recorded answers (default: "
     "the --gi-replay file name up to its first dot), e.g. to match a baseline's cell"),
    ("suite", "--gi-suite", "suite directory in the GraphInstruct schema (default: the "
     "project's instructions/)"),
    ("levels", "--gi-levels", "comma list of levels to run, e.g. 0,2"),
    ("per_level", "--gi-per-level", "run only the first N instructions of each level (a quick "
     "subset that keeps every level; few-shot exemplars still come from the whole suite)"),
    ("strategy", "--gi-strategy", "prompting strategies, comma list: zero-shot, few-shot, "
     "zero-cot, few-cot (default zero-shot)"),
    ("samples", "--gi-samples", "samples per instruction (default 1, or with --gi-replay as "
     "many as recorded; the paper uses 5)"),
    ("pass_rule", "--gi-pass", "item outcome over samples: all (default), majority, any"),
    ("base_url", "--gi-base-url", "base URL of the OpenAI-compatible endpoint"),
    ("api_key_env", "--gi-api-key-env", "environment variable holding the API key "
     "(default OPENAI_API_KEY)"),
    ("temperature", "--gi-temperature", "sampling temperature"),
    ("top_p", "--gi-top-p", "nucleus sampling top_p"),
    ("max_tokens", "--gi-max-tokens", "max completion tokens per answer"),
    ("seed", "--gi-seed", "sampling seed sent to the endpoint"),
    ("concurrency", "--gi-concurrency", "concurrent requests per model (default 8)"),
    ("rate_limit", "--gi-rate-limit", "max requests per second per model"),
    ("timeout", "--gi-timeout", "timeout of one HTTP request in seconds (default 120; 900 "
     "for the embedded local model)"),
    ("max_retries", "--gi-max-retries", "retries per request on 429/5xx/timeouts/connection "
     "errors/malformed bodies (default 5)"),
    ("backoff", "--gi-backoff", "base of the exponential retry backoff in seconds (default 1)"),
    ("max_error_rate", "--gi-max-error-rate", "fail the session when more than this share of "
     "items had infrastructure errors (default 0.05)"),
    ("cache", "--gi-cache", "answer cache directory (default .pytest_cache/graphinstruct)"),
    ("model_version", "--gi-model-version", "the model version you expect (e.g. "
     "gpt-4o-2024-08-06; with several models name=version pairs): recorded in each cell's "
     "metadata and part of the cache key, so answers cached under another version, or none, "
     "are not reused"),
    ("report", "--gi-report", "write the JSON report to this file"),
    ("html", "--gi-html", "write the self-contained HTML report (tables, plots, every item) to "
     "this file"),
    ("store", "--gi-store", "run store folder of --gi-autosave (default .graphinstruct/runs "
     "under the rootdir)"),
    ("max_tokens_total", "--gi-max-tokens-total", "stop issuing requests once this many "
     "tokens were spent"),
    ("exemplar_seed", "--gi-exemplar-seed", "seed of few-shot exemplar selection (default 0)"),
    ("pools", "--gi-pools", "reference pools (a directory with l3/ and/or l4/) for D1's MMD, "
     "D3 and L4 domain fit (default: references/pools when present; 'none': off)"),
    ("fail_under", "--gi-fail-under", "fail the session when a cell's S_total (over the levels "
     "run) is below this"),
    ("baseline", "--gi-baseline", "baseline report to compare against (items that failed there "
     "are expected failures)"),
    ("max_regression", "--gi-max-regression", "fail when a level's quality dropped by more "
     "than this vs the baseline and the paired bootstrap says the drop is real (default 0.02)"),
    ("method", "--gi-method", "methods, comma list: none (one call per sample; default), vgig "
     "(verification-guided iterative generation; vgig-none / vgig-coarse / vgig-fine name its "
     "feedback), retry, sc (self-consistency), caap (per-instruction strategy and prompt "
     "extras), combined (caap, then vgig); one cell per model x strategy x method"),
    ("model_tiers", "--gi-model-tiers", "CAAP model tiers for models its table does not know, "
     "comma list of name=tier (T1, T2-GPT, T2-open, T3)"),
    ("vgig_rounds", "--gi-vgig-rounds",
     "refinement rounds T of vgig, retry and sc (default 3); several (1,2,3,5) sweep them: "
     "one cell per value, e.g. vgig@T2"),
    ("feedback", "--gi-feedback", "vgig's feedback: none, coarse, fine (default)"),
    ("chains", "--gi-chains", "samples (independent chains) of a method's cell (default 3)"),
    ("constrained_format", "--gi-constrained-format", "constraint sent by --gi-constrained: "
     "auto (default: gbnf for local, json-schema otherwise), gbnf, json-schema"),
    ("shard", "--gi-shard", "run shard K of N (K/N): a deterministic, level-stratified 1/N of "
     "the instructions; merge the shards' reports with 'python -m pytest_graphinstruct merge'"),
    ("markdown", "--gi-markdown", "write the Markdown summary (for a pull-request comment) to "
     "this file; also appended to $GITHUB_STEP_SUMMARY when set"),
    ("baseline_cell", "--gi-baseline-cell", "compare every cell with this cell of the baseline "
     "(on purpose across cells: a candidate model against the production one)"),
    ("prompts", "--gi-prompts", "a folder of prompt template overrides (<name>.txt replaces "
     "pytest_graphinstruct/prompts/templates/<name>.txt): gate a prompt change against the "
     "same baseline"),
    ("progress", "--gi-progress", "live progress line (answers, items, rate, ETA, tokens, "
     "errors) below pytest's output: auto (default: on an interactive terminal, not under -q "
     "or -s), on (also when the output is not a TTY), off"),
]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("graphinstruct", "GraphInstruct benchmark (pytest-graphinstruct)")
    for dest, flag, help_text in _OPTIONS:
        group.addoption(flag, dest=f"gi_{dest}", default=None, help=help_text)
        parser.addini(_ini_name(flag), help_text, default=None)
    for dest, flag, help_text, ini in _FLAGS:
        group.addoption(flag, dest=f"gi_{dest}", action="store_true", default=False,
                        help=help_text)
        if ini:
            parser.addini(_ini_name(flag), help_text, type="bool", default=False)


_FLAGS: list[tuple[str, str, str, bool]] = [
    ("update_baseline", "--gi-update-baseline", "write this run's report to --gi-baseline",
     False),
    ("strict", "--gi-strict", "with --gi-baseline, an item that newly fails against the "
     "baseline fails the run too (default: only the statistical gate decides, new failures "
     "are listed as a note)", True),
    ("no_cache", "--gi-no-cache", "do not read or write the answer cache", True),
    ("reuse_stale_cache", "--gi-reuse-stale-cache", "reuse cached answers of another model "
     "snapshot than the one the endpoint serves now (by default they are asked again); the "
     "run says it did", True),
    ("autosave", "--gi-autosave", "save the run's JSON report as the next numbered run in the "
     "run store (--gi-store), partial runs too; list and compare them with 'python -m "
     "pytest_graphinstruct runs list|compare'", True),
    ("constrained", "--gi-constrained", "also run every cell with constrained decoding (a "
     "grammar or JSON schema of the answer format), as its own cell '<cell>-constrained'",
     True),
    ("benchmark", "--gi-benchmark", "benchmark mode: an item whose answers violate the "
     "instruction is reported as xfail with every violation, not as a failure, so the exit "
     "status reflects only infrastructure errors and the --gi-fail-under / --gi-baseline "
     "gates", True),
]


def _ini_name(flag: str) -> str:
    """``--gi-max-error-rate`` → ``gi_max_error_rate`` (ini keys mirror the flags)."""
    return flag.lstrip("-").replace("-", "_")


def raw_options(config: pytest.Config) -> dict[str, Any]:
    """The ``--gi-*`` values as given (command line first, then ini; ``None`` = not given)."""
    raw: dict[str, Any] = {}
    for dest, flag, _help in _OPTIONS:
        value = config.getoption(f"gi_{dest}")
        if value is None:
            value = config.getini(_ini_name(flag))
        raw[dest] = value if value not in ("", []) else None
    for dest, flag, _help, ini in _FLAGS:
        raw[dest] = bool(config.getoption(f"gi_{dest}") or (ini and config.getini(
            _ini_name(flag))))
    return raw


def pytest_configure(config: pytest.Config) -> None:
    for lv in LEVELS:
        config.addinivalue_line("markers", f"level{lv}: GraphInstruct level {lv} item")
    for size in SIZE_BUCKETS:
        config.addinivalue_line("markers", f"{size}: GraphInstruct size bucket {size}")
    config.addinivalue_line("markers", "infeasible: a deliberately infeasible instruction")
    config.addinivalue_line("markers", "graphinstruct: a GraphInstruct benchmark item")
    for dest in ("model", "replay"):
        if config.getoption(f"gi_{dest}") == "":
            from pytest_graphinstruct.pytest_run import refuse  # loaded for the error only

            raise refuse(config, raw_options(config), f"--gi-{dest} was given no value (e.g. "
                         "--gi-model=gpt-4o, --gi-model=oracle or --gi-replay=answers.jsonl)")
    raw = raw_options(config)
    if not (raw.get("model") or raw.get("replay")):
        return  # no benchmark run asked for: load nothing
    from pytest_graphinstruct.pytest_run import activate

    activate(config, raw)


# -- fixtures ----------------------------------------------------------------------------------

def _active(request: pytest.FixtureRequest) -> Any:
    plugin = request.config.pluginmanager.get_plugin(PYTEST_PLUGIN_NAME)
    if plugin is None:
        pytest.skip("no GraphInstruct run configured (pass --gi-model or --gi-replay)")
    return plugin


@pytest.fixture
def gi_verifier() -> Any:
    """The verifier (parse answers, check them against an instruction)."""
    from pytest_graphinstruct.verify.verifier import Verifier

    return Verifier()


@pytest.fixture(scope="session")
def gi_suite(request: pytest.FixtureRequest) -> Any:
    """The suite: the run's when a run is configured, else ``--gi-suite`` (or the ``gi_suite``
    ini key, or ``instructions/`` under the rootdir) and ``--gi-levels`` — no model needed.
    Skips when no suite was named and the rootdir has no ``instructions/``.

    Raises:
        pytest.UsageError: the named suite cannot be read (the message says why).
    """
    plugin = request.config.pluginmanager.get_plugin(PYTEST_PLUGIN_NAME)
    if plugin is not None:
        return plugin.bench.suite
    from pathlib import Path

    from pytest_graphinstruct.errors import GraphInstructError
    from pytest_graphinstruct.suite.loader import load_suite

    raw = raw_options(request.config)
    root = Path(raw["suite"]).expanduser() if raw.get("suite") else (
        request.config.rootpath / "instructions")
    if not raw.get("suite") and not root.is_dir():
        pytest.skip(f"no GraphInstruct suite at {root} (pass --gi-suite=DIR, or build one "
                    "with 'python -m pytest_graphinstruct build-suite')")
    levels = ([int(x) for x in str(raw["levels"]).split(",") if x.strip()]
              if raw.get("levels") else None)
    try:
        return load_suite(root, levels=levels)
    except (GraphInstructError, ValueError) as exc:
        raise pytest.UsageError(f"pytest-graphinstruct: gi_suite: {exc} (pass --gi-suite=DIR, "
                                "or build one with 'python -m pytest_graphinstruct "
                                "build-suite')") from None


@pytest.fixture
def gi_instruction(request: pytest.FixtureRequest) -> Any:
    """The instruction of the current benchmark item (only inside a GraphInstruct item)."""
    instruction = getattr(request.node, "instruction", None)
    if instruction is None:
        pytest.skip("gi_instruction is only available to GraphInstruct items")
    return instruction


@pytest.fixture
def gi_query(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """``gi_query(instruction, strategy='zero-shot', sample=0) -> Answer`` from the run's model.

    Uses the session's backend, cache and concurrency limits, so answers obtained here are
    cached like the benchmark's own.
    """
    return _active(request).query


@pytest.fixture
def gi_results(request: pytest.FixtureRequest) -> list[Any]:
    """The typed results (:class:`~pytest_graphinstruct.run.results.ItemResult`: verdicts per
    sample, D1–D5, level score) of the benchmark items that already ran in this process, in
    run order; items still held for D3's batch are scored first."""
    return list(_active(request).bench.flush())


@pytest.fixture
def gi_evaluate(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """``gi_evaluate(instruction, answers, strategy='zero-shot') -> ItemResult`` (verdicts and
    every dimension, through the same evaluation path as the benchmark's items)."""
    return _active(request).evaluate
