"""The run options, declared once: one :class:`Option` row per ``--gi-*`` option.

Each row holds the option's name, kind (how its text is read), default, bounds or choices,
whether it has an ini key, and its help.  From :data:`OPTIONS` are made the pytest options and
ini keys (``plugin.pytest_addoption``), the values the plugin reads (``plugin.raw_options``) and
their validation (:class:`OptionValues`, read by ``run.config``); the command line's run
arguments are made from the same rows (:class:`CliArgument`, :func:`add_arguments`) and hand
their typed values to the same :class:`OptionValues` (:func:`cli_values`).  The defaults the
rest of the package shares (timeouts, the API key's variable, concurrency, …) are defined here
too, once.

Like :mod:`pytest_graphinstruct.vocab`, this module is plain data: it imports nothing of the
package but the vocabulary and the error type, so the pytest entry point stays cheap to import.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.vocab import (
    D3_DEVICES,
    FEEDBACK_LEVELS,
    GATE_TESTS,
    LEVELS,
    PASS_RULES,
    STRATEGIES,
)

if TYPE_CHECKING:
    import argparse

# -- shared defaults (each defined once) -------------------------------------------------------

DEFAULT_TIMEOUT_S: Final = 120.0
"""The timeout of one HTTP call when none is given (the embedded model has its own)."""
LOCAL_TIMEOUT_S: Final = 900.0
"""The embedded model's default timeout of one call (``models.local_server`` says why)."""
DEFAULT_API_KEY_ENV: Final = "OPENAI_API_KEY"
"""The environment variable holding the endpoint's API key unless ``--gi-api-key-env`` names one."""
DEFAULT_CONCURRENCY: Final = 8
"""Concurrent requests per model."""
DEFAULT_MAX_RETRIES: Final = 5
"""Retries per request."""
DEFAULT_BACKOFF_S: Final = 1.0
"""Base of the exponential retry backoff, in seconds."""
DEFAULT_MAX_ERROR_RATE: Final = 0.05
"""The share of items with infrastructure errors above which the session fails."""
DEFAULT_MAX_REGRESSION: Final = 0.02
"""Largest tolerated real drop of a level's quality against a baseline (the gate's delta)."""
DEFAULT_SAMPLES: Final = 1
"""Samples per instruction of a model's cell (recorded answers: as many as recorded)."""
DEFAULT_BASELINE_SAMPLES: Final = 5
"""Samples per instruction of a run that writes the baseline, when ``--gi-samples`` is not
given (issue 48: later runs of one sample are then judged against five draws of each
instruction, not one that may have passed a hard instruction by luck)."""
DEFAULT_STRATEGY: Final = "zero-shot"
DEFAULT_VGIG_ROUNDS: Final = 3
MAX_ROUNDS: Final = 50
"""Most refinement rounds an iterative method may take."""
DEFAULT_CHAINS: Final = 3
DEFAULT_EXEMPLAR_SEED: Final = 0
DEFAULT_BATCH_POLL_S: Final = 30.0
"""Seconds between two polls of a batch run's batches (``--gi-batch-poll``)."""
DEFAULT_BATCH_QUIET_S: Final = 2.0
"""A batch run's round is complete once no request arrived for this long (``--gi-batch-quiet``)."""
DEFAULT_CACHE_DIR: Final = ".pytest_cache/graphinstruct"
"""The answer cache's folder, relative to the pytest rootdir (or the working directory)."""
DEFAULT_STORE_DIR: Final = ".graphinstruct/runs"
"""The run store's folder of ``--gi-autosave``, relative to the pytest rootdir."""
PROGRESS_MODES: Final[tuple[str, ...]] = ("auto", "on", "off")
"""The live progress line's modes (``--gi-progress``)."""
VIOLATIONS_AUTO: Final = "auto"
VIOLATION_POLICIES: Final[tuple[str, ...]] = (VIOLATIONS_AUTO, "fail", "report")
"""What a violating item does (``--gi-violations``): see the row's help."""
CONSTRAINED_FORMATS: Final[tuple[str, ...]] = ("auto", "gbnf", "json-schema")
"""What ``--gi-constrained`` sends: auto (gbnf for the local model), a grammar, a JSON schema."""

