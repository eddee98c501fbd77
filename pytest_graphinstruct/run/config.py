"""Run configuration of a benchmark session: options validated into one immutable object.

The pytest plugin reads ``--gi-*`` options (or their ini equivalents) and hands their raw values
to :func:`build_run_config`, which validates everything up front; any bad value raises
:class:`~pytest_graphinstruct.errors.GraphInstructError` with one clear sentence (the plugin
turns it into a usage error).  Nothing here imports pytest.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.methods.constrained import FORMATS as CONSTRAINED_FORMATS
from pytest_graphinstruct.models.base import DecodingParams
from pytest_graphinstruct.run.results import cell_label
from pytest_graphinstruct.run.shard import Shard, parse_shard
from pytest_graphinstruct.score.bootstrap import DEFAULT_MAX_REGRESSION
from pytest_graphinstruct.vocab import (
    CAAP_METHODS,
    FEEDBACK_LEVELS,
    ITERATIVE_METHODS,
    LEVELS,
    METHOD_BASELINE,
    METHOD_CONSTRAINED,
    METHODS,
    PASS_RULES,
    ROUNDS_MARK,
    STRATEGIES,
    method_parts,
    method_rounds,
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


@dataclass(frozen=True)
class RunConfig:
    """Everything a benchmark session needs to know, validated."""

    cells: tuple[Cell, ...]
    suite: Path
    levels: tuple[int, ...] | None
    samples: int | None  # None: as many as recorded (--gi-replay without --gi-samples)
    pass_rule: str
    replay: Path | None
    base_url: str | None
    api_key_env: str
    params: DecodingParams
    concurrency: int
    rate_limit: float | None
    timeout_s: float | None  # None: each backend's default (120 s; the embedded model 900 s)
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
    baseline: Path | None = None
    max_regression: float | None = None
    update_baseline: bool = False
    constrained_format: str = "auto"
    benchmark: bool = False  #: model violations are reported (xfail), not failures
    per_level: int | None = None  #: run only the first N instructions of each level
    vgig_rounds: int = 3  #: VGIG's (and retry's) rounds T after round 0, unless the method names T
    feedback: str = "fine"  #: VGIG's feedback granularity unless the method names one
    chains: int = 3  #: samples (chains) of a method's cell
    model_tiers: tuple[tuple[str, str], ...] = ()  #: the user's CAAP tiers (model, tier)
    progress: str = "auto"  #: the live progress line: auto, on, off (see report.live)
    shard: Shard | None = None  #: --gi-shard=K/N: run only this shard's instructions
    markdown: Path | None = None  #: --gi-markdown: the Markdown summary's file
    baseline_cell: str | None = None  #: compare every cell with this baseline cell
    strict: bool = False  #: with a baseline, a newly failing item fails the run too
    prompts: Path | None = None  #: --gi-prompts: a folder of template overrides
    #: --gi-model-version: the version each model is expected to be (model, version)
    model_versions: tuple[tuple[str, str], ...] = ()
    reuse_stale_cache: bool = False  #: --gi-reuse-stale-cache: reuse another snapshot's answers

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.model for c in self.cells))

    def model_version(self, model: str) -> str | None:
        """The version ``--gi-model-version`` names for ``model`` (``None``: none named)."""
        return dict(self.model_versions).get(model)

    def rounds(self, method: str) -> int:
        """The rounds ``T`` of an iterative ``method``: those it names (``vgig@T2``), else
        :attr:`vgig_rounds`."""
        named = method_rounds(method)
        return self.vgig_rounds if named is None else named


PROGRESS_MODES = ("auto", "on", "off")


def _split(value: str | None) -> list[str]:
    if value is None:
        return []
    return [x.strip() for x in str(value).split(",") if x.strip()]


def _number(name: str, raw: Any, kind: type, *, low: float | None = None,
            high: float | None = None, low_open: bool = False) -> Any:
    if raw is None or raw == "":
        return None
    try:
        value = kind(raw)
    except (TypeError, ValueError):
        word = "an integer" if kind is int else "a number"
        raise GraphInstructError(f"{name} must be {word}, got {raw!r}") from None
    if kind is float and not math.isfinite(value):
        raise GraphInstructError(f"{name} must be finite, got {raw!r}")
    if low is not None and (value < low or (low_open and value == low)):
        bound = f"> {low}" if low_open else f">= {low}"
        raise GraphInstructError(f"{name} must be {bound}, got {raw!r}")
    if high is not None and value > high:
        raise GraphInstructError(f"{name} must be <= {high}, got {raw!r}")
    return value


def _default(raw: Mapping[str, Any], key: str, default: Any) -> Any:
    value = raw.get(key)
    return default if value is None or value == "" else value


def _pools(raw: Any, rootdir: Path) -> Path | None:
    """The pools root: the option's directory, ``None`` for ``none``, else the project's own
    ``references/pools`` under the rootdir when it exists."""
    if not raw:
        own = rootdir / "references" / "pools"
        return own if own.is_dir() else None
    if str(raw).strip().lower() == "none":
        return None
    path = Path(raw).expanduser()
    if not path.is_dir():
        raise GraphInstructError(f"--gi-pools directory not found: {path}")
    return path


def build_run_config(raw: Mapping[str, Any], *, rootdir: Path) -> RunConfig | None:
    """Validate raw option values (``None`` = not given) into a :class:`RunConfig`.

    Returns ``None`` when no benchmark run was asked for (neither ``model`` nor ``replay``).

    Raises:
        GraphInstructError: a value is malformed or out of range, or the suite is missing.
    """
    models = _split(raw.get("model"))
    replay = raw.get("replay")
    if not models and not replay:
        return None
    replay_path = None
    label = (raw.get("replay_label") or "").strip() or None
    if label is not None and not replay:
        raise GraphInstructError("--gi-replay-label names the cell of recorded answers: it "
                                 "needs --gi-replay=FILE")
    if replay:
        if models:
            raise GraphInstructError(
                f"--gi-replay and --gi-model={','.join(models)} contradict each other: the "
                "answers come either from a recorded file or from a model; to name the cell "
                "of recorded answers use --gi-replay-label=NAME")
        replay_path = Path(replay).expanduser()
        if not replay_path.is_file():
            raise GraphInstructError(f"--gi-replay file not found: {replay_path}")
        models = [label or replay_path.name.split(".")[0] or "replay"]
    strategies = _split(raw.get("strategy")) or ["zero-shot"]
    for s in strategies:
        if s not in STRATEGIES:
            raise GraphInstructError(f"unknown --gi-strategy {s!r} (choose from "
                                     f"{', '.join(STRATEGIES)})")
    for m in models:
        if any(c in m for c in "[]"):
            raise GraphInstructError(f"--gi-model name may not contain brackets: {m!r}")
    constrained_format = (raw.get("constrained_format") or "auto").strip()
    if constrained_format not in CONSTRAINED_FORMATS:
        raise GraphInstructError(f"--gi-constrained-format must be one of "
                                 f"{', '.join(CONSTRAINED_FORMATS)}, got {constrained_format!r}")
    if raw.get("constrained") and constrained_format == "json-schema" and "local" in models:
        raise GraphInstructError("--gi-constrained-format=json-schema cannot be used with "
                                 "--gi-model=local (its llama.cpp server rejects json_schema "
                                 "response formats); use auto or gbnf")
    rounds = _rounds(raw.get("vgig_rounds"))
    methods = _methods(raw.get("method"), rounds)
    if replay and any(m != METHOD_BASELINE for m in methods):
        raise GraphInstructError("--gi-method needs a model to ask; recorded answers "
                                 "(--gi-replay) can only be scored as they are")
    # With --gi-constrained every baseline cell gets a constrained twin right after it.
    if raw.get("constrained"):
        methods = tuple(x for m in methods for x in (
            (m, METHOD_CONSTRAINED) if m == METHOD_BASELINE else (m,)))
    # CAAP chooses the strategy per instruction: its cells are made once per model (with the
    # first strategy in the label), not once per strategy.
    first = strategies[0]
    cells = tuple(Cell(m, s, method) for m in dict.fromkeys(models)
                  for s in dict.fromkeys(strategies) for method in methods
                  if s == first or method_parts(method)[0] not in CAAP_METHODS)

    suite_raw = raw.get("suite")
    suite = Path(suite_raw).expanduser() if suite_raw else rootdir / "instructions"
    if not suite.is_absolute():
        suite = (rootdir / suite) if not suite.exists() else suite.resolve()
    if not suite.exists() or (suite.is_dir() and not any(suite.glob("level_*.json"))):
        raise GraphInstructError(
            f"no GraphInstruct suite at {suite}: pass --gi-suite=DIR (a folder of "
            "level_<L>.json files, e.g. the official suite), or build the project's own with "
            "'python -m pytest_graphinstruct build-suite --out DIR' (docs/SUITE.md)")

    levels = None
    if raw.get("levels"):
        try:
            levels = tuple(sorted({int(x) for x in _split(raw["levels"])}))
        except ValueError:
            raise GraphInstructError(f"--gi-levels must be a comma list of levels 0-5, got "
                                     f"{raw['levels']!r}") from None
        bad = [lv for lv in levels if lv not in LEVELS]
        if bad or not levels:
            raise GraphInstructError(f"--gi-levels must name levels 0-5, got {raw['levels']!r}")

    progress = (raw.get("progress") or "auto").strip()
    if progress not in PROGRESS_MODES:
        raise GraphInstructError(f"--gi-progress must be one of {', '.join(PROGRESS_MODES)}, "
                                 f"got {progress!r}")
    pass_rule = (raw.get("pass_rule") or "all").strip()
    if pass_rule not in PASS_RULES:
        raise GraphInstructError(f"--gi-pass must be one of {', '.join(PASS_RULES)}, "
                                 f"got {pass_rule!r}")

    params = DecodingParams(
        temperature=_number("--gi-temperature", raw.get("temperature"), float, low=0, high=2),
        top_p=_number("--gi-top-p", raw.get("top_p"), float, low=0, high=1, low_open=True),
        max_tokens=_number("--gi-max-tokens", raw.get("max_tokens"), int, low=1),
        seed=_number("--gi-seed", raw.get("seed"), int),
    )
    cache_dir = None
    if not raw.get("no_cache"):
        cache_raw = raw.get("cache")
        cache_dir = Path(cache_raw).expanduser() if cache_raw else (
            rootdir / ".pytest_cache" / "graphinstruct")
    report = Path(raw["report"]).expanduser() if raw.get("report") else None
    html = Path(raw["html"]).expanduser() if raw.get("html") else None
    store = _store(raw, rootdir)
    baseline = Path(raw["baseline"]).expanduser() if raw.get("baseline") else None
    update_baseline = bool(raw.get("update_baseline"))
    if update_baseline and baseline is None:
        raise GraphInstructError("--gi-update-baseline needs --gi-baseline=FILE (where to write)")
    baseline_cell = str(raw.get("baseline_cell") or "").strip() or None
    if baseline_cell is not None and baseline is None:
        raise GraphInstructError("--gi-baseline-cell needs --gi-baseline=FILE")
    if raw.get("strict") and baseline is None:
        raise GraphInstructError("--gi-strict needs --gi-baseline=FILE (it fails the run on "
                                 "items that newly fail against the baseline)")
    markdown = Path(raw["markdown"]).expanduser() if raw.get("markdown") else None
    _distinct_outputs([("--gi-html", html), ("--gi-report", report), ("--gi-markdown", markdown)])
    shard = parse_shard(str(raw["shard"])) if raw.get("shard") else None
    max_regression = _number("--gi-max-regression", raw.get("max_regression"), float, low=0,
                             high=1)
    if baseline is not None and max_regression is None:
        max_regression = DEFAULT_MAX_REGRESSION
    return RunConfig(
        cells=cells,
        suite=suite,
        levels=levels,
        samples=_number("--gi-samples", _default(raw, "samples", None if replay_path else 1),
                        int, low=1, high=100),
        pass_rule=pass_rule,
        replay=replay_path,
        base_url=raw.get("base_url") or None,
        api_key_env=raw.get("api_key_env") or "OPENAI_API_KEY",
        params=params,
        concurrency=_number("--gi-concurrency", _default(raw, "concurrency", 8), int, low=1,
                            high=512),
        rate_limit=_number("--gi-rate-limit", raw.get("rate_limit"), float, low=0,
                           low_open=True),
        timeout_s=_number("--gi-timeout", raw.get("timeout"), float, low=0, low_open=True),
        max_retries=_number("--gi-max-retries", _default(raw, "max_retries", 5), int, low=0,
                            high=50),
        backoff_s=_number("--gi-backoff", _default(raw, "backoff", 1.0), float, low=0),
        max_error_rate=_number("--gi-max-error-rate", _default(raw, "max_error_rate", 0.05),
                               float, low=0, high=1),
        cache_dir=cache_dir,
        report=report,
        html=html,
        store=store,
        max_tokens_total=_number("--gi-max-tokens-total", raw.get("max_tokens_total"), int,
                                 low=1),
        exemplar_seed=_number("--gi-exemplar-seed", _default(raw, "exemplar_seed", 0), int),
        pools=_pools(raw.get("pools"), rootdir),
        fail_under=_number("--gi-fail-under", raw.get("fail_under"), float, low=0, high=1),
        baseline=baseline,
        max_regression=max_regression,
        update_baseline=update_baseline,
        constrained_format=constrained_format,
        benchmark=bool(raw.get("benchmark")),
        per_level=_number("--gi-per-level", raw.get("per_level"), int, low=1),
        vgig_rounds=rounds[0],
        feedback=_feedback(raw.get("feedback")),
        chains=_number("--gi-chains", _default(raw, "chains", 3), int, low=1, high=100),
        model_tiers=_model_tiers(raw.get("model_tiers")),
        progress=progress,
        shard=shard,
        markdown=markdown,
        baseline_cell=baseline_cell,
        strict=bool(raw.get("strict")),
        prompts=_prompts(raw.get("prompts"), rootdir),
        model_versions=_model_versions(raw.get("model_version"), tuple(dict.fromkeys(models))),
        reuse_stale_cache=bool(raw.get("reuse_stale_cache")),
    )


def _distinct_outputs(named: list[tuple[str, Path | None]]) -> None:
    """Two output options may not name one file (the later write would replace the other).

    Raises:
        GraphInstructError: two of ``named`` (option, path) resolve to the same file.
    """
    given = [(flag, path) for flag, path in named if path is not None]
    for i, (flag, path) in enumerate(given):
        for other, other_path in given[i + 1:]:
            if path.resolve() == other_path.resolve():
                raise GraphInstructError(f"{flag} and {other} name the same file: {path}")


MAX_VERSION_CHARS = 200


def _model_versions(raw: Any, models: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
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
    for item in _split(text):
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


def _prompts(raw: Any, rootdir: Path) -> Path | None:
    """``--gi-prompts=DIR`` (relative to the rootdir), checked to be a folder."""
    if not raw:
        return None
    folder = Path(str(raw)).expanduser()
    folder = folder if folder.is_absolute() else rootdir / folder
    if not folder.is_dir():
        raise GraphInstructError(f"--gi-prompts: {folder} is not a folder")
    return folder


def _store(raw: Mapping[str, Any], rootdir: Path) -> Path | None:
    """The run store's folder when ``--gi-autosave`` is on: ``--gi-store`` (relative to the
    rootdir), else ``.graphinstruct/runs`` under the rootdir.  Without autosave ``--gi-store``
    is a setting nothing uses (an ini file may keep it for the runs that autosave)."""
    if not raw.get("autosave"):
        return None
    from pytest_graphinstruct.run.store import default_store

    named = str(raw.get("store") or "").strip()
    if not named:
        return default_store(rootdir)
    path = Path(named).expanduser()
    return path if path.is_absolute() else rootdir / path


def _model_tiers(raw: Any) -> tuple[tuple[str, str], ...]:
    """``--gi-model-tiers=name=T3,other=T2-open`` as pairs (tiers checked)."""
    from pytest_graphinstruct.methods.caap import canonical_tier

    out = []
    for item in _split(raw):
        name, sep, tier = item.partition("=")
        canonical = canonical_tier(tier.strip()) if sep else None
        if not name.strip() or canonical is None:
            raise GraphInstructError(f"--gi-model-tiers wants name=tier pairs with a tier of "
                                     f"T1, T2-GPT, T2-open, T3; got {item!r}")
        out.append((name.strip(), canonical))
    return tuple(out)


MAX_ROUNDS = 50


def _rounds(raw: Any) -> tuple[int, ...]:
    """``--gi-vgig-rounds=T[,T2...]``: one value, or several to sweep (paper E5)."""
    values = _split(raw) or ["3"]
    return tuple(dict.fromkeys(
        _number("--gi-vgig-rounds", v, int, low=0, high=MAX_ROUNDS) for v in values))


def _methods(raw: Any, rounds: tuple[int, ...] = (3,)) -> tuple[str, ...]:
    """``--gi-method`` as cell methods (``none`` → the baseline), in the order given.

    An iterative method may name its rounds (``vgig-fine@T2``); with several
    ``--gi-vgig-rounds`` values each iterative method that names none becomes one cell per
    value (``vgig@T1``, ``vgig@T3``, …), the E5 sweep in one session.
    """
    names = _split(raw) or ["none"]
    out = []
    for name in names:
        method = METHOD_BASELINE if name in ("none", METHOD_BASELINE) else name
        if method != METHOD_BASELINE and method_parts(method)[0] not in METHODS:
            raise GraphInstructError(
                f"unknown --gi-method {name!r} (choose from none, "
                f"{', '.join(METHODS)}, or vgig-<feedback> with feedback "
                f"{'/'.join(FEEDBACK_LEVELS)}; an iterative method may end in "
                f"{ROUNDS_MARK}<rounds>)")
        if ROUNDS_MARK in method:
            named = method_rounds(method)
            if method_parts(method)[0] not in ITERATIVE_METHODS or named is None \
                    or named > MAX_ROUNDS:
                raise GraphInstructError(
                    f"--gi-method {name!r}: only {', '.join(ITERATIVE_METHODS)} take rounds, "
                    f"written {ROUNDS_MARK}<0..{MAX_ROUNDS}> (e.g. vgig-fine{ROUNDS_MARK}2)")
            out.append(method)
        elif len(rounds) > 1 and method_parts(method)[0] in ITERATIVE_METHODS:
            out.extend(f"{method}{ROUNDS_MARK}{t}" for t in rounds)
        else:
            out.append(method)
    return tuple(dict.fromkeys(out))


def _feedback(raw: Any) -> str:
    level = (raw or "fine").strip()
    if level not in FEEDBACK_LEVELS:
        raise GraphInstructError(f"--gi-feedback must be one of {', '.join(FEEDBACK_LEVELS)}, "
                                 f"got {level!r}")
    return level
