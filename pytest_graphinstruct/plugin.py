"""The pytest plugin: every hook and fixture of pytest-graphinstruct, and nothing else.

Flow: ``pytest_configure`` validates the ``--gi-*`` options into a
:class:`~pytest_graphinstruct.runconfig.RunConfig`; collection appends one
:class:`GraphInstructItem` per (instruction, cell) to the session's items (so ``-k``, ``-m``,
``--lf`` and ``--co`` apply to them like to any test); right after collection every selected
item's answers are requested in the background; each item waits for its answers in ``setup``
(an answer that could not be obtained is an *error*), verifies them in ``runtest`` (violations are
*failures*) and records a JSON-ready result.  Under pytest-xdist each worker ships its results to
the controller through ``workeroutput``; the controller (or the single process) prints the summary
and writes the report.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.runconfig import Cell, RunConfig, build_run_config
from pytest_graphinstruct.suite.constraints import DOMAINS
from pytest_graphinstruct.suite.instruction import LEVELS, SIZE_BUCKETS, Instruction

_PLUGIN_NAME = "graphinstruct-session"
_OUTPUT_KEY = "graphinstruct_results"
_LOCAL_KEY = "graphinstruct_local"  # workerinput: the embedded server the controller started

# (option dest, flag, help); each flag has an ini key of the same name (``gi_max_tokens``).
_OPTIONS: list[tuple[str, str, str]] = [
    ("model", "--gi-model", "model(s) to benchmark, comma list: a model name at an OpenAI-"
     "compatible endpoint, 'oracle', or 'local'"),
    ("replay", "--gi-replay", "answer from a recorded raw-generation JSONL file"),
    ("suite", "--gi-suite", "suite directory in the GraphInstruct schema (default: the "
     "project's instructions/)"),
    ("levels", "--gi-levels", "comma list of levels to run, e.g. 0,2"),
    ("per_level", "--gi-per-level", "run only the first N instructions of each level (a quick "
     "subset that keeps every level; few-shot exemplars still come from the whole suite)"),
    ("strategy", "--gi-strategy", "prompting strategies, comma list: zero-shot, few-shot, "
     "zero-cot, few-cot (default zero-shot)"),
    ("samples", "--gi-samples", "samples per instruction (default 1; the paper uses 5)"),
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
    ("report", "--gi-report", "write the JSON report to this file"),
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
    ("constrained_format", "--gi-constrained-format", "constraint sent by --gi-constrained: "
     "auto (default: gbnf for local, json-schema otherwise), gbnf, json-schema"),
]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("graphinstruct", "GraphInstruct benchmark (pytest-graphinstruct)")
    for dest, flag, help_text in _OPTIONS:
        group.addoption(flag, dest=f"gi_{dest}", default=None, help=help_text)
        parser.addini(_ini_name(flag), help_text, default=None)
    group.addoption("--gi-update-baseline", dest="gi_update_baseline", action="store_true",
                    default=False, help="write this run's report to --gi-baseline")
    group.addoption("--gi-no-cache", dest="gi_no_cache", action="store_true", default=False,
                    help="do not read or write the answer cache")
    parser.addini("gi_no_cache", "do not read or write the answer cache", type="bool",
                  default=False)
    constrained_help = ("also run every cell with constrained decoding (a grammar or JSON "
                        "schema of the answer format), as its own cell '<cell>-constrained'")
    group.addoption("--gi-constrained", dest="gi_constrained", action="store_true",
                    default=False, help=constrained_help)
    parser.addini("gi_constrained", constrained_help, type="bool", default=False)
    benchmark_help = ("benchmark mode: an item whose answers violate the instruction is "
                      "reported as xfail with every violation, not as a failure, so the exit "
                      "status reflects only infrastructure errors and the --gi-fail-under / "
                      "--gi-baseline gates")
    group.addoption("--gi-benchmark", dest="gi_benchmark", action="store_true",
                    default=False, help=benchmark_help)
    parser.addini("gi_benchmark", benchmark_help, type="bool", default=False)


def _ini_name(flag: str) -> str:
    """``--gi-max-error-rate`` → ``gi_max_error_rate`` (ini keys mirror the flags)."""
    return flag.lstrip("-").replace("-", "_")


def _raw_options(config: pytest.Config) -> dict[str, Any]:
    raw: dict[str, Any] = {}
    for dest, flag, _help in _OPTIONS:
        value = config.getoption(f"gi_{dest}")
        if value is None:
            value = config.getini(_ini_name(flag))
        raw[dest] = value if value not in ("", []) else None
    raw["no_cache"] = bool(config.getoption("gi_no_cache") or config.getini("gi_no_cache"))
    raw["update_baseline"] = bool(config.getoption("gi_update_baseline"))
    raw["constrained"] = bool(config.getoption("gi_constrained") or config.getini("gi_constrained"))
    raw["benchmark"] = bool(config.getoption("gi_benchmark") or config.getini("gi_benchmark"))
    return raw


def pytest_configure(config: pytest.Config) -> None:
    for lv in LEVELS:
        config.addinivalue_line("markers", f"level{lv}: GraphInstruct level {lv} item")
    for size in SIZE_BUCKETS:
        config.addinivalue_line("markers", f"{size}: GraphInstruct size bucket {size}")
    for d in sorted(DOMAINS):
        config.addinivalue_line("markers", f"{d}: GraphInstruct L4 domain {d}")
    config.addinivalue_line("markers", "infeasible: a deliberately infeasible instruction")
    config.addinivalue_line("markers", "graphinstruct: a GraphInstruct benchmark item")
    try:
        run = build_run_config(_raw_options(config), rootdir=config.rootpath)
    except GraphInstructError as exc:
        raise pytest.UsageError(f"pytest-graphinstruct: {exc}") from None
    if run is None:
        return
    config.pluginmanager.register(GraphInstructPlugin(config, run), _PLUGIN_NAME)


def _worker(config: pytest.Config) -> tuple[int, int] | None:
    info = getattr(config, "workerinput", None)
    if info is None:
        return None
    wid = str(info.get("workerid", "gw0"))
    index = int(wid[2:]) if wid[2:].isdigit() else 0
    return index, int(info.get("workercount", 1))


def _is_xdist_controller(config: pytest.Config) -> bool:
    return getattr(config, "workerinput", None) is None and bool(
        getattr(config.option, "numprocesses", None)) and config.pluginmanager.has_plugin(
        "dsession")


class GraphInstructFailure(AssertionError):
    """Raised by an item whose answers break constraints; carries the formatted verdicts."""


class InfraError(Exception):
    """An answer could not be obtained (the item errors; the model is not blamed)."""


class GraphInstructItem(pytest.Item):
    """One instruction in one cell; its assertions are the verifier's verdicts."""

    def __init__(self, *, instruction: Instruction, cell: Cell, plugin: GraphInstructPlugin,
                 **kw: Any) -> None:
        super().__init__(**kw)
        self.instruction = instruction
        self.cell = cell
        self.plugin = plugin
        self.answers: tuple[Any, ...] = ()
        self.evaluation: Any = None

    def setup(self) -> None:
        from pytest_graphinstruct.models.scheduler import BUDGET_EXHAUSTED

        answers = self.plugin.bench.answers(self.instruction, self.cell)
        self.answers = answers
        errors = [a.error for a in answers if a.error is not None]
        if errors:
            if all(e.startswith(BUDGET_EXHAUSTED) for e in errors):
                pytest.skip(f"token budget exhausted before {self.instruction.id} was asked")
            raise InfraError(f"{len(errors)} of {len(answers)} answer(s) could not be "
                             f"obtained: {errors[0]}")

    def runtest(self) -> None:
        ev = self.plugin.bench.evaluate(self.instruction, self.cell, self.answers)
        self.evaluation = ev
        dims = ev.result.get("dimension_scores", {})
        self.user_properties.extend([
            ("gi_level_score", ev.result.get("level_score")),
            *((f"gi_{d}", v) for d, v in dims.items() if v is not None),
            ("gi_d4", round(ev.d4, 6)),
            ("gi_passed_samples", sum(v.passed for v in ev.verifications)),
            ("gi_samples", len(ev.verifications)),
            ("gi_tokens", ev.result["tokens"]),
            ("gi_api_calls", ev.result["api_calls"]),
        ])
        if not ev.passed:
            message = format_failure(ev, self.plugin.run.pass_rule)
            if (self.cell.label, self.instruction.id) in self.plugin.expected_failures:
                ev.result["expected_failure"] = True
                pytest.xfail("failed in the baseline too:\n" + message)
            if self.plugin.run.benchmark:
                pytest.xfail("model violations (--gi-benchmark reports them, does not fail):\n"
                             + message)
            raise GraphInstructFailure(message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str | Any:
        if isinstance(excinfo.value, GraphInstructFailure | InfraError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


def _first_per_level(suite: Any, n: int | None) -> list[Instruction]:
    """The suite's instructions, or only the first ``n`` of each level (suite order)."""
    if n is None:
        return list(suite)
    seen: dict[int, int] = {}
    out = []
    for inst in suite:
        seen[inst.level] = seen.get(inst.level, 0) + 1
        if seen[inst.level] <= n:
            out.append(inst)
    return out


def format_failure(ev: Any, pass_rule: str) -> str:
    """The failure message: per sample, every violated verdict with expected vs observed."""
    inst = ev.instruction
    ok = sum(v.passed for v in ev.verifications)
    lines = [f"{inst.id} [{ev.cell.label}]: {ok}/{len(ev.verifications)} sample(s) pass "
             f"(--gi-pass={pass_rule})", f"  instruction: {inst.text[:300]}"]
    for k, v in enumerate(ev.verifications):
        if v.passed:
            lines.append(f"  sample {k}: ok")
            continue
        lines.append(f"  sample {k}: {v.outcome.value}, {len(v.violations)} violation(s)")
        for x in v.violations:
            where = ""
            if x.where:
                items = "; ".join(f"{key}={_short(val)}" for key, val in x.where.items())
                where = f"  [where: {items}]"
            lines.append(f"    assert {x.constraint}  ({x.source.value}): expected "
                         f"{x.expected}, observed {x.observed}{where}")
    return "\n".join(lines)


def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 1] + "…"


class GraphInstructPlugin:
    """Session-scoped state and hooks of an active benchmark run."""

    def __init__(self, config: pytest.Config, run: RunConfig) -> None:
        self.config = config
        self.run = run
        self.worker = _worker(config)
        self.controller = _is_xdist_controller(config)
        self._bench: Any = None
        self.results: list[dict[str, Any]] = []
        self.partial = False
        self.worker_errors: list[str] = []
        self.gate_failures: list[Any] = []
        self.baseline: dict[str, Any] | None = None
        self.expected_failures: set[tuple[str, str]] = set()
        # The embedded model: the controller (or the single process) owns the server; xdist
        # workers get its address through workerinput.
        self.local_model: Any = None
        self.local_server: Any = None
        self.local_info: dict[str, str] | None = None
        if "local" in run.models and run.replay is None:
            if self.worker is not None:
                self.local_info = config.workerinput.get(_LOCAL_KEY)  # type: ignore[attr-defined]
            else:
                from pytest_graphinstruct.models.local_server import find_local_model

                try:
                    self.local_model = find_local_model()
                except GraphInstructError as exc:
                    raise pytest.UsageError(f"pytest-graphinstruct: {exc}") from None
        if run.baseline is not None and not run.update_baseline:
            from pytest_graphinstruct.report.gates import baseline_failures, load_baseline

            try:
                self.baseline = load_baseline(run.baseline)
            except GraphInstructError as exc:
                raise pytest.UsageError(f"pytest-graphinstruct: {exc}") from None
            self.expected_failures = baseline_failures(self.baseline)

    @property
    def bench(self) -> Any:
        if self._bench is None:
            from pytest_graphinstruct.session import BenchmarkSession

            try:
                self._bench = BenchmarkSession(self.run, worker=self.worker,
                                               local=self.local_info)
            except GraphInstructError as exc:
                raise pytest.UsageError(f"pytest-graphinstruct: {exc}") from None
        return self._bench

    # -- the embedded model ------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Start the embedded server before xdist starts its workers (one per machine)."""
        if self.local_model is None or session.config.option.collectonly:
            return
        from pytest_graphinstruct.models.local_server import LocalServer, endpoint_info

        server = LocalServer(self.local_model)
        try:
            server.start()
        except GraphInstructError as exc:
            raise pytest.UsageError(f"pytest-graphinstruct: {exc}") from None
        self.local_server = server
        self.local_info = endpoint_info(server)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist: hand the embedded server's address to each worker."""
        if self.local_info is not None:
            node.workerinput[_LOCAL_KEY] = self.local_info

    def _stop_local(self) -> None:
        if self.local_server is not None:
            self.local_server.stop()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self._stop_local()  # already stopped at session finish, unless the session never ran

    # -- collection --------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        bench = self.bench
        new: list[pytest.Item] = []
        chosen = _first_per_level(bench.suite, self.run.per_level)
        for cell in self.run.cells:
            for inst in chosen:
                item = GraphInstructItem.from_parent(
                    session, name=f"{inst.id}[{cell.label}]", instruction=inst, cell=cell,
                    plugin=self, nodeid=f"{inst.id}[{cell.label}]")
                for marker in _markers(inst):
                    item.add_marker(marker)
                new.append(item)
        items.extend(new)
        # Announce the items like a collector would, so "collected N items" counts them.
        session.ihook.pytest_collectreport(report=pytest.CollectReport(
            "graphinstruct", "passed", None, list(new)))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.controller or session.config.option.collectonly:
            return
        try:
            self.bench.prefetch([(it.instruction, it.cell) for it in session.items
                                 if isinstance(it, GraphInstructItem)])
        except GraphInstructError as exc:  # a backend that cannot be set up
            raise pytest.UsageError(f"pytest-graphinstruct: {exc}") from None

    # -- results -----------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo[None]) -> Iterator[Any]:
        report = yield
        if isinstance(item, GraphInstructItem):
            self._record(item, report, call)
        return report

    def _record(self, item: GraphInstructItem, report: pytest.TestReport,
                call: pytest.CallInfo[None]) -> None:
        from pytest_graphinstruct.session import item_result

        if report.when == "setup" and report.outcome != "passed":
            outcome = "skipped" if report.skipped else "error"
            error = str(call.excinfo.value) if call.excinfo is not None else None
            self.results.append(item_result(item.instruction, item.cell, item.answers, (),
                                            None, None, outcome=outcome, error=error))
        elif report.when == "call":
            if item.evaluation is not None:  # passed, failed, or xfailed (failed in baseline)
                self.results.append(item.evaluation.result)
            else:  # an unexpected exception inside runtest: a harness error, not the model's
                error = str(call.excinfo.value) if call.excinfo is not None else "unknown"
                self.results.append(item_result(item.instruction, item.cell, item.answers, (),
                                                None, None, outcome="error", error=error))

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        # The server first: a request still in flight (after -x, Ctrl+C) then fails at once
        # instead of generating on.  An interrupted or stopped run also drops the requests not
        # started; a finished one waits for them (xdist peers may be waiting for its answers).
        self._stop_local()
        if self._bench is not None:
            stopped = (exitstatus == pytest.ExitCode.INTERRUPTED or bool(session.shouldstop)
                       or bool(session.shouldfail))
            self._bench.close(cancel=stopped)
        output = getattr(self.config, "workeroutput", None)
        if output is not None:
            output[_OUTPUT_KEY] = json.dumps(self.results)
            return
        self._finish(session)

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", None) or {}
        if error or _OUTPUT_KEY not in output:
            self.partial = True
            self.worker_errors.append(str(error or "worker sent no results"))
            return
        self.results.extend(json.loads(output[_OUTPUT_KEY]))

    def _finish(self, session: pytest.Session) -> None:
        from pytest_graphinstruct.report.summary import build_session_report, write_json

        suite_order = {inst.id: n for n, inst in enumerate(self.bench.suite)}
        model_info = ({"local": self.local_info["describe"]} if self.local_info else None)
        self.report = build_session_report(self.results, self.run, suite_order=suite_order,
                                           partial=self.partial, model_info=model_info)
        if self.run.report is not None:
            write_json(self.report, self.run.report)
        if self.run.update_baseline and self.run.baseline is not None:
            write_json(self.report, self.run.baseline)
        errors = sum(c["summary"]["infra_errors"] for c in _cells(self.report))
        total = sum(c["summary"]["items"] for c in _cells(self.report))
        self.error_rate = errors / total if total else 0.0
        if total and self.error_rate > self.run.max_error_rate:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        from pytest_graphinstruct.report.gates import check_gates

        self.gate_failures = check_gates(self.report, fail_under=self.run.fail_under,
                                         baseline=self.baseline,
                                         max_regression=self.run.max_regression)
        if self.gate_failures:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if getattr(self.config, "workeroutput", None) is not None:
            return
        report = getattr(self, "report", None)
        if report is None:
            return
        from pytest_graphinstruct.report.summary import summary_lines

        terminalreporter.section("GraphInstruct")
        if self.local_server is not None and self.local_server.startup_s is not None:
            terminalreporter.write_line(
                f"local model: {self.local_info['describe'] if self.local_info else ''} "
                f"(server ready in {self.local_server.startup_s:.1f} s)")
        for line in summary_lines(report):
            terminalreporter.write_line(line)
        if self.partial:
            terminalreporter.write_line("PARTIAL: a worker crashed; results are incomplete: "
                                        + "; ".join(self.worker_errors), red=True)
        if self.error_rate > self.run.max_error_rate:
            terminalreporter.write_line(
                f"FAILED: infrastructure error rate {self.error_rate:.1%} exceeds "
                f"--gi-max-error-rate={self.run.max_error_rate:g}", red=True)
        for g in self.gate_failures:
            terminalreporter.write_line(f"GATE FAILED ({g.gate}): {g.message}", red=True)
        if self.run.update_baseline:
            terminalreporter.write_line(f"baseline written to {self.run.baseline}")
        if self.run.report is not None:
            terminalreporter.write_line(f"report written to {self.run.report}")


def _cells(report: dict[str, Any]) -> list[dict[str, Any]]:
    return report.get("cells", [report])


def _markers(inst: Instruction) -> list[str]:
    marks = ["graphinstruct", f"level{inst.level}"]
    if inst.size:
        marks.append(inst.size)
    if not inst.feasible:
        marks.append("infeasible")
    if inst.domain:
        marks.append(inst.domain)
    return marks


# -- fixtures ----------------------------------------------------------------------------------

def _active(request: pytest.FixtureRequest) -> GraphInstructPlugin:
    plugin = request.config.pluginmanager.get_plugin(_PLUGIN_NAME)
    if plugin is None:
        pytest.skip("no GraphInstruct run configured (pass --gi-model or --gi-replay)")
    return plugin


@pytest.fixture
def gi_verifier() -> Any:
    """The verifier (parse answers, check them against an instruction)."""
    from pytest_graphinstruct.verify.verifier import Verifier

    return Verifier()


@pytest.fixture
def gi_suite(request: pytest.FixtureRequest) -> Any:
    """The configured suite (skips when no run is configured)."""
    return _active(request).bench.suite


@pytest.fixture
def gi_instruction(request: pytest.FixtureRequest) -> Instruction:
    """The instruction of the current benchmark item (only inside a GraphInstruct item)."""
    item = request.node
    if not isinstance(item, GraphInstructItem):
        pytest.skip("gi_instruction is only available to GraphInstruct items")
    return item.instruction


@pytest.fixture
def gi_query(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """``gi_query(instruction, strategy='zero-shot', sample=0) -> Answer`` from the run's model.

    Uses the session's backend, cache and concurrency limits, so answers obtained here are
    cached like the benchmark's own.
    """
    plugin = _active(request)
    bench = plugin.bench

    def query(instruction: Instruction, strategy: str = "zero-shot", sample: int = 0,
              model: str | None = None) -> Any:
        cell = Cell(model or plugin.run.models[0], strategy)
        return bench.schedulers[cell.model].submit(bench.request(instruction, cell, sample)
                                                   ).result()

    return query


@pytest.fixture
def gi_results(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    """The JSON-ready results (verdicts per sample, D1–D5, level score) of the benchmark items
    that already ran in this process, in run order (a live list)."""
    return _active(request).results


@pytest.fixture
def gi_evaluate(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """``gi_evaluate(instruction, answers, strategy='zero-shot') -> Evaluation`` (verdicts, D4)."""
    plugin = _active(request)

    def evaluate(instruction: Instruction, answers: Any, strategy: str = "zero-shot") -> Any:
        return plugin.bench.evaluate(instruction, Cell(plugin.run.models[0], strategy),
                                     tuple(answers))

    return evaluate