# -- the table -----------------------------------------------------------------------------------

Kind = Literal["text", "path", "integer", "number", "choice", "choices", "integers", "levels",
               "flag", "samples"]
"""How an option's text is read: as it is, a path, an int, a float, one of ``choices``, a comma
list of ``choices``, a comma list of ints, a comma list of levels, an on/off flag, or a sample
count (an int, or ``auto`` / ``auto:N``: :func:`parse_samples`)."""

Value = str | Path | int | float | bool | tuple[str, ...] | tuple[int, ...]
"""A validated option value (the type follows the row's :data:`Kind`)."""

Surface = Literal["flag", "ini", "old"]
"""Where an option is spelled: ``flag``, a ``--gi-*`` flag ``pytest --help`` lists (and its ini
key); ``ini``, a tuning knob set in the ini file or with ``-o gi_<name>=VALUE`` (its flag still
works, hidden, with a deprecation note, for one release); ``old``, a spelling another option
replaced (hidden, works with a deprecation note for one release; ``Option.instead`` says what
replaces it).  docs/PLUGIN.md "Options" keeps the decision."""


@dataclass(frozen=True)
class Option:
    """One ``--gi-<name>`` option: everything the plugin, the CLI and the validation need."""

    name: str  #: the flag without ``--gi-`` (``max-tokens``)
    help: str
    kind: Kind = "text"
    #: the value when the option is not given (``None``: none; read like a given value)
    default: str | int | float | tuple[str, ...] | None = None
    low: int | float | None = None  #: smallest allowed value (integer, number, integers, samples)
    high: int | float | None = None  #: largest allowed value
    low_open: bool = False  #: ``low`` itself is not allowed
    choices: tuple[str, ...] = ()  #: the allowed words (choice, choices)
    ini: bool = True  #: an ini key of the flag's name (``gi_max_tokens``) is read too
    #: the value's key (default: the name with ``_``); pytest's dest is ``gi_<dest>``
    dest: str = ""
    surface: Surface = "flag"  #: where it is spelled (:data:`Surface`)
    instead: str = ""  #: an ``old`` row's replacement, as a user writes it

    def __post_init__(self) -> None:
        if not self.dest:
            object.__setattr__(self, "dest", self.name.replace("-", "_"))

    @property
    def flag(self) -> str:
        return f"--gi-{self.name}"

    @property
    def ini_name(self) -> str:
        """The ini key, which mirrors the flag: ``--gi-max-error-rate`` → ``gi_max_error_rate``."""
        return "gi_" + self.name.replace("-", "_")

    @property
    def spelling(self) -> str:
        """How messages name the option: its flag, or for a tuning knob its ini key."""
        return self.ini_name if self.surface == "ini" else self.flag

    def deprecation(self, via_ini: bool = False) -> str | None:
        """The one-line note for a use of this row's flag (``via_ini``: of its ini key) that
        goes in the next release, or ``None`` when that spelling stays."""
        if self.surface == "ini" and not via_ini:
            return (f"{self.flag} is deprecated and goes in the next release: it is an ini "
                    f"setting now ({self.ini_name} = VALUE in the ini file, or "
                    f"-o {self.ini_name}=VALUE on the command line)")
        if self.surface == "old":
            used = self.ini_name if via_ini else self.flag
            return f"{used} is deprecated and goes in the next release: {self.instead}"
        return None

    @property
    def attr(self) -> str:
        """pytest's dest of the option (``config.getoption(option.attr)``)."""
        return f"gi_{self.dest}"

    def within(self, value: float) -> bool:
        """Whether ``value`` lies within the row's bounds (``low``, ``high``, ``low_open``)."""
        low, high = self.low, self.high
        return ((low is None or value > low or (value == low and not self.low_open))
                and (high is None or value <= high))

    def parse(self, raw: object) -> Value | None:
        """``raw`` (the text given, or an already typed value) validated into this option's
        value; not given (``None`` or ``""``) is the row's default.

        Raises:
            GraphInstructError: the value is malformed or out of bounds (one sentence naming
                the flag).
        """
        return _PARSERS[self.kind](self, raw)


