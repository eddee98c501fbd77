"""Run configuration of a benchmark session: options validated into one immutable object.

The pytest plugin reads ``--gi-*`` options (or their ini equivalents) and hands their raw values
to :func:`build_run_config`; the command line hands typed values to :func:`run_config`.  Each
value is validated by its row of :data:`pytest_graphinstruct.options.OPTIONS`, the rules between
options here, all up front; any bad value raises
:class:`~pytest_graphinstruct.errors.GraphInstructError` with one clear sentence (the plugin
turns it into a usage error).  Nothing here imports pytest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.methods.registry import CONSTRAINED_METHOD, method_of, parse_method
from pytest_graphinstruct.methods.spec import ROUNDS_MARK, MethodContext, MethodSpec
from pytest_graphinstruct.models.base import DecodingParams
from pytest_graphinstruct.options import (
    AUTO_CAP,
    DEFAULT_CACHE_DIR,
    DEFAULT_CHAINS,
    DEFAULT_MAX_REGRESSION,
    DEFAULT_SAMPLES,
    DEFAULT_VGIG_ROUNDS,
    OptionValues,
    api_key_env_problem,
    split_words,
)
from pytest_graphinstruct.prompts.texts import PACKAGED, TemplateSet
from pytest_graphinstruct.run.records.results import cell_label
from pytest_graphinstruct.run.records.writer import same_file
from pytest_graphinstruct.run.shard import Shard, parse_shard
from pytest_graphinstruct.suite.shipped import default_suite
from pytest_graphinstruct.vocab import (
    METHOD_BASELINE,
    D3Device,
    FeedbackLevel,
    GateTest,
    Level,
    PassRule,
    as_d3_device,
    as_feedback_level,
    as_gate_test,
    as_level,
    as_pass_rule,
)


@dataclass(frozen=True)
class Cell:
    """One (model, strategy, method) configuration whose items form a column of results."""

    model: str
    strategy: str
    method: str = METHOD_BASELINE

    @property
    def label(self) -> str:
        return cell_label(self.model, self.strategy, self.method)

    @property
    def spec(self) -> MethodSpec:
        """The cell's method, parsed (:func:`~pytest_graphinstruct.methods.registry.
        parse_method`)."""
        return parse_method(self.method, internal=True)


@dataclass(frozen=True)
class BatchMode:
    """``--gi-batch``'s settings (docs/MODELS.md "Batch mode")."""

    poll_s: float  #: gi_batch_poll: seconds between two polls
    quiet_s: float  #: gi_batch_quiet: a round is sent once no request came for this long
    fallback: bool = False  #: gi_batch_fallback: failed/expired lines as ordinary requests


@dataclass(frozen=True)
class RunConfig:
    """Everything a benchmark session needs to know, validated."""

    cells: tuple[Cell, ...]
    suite: Path
    levels: tuple[Level, ...] | None
    samples: int | None  # None: as many as recorded (--gi-replay without --gi-samples)
    pass_rule: PassRule
    replay: Path | None
    base_url: str | None
    api_key_env: str
    params: DecodingParams
    concurrency: int
    rate_limit: float | None
    #: None: each backend's default (options.DEFAULT_TIMEOUT_S; the embedded model's
    #: options.LOCAL_TIMEOUT_S)
    timeout_s: float | None
    max_retries: int
    backoff_s: float
    max_error_rate: float
    cache_dir: Path | None
    report: Path | None
    max_tokens_total: int | None
    exemplar_seed: int
    pools: Path | None = None
    html: Path | None = None  #: the HTML report's file (--gi-html)
    store: Path | None = None  #: --gi-autosave: the run store's folder (None: no autosave)
    fail_under: float | None = None
    min_pass_all: float | None = None  #: --gi-min-pass-all: the floor of each level's pass^k
    baseline: Path | None = None
    max_regression: float | None = None
    gate_test: GateTest = "suite"  #: gi_gate_test: what the regression gate's test claims
    update_baseline: bool = False
    #: --gi-replace-baseline: an update even from a run narrower than the baseline
    replace_baseline: bool = False
    constrained_format: str = "auto"
    benchmark: bool = False  #: model violations are reported (xfail), not failures
    per_level: int | None = None  #: run only the first N instructions of each level
    #: VGIG's (and retry's) rounds T after round 0, unless the method names T
    vgig_rounds: int = DEFAULT_VGIG_ROUNDS
    feedback: FeedbackLevel = "fine"  #: VGIG's feedback granularity unless the method names one
    chains: int = DEFAULT_CHAINS  #: samples (chains) of a method's cell
    model_tiers: tuple[tuple[str, str], ...] = ()  #: the user's CAAP tiers (model, tier)
    progress: str = "auto"  #: the live progress line: auto, on, off (see report.live)
    shard: Shard | None = None  #: --gi-shard=K/N: run only this shard's instructions
    markdown: Path | None = None  #: --gi-markdown: the Markdown summary's file
    baseline_cell: str | None = None  #: compare every cell with this baseline cell
    strict: bool = False  #: with a baseline, a newly failing item fails the run too
    #: the run's prompt texts: the packaged templates, with --gi-prompts' overrides over them
    templates: TemplateSet = PACKAGED
    #: --gi-model-version: the version each model is expected to be (model, version)
    model_versions: tuple[tuple[str, str], ...] = ()
    reuse_stale_cache: bool = False  #: gi_reuse_stale_cache: reuse another snapshot's answers
    dry_run: bool = False  #: --gi-dry-run: estimate the run, send nothing
    prices: Path | None = None  #: --gi-prices: the price table (None: the packaged snapshot)
    max_cost: float | None = None  #: --gi-max-cost: the cap on money (price table's currency)
    batch: BatchMode | None = None  #: --gi-batch: answers through the Batch API (None: off)
    #: --gi-d3-device: where D3's GCNs train (cpu, cuda, auto)
    d3_device: D3Device = "cpu"
    #: --gi-samples=auto: the most samples per instruction (None: a fixed count, ``samples``);
    #: the run asks one first and more while the gate needs them (score.regression.sequential)
    auto_samples: int | None = None

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.model for c in self.cells))

    def model_version(self, model: str) -> str | None:
        """The version ``--gi-model-version`` names for ``model`` (``None``: none named)."""
        return dict(self.model_versions).get(model)

    def rounds(self, method: str) -> int:
        """The rounds ``T`` of an iterative ``method``: those it names (``vgig@T2``), else
        :attr:`vgig_rounds`."""
        return self.method_context.rounds_of(parse_method(method, internal=True))

    @property
    def method_context(self) -> MethodContext:
        """What this run lends a method: chains, default rounds and feedback, temperature,
        CAAP's model tiers, the prompt texts."""
        return MethodContext(chains=self.chains, rounds=self.vgig_rounds,
                             feedback=self.feedback, temperature=self.params.temperature,
                             model_tiers=self.model_tiers, templates=self.templates)


T = TypeVar("T")


def _present(value: T | None) -> T:
    """The value of an option whose row has a default, so it is never ``None``."""
    assert value is not None, "an option with a default read as None"
    return value


def _pools(raw: str | None, rootdir: Path, shipped: Path | None = None) -> Path | None:
    """The pools root: the option's directory, ``None`` for ``none``, else ``references/pools``
    under the rootdir when it exists, else ``shipped`` (the shipped suite's pools, when the run
    took that suite by default), else ``None``."""
    if not raw:
        own = rootdir / "references" / "pools"
        return own if own.is_dir() else shipped
    if str(raw).strip().lower() == "none":
        return None
    path = Path(raw).expanduser()
    if not path.is_dir():
        raise GraphInstructError(f"--gi-pools directory not found: {path}")
    return path


def build_run_config(raw: Mapping[str, object], *, rootdir: Path) -> RunConfig | None:
    """Validate raw option values (texts by dest, as :func:`plugin.raw_options` gives them;
    ``None`` = not given) into a :class:`RunConfig`.

    Returns ``None`` when no benchmark run was asked for (neither ``model`` nor ``replay``).

    Raises:
        GraphInstructError: a value is malformed or out of range, or the suite is missing.
    """
    return run_config(OptionValues(raw), rootdir=rootdir)


def run_config(values: OptionValues, *, rootdir: Path) -> RunConfig | None:
    """The :class:`RunConfig` of option values (each validated by its row of
    :data:`~pytest_graphinstruct.options.OPTIONS` as it is read, in the order the checks run).

    Returns ``None`` when no benchmark run was asked for (neither ``model`` nor ``replay``).

    Raises:
        GraphInstructError: a value is malformed or out of range, two options contradict each
            other, or the suite is missing.
    """
    models = split_words(values.text("model"))
    if values.given("model") and not models:  # "," or " , ": a list of no names
        raise GraphInstructError(f"--gi-model={values.text('model')!r} names no model (a "
                                 "comma list of model names, e.g. --gi-model=gpt-4o,oracle)")
    replay_path = values.path("replay")
    if not models and replay_path is None:
        return None
    key_env = _present(values.text("api_key_env"))
    problem = api_key_env_problem(key_env)
    if problem is not None:  # checked before anything that could quote it
        raise GraphInstructError(problem)
    label = (values.text("replay_label") or "").strip() or None
    if label is not None and replay_path is None:
        raise GraphInstructError("--gi-replay-label names the cell of recorded answers: it "
                                 "needs --gi-replay=FILE")
    if replay_path is not None:
        if models:
            raise GraphInstructError(
                f"--gi-replay and --gi-model={','.join(models)} contradict each other: the "
                "answers come either from a recorded file or from a model; to name the cell "
                "of recorded answers use --gi-replay-label=NAME")
        if not replay_path.is_file():
            raise GraphInstructError(f"--gi-replay file not found: {replay_path}")
        models = [label or replay_path.name.split(".")[0] or "replay"]
    strategies = values.words("strategy")
    for m in models:
        if any(c in m for c in "[]"):
            raise GraphInstructError(f"--gi-model name may not contain brackets: {m!r}")
    constrained_format = values.choice("constrained_format")
    constrained = values.flag("constrained")
    if constrained and constrained_format == "json-schema" and "local" in models:
        raise GraphInstructError("gi_constrained_format=json-schema cannot be used with "
                                 "--gi-model=local (its llama.cpp server rejects json_schema "
                                 "response formats); use auto or gbnf")
    rounds = values.integers("vgig_rounds")
    methods = _methods(values.text("method"), rounds)
    if replay_path is not None and any(m != METHOD_BASELINE for m in methods):
        raise GraphInstructError("--gi-method needs a model to ask; recorded answers "
                                 "(--gi-replay) can only be scored as they are")
    # With --gi-constrained every baseline cell gets a constrained twin right after it.
    if constrained:
        methods = tuple(x for m in methods for x in (
            (m, CONSTRAINED_METHOD) if m == METHOD_BASELINE else (m,)))
    # CAAP chooses the strategy per instruction: its cells are made once per model (with the
    # first strategy in the label), not once per strategy.
    first = strategies[0]
    cells = tuple(Cell(m, s, method) for m in dict.fromkeys(models)
                  for s in dict.fromkeys(strategies) for method in methods
                  if s == first or not method_of(parse_method(method, internal=True)).caap)

    suite, shipped_pools = ((values.path("suite"), None) if values.given("suite")
                            else default_suite(rootdir))
    assert suite is not None
    if not suite.is_absolute():
        suite = (rootdir / suite) if not suite.exists() else suite.resolve()
    if not suite.exists() or (suite.is_dir() and not any(suite.glob("level_*.json"))):
        why = ("" if values.given("suite") else "; this package carries no suite of its own "
               "(installed without its data?): reinstall it")
        raise GraphInstructError(
            f"no GraphInstruct suite at {suite}: pass --gi-suite=DIR (a folder of "
            f"level_<L>.json files, e.g. the official suite){why}, or build the project's own "
            "with 'python -m pytest_graphinstruct build suite --out DIR' (docs/SUITE.md)")

    levels = tuple(map(as_level, values.integers("levels"))) or None
    progress = values.choice("progress")
    pass_rule = as_pass_rule(values.choice("pass_rule"))
    params = DecodingParams(
        temperature=values.number("temperature"),
        top_p=values.number("top_p"),
        max_tokens=values.integer("max_tokens"),
        seed=values.integer("seed"),
    )
    cache_dir = None
    cache = values.path("cache")
    if not (values.flag("no_cache") or (cache is not None and str(cache) == "none")):
        cache_dir = cache or rootdir / DEFAULT_CACHE_DIR
    report = values.path("report")
    html = values.path("html")
    store = _store(values, rootdir)
    baseline = values.path("baseline")
    replace_baseline = values.flag("replace_baseline")
    update_baseline = values.flag("update_baseline") or replace_baseline
    if update_baseline and baseline is None:
        flag = "--gi-replace-baseline" if replace_baseline else "--gi-update-baseline"
        raise GraphInstructError(f"{flag} needs --gi-baseline=FILE (where to write)")
    baseline_cell = (values.text("baseline_cell") or "").strip() or None
    if baseline_cell is not None and baseline is None:
        raise GraphInstructError("--gi-baseline-cell needs --gi-baseline=FILE")
    strict, benchmark = _violations(values, gated=baseline is not None)
    markdown = values.path("markdown")
    _distinct_outputs([("--gi-html", html), ("--gi-report", report), ("--gi-markdown", markdown)])
    shard_text = values.text("shard")
    shard = parse_shard(shard_text) if shard_text else None
    max_regression = values.number("max_regression")
    if baseline is not None and max_regression is None:
        max_regression = DEFAULT_MAX_REGRESSION
    samples, auto_samples = _samples(values.samples("samples"), baseline=baseline,
                                     update=update_baseline, methods=methods,
                                     replay=replay_path, sharded=shard is not None)
    if (samples is None and auto_samples is None and replay_path is None
            and baseline is not None and (update_baseline or not baseline.exists())):
        # the run writes the baseline: more samples than later runs ask (issue 48)
        samples = values.integer("baseline_samples")
    prices, max_cost = _costs(values, tuple(dict.fromkeys(models)), params)
    return RunConfig(
        cells=cells,
        suite=suite,
        levels=levels,
        samples=(DEFAULT_SAMPLES if samples is None and replay_path is None
                 and auto_samples is None else samples),
        auto_samples=auto_samples,
        pass_rule=pass_rule,
        replay=replay_path,
        base_url=values.text("base_url"),
        api_key_env=key_env,
        params=params,
        concurrency=_present(values.integer("concurrency")),
        rate_limit=values.number("rate_limit"),
        timeout_s=values.number("timeout"),
        max_retries=_present(values.integer("max_retries")),
        backoff_s=_present(values.number("backoff")),
        max_error_rate=_present(values.number("max_error_rate")),
        cache_dir=cache_dir,
        report=report,
        html=html,
        store=store,
        max_tokens_total=values.integer("max_tokens_total"),
        exemplar_seed=_present(values.integer("exemplar_seed")),
        pools=_pools(values.text("pools"), rootdir, shipped_pools),
        fail_under=values.number("fail_under"),
        min_pass_all=values.number("min_pass_all"),
        baseline=baseline,
        max_regression=max_regression,
        gate_test=as_gate_test(values.choice("gate_test")),
        update_baseline=update_baseline, replace_baseline=replace_baseline,
        constrained_format=constrained_format,
        benchmark=benchmark,
        per_level=values.integer("per_level"),
        vgig_rounds=rounds[0],
        feedback=as_feedback_level(values.choice("feedback")),
        d3_device=as_d3_device(values.choice("d3_device")),
        chains=_present(values.integer("chains")),
        model_tiers=_model_tiers(values.text("model_tiers")),
        progress=progress,
        shard=shard,
        markdown=markdown,
        baseline_cell=baseline_cell,
        strict=strict,
        templates=_templates(values.path("prompts"), rootdir),
        model_versions=_model_versions(values.text("model_version"),
                                       tuple(dict.fromkeys(models))),
        reuse_stale_cache=values.flag("reuse_stale_cache"),
        dry_run=values.flag("dry_run"),
        prices=prices,
        max_cost=max_cost,
        batch=_batch(values, tuple(dict.fromkeys(models)), replay_path),
    )


def _violations(values: OptionValues, gated: bool) -> tuple[bool, bool]:
    """``--gi-violations`` (or its old spellings, the flags strict and benchmark) as the run's
    two switches: (strict: with a baseline, an item newly failing fails; benchmark: a
    violating item is an xfail).

    Raises:
        GraphInstructError: the new and an old spelling are both given, or the two old ones
            (they meant different things), or the old strict flag without a baseline.
    """
    old = [o for o in ("strict", "benchmark") if values.flag(o)]
    if old and values.given("violations"):
        raise GraphInstructError(f"--gi-{old[0]} and --gi-violations say the same thing "
                                 f"twice: keep --gi-violations only")
    if len(old) == 2:
        raise GraphInstructError("--gi-strict and --gi-benchmark contradict each other: "
                                 "pass --gi-violations=fail or --gi-violations=report")
    if old == ["strict"] and not gated:
        raise GraphInstructError("--gi-strict needs --gi-baseline=FILE (it fails the run on "
                                 "items that newly fail against the baseline); without one, "
                                 "every violation fails already")
    policy = ({"strict": "fail", "benchmark": "report"}[old[0]] if old
              else values.choice("violations"))
    return gated and policy == "fail", policy == "report"


def _batch(values: OptionValues, models: tuple[str, ...],
           replay: Path | None) -> BatchMode | None:
    """``--gi-batch`` and its settings, checked: only for models at an OpenAI-compatible
    endpoint (not the oracle, the embedded model or a replay).

    Raises:
        GraphInstructError: one line naming the option and what it cannot batch.
    """
    fallback = values.flag("batch_fallback")
    if not values.flag("batch"):
        if fallback:
            raise GraphInstructError("gi_batch_fallback needs --gi-batch")
        return None
    if replay is not None:
        raise GraphInstructError("--gi-batch asks an endpoint's Batch API: not with "
                                 "--gi-replay (recorded answers)")
    built_in = [m for m in models if m in ("oracle", "local")]
    if built_in:
        raise GraphInstructError(f"--gi-batch needs models at an OpenAI-compatible endpoint; "
                                 f"{', '.join(built_in)} has no Batch API")
    return BatchMode(poll_s=_present(values.number("batch_poll")),
                     quiet_s=_present(values.number("batch_quiet")), fallback=fallback)


def _costs(values: OptionValues, models: tuple[str, ...],
           params: DecodingParams) -> tuple[Path | None, float | None]:
    """``--gi-prices`` and ``--gi-max-cost``, checked: a ``--gi-prices`` file must be a
    valid table (read now), and ``--gi-max-cost`` needs ``--gi-max-tokens`` (the most one
    answer may cost) and a price for every model.

    Raises:
        GraphInstructError: one line naming the option, the file or the model.
    """
    prices = values.path("prices")
    max_cost = values.number("max_cost")
    if prices is not None or max_cost is not None:
        from pytest_graphinstruct.models.cost.prices import load_prices

        table = load_prices(prices)
        if max_cost is not None:
            if params.max_tokens is None:
                raise GraphInstructError("--gi-max-cost needs --gi-max-tokens: the most one "
                                         "answer may cost bounds each request's worst case")
            missing = table.missing(models)
            if missing:
                raise GraphInstructError(
                    f"--gi-max-cost: no price for {', '.join(missing)} in {table.origin}; "
                    "give one with --gi-prices=FILE (docs/MODELS.md)")
    return prices, max_cost


def _distinct_outputs(named: list[tuple[str, Path | None]]) -> None:
    """Two output options may not name one file (the later write would replace the other).

    Raises:
        GraphInstructError: two of ``named`` (option, path) name one file
            (:func:`~.writer.same_file`: the same resolved path, or hard links of one).
    """
    given = [(flag, path) for flag, path in named if path is not None]
    for i, (flag, path) in enumerate(given):
        for other, other_path in given[i + 1:]:
            if same_file(path, other_path):
                raise GraphInstructError(f"{flag} and {other} name the same file: {path}")


MAX_VERSION_CHARS = 200


def _model_versions(raw: str | None, models: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``--gi-model-version=V`` (the run's one model) or ``name=V,other=W`` (per model) as
    (model, version) pairs.  A version is one word of printable characters without ``,`` or
    ``=``, at most :data:`MAX_VERSION_CHARS` long."""
    text = str(raw or "").strip()
    if not text:
        return ()
    if "=" not in text:
        if len(models) != 1:
            raise GraphInstructError(
                f"--gi-model-version={text} names one version for {len(models)} models "
                f"({', '.join(models)}); name it per model: --gi-model-version="
                + ",".join(f"{m}=VERSION" for m in models))
        return ((models[0], _version(text)),)
    out: dict[str, str] = {}
    for item in split_words(text):
        name, sep, version = (x.strip() for x in item.partition("="))
        if not sep or not name:
            raise GraphInstructError(f"--gi-model-version wants VERSION or model=VERSION "
                                     f"pairs, got {item!r}")
        if name not in models:
            raise GraphInstructError(f"--gi-model-version names {name!r}, which is not a model "
                                     f"of this run ({', '.join(models)})")
        if name in out:
            raise GraphInstructError(f"--gi-model-version names {name!r} twice")
        out[name] = _version(version)
    return tuple(out.items())


def _version(text: str) -> str:
    if (not text or len(text) > MAX_VERSION_CHARS or "=" in text or "," in text
            or not text.isprintable() or any(c.isspace() for c in text)):
        raise GraphInstructError(
            f"--gi-model-version: {text!r} is not a version (one word of printable "
            f"characters without ',' or '=', at most {MAX_VERSION_CHARS} long, e.g. "
            "gpt-4o-2024-08-06)")
    return text


def _templates(folder: Path | None, rootdir: Path) -> TemplateSet:
    """The run's prompt texts: the packaged templates, with those of ``--gi-prompts=DIR``
    (relative to the rootdir) over them, every override checked now.

    Raises:
        GraphInstructError: not a folder, or an override :meth:`TemplateSet.from_folder`
            refuses.
    """
    if folder is None:
        return PACKAGED
    folder = folder if folder.is_absolute() else rootdir / folder
    try:
        return TemplateSet.from_folder(folder)
    except ValueError as exc:
        raise GraphInstructError(str(exc)) from None


def _store(values: OptionValues, rootdir: Path) -> Path | None:
    """The run store's folder when ``--gi-autosave`` is on: ``gi_store`` (relative to the
    rootdir), else ``.graphinstruct/runs`` under the rootdir.  Without autosave ``gi_store``
    is a setting nothing uses (an ini file may keep it for the runs that autosave)."""
    if not values.flag("autosave"):
        return None
    from pytest_graphinstruct.run.store import default_store

    named = (values.text("store") or "").strip()
    if not named:
        return default_store(rootdir)
    path = Path(named).expanduser()
    return path if path.is_absolute() else rootdir / path


def _model_tiers(raw: str | None) -> tuple[tuple[str, str], ...]:
    """``gi_model_tiers=name=T3,other=T2-open`` as pairs (tiers checked)."""
    from pytest_graphinstruct.methods.caap import canonical_tier

    out = []
    for item in split_words(raw):
        name, sep, tier = item.partition("=")
        canonical = canonical_tier(tier.strip()) if sep else None
        if not name.strip() or canonical is None:
            raise GraphInstructError(f"gi_model_tiers wants name=tier pairs with a tier of "
                                     f"T1, T2-GPT, T2-open, T3; got {item!r}")
        out.append((name.strip(), canonical))
    return tuple(out)


def _methods(raw: str | None, rounds: tuple[int, ...] = (DEFAULT_VGIG_ROUNDS,)) -> tuple[str, ...]:
    """``--gi-method`` as cell methods (``none`` → the baseline), in the order given.

    An iterative method may name its rounds (``vgig-fine@T2``); with several
    ``--gi-vgig-rounds`` values each iterative method that names none becomes one cell per
    value (``vgig@T1``, ``vgig@T3``, …), the E5 sweep in one session.

    Raises:
        GraphInstructError: a method :func:`~pytest_graphinstruct.methods.registry.
            parse_method` refuses.
    """
    names = split_words(raw) or ["none"]
    out: list[str] = []
    for name in names:
        spec = parse_method(name)
        if len(rounds) > 1 and spec.rounds is None and method_of(spec).iterative:
            out.extend(f"{spec.text}{ROUNDS_MARK}{t}" for t in rounds)
        else:
            out.append(spec.text)
    return tuple(dict.fromkeys(out))


def _samples(value: int | str | None, *, baseline: Path | None, update: bool,
             methods: Sequence[str], replay: Path | None,
             sharded: bool = False) -> tuple[int | None, int | None]:
    """``(fixed samples, auto cap)`` from ``--gi-samples``: an int is a fixed count;
    ``auto`` / ``auto:N`` a cap (``AUTO_CAP`` / N), which needs a baseline to be compared
    with, asks a model (no recorded answers) and runs no method.

    Raises:
        GraphInstructError: auto without ``--gi-baseline``, with ``--gi-update-baseline``,
            a method, ``--gi-replay`` or ``--gi-shard``.
    """
    if not isinstance(value, str):
        return value, None
    cap = int(value.split(":", 1)[1]) if ":" in value else AUTO_CAP
    if baseline is None or update:
        raise GraphInstructError(
            "--gi-samples=auto asks more samples only where the gate needs them, so it needs "
            "a baseline to be compared with (--gi-baseline=FILE, made with a fixed "
            f"--gi-samples, e.g. {AUTO_CAP}) and cannot write one (--gi-update-baseline)")
    if any(m != METHOD_BASELINE for m in methods):
        raise GraphInstructError("--gi-samples=auto cannot run a method (--gi-method): a "
                                 "method's samples are its chains (gi_chains)")
    if replay is not None:
        raise GraphInstructError("--gi-samples=auto asks a model; recorded answers "
                                 "(--gi-replay) are scored as they are: give a count")
    if sharded:
        raise GraphInstructError("--gi-samples=auto decides over a whole level, which a shard "
                                 "(--gi-shard) does not hold: give a count")
    return None, cap