OPTIONS: Final[tuple[Option, ...]] = (
    Option("model", "model(s) to benchmark, comma list: a model name at an OpenAI-compatible "
           "endpoint, 'oracle', or 'local'"),
    Option("replay", "answer from a recorded raw-generation JSONL file (not with --gi-model)",
           "path"),
    Option("replay-label", "model name of the cell of recorded answers (default: the "
           "--gi-replay file name up to its first dot), e.g. to match a baseline's cell"),
    Option("suite", "suite directory in the GraphInstruct schema (default: the project's "
           "instructions/)", "path"),
    Option("levels", "comma list of levels to run, e.g. 0,2", "levels"),
    Option("per-level", "run only the first N instructions of each level (a quick subset that "
           "keeps every level; few-shot exemplars still come from the whole suite)", "integer",
           low=1),
    Option("strategy", "prompting strategies, comma list: " + ", ".join(STRATEGIES)
           + f" (default {DEFAULT_STRATEGY})", "choices", default=(DEFAULT_STRATEGY,),
           choices=STRATEGIES),
    Option("samples", f"samples per instruction (default {DEFAULT_SAMPLES}, or with "
           "--gi-replay as many as recorded; the paper uses 5); auto (needs --gi-baseline "
           "with several samples per instruction): one sample each first, more only while "
           "a level's verdict is open, at most the baseline's samples (auto:N at most N)",
           "samples", low=1, high=100),
    Option("baseline-samples", "samples per instruction of a run that writes the baseline "
           "(--gi-update-baseline, or no baseline file yet) when --gi-samples is not given "
           f"(default {DEFAULT_BASELINE_SAMPLES}): later runs of fewer samples are judged on "
           "pass counts against it, exactly, and a baseline that passed hard instructions by "
           "luck no longer fails unchanged runs", "integer", default=DEFAULT_BASELINE_SAMPLES,
           low=1, high=100, surface="ini"),
    Option("pass", "item outcome over samples: all (default), majority, any", "choice",
           default="all", choices=tuple(PASS_RULES), dest="pass_rule"),
    Option("base-url", "base URL of the OpenAI-compatible endpoint"),
    Option("api-key-env", f"environment variable holding the API key (default "
           f"{DEFAULT_API_KEY_ENV})", default=DEFAULT_API_KEY_ENV),
    Option("temperature", "sampling temperature", "number", low=0, high=2),
    Option("top-p", "nucleus sampling top_p", "number", low=0, high=1, low_open=True,
           surface="ini"),
    Option("max-tokens", "max completion tokens per answer", "integer", low=1),
    Option("seed", "sampling seed sent to the endpoint", "integer"),
    Option("concurrency", f"concurrent requests per model (default {DEFAULT_CONCURRENCY})",
           "integer", default=DEFAULT_CONCURRENCY, low=1, high=512),
    Option("rate-limit", "max requests per second per model", "number", low=0, low_open=True,
           surface="ini"),
    Option("timeout", f"timeout of one HTTP request in seconds (default "
           f"{DEFAULT_TIMEOUT_S:g}; {LOCAL_TIMEOUT_S:g} for the embedded local model)",
           "number", low=0, low_open=True,
           surface="ini"),
    Option("max-retries", "retries per request on 429/5xx/timeouts/connection errors/malformed "
           f"bodies (default {DEFAULT_MAX_RETRIES})", "integer", default=DEFAULT_MAX_RETRIES,
           low=0, high=50,
           surface="ini"),
    Option("backoff", f"base of the exponential retry backoff in seconds (default "
           f"{DEFAULT_BACKOFF_S:g})", "number", default=DEFAULT_BACKOFF_S, low=0,
           surface="ini"),
    Option("max-error-rate", "fail the session when more than this share of items had "
           f"infrastructure errors (default {DEFAULT_MAX_ERROR_RATE:g})", "number",
           default=DEFAULT_MAX_ERROR_RATE, low=0, high=1,
           surface="ini"),
    Option("cache", f"answer cache directory (default {DEFAULT_CACHE_DIR}); none: no cache, "
           "every answer is asked", "path"),
    Option("model-version", "the model version you expect (e.g. gpt-4o-2024-08-06; with "
           "several models name=version pairs): recorded in each cell's metadata and part of "
           "the cache key, so answers cached under another version, or none, are not reused"),
    Option("report", "write the JSON report to this file", "path"),
    Option("html", "write the self-contained HTML report (tables, plots, every item) to this "
           "file", "path"),
    Option("store", f"run store folder of --gi-autosave (default {DEFAULT_STORE_DIR} under the "
           "rootdir)",
           surface="ini"),
    Option("max-tokens-total", "stop issuing requests once this many tokens were spent",
           "integer", low=1),
    Option("max-cost", "hard cap on money, in the price table's currency: no request is "
           "issued once its worst case (counted input + --gi-max-tokens output) could take the "
           "spending above it; the run ends partial, its answers cached for the rerun (needs "
           "--gi-max-tokens and a price for every model)", "number", low=0, low_open=True),
    Option("prices", "price table JSON for --gi-dry-run and --gi-max-cost (default: the "
           "packaged snapshot, pytest_graphinstruct/models/data/prices.json; docs/MODELS.md)",
           "path"),
    Option("dry-run", "estimate the run without sending anything: requests, input tokens "
           "(counted), output tokens (estimated), cost and time for the selected items; then "
           "exit", "flag", ini=False),
    Option("batch", "ask an OpenAI-compatible endpoint through its Batch API (half price at "
           "OpenAI; answers within 24 h): each round of requests goes as batches, polled until "
           "done, their results cached as ordinary answers; a killed run resumes the same "
           "batches (docs/MODELS.md 'Batch mode'); under -n the controller asks", "flag"),
    Option("batch-fallback", "with --gi-batch: send the requests a batch failed or expired "
           "again as ordinary requests (default: in a later batch)", "flag",
           surface="ini"),
    Option("batch-poll", f"with --gi-batch: seconds between two polls of the batches (default "
           f"{DEFAULT_BATCH_POLL_S:g})", "number", default=DEFAULT_BATCH_POLL_S, low=0,
           low_open=True,
           surface="ini"),
    Option("batch-quiet", f"with --gi-batch: a round's batch is sent once no request arrived "
           f"for this many seconds (default {DEFAULT_BATCH_QUIET_S:g})", "number",
           default=DEFAULT_BATCH_QUIET_S, low=0, low_open=True,
           surface="ini"),
    Option("exemplar-seed", f"seed of few-shot exemplar selection (default "
           f"{DEFAULT_EXEMPLAR_SEED})", "integer", default=DEFAULT_EXEMPLAR_SEED,
           surface="ini"),
    Option("pools", "reference pools (a directory with l3/ and/or l4/) for D1's MMD, D3 and L4 "
           "domain fit (default: references/pools when present; 'none': off)"),
    Option("d3-device", "where D3's GCNs train: cpu (default; bit-reproducible on one machine), "
           "cuda (the GPU, one process at a time under a machine-wide lock; needs the [gpu] "
           "extra and CUDA, an error without them), auto (cuda when torch is installed and "
           "sees a GPU, else cpu); the report names the device",
           "choice", default="cpu", choices=D3_DEVICES),
    Option("fail-under", "fail the session when a cell's S_total (over the levels run) is "
           "below this", "number", low=0, high=1),
    Option("min-pass-all", "fail the session when, in any cell, a level's pass^k — the share "
           "of its items whose every sample passes (k: --gi-samples) — is below this, for "
           "'always right', not 'right on average'", "number", low=0, high=1),
    Option("baseline", "baseline report to compare against (items that failed there are "
           "expected failures)", "path"),
    Option("max-regression", "fail when a level's quality dropped by more than this vs the "
           "baseline and the gate's test says the drop is real (default "
           f"{DEFAULT_MAX_REGRESSION:g}; with --gi-samples=auto its pass rate on paired "
           "samples)", "number", low=0, high=1),
    Option("violations", "what an item whose answers violate its instruction does: fail "
           "(fails the item; with --gi-baseline only items that passed there), report (shown as "
           "xfail with every violation: the exit status comes from infrastructure errors and "
           "the gates), auto (default: fail without --gi-baseline; with one, report, and the "
           "gate judges each level)", "choice", default=VIOLATIONS_AUTO,
           choices=VIOLATION_POLICIES),
    Option("gate-test", "the gate's question: suite (default: is this run worse than the "
           "baseline on this suite, beyond sampling noise; paired per instruction) or "
           "templates (would it be worse on new instructions of the same templates; "
           "blind to a change that moves whole templates, docs/PLUGIN.md)", "choice",
           default="suite", choices=GATE_TESTS,
           surface="ini"),
    Option("method", "methods, comma list: none (one call per sample; default), vgig "
           "(verification-guided iterative generation; vgig-none / vgig-coarse / vgig-fine "
           "name its feedback), retry, sc (self-consistency), caap (per-instruction strategy "
           "and prompt extras), combined (caap, then vgig); one cell per model x strategy x "
           "method"),
    Option("model-tiers", "CAAP model tiers for models its table does not know, comma list of "
           "name=tier (T1, T2-GPT, T2-open, T3)",
           surface="ini"),
    Option("vgig-rounds", "refinement rounds T of vgig, retry and sc (default "
           f"{DEFAULT_VGIG_ROUNDS}); several (1,2,3,5) sweep them: one cell per value, e.g. "
           "vgig@T2", "integers", default=(str(DEFAULT_VGIG_ROUNDS),), low=0, high=MAX_ROUNDS,
           surface="old", instead="write the rounds in the method: --gi-method=vgig@T2 "
           "(several: vgig@T1,vgig@T3)"),
    Option("feedback", "vgig's feedback: none, coarse, fine (default)", "choice",
           default="fine", choices=FEEDBACK_LEVELS,
           surface="old", instead="write it in the method: --gi-method=vgig-none, "
           "vgig-coarse or vgig-fine"),
    Option("chains", f"samples (independent chains) of a method's cell (default "
           f"{DEFAULT_CHAINS})", "integer", default=DEFAULT_CHAINS, low=1, high=100,
           surface="ini"),
    Option("constrained-format", "constraint sent by --gi-constrained: auto (default: gbnf for "
           "local, json-schema otherwise), gbnf, json-schema", "choice", default="auto",
           choices=CONSTRAINED_FORMATS,
           surface="ini"),
    Option("shard", "run shard K of N (K/N): a deterministic, level-stratified 1/N of the "
           "instructions; merge the shards' reports with 'python -m pytest_graphinstruct "
           "merge'"),
    Option("markdown", "write the Markdown summary (for a pull-request comment) to this file; "
           "also appended to $GITHUB_STEP_SUMMARY when set", "path"),
    Option("baseline-cell", "compare every cell with this cell of the baseline (on purpose "
           "across cells: a candidate model against the production one)"),
    Option("prompts", "a folder of prompt template overrides (<name>.txt replaces "
           "pytest_graphinstruct/prompts/templates/<name>.txt): gate a prompt change against "
           "the same baseline", "path"),
    Option("progress", "live progress line (answers, items, rate, ETA, tokens, errors) below "
           "pytest's output: auto (default: on an interactive terminal, not under -q or -s), "
           "on (also when the output is not a TTY), off", "choice", default="auto",
           choices=PROGRESS_MODES,
           surface="ini"),
    Option("update-baseline", "write this run's report to --gi-baseline (refused when the run "
           "is narrower than the baseline there: fewer cells, levels or instructions)", "flag",
           ini=False),
    Option("replace-baseline", "--gi-update-baseline even from a run narrower than the "
           "baseline (fewer cells, levels or instructions): the baseline loses what the run "
           "did not run", "flag", ini=False),
    Option("strict", "with --gi-baseline, an item that newly fails against the baseline fails "
           "the run too (default: only the statistical gate decides, new failures are listed "
           "as a note)", "flag",
           surface="old", instead="use --gi-violations=fail"),
    Option("no-cache", "do not read or write the answer cache", "flag",
           surface="old", instead="use --gi-cache=none"),
    Option("reuse-stale-cache", "reuse cached answers of another model snapshot than the one "
           "the endpoint serves now (by default they are asked again); the run says it did",
           "flag",
           surface="ini"),
    Option("autosave", "save the run's JSON report as the next numbered run in the run store "
           "(ini gi_store), partial runs too; list and compare them with 'python -m "
           "pytest_graphinstruct runs list|compare'", "flag"),
    Option("constrained", "also run every cell with constrained decoding (a grammar or JSON "
           "schema of the answer format), as its own cell '<cell>-constrained'", "flag"),
    Option("benchmark", "benchmark mode: an item whose answers violate the instruction is "
           "reported as xfail with every violation, not as a failure, so the exit status "
           "reflects only infrastructure errors and the --gi-fail-under / --gi-baseline gates",
           "flag",
           surface="old", instead="use --gi-violations=report"),
)
"""Every ``--gi-*`` option, in the order ``pytest --help`` lists them."""

OPTION_BY_DEST: Final[Mapping[str, Option]] = {o.dest: o for o in OPTIONS}


# -- reading a value -----------------------------------------------------------------------------

def parse_levels(text: object) -> list[int]:
    """A comma list of level numbers as ints, in the order written (blank items skipped).

    Raises:
        ValueError: an item is not an integer (each caller words its own message).
    """
    return [int(x) for x in str(text).split(",") if x.strip()]


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEY_PREFIXES: Final = ("sk-", "sk_", "gsk_", "xai-", "hf_", "AIza", "pk-", "rk-", "key-")


def redacted(secret: str) -> str:
    """What may be shown of a value that may be a secret: its first three characters (none
    when it is short) and its length, e.g. ``'sk-…' (51 characters)``."""
    shown = secret[:3] if len(secret) >= 12 else ""
    return f"{shown + '…'!r} ({len(secret)} characters)"


def api_key_env_problem(name: str) -> str | None:
    """Why ``name`` cannot be the name of the API key's environment variable (one line that
    never shows ``name`` whole: it may be the key itself), or ``None`` when it can.

    Refused: anything but letters, digits and ``_`` not starting with a digit (no variable a
    shell exports is named so; ``sk-…`` keys are not), a known key prefix (``sk-``, ``gsk_``,
    ``hf_``, ``AIza``, …), and a long (24+) mix of lower- and upper-case letters and digits,
    which is how generated keys look and variable names do not."""
    mixed = (len(name) >= 24 and any(c.islower() for c in name)
             and any(c.isupper() for c in name) and any(c.isdigit() for c in name))
    if (_ENV_NAME.fullmatch(name) and not mixed
            and not (len(name) >= 16 and name.startswith(_KEY_PREFIXES))):
        return None
    return (f"--gi-api-key-env takes the NAME of the environment variable that holds the API "
            f"key, and {redacted(name)} looks like the key itself (a variable name is letters, "
            f"digits and _): export the key in a variable (export {DEFAULT_API_KEY_ENV}=...) "
            f"and pass its name, e.g. --gi-api-key-env={DEFAULT_API_KEY_ENV}")


def split_words(value: object) -> list[str]:
    """A comma list as its stripped, non-empty items (``None``: none)."""
    if value is None:
        return []
    return [x.strip() for x in str(value).split(",") if x.strip()]


def _given(raw: object) -> bool:
    return raw is not None and raw != ""


def _convert(option: Option, raw: object, kind: type[int] | type[float]) -> int | float | None:
    if not _given(raw):
        raw = option.default
        if raw is None:
            return None
    try:
        if not isinstance(raw, str | int | float):
            raise TypeError(raw)
        value = kind(raw)
    except (TypeError, ValueError):
        word = "an integer" if kind is int else "a number"
        raise GraphInstructError(f"{option.spelling} must be {word}, got {raw!r}") from None
    if kind is float and not math.isfinite(value):
        raise GraphInstructError(f"{option.spelling} must be finite, got {raw!r}")
    low, high = option.low, option.high
    if low is not None and (value < low or (option.low_open and value == low)):
        bound = f"> {low}" if option.low_open else f">= {low}"
        raise GraphInstructError(f"{option.spelling} must be {bound}, got {raw!r}")
    if high is not None and value > high:
        raise GraphInstructError(f"{option.spelling} must be <= {high}, got {raw!r}")
    return value


def _integer(option: Option, raw: object) -> int | None:
    value = _convert(option, raw, int)
    return None if value is None else int(value)


def _number(option: Option, raw: object) -> float | None:
    value = _convert(option, raw, float)
    return None if value is None else float(value)


AUTO_SAMPLES: Final = "auto"
"""``--gi-samples=auto``: as many samples as the gate needs (``score.regression.sequential``)."""
AUTO_CAP: Final = 5
"""``--gi-samples=auto``'s most samples per instruction (the paper's k), unless ``auto:N``."""


def parse_samples(option: Option, raw: object) -> int | str | None:
    """A sample count: an int within the row's bounds, or ``auto`` / ``auto:N`` (N within
    them too), returned as ``"auto"`` / ``"auto:N"``; ``None`` when not given."""
    text = str(raw).strip() if _given(raw) else ""
    if not text.startswith(AUTO_SAMPLES):
        return _integer(option, raw)
    cap = text[len(AUTO_SAMPLES):]
    if not cap:
        return AUTO_SAMPLES
    if not cap.startswith(":"):
        raise GraphInstructError(f"{option.spelling} must be an integer, auto or auto:N, "
                                 f"got {raw!r}")
    n = _integer(option, cap[1:])
    if n is None:
        raise GraphInstructError(f"{option.spelling}=auto:N needs N, got {raw!r}")
    return f"{AUTO_SAMPLES}:{n}"


def _text(option: Option, raw: object) -> str | None:
    if not _given(raw):
        return None if option.default is None else str(option.default)
    return str(raw)


def _path(option: Option, raw: object) -> Path | None:
    text = raw if isinstance(raw, Path) else _text(option, raw)
    return None if text is None else Path(text).expanduser()


def _choice(option: Option, raw: object) -> str:
    word = str(raw if _given(raw) else option.default).strip()
    if word not in option.choices:
        raise GraphInstructError(f"{option.spelling} must be one of {', '.join(option.choices)}, "
                                 f"got {word!r}")
    return word


def _items(option: Option, raw: object) -> list[str]:
    given = list(raw) if isinstance(raw, tuple | list) else split_words(raw)
    words = [str(x).strip() for x in given]
    default = option.default if isinstance(option.default, tuple) else ()
    return words or list(default)


def _choices(option: Option, raw: object) -> tuple[str, ...]:
    words = _items(option, raw)
    for word in words:
        if word not in option.choices:
            raise GraphInstructError(f"unknown {option.spelling} {word!r} (choose from "
                                     f"{', '.join(option.choices)})")
    return tuple(words)


def _integers(option: Option, raw: object) -> tuple[int, ...]:
    values = (_integer(option, word) for word in _items(option, raw))
    return tuple(dict.fromkeys(v for v in values if v is not None))


def _levels(option: Option, raw: object) -> tuple[int, ...] | None:
    """Levels as a sorted tuple, from a comma list or from ints (shown as a comma list)."""
    if not raw:
        return None
    shown = ",".join(map(str, raw)) if isinstance(raw, tuple | list) else raw
    try:
        levels = tuple(sorted({int(x) for x in raw} if isinstance(raw, tuple | list)
                              else set(parse_levels(raw))))
    except (TypeError, ValueError):
        raise GraphInstructError(f"{option.spelling} must be a comma list of levels 0-5, got "
                                 f"{shown!r}") from None
    if not levels or any(lv not in LEVELS for lv in levels):
        raise GraphInstructError(f"{option.spelling} must name levels 0-5, got {shown!r}")
    return levels


def _flag(option: Option, raw: object) -> bool:
    return bool(raw)


_PARSERS: Final[Mapping[Kind, Callable[[Option, object], Value | None]]] = {
    "text": _text, "path": _path, "integer": _integer, "number": _number, "choice": _choice,
    "choices": _choices, "integers": _integers, "levels": _levels, "flag": _flag,
    "samples": parse_samples,
}


class OptionValues:
    """The run options' values by dest, each validated by its row when first read.

    Built from the plugin's raw texts (:func:`plugin.raw_options`) or from the command line's
    typed values; an option not given reads as its row's default.  Reading in the order the
    checks should run keeps the first error the one a user sees first.
    """

    def __init__(self, given: Mapping[str, object]) -> None:
        self._given = dict(given)

    def _read(self, dest: str, kinds: Iterable[Kind]) -> Value | None:
        option = OPTION_BY_DEST[dest]
        if option.kind not in kinds:
            raise TypeError(f"{option.spelling} is a {option.kind} option")
        return option.parse(self._given.get(dest))

    def given(self, dest: str) -> bool:
        """Whether the option was given a value (not ``None`` or ``""``)."""
        if dest not in OPTION_BY_DEST:
            raise KeyError(dest)
        return _given(self._given.get(dest))

    def text(self, dest: str) -> str | None:
        value = self._read(dest, ("text",))
        return value if isinstance(value, str) else None

    def choice(self, dest: str) -> str:
        value = self._read(dest, ("choice",))
        return str(value)

    def path(self, dest: str) -> Path | None:
        value = self._read(dest, ("path",))
        return value if isinstance(value, Path) else None

    def integer(self, dest: str) -> int | None:
        value = self._read(dest, ("integer",))
        return value if isinstance(value, int) else None

    def samples(self, dest: str) -> int | str | None:
        """An int, ``"auto"`` or ``"auto:N"`` (:func:`parse_samples`)."""
        value = self._read(dest, ("samples",))
        return value if isinstance(value, int | str) else None

    def number(self, dest: str) -> float | None:
        value = self._read(dest, ("number",))
        return value if isinstance(value, float) else None

    def words(self, dest: str) -> tuple[str, ...]:
        value = self._read(dest, ("choices",))
        return tuple(str(x) for x in value) if isinstance(value, tuple) else ()

    def integers(self, dest: str) -> tuple[int, ...]:
        value = self._read(dest, ("integers", "levels"))
        return tuple(int(x) for x in value) if isinstance(value, tuple) else ()

    def flag(self, dest: str) -> bool:
        return bool(self._read(dest, ("flag",)))


# -- the command line's run arguments ----------------------------------------------------------

@dataclass(frozen=True)
class CliArgument:
    """A command's argument made from the row of ``dest``: its dest, type, default and choices
    are the row's; its flag (``--<row name>``), help (the row's) and metavar may be the
    command's own."""

    dest: str
    help: str | None = None  #: the command's own help (``None``: the row's)
    flag: str = ""  #: the command's flag (default ``--`` and the row's name)
    required: bool = False
    metavar: str | None = None  #: default: the flag's name in capitals (argparse's way)

    @property
    def option(self) -> Option:
        return OPTION_BY_DEST[self.dest]

    @property
    def cli_flag(self) -> str:
        return self.flag or f"--{self.option.name}"


_ARGUMENT_TYPES: Final[Mapping[Kind, type[int] | type[float]]] = {
    "integer": int, "number": float}
"""Kinds argparse converts (any other stays the text given, read by the row)."""


def add_arguments(parser: argparse.ArgumentParser, arguments: Iterable[CliArgument]) -> None:
    """Add each of ``arguments`` to ``parser`` as its row says (a flag: ``store_true``; an
    integer or number: converted by argparse; a choice: its choices; the row's default)."""
    for arg in arguments:
        option = arg.option
        text = option.help.replace("%", "%%") if arg.help is None else arg.help
        if option.kind == "flag":
            parser.add_argument(arg.cli_flag, dest=option.dest, action="store_true", help=text)
            continue
        metavar = arg.metavar
        if metavar is None and option.kind != "choice":
            metavar = arg.cli_flag.lstrip("-").upper().replace("-", "_")
        parser.add_argument(arg.cli_flag, dest=option.dest, default=option.default,
                            type=_ARGUMENT_TYPES.get(option.kind, str),
                            choices=option.choices if option.kind == "choice" else None,
                            required=arg.required,
                            metavar=metavar, help=text)


def cli_values(args: argparse.Namespace, arguments: Iterable[CliArgument],
               **fixed: object) -> OptionValues:
    """The :class:`OptionValues` of a command's parsed ``arguments``, with ``fixed`` values
    (by dest) over them."""
    given: dict[str, object] = {arg.dest: getattr(args, arg.dest) for arg in arguments}
    return OptionValues({**given, **fixed})
